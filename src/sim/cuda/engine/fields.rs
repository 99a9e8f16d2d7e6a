//! Flow-field sums on the device: the open window's per-bin sums (`flow::Accumulator`'s
//! layout, 6 doubles a bin, then the dye channel, one double a bin: the tagged atom-samples)
//! live in one device array that `fields_sample` adds into at each sampling step; at a
//! window's end they are copied to the host once and zeroed. Nothing crosses PCIe per sample. The copy at a window's end is asynchronous, into page-locked
//! buffers that are used again once their window is finished.

use std::sync::mpsc::{Receiver, Sender, channel};

use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr, PinnedHostSlice};

use super::arrays::{alloc, dev_err};
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
    /// Page-locked buffers for the copies back, returned here once their window is finished.
    free_tx: Sender<PinnedHostSlice<u8>>,
    free_rx: Receiver<PinnedHostSlice<u8>>,
}

/// Doubles per bin in the device array: [`STRIDE`] sums, and the tagged count.
const PER_BIN: usize = STRIDE + 1;

/// A window's sums on their way to the host (an asynchronous copy into a page-locked buffer).
pub struct SumsCopy {
    buf: Option<PinnedHostSlice<u8>>,
    /// Recorded on the stream after the copy: the pinned buffer's own event is never recorded,
    /// as the device turns cudarc's event tracking off (`device.rs`), so its reads would not
    /// wait for the copy.
    done: CudaEvent,
    back: Sender<PinnedHostSlice<u8>>,
    bins: usize,
}

impl SumsCopy {
    /// Waits for the copy and reads the sums ([`STRIDE`] a bin) and the tagged atom-samples
    /// (one a bin), then returns the buffer for the next window.
    pub fn wait(mut self) -> Result<(Vec<f64>, Vec<f64>), String> {
        let buf = self.buf.take().ok_or("no buffer")?;
        self.done.synchronize().map_err(|e| format!("waiting for the flow-field sums: {e}"))?;
        let mut data: Vec<f64> = buf
            .as_slice()
            .map_err(|e| format!("reading the flow-field sums: {e}"))?
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let _ = self.back.send(buf);
        let tagged = data.split_off(self.bins * STRIDE);
        Ok((data, tagged))
    }
}

impl DeviceFields {
    /// Device bytes of the open window's sums and their saved copy.
    pub fn bytes(&self) -> usize {
        self.sums.as_ref().map_or(0, |s| s.len()) + self.saved.as_ref().map_or(0, |s| s.len())
    }

    /// Zeroed sums for `grid`.
    pub fn new(dev: &Device, grid: &Grid) -> Result<DeviceFields, SimError> {
        let bins = grid.len();
        let sums = alloc(dev, bins * PER_BIN * 8, "allocating the flow-field sums")?;
        let saved = alloc(dev, bins * PER_BIN * 8, "allocating the flow-field sums")?;
        let (free_tx, free_rx) = channel();
        Ok(DeviceFields {
            args: FieldGridArgs::new(grid),
            bins,
            sums: Some(sums),
            saved: Some(saved),
            free_tx,
            free_rx,
        })
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

    /// Starts copying the window's sums to the host behind the work already queued, and
    /// zeroes them on the device for the next window (also queued): nothing waits here.
    pub fn take_async(&mut self, dev: &Device) -> Result<SumsCopy, SimError> {
        let bytes = self.bins * PER_BIN * 8;
        let mut buf = match self.free_rx.try_recv() {
            Ok(b) => b,
            // Not write-combined: the host reads these.
            Err(_) => unsafe { dev.ctx.alloc_pinned_with_flags::<u8>(bytes, 0) }
                .map_err(dev_err("allocating page-locked memory for the flow-field sums"))?,
        };
        let sums = self.sums.as_mut().ok_or_else(|| SimError::Device("flow-field sums: not allocated".into()))?;
        dev.stream.memcpy_dtoh(&sums.slice(0..bytes), &mut buf).map_err(dev_err("reading the flow-field sums"))?;
        let done = dev.stream.record_event(None).map_err(dev_err("reading the flow-field sums"))?;
        dev.stream.memset_zeros(sums).map_err(dev_err("zeroing the flow-field sums"))?;
        Ok(SumsCopy { buf: Some(buf), done, back: self.free_tx.clone(), bins: self.bins })
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
