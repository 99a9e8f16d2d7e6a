//! Dye on the CPU backend (`physics::dye`): after each drift, every atom whose move crossed a
//! rake takes that rake's tag; after the tunnel's inflow zone, the atoms in the zone lose
//! theirs. Tags live per slot (`CpuSim::dye`) and are permuted with the other arrays, so they
//! follow their atoms through the list re-sorting. One O(N) pass each, only while there are
//! rakes, or a tunnel and a dye column.

use rayon::prelude::*;

use super::CpuSim;
use crate::physics::dye::{DyeRake, after_move};
use crate::physics::params::SimParams;
use crate::physics::real::{PrecisionMode, Real};
use crate::physics::tunnel::in_zone;

/// Atoms per parallel work item.
const CHUNK: usize = 4096;

impl<P: PrecisionMode> CpuSim<P> {
    /// Tags the atoms whose last drift (x += dt v, v still the drift's velocity) crossed one
    /// of `rakes`. A move wrapped across a periodic x or y edge is also tested in the image
    /// on the other side.
    pub(super) fn apply_rakes(&mut self, rakes: &[DyeRake], dt: f64) {
        if rakes.is_empty() {
            return;
        }
        let n = self.n();
        if self.dye.len() != n {
            self.dye.resize(n, 0);
        }
        let b = self.sim_box;
        let len = b.length();
        let (pos, vel) = (&self.pos, &self.vel);
        // A move longer than this is a blow-up (the step stops before the rakes).
        let reach = crate::sim::RUNAWAY_STEP;
        let wraps = |k: usize, x: f64| b.periodic[k] && (x - reach < b.lo[k] || x + reach >= b.hi[k]);
        self.dye.par_iter_mut().enumerate().with_min_len(CHUNK).for_each(|(i, d)| {
            let p1 = [pos[i][0].f64(), pos[i][1].f64()];
            // Most atoms are far from every rake and from a periodic edge: two compares each.
            if !wraps(0, p1[0]) && !wraps(1, p1[1]) && !rakes.iter().any(|r| r.near(p1, reach)) {
                return;
            }
            let p0 = [p1[0] - dt * vel[i][0].f64(), p1[1] - dt * vel[i][1].f64()];
            let mut tag = after_move(rakes, p0, p1, *d);
            let mut shift = [0.0; 2];
            for k in 0..2 {
                if b.periodic[k] && p0[k] < b.lo[k] {
                    shift[k] = len[k];
                } else if b.periodic[k] && p0[k] >= b.hi[k] {
                    shift[k] = -len[k];
                }
            }
            if shift != [0.0; 2] {
                let q0 = [p0[0] + shift[0], p0[1] + shift[1]];
                let q1 = [p1[0] + shift[0], p1[1] + shift[1]];
                tag = after_move(rakes, q0, q1, tag);
            }
            *d = tag;
        });
    }

    /// Clears the tags of the atoms in the tunnel's inflow zone (nothing without a tunnel or
    /// a dye column).
    pub(super) fn clear_zone_dye(&mut self, params: &SimParams) {
        let Some(tunnel) = params.tunnel.as_ref() else { return };
        if self.dye.is_empty() {
            return;
        }
        let (lo, hi) = tunnel.bounds(&self.sim_box);
        let pos = &self.pos;
        self.dye.par_iter_mut().enumerate().with_min_len(CHUNK).for_each(|(i, d)| {
            if in_zone(pos[i][0].f64(), lo, hi) {
                *d = 0;
            }
        });
    }
}
