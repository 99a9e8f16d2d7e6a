//! Reading a system back and keeping it: the state in device order (`DeviceState`, put in
//! canonical order by id), device checkpoints and rollback, and `read_back`, the one way bytes
//! come from the device (copied into mappable buffers after the given command encoder, waited
//! for, with wgpu's reported errors turned into `SimError`s).

use super::{Engine, storage};
use crate::sim::{AtomState, SimError};

/// Device copies of positions, velocities and ids at one step (a rollback point).
pub struct DeviceCheckpoint {
    pos: wgpu::Buffer,
    vel: wgpu::Buffer,
    ids: wgpu::Buffer,
    pub n: usize,
    pub step: u64,
    pub time: f64,
}

impl Engine {
    /// Positions (with types), velocities, forces and ids in the device's order.
    pub fn read_state(&mut self, with_forces: bool) -> Result<DeviceState, SimError> {
        if with_forces && !self.forces_valid {
            self.measure()?;
        }
        let n = self.n as u64;
        let enc = self.dev.device.create_command_encoder(&Default::default());
        let mut wanted = vec![(&self.b.pos, n * 16), (&self.b.vel, n * 16), (&self.b.ids, n * 4)];
        if with_forces {
            wanted.push((&self.b.force, n * 16));
        }
        let raw = self.read_back(enc, &wanted)?;
        Ok(DeviceState {
            pos: bytemuck::pod_collect_to_vec(&raw[0]),
            vel: bytemuck::pod_collect_to_vec(&raw[1]),
            ids: bytemuck::pod_collect_to_vec(&raw[2]),
            force: raw.get(3).map(|f| bytemuck::pod_collect_to_vec(f)).unwrap_or_default(),
        })
    }

    /// Device copies of the state (a rollback point).
    pub fn checkpoint(&self) -> DeviceCheckpoint {
        let n = self.n as u64;
        let mut enc = self.dev.device.create_command_encoder(&Default::default());
        let copy = |enc: &mut wgpu::CommandEncoder, src: &wgpu::Buffer, bytes: u64, label| {
            let dst = storage(&self.dev, label, bytes);
            enc.copy_buffer_to_buffer(src, 0, &dst, 0, dst.size().min(src.size()));
            dst
        };
        let pos = copy(&mut enc, &self.b.pos, n * 16, "checkpoint pos");
        let vel = copy(&mut enc, &self.b.vel, n * 16, "checkpoint vel");
        let ids = copy(&mut enc, &self.b.ids, n * 4, "checkpoint ids");
        self.dev.queue.submit([enc.finish()]);
        DeviceCheckpoint { pos, vel, ids, n: self.n, step: self.step, time: self.time }
    }

    /// Back to `c` when it has this system's atom count (true); false leaves the state alone.
    pub fn restore_checkpoint(&mut self, c: &DeviceCheckpoint) -> bool {
        if c.n != self.n {
            return false;
        }
        let mut enc = self.dev.device.create_command_encoder(&Default::default());
        for (src, dst) in [(&c.pos, &self.b.pos), (&c.vel, &self.b.vel), (&c.ids, &self.b.ids)] {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size().min(dst.size()));
        }
        self.dev.queue.write_buffer(&self.b.lambda, 0, bytemuck::bytes_of(&1.0f32));
        self.flow_clear();
        self.dev.queue.submit([enc.finish()]);
        self.step = c.step;
        self.time = c.time;
        self.forces_valid = false;
        true
    }

    /// A checkpoint's state read back (for one with another atom count than the system now).
    pub fn read_checkpoint(&self, c: &DeviceCheckpoint) -> Result<DeviceState, SimError> {
        let n = c.n as u64;
        let enc = self.dev.device.create_command_encoder(&Default::default());
        let raw = self.read_back(enc, &[(&c.pos, n * 16), (&c.vel, n * 16), (&c.ids, n * 4)])?;
        Ok(DeviceState {
            pos: bytemuck::pod_collect_to_vec(&raw[0]),
            vel: bytemuck::pod_collect_to_vec(&raw[1]),
            ids: bytemuck::pod_collect_to_vec(&raw[2]),
            force: Vec::new(),
        })
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

/// A system's arrays as the device holds them (device order; `ids` gives each slot's atom).
pub struct DeviceState {
    pub pos: Vec<[f32; 4]>,
    pub vel: Vec<[f32; 4]>,
    pub ids: Vec<u32>,
    pub force: Vec<[f32; 4]>,
}

impl DeviceState {
    /// The atoms in canonical order (by id).
    pub fn atoms(&self) -> AtomState {
        let n = self.ids.len();
        let mut a = AtomState { positions: vec![[0.0; 3]; n], velocities: vec![[0.0; 3]; n], types: vec![0; n] };
        for (slot, &id) in self.ids.iter().enumerate() {
            let (p, v, i) = (self.pos[slot], self.vel[slot], id as usize);
            a.positions[i] = [p[0] as f64, p[1] as f64, p[2] as f64];
            a.velocities[i] = [v[0] as f64, v[1] as f64, v[2] as f64];
            a.types[i] = p[3].to_bits();
        }
        a
    }

    /// Forces in canonical order.
    pub fn forces(&self) -> Vec<[f64; 3]> {
        let mut out = vec![[0.0; 3]; self.ids.len()];
        for (slot, &id) in self.ids.iter().enumerate() {
            let f = self.force[slot];
            out[id as usize] = [f[0] as f64, f[1] as f64, f[2] as f64];
        }
        out
    }
}
