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
//! With bodies (`sim::bodies`), each wall face's and each obstacle shape's forces on the atoms
//! are summed too, negated (the force on the body), in f64 in chunk order like the push.
//!
//! With surface friction (`physics::friction`), atoms within its range of a wall face or an
//! obstacle surface feel a Langevin force on their tangential velocity (the velocity they
//! have at this force pass), summed per surface in face order then the obstacle, and added
//! after the obstacle force as in `kernels/forces.cu`; no energy, no virial, and its reaction
//! goes to the surface's body. During the tunnel's start spin the obstacle surface moves
//! (`physics::friction::Spin`), and the drag pulls toward its velocity.
//!
//! The tethered atom is found by its canonical index in `ids` (a linear scan per force
//! evaluation); its spring force joins the atom's other one-body forces in f64 before the
//! single rounding to force precision, as in `kernels/forces.cu`.

use rayon::prelude::*;

use super::kernels::EnergyVirial;
use crate::physics::friction::{self, Friction};
use crate::physics::obstacles::{FieldSample, ObstacleField};
use crate::physics::params::{SimParams, Tether};
use crate::physics::real::Real;
use crate::physics::sim_box::SimBox;
use crate::physics::wall::Wall93;
use crate::rng::{Stream, normal4};
use crate::sim::bodies::BodyLayout;

/// An atom's one-body forces by source: the walls' pushes (low, high face per axis, each
/// positive away from its face) and the obstacle force with the shape it comes from; the
/// surface friction of each wall face and of the obstacles, with the shape it comes from.
#[derive(Clone, Copy, Default)]
pub struct Parts {
    pub wall: [[f64; 2]; 3],
    pub obstacle: [f64; 2],
    pub shape: Option<u32>,
    pub wall_friction: [[[f64; 3]; 2]; 3],
    pub obstacle_friction: [f64; 3],
    pub friction_shape: Option<u32>,
}

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
    friction: Option<Friction>,
}

impl<'a, F: Real> External<'a, F> {
    /// One-body forces in `b` for the force pass of `step` (it keys the friction's noise);
    /// `piston_height` moves the top y wall (a piston) when given.
    pub fn new(
        b: &SimBox,
        params: &SimParams,
        field: Option<&'a ObstacleField>,
        piston_height: Option<f64>,
        step: u64,
    ) -> Self {
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
            friction: params.friction_at(step),
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

    /// Force, energy and virial on one atom at `p` with mass `m`, velocity `v` and canonical
    /// index `id`, the atom's push on the upper y wall (the piston, when there is one), and
    /// the wall, obstacle and friction terms by source.
    #[inline]
    pub fn on_atom(&self, p: [f64; 3], m: f64, v: [f64; 3], id: u32) -> ([f64; 3], f64, f64, f64, Parts) {
        let mut parts = Parts::default();
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
                parts.wall[k] = [fl.f64(), fh.f64()];
                e += el.f64() + eh.f64();
                w += (p[k] - self.lo[k]) * fl.f64() + (self.hi[k] - p[k]) * fh.f64();
            }
        }
        let mut sample = None;
        if let Some((field, wall)) = &self.obstacles {
            let s = field.sample(p[0], p[1]);
            sample = Some(s);
            let (fo, eo) = wall.eval(F::of(s.distance));
            let fo = fo.f64();
            if fo != 0.0 || eo != F::zero() {
                f[0] += fo * s.gradient[0];
                f[1] += fo * s.gradient[1];
                parts.obstacle = [fo * s.gradient[0], fo * s.gradient[1]];
                parts.shape = Some(s.shape);
                e += eo.f64();
                w += s.distance * fo;
            }
        }
        if let Some(fr) = &self.friction {
            let ff = self.friction(fr, p, m, v, id, sample.as_ref(), &mut parts);
            for k in 0..3 {
                f[k] += ff[k];
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
        (f, e, w, top, parts)
    }

    /// The wall and obstacle terms of the virial of one atom at `p` as a tensor (xx, yy, zz,
    /// xy, xz, yz): the terms [`External::on_atom`] adds to the scalar virial, split by
    /// direction, so that the trace is that scalar term. A wall's term (distance times push)
    /// lies along its axis; an obstacle's (signed distance times force) along the unit normal
    /// `n = gradient / |gradient|` in x-y, as `d f n_a n_b`. Body forces, the tether and the
    /// friction add none, as in the scalar virial.
    pub fn virial_tensor(&self, p: [f64; 3]) -> [f64; 6] {
        let mut w = [0.0; 6];
        for k in 0..3 {
            if self.walled[k] {
                let (fl, _) = self.wall.eval(F::of(p[k] - self.lo[k]));
                let (fh, _) = self.wall.eval(F::of(self.hi[k] - p[k]));
                w[k] += (p[k] - self.lo[k]) * fl.f64() + (self.hi[k] - p[k]) * fh.f64();
            }
        }
        if let Some((field, wall)) = &self.obstacles {
            let s = field.sample(p[0], p[1]);
            let (fo, _) = wall.eval(F::of(s.distance));
            let fo = fo.f64();
            let g = s.gradient;
            let g_sq = g[0] * g[0] + g[1] * g[1];
            if fo != 0.0 && g_sq > 0.0 {
                let c = s.distance * fo / g_sq;
                w[0] += c * g[0] * g[0];
                w[1] += c * g[1] * g[1];
                w[3] += c * g[0] * g[1];
            } else if fo != 0.0 {
                // No direction: keep the trace (an atom exactly on a medial point).
                let c = s.distance * fo / 2.0;
                w[0] += c;
                w[1] += c;
            }
        }
        w
    }

    /// The surface friction on one atom (see `physics::friction`): each wall face within range
    /// in face order, then the obstacle surface (`sample`) within range; the terms by source
    /// go to `parts`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn friction(
        &self,
        fr: &Friction,
        p: [f64; 3],
        m: f64,
        v: [f64; 3],
        id: u32,
        sample: Option<&FieldSample>,
        parts: &mut Parts,
    ) -> [f64; 3] {
        let mut ff = [0.0; 3];
        for k in 0..3 {
            if !self.walled[k] {
                continue;
            }
            for (h, d) in [p[k] - self.lo[k], self.hi[k] - p[k]].into_iter().enumerate() {
                if d < fr.range {
                    let xi = normal4(fr.seed, Stream::SurfaceFriction, id, fr.counter((2 * k + h) as u64));
                    let t = friction::wall_term(k, m, v, xi, fr.gamma, fr.noise);
                    for j in 0..3 {
                        ff[j] += t[j];
                    }
                    parts.wall_friction[k][h] = t;
                }
            }
        }
        if let Some(s) = sample
            && s.distance < fr.range
            && s.shape != FieldSample::NONE
        {
            let xi = normal4(fr.seed, Stream::SurfaceFriction, id, fr.counter(friction::OBSTACLE_SURFACE));
            let t = friction::obstacle_term(s.gradient, m, v, xi, fr.gamma, fr.noise, fr.spin);
            for j in 0..3 {
                ff[j] += t[j];
            }
            parts.obstacle_friction = t;
            parts.friction_shape = Some(s.shape);
        }
        ff
    }

    /// Adds the one-body forces to `force`; returns their energy and virial, and the atoms'
    /// total push on the upper y wall (the piston's force). `ids` holds the canonical index
    /// of each slot (to find the tethered atom and key the friction's noise); `vel` the
    /// velocities the friction acts on. With `bodies`, the force on each body of
    /// the layout (minus the wall and obstacle forces on the atoms) is written into the slice
    /// (one entry per body).
    #[allow(clippy::too_many_arguments)]
    pub fn apply<S: Real, A: Real>(
        &self,
        pos: &[[S; 4]],
        vel: &[[S; 3]],
        types: &[u32],
        ids: &[u32],
        masses: &[f64],
        force: &mut [[F; 4]],
        bodies: Option<(&BodyLayout, &mut [[f64; 3]])>,
    ) -> (EnergyVirial<A>, f64) {
        let (layout, body_out) = match bodies {
            Some((l, out)) if !l.is_empty() => {
                out.iter_mut().for_each(|b| *b = [0.0; 3]);
                (Some(l), Some(out))
            }
            _ => (None, None),
        };
        let tethered = self.tethered(ids);
        let xyz = |i: usize| [pos[i][0].f64(), pos[i][1].f64(), pos[i][2].f64()];
        if self.is_empty() {
            // Only the tether, if any: one atom to touch.
            let Some((s, t)) = tethered else { return (EnergyVirial::default(), 0.0) };
            let (ft, et) = t.eval(&self.sim_box, xyz(s));
            force[s][0] += F::of(ft[0]);
            force[s][1] += F::of(ft[1]);
            return (EnergyVirial::new(A::of(et), A::zero()), 0.0);
        }
        let nb = layout.map_or(0, |l| l.len());
        let chunks = force
            .par_chunks_mut(1024)
            .enumerate()
            .map(|(c, chunk)| {
                let mut e = 0.0;
                let mut w = 0.0;
                let mut top = 0.0;
                let mut on_bodies = vec![[0.0f64; 3]; nb];
                for (k, fo) in chunk.iter_mut().enumerate() {
                    let i = c * 1024 + k;
                    let p = xyz(i);
                    let v = [vel[i][0].f64(), vel[i][1].f64(), vel[i][2].f64()];
                    let (mut f, mut ei, wi, ti, parts) = self.on_atom(p, masses[types[i] as usize], v, ids[i]);
                    if let Some(l) = layout {
                        add_to_bodies(l, &parts, &mut on_bodies);
                    }
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
                (EnergyVirial::new(A::of(e), A::of(w)), top, on_bodies)
            })
            .collect::<Vec<_>>();
        if let Some(out) = body_out {
            for (_, _, b) in &chunks {
                for (o, x) in out.iter_mut().zip(b) {
                    for k in 0..3 {
                        o[k] += x[k];
                    }
                }
            }
        }
        chunks.into_iter().fold((EnergyVirial::default(), 0.0), |(mut a, ta), (b, tb, _)| {
            a.add(b);
            (a, ta + tb)
        })
    }
}

/// Adds one atom's reaction on the bodies: minus the wall pushes along their axes (the low
/// face pushes +, the high face -), minus the obstacle force on the nearest shape, minus
/// each surface's friction.
#[inline]
fn add_to_bodies(l: &BodyLayout, parts: &Parts, out: &mut [[f64; 3]]) {
    for k in 0..3 {
        if let [Some(lo), Some(hi)] = l.wall[k] {
            out[lo][k] -= parts.wall[k][0];
            out[hi][k] += parts.wall[k][1];
            for (h, b) in [lo, hi].into_iter().enumerate() {
                for j in 0..3 {
                    out[b][j] -= parts.wall_friction[k][h][j];
                }
            }
        }
    }
    if let Some(s) = parts.shape
        && let Some(b) = out.get_mut(s as usize)
    {
        b[0] -= parts.obstacle[0];
        b[1] -= parts.obstacle[1];
    }
    if let Some(s) = parts.friction_shape
        && let Some(b) = out.get_mut(s as usize)
    {
        for j in 0..3 {
            b[j] -= parts.obstacle_friction[j];
        }
    }
}
