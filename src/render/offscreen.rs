//! Rendering without a window: a headless wgpu device, a colour + depth texture target, and
//! reading frames back (rows padded to 256 bytes as wgpu requires) as tightly packed RGBA8,
//! plus saving PNGs. Used by `record`, `bench --render` and the rendering tests.

use std::path::Path;

use super::{Camera, DEPTH_FORMAT, Renderer, ViewSettings};

/// Colour format of offscreen targets (sRGB, so images look as they do on screen).
pub const COLOUR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// A rendering error a person can act on.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(
        "no GPU adapter for rendering was found ({0}); on Linux without a GPU install Mesa's software Vulkan \
         (apt-get install mesa-vulkan-drivers)"
    )]
    NoAdapter(String),
    #[error("the GPU device could not be opened: {0}")]
    NoDevice(String),
    #[error("reading the rendered frame back failed: {0}")]
    Readback(String),
    #[error("{0}")]
    Invalid(String),
}

/// A device and queue without a window.
pub struct Gpu {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
}

impl Gpu {
    /// The best adapter available (a real GPU, else a software one such as lavapipe).
    pub fn headless() -> Result<Gpu, RenderError> {
        Self::headless_with(|_| wgpu::Features::empty())
    }

    /// As [`Gpu::headless`], asking also for the features `extra` wants of the adapter (a
    /// simulation that will share the device).
    pub fn headless_with(extra: impl Fn(&wgpu::Adapter) -> wgpu::Features) -> Result<Gpu, RenderError> {
        let init = crate::sim::gpu::device::init_lock();
        let instance = crate::sim::gpu::device::headless_instance();
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            compatible_surface: None,
            force_fallback_adapter: false,
            apply_limit_buckets: false,
        }))
        .map_err(|e| RenderError::NoAdapter(e.to_string()))?;
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("argon-sandbox headless device"),
            required_features: super::wanted_features(&adapter) | (extra(&adapter) & adapter.features()),
            required_limits: limits,
            ..Default::default()
        }))
        .map_err(|e| RenderError::NoDevice(e.to_string()))?;
        drop(init);
        Ok(Gpu { adapter, device, queue })
    }

    /// "name (backend)" of the adapter.
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?})", info.name, info.backend)
    }
}

/// An offscreen colour + depth target of a fixed size with its readback buffer.
pub struct Offscreen {
    pub size: [u32; 2],
    pub colour: wgpu::Texture,
    pub colour_view: wgpu::TextureView,
    depth_view: wgpu::TextureView,
    readback: wgpu::Buffer,
    /// The splat path's per-pixel visibility buffer, where the device has that path.
    vis: Option<wgpu::Buffer>,
}

impl Offscreen {
    pub fn new(device: &wgpu::Device, size: [u32; 2]) -> Result<Offscreen, RenderError> {
        let max = device.limits().max_texture_dimension_2d;
        if size[0] == 0 || size[1] == 0 || size[0] > max || size[1] > max {
            return Err(RenderError::Invalid(format!(
                "image size {}x{} is not supported: each side must be 1 to {max} pixels",
                size[0], size[1]
            )));
        }
        let extent = wgpu::Extent3d { width: size[0], height: size[1], depth_or_array_layers: 1 };
        let colour = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("offscreen colour"),
            size: extent,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: COLOUR_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let depth = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("offscreen depth"),
            size: extent,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: DEPTH_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        let readback = readback_buffer(device, size, "offscreen readback");
        Ok(Offscreen {
            size,
            colour_view: colour.create_view(&wgpu::TextureViewDescriptor::default()),
            depth_view: depth.create_view(&wgpu::TextureViewDescriptor::default()),
            colour,
            readback,
            vis: super::splat::Splat::supported(device).then(|| super::splat::Splat::visibility_buffer(device, size)),
        })
    }

    /// Draws one frame of `renderer` (already prepared) into the target.
    pub fn render(&self, gpu: &Gpu, renderer: &mut Renderer, settings: &ViewSettings) -> wgpu::SubmissionIndex {
        let mut encoder =
            gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("offscreen frame") });
        self.encode(&gpu.device, &mut encoder, renderer, settings);
        gpu.queue.submit(Some(encoder.finish()))
    }

    /// Records the frame of `renderer` (already prepared) into `encoder`: the atoms' splat
    /// pass when the renderer takes that path, then the pass drawing everything.
    pub fn encode(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        renderer: &mut Renderer,
        settings: &ViewSettings,
    ) {
        renderer.encode_splat(device, encoder, self.vis.as_ref());
        let bg = settings.background;
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("offscreen pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &self.colour_view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: bg[0] as f64,
                        g: bg[1] as f64,
                        b: bg[2] as f64,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &self.depth_view,
                depth_ops: Some(wgpu::Operations { load: wgpu::LoadOp::Clear(1.0), store: wgpu::StoreOp::Store }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        renderer.paint(&mut pass);
    }

    /// Prepares and draws a frame with `camera` and `settings`.
    pub fn draw(
        &self,
        gpu: &Gpu,
        renderer: &mut Renderer,
        camera: &Camera,
        settings: &ViewSettings,
    ) -> wgpu::SubmissionIndex {
        renderer.prepare(&gpu.queue, camera, self.size, settings);
        self.render(gpu, renderer, settings)
    }

    /// Copies the target back as tightly packed RGBA8 rows (top row first).
    pub fn read_rgba(&self, gpu: &Gpu) -> Result<Vec<u8>, RenderError> {
        self.read_rgba_on(&gpu.device, &gpu.queue)
    }

    /// [`Offscreen::read_rgba`] on any device and queue (the app's own).
    pub fn read_rgba_on(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<u8>, RenderError> {
        let encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("readback") });
        finish_readback(device, queue, encoder, &self.colour, &self.readback, self.size)
    }
}

/// Bytes per row of a readback of `width` RGBA8 pixels, padded as wgpu requires.
fn padded_row(width: u32) -> u32 {
    (width * 4).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT
}

/// A mappable buffer for reading back `size` RGBA8 (or BGRA8) pixels.
pub fn readback_buffer(device: &wgpu::Device, size: [u32; 2], label: &str) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: padded_row(size[0]) as u64 * size[1] as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    })
}

/// Adds to `encoder` (which may hold the frame's drawing) a copy of the 4-byte-per-pixel
/// `texture` of `size` into `readback` (made by [`readback_buffer`]), submits, waits, and
/// returns the pixels as tightly packed rows, top row first.
pub fn finish_readback(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    mut encoder: wgpu::CommandEncoder,
    texture: &wgpu::Texture,
    readback: &wgpu::Buffer,
    size: [u32; 2],
) -> Result<Vec<u8>, RenderError> {
    let padded = padded_row(size[0]);
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: Some(size[1]),
            },
        },
        wgpu::Extent3d { width: size[0], height: size[1], depth_or_array_layers: 1 },
    );
    queue.submit(Some(encoder.finish()));
    let slice = readback.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| RenderError::Readback(e.to_string()))?;
    rx.recv().map_err(|e| RenderError::Readback(e.to_string()))?.map_err(|e| RenderError::Readback(e.to_string()))?;
    let row = size[0] as usize * 4;
    let mut out = Vec::with_capacity(row * size[1] as usize);
    {
        let data = slice.get_mapped_range().map_err(|e| RenderError::Readback(e.to_string()))?;
        for y in 0..size[1] as usize {
            let start = y * padded as usize;
            out.extend_from_slice(&data[start..start + row]);
        }
    }
    readback.unmap();
    Ok(out)
}

/// Encodes RGBA8 pixels as a PNG file's bytes.
pub fn png_bytes(rgba: &[u8], size: [u32; 2]) -> Result<Vec<u8>, RenderError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, size[0], size[1]);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(|e| RenderError::Invalid(format!("PNG: {e}")))?;
        w.write_image_data(rgba).map_err(|e| RenderError::Invalid(format!("PNG: {e}")))?;
    }
    Ok(out)
}

/// Saves RGBA8 pixels as a PNG, atomically.
pub fn save_png(path: &Path, rgba: &[u8], size: [u32; 2]) -> Result<(), RenderError> {
    let bytes = png_bytes(rgba, size)?;
    crate::io::atomic::write_atomic(path, &bytes)
        .map_err(|e| RenderError::Invalid(format!("writing {}: {e}", path.display())))
}
