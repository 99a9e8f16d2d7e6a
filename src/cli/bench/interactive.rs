//! `argon-sandbox bench --interactive`: the whole app loop headless (simulation thread,
//! renderer and egui painting into an offscreen window-sized target, each frame finished on
//! the GPU), measuring frames per second and the MD steps that land in each displayed frame,
//! for each `--n` (`--n 0`: the scene as shipped). The app runs as a person would run it: liquid slab in the default tank
//! (or the `--scene` file, re-initialised to `--n` atoms unless it is 0),
//! the app's default pace (the simulation fills each display frame) or a fixed
//! `--steps-per-frame`, plots open; with `--flow-view` the Flow view (`--layer` its colour
//! layer), with `--dye` the bench's dye region and rake drawn as with the Dye tool, and with
//! `--replay scrub` the replay timeline scrubbed while timing (`scrub.rs`).

use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};

use super::common::{BenchArgs, bench_dye_sources, in_lj_system, median};
use super::scrub::{Scrub, ScrubResult};
use crate::app::AppOptions;
use crate::app::headless::Headless;
use crate::app::settings::Settings;

/// One measured case.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InteractiveResult {
    pub n_atoms: usize,
    pub backend: String,
    pub device: String,
    pub renderer: String,
    pub algorithm: String,
    pub precision: String,
    pub size: [u32; 2],
    pub fps: f64,
    pub frame_ms: f64,
    pub steps_per_frame: f64,
    pub steps_per_s: f64,
    pub atom_steps_per_s: f64,
    pub position_path: String,
    /// Device memory of the backend per atom (`Backend::device_bytes` / n; None on the CPU).
    pub device_bytes_per_atom: Option<f64>,
    /// With --flow-view: flow-field windows the app received while timing.
    pub flow_windows: u64,
    /// With --flow-view: the colour layer shown (the Flow view's own without --layer).
    pub layer: Option<String>,
    /// With --dye: the bench's dye region and rake drawn in the app.
    pub dye: bool,
    /// Frame-time percentiles over every timed frame, ms: 50th, 95th, 99th and the longest.
    pub frame_ms_p50: f64,
    pub frame_ms_p95: f64,
    pub frame_ms_p99: f64,
    pub frame_ms_max: f64,
    /// With --replay scrub: what the timed frames showed.
    pub scrub: Option<ScrubResult>,
    /// Instant replay: what it holds when timing ends ("off" when its budget is 0).
    pub replay: String,
    /// Seconds from starting the app with the scene to its first drawn frame (the device
    /// opened, the system built, the kernels compiled, the first steps run and drawn).
    pub open_s: f64,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let size = crate::record::parse_size(&args.size)?;
    if args.frames == 0 || args.repeats == 0 {
        bail!("--frames and --repeats must be at least 1");
    }
    if !(args.max_fps.is_finite() && args.max_fps >= 0.0) {
        bail!("--max-fps {}: use 0 (no limit) or a positive rate", crate::numfmt::short(args.max_fps));
    }
    if args.steps_per_frame == Some(0) {
        bail!("--steps-per-frame must be at least 1");
    }
    layer(args)?;
    if !args.json {
        println!(
            "{:>9} {:>5} {:>9} {:>7} {:>9} {:>8} {:>10} {:>12} {:>8}  device / renderer / positions",
            "atoms", "back", "precision", "FPS", "frame ms", "steps/fr", "steps/s", "atom-steps/s", "dev B/at"
        );
    }
    for &n in &args.sizes {
        let r = measure(args, n, size)?;
        if args.json {
            println!("{}", serde_json::to_string(&r)?);
        } else {
            let layer = r.layer.as_deref().map_or_else(String::new, |l| format!(" ({l})"));
            let flow = match args.flow_view {
                true => format!(" / flow view{layer}: {} windows", r.flow_windows),
                false => String::new(),
            };
            let dye = if r.dye { " / dye" } else { "" };
            let scrub = r.scrub.as_ref().map_or_else(String::new, |s| {
                format!(
                    " / scrubbing {} stored frames: {} of {} frames showed the one sought, {} distinct; \
                     frame ms p50 {:.2} p95 {:.2} p99 {:.2} max {:.2}",
                    s.stored,
                    s.shown,
                    s.frames,
                    s.distinct,
                    r.frame_ms_p50,
                    r.frame_ms_p95,
                    r.frame_ms_p99,
                    r.frame_ms_max
                )
            });
            let flow = format!("{flow}{dye} / replay: {}{scrub} / opened in {:.1} s", r.replay, r.open_s);
            println!(
                "{:>9} {:>5} {:>9} {:>7.1} {:>9.2} {:>8.1} {:>10.0} {:>12.3e} {:>8}  {} / {} / {}{flow}",
                r.n_atoms,
                r.backend,
                r.precision,
                r.fps,
                r.frame_ms,
                r.steps_per_frame,
                r.steps_per_s,
                r.atom_steps_per_s,
                r.device_bytes_per_atom.map_or_else(|| "-".to_string(), |b| format!("{b:.0}")),
                r.device,
                r.renderer,
                r.position_path
            );
        }
    }
    Ok(())
}

fn measure(args: &BenchArgs, n: usize, size: [u32; 2]) -> Result<InteractiveResult> {
    let mut settings = Settings::default();
    if args.flow_view {
        settings.view.flow = crate::render::flow_layer::FlowView::flow_preset();
    }
    if let Some(kind) = layer(args)? {
        settings.view.flow.layer = Some(kind);
    }
    if let Some(every) = args.field_every {
        settings.flow_sampling.every = every;
    }
    if args.replay == "off" {
        settings.replay_budget_mb = 0;
    }
    let backend = args.backend.first().copied();
    let atoms = (n != 0).then_some(n);
    let scene = args.scene.clone().filter(|p| p != std::path::Path::new("default"));
    // The device first, so a wgpu backend starts on it (drawn zero-copy, as in the window).
    let options = AppOptions { scene, atoms, backend, settings: Some(settings), ..Default::default() };
    let opening = Instant::now();
    let mut h = Headless::start(options, size)?;
    let renderer = h.gpu.describe();
    // Wait for the system to be built and its first frame drawn.
    let loaded = h.run_until(Duration::from_secs(900), |a| a.status.is_some() && a.frame.is_some());
    let open_s = opening.elapsed().as_secs_f64();
    if !loaded {
        return Err(anyhow!("the simulation did not start: {}", h.app.last_error().unwrap_or("timed out")));
    }
    if let Some(e) = h.app.last_error() {
        bail!("{e}");
    }
    let app = &mut h.app;
    // The pace asked here, also over a scene's own `steps_per_frame`; the display's target
    // rate is --max-fps where given (a monitor's refresh), else 60.
    match args.steps_per_frame {
        Some(n) => app.set_fixed_pace(n),
        None => app.set_pace_mode(crate::app::commands::PaceMode::Fill),
    }
    app.set_display_target(if args.max_fps > 0.0 { args.max_fps } else { 60.0 });
    app.params.algorithm = args.algorithm[0];
    app.params.precision = args.precision[0];
    app.params.block_size = args.block_size[0];
    if !app.apply_params() {
        bail!("{}", app.last_error().unwrap_or("bad parameters"));
    }
    let want = app.params.clone();
    if !h.run_until(Duration::from_secs(120), |a| a.status.as_ref().is_some_and(|s| s.params == want)) {
        bail!("the simulation did not take the parameters: {}", h.app.last_error().unwrap_or("timed out"));
    }
    if args.dye {
        use crate::app::dye::DyeKind;
        let (region, rake) = bench_dye_sources(&h.app.sim_box());
        h.app.add_dye(DyeKind::Region { min: region.min, max: region.max });
        h.app.add_dye(DyeKind::Rake { a: rake.a, b: rake.b });
        if h.app.dye.sources.len() < 2 {
            bail!("--dye: {}", h.app.last_error().unwrap_or("the sources were not added"));
        }
    }
    for _ in 0..30 {
        h.frame();
    }
    let mut scrub = match args.replay == "scrub" {
        true => Some(Scrub::start(&mut h).ok_or_else(|| {
            anyhow!("--replay scrub: the replay holds fewer than 2 frames to scrub (is its budget 0 in the settings?)")
        })?),
        false => None,
    };
    let mut fps = Vec::new();
    let mut spf = Vec::new();
    let mut frame_ms = Vec::new();
    let windows0 = h.app.flow.windows;
    let period = (args.max_fps > 0.0).then(|| Duration::from_secs_f64(1.0 / args.max_fps));
    for _ in 0..args.repeats {
        let (t0, s0) = (Instant::now(), h.app.frame_step);
        let mut due = Instant::now();
        for _ in 0..args.frames {
            if let Some(p) = period {
                due += p;
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            let t = Instant::now();
            match scrub.as_mut() {
                Some(s) => s.frame(&mut h),
                None => h.frame(),
            }
            frame_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let dt = t0.elapsed().as_secs_f64();
        fps.push(args.frames as f64 / dt);
        spf.push((h.app.frame_step - s0) as f64 / args.frames as f64);
    }
    let scrub = scrub.map(|s| s.end(&mut h));
    let status = h.app.status.clone().ok_or_else(|| anyhow!("no status"))?;
    if let Some(e) = h.app.last_error() {
        bail!("{e}");
    }
    let (fps, spf) = (median(fps), median(spf));
    frame_ms.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| frame_ms[((p / 100.0 * frame_ms.len() as f64).ceil() as usize).clamp(1, frame_ms.len()) - 1];
    Ok(InteractiveResult {
        n_atoms: status.n_atoms,
        backend: status.info.kind.to_string(),
        device: status.info.device.clone(),
        renderer,
        algorithm: format!("{:?}", status.params.algorithm),
        precision: status.params.precision.name().to_string(),
        size,
        fps,
        frame_ms: 1000.0 / fps,
        steps_per_frame: spf,
        steps_per_s: spf * fps,
        atom_steps_per_s: spf * fps * status.n_atoms as f64,
        position_path: status.position_path.to_string(),
        device_bytes_per_atom: status.device_bytes.map(|b| b as f64 / status.n_atoms.max(1) as f64),
        flow_windows: h.app.flow.windows - windows0,
        layer: args.flow_view.then(|| h.app.settings.view.flow.layer.map_or("none", |k| k.name()).to_string()),
        dye: args.dye,
        frame_ms_p50: pct(50.0),
        frame_ms_p95: pct(95.0),
        frame_ms_p99: pct(99.0),
        frame_ms_max: pct(100.0),
        scrub,
        replay: replay_text(&h.app),
        open_s,
    })
}

/// The Flow view's colour layer `--layer` asks for.
fn layer(args: &BenchArgs) -> Result<Option<crate::flow::FieldKind>> {
    let Some(name) = &args.layer else { return Ok(None) };
    let kind = crate::flow::FieldKind::from_name(name).map_err(|e| anyhow!("--layer {}: {}", e.value, e.reason))?;
    Ok(Some(kind))
}

/// What the replay holds, and what its last full state cost the simulation thread.
fn replay_text(app: &crate::app::App) -> String {
    if app.replay_budget() == 0 {
        return "off".into();
    }
    let r = &app.replay;
    let took = r.states.last_took().map_or(0.0, |t| t.as_secs_f64() * 1e3);
    format!(
        "{:.1} s in {} frames (every {} drawn, {:.0} MiB), {} states, last took {took:.1} ms",
        r.seconds(),
        r.ring.len(),
        r.ring.every.max(1),
        r.ring.bytes() as f64 / (1 << 20) as f64,
        r.states.keyframes()
    )
}

/// `bench --publish`: the per-frame cost of getting positions from the CUDA backend to the
/// renderer at each `--n`, both ways: zero-copy (the publish kernel writes the shared
/// buffer: its GPU time between two events, and the simulation thread's time to issue it, as
/// the app does, handing the slot over when an event says it is done) and host staging (publish, copy to host, `queue.write_buffer`
/// into the renderer's buffer, waited for). Medians of `--frames` frames.
pub fn publish_bench(args: &BenchArgs) -> Result<()> {
    use crate::interop::Interop;
    use crate::render::Renderer;
    use crate::render::offscreen::{COLOUR_FORMAT, Gpu};
    use crate::sim::{ColourScalar, PositionTarget, open_backend};
    let gpu = Gpu::headless()?;
    let dev = crate::sim::cuda::device::open().map_err(|e| anyhow!("no CUDA device: {e}"))?;
    println!(
        "{:>9} {:>16} {:>16} {:>14}  (ms per frame, median of {})",
        "atoms", "zero-copy (GPU)", "zero-copy (host)", "host staging", args.frames
    );
    for &n in &args.sizes {
        let (b, atoms) = in_lj_system(n);
        let params = crate::physics::params::SimParams {
            precision: args.precision[0],
            algorithm: args.algorithm[0],
            ..crate::physics::params::SimParams::default()
        };
        let (mut sim, _) = open_backend(crate::sim::BackendChoice::Cuda, b, params, &atoms, None)?;
        let n = sim.n_atoms();
        let interop = Interop::new(&gpu.device, n).map_err(|e| anyhow!("zero-copy is not available: {e}"))?;
        let mut renderer = Renderer::new(&gpu.device, COLOUR_FORMAT);
        // The fallback's buffers: pinned host memory, as the simulation thread uses.
        let mut host = crate::sim::HostBuf::new(n, true);
        let (mut zero, mut kernel, mut staged) = (Vec::new(), Vec::new(), Vec::new());
        let event = |what| {
            dev.ctx
                .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| anyhow!("{what}: {e}"))
        };
        let (start, end) = (event("timing event")?, event("timing event")?);
        // Each path in its own loop: interleaving them would time the GPU's switches between
        // the CUDA and Vulkan contexts rather than the paths.
        for k in 0..args.frames as usize + 5 {
            let t = Instant::now();
            start.record(&dev.stream).map_err(|e| anyhow!("recording an event: {e}"))?;
            sim.write_positions_async(interop.slots.ptrs[k % 3], interop.capacity(), ColourScalar::Speed)?;
            let dz = t.elapsed().as_secs_f64() * 1e3;
            end.record(&dev.stream).map_err(|e| anyhow!("recording an event: {e}"))?;
            sim.positions_written(true)?;
            let dk = start.elapsed_ms(&end).map_err(|e| anyhow!("timing: {e}"))? as f64;
            if k >= 5 {
                zero.push(dz);
                kernel.push(dk);
            }
        }
        for k in 0..args.frames as usize + 5 {
            let t = Instant::now();
            sim.write_positions(PositionTarget::Host(&mut host[..]), ColourScalar::Speed)?;
            renderer.upload_atoms(&gpu.device, &gpu.queue, &host);
            gpu.queue.submit(None);
            let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
            if k >= 5 {
                staged.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let (z, g, s) = (median(zero), median(kernel), median(staged));
        if args.json {
            println!(
                "{}",
                serde_json::json!({"n_atoms": n, "zero_copy_gpu_ms": g, "zero_copy_host_ms": z, "host_staging_ms": s})
            );
        } else {
            println!("{n:>9} {g:>16.4} {z:>16.4} {s:>14.3}");
        }
    }
    Ok(())
}
