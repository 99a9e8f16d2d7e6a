//! Transport sampling on the device (`kernels/transport.cu`; the contract is
//! `transport::spec`, the CPU's counterpart `sim/cpu/transport.rs`): unwrapped positions and
//! the stored MSD and VACF origins, by canonical index, live on the device. The samples are
//! nodes of the step graphs (`Shape::msd`, `Shape::vacf`): after each step divisible by a
//! quantity's interval, `transport_sample` and `transport_reduce` leave one record of
//! per-species sums per held origin in a ring of [`RING_SAMPLES`] samples, where the slot,
//! the origins held and the row all follow from the step. The host keeps only the sample
//! steps since the last read ([`DeviceTransport::note_advanced`]), works out the same
//! (step, origin step) of each row ([`origin_of`]), and reads the rows when the records are
//! taken or when half a ring is unread.
//!
//! `CudaBackend::advance_md` ends its calls to the engine on origin steps: a call redone
//! after a list overflow then never finds a slot overwritten by a later origin of the same
//! call (its last step writes the same origin again), and the unwrapped positions, carried
//! by minimum image, come back from the call's end to its start within an origin interval.
//!
//! The pressure tensor is sampled inside the step graphs too (`stress.rs`); its sampled
//! steps are kept here and its records read with the others.

use cudarc::driver::{CudaSlice, DevicePtr};

use super::Engine;
use super::arrays::{alloc, download_ring};
use super::stress::STRESS_ROWS;
use crate::sim::SimError;
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::TransportArgs;
use crate::transport::{OriginRecord, OriginSpec, TransportSamples, TransportSpec};

/// Samples each quantity's record ring holds.
pub const RING_SAMPLES: usize = 512;
/// Species the device sampler sums separately at most.
pub const MAX_SPECIES: usize = 8;
/// The smallest block size a module has: the partial sums are sized for its block count.
const MIN_BLOCK: usize = 32;

/// The origin step slot `k` holds at sample step `step` (a new origin at `step` included):
/// origins are taken at the multiples m of `origin_every` after `start`, into slot
/// m % slots. Mirrors `origin_of` in kernels/transport.cu.
pub fn origin_of(spec: &OriginSpec, start: u64, step: u64, k: usize) -> Option<u64> {
    let slots = spec.slots as u64;
    let m_max = step / spec.origin_every;
    let back = (m_max % slots + slots - k as u64) % slots;
    let o = m_max.checked_sub(back)? * spec.origin_every;
    (o > start).then_some(o)
}

/// One quantity's origins on the device: the stored states (slots x n by canonical index in
/// the state's precision: the unwrapped position for the MSD, the velocity for the VACF),
/// the ring of records and the sample steps not read yet.
struct Origins {
    spec: OriginSpec,
    states: CudaSlice<u8>,
    records: CudaSlice<u8>,
    pending: Vec<u64>,
}

/// The sampling nodes' arguments for the step graphs (the MSD's, the VACF's); `blocks` is
/// set where the graph is built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransportNodes {
    pub msd: Option<TransportArgs>,
    pub vacf: Option<TransportArgs>,
}

/// A transport measurement in progress on the device.
pub struct DeviceTransport {
    spec: TransportSpec,
    start: u64,
    n: usize,
    nsp: usize,
    unwrapped: Option<CudaSlice<u8>>,
    last: Option<CudaSlice<u8>>,
    partial: CudaSlice<u8>,
    msd: Option<Origins>,
    vacf: Option<Origins>,
    /// Pressure-tensor steps sampled on the device and not read yet.
    stress_pending: Vec<u64>,
    out: TransportSamples,
}

impl DeviceTransport {
    /// Steps from `step` to where the next call to the engine must end: an MSD or VACF
    /// origin step, or where unread records would fill half a ring.
    pub fn steps_to_next(&self, step: u64) -> u64 {
        let to = |k: u64| k - step % k;
        let mut next = u64::MAX;
        for o in [&self.msd, &self.vacf].into_iter().flatten() {
            let room = (RING_SAMPLES / 2).saturating_sub(o.pending.len()).max(1) as u64 * o.spec.every;
            next = next.min(to(o.spec.origin_every)).min(room);
        }
        if self.spec.stress_every > 0 {
            let room = (STRESS_ROWS / 2).saturating_sub(self.stress_pending.len()).max(1) as u64;
            next = next.min(room * self.spec.stress_every);
        }
        next
    }

    /// Notes that the engine advanced from step `from` to `to` with `n` atoms: the sample
    /// steps in between were sampled on the device.
    pub fn note_advanced(&mut self, from: u64, to: u64, n: usize) {
        if n == 0 || n != self.n {
            return;
        }
        let first = from.max(self.start);
        let steps = |every: u64| ((first / every + 1) * every..=to).step_by(every as usize);
        if self.spec.stress_every > 0 {
            self.stress_pending.extend(steps(self.spec.stress_every));
        }
        for o in [&mut self.msd, &mut self.vacf].into_iter().flatten() {
            o.pending.extend(steps(o.spec.every));
        }
    }

    /// What is sampled.
    pub fn spec(&self) -> TransportSpec {
        self.spec
    }

    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        let o = |x: &Option<Origins>| x.as_ref().map_or(0, |o| o.states.len() + o.records.len());
        let s = |x: &Option<CudaSlice<u8>>| x.as_ref().map_or(0, |s| s.len());
        o(&self.msd) + o(&self.vacf) + s(&self.unwrapped) + s(&self.last) + self.partial.len()
    }

    /// The step-graph nodes' arguments.
    pub fn nodes(&self, dev: &Device) -> TransportNodes {
        let p = |s: Option<&CudaSlice<u8>>| s.map_or(0, |s| s.device_ptr(&dev.stream).0);
        let args = |o: &Option<Origins>, msd: bool| {
            o.as_ref().map(|o| TransportArgs {
                u: p(self.unwrapped.as_ref()),
                last: p(self.last.as_ref()),
                origins: p(Some(&o.states)),
                partial: p(Some(&self.partial)),
                records: p(Some(&o.records)),
                start: self.start,
                every: o.spec.every,
                origin_every: o.spec.origin_every,
                slots: o.spec.slots as i32,
                nsp: self.nsp as i32,
                msd: i32::from(msd),
                blocks: 0,
                rows: RING_SAMPLES as i32,
                pad: 0,
            })
        };
        TransportNodes { msd: args(&self.msd, true), vacf: args(&self.vacf, false) }
    }

    /// Reads the unread MSD and VACF records into the host records, ordered by step, then by
    /// origin step (as the CPU gives them).
    fn drain(&mut self, dev: &Device) -> Result<(), SimError> {
        let (start, nsp) = (self.start, self.nsp);
        for (o, out) in [(&mut self.msd, &mut self.out.msd), (&mut self.vacf, &mut self.out.vacf)] {
            let Some(o) = o.as_mut() else { continue };
            let ring = (RING_SAMPLES, o.spec.slots * nsp * 8);
            let what = "reading transport records";
            let (rows, sums) = download_ring(dev, &o.records, ring, &o.pending, o.spec.every, what)?;
            for (&step, at) in o.pending.iter().zip(rows) {
                let mut held: Vec<(u64, usize)> =
                    (0..o.spec.slots).filter_map(|k| origin_of(&o.spec, start, step, k).map(|s| (s, k))).collect();
                held.sort_unstable();
                for (origin_step, k) in held {
                    let from = (at * o.spec.slots + k) * nsp;
                    out.push(OriginRecord { step, origin_step, sums: sums[from..from + nsp].to_vec() });
                }
            }
            o.pending.clear();
        }
        Ok(())
    }

    /// Reads the pending pressure-tensor records into the host records (before the engine
    /// that holds them is replaced).
    pub fn drain_stress(&mut self, dev: &Device, engine: &Engine) -> Result<(), SimError> {
        if self.stress_pending.is_empty() {
            return Ok(());
        }
        let recs = engine.read_stress(dev, &self.stress_pending)?;
        self.out.stress.extend(recs);
        self.stress_pending.clear();
        Ok(())
    }

    /// Reads whatever rings are half full (between calls to the engine).
    pub fn drain_if_full(&mut self, dev: &Device, engine: &Engine) -> Result<(), SimError> {
        let full = [&self.msd, &self.vacf].into_iter().flatten().any(|o| o.pending.len() >= RING_SAMPLES / 2);
        if full {
            self.drain(dev)?;
        }
        if self.stress_pending.len() >= STRESS_ROWS / 2 {
            self.drain_stress(dev, engine)?;
        }
        Ok(())
    }

    /// The records since the last take (the species counts stay).
    pub fn take(&mut self, dev: &Device, engine: &Engine) -> Result<TransportSamples, SimError> {
        self.drain(dev)?;
        self.drain_stress(dev, engine)?;
        let counts = self.out.species_counts.clone();
        Ok(std::mem::replace(&mut self.out, TransportSamples { species_counts: counts, ..Default::default() }))
    }
}

impl Engine {
    /// Starts `spec` (validated) at the current step for `n_species` species (at most
    /// [`MAX_SPECIES`]): the device arrays, the unwrapped positions' start, and the sampling
    /// nodes of the step graphs (the pressure tensor's too, `stress.rs`).
    pub fn transport_start(
        &mut self,
        dev: &Device,
        spec: TransportSpec,
        n_species: usize,
    ) -> Result<DeviceTransport, SimError> {
        let n = self.n;
        let nsp = n_species.max(1);
        let counts = self.species_counts(dev, nsp)?;
        let what = "allocating transport sampling";
        // Origins in the state's precision (the unwrapped position, the velocity).
        let bytes = if self.precision == crate::physics::real::Precision::Single { 16 } else { 32 };
        let origins = |o: Option<OriginSpec>, bytes: usize| -> Result<Option<Origins>, SimError> {
            o.map(|spec| {
                Ok(Origins {
                    spec,
                    states: alloc(dev, spec.slots * n.max(1) * bytes, what)?,
                    records: alloc(dev, RING_SAMPLES * spec.slots * nsp * 8, what)?,
                    pending: Vec::new(),
                })
            })
            .transpose()
        };
        let most_slots = [spec.msd, spec.vacf].into_iter().flatten().map(|o| o.slots).max().unwrap_or(1);
        let t = DeviceTransport {
            spec,
            start: self.step,
            n,
            nsp,
            unwrapped: spec.msd.map(|_| alloc(dev, n.max(1) * 32, what)).transpose()?,
            last: spec.msd.map(|_| alloc(dev, n.max(1) * 32, what)).transpose()?,
            partial: alloc(dev, n.div_ceil(MIN_BLOCK).max(1) * most_slots * nsp * 8, what)?,
            msd: origins(spec.msd, bytes)?,
            vacf: origins(spec.vacf, bytes)?,
            stress_pending: Vec::new(),
            out: TransportSamples { species_counts: counts, ..Default::default() },
        };
        self.set_stress(dev, spec.stress_every)?;
        let nodes = t.nodes(dev);
        if let Some(a) = nodes.msd {
            let l = self.launcher(dev);
            l.run(l.transport_call("transport_init", &a))?;
        }
        self.set_transport_nodes(Some(nodes));
        Ok(t)
    }

    /// The sampling nodes the step graphs add (None: none); the graphs are rebuilt.
    pub fn set_transport_nodes(&mut self, nodes: Option<TransportNodes>) {
        if self.transport_nodes != nodes {
            self.graphs.clear();
            self.transport_nodes = nodes;
        }
    }

    /// The calls of one MSD (`msd`) or VACF sample after the clock's step.
    pub(super) fn transport_calls(
        &self,
        l: &crate::sim::cuda::launch::Launcher,
        msd: bool,
    ) -> Vec<crate::sim::cuda::launch::Call> {
        let nodes = self.transport_nodes.as_ref();
        let Some(mut a) = nodes.and_then(|t| if msd { t.msd } else { t.vacf }) else { return Vec::new() };
        a.blocks = l.atom_blocks().max(1) as i32;
        ["transport_sample", "transport_reduce"].into_iter().filter_map(|k| l.transport_call(k, &a)).collect()
    }

    /// The intervals of the MSD and VACF samples (0: none).
    pub(super) fn transport_every(&self) -> (u64, u64) {
        let every = |a: Option<TransportArgs>| a.map_or(0, |a| a.every);
        self.transport_nodes.map_or((0, 0), |t| (every(t.msd), every(t.vacf)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_held_follow_the_cpu_rule() {
        // The CPU's rule, step by step: at each multiple of origin_every after the start, slot
        // (s / origin_every) % slots takes the origin s.
        let spec = OriginSpec { every: 5, origin_every: 20, slots: 3 };
        for start in [0u64, 7, 20, 33] {
            let mut held = vec![None; spec.slots];
            for step in (start + 1)..400 {
                if step.is_multiple_of(spec.origin_every) {
                    held[((step / spec.origin_every) % spec.slots as u64) as usize] = Some(step);
                }
                if step.is_multiple_of(spec.every) {
                    for (k, h) in held.iter().enumerate() {
                        assert_eq!(origin_of(&spec, start, step, k), *h, "start {start} step {step} slot {k}");
                    }
                }
            }
        }
    }
}
