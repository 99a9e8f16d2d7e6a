//! One-body forces on the CPU: 9-3 walls on walled axes, the obstacle signed-distance field,
//! gravity (-y) and drive (+x). Energies: walls and obstacles always; gravity as m g (y - lo);
//! drive as -m a (x - lo) only along a walled x (on a periodic x it does work, not a potential).
//! Virial: distance times outward force for walls and obstacles (LAMMPS `fix wall` style);
//! body forces add none.

use rayon::prelude::*;

use super::kernels::EnergyVirial;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimBox, SimParams};
use crate::physics::real::Real;
use crate::physics::wall::Wall93;

/// Everything the one-body forces need, in force precision.
pub struct External<'a, F> {
    walled: [bool; 3],
    lo: [f64; 3],
    hi: [f64; 3],
    wall: Wall93<F>,
    obstacles: Option<(&'a ObstacleField, Wall93<F>)>,
    gravity: f64,
    drive: f64,
    drive_potential: bool,
}

impl<'a, F: Real> External<'a, F> {
    pub fn new(b: &SimBox, params: &SimParams, field: Option<&'a ObstacleField>) -> Self {
        External {
            walled: [!b.periodic[0], !b.periodic[1], !b.periodic[2]],
            lo: b.lo,
            hi: b.hi,
            wall: Wall93::new(&params.wall),
            obstacles: field.map(|f| (f, Wall93::new(&params.obstacle))),
            gravity: params.gravity,
            drive: params.drive,
            drive_potential: !b.periodic[0],
        }
    }

    /// True when there is nothing to compute.
    pub fn is_empty(&self) -> bool {
        !self.walled.iter().any(|&w| w) && self.obstacles.is_none() && self.gravity == 0.0 && self.drive == 0.0
    }

    /// Force, energy and virial on one atom at `p` with mass `m`.
    #[inline]
    pub fn on_atom(&self, p: [f64; 3], m: f64) -> ([f64; 3], f64, f64) {
        let mut f = [0.0; 3];
        let mut e = 0.0;
        let mut w = 0.0;
        for k in 0..3 {
            if self.walled[k] {
                let (fl, el) = self.wall.eval(F::of(p[k] - self.lo[k]));
                let (fh, eh) = self.wall.eval(F::of(self.hi[k] - p[k]));
                f[k] += fl.f64() - fh.f64();
                e += el.f64() + eh.f64();
                w += (p[k] - self.lo[k]) * fl.f64() + (self.hi[k] - p[k]) * fh.f64();
            }
        }
        if let Some((field, wall)) = &self.obstacles {
            let s = field.sample(p[0], p[1]);
            let (fo, eo) = wall.eval(F::of(s.distance));
            let fo = fo.f64();
            if fo != 0.0 || eo != F::zero() {
                f[0] += fo * s.gradient[0];
                f[1] += fo * s.gradient[1];
                e += eo.f64();
                w += s.distance * fo;
            }
        }
        if self.gravity != 0.0 {
            f[1] -= m * self.gravity;
            e += m * self.gravity * (p[1] - self.lo[1]);
        }
        if self.drive != 0.0 {
            f[0] += m * self.drive;
            if self.drive_potential {
                e -= m * self.drive * (p[0] - self.lo[0]);
            }
        }
        (f, e, w)
    }

    /// Adds the one-body forces to `force`; returns their energy and virial.
    pub fn apply<S: Real, A: Real>(
        &self,
        pos: &[[S; 4]],
        types: &[u32],
        masses: &[f64],
        force: &mut [[F; 4]],
    ) -> EnergyVirial<A> {
        if self.is_empty() {
            return EnergyVirial::default();
        }
        force
            .par_chunks_mut(1024)
            .enumerate()
            .map(|(c, chunk)| {
                let mut e = 0.0;
                let mut w = 0.0;
                for (k, fo) in chunk.iter_mut().enumerate() {
                    let i = c * 1024 + k;
                    let p = [pos[i][0].f64(), pos[i][1].f64(), pos[i][2].f64()];
                    let (f, ei, wi) = self.on_atom(p, masses[types[i] as usize]);
                    fo[0] += F::of(f[0]);
                    fo[1] += F::of(f[1]);
                    fo[2] += F::of(f[2]);
                    e += ei;
                    w += wi;
                }
                EnergyVirial { energy: A::of(e), virial: A::of(w) }
            })
            .collect::<Vec<_>>()
            .into_iter()
            .fold(EnergyVirial::default(), |mut a, b| {
                a.add(b);
                a
            })
    }
}
