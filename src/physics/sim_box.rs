//! The simulation box `[lo, hi)` with its boundary kind per axis, and the geometry every
//! part of the physics shares on it: lengths, volume, the minimum image and wrapping.
//! Plain arithmetic below everything else in `physics` (parameters, obstacles, the piston).

use serde::{Deserialize, Serialize};

use crate::physics::real::Real;

/// The simulation box `[lo, hi)` with a boundary kind per axis.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimBox {
    pub lo: [f64; 3],
    pub hi: [f64; 3],
    pub periodic: [bool; 3],
}

impl SimBox {
    /// A box from the origin with the given edge lengths.
    pub fn new(size: [f64; 3], periodic: [bool; 3]) -> Self {
        SimBox { lo: [0.0; 3], hi: size, periodic }
    }

    pub fn length(&self) -> [f64; 3] {
        [self.hi[0] - self.lo[0], self.hi[1] - self.lo[1], self.hi[2] - self.lo[2]]
    }

    pub fn volume(&self) -> f64 {
        let l = self.length();
        l[0] * l[1] * l[2]
    }

    pub fn fully_periodic(&self) -> bool {
        self.periodic.iter().all(|&p| p)
    }

    /// Displacement a - b under the minimum-image convention on periodic axes.
    pub fn min_image(&self, a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
        let l = self.length();
        let mut d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
        for k in 0..3 {
            if self.periodic[k] {
                d[k] -= l[k] * Real::rint(d[k] / l[k]);
            }
        }
        d
    }

    /// Wrap a position into `[lo, hi)` on periodic axes; walled axes are left alone.
    pub fn wrap(&self, mut x: [f64; 3]) -> [f64; 3] {
        let l = self.length();
        for k in 0..3 {
            if self.periodic[k] {
                let mut v = x[k] - self.lo[k];
                v -= l[k] * (v / l[k]).floor();
                if v >= l[k] {
                    v -= l[k];
                }
                x[k] = self.lo[k] + v;
            }
        }
        x
    }
}
