//! Copies from the device to the host (and to other device buffers) that leave the state
//! as it is: snapshots in canonical order, forces, histogram counts for the analysis, and
//! the render positions (`publish`).
//!
//! Owns nothing but the position staging buffer; it must not change the atoms' state, step
//! or time (the first upload is `arrays::upload_state`, rollback is `checkpoint`).

use cudarc::driver::DevicePtr;

use super::Engine;
use super::arrays::{alloc, dev_err, download, real_sizes, unpack};
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::Launcher;
use crate::sim::{AtomState, SimError, Snapshot};

/// Atoms in canonical order from raw device arrays: `n` positions and velocities of `s`-byte
/// reals (x, y, z, type / 0) and their u32 canonical ids.
pub(super) fn canonical(n: usize, s: usize, pos: &[u8], vel: &[u8], ids: &[u8]) -> AtomState {
    let (pos, vel) = (unpack(pos, s), unpack(vel, s));
    let mut atoms = AtomState {
        positions: vec![[0.0; 3]; n],
        velocities: vec![[0.0; 3]; n],
        types: vec![0; n],
        ..Default::default()
    };
    for (k, id) in ids.chunks_exact(4).enumerate().take(n) {
        let i = u32::from_le_bytes([id[0], id[1], id[2], id[3]]) as usize;
        atoms.positions[i] = [pos[4 * k], pos[4 * k + 1], pos[4 * k + 2]];
        atoms.velocities[i] = [vel[4 * k], vel[4 * k + 1], vel[4 * k + 2]];
        atoms.types[i] = pos[4 * k + 3] as u32;
    }
    atoms
}

impl Engine {
    /// Atoms of each of `n_species` species (only the positions, which carry the species,
    /// are read back).
    pub fn species_counts(&self, dev: &Device, n_species: usize) -> Result<Vec<usize>, SimError> {
        let (s, _) = real_sizes(self.precision);
        let pos = unpack(&download(dev, &self.a.pos, self.n * 4 * s, "reading positions")?, s);
        let mut counts = vec![0usize; n_species];
        for p in pos.chunks_exact(4) {
            if let Some(c) = counts.get_mut(p[3] as usize) {
                *c += 1;
            }
        }
        Ok(counts)
    }

    fn ids(&self, dev: &Device) -> Result<Vec<usize>, SimError> {
        let raw = download(dev, &self.a.ids, self.n * 4, "reading atom ids")?;
        Ok(raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize).collect())
    }

    /// Forces at the current positions, canonical order.
    pub fn forces(&mut self, dev: &Device) -> Result<Vec<[f64; 3]>, SimError> {
        self.set_clock(dev, self.step)?;
        self.queue_lists(dev)?;
        self.launch_forces(&self.launcher(dev), super::steps::Mode::NoEv)?;
        self.forces_valid = true;
        let (_, f) = real_sizes(self.precision);
        let raw = unpack(&download(dev, &self.a.force, self.n * 4 * f, "reading forces")?, f);
        let ids = self.ids(dev)?;
        let mut out = vec![[0.0; 3]; self.n];
        for (s, &i) in ids.iter().enumerate() {
            out[i] = [raw[4 * s], raw[4 * s + 1], raw[4 * s + 2]];
        }
        Ok(out)
    }

    pub fn snapshot(&self, dev: &Device) -> Result<Snapshot, SimError> {
        let (s, _) = real_sizes(self.precision);
        let pos = download(dev, &self.a.pos, self.n * 4 * s, "reading positions")?;
        let vel = download(dev, &self.a.vel, self.n * 4 * s, "reading velocities")?;
        let ids = download(dev, &self.a.ids, self.n * 4, "reading atom ids")?;
        let mut atoms = canonical(self.n, s, &pos, &vel, &ids);
        atoms.dye = self.download_dye(dev)?;
        let piston = self.piston_state(dev)?;
        Ok(Snapshot { sim_box: self.sim_box, atoms, step: self.step, time: self.time, piston })
    }

    /// Runs a histogram kernel into a fresh counter array and returns the counts.
    fn histogram(
        &mut self,
        dev: &Device,
        bins: usize,
        run: impl Fn(&Launcher) -> Result<(), SimError>,
    ) -> Result<Vec<u64>, SimError> {
        let hist = alloc(dev, bins * 8, "allocating a histogram")?;
        let mut b = self.bufs;
        b.hist = hist.device_ptr(&dev.stream).0;
        run(&Launcher { stream: &dev.stream, module: &self.module, c: &self.consts, b: &b })?;
        let raw = download(dev, &Some(hist), bins * 8, "reading a histogram")?;
        Ok(raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
    }

    pub fn speed_counts(&mut self, dev: &Device, bins: usize, v_max: f64) -> Result<Vec<u64>, SimError> {
        self.histogram(dev, bins, |l| l.hist_speed(v_max, bins as i32))
    }

    pub fn height_counts(&mut self, dev: &Device, bins: usize) -> Result<Vec<u64>, SimError> {
        self.histogram(dev, bins, |l| l.hist_height(bins as i32))
    }

    /// Writes float4 (x, y, z, colour) per atom in canonical order to the device address `out`.
    pub fn publish(&self, dev: &Device, out: u64, colour: i32) -> Result<(), SimError> {
        let mut b = self.bufs;
        b.out = out;
        Launcher { stream: &dev.stream, module: &self.module, c: &self.consts, b: &b }.publish(colour, self.dye_ptr())
    }

    /// Publishes into host memory through a temporary device buffer.
    pub fn publish_to_host(&mut self, dev: &Device, out: &mut [[f32; 4]], colour: i32) -> Result<(), SimError> {
        let bytes = self.n * 16;
        if bytes == 0 {
            return Ok(());
        }
        if self.staging.as_ref().is_none_or(|s| s.len() < bytes) {
            self.staging = None;
            self.staging = Some(alloc(dev, bytes, "allocating the position buffer")?);
        }
        let staging = self.staging.as_ref().expect("allocated above");
        self.publish(dev, staging.device_ptr(&dev.stream).0, colour)?;
        let host: &mut [u8] = bytemuck::cast_slice_mut(&mut out[..self.n]);
        dev.stream.memcpy_dtoh(&staging.slice(0..bytes), host).map_err(dev_err("reading positions"))?;
        dev.stream.synchronize().map_err(dev_err("reading positions"))?;
        Ok(())
    }
}
