//! What the step kernels report back: telemetry records (one per telemetry step, written by
//! `finish_step`) turned into `Telemetry`, `measure` for the current state, the thermal
//! readout's flow bins on a record's final state where the thermostat's are not it
//! (`flow_record_calls`), and the status flag words (list rebuild request, blow-up, escape,
//! list overflow) read and written from the host.
//!
//! Owns the records array's size and the record and flag layouts on the host side; it
//! does not act on the flags (`advance` does) nor change the atoms' state.

use super::Engine;
use super::arrays::{alloc, dev_err, download, unpack};
use crate::physics::piston::{PistonState, PistonTelemetry};
use crate::sim::cuda::consts::flag;
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::{Call, Launcher, Over};
use crate::sim::{SimError, Telemetry, ThermalTelemetry};

/// Doubles in one telemetry record (`RECORD_WORDS` in kernels/common.cuh, written by
/// `finish_step`): step, 2 KE, pair E and W, external E and W, momentum, the piston's
/// velocity, height and push, then the thermal readout's sum_b |P_b|^2 / M_b and occupied bins.
const RECORD_WORDS: usize = 14;
/// Bytes of one telemetry record.
pub(super) const RECORD_BYTES: usize = RECORD_WORDS * 8;

impl Engine {
    pub(super) fn ensure_records(&mut self, dev: &Device, count: usize) -> Result<(), SimError> {
        if count > self.records_cap || self.a.records.is_none() {
            let cap = count.max(16);
            self.a.records = Some(alloc(dev, cap * RECORD_BYTES, "allocating telemetry records")?);
            self.records_cap = cap;
            self.ensure_body_records(dev)?;
            self.ensure_tunnel_records(dev)?;
            self.refresh_bufs(dev);
        }
        Ok(())
    }

    pub(super) fn records_to_telemetry(&self, raw: &[f64], count: usize, dof: f64) -> Vec<Telemetry> {
        (0..count)
            .map(|k| {
                let r = &raw[RECORD_WORDS * k..RECORD_WORDS * (k + 1)];
                // With a piston: its height and push at the record's step (integrate.cu).
                let piston = self.piston.as_ref().map(|p| {
                    let s = PistonState { height: r[10], velocity: r[9] };
                    PistonTelemetry::new(&s, p, &self.sim_box, r[11])
                });
                let volume = piston.map_or(self.sim_box.volume(), |p| p.volume);
                Telemetry {
                    piston,
                    thermal: self
                        .thermal_on()
                        .then(|| ThermalTelemetry::from_sums(r[1], r[12], self.n, r[13].max(0.0) as usize)),
                    ..Telemetry::from_sums(r[0] as u64, self.n, dof, volume, &r[1..9])
                }
            })
            .collect()
    }

    /// Whether telemetry reports the thermal temperature relative to the flow
    /// (`SimParams::thermal_readout`; `configure` gives the constants their flow bins then).
    fn thermal_on(&self) -> bool {
        self.consts.flow_bins > 0
    }

    /// The thermal readout's flow bins on the current state (`kernels/flow_profile.cu`), their
    /// sums copied into the record written last: on a telemetry step whose final velocities
    /// are not those `finish_step`'s bins saw (after the tunnel's zone) and in a `measure`.
    /// None without the readout. They only write the bins and the record: the trajectory
    /// is the same with them or without.
    pub(super) fn flow_record_calls(&self, l: &Launcher) -> Vec<Call> {
        if !self.thermal_on() {
            return Vec::new();
        }
        [
            l.plain_call("flow_bins_clear", Over::FlowBins),
            l.flow_bins_sum_call(),
            l.plain_call("flow_bins_reduce", Over::Single),
            l.plain_call("flow_bins_record", Over::Single),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Telemetry of the current state (forces recomputed with energies).
    pub fn measure(&mut self, dev: &Device, dof: f64) -> Result<Telemetry, SimError> {
        self.ensure_records(dev, 1)?;
        self.set_clock(dev, self.step)?;
        self.queue_lists(dev)?;
        let l = self.launcher(dev);
        self.launch_forces(&l, super::steps::Mode::Ev)?;
        l.run(l.integrate_second_call(0, -1))?;
        l.run(Some(l.finish_step_call(self.n_blocks as i32, self.ev_blocks(), 1, 0)))?;
        for c in self.flow_record_calls(&l) {
            c.launch(&dev.stream)?;
        }
        let raw = download(dev, &self.a.records, RECORD_BYTES, "reading telemetry")?;
        self.forces_valid = true;
        let mut t = self.records_to_telemetry(&unpack(&raw, 8), 1, dof).remove(0);
        t.time = self.time;
        if self.n == 0 {
            t = Telemetry { step: self.step, time: self.time, dof, ..Telemetry::default() };
        }
        Ok(t)
    }

    pub(super) fn read_flags(&self, dev: &Device) -> Result<([i32; flag::COUNT], u64), SimError> {
        let f = download(dev, &self.a.flags, flag::COUNT * 4, "reading flags")?;
        let mut flags = [0i32; flag::COUNT];
        for (k, c) in f.chunks_exact(4).enumerate() {
            flags[k] = i32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let s = download(dev, &self.a.blowup_step, 8, "reading flags")?;
        Ok((flags, u64::from_le_bytes(s.try_into().expect("8 bytes"))))
    }

    pub(super) fn write_flag(&mut self, dev: &Device, index: usize, value: i32) -> Result<(), SimError> {
        if let Some(f) = self.a.flags.as_mut() {
            let mut v = f.slice_mut(index * 4..index * 4 + 4);
            dev.stream.memcpy_htod(&value.to_le_bytes()[..], &mut v).map_err(dev_err("writing a flag"))?;
        }
        Ok(())
    }

    pub(super) fn request_rebuild(&mut self, dev: &Device) -> Result<(), SimError> {
        if let Some(f) = self.a.flags.as_mut() {
            let one = 1i32.to_le_bytes();
            let mut v = f.slice_mut(0..4);
            dev.stream.memcpy_htod(&one[..], &mut v).map_err(dev_err("requesting a list rebuild"))?;
        }
        Ok(())
    }
}
