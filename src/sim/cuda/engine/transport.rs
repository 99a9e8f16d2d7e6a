//! Transport sampling on the device (`kernels/transport.cu`; the contract is
//! `transport::spec`, the CPU's counterpart `sim/cpu/transport.rs`): unwrapped positions and
//! the stored MSD and VACF origins, by canonical index, live on the device; each sample step
//! launches `transport_sample` and `transport_reduce` per quantity, which leave one row of
//! per-species sums per stored origin in a device record buffer. The host keeps only which
//! (step, origin step) each row is, and copies the rows back when they are taken (or when
//! the buffer fills). `CudaBackend::advance_md` stops on every MSD or VACF sample step.
//!
//! The pressure tensor is sampled inside the step graphs (`stress.rs`); the host only keeps
//! the steps sampled since the last read ([`DeviceTransport::note_advanced`]) and reads their
//! records when they are taken or when half the device ring holds unread records.

use cudarc::driver::{CudaSlice, DevicePtr};

use super::Engine;
use super::arrays::{alloc, download, unpack};
use super::stress::STRESS_ROWS;
use crate::sim::SimError;
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::TransportArgs;
use crate::transport::spec::MAX_SLOTS;
use crate::transport::{OriginRecord, OriginSpec, TransportSamples, TransportSpec};

/// Record rows the device buffer holds before they are copied back.
const RECORD_ROWS: usize = 4096;
/// Species the device sampler sums separately at most.
pub const MAX_SPECIES: usize = 8;

/// One quantity's origins: the stored states (slots x n by canonical index: 4 doubles for
/// the MSD, the velocity in the state's precision for the VACF) and the step each slot was
/// taken at.
struct Origins {
    spec: OriginSpec,
    states: CudaSlice<u8>,
    taken: Vec<Option<u64>>,
}

/// Which quantity and (step, origin step) a device record row holds.
#[derive(Clone, Copy)]
struct Row {
    msd: bool,
    step: u64,
    origin_step: u64,
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
    records: Option<CudaSlice<u8>>,
    rows: Vec<Row>,
    msd: Option<Origins>,
    vacf: Option<Origins>,
    /// Pressure-tensor steps sampled on the device and not read yet.
    stress_pending: Vec<u64>,
    out: TransportSamples,
}

impl DeviceTransport {
    /// Steps from `step` to the next step the host must act at: an MSD or VACF sample, or
    /// where the unread pressure-tensor records would fill half the device ring.
    pub fn steps_to_next(&self, step: u64) -> u64 {
        let to = |k: u64| k - step % k;
        let msd = self.spec.msd.map_or(u64::MAX, |m| to(m.every));
        let vacf = self.spec.vacf.map_or(u64::MAX, |v| to(v.every));
        let stress = match self.spec.stress_every {
            0 => u64::MAX,
            e => ((STRESS_ROWS / 2).saturating_sub(self.stress_pending.len()).max(1) as u64) * e,
        };
        msd.min(vacf).min(stress)
    }

    /// Notes that the engine advanced from step `from` to `to` with `n` atoms: the
    /// pressure-tensor steps in between were sampled on the device.
    pub fn note_advanced(&mut self, from: u64, to: u64, n: usize) {
        let every = self.spec.stress_every;
        if every == 0 || n == 0 {
            return;
        }
        let mut s = (from.max(self.start) / every + 1) * every;
        while s <= to {
            self.stress_pending.push(s);
            s += every;
        }
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

    /// What is sampled.
    pub fn spec(&self) -> TransportSpec {
        self.spec
    }

    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        let o = |x: &Option<Origins>| x.as_ref().map_or(0, |o| o.states.len());
        let s = |x: &Option<CudaSlice<u8>>| x.as_ref().map_or(0, |s| s.len());
        o(&self.msd) + o(&self.vacf) + s(&self.unwrapped) + s(&self.last) + self.partial.len() + s(&self.records)
    }

    /// Copies the device rows back into the host records (oldest first) and empties them.
    fn drain(&mut self, dev: &Device) -> Result<(), SimError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let nsp = self.nsp;
        let raw = download(dev, &self.records, self.rows.len() * nsp * 8, "reading transport records")?;
        let sums = unpack(&raw, 8);
        for (row, s) in self.rows.drain(..).zip(sums.chunks_exact(nsp)) {
            let rec = OriginRecord { step: row.step, origin_step: row.origin_step, sums: s.to_vec() };
            if row.msd { self.out.msd.push(rec) } else { self.out.vacf.push(rec) }
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
    /// [`MAX_SPECIES`]); the pressure tensor is sampled from the next step on when asked.
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
        // MSD origins: 4 doubles an atom; VACF origins: the velocity in the state precision.
        let vel_bytes = if self.precision == crate::physics::real::Precision::Single { 16 } else { 32 };
        let origins = |o: Option<OriginSpec>, bytes: usize| -> Result<Option<Origins>, SimError> {
            o.map(|spec| {
                Ok(Origins {
                    spec,
                    states: alloc(dev, spec.slots * n.max(1) * bytes, what)?,
                    taken: vec![None; spec.slots],
                })
            })
            .transpose()
        };
        let blocks = self.launcher(dev).atom_blocks().max(1) as usize;
        let mut t = DeviceTransport {
            spec,
            start: self.step,
            n,
            nsp,
            unwrapped: None,
            last: None,
            partial: alloc(dev, blocks * MAX_SLOTS * nsp * 8, what)?,
            records: Some(alloc(dev, RECORD_ROWS * nsp * 8, what)?),
            rows: Vec::new(),
            msd: origins(spec.msd, 32)?,
            vacf: origins(spec.vacf, vel_bytes)?,
            stress_pending: Vec::new(),
            out: TransportSamples { species_counts: counts, ..Default::default() },
        };
        self.set_stress(dev, spec.stress_every)?;
        if spec.msd.is_some() {
            t.unwrapped = Some(alloc(dev, n.max(1) * 32, what)?);
            t.last = Some(alloc(dev, n.max(1) * 32, what)?);
            let a = self.transport_args(dev, &t, 0, 0, -1, blocks);
            self.launcher(dev).transport("transport_init", &a)?;
        }
        Ok(t)
    }

    /// Samples whatever is due at the current step (nothing at or before the start), and
    /// reads the pressure-tensor records once half the device ring holds unread ones.
    pub fn transport_sample(&self, dev: &Device, t: &mut DeviceTransport) -> Result<(), SimError> {
        if t.stress_pending.len() >= STRESS_ROWS / 2 {
            t.drain_stress(dev, self)?;
        }
        let step = self.step;
        if step <= t.start || t.n != self.n {
            return Ok(());
        }
        let blocks = self.launcher(dev).atom_blocks().max(1) as usize;
        for msd in [true, false] {
            let due = match if msd { &t.msd } else { &t.vacf } {
                Some(o) => step.is_multiple_of(o.spec.every),
                None => false,
            };
            if !due {
                continue;
            }
            let slots = if msd { &t.msd } else { &t.vacf }.as_ref().map_or(0, |o| o.spec.slots);
            if t.rows.len() + slots > RECORD_ROWS {
                t.drain(dev)?;
            }
            let DeviceTransport { msd: m, vacf: v, rows, .. } = t;
            let Some(o) = (if msd { m.as_mut() } else { v.as_mut() }) else { continue };
            let new_slot = if step.is_multiple_of(o.spec.origin_every) {
                let slot = ((step / o.spec.origin_every) % slots as u64) as usize;
                o.taken[slot] = Some(step);
                slot as i32
            } else {
                -1
            };
            // Rows in order of origin step, as the CPU gives them.
            let mut held: Vec<(u64, usize)> =
                o.taken.iter().enumerate().filter_map(|(s, x)| x.map(|st| (st, s))).collect();
            held.sort_unstable();
            let mut rec_of = [0i32; 64];
            let mut valid = 0u64;
            for (k, &(_, s)) in held.iter().enumerate() {
                rec_of[s] = (rows.len() + k) as i32;
                valid |= 1 << s;
            }
            rows.extend(held.iter().map(|&(origin_step, _)| Row { msd, step, origin_step }));
            let states = o.states.device_ptr(&dev.stream).0;
            let mut a = self.transport_args(dev, t, states, slots, new_slot, blocks);
            a.msd = msd as i32;
            a.valid = valid;
            a.rec_of = rec_of;
            let l = self.launcher(dev);
            l.transport("transport_sample", &a)?;
            l.transport("transport_reduce", &a)?;
        }
        Ok(())
    }

    fn transport_args(
        &self,
        dev: &Device,
        t: &DeviceTransport,
        states: u64,
        slots: usize,
        new_slot: i32,
        blocks: usize,
    ) -> TransportArgs {
        let p = |s: Option<&CudaSlice<u8>>| s.map_or(0, |s| s.device_ptr(&dev.stream).0);
        TransportArgs {
            u: p(t.unwrapped.as_ref()),
            last: p(t.last.as_ref()),
            origins: states,
            partial: p(Some(&t.partial)),
            records: p(t.records.as_ref()),
            valid: 0,
            slots: slots as i32,
            nsp: t.nsp as i32,
            msd: 1,
            new_slot,
            blocks: blocks as i32,
            pad: 0,
            rec_of: [0; 64],
        }
    }
}
