//! Flow-field sums on the device: the open window's per-bin sums (`flow::Accumulator`'s
//! layout, 6 doubles a bin) live in one device array that `fields_sample` adds into at each
//! sampling step; at a window's end they are copied to the host once and zeroed. Nothing
//! crosses PCIe per sample.

use cudarc::driver::{CudaSlice, DevicePtr};

use super::arrays::{alloc, dev_err, download};
use crate::flow::{Grid, STRIDE};
use crate::sim::SimError;
use crate::sim::cuda::consts::FieldGridArgs;
use crate::sim::cuda::device::Device;

/// The device side of a sampled field: the grid as the kernel reads it and the window's sums.
pub struct DeviceFields {
    args: FieldGridArgs,
    bins: usize,
    sums: Option<CudaSlice<u8>>,
    /// The sums at the start of an advance, for a redo after a list overflow.
    saved: Option<CudaSlice<u8>>,
}

impl DeviceFields {
    /// Device bytes of the open window's sums and their saved copy.
    pub fn bytes(&self) -> usize {
        self.sums.as_ref().map_or(0, |s| s.len()) + self.saved.as_ref().map_or(0, |s| s.len())
    }

    /// Zeroed sums for `grid`.
    pub fn new(dev: &Device, grid: &Grid) -> Result<DeviceFields, SimError> {
        let bins = grid.len();
        let sums = alloc(dev, bins * STRIDE * 8, "allocating the flow-field sums")?;
        let saved = alloc(dev, bins * STRIDE * 8, "allocating the flow-field sums")?;
        Ok(DeviceFields { args: FieldGridArgs::new(grid), bins, sums: Some(sums), saved: Some(saved) })
    }

    /// Keeps a device copy of the sums (before an advance that may be redone).
    pub fn save(&mut self, dev: &Device) -> Result<(), SimError> {
        if let (Some(s), Some(d)) = (self.sums.as_ref(), self.saved.as_mut()) {
            dev.stream.memcpy_dtod(s, d).map_err(dev_err("saving the flow-field sums"))?;
        }
        Ok(())
    }

    /// Puts back the sums kept by [`DeviceFields::save`].
    pub fn restore(&mut self, dev: &Device) -> Result<(), SimError> {
        if let (Some(s), Some(d)) = (self.saved.as_ref(), self.sums.as_mut()) {
            dev.stream.memcpy_dtod(s, d).map_err(dev_err("restoring the flow-field sums"))?;
        }
        Ok(())
    }

    /// The window's sums, copied to the host, then zeroed on the device for the next window.
    pub fn take(&mut self, dev: &Device) -> Result<Vec<f64>, SimError> {
        let bytes = self.bins * STRIDE * 8;
        let raw = download(dev, &self.sums, bytes, "reading the flow-field sums")?;
        if let Some(s) = self.sums.as_mut() {
            dev.stream.memset_zeros(s).map_err(dev_err("zeroing the flow-field sums"))?;
        }
        Ok(raw.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
    }

    /// The grid as `fields_sample` takes it.
    pub fn grid_args(&self) -> FieldGridArgs {
        self.args
    }

    /// The device address of the window's sums (0 when none are allocated).
    pub fn sums_ptr(&self, dev: &Device) -> u64 {
        self.sums.as_ref().map(|s| s.device_ptr(&dev.stream).0).unwrap_or(0)
    }
}
