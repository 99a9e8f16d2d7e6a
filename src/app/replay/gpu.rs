//! Storing frames drawn from the shared GPU slots (CUDA through Vulkan memory, or the wgpu
//! backend on the renderer's device): one device copy per stored frame, from the slot the
//! view drew into a ring buffer of the same device, submitted right after the frame and before
//! the slot is released to the simulation (so the slot still holds what was drawn). Evicted
//! buffers are reused; a buffer the device cannot allocate ends storing with a message.

use std::sync::Arc;

use super::ring::{FrameRing, StoredFrame, StoredPositions};

/// The renderer's device and the slot drawn this frame, waiting to be copied.
#[derive(Default)]
pub struct GpuStore {
    device: Option<wgpu::Device>,
    /// The slot drawn this frame: (its sequence number, buffer, atoms, step).
    drawn: Option<(u64, wgpu::Buffer, u32, u64)>,
    last_seq: u64,
    /// Buffers evicted from the ring, for reuse.
    spare: Vec<Arc<wgpu::Buffer>>,
}

/// Spare buffers kept for reuse.
const MAX_SPARE: usize = 4;

impl GpuStore {
    /// The device the view draws with (given every frame).
    pub fn set_device(&mut self, device: &wgpu::Device) {
        if self.device.is_none() {
            self.device = Some(device.clone());
        }
    }

    pub fn device(&self) -> Option<&wgpu::Device> {
        self.device.as_ref()
    }

    /// The view draws shared slot `seq` this frame.
    pub fn drawn(&mut self, seq: u64, buffer: &wgpu::Buffer, n: u32, step: u64) {
        if seq != self.last_seq {
            self.last_seq = seq;
            self.drawn = Some((seq, buffer.clone(), n, step));
        }
    }

    /// Whether a slot frame waits to be stored.
    pub fn has_drawn(&self) -> bool {
        self.drawn.is_some()
    }

    /// Takes back evicted buffers for reuse (those no save job still reads).
    pub fn recycle(&mut self, evicted: Vec<StoredFrame>) {
        for f in evicted {
            if let StoredPositions::Gpu(b, _) = f.positions
                && self.spare.len() < MAX_SPARE
                && Arc::strong_count(&b) == 1
            {
                self.spare.push(b);
            }
        }
    }

    /// Called after the frame was submitted: copies the slot it drew into a ring buffer when
    /// the ring keeps this frame. Err: the device could not allocate a buffer.
    pub fn store(
        &mut self,
        queue: &wgpu::Queue,
        ring: &mut FrameRing,
        budget: usize,
        fps: f64,
    ) -> Result<Option<StoredFrame>, String> {
        let (Some((_, src, n, step)), Some(device)) = (self.drawn.take(), self.device.clone()) else { return Ok(None) };
        let bytes = n as u64 * 16;
        if n == 0 || !ring.admit(bytes as usize, budget, fps) {
            return Ok(None);
        }
        let dst = match self.spare.iter().position(|b| b.size() >= bytes && b.size() <= 2 * bytes) {
            Some(i) => self.spare.swap_remove(i),
            None => {
                let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
                let b = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("replay frame"),
                    size: bytes,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                if let Some(e) = pollster::block_on(scope.pop()) {
                    return Err(format!("the GPU has no memory for more replay frames ({e})"));
                }
                Arc::new(b)
            }
        };
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("replay copy") });
        encoder.copy_buffer_to_buffer(&src, 0, &dst, 0, bytes);
        queue.submit(Some(encoder.finish()));
        let id = ring.next_id();
        Ok(Some(StoredFrame { id, step, at: std::time::Instant::now(), positions: StoredPositions::Gpu(dst, n) }))
    }
}

/// Reads `n` quadruples of a GPU buffer back (saving frames, tests).
pub fn read_back(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    n: u32,
) -> Result<Vec<[f32; 4]>, String> {
    let bytes = n as u64 * 16;
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("replay readback"),
        size: bytes.max(16),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("replay readback") });
    if bytes > 0 {
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
    }
    queue.submit(Some(encoder.finish()));
    let (tx, rx) = std::sync::mpsc::channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| format!("reading a replay frame back: {e}"))?;
    rx.recv()
        .map_err(|_| "reading a replay frame back: the map was dropped".to_string())?
        .map_err(|e| format!("reading a replay frame back: {e}"))?;
    let data = staging.slice(..).get_mapped_range().map_err(|e| format!("reading a replay frame back: {e}"))?;
    let out = bytemuck::cast_slice::<u8, [f32; 4]>(&data[..bytes as usize]).to_vec();
    drop(data);
    staging.unmap();
    Ok(out)
}
