//! The whole app loop without a window: [`App::ui`] run by egui, painted with the view's
//! paint callback into an offscreen texture on a headless device, each frame waited for on
//! the GPU so frame times are honest. `bench --interactive` measures with it; tests use it
//! to render the app. The device is handed to the simulation thread, so a wgpu backend runs
//! on it and is drawn zero-copy, as in the window.

use std::time::{Duration, Instant};

use anyhow::Result;

use std::sync::Arc;

use super::painter::{FrameOutput, Painter};
use super::{App, AppOptions};
use crate::render::offscreen::Gpu;
use crate::sim::gpu::device::SimDevice;

/// The target format (non-sRGB, as a window surface usually is).
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// An app drawn into an offscreen window-sized texture.
pub struct Headless {
    pub gpu: Gpu,
    pub painter: Painter,
    pub ctx: egui::Context,
    pub app: App,
    /// Window size in physical pixels (1 point = 1 pixel).
    pub size: [u32; 2],
    target: wgpu::TextureView,
    start: Instant,
    last: Option<FrameOutput>,
}

impl Headless {
    /// An app already started (a wgpu backend moves onto this device when it runs).
    pub fn new(mut app: App, size: [u32; 2]) -> Result<Headless> {
        let gpu = Self::gpu()?;
        if let Some(d) = Self::shared(&gpu) {
            app.share_device(d);
        }
        Self::with(gpu, app, size)
    }

    /// Opens the device first and starts the app with it (a wgpu backend starts there).
    pub fn start(mut options: AppOptions, size: [u32; 2]) -> Result<Headless> {
        let gpu = Self::gpu()?;
        options.gpu = Self::shared(&gpu).or(options.gpu);
        let app = App::new(options);
        Self::with(gpu, app, size)
    }

    fn gpu() -> Result<Gpu> {
        Ok(Gpu::headless_with(crate::sim::gpu::device::wanted_features)?)
    }

    /// The device as the simulation sees it (None where it cannot run the kernels).
    fn shared(gpu: &Gpu) -> Option<Arc<SimDevice>> {
        SimDevice::shared(gpu.device.clone(), gpu.queue.clone(), gpu.adapter.get_info()).ok().map(Arc::new)
    }

    fn with(gpu: Gpu, app: App, size: [u32; 2]) -> Result<Headless> {
        let painter = Painter::new(&gpu.device, FORMAT);
        let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("headless window"),
            size: wgpu::Extent3d { width: size[0], height: size[1], depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let target = texture.create_view(&wgpu::TextureViewDescriptor::default());
        Ok(Headless {
            gpu,
            painter,
            ctx: egui::Context::default(),
            app,
            size,
            target,
            start: Instant::now(),
            last: None,
        })
    }

    /// Runs and paints one frame with `events` as this frame's input; returns when the GPU
    /// has finished it.
    pub fn frame_with(&mut self, events: Vec<egui::Event>) {
        let rect = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(self.size[0] as f32, self.size[1] as f32));
        let raw = egui::RawInput {
            screen_rect: Some(rect),
            time: Some(self.start.elapsed().as_secs_f64()),
            events,
            focused: true,
            ..Default::default()
        };
        self.app.gpu_frame(&self.gpu.device);
        let app = &mut self.app;
        let output = self.ctx.run_ui(raw, |ui| app.ui(ui));
        let frame = FrameOutput::new(&self.ctx, output, self.size);
        let clear = self.app.settings.view.background;
        self.painter.paint(&self.gpu.device, &self.gpu.queue, &frame, &self.target, clear);
        self.app.frame_submitted(&self.gpu.queue);
        self.painter.serve_capture(&self.gpu.device, &self.gpu.queue, &frame, clear, &mut self.app.capture);
        let _ = self.gpu.device.poll(wgpu::PollType::wait_indefinitely());
        self.last = Some(frame);
    }

    pub fn frame(&mut self) {
        self.frame_with(Vec::new());
    }

    /// Runs frames until `done` says so or `timeout` passes; true if `done` was reached.
    pub fn run_until(&mut self, timeout: Duration, mut done: impl FnMut(&App) -> bool) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            self.frame();
            if done(&self.app) {
                return true;
            }
        }
        false
    }

    /// The last frame with its UI, as RGBA8.
    pub fn screenshot(&mut self) -> Result<(Vec<u8>, [u32; 2])> {
        if self.last.is_none() {
            self.frame();
        }
        let frame = self.last.as_ref().expect("a frame was drawn");
        let clear = self.app.settings.view.background;
        Ok(self.painter.capture_full(&self.gpu.device, &self.gpu.queue, frame, clear)?)
    }
}
