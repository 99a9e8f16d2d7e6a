//! `argon-sandbox record`: runs a scene and the renderer headless and writes a demo as MP4,
//! GIF or a folder of PNG frames, with a progress bar. One frame is `--steps-per-frame`
//! steps; positions go from the backend into the renderer's buffer each frame (the wgpu
//! backend runs on the renderer's device and writes a buffer the renderer draws, with no
//! host traffic). A scene's dye sources apply as in the app (regions tagged at step 0, rakes
//! run by the backend); `--colour dye` draws them with the app's palette and legend.

pub mod encode;
pub mod flow;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use crate::numfmt::short;
use crate::physics::obstacles::ObstacleField;
use crate::render::offscreen::{COLOUR_FORMAT, Gpu, Offscreen};
use crate::render::overlay::OverlayPainter;
use crate::render::overlay_layout::{self, Content};
use crate::render::{CameraMode, ColourBy, Renderer, Untagged, ViewSettings};
use crate::sim::gpu::device::SimDevice;
use crate::sim::{BackendChoice, PositionTarget, open_backend_on, start_at};

#[derive(Args, Debug, Clone)]
pub struct RecordArgs {
    /// Scene file (RON) or a built-in example's name (`argon-sandbox examples`); the
    /// built-in default scene without one.
    pub scene: Option<PathBuf>,
    /// Frames to record.
    #[arg(long, default_value_t = 300)]
    pub frames: u32,
    /// Simulation steps between frames.
    #[arg(long, default_value_t = 20)]
    pub steps_per_frame: u64,
    /// Simulation steps before the first frame (to start from a developed flow).
    #[arg(long, value_name = "STEPS", default_value_t = 0)]
    pub skip: u64,
    /// Image size, WIDTHxHEIGHT in pixels.
    #[arg(long, default_value = "1280x720")]
    pub size: String,
    /// demo.mp4 (H.264), demo.gif, or a folder for PNG frames.
    #[arg(long)]
    pub out: PathBuf,
    /// Frames per second of the video.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f64,
    /// What the atom colour shows; `dye` colours each dye source's atoms in its colour.
    #[arg(long, value_enum, default_value = "speed")]
    pub colour: ColourBy,
    /// How `--colour dye` draws untagged atoms.
    #[arg(long, value_enum, default_value = "dimmed")]
    pub untagged: Untagged,
    #[arg(long, value_enum, default_value = "front")]
    pub camera: CameraArg,
    /// Drawn atom radius in sigma.
    #[arg(long, default_value_t = 0.5)]
    pub radius: f32,
    /// Leave out the legend and scale bar.
    #[arg(long)]
    pub no_overlay: bool,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendChoice,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub flow: flow::FlowArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CameraArg {
    Front,
    Orbit,
}

/// Parses `WIDTHxHEIGHT`.
pub fn parse_size(text: &str) -> Result<[u32; 2]> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| anyhow!("--size {text}: expected WIDTHxHEIGHT in pixels, e.g. 1280x720"))?;
    let parse = |v: &str| v.trim().parse::<u32>().ok().filter(|&x| (1..=16384).contains(&x));
    match (parse(w), parse(h)) {
        (Some(w), Some(h)) => Ok([w, h]),
        _ => bail!("--size {text}: width and height must be whole numbers from 1 to 16384, e.g. 1280x720"),
    }
}

pub fn run(args: &RecordArgs) -> Result<()> {
    let size = parse_size(&args.size)?;
    if args.frames == 0 {
        bail!("--frames must be at least 1");
    }
    if args.steps_per_frame == 0 {
        bail!("--steps-per-frame must be at least 1 (simulation steps between frames)");
    }
    if !(args.fps.is_finite() && args.fps >= 1.0 && args.fps <= 240.0) {
        bail!("--fps {}: use a rate from 1 to 240 frames per second", short(args.fps));
    }
    if !(args.radius.is_finite() && args.radius >= 0.05 && args.radius <= 5.0) {
        bail!("--radius {}: use 0.05 to 5 sigma", short(args.radius as f64));
    }
    let kind = encode::output_kind(&args.out).map_err(|e| anyhow!(e))?;
    let mut setup = crate::scene::load_setup(args.scene.as_deref())?;
    // A scene's dye: the column makes Auto take a backend that carries dye.
    if !setup.dye.is_empty() {
        setup.atoms.dye_mut();
    }
    let flow = args.flow.resolve(&setup.sim_box, setup.params.dt)?;
    let field = ObstacleField::bake(&setup.shapes, &setup.sim_box, 0.1).map(Arc::new);
    let gpu = Gpu::headless_with(crate::sim::gpu::device::wanted_features)?;
    let shared = SimDevice::shared(gpu.device.clone(), gpu.queue.clone(), gpu.adapter.get_info()).ok().map(Arc::new);
    let (mut sim, why) =
        open_backend_on(args.backend, setup.sim_box, setup.params.clone(), &setup.atoms, field, shared.as_ref())?;
    start_at(sim.as_mut(), setup.step, setup.time, setup.piston)?;
    sim.set_dye_rakes(&crate::scene::dye::rakes(&setup.dye)).context("the scene's dye rakes")?;
    // The wgpu backend shares the renderer's device: it writes this buffer, the renderer draws it.
    let same_device = (sim.info().kind == "wgpu" && shared.is_some()).then(|| {
        gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("record atoms (same device)"),
            size: (sim.n_atoms().max(1) * 16) as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    });
    if !args.quiet {
        let path = if same_device.is_some() { "zero-copy (same device)" } else { "host staging" };
        eprintln!(
            "simulation: {why}; rendering on {}; positions: {path}; writing {:?} to {}",
            gpu.describe(),
            kind,
            args.out.display()
        );
    }
    let mut renderer = Renderer::new(&gpu.device, COLOUR_FORMAT);
    renderer.set_scene(&gpu.device, &setup.sim_box, &setup.shapes);
    let target = Offscreen::new(&gpu.device, size)?;
    let mut overlay = OverlayPainter::new(&gpu);
    let mode = match args.camera {
        CameraArg::Front => CameraMode::Front,
        CameraArg::Orbit => CameraMode::Orbit,
    };
    let b = setup.sim_box;
    let settings = ViewSettings {
        colour_by: args.colour,
        range: args.colour.default_range(setup.params.temperature, [b.lo[1], b.hi[1]]),
        radius: args.radius,
        show_legend: !args.no_overlay,
        show_scale_bar: !args.no_overlay,
        flow: flow.as_ref().map(|f| f.0).unwrap_or_default(),
        untagged: args.untagged,
        ..ViewSettings::default()
    };
    if args.skip > 0 {
        if !args.quiet {
            eprintln!("simulating {} steps before the first frame", args.skip);
        }
        let mut left = args.skip;
        while left > 0 && !crate::interrupt::interrupted() {
            let n = left.min(10_000);
            sim.advance(n).context("simulating the steps before the first frame")?;
            sim.drain_telemetry();
            left -= n;
        }
    }
    // The camera frames the tank beside or above the strip the legend and scale bar keep.
    let species: Vec<String> = setup.params.species.iter().map(|s| s.name.clone()).collect();
    let view = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0] as f32, size[1] as f32));
    let dye = crate::scene::dye::legend(&setup.dye);
    let content = Content::of(&settings, &species, &dye);
    let camera = overlay_layout::fit_camera(mode, &b, view, size, &content, settings.radius);
    // The flow layer starts from a full window, so the first frame already shows it.
    let mut legend = None;
    let plane_z = (b.hi[2] + args.radius as f64 + 0.05) as f32;
    let mut first_window = None;
    if let Some((_, spec)) = &flow {
        sim.set_fields(Some(spec.clone()))?;
        if !args.quiet {
            let steps = (spec.window_tau / setup.params.dt).ceil();
            eprintln!("sampling the first flow-field window ({steps} steps)");
        }
        while first_window.is_none() && !crate::interrupt::interrupted() {
            sim.advance(spec.every).context("sampling the first flow-field window")?;
            sim.drain_telemetry();
            first_window = sim.take_fields(false)?.pop();
        }
    }
    let mut sink = encode::open(&args.out, size, args.fps).map_err(|e| anyhow!(e))?;
    let bar = (!args.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(args.frames as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} frames  {per_sec}  eta {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut positions = vec![[0f32; 4]; sim.n_atoms()];
    for frame in 0..args.frames {
        if crate::interrupt::interrupted() {
            break;
        }
        if frame > 0 {
            sim.advance(args.steps_per_frame).with_context(|| format!("simulating frame {frame}"))?;
            sim.drain_telemetry();
        }
        let newest = if flow.is_some() { first_window.take().or(sim.take_fields(false)?.pop()) } else { None };
        if let Some(f) = newest {
            let mesh = crate::render::flow_layer::build(&f, &settings.flow, plane_z, &setup.shapes);
            legend = mesh.legend;
            renderer.set_flow(&gpu.device, &gpu.queue, Some(&mesh));
        }
        match &same_device {
            Some(buffer) => {
                let n = sim.n_atoms();
                sim.write_positions(PositionTarget::Buffer { buffer, len: n }, args.colour.scalar())?;
                if frame == 0 {
                    renderer.use_external_atoms(&gpu.device, buffer, n as u32);
                }
            }
            None => {
                positions.resize(sim.n_atoms(), [0.0; 4]);
                sim.write_positions(PositionTarget::Host(&mut positions), args.colour.scalar())?;
                renderer.upload_atoms(&gpu.device, &gpu.queue, &positions);
            }
        }
        target.draw(&gpu, &mut renderer, &camera, &settings);
        overlay.draw(&gpu, &target, &settings, &camera, &species, &dye, legend.as_ref(), &b);
        let rgba = target.read_rgba(&gpu)?;
        sink.push(&rgba).map_err(|e| anyhow!(e))?;
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let frames = sink.finish().map_err(|e| anyhow!(e))?;
    if !args.quiet {
        eprintln!("wrote {frames} frames of {}x{} to {}", size[0], size[1], args.out.display());
    }
    Ok(())
}
