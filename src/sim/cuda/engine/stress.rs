//! The pressure tensor on the device, for shear viscosity (`kernels/stress.cu`; the contract
//! is `transport::spec`, the CPU's counterpart `sim/cpu/stress.rs`). While it is sampled
//! (`Engine::set_stress`), every step divisible by the interval is a stress step inside the
//! step graphs: its force pass runs in the STRESS mode (the pair virial tensor, walls and
//! obstacles included, per block), its integrator (fused with the next step's first half or
//! not) also sums the kinetic tensor, and after its thermostat `stress_finish` scales that by
//! the thermostat's factor squared and writes one record into a ring of [`STRESS_ROWS`] rows
//! on the device, the row given by the step alone. Where velocities change after the
//! integrator in other ways (a thermostat relative to the flow, the tunnel's zone), the step
//! is not fused and `stress_kinetic` sums them at its end instead. Nothing crosses to
//! the host per sample: the host reads the rows of the steps it knows were sampled when the
//! records are taken, or when the ring is half full (`transport.rs`).

use super::Engine;
use super::arrays::{alloc, download_ring};
use crate::sim::SimError;
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::{Call, Launcher, Over};
use crate::transport::StressRecord;

/// Rows of the device ring of pressure-tensor records.
pub const STRESS_ROWS: usize = 16384;
/// Bytes of one record: step, six components, unused.
const ROW_BYTES: usize = 64;
/// Blocks of `stress_finish` (each sums a share of the partials; the last adds their rows).
const FINISH_BLOCKS: usize = 32;

impl Engine {
    /// Capacity of the force passes' partial sums (blocks), which the kinetic partials follow.
    pub(super) fn force_partials_cap(&self) -> usize {
        // Up to 8 threads per atom in the neighbour-list force kernel; up to 8 blocks per tile
        // and one per tile more in the symmetric all-pairs kernels.
        self.n.div_ceil(self.module.block as usize) * 9 + 16
    }

    /// Samples the pressure tensor every `every` steps from now on (0: stops and frees its
    /// arrays). The step graphs are rebuilt (they hold the arrays' addresses).
    pub fn set_stress(&mut self, dev: &Device, every: u64) -> Result<(), SimError> {
        self.stress_every = every;
        if every == 0 {
            self.a.partials_stress = None;
            self.a.stress_records = None;
        } else {
            self.alloc_stress_partials(dev)?;
            if self.a.stress_records.is_none() {
                self.a.stress_records = Some(alloc(dev, STRESS_ROWS * ROW_BYTES, "allocating the stress records")?);
            }
        }
        self.refresh_bufs(dev);
        Ok(())
    }

    /// (Re)allocates the stress partials for the current atom count and block size.
    pub(super) fn alloc_stress_partials(&mut self, dev: &Device) -> Result<(), SimError> {
        if self.stress_every == 0 {
            return Ok(());
        }
        // The force and kinetic partials, the finishing blocks' rows and their counter.
        let bytes = (self.stress_level2_off() as usize + FINISH_BLOCKS) * 6 * 8 + 8;
        if self.a.partials_stress.as_ref().is_none_or(|p| p.len() != bytes) {
            // Exactly this size: the counter at its end starts at zero.
            self.a.partials_stress = Some(alloc(dev, bytes, "allocating the stress partial sums")?);
        }
        Ok(())
    }

    /// Where the kinetic tensor's partials start in `partials_stress` (after the force
    /// passes').
    pub(super) fn stress_kin_off(&self) -> i32 {
        self.force_partials_cap() as i32
    }

    /// Where the finishing blocks' rows start in `partials_stress` (after the kinetic
    /// partials of an atom launch).
    fn stress_level2_off(&self) -> i32 {
        self.stress_kin_off() + self.n.div_ceil(self.module.block as usize).max(1) as i32
    }

    /// The kernels closing a stress step: with `separate`, the kinetic tensor from the
    /// velocities as they are now (else the step's integrator left it, and `scaled` says
    /// whether the thermostat's factor is still to be applied to it), then the record.
    pub(super) fn stress_calls(&self, l: &Launcher, separate: bool, scaled: bool) -> Vec<Call> {
        let kin_off = self.stress_kin_off();
        let n_kin = l.atom_blocks() as i32;
        let mut calls = Vec::new();
        if separate {
            calls.extend(l.plain_call("stress_kinetic", Over::Atoms).map(|c| c.arg(&kin_off)));
        }
        calls.push(
            l.grid_call("stress_finish", FINISH_BLOCKS as u32)
                .arg(&self.stress_every)
                .arg(&(STRESS_ROWS as i32))
                .arg(&self.ev_blocks())
                .arg(&kin_off)
                .arg(&n_kin)
                .arg(&i32::from(scaled && !separate))
                .arg(&self.stress_level2_off()),
        );
        calls
    }

    /// The records of stress steps `steps` (each written since the ring last wrapped past it;
    /// increasing, at most [`STRESS_ROWS`] of them).
    pub fn read_stress(&self, dev: &Device, steps: &[u64]) -> Result<Vec<StressRecord>, SimError> {
        let what = "reading the stress records";
        let ring = self.a.stress_records.as_ref().ok_or_else(|| SimError::Device(format!("{what}: not allocated")))?;
        let (rows, words) = download_ring(dev, ring, (STRESS_ROWS, ROW_BYTES), steps, self.stress_every, what)?;
        steps
            .iter()
            .zip(rows)
            .map(|(&s, at)| {
                let r = &words[at * 8..(at + 1) * 8];
                if r[0] != s as f64 {
                    return Err(SimError::Device(format!(
                        "the pressure-tensor record of step {s} was not written (row holds step {})",
                        r[0]
                    )));
                }
                Ok(StressRecord { step: s, p: [r[1], r[2], r[3], r[4], r[5], r[6]] })
            })
            .collect()
    }
}
