//! Transport sampling on the CPU backend: the contract of [`crate::transport::spec`] kept
//! where the atoms live. Owns the per-atom state of a measurement (unwrapped positions, the
//! stored MSD and VACF origins, all indexed by canonical atom index, so the re-sorting of
//! slots at list rebuilds is invisible) and the records produced since the last take. The
//! pressure tensor is put together by `stress.rs` on stress steps;
//! `CpuBackend::advance_md` stops on every sampling step and calls [`TransportSampler::sample`].
//!
//! Must not touch the step loop or the forces: it only reads positions and velocities.

use rayon::prelude::*;

use super::kernels::MinImage;
use super::state::{CpuSim, Ctx};
use crate::physics::real::{PrecisionMode, Real};
use crate::physics::sim_box::SimBox;
use crate::transport::{OriginRecord, OriginSpec, StressRecord, TransportSamples, TransportSpec};

/// One stored origin state by canonical index, in the simulation's state precision (as on
/// CUDA): every sample streams all held origins, so single precision halves that traffic.
enum Stored {
    Single(Vec<[f32; 3]>),
    Double(Vec<[f64; 3]>),
}

impl Stored {
    fn new(now: &[[f64; 3]], single: bool) -> Stored {
        if single {
            Stored::Single(now.iter().map(|v| v.map(|x| x as f32)).collect())
        } else {
            Stored::Double(now.to_vec())
        }
    }

    fn set(&mut self, now: &[[f64; 3]]) {
        match self {
            Stored::Single(o) => o.iter_mut().zip(now).for_each(|(o, v)| *o = v.map(|x| x as f32)),
            Stored::Double(o) => o.copy_from_slice(now),
        }
    }
}

/// Sums of `term(now, origin)` per species, in canonical order into four partial sums per
/// species (by index mod 4, so the adds overlap): the same sums on every run.
#[inline(always)]
fn species_sums<O: Copy>(
    now: &[[f64; 3]],
    origin: &[[O; 3]],
    types: &[u32],
    n_species: usize,
    term: impl Fn([f64; 3], [f64; 3]) -> f64,
    widen: impl Fn(O) -> f64,
) -> Vec<f64> {
    let mut parts = vec![[0.0; 4]; n_species];
    for (k, ((a, b), &t)) in now.iter().zip(origin).zip(types).enumerate() {
        parts[t as usize][k & 3] += term(*a, b.map(&widen));
    }
    parts.iter().map(|p| (p[0] + p[1]) + (p[2] + p[3])).collect()
}

/// Origins of one quantity (MSD or VACF): `slots` stored states by canonical index.
struct Origins {
    spec: OriginSpec,
    /// Stored in single precision (the simulation's state is).
    single: bool,
    /// (origin step, the state at it by canonical index), per slot.
    slots: Vec<Option<(u64, Stored)>>,
}

impl Origins {
    fn new(spec: OriginSpec, single: bool) -> Origins {
        Origins { spec, single, slots: (0..spec.slots).map(|_| None).collect() }
    }

    /// At sample step `step` with the current state `now` (by canonical index): stores a new
    /// origin when one is due, then one record per stored origin, ordered by origin step.
    /// `term(now, origin)` is one atom's contribution.
    fn sample(
        &mut self,
        step: u64,
        now: &[[f64; 3]],
        types: &[u32],
        n_species: usize,
        term: impl Fn([f64; 3], [f64; 3]) -> f64 + Sync + Copy,
        out: &mut Vec<OriginRecord>,
    ) {
        if step.is_multiple_of(self.spec.origin_every) {
            let slot = ((step / self.spec.origin_every) % self.spec.slots as u64) as usize;
            match &mut self.slots[slot] {
                Some((s, state)) => {
                    *s = step;
                    state.set(now);
                }
                empty => *empty = Some((step, Stored::new(now, self.single))),
            }
        }
        let mut records: Vec<OriginRecord> = self
            .slots
            .par_iter()
            .filter_map(|slot| slot.as_ref())
            .map(|(origin_step, origin)| {
                let sums = match origin {
                    Stored::Single(o) => species_sums(now, o, types, n_species, term, |x| x as f64),
                    Stored::Double(o) => species_sums(now, o, types, n_species, term, |x| x),
                };
                OriginRecord { step, origin_step: *origin_step, sums }
            })
            .collect();
        records.sort_by_key(|r| r.origin_step);
        out.extend(records);
    }
}

fn displacement_sq(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// One transport measurement in progress on the CPU backend.
pub struct TransportSampler {
    spec: TransportSpec,
    /// The step sampling started at (records only for later steps).
    start: u64,
    n_species: usize,
    /// Species by canonical index.
    types: Vec<u32>,
    /// Unwrapped positions and the wrapped positions of the last MSD sample, by canonical index.
    unwrapped: Vec<[f64; 3]>,
    last_wrapped: Vec<[f64; 3]>,
    msd: Option<Origins>,
    vacf: Option<Origins>,
    out: TransportSamples,
}

/// `sim`'s positions (or velocities, `velocities`) by canonical index.
fn by_id<P: PrecisionMode>(sim: &CpuSim<P>, velocities: bool) -> Vec<[f64; 3]> {
    let mut out = vec![[0.0; 3]; sim.n()];
    for (s, &id) in sim.ids.iter().enumerate() {
        out[id as usize] = if velocities {
            sim.vel[s].map(|x| x.f64())
        } else {
            let p = sim.pos[s];
            [p[0].f64(), p[1].f64(), p[2].f64()]
        };
    }
    out
}

impl TransportSampler {
    /// Starts `spec` (already validated) at `sim`'s current step with `n_species` species.
    pub fn new<P: PrecisionMode>(spec: TransportSpec, sim: &CpuSim<P>, n_species: usize) -> TransportSampler {
        let mut types = vec![0; sim.n()];
        for (s, &id) in sim.ids.iter().enumerate() {
            types[id as usize] = sim.types[s];
        }
        let mut counts = vec![0usize; n_species];
        for &t in &types {
            if let Some(c) = counts.get_mut(t as usize) {
                *c += 1;
            }
        }
        let wrapped = if spec.msd.is_some() { by_id(sim, false) } else { Vec::new() };
        let single = std::mem::size_of::<P::State>() == 4;
        TransportSampler {
            spec,
            start: sim.step,
            n_species,
            types,
            unwrapped: wrapped.clone(),
            last_wrapped: wrapped,
            msd: spec.msd.map(|o| Origins::new(o, single)),
            vacf: spec.vacf.map(|o| Origins::new(o, single)),
            out: TransportSamples { species_counts: counts, ..Default::default() },
        }
    }

    /// The same measurement started afresh at `sim`'s current step (after atoms were added
    /// or removed, a restore or a rollback): every origin and record dropped.
    pub fn restart<P: PrecisionMode>(&self, sim: &CpuSim<P>, n_species: usize) -> TransportSampler {
        TransportSampler::new(self.spec, sim, n_species)
    }

    /// What is sampled.
    pub fn spec(&self) -> &TransportSpec {
        &self.spec
    }

    /// Steps from `step` to the next step anything is sampled at.
    pub fn steps_to_next(&self, step: u64) -> u64 {
        let to = |k: u64| if k == 0 { u64::MAX } else { k - step % k };
        let msd = self.spec.msd.map_or(u64::MAX, |m| to(m.every));
        let vacf = self.spec.vacf.map_or(u64::MAX, |v| to(v.every));
        msd.min(vacf).min(to(self.spec.stress_every))
    }

    /// Samples whatever is due at `sim`'s current step (nothing at or before the start).
    pub fn sample<P: PrecisionMode>(&mut self, sim: &CpuSim<P>, ctx: &Ctx) {
        let step = sim.step;
        if step <= self.start {
            return;
        }
        let n_species = self.n_species;
        if let Some(m) = self.msd.as_mut()
            && step.is_multiple_of(m.spec.every)
        {
            let now = by_id(sim, false);
            unwrap(&sim.sim_box, &now, &mut self.last_wrapped, &mut self.unwrapped);
            m.sample(step, &self.unwrapped, &self.types, n_species, displacement_sq, &mut self.out.msd);
        }
        if let Some(v) = self.vacf.as_mut()
            && step.is_multiple_of(v.spec.every)
        {
            let now = by_id(sim, true);
            v.sample(step, &now, &self.types, n_species, dot, &mut self.out.vacf);
        }
        if self.spec.stress_every > 0 && step.is_multiple_of(self.spec.stress_every) {
            let p = super::stress::pressure_tensor(sim, ctx);
            self.out.stress.push(StressRecord { step, p });
        }
    }

    /// The records since the last take (the species counts stay).
    pub fn take(&mut self) -> TransportSamples {
        let counts = self.out.species_counts.clone();
        std::mem::replace(&mut self.out, TransportSamples { species_counts: counts, ..Default::default() })
    }
}

/// Carries the unwrapped positions to the wrapped positions `now`: the minimum-image step
/// from the last sample along periodic axes, the plain difference along walled ones.
fn unwrap(b: &SimBox, now: &[[f64; 3]], last: &mut [[f64; 3]], unwrapped: &mut [[f64; 3]]) {
    let img = MinImage::<f64>::new(b);
    unwrapped.par_iter_mut().zip(last.par_iter_mut()).zip(now.par_iter()).with_min_len(4096).for_each(|((u, l), r)| {
        let d = img.apply([r[0] - l[0], r[1] - l[1], r[2] - l[2]]);
        for k in 0..3 {
            u[k] += d[k];
        }
        *l = *r;
    });
}
