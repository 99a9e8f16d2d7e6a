//! One-body forces on the CPU: 9-3 walls on walled axes, the obstacle signed-distance field,
//! gravity (-y), drive (+x) and the tether (a spring pulling one atom toward a point in x-y).
//! Energies: walls and obstacles always; gravity as m g (y - lo); drive as -m a (x - lo) only
//! along a walled x (on a periodic x it does work, not a potential); the tether as k |d|^2 / 2
//! with d the minimum-image x-y displacement from its target. Virial: distance times outward
//! force for walls and obstacles (LAMMPS `fix wall` style); body forces and the tether add none.
//!
//! With a piston, the top y wall sits at the piston's height instead of the box top, and the
//! sum of that wall's forces on the atoms (the push on the piston, positive up) is returned
//! with the energy and virial, summed in f64 in chunk order (deterministic).
//!
//! The tethered atom is found by its canonical index in `ids` (a linear scan per force
//! evaluation); its spring force joins the atom's other one-body forces in f64 before the
//! single rounding to force precision, as in `kernels/forces.cu`.

use rayon::prelude::*;

use super::kernels::EnergyVirial;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimParams, Tether};
use crate::physics::real::Real;
use crate::physics::sim_box::SimBox;
use crate::physics::wall::Wall93;

/// Everything the one-body forces need, in force precision.
pub struct External<'a, F> {
    walled: [bool; 3],
    lo: [f64; 3],
    /// The upper wall planes; y is the piston's height when there is one.
    hi: [f64; 3],
    wall: Wall93<F>,
    obstacles: Option<(&'a ObstacleField, Wall93<F>)>,
    gravity: f64,
    drive: f64,
    drive_potential: bool,
    sim_box: SimBox,
    tether: Option<Tether>,
}

impl<'a, F: Real> External<'a, F> {
    /// One-body forces in `b`; `piston_height` moves the top y wall (a piston) when given.
    pub fn new(b: &SimBox, params: &SimParams, field: Option<&'a ObstacleField>, piston_height: Option<f64>) -> Self {
        let mut hi = b.hi;
        if let Some(h) = piston_height {
            hi[1] = h;
        }
        External {
            walled: [!b.periodic[0], !b.periodic[1], !b.periodic[2]],
            lo: b.lo,
            hi,
            wall: Wall93::new(&params.wall),
            obstacles: field.map(|f| (f, Wall93::new(&params.obstacle))),
            gravity: params.gravity,
            drive: params.drive,
            drive_potential: !b.periodic[0],
            sim_box: *b,
            tether: params.tether,
        }
    }

    /// True when no force acts on every atom (walls, obstacles, gravity, drive); the tether,
    /// which acts on one atom, is not counted.
    pub fn is_empty(&self) -> bool {
        !self.walled.iter().any(|&w| w) && self.obstacles.is_none() && self.gravity == 0.0 && self.drive == 0.0
    }

    /// The slot of the tethered atom and its tether, when it is present (its canonical index
    /// is below the atom count).
    fn tethered(&self, ids: &[u32]) -> Option<(usize, Tether)> {
        let t = self.tether?;
        ids.par_iter().with_min_len(1 << 16).position_any(|&id| id == t.atom).map(|s| (s, t))
    }

    /// Force, energy and virial on one atom at `p` with mass `m`, and the atom's push on the
    /// upper y wall (the piston, when there is one).
    #[inline]
    pub fn on_atom(&self, p: [f64; 3], m: f64) -> ([f64; 3], f64, f64, f64) {
        let mut f = [0.0; 3];
        let mut e = 0.0;
        let mut w = 0.0;
        let mut top = 0.0;
        for k in 0..3 {
            if self.walled[k] {
                let (fl, el) = self.wall.eval(F::of(p[k] - self.lo[k]));
                let (fh, eh) = self.wall.eval(F::of(self.hi[k] - p[k]));
                if k == 1 {
                    top = fh.f64();
                }
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
        (f, e, w, top)
    }

    /// Adds the one-body forces to `force`; returns their energy and virial, and the atoms'
    /// total push on the upper y wall (the piston's force). `ids` holds the canonical index
    /// of each slot (to find the tethered atom).
    pub fn apply<S: Real, A: Real>(
        &self,
        pos: &[[S; 4]],
        types: &[u32],
        ids: &[u32],
        masses: &[f64],
        force: &mut [[F; 4]],
    ) -> (EnergyVirial<A>, f64) {
        let tethered = self.tethered(ids);
        let xyz = |i: usize| [pos[i][0].f64(), pos[i][1].f64(), pos[i][2].f64()];
        if self.is_empty() {
            // Only the tether, if any: one atom to touch.
            let Some((s, t)) = tethered else { return (EnergyVirial::default(), 0.0) };
            let (ft, et) = t.eval(&self.sim_box, xyz(s));
            force[s][0] += F::of(ft[0]);
            force[s][1] += F::of(ft[1]);
            return (EnergyVirial { energy: A::of(et), virial: A::zero() }, 0.0);
        }
        force
            .par_chunks_mut(1024)
            .enumerate()
            .map(|(c, chunk)| {
                let mut e = 0.0;
                let mut w = 0.0;
                let mut top = 0.0;
                for (k, fo) in chunk.iter_mut().enumerate() {
                    let i = c * 1024 + k;
                    let p = xyz(i);
                    let (mut f, mut ei, wi, ti) = self.on_atom(p, masses[types[i] as usize]);
                    if let Some((s, t)) = tethered
                        && s == i
                    {
                        let (ft, et) = t.eval(&self.sim_box, p);
                        f[0] += ft[0];
                        f[1] += ft[1];
                        ei += et;
                    }
                    fo[0] += F::of(f[0]);
                    fo[1] += F::of(f[1]);
                    fo[2] += F::of(f[2]);
                    e += ei;
                    w += wi;
                    top += ti;
                }
                (EnergyVirial { energy: A::of(e), virial: A::of(w) }, top)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .fold((EnergyVirial::default(), 0.0), |(mut a, ta), (b, tb)| {
                a.add(b);
                (a, ta + tb)
            })
    }
}
