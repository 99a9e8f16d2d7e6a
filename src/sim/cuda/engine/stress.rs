//! The pressure tensor on the device, for shear viscosity (`kernels/stress.cu`; the contract
//! is `transport::spec`, the CPU's counterpart `sim/cpu/stress.rs`). While it is sampled
//! (`Engine::set_stress`), every step divisible by the interval is a stress step inside the
//! step graphs: its force pass runs in the STRESS mode (the pair virial tensor, walls and
//! obstacles included, per block), it is never fused with the next step, and after its
//! thermostat `stress_kinetic` and `stress_finish` write one record into a ring of
//! [`STRESS_ROWS`] rows on the device, the row given by the step alone. Nothing crosses to
//! the host per sample: the host reads the rows of the steps it knows were sampled when the
//! records are taken, or when the ring is half full (`transport.rs`).

use super::Engine;
use super::arrays::{alloc, unpack};
use crate::sim::SimError;
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::{Call, Launcher, Over};
use crate::transport::StressRecord;
use cudarc::driver::CudaSlice;

/// Rows of the device ring of pressure-tensor records.
pub const STRESS_ROWS: usize = 16384;
/// Bytes of one record: step, six components, unused.
const ROW_BYTES: usize = 64;

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
        let blocks = self.force_partials_cap() + self.n.div_ceil(self.module.block as usize).max(1);
        let bytes = blocks * 6 * 8;
        if self.a.partials_stress.as_ref().is_none_or(|p| p.len() < bytes) {
            self.a.partials_stress = Some(alloc(dev, bytes, "allocating the stress partial sums")?);
        }
        Ok(())
    }

    /// The kernels closing a stress step: the kinetic tensor and the record.
    pub(super) fn stress_calls(&self, l: &Launcher) -> Vec<Call> {
        let kin_off = self.force_partials_cap() as i32;
        let n_kin = l.atom_blocks() as i32;
        let mut calls: Vec<Call> =
            l.plain_call("stress_kinetic", Over::Atoms).map(|c| c.arg(&kin_off)).into_iter().collect();
        calls.push(
            l.grid_call("stress_finish", 1)
                .arg(&self.stress_every)
                .arg(&(STRESS_ROWS as i32))
                .arg(&self.ev_blocks())
                .arg(&kin_off)
                .arg(&n_kin),
        );
        calls
    }

    /// The records of stress steps `steps` (each written since the ring last wrapped past it;
    /// increasing, at most [`STRESS_ROWS`] of them).
    pub fn read_stress(&self, dev: &Device, steps: &[u64]) -> Result<Vec<StressRecord>, SimError> {
        let (Some(&first), Some(&last)) = (steps.first(), steps.last()) else { return Ok(Vec::new()) };
        let every = self.stress_every.max(1);
        let row = |s: u64| ((s / every) % STRESS_ROWS as u64) as usize;
        let (r0, r1) = (row(first), row(last));
        // One contiguous range, or the whole ring when the rows wrap around its end.
        let (lo, hi) = if r0 <= r1 && steps.len() <= STRESS_ROWS { (r0, r1 + 1) } else { (0, STRESS_ROWS) };
        let what = "reading the stress records";
        let s: &CudaSlice<u8> =
            self.a.stress_records.as_ref().ok_or_else(|| SimError::Device(format!("{what}: not allocated")))?;
        let mut raw = vec![0u8; (hi - lo) * ROW_BYTES];
        dev.stream
            .memcpy_dtoh(&s.slice(lo * ROW_BYTES..hi * ROW_BYTES), &mut raw)
            .map_err(|e| SimError::Device(format!("{what}: {e}")))?;
        dev.stream.synchronize().map_err(|e| SimError::Device(format!("{what}: {e}")))?;
        let words = unpack(&raw, 8);
        steps
            .iter()
            .map(|&s| {
                let r = &words[(row(s) - lo) * 8..(row(s) - lo + 1) * 8];
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
