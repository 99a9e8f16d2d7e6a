//! `argon-sandbox bench`: throughput of the LAMMPS `in.lj` system (fcc rho* = 0.8442,
//! T* = 1.44, r_c = 2.5, skin 0.3) over the backends, algorithms, precisions and sizes given.
//! Prints a table, and with `--json` one JSON object per case per line.
//!
//! `pair_interactions_per_s`: for all-pairs algorithms, N^2 per step (the effective rate the
//! seed paper and OpenMM quote); for cell and neighbour lists, the ordered pairs inside the
//! cutoff, N * rho * (4/3) pi r_c^3, per step.

use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use crate::physics::init::{LatticeKind, lattice_box, maxwell_boltzmann};
use crate::physics::params::{Algorithm, Precision, SimParams, Thermostat};
use crate::sim::{AtomState, BackendChoice, open_backend};

#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Backends to measure.
    #[arg(long, value_enum, num_args = 1.., default_values = ["auto"])]
    pub backend: Vec<BackendChoice>,
    /// Force algorithms to measure.
    #[arg(long, value_enum, num_args = 1.., default_values = ["neighbors"])]
    pub algorithm: Vec<Algorithm>,
    /// Precisions to measure.
    #[arg(long, value_enum, num_args = 1.., default_values = ["single", "double"])]
    pub precision: Vec<Precision>,
    /// Atom counts (each rounded to a whole fcc lattice, 4 n^3).
    #[arg(long = "n", num_args = 1.., default_values = ["32000"])]
    pub sizes: Vec<usize>,
    /// Timed steps per repeat.
    #[arg(long, default_value_t = 200)]
    pub steps: u64,
    /// Repeats per case; the median is reported.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Untimed steps before timing.
    #[arg(long, default_value_t = 20)]
    pub warmup: u64,
    /// CUDA threads per block (several allowed; the CPU backend ignores it).
    #[arg(long, num_args = 1.., default_values = ["128"])]
    pub block_size: Vec<u32>,
    /// Print one JSON object per case per line.
    #[arg(long)]
    pub json: bool,
    /// Measure the renderer instead: frame time for each --n at --size (front view, speed colours).
    #[arg(long)]
    pub render: bool,
    /// With --render: how atoms are drawn: `auto` as the app does (compute splatting for many
    /// small atoms where the device can), `splat`, or `triangles`.
    #[arg(long, value_enum, default_value_t = DrawPath::Auto, requires = "render")]
    pub draw: DrawPath,
    /// Image size for --render, WIDTHxHEIGHT.
    #[arg(long, default_value = "1920x1080")]
    pub size: String,
    /// Frames timed per size (and per repeat) with --render or --interactive.
    #[arg(long, default_value_t = 60)]
    pub frames: u32,
    /// Measure the whole app loop headless (simulation thread, renderer, egui): FPS and MD
    /// steps per displayed frame for each --n, at --size, with the first --backend,
    /// --algorithm, --precision and --block-size.
    #[arg(long, conflicts_with = "render")]
    pub interactive: bool,
    /// Measure the per-frame cost of getting positions to the renderer (CUDA): zero-copy
    /// against host staging, for each --n.
    #[arg(long, conflicts_with_all = ["render", "interactive"])]
    pub publish: bool,
    /// With --interactive: frames per second at most, like a display's refresh (0: no limit).
    #[arg(long, default_value_t = 0.0)]
    pub max_fps: f64,
    /// MD steps per displayed frame asked of the app with --interactive.
    #[arg(long, default_value_t = 30)]
    pub steps_per_frame: u64,
    /// Measure a scene instead of the in.lj system: `default` (the app's tank) or a scene
    /// file, with its own thermostat, walls, gravity and obstacles, re-initialised as a
    /// liquid slab to each --n like the app's Re-initialise (--n 0: as written). The
    /// simulation alone, with no rendering: compare with --interactive.
    #[arg(long, value_name = "default|FILE", conflicts_with_all = ["render", "interactive", "publish"])]
    pub scene: Option<std::path::PathBuf>,
}

/// How `bench --render` draws atoms.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawPath {
    Auto,
    Splat,
    Triangles,
}

/// The scene named by --scene, re-initialised to `n` atoms (0: as written), built.
fn scene_setup(which: &std::path::Path, n: usize) -> Result<crate::scene::SimSetup> {
    use crate::app::reinit::{InitialState, reinitialise};
    let scene = super::run::load_scene((which != std::path::Path::new("default")).then_some(which))?;
    let scene = if n == 0 {
        scene
    } else {
        reinitialise(&scene, n, InitialState::LiquidSlab).map_err(|e| anyhow::anyhow!("--n {n}: {e}"))?
    };
    scene.build().map_err(|e| anyhow::anyhow!("{}: {e}", which.display()))
}

/// The in.lj system with about `n` atoms.
pub fn in_lj_system(n: usize) -> (crate::physics::params::SimBox, AtomState) {
    let cells = ((n as f64 / 4.0).cbrt().round() as usize).max(3);
    let (b, pos) = lattice_box(LatticeKind::Fcc, 0.8442, [cells; 3]);
    let n = pos.len();
    let vel = maxwell_boltzmann(&vec![1.0; n], 1.44, 3.0 * n as f64 - 3.0, 87287, 0);
    (b, AtomState { positions: pos, velocities: vel, types: vec![0; n] })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 { v[m] } else { 0.5 * (v[m - 1] + v[m]) }
}

/// Peak resident memory of this process in MB (Linux), if known.
pub fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Frame time of the renderer alone (no simulation, no readback) for each size.
fn render_bench(args: &BenchArgs) -> Result<()> {
    use crate::render::offscreen::{COLOUR_FORMAT, Gpu, Offscreen};
    use crate::render::{Camera, CameraMode, ColourBy, Renderer, ViewSettings};
    let size = crate::record::parse_size(&args.size)?;
    if args.frames == 0 {
        anyhow::bail!("--frames must be at least 1");
    }
    let gpu = Gpu::headless()?;
    let device = gpu.describe();
    let target = Offscreen::new(&gpu.device, size)?;
    let mut renderer = Renderer::new(&gpu.device, COLOUR_FORMAT);
    renderer.splat_mode = match args.draw {
        DrawPath::Auto => crate::render::SplatMode::Auto,
        DrawPath::Splat => crate::render::SplatMode::Always,
        DrawPath::Triangles => crate::render::SplatMode::Never,
    };
    if args.draw == DrawPath::Splat && !crate::render::splat::Splat::supported(&gpu.device) {
        anyhow::bail!("--draw splat: {device} has no 64-bit atomic min/max in shaders; use --draw triangles");
    }
    if !args.json {
        let early = gpu.device.features().contains(wgpu::Features::SHADER_EARLY_DEPTH_TEST);
        println!(
            "rendering on {device}; early depth test with conservative depth: {}",
            if early { "yes" } else { "no" }
        );
        println!(
            "{:>9} {:>11} {:>10} {:>10} {:>8} {:>11}  draw",
            "atoms", "size", "ms/frame", "min ms", "fps", "latency ms"
        );
    }
    for &n_req in &args.sizes {
        let (b, atoms) = in_lj_system(n_req);
        let data: Vec<[f32; 4]> = atoms
            .positions
            .iter()
            .zip(&atoms.velocities)
            .map(|(p, v)| {
                [p[0] as f32, p[1] as f32, p[2] as f32, (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() as f32]
            })
            .collect();
        renderer.set_scene(&gpu.device, &b, &[]);
        renderer.upload_atoms(&gpu.device, &gpu.queue, &data);
        let camera = Camera::fit(CameraMode::Front, &b, size[0] as f32 / size[1] as f32);
        let settings = ViewSettings { colour_by: ColourBy::Speed, range: [0.0, 3.6], ..ViewSettings::default() };
        // Latency: each frame waited for. Throughput: frames queued back to back, as an app
        // draws them, one wait at the end (reported as the frame time, median of 3 runs).
        let wait = || {
            gpu.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| anyhow::anyhow!("waiting for the GPU: {e}"))
        };
        let mut latency = Vec::with_capacity(args.frames as usize);
        for frame in 0..args.frames.min(10) + 3 {
            let t0 = Instant::now();
            target.draw(&gpu, &mut renderer, &camera, &settings);
            wait()?;
            if frame >= 3 {
                latency.push(t0.elapsed().as_secs_f64());
            }
        }
        let mut times = Vec::with_capacity(3);
        for _ in 0..3 {
            let t0 = Instant::now();
            for _ in 0..args.frames {
                target.draw(&gpu, &mut renderer, &camera, &settings);
            }
            wait()?;
            times.push(t0.elapsed().as_secs_f64() / args.frames as f64);
        }
        let path = if renderer.splats() { "splat" } else { "triangles" };
        let latency = median(latency);
        let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
        let per = median(times);
        if args.json {
            let obj = serde_json::json!({
                "render": true, "device": device, "n": data.len(), "width": size[0], "height": size[1],
                "frames": args.frames, "ms_per_frame": per * 1e3, "min_ms_per_frame": fastest * 1e3, "fps": 1.0 / per,
                "latency_ms": latency * 1e3, "draw": path,
            });
            println!("{obj}");
        } else {
            println!(
                "{:>9} {:>11} {:>10.3} {:>10.3} {:>8.1} {:>11.3}  {path}",
                data.len(),
                format!("{}x{}", size[0], size[1]),
                per * 1e3,
                fastest * 1e3,
                1.0 / per,
                latency * 1e3
            );
        }
    }
    Ok(())
}

pub fn run(args: &BenchArgs) -> Result<()> {
    if args.interactive {
        return super::bench_interactive::run(args);
    }
    if args.publish {
        return super::bench_interactive::publish_bench(args);
    }
    if args.render {
        return render_bench(args);
    }
    if args.steps == 0 || args.repeats == 0 {
        anyhow::bail!("--steps and --repeats must be at least 1");
    }
    if !args.json {
        println!(
            "{:<6} {:<16} {:<7} {:>5} {:>9} {:>7} {:>10} {:>10} {:>14} {:>14}",
            "backend", "algorithm", "prec", "block", "atoms", "steps", "ms/step", "min ms", "atom-steps/s", "pairs/s"
        );
    }
    for &n_req in &args.sizes {
        for &backend in &args.backend {
            for &algorithm in &args.algorithm {
                for &precision in &args.precision {
                    let blocks: Vec<u32> =
                        if backend == BackendChoice::Cpu { vec![args.block_size[0]] } else { args.block_size.clone() };
                    for &block_size in &blocks {
                        let params = SimParams {
                            cutoff: 2.5,
                            shift: false,
                            skin: 0.3,
                            temperature: 1.44,
                            thermostat: Thermostat::Nve,
                            algorithm,
                            precision,
                            block_size,
                            telemetry_every: args.steps.max(1),
                            ..SimParams::default()
                        };
                        // Built per case and dropped once uploaded, so peak memory is the backend's.
                        let (sim_box, params, atoms, field) = match &args.scene {
                            None => {
                                let (sim_box, atoms) = in_lj_system(n_req);
                                (sim_box, params, atoms, None)
                            }
                            Some(which) => {
                                let setup = scene_setup(which, n_req)?;
                                let params = SimParams {
                                    algorithm,
                                    precision,
                                    block_size,
                                    telemetry_every: setup.params.telemetry_every.min(args.steps.max(1)),
                                    ..setup.params
                                };
                                let field =
                                    crate::physics::obstacles::ObstacleField::bake(&setup.shapes, &setup.sim_box, 0.1)
                                        .map(std::sync::Arc::new);
                                (setup.sim_box, params, setup.atoms, field)
                            }
                        };
                        let n = atoms.len();
                        let (mut sim, _why) = open_backend(backend, sim_box, params, &atoms, field)
                            .with_context(|| format!("opening the {backend:?} backend"))?;
                        drop(atoms);
                        let info = sim.info();
                        sim.advance(args.warmup).context("warm-up steps")?;
                        let mut times = Vec::with_capacity(args.repeats);
                        for _ in 0..args.repeats {
                            let t0 = Instant::now();
                            sim.advance(args.steps).context("timed steps")?;
                            times.push(t0.elapsed().as_secs_f64() / args.steps as f64);
                        }
                        let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
                        let per_step = median(times);
                        let resolved = algorithm.resolve(n, &sim_box, 2.8);
                        let pairs_per_step = match resolved {
                            Algorithm::AllPairsGlobal | Algorithm::AllPairsTiled => (n as f64) * (n as f64),
                            _ => n as f64 * 0.8442 * 4.0 / 3.0 * std::f64::consts::PI * 2.5f64.powi(3),
                        };
                        let atom_steps = n as f64 / per_step;
                        let pairs = pairs_per_step / per_step;
                        if args.json {
                            let obj = serde_json::json!({
                                "backend": info.kind,
                                "device": info.device,
                                "algorithm": resolved.name(),
                                "precision": precision.name(),
                                "n": n,
                                "steps": args.steps,
                                "repeats": args.repeats,
                                "block_size": block_size,
                                "threads": rayon::current_num_threads(),
                                "ms_per_step": per_step * 1e3,
                                "min_ms_per_step": fastest * 1e3,
                                "atom_steps_per_s": atom_steps,
                                "pair_interactions_per_s": pairs,
                                "peak_rss_mb": peak_rss_mb(),
                            });
                            println!("{obj}");
                        } else {
                            println!(
                                "{:<6} {:<16} {:<7} {:>5} {:>9} {:>7} {:>10.4} {:>10.4} {:>14.4e} {:>14.4e}",
                                info.kind,
                                resolved.name(),
                                precision.name(),
                                block_size,
                                n,
                                args.steps,
                                per_step * 1e3,
                                fastest * 1e3,
                                atom_steps,
                                pairs
                            );
                        }
                    }
                }
            }
        }
    }
    if let (false, Some(mb)) = (args.json, peak_rss_mb()) {
        println!("peak resident memory: {mb:.0} MB");
    }
    Ok(())
}
