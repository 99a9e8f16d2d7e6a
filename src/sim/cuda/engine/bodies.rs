//! Body forces on the device (`sim::bodies`, `kernels/bodies.cuh`): the per-pass fixed-point
//! sums the force kernels add into, the running f64 sums `bodies_latch` moves them into after
//! every step's force pass, and one copy of those per telemetry record (`body_records`, read
//! back with the telemetry records: nothing crosses PCIe per step). Allocated only while
//! there are bodies (walls or obstacles).
//!
//! The running sums are saved and restored with the list-overflow backup (a redone advance
//! must not count its steps twice) and zeroed on a rollback; the count of steps summed rides
//! along as the last word, so a record averages exactly the steps it covers.

use cudarc::driver::CudaSlice;

use super::Engine;
use super::arrays::{alloc, dev_err, download, unpack};
use crate::physics::obstacles::ObstacleField;
use crate::sim::SimError;
use crate::sim::bodies::{BodyForce, BodyLayout, mean_forces};
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::{Call, Launcher, Over};

/// `bodies_latch` modes: add the pass to the running sums, add and close a record, or drop
/// the pass (a force pass outside the step loop).
pub(super) const LATCH_ADD: i32 = 0;
pub(super) const LATCH_RECORD: i32 = 1;
pub(super) const LATCH_DISCARD: i32 = -1;

impl Engine {
    /// Doubles of one body record: 3 per body and the step count.
    fn body_stride(&self) -> usize {
        3 * self.bodies.len() + 1
    }

    /// Zeroed body sums for the tank and `field` (none without bodies), with records for
    /// `records_cap` telemetry records.
    pub(super) fn configure_bodies(&mut self, dev: &Device, field: Option<&ObstacleField>) -> Result<(), SimError> {
        self.bodies = BodyLayout::new(&self.sim_box, field);
        if self.bodies.is_empty() {
            self.a.body_fix = None;
            self.a.body_sum = None;
            self.a.body_sum_bak = None;
            self.a.body_records = None;
            return Ok(());
        }
        let stride = self.body_stride();
        self.a.body_fix = Some(alloc(dev, 3 * self.bodies.len() * 8, "allocating body forces")?);
        self.a.body_sum = Some(alloc(dev, stride * 8, "allocating body forces")?);
        self.a.body_sum_bak = Some(alloc(dev, stride * 8, "allocating body forces")?);
        self.a.body_records = Some(alloc(dev, self.records_cap.max(16) * stride * 8, "allocating body force records")?);
        Ok(())
    }

    /// Grows the body records with the telemetry records (`ensure_records`).
    pub(super) fn ensure_body_records(&mut self, dev: &Device) -> Result<(), SimError> {
        if self.bodies.is_empty() {
            return Ok(());
        }
        let bytes = self.records_cap.max(16) * self.body_stride() * 8;
        if self.a.body_records.as_ref().is_none_or(|r| r.len() < bytes) {
            self.a.body_records = Some(alloc(dev, bytes, "allocating body force records")?);
        }
        Ok(())
    }

    /// The latch after a force pass (see [`LATCH_ADD`] and the others); none without bodies.
    pub(super) fn body_latch_call(&self, l: &Launcher, mode: i32) -> Option<Call> {
        if self.consts.n_bodies == 0 {
            return None;
        }
        l.plain_call("bodies_latch", Over::Single).map(|c| c.arg(&mode))
    }

    fn copy_body_sum(
        dev: &Device,
        src: &Option<CudaSlice<u8>>,
        dst: &mut Option<CudaSlice<u8>>,
    ) -> Result<(), SimError> {
        if let (Some(s), Some(d)) = (src.as_ref(), dst.as_mut()) {
            dev.stream.memcpy_dtod(s, d).map_err(dev_err("saving the body forces"))?;
        }
        Ok(())
    }

    /// Keeps a device copy of the running sums (before an advance that may be redone).
    pub(super) fn save_bodies(&mut self, dev: &Device) -> Result<(), SimError> {
        Self::copy_body_sum(dev, &self.a.body_sum, &mut self.a.body_sum_bak)
    }

    /// Puts back the sums kept by [`Engine::save_bodies`].
    pub(super) fn restore_bodies(&mut self, dev: &Device) -> Result<(), SimError> {
        Self::copy_body_sum(dev, &self.a.body_sum_bak, &mut self.a.body_sum)
    }

    /// Forgets the steps summed so far (after a rollback).
    pub(super) fn clear_bodies(&mut self, dev: &Device) -> Result<(), SimError> {
        for s in [self.a.body_sum.as_mut(), self.a.body_fix.as_mut()].into_iter().flatten() {
            dev.stream.memset_zeros(s).map_err(dev_err("zeroing the body forces"))?;
        }
        Ok(())
    }

    /// The mean force on each body for each of the first `count` records of this advance.
    pub(super) fn body_records(&self, dev: &Device, count: usize) -> Result<Vec<Vec<BodyForce>>, SimError> {
        if self.bodies.is_empty() || count == 0 {
            return Ok(vec![Vec::new(); count]);
        }
        let stride = self.body_stride();
        let raw = unpack(&download(dev, &self.a.body_records, count * stride * 8, "reading body forces")?, 8);
        Ok(raw
            .chunks_exact(stride)
            .map(|r| {
                let sums: Vec<[f64; 3]> = r[..stride - 1].chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
                mean_forces(&self.bodies, &sums, r[stride - 1].round() as u64)
            })
            .collect())
    }
}
