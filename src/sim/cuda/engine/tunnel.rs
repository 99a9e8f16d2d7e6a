//! The wind tunnel's inflow zone on the device (`physics::tunnel`, `kernels/tunnel.cu`): the
//! zone's launches at the end of a step (`tunnel_zone`, and on a telemetry step
//! `tunnel_latch` and the thermal readout's flow bins of the state after it), the arrays of
//! its bookkeeping (per-block partials, per-block running sums since the last record, one
//! total of those per telemetry record, read back with the telemetry records: nothing
//! crosses PCIe per step), their backup around an advance that may be redone, and zeroing on
//! a rollback.
//! Allocated only while the tunnel is on.

use cudarc::driver::CudaSlice;

use super::Engine;
use super::arrays::{alloc, dev_err, download, unpack};
use crate::physics::params::SimParams;
use crate::physics::tunnel::ZoneSums;
use crate::sim::SimError;
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::{Call, Launcher, Over};

/// Doubles per record and per block of running sums: px, py, pz, kinetic energy.
const WORDS: usize = 4;

impl Engine {
    /// Whether the tunnel is on (set by `configure`, which also empties the graph cache, so
    /// cached graphs always match it).
    pub(super) fn tunnel_on(&self) -> bool {
        self.consts.tunnel_on != 0
    }

    /// The bookkeeping arrays for `params`: allocated while the tunnel is on (the running
    /// sums kept across a change of its settings), none otherwise.
    pub(super) fn configure_tunnel(&mut self, dev: &Device, params: &SimParams) -> Result<(), SimError> {
        if params.tunnel.is_none() {
            self.a.tunnel_part = None;
            self.a.tunnel_sum = None;
            self.a.tunnel_sum_bak = None;
            self.a.tunnel_records = None;
            return Ok(());
        }
        // Per block of tunnel_zone at the smallest block size (32), so any block size fits;
        // the running sums kept per block too (kernels/tunnel.cu: the zone adds its step to
        // its block's, and only a telemetry step's latch totals them), grown keeping those
        // summed so far.
        let blocks = self.n.div_ceil(32).max(1);
        let bytes = blocks * WORDS * 8;
        if self.a.tunnel_part.as_ref().is_none_or(|p| p.len() < bytes) {
            self.a.tunnel_part = Some(alloc(dev, bytes, "allocating the tunnel's sums")?);
        }
        if self.a.tunnel_sum.as_ref().is_none_or(|s| s.len() < bytes) {
            let mut grown = alloc(dev, bytes, "allocating the tunnel's sums")?;
            if let Some(old) = self.a.tunnel_sum.as_ref() {
                let mut head = grown.slice_mut(..old.len());
                dev.stream.memcpy_dtod(old, &mut head).map_err(dev_err("keeping the tunnel's sums"))?;
            }
            self.a.tunnel_sum = Some(grown);
            self.a.tunnel_sum_bak = Some(alloc(dev, bytes, "allocating the tunnel's sums")?);
        }
        let slots = self.a.tunnel_sum.as_ref().map_or(0, |s| s.len() / (WORDS * 8));
        self.consts.tunnel_slots = slots as i32;
        self.ensure_tunnel_records(dev)
    }

    /// Grows the tunnel's records with the telemetry records (`ensure_records`).
    pub(super) fn ensure_tunnel_records(&mut self, dev: &Device) -> Result<(), SimError> {
        if self.a.tunnel_sum.is_none() {
            return Ok(());
        }
        let bytes = self.records_cap.max(16) * WORDS * 8;
        if self.a.tunnel_records.as_ref().is_none_or(|r| r.len() < bytes) {
            self.a.tunnel_records = Some(alloc(dev, bytes, "allocating the tunnel's records")?);
        }
        Ok(())
    }

    /// The zone (unless `zone`: the second kick did it, `integrate_second_zone`) closing a
    /// step, and on a telemetry step (`ev`) its latch closing the record, then the thermal
    /// readout's flow bins of the state after the zone (`flow_record_calls`); none without a
    /// tunnel.
    pub(super) fn tunnel_calls(&self, l: &Launcher, ev: bool, zone: bool) -> Vec<Call> {
        if !self.tunnel_on() {
            return Vec::new();
        }
        let blocks = self.n_blocks as i32;
        let zone = if zone { l.plain_call("tunnel_zone", Over::Atoms) } else { None };
        let latch = if ev { l.plain_call("tunnel_latch", Over::Total).map(|c| c.arg(&blocks)) } else { None };
        let thermal = if ev { self.flow_record_calls(l) } else { Vec::new() };
        zone.into_iter().chain(latch).chain(thermal).collect()
    }

    fn copy_tunnel_sum(
        dev: &Device,
        src: &Option<CudaSlice<u8>>,
        dst: &mut Option<CudaSlice<u8>>,
    ) -> Result<(), SimError> {
        if let (Some(s), Some(d)) = (src.as_ref(), dst.as_mut()) {
            dev.stream.memcpy_dtod(s, d).map_err(dev_err("saving the tunnel's sums"))?;
        }
        Ok(())
    }

    /// Keeps a device copy of the running sums (before an advance that may be redone).
    pub(super) fn save_tunnel(&mut self, dev: &Device) -> Result<(), SimError> {
        Self::copy_tunnel_sum(dev, &self.a.tunnel_sum, &mut self.a.tunnel_sum_bak)
    }

    /// Puts back the sums kept by [`Engine::save_tunnel`].
    pub(super) fn restore_tunnel(&mut self, dev: &Device) -> Result<(), SimError> {
        Self::copy_tunnel_sum(dev, &self.a.tunnel_sum_bak, &mut self.a.tunnel_sum)
    }

    /// Forgets the steps summed so far (after a rollback).
    pub(super) fn clear_tunnel(&mut self, dev: &Device) -> Result<(), SimError> {
        if let Some(s) = self.a.tunnel_sum.as_mut() {
            dev.stream.memset_zeros(s).map_err(dev_err("zeroing the tunnel's sums"))?;
        }
        Ok(())
    }

    /// What the zone gave the atoms over the steps of each of the first `count` records of
    /// this advance (zero without a tunnel).
    pub(super) fn tunnel_records(&self, dev: &Device, count: usize) -> Result<Vec<ZoneSums>, SimError> {
        if self.a.tunnel_records.is_none() || count == 0 {
            return Ok(vec![ZoneSums::default(); count]);
        }
        let raw = download(dev, &self.a.tunnel_records, count * WORDS * 8, "reading the tunnel's records")?;
        Ok(unpack(&raw, 8).chunks_exact(WORDS).map(|r| ZoneSums { momentum: [r[0], r[1], r[2]], heat: r[3] }).collect())
    }
}
