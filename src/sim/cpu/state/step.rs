//! One velocity-Verlet step of the atoms: the first half kick fused with the drift (with
//! wrapping, the escape and runaway tests and the displacement since the list build), the
//! second half kick with the Langevin update fused in (the dye rakes' crossings tested in the
//! drift's own chunks), and [`CpuSim::advance`], the step
//! loop that calls the force pass (`dispatch.rs`), the piston (`piston.rs`), the
//! rescaling thermostats (`thermostat.rs`) and the tunnel's inflow zone (`tunnel.rs`) in
//! order, and stops on a blow-up.

use rayon::prelude::*;

use super::dye::apply_rakes;
use super::{CpuSim, Ctx, REDUCE_CHUNK};
use crate::physics::dye::{Dye, DyeRake};
use crate::physics::params::Thermostat;
use crate::physics::real::{PrecisionMode, Real};
use crate::physics::sim_box::SimBox;
use crate::rng::{Stream, normal4};
use crate::sim::cpu::kernels::{MinImage, mode};
use crate::sim::cpu::simd::multiversion;
use crate::sim::{ESCAPE_MARGIN, RUNAWAY_STEP, SimError, Telemetry};

/// Atoms per parallel work item of the drift.
const DRIFT_CHUNK: usize = 2048;

/// dt / 2m per species in the state precision: the velocity change per unit force of a half
/// kick.
fn half_kicks<S: Real>(dt: f64, masses: &[f64]) -> Vec<S> {
    masses.iter().map(|m| S::of(0.5 * dt / m)).collect()
}

/// What the drift needs, precomputed once per step in the state precision: the half kick
/// per species and the box (bounds for wrapping and the escape test, the minimum image for
/// the skin test).
struct Drift<S> {
    dt: S,
    dtfm: Vec<S>,
    periodic: [bool; 3],
    lo: [S; 3],
    hi: [S; 3],
    len: [S; 3],
    /// Walled axes: an atom beyond these has escaped.
    lo_escape: [f64; 3],
    hi_escape: [f64; 3],
    img: MinImage<f64>,
}

impl<S: Real> Drift<S> {
    fn new(b: &SimBox, dt: f64, masses: &[f64]) -> Self {
        let len = b.length();
        Drift {
            dt: S::of(dt),
            dtfm: half_kicks(dt, masses),
            periodic: b.periodic,
            lo: b.lo.map(S::of),
            hi: b.hi.map(S::of),
            len: len.map(S::of),
            lo_escape: b.lo.map(|x| x - ESCAPE_MARGIN),
            hi_escape: b.hi.map(|x| x + ESCAPE_MARGIN),
            img: MinImage::new(b),
        }
    }
}

/// Half kick and drift of a run of atoms (see [`CpuSim::kick_drift`]); `at_build` is their
/// positions at the last list build, or empty when not tracked. Returns the largest squared
/// move this step (infinite for NaN, `f64::MAX` for an escaped atom) and the largest squared
/// distance from `at_build`.
#[inline(always)]
fn drift_body<S: Real, F: Real>(
    d: &Drift<S>,
    pos: &mut [[S; 4]],
    vel: &mut [[S; 3]],
    force: &[[F; 4]],
    types: &[u32],
    at_build: &[[f32; 3]],
) -> (f64, f64) {
    let (mut moved_max, mut since_max) = (0.0f64, if at_build.is_empty() { f64::INFINITY } else { 0.0 });
    for (i, (x, v)) in pos.iter_mut().zip(vel.iter_mut()).enumerate() {
        let dtfm = d.dtfm[types[i] as usize];
        let mut moved = S::zero();
        let mut escaped = false;
        for k in 0..3 {
            v[k] += dtfm * S::of(force[i][k].f64());
            let dx = d.dt * v[k];
            let xk = x[k] + dx;
            moved += dx * dx;
            x[k] = if !d.periodic[k] {
                let w = xk.f64();
                escaped |= w < d.lo_escape[k] || w > d.hi_escape[k];
                xk
            } else if xk < d.lo[k] {
                xk + d.len[k]
            } else if xk >= d.hi[k] {
                xk - d.len[k]
            } else {
                xk
            };
        }
        if let Some(q) = at_build.get(i) {
            let dk = d.img.apply(std::array::from_fn(|k| x[k].f64() - q[k] as f64));
            since_max = since_max.max(dk[0] * dk[0] + dk[1] * dk[1] + dk[2] * dk[2]);
        }
        let m = moved.f64();
        // f64::MAX marks an atom that left a closed tank (see `blow_up`).
        let m = if m.is_nan() {
            f64::INFINITY
        } else if escaped {
            m.max(f64::MAX)
        } else {
            m
        };
        moved_max = moved_max.max(m);
    }
    (moved_max, since_max)
}

/// The velocity half kick `v += dt/2m f` of a run of atoms (`dtfm` per species).
#[inline(always)]
fn kick_body<S: Real, F: Real>(vel: &mut [[S; 3]], force: &[[F; 4]], types: &[u32], dtfm: &[S]) {
    for ((v, f), &t) in vel.iter_mut().zip(force).zip(types) {
        let dtfm = dtfm[t as usize];
        for d in 0..3 {
            v[d] += dtfm * S::of(f[d].f64());
        }
    }
}

multiversion!(fn kick_rows<S: Real, F: Real;>(vel: &mut [[S; 3]], force: &[[F; 4]], types: &[u32], dtfm: &[S]) = kick_body);

multiversion!(fn drift_rows<S: Real, F: Real;>(
    d: &Drift<S>, pos: &mut [[S; 4]], vel: &mut [[S; 3]], force: &[[F; 4]], types: &[u32], at_build: &[[f32; 3]]
) -> (f64, f64) = drift_body);

impl<P: PrecisionMode> CpuSim<P> {
    /// Half kick and drift; refreshes the force-precision positions and measures how far
    /// atoms have moved since the neighbour list was built; with `rakes`, tags the atoms whose
    /// move crossed one, in the same parallel chunks (`dye.rs`). Returns the largest squared
    /// distance moved this step.
    fn kick_drift(&mut self, dt: f64, masses: &[f64], rakes: &[DyeRake]) -> f64 {
        let n = self.pos.len();
        let track = self.nl_valid && self.nl.pos_at_build.len() == n;
        let at_build: &[[f32; 3]] = if track { &self.nl.pos_at_build } else { &[] };
        let drift = Drift::<P::State>::new(&self.sim_box, dt, masses);
        let (force, types, b) = (&self.force, &self.types, self.sim_box);
        // Each chunk's tags while there are rakes (the column made when they were set).
        if !rakes.is_empty() && self.dye.len() != n {
            self.dye.resize(n, 0);
        }
        let mut dye: Vec<Option<&mut [Dye]>> = match rakes.is_empty() {
            true => (0..n.div_ceil(DRIFT_CHUNK)).map(|_| None).collect(),
            false => self.dye.chunks_mut(DRIFT_CHUNK).map(Some).collect(),
        };
        let (moved, since_build) = self
            .pos
            .par_chunks_mut(DRIFT_CHUNK)
            .zip(self.vel.par_chunks_mut(DRIFT_CHUNK))
            .zip(dye.par_iter_mut())
            .enumerate()
            .map(|(c, ((x, v), tags))| {
                let first = c * DRIFT_CHUNK;
                let last = first + x.len();
                let built = at_build.get(first..last).unwrap_or(&[]);
                let out = drift_rows(&drift, x, v, &force[first..last], &types[first..last], built);
                if let Some(tags) = tags.as_deref_mut() {
                    apply_rakes(rakes, &b, dt, x, v, tags);
                }
                out
            })
            .reduce(|| (0.0, 0.0), |a, b| (a.0.max(b.0), a.1.max(b.1)));
        self.sync_pos_f();
        self.pos_f_fresh = true;
        self.disp_since_build = if track && n > 0 { Some(since_build) } else { None };
        moved
    }

    /// Second half kick, with the Langevin velocity update fused in; returns sum m v^2 when
    /// the thermostat needs it (Berendsen, CSVR), else 0.
    fn kick(&mut self, ctx: &Ctx, step: u64) -> f64 {
        let dt = ctx.params.dt;
        let masses = &ctx.masses;
        let dtfm: Vec<P::State> = half_kicks(dt, masses);
        let (force, types, ids) = (&self.force, &self.types, &self.ids);
        let langevin = match ctx.params.thermostat {
            Thermostat::Langevin { damp } => {
                let c1 = (-dt / damp).exp();
                Some((c1, (1.0 - c1 * c1).sqrt(), ctx.params.temperature, ctx.params.seed))
            }
            _ => None,
        };
        let need_ke = matches!(ctx.params.thermostat, Thermostat::Berendsen { .. } | Thermostat::Csvr { .. });
        self.vel
            .par_chunks_mut(REDUCE_CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let first = c * REDUCE_CHUNK;
                let last = first + chunk.len();
                kick_rows(chunk, &force[first..last], &types[first..last], &dtfm);
                let mut twice_ke = 0.0;
                for (k, v) in chunk.iter_mut().enumerate() {
                    let i = first + k;
                    let m = masses[types[i] as usize];
                    if let Some((c1, c2, t, seed)) = langevin {
                        let xi = normal4(seed, Stream::Langevin, ids[i], step);
                        let sd = c2 * (t / m).sqrt();
                        for d in 0..3 {
                            v[d] = P::State::of(c1 * v[d].f64() + sd * xi[d]);
                        }
                    } else if !need_ke {
                        break;
                    }
                    twice_ke += m * (v[0].f64() * v[0].f64() + v[1].f64() * v[1].f64() + v[2].f64() * v[2].f64());
                }
                if need_ke { twice_ke } else { 0.0 }
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum()
    }

    /// Advances `steps` steps, pushing telemetry at every step divisible by `telemetry_every`.
    pub fn advance(&mut self, steps: u64, ctx: &Ctx, out: &mut Vec<Telemetry>) -> Result<(), SimError> {
        if self.n() == 0 {
            self.step += steps;
            self.time += steps as f64 * ctx.params.dt;
            return Ok(());
        }
        self.sync_piston(ctx.params);
        if !self.forces_valid {
            self.compute_forces::<{ mode::FORCES }>(ctx, self.step);
        }
        let every = ctx.params.telemetry_every.max(1);
        let limit = RUNAWAY_STEP * RUNAWAY_STEP;
        for _ in 0..steps {
            let next = self.step + 1;
            let moved = self.kick_drift(ctx.params.dt, &ctx.masses, ctx.rakes);
            self.piston_kick(ctx.params);
            self.piston_drift(ctx.params.dt);
            if moved > limit {
                self.forces_valid = false;
                return Err(blow_up(next, moved));
            }
            let stress = self.stress_every > 0 && next.is_multiple_of(self.stress_every);
            let sums = match (next.is_multiple_of(every), stress) {
                (true, true) => Some(self.compute_forces::<{ mode::BOTH }>(ctx, next)),
                (true, false) => Some(self.compute_forces::<{ mode::ENERGY }>(ctx, next)),
                (false, true) => {
                    self.compute_forces::<{ mode::STRESS }>(ctx, next);
                    None
                }
                (false, false) => {
                    self.compute_forces::<{ mode::FORCES }>(ctx, next);
                    None
                }
            };
            self.bodies.add(&self.body_step);
            let twice_ke = self.kick(ctx, next);
            self.piston_kick(ctx.params);
            self.thermostat(ctx, twice_ke, next);
            self.tunnel_zone(ctx, next);
            self.clear_zone_dye(ctx.params);
            self.step = next;
            self.time += ctx.params.dt;
            if let Some(sums) = sums {
                let mut t = self.telemetry(ctx, sums);
                t.thermal = self.thermal(ctx, 2.0 * t.kinetic_energy);
                if !self.bodies.layout.is_empty() {
                    t.body_forces = self.bodies.take();
                }
                let zone = std::mem::take(&mut self.tunnel);
                (t.tunnel_momentum, t.tunnel_heat) = (zone.momentum, zone.heat);
                if !(t.total_energy().is_finite() && t.pressure.is_finite()) {
                    self.forces_valid = false;
                    return Err(SimError::BlowUp {
                        step: next,
                        what: "the energy or pressure is not a finite number".into(),
                        hint: "Use a smaller time step (dt), or remove overlapping atoms.".into(),
                    });
                }
                out.push(t);
            }
        }
        Ok(())
    }
}

fn blow_up(step: u64, moved_sq: f64) -> SimError {
    let what = if moved_sq == f64::MAX {
        format!("an atom left the closed tank (more than {ESCAPE_MARGIN} sigma through a wall)")
    } else if moved_sq.is_finite() {
        format!("an atom moved {:.3} sigma in one step (more than {RUNAWAY_STEP} sigma)", moved_sq.sqrt())
    } else {
        "a position or velocity became NaN or infinite".to_string()
    };
    SimError::BlowUp {
        step,
        what,
        hint: "Use a smaller time step (dt, e.g. 0.002), a lower temperature, or remove overlapping atoms.".into(),
    }
}
