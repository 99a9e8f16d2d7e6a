//! Paints an egui frame (with the 3D view's paint callback) onto a wgpu target: the window's
//! surface texture or an offscreen texture. Owns egui-wgpu's renderer, with the view's
//! [`ViewResources`] in its callback resources, and answers captures: the 3D view alone (the
//! view's own image) or the whole frame with the UI (the same primitives painted again into
//! a texture that is read back).

use crate::render::offscreen::{RenderError, finish_readback, readback_buffer};
use crate::render::view::ViewResources;

/// egui + view painter for one device and target format.
pub struct Painter {
    pub renderer: egui_wgpu::Renderer,
    pub format: wgpu::TextureFormat,
    /// Kept for capturing the whole frame.
    full: Option<(wgpu::Texture, wgpu::Buffer, [u32; 2])>,
}

/// What one frame's paint needs.
pub struct FrameOutput {
    pub jobs: Vec<egui::ClippedPrimitive>,
    pub screen: egui_wgpu::ScreenDescriptor,
    pub textures: egui::TexturesDelta,
}

impl FrameOutput {
    /// Tessellates egui's output for a target of `size_px`.
    pub fn new(ctx: &egui::Context, output: egui::FullOutput, size_px: [u32; 2]) -> FrameOutput {
        let ppp = output.pixels_per_point;
        let jobs = ctx.tessellate(output.shapes, ppp);
        FrameOutput {
            jobs,
            screen: egui_wgpu::ScreenDescriptor { size_in_pixels: size_px, pixels_per_point: ppp },
            textures: output.textures_delta,
        }
    }
}

impl Painter {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Painter {
        let mut renderer = egui_wgpu::Renderer::new(device, format, egui_wgpu::RendererOptions::default());
        renderer.callback_resources.insert(ViewResources::new(device, format));
        Painter { renderer, format, full: None }
    }

    /// Paints `frame` into `target` (cleared to `clear` first) and submits.
    pub fn paint(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: &FrameOutput,
        target: &wgpu::TextureView,
        clear: [f32; 3],
    ) {
        for (id, deltas) in &frame.textures.set {
            for delta in deltas {
                self.renderer.update_texture(device, queue, *id, delta);
            }
        }
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("egui frame") });
        let extra = self.renderer.update_buffers(device, queue, &mut encoder, &frame.jobs, &frame.screen);
        self.pass(&mut encoder, frame, target, clear);
        queue.submit(extra.into_iter().chain(Some(encoder.finish())));
        for id in &frame.textures.free {
            self.renderer.free_texture(id);
        }
    }

    fn pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        frame: &FrameOutput,
        target: &wgpu::TextureView,
        clear: [f32; 3],
    ) {
        let pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("egui pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: clear[0] as f64,
                        g: clear[1] as f64,
                        b: clear[2] as f64,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        self.renderer.render(&mut pass.forget_lifetime(), &frame.jobs, &frame.screen);
    }

    /// The sequence number of the positions the 3D view's image was last drawn from.
    pub fn drawn_positions(&self) -> Option<u64> {
        self.renderer.callback_resources.get::<ViewResources>().and_then(|v| v.drawn_positions())
    }

    /// The 3D view as last drawn: RGBA8 and its size.
    pub fn capture_view(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(Vec<u8>, [u32; 2]), RenderError> {
        let view = self
            .renderer
            .callback_resources
            .get::<ViewResources>()
            .and_then(|v| v.target.as_ref())
            .ok_or_else(|| RenderError::Invalid("the 3D view has not been drawn yet".into()))?;
        Ok((view.read_rgba_on(device, queue)?, view.size))
    }

    /// Paints `frame` (already prepared by [`Painter::paint`]) again into a texture and reads
    /// it back as RGBA8: the whole window with its UI.
    pub fn capture_full(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: &FrameOutput,
        clear: [f32; 3],
    ) -> Result<(Vec<u8>, [u32; 2]), RenderError> {
        let size = frame.screen.size_in_pixels;
        if self.full.as_ref().is_none_or(|f| f.2 != size) {
            let texture = device.create_texture(&wgpu::TextureDescriptor {
                label: Some("window capture"),
                size: wgpu::Extent3d { width: size[0], height: size[1], depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: self.format,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            });
            let buffer = readback_buffer(device, size, "window capture readback");
            self.full = Some((texture, buffer, size));
        }
        let Some((texture, buffer, _)) = &self.full else { unreachable!("made above") };
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("window capture") });
        self.pass(&mut encoder, frame, &view, clear);
        let mut out = finish_readback(device, queue, encoder, texture, buffer, size)?;
        let bgra = matches!(self.format, wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb);
        if bgra {
            for px in out.chunks_exact_mut(4) {
                px.swap(0, 2);
            }
        }
        for px in out.chunks_exact_mut(4) {
            px[3] = 255;
        }
        Ok((out, size))
    }

    /// Captures what `capture` wants of this frame and hands it over.
    pub fn serve_capture(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: &FrameOutput,
        clear: [f32; 3],
        capture: &mut crate::app::capture::Capture,
    ) {
        let Some(with_ui) = capture.wanted() else { return };
        let result =
            if with_ui { self.capture_full(device, queue, frame, clear) } else { self.capture_view(device, queue) };
        match result {
            Ok((rgba, size)) => capture.frame(&rgba, size, with_ui),
            Err(e) => {
                capture.screenshot = None;
                capture.results.push(Err(format!("capture failed: {e}")));
                capture.stop_recording();
            }
        }
    }
}
