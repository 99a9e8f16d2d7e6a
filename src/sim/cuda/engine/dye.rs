//! Dye tags on the CUDA device (issue 47; `kernels/dye.cu`): one u16 per atom by canonical
//! index (`dye[ids[slot]]`), so the re-sorting never touches them and they follow their atoms
//! as `ids` does; allocated only while the state has a dye column or rakes. `dye_step` (the
//! rakes, then the tunnel zone's clearing) is a node of every step right after its drift
//! (or, after a tunnel's fused integrator, part of that kernel), only while there are rakes,
//! or a tunnel and tags; its arguments are held by value in the
//! step graphs, so any change empties the graph cache. The tags' place in the overflow backup,
//! the checkpoints (`checkpoint.rs`) and the state read back (`transfer.rs`).

use cudarc::driver::{CudaSlice, DevicePtr};

use super::Engine;
use super::arrays::{alloc, dev_err, upload};
use crate::physics::dye::{Dye, DyeRake};
use crate::sim::SimError;
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::{Call, Launcher, Over};

/// A system's tags on the device and the step's rakes.
pub(super) struct DeviceDye {
    /// One u16 per atom, by canonical index.
    pub(super) tags: CudaSlice<u8>,
    /// The copy an advance with neighbour lists is redone from after a list overflow.
    bak: Option<CudaSlice<u8>>,
    /// 5 f64 per rake (ax, ay, bx, by, tag), while there are rakes.
    rakes: Option<CudaSlice<u8>>,
    n_rakes: i32,
    /// Clear the tags in the tunnel's inflow zone.
    zone: bool,
    /// Device addresses of `tags` and `rakes` (0: none), for the kernel's arguments.
    tags_ptr: u64,
    rakes_ptr: u64,
}

/// Bytes of the tags of `n` atoms.
pub(super) fn tag_bytes(n: usize) -> usize {
    2 * n
}

/// The tags of raw device bytes.
pub(super) fn tags_of(raw: &[u8]) -> Vec<Dye> {
    raw.chunks_exact(2).map(|c| Dye::from_le_bytes([c[0], c[1]])).collect()
}

fn rake_bytes(rakes: &[DyeRake]) -> Vec<u8> {
    rakes.iter().flat_map(|r| [r.a[0], r.a[1], r.b[0], r.b[1], r.tag as f64]).flat_map(|x| x.to_le_bytes()).collect()
}

impl Engine {
    /// Uploads `tags` (canonical order; empty: no dye column).
    pub(super) fn upload_dye(&mut self, dev: &Device, tags: &[Dye]) -> Result<(), SimError> {
        self.dye = None;
        if !tags.is_empty() {
            let bytes: Vec<u8> = tags.iter().flat_map(|d| d.to_le_bytes()).collect();
            let tags = upload(dev, &bytes, "uploading dye tags")?;
            let tags_ptr = tags.device_ptr(&dev.stream).0;
            self.dye =
                Some(DeviceDye { tags, bak: None, rakes: None, n_rakes: 0, zone: false, tags_ptr, rakes_ptr: 0 });
        }
        self.graphs.clear();
        Ok(())
    }

    /// Whether the state has a dye column on the device.
    pub fn has_dye(&self) -> bool {
        self.dye.is_some()
    }

    /// Runs `rakes` after every drift, and with `tunnel` clears the tags in its inflow zone;
    /// rakes make the dye column (all untagged) where there is none.
    pub fn set_dye(&mut self, dev: &Device, rakes: &[DyeRake], tunnel: bool) -> Result<(), SimError> {
        if !rakes.is_empty() && self.dye.is_none() {
            self.upload_dye(dev, &vec![0; self.n])?;
        }
        self.graphs.clear();
        let Some(d) = self.dye.as_mut() else { return Ok(()) };
        d.rakes = match rakes.is_empty() {
            true => None,
            false => Some(upload(dev, &rake_bytes(rakes), "uploading dye rakes")?),
        };
        d.rakes_ptr = d.rakes.as_ref().map_or(0, |r| r.device_ptr(&dev.stream).0);
        d.n_rakes = rakes.len() as i32;
        d.zone = tunnel;
        Ok(())
    }

    /// `dye_step`'s dye arguments (tags, rakes, rake count, the zone's clearing on) while it
    /// has something to do: rakes, or a tunnel and tags.
    fn dye_args(&self) -> Option<(u64, u64, i32, i32)> {
        let d = self.dye.as_ref().filter(|d| d.n_rakes > 0 || d.zone)?;
        Some((d.tags_ptr, d.rakes_ptr, d.n_rakes, i32::from(d.zone)))
    }

    /// `dye_step` after a drift, on the positions `l` reads; None while it has nothing to do.
    pub(super) fn dye_call(&self, l: &Launcher) -> Option<Call> {
        let (tags, rakes, n_rakes, zone) = self.dye_args()?;
        let call = l.plain_call("dye_step", Over::Atoms)?;
        Some(call.arg(&tags).arg(&rakes).arg(&n_rakes).arg(&zone).arg(&crate::sim::RUNAWAY_STEP))
    }

    /// The tunnel's fused integrator (`integrate_fused_zone`, kernels/tunnel.cu), which does
    /// dye_step's work for each drifted atom when there is a dye step (null tags otherwise);
    /// with `bodies` its first block also latches the body forces.
    pub(super) fn fused_zone_call(&self, l: &Launcher, track: i32, bodies: bool) -> Option<Call> {
        let (tags, rakes, n_rakes, zone) = self.dye_args().unwrap_or((0, 0, 0, 0));
        let call = l.plain_call("integrate_fused_zone", Over::Atoms)?;
        let call = call.arg(&track).arg(&i32::from(bodies));
        Some(call.arg(&tags).arg(&rakes).arg(&n_rakes).arg(&zone).arg(&crate::sim::RUNAWAY_STEP))
    }

    /// The tags in canonical order (empty without a dye column).
    pub(super) fn download_dye(&self, dev: &Device) -> Result<Vec<Dye>, SimError> {
        match &self.dye {
            None => Ok(Vec::new()),
            Some(d) => {
                let raw = dev.stream.clone_dtoh(&d.tags).map_err(dev_err("reading dye tags"))?;
                Ok(tags_of(&raw[..tag_bytes(self.n)]))
            }
        }
    }

    /// A device copy of the tags (a checkpoint's), reusing `old` when it fits.
    pub(super) fn copy_dye(&self, dev: &Device, old: Option<CudaSlice<u8>>) -> Result<Option<CudaSlice<u8>>, SimError> {
        let Some(d) = &self.dye else { return Ok(None) };
        let mut dst = match old {
            Some(o) if o.len() == d.tags.len() => o,
            _ => alloc(dev, d.tags.len(), "allocating a checkpoint")?,
        };
        dev.stream.memcpy_dtod(&d.tags, &mut dst).map_err(dev_err("taking a checkpoint"))?;
        Ok(Some(dst))
    }

    /// Back to a checkpoint's tags (`None`: it had none, so all untagged).
    pub(super) fn restore_dye(&mut self, dev: &Device, from: Option<&CudaSlice<u8>>) -> Result<(), SimError> {
        let Some(d) = self.dye.as_mut() else { return Ok(()) };
        match from {
            Some(src) => dev.stream.memcpy_dtod(src, &mut d.tags).map_err(dev_err("rolling back dye tags")),
            None => dev.stream.memset_zeros(&mut d.tags).map_err(dev_err("rolling back dye tags")),
        }
    }

    /// Copies the tags into the overflow backup (`restore`: back from it).
    pub(super) fn backup_dye(&mut self, dev: &Device, restore: bool) -> Result<(), SimError> {
        let Some(d) = self.dye.as_mut() else { return Ok(()) };
        if restore {
            if let Some(b) = &d.bak {
                dev.stream.memcpy_dtod(b, &mut d.tags).map_err(dev_err("restoring a backup"))?;
            }
            return Ok(());
        }
        if d.bak.as_ref().map(|b| b.len()) != Some(d.tags.len()) {
            d.bak = Some(alloc(dev, d.tags.len(), "allocating a backup")?);
        }
        if let Some(b) = d.bak.as_mut() {
            dev.stream.memcpy_dtod(&d.tags, b).map_err(dev_err("taking a backup"))?;
        }
        Ok(())
    }

    /// The tags' device address for the publish kernel (0: none).
    pub(super) fn dye_ptr(&self) -> u64 {
        self.dye.as_ref().map_or(0, |d| d.tags_ptr)
    }

    /// Device bytes of the tags, their backup and the rakes.
    pub(super) fn dye_bytes(&self) -> usize {
        self.dye.as_ref().map_or(0, |d| {
            d.tags.len() + d.bak.as_ref().map_or(0, |b| b.len()) + d.rakes.as_ref().map_or(0, |r| r.len())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rakes_are_five_doubles_and_tags_two_bytes() {
        let b = rake_bytes(&[DyeRake { a: [1.0, 2.0], b: [3.0, 4.0], tag: 7 }]);
        assert_eq!(b.len(), 40);
        assert_eq!(f64::from_le_bytes(b[32..40].try_into().unwrap()), 7.0);
        assert_eq!(tags_of(&[1, 0, 255, 255]), vec![1, 65535]);
    }
}
