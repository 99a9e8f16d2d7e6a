//! Saved device copies of the state and the way back to them: the backup taken at the start
//! of an advance with neighbour lists (redone from after a list overflow) and the rollback
//! checkpoints `CudaBackend` keeps to recover from a blow-up.
//!
//! Owns `DeviceCheckpoint` and the `*_bak` arrays' contents; it does not allocate the
//! state arrays (`arrays`) nor decide when to roll back (`advance`, `CudaBackend`).

use cudarc::driver::CudaSlice;

use super::arrays::{Slot, alloc, dev_err, real_sizes, upload};
use super::transfer::canonical;
use super::{Engine, piston_bytes};
use crate::physics::piston::PistonState;
use crate::physics::real::Precision;
use crate::sim::cuda::consts::flag;
use crate::sim::cuda::device::Device;
use crate::sim::{SimError, Snapshot};

/// Device copies of positions, velocities and ids at one step (a rollback point).
pub struct DeviceCheckpoint {
    pos: CudaSlice<u8>,
    vel: CudaSlice<u8>,
    ids: CudaSlice<u8>,
    pub n: usize,
    pub precision: Precision,
    pub step: u64,
    pub time: f64,
    /// The piston's height and velocity then.
    piston: Option<PistonState>,
    /// The dye tags then (by canonical index), when the state had a dye column.
    dye: Option<CudaSlice<u8>>,
}

impl DeviceCheckpoint {
    /// Device bytes this checkpoint holds.
    pub fn bytes(&self) -> usize {
        self.pos.len() + self.vel.len() + self.ids.len() + self.dye.as_ref().map_or(0, |d| d.len())
    }

    /// Whether the state then had a dye column.
    pub fn has_dye(&self) -> bool {
        self.dye.is_some()
    }
}

impl Engine {
    pub(super) fn backup(&mut self, dev: &Device) -> Result<(), SimError> {
        let pairs: [(&Slot, &mut Slot); 5] = [
            (&self.a.pos, &mut self.a.pos_bak),
            (&self.a.vel, &mut self.a.vel_bak),
            (&self.a.ids, &mut self.a.ids_bak),
            (&self.a.force, &mut self.a.force_bak),
            (&self.a.piston, &mut self.a.piston_bak),
        ];
        for (src, dst) in pairs {
            if let Some(src) = src {
                if dst.as_ref().map(|d| d.len()) != Some(src.len()) {
                    *dst = Some(alloc(dev, src.len(), "allocating a backup")?);
                }
                if let Some(d) = dst.as_mut() {
                    dev.stream.memcpy_dtod(src, d).map_err(dev_err("taking a backup"))?;
                }
            }
        }
        Ok(())
    }

    pub(super) fn restore_backup(&mut self, dev: &Device) -> Result<(), SimError> {
        let pairs: [(&Slot, &mut Slot); 5] = [
            (&self.a.pos_bak, &mut self.a.pos),
            (&self.a.vel_bak, &mut self.a.vel),
            (&self.a.ids_bak, &mut self.a.ids),
            (&self.a.force_bak, &mut self.a.force),
            (&self.a.piston_bak, &mut self.a.piston),
        ];
        for (src, dst) in pairs {
            if let (Some(s), Some(d)) = (src, dst.as_mut()) {
                dev.stream.memcpy_dtod(s, d).map_err(dev_err("restoring a backup"))?;
            }
        }
        Ok(())
    }

    /// Device copies of the state for rolling back after a blow-up (reusing `reuse`'s buffers
    /// when they fit).
    pub fn checkpoint(&self, dev: &Device, reuse: Option<DeviceCheckpoint>) -> Result<DeviceCheckpoint, SimError> {
        let copy = |src: &Slot, old: Option<CudaSlice<u8>>| -> Result<CudaSlice<u8>, SimError> {
            let src = src.as_ref().ok_or_else(|| SimError::Device("there is no state to checkpoint".into()))?;
            let mut dst = match old {
                Some(d) if d.len() == src.len() => d,
                _ => alloc(dev, src.len(), "allocating a checkpoint")?,
            };
            dev.stream.memcpy_dtod(src, &mut dst).map_err(dev_err("taking a checkpoint"))?;
            Ok(dst)
        };
        let (pos, vel, ids, dye) = match reuse {
            Some(c) => (Some(c.pos), Some(c.vel), Some(c.ids), c.dye),
            None => (None, None, None, None),
        };
        Ok(DeviceCheckpoint {
            pos: copy(&self.a.pos, pos)?,
            vel: copy(&self.a.vel, vel)?,
            ids: copy(&self.a.ids, ids)?,
            n: self.n,
            precision: self.precision,
            step: self.step,
            time: self.time,
            piston: self.piston_state(dev)?,
            dye: self.copy_dye(dev, dye)?,
        })
    }

    /// Returns to `cp` (same atom count and precision, and a dye column here where it had
    /// one: `CudaBackend::rollback` checks): state, step and time; the blow-up
    /// flags are cleared and the lists rebuilt.
    pub fn roll_back_to(&mut self, dev: &Device, cp: &DeviceCheckpoint) -> Result<(), SimError> {
        for (src, dst) in [(&cp.pos, &mut self.a.pos), (&cp.vel, &mut self.a.vel), (&cp.ids, &mut self.a.ids)] {
            if let Some(d) = dst.as_mut() {
                dev.stream.memcpy_dtod(src, d).map_err(dev_err("rolling back"))?;
            }
        }
        self.restore_dye(dev, cp.dye.as_ref())?;
        self.sync_posf(dev)?;
        for (f, v) in [(flag::BLOWUP, 0), (flag::ESCAPE, 0), (flag::OVERFLOW, 0), (flag::REBUILD as usize, 1)] {
            self.write_flag(dev, f, v)?;
        }
        self.a.blowup_step = Some(upload(dev, &u64::MAX.to_le_bytes(), "resetting flags")?);
        self.refresh_bufs(dev);
        self.step = cp.step;
        self.time = cp.time;
        if let (Some(p), Some(s)) = (self.a.piston.as_mut(), cp.piston) {
            let bytes = piston_bytes(s);
            dev.stream.memcpy_htod(&bytes[..], p).map_err(dev_err("rolling back the piston"))?;
        }
        self.clear_bodies(dev)?;
        self.clear_tunnel(dev)?;
        self.forces_valid = false;
        Ok(())
    }

    /// The state held by checkpoint `cp` (of any atom count or precision), read back.
    pub fn checkpoint_state(&self, dev: &Device, cp: &DeviceCheckpoint) -> Result<Snapshot, SimError> {
        let (s, _) = real_sizes(cp.precision);
        let read = |c: &CudaSlice<u8>| dev.stream.clone_dtoh(c).map_err(dev_err("reading a checkpoint"));
        let mut atoms = canonical(cp.n, s, &read(&cp.pos)?, &read(&cp.vel)?, &read(&cp.ids)?);
        if let Some(d) = &cp.dye {
            atoms.dye = super::dye::tags_of(&read(d)?[..super::dye::tag_bytes(cp.n)]);
        }
        Ok(Snapshot { sim_box: self.sim_box, atoms, step: cp.step, time: cp.time, piston: cp.piston })
    }
}
