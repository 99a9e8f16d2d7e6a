//! The desktop window: winit 0.30 event loop, egui-winit input, our own wgpu device (so the
//! interop path can ask for Vulkan extensions, and the wgpu backend can run on it with the
//! limits and features it needs) and surface, and the [`Painter`]. Each redraw
//! runs [`App::ui`] once. `--exit-after-frames N [--screenshot F]` closes the window after N
//! frames, saving the last frame with its UI: how the real binary is tested under Xvfb.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, OwnedDisplayHandle};
use winit::window::{Window, WindowId};

use super::painter::{FrameOutput, Painter};
use super::{App, AppOptions};
use crate::render::offscreen::save_png;

/// Window-only choices from the command line.
#[derive(Clone, Debug, Default)]
pub struct WindowOptions {
    /// Close after this many frames.
    pub exit_after_frames: Option<u64>,
    /// Save the last frame (with the UI) here before closing.
    pub screenshot: Option<PathBuf>,
}

struct Gfx {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    device: wgpu::Device,
    queue: wgpu::Queue,
    config: wgpu::SurfaceConfiguration,
    painter: Painter,
    egui: egui_winit::State,
    /// The window was created or moved: the monitor's refresh rate is read at the next frame.
    monitor_changed: bool,
}

struct Shell {
    app_options: AppOptions,
    window_options: WindowOptions,
    display: OwnedDisplayHandle,
    app: Option<App>,
    gfx: Option<Gfx>,
    error: Option<anyhow::Error>,
    frames: u64,
}

/// Opens the window and runs until it closes.
pub fn run(app_options: AppOptions, window_options: WindowOptions) -> Result<()> {
    let event_loop = EventLoop::new().map_err(|e| {
        anyhow!(
            "no display to open a window on ({e}). Run it in a desktop session (or under Xvfb), or use \
             `argon-sandbox run` / `record` / `bench` without a window"
        )
    })?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let display = event_loop.owned_display_handle();
    let mut shell = Shell { app_options, window_options, display, app: None, gfx: None, error: None, frames: 0 };
    event_loop.run_app(&mut shell)?;
    if let Some(app) = &mut shell.app {
        app.save_settings();
    }
    match shell.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

impl Shell {
    fn open(&mut self, el: &ActiveEventLoop) -> Result<()> {
        // The window's size comes from the settings; the app itself starts once the GPU is
        // known, so its CUDA device can be the one that draws (zero-copy needs that).
        let settings = match &self.app_options.settings_path {
            Some(p) => super::settings::Settings::peek(p),
            None => self.app_options.settings.clone().unwrap_or_default(),
        };
        let [w, h] = settings.window_size;
        let attrs = Window::default_attributes()
            .with_title("argon-sandbox")
            .with_inner_size(winit::dpi::LogicalSize::new(w as f64, h as f64))
            .with_maximized(settings.maximized);
        let window = Arc::new(el.create_window(attrs)?);
        let mut desc = wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(self.display.clone()));
        crate::sim::gpu::device::unvalidated_indirect(&mut desc);
        let init = crate::sim::gpu::device::init_lock();
        let instance = wgpu::Instance::new(desc);
        let surface = instance.create_surface(window.clone())?;
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            compatible_surface: Some(&surface),
            force_fallback_adapter: false,
            apply_limit_buckets: false,
        }))
        .map_err(|e| {
            anyhow!("no GPU adapter can draw to this window ({e}); on Linux without a GPU install mesa-vulkan-drivers")
        })?;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("argon-sandbox window device"),
            required_features: crate::render::wanted_features(&adapter)
                | crate::sim::gpu::device::wanted_features(&adapter),
            required_limits: adapter.limits(),
            ..Default::default()
        }))?;
        drop(init);
        let size = window.inner_size();
        let mut config = surface
            .get_default_config(&adapter, size.width.max(1), size.height.max(1))
            .ok_or_else(|| anyhow!("the GPU adapter cannot present to this window"))?;
        let caps = surface.get_capabilities(&adapter);
        // egui paints gamma-encoded colours best into a non-sRGB target; take one if offered.
        if let Some(f) = caps.formats.iter().find(|f| !f.is_srgb()) {
            config.format = *f;
        }
        config.present_mode = wgpu::PresentMode::AutoVsync;
        surface.configure(&device, &config);
        if let Some(uuid) = crate::interop::vulkan_uuid(&device) {
            crate::sim::cuda::device::prefer_uuid(uuid);
        }
        // A wgpu backend runs on this device, so its positions never leave the GPU.
        let mut options = self.app_options.clone();
        match crate::sim::gpu::device::SimDevice::shared(device.clone(), queue.clone(), adapter.get_info()) {
            Ok(d) => options.gpu = Some(Arc::new(d)),
            Err(e) if options.verbose => eprintln!("argon-sandbox: the wgpu backend gets a device of its own: {e}"),
            Err(_) => {}
        }
        let app = App::new(options);
        let painter = Painter::new(&device, config.format);
        let ctx = egui::Context::default();
        let egui = egui_winit::State::new(
            ctx,
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            Some(device.limits().max_texture_dimension_2d as usize),
        );
        self.gfx = Some(Gfx { window, surface, device, queue, config, painter, egui, monitor_changed: true });
        self.app = Some(app);
        Ok(())
    }

    fn redraw(&mut self, el: &ActiveEventLoop) {
        let (Some(g), Some(app)) = (self.gfx.as_mut(), self.app.as_mut()) else { return };
        app.gpu_frame(&g.device);
        if std::mem::take(&mut g.monitor_changed) {
            // The rate the display should keep: the monitor's refresh rate (60 where unknown),
            // asked again only when the window may have moved to another monitor.
            let hz = g.window.current_monitor().and_then(|m| m.refresh_rate_millihertz());
            app.set_display_target(hz.map_or(60.0, |mhz| mhz as f64 / 1000.0));
        }
        let raw = g.egui.take_egui_input(&g.window);
        let ctx = g.egui.egui_ctx().clone();
        let output = ctx.run_ui(raw, |ui| app.ui(ui));
        g.egui.handle_platform_output(&g.window, output.platform_output.clone());
        let frame = FrameOutput::new(&ctx, output, [g.config.width, g.config.height]);
        let texture = match g.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                g.surface.configure(&g.device, &g.config);
                return;
            }
            _ => {
                // Minimised or hidden: nothing to draw; do not spin.
                std::thread::sleep(std::time::Duration::from_millis(16));
                return;
            }
        };
        let view = texture.texture.create_view(&wgpu::TextureViewDescriptor::default());
        let clear = app.settings.view.background;
        g.painter.paint(&g.device, &g.queue, &frame, &view, clear);
        app.frame_submitted(&g.queue);
        g.painter.serve_capture(&g.device, &g.queue, &frame, clear, &mut app.capture);
        self.frames += 1;
        if self.window_options.exit_after_frames.is_some_and(|n| self.frames >= n) {
            if let Some(path) = &self.window_options.screenshot {
                match g.painter.capture_full(&g.device, &g.queue, &frame, clear) {
                    Ok((rgba, size)) => {
                        if let Err(e) = save_png(path, &rgba, size) {
                            self.error = Some(anyhow!("--screenshot {}: {e}", path.display()));
                        }
                    }
                    Err(e) => self.error = Some(anyhow!("--screenshot {}: {e}", path.display())),
                }
            }
            el.exit();
        }
        g.queue.present(texture);
    }
}

impl ApplicationHandler for Shell {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.gfx.is_none()
            && let Err(e) = self.open(el)
        {
            self.error = Some(e);
            el.exit();
        }
    }

    fn window_event(&mut self, el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(g) = self.gfx.as_mut() else { return };
        let _ = g.egui.on_window_event(&g.window, &event);
        match event {
            WindowEvent::CloseRequested => {
                // The size is kept by `Resized` (not while maximised, so the restored size stays).
                if let Some(app) = &mut self.app {
                    app.settings.maximized = g.window.is_maximized();
                }
                el.exit();
            }
            WindowEvent::Resized(size) => {
                g.config.width = size.width.max(1);
                g.config.height = size.height.max(1);
                g.surface.configure(&g.device, &g.config);
                if let Some(app) = &mut self.app
                    && !g.window.is_maximized()
                {
                    let logical = size.to_logical::<f32>(g.window.scale_factor());
                    app.settings.window_size = [logical.width, logical.height];
                }
            }
            WindowEvent::Moved(_) | WindowEvent::ScaleFactorChanged { .. } => g.monitor_changed = true,
            WindowEvent::RedrawRequested => self.redraw(el),
            _ => {}
        }
    }

    fn about_to_wait(&mut self, el: &ActiveEventLoop) {
        if crate::interrupt::interrupted() {
            // Ctrl+C in the terminal: close as the window's close button does (a recording or
            // trajectory in progress is finished, settings saved).
            el.exit();
            return;
        }
        if let Some(g) = &self.gfx {
            g.window.request_redraw();
        }
    }
}
