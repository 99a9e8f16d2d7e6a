//! Reading a system back and keeping it: the state in device order (`DeviceState`, put in
//! canonical order by id), device checkpoints and rollback, and `read_back`, the one way bytes
//! come from the device (copied into mappable buffers after the given command encoder, waited
//! for, with wgpu's reported errors turned into `SimError`s).

use super::super::layout::{force_bytes, state_bytes};
use super::state::state_bytes_of;
use super::{DeviceState, Engine, dye, storage};
use crate::physics::real::Precision;
use crate::sim::SimError;

/// Device copies of positions, velocities and ids at one step (a rollback point), and in
/// mixed the f32 positions the forces read.
pub struct DeviceCheckpoint {
    pos: wgpu::Buffer,
    vel: wgpu::Buffer,
    ids: wgpu::Buffer,
    posf: Option<wgpu::Buffer>,
    /// The dye tag words (by canonical index), when the state had a dye column.
    dye: Option<wgpu::Buffer>,
    /// The precision the copies are in.
    pub precision: Precision,
    pub n: usize,
    pub step: u64,
    pub time: f64,
}

impl DeviceCheckpoint {
    /// Device bytes of the copies.
    pub fn bytes(&self) -> usize {
        [Some(&self.pos), Some(&self.vel), Some(&self.ids), self.posf.as_ref(), self.dye.as_ref()]
            .iter()
            .flatten()
            .map(|b| b.size() as usize)
            .sum()
    }
}

impl Engine {
    /// Bytes of `n` atoms' `vec4<real_s>` (positions, velocities) and `vec4<real_f>` (forces).
    pub(super) fn vec_bytes(&self, n: usize) -> (u64, u64) {
        (n as u64 * 4 * state_bytes(self.precision), n as u64 * 4 * force_bytes(self.precision))
    }

    /// Positions (with types), velocities, forces and ids in the device's order.
    pub fn read_state(&mut self, with_forces: bool) -> Result<DeviceState, SimError> {
        if with_forces && !self.forces_valid {
            self.measure()?;
        }
        let (vs, vf) = self.vec_bytes(self.n);
        let enc = self.dev.device.create_command_encoder(&Default::default());
        let mut wanted = vec![(&self.b.pos, vs), (&self.b.vel, vs), (&self.b.ids, self.n as u64 * 4)];
        if with_forces {
            wanted.push((&self.b.force, vf));
        }
        if let Some(words) = self.dye_words() {
            wanted.push((words, self.dye_word_bytes()));
        }
        let mut raw = self.read_back(enc, &wanted)?;
        let dye = self.dye_words().and_then(|_| raw.pop()).map(|w| dye::unpack(&w, self.n)).unwrap_or_default();
        let force = raw.get(3).map_or(&[][..], |f| &f[..]);
        Ok(DeviceState { dye, ..DeviceState::parse(&raw[0], &raw[1], &raw[2], force, self.precision) })
    }

    /// Device copies of the state (a rollback point).
    pub fn checkpoint(&self) -> DeviceCheckpoint {
        let (vs, _) = self.vec_bytes(self.n);
        let mut enc = self.dev.device.create_command_encoder(&Default::default());
        let copy = |enc: &mut wgpu::CommandEncoder, src: &wgpu::Buffer, bytes: u64, label| {
            let dst = storage(&self.dev, label, bytes);
            enc.copy_buffer_to_buffer(src, 0, &dst, 0, dst.size().min(src.size()));
            dst
        };
        let pos = copy(&mut enc, &self.b.pos, vs, "checkpoint pos");
        let vel = copy(&mut enc, &self.b.vel, vs, "checkpoint vel");
        let ids = copy(&mut enc, &self.b.ids, self.n as u64 * 4, "checkpoint ids");
        let posf = self.b.posf.as_ref().map(|p| copy(&mut enc, p, self.n as u64 * 16, "checkpoint posf"));
        let dye = self.dye_words().map(|w| copy(&mut enc, w, self.dye_word_bytes(), "checkpoint dye"));
        self.dev.queue.submit([enc.finish()]);
        DeviceCheckpoint {
            pos,
            vel,
            ids,
            posf,
            dye,
            precision: self.precision,
            n: self.n,
            step: self.step,
            time: self.time,
        }
    }

    /// Back to `c` when it has this system's atom count and precision (true); false leaves the
    /// state alone.
    pub fn restore_checkpoint(&mut self, c: &DeviceCheckpoint) -> bool {
        // A checkpoint with tags needs the dye column here (else through the host).
        if c.n != self.n || c.precision != self.precision || (c.dye.is_some() && !self.has_dye()) {
            return false;
        }
        let mut enc = self.dev.device.create_command_encoder(&Default::default());
        let mut copies = vec![(&c.pos, &self.b.pos), (&c.vel, &self.b.vel), (&c.ids, &self.b.ids)];
        if let (Some(src), Some(dst)) = (&c.posf, &self.b.posf) {
            copies.push((src, dst));
        }
        match (&c.dye, self.dye_words()) {
            (Some(src), Some(dst)) => copies.push((src, dst)),
            // Rakes made the column after the checkpoint: nothing was tagged then.
            (None, Some(dst)) => enc.clear_buffer(dst, 0, None),
            _ => {}
        }
        for (src, dst) in copies {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size().min(dst.size()));
        }
        self.dev.queue.write_buffer(&self.b.lambda, 0, &state_bytes_of(&[1.0], self.precision));
        self.flow_clear();
        self.dev.queue.submit([enc.finish()]);
        self.step = c.step;
        self.time = c.time;
        self.forces_valid = false;
        true
    }

    /// A checkpoint's state read back (for one with another atom count or precision than the
    /// system now).
    pub fn read_checkpoint(&self, c: &DeviceCheckpoint) -> Result<DeviceState, SimError> {
        let n = c.n as u64;
        let vs = n * 4 * state_bytes(c.precision);
        let enc = self.dev.device.create_command_encoder(&Default::default());
        let mut wanted = vec![(&c.pos, vs), (&c.vel, vs), (&c.ids, n * 4)];
        if let Some(d) = &c.dye {
            wanted.push((d, c.n.div_ceil(2) as u64 * 4));
        }
        let mut raw = self.read_back(enc, &wanted)?;
        let dye = c.dye.as_ref().and_then(|_| raw.pop()).map(|w| dye::unpack(&w, c.n)).unwrap_or_default();
        Ok(DeviceState { dye, ..DeviceState::parse(&raw[0], &raw[1], &raw[2], &[], c.precision) })
    }

    /// Submits `enc` after copying each (buffer, bytes) into a mappable buffer, waits, and
    /// returns the bytes ([`SimDevice::read_back`]).
    pub(super) fn read_back(
        &self,
        enc: wgpu::CommandEncoder,
        what: &[(&wgpu::Buffer, u64)],
    ) -> Result<Vec<Vec<u8>>, SimError> {
        self.dev.read_back(enc, what)
    }
}
