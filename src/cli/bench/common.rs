//! What every `bench` mode shares: the arguments, the LAMMPS `in.lj` system, the scenes
//! `--scene` names, medians and the peak memory.

use anyhow::Result;
use clap::Args;

use crate::physics::cutoff::Cutoff;
use crate::physics::init::{LatticeKind, lattice_box, maxwell_boltzmann};
use crate::physics::params::{Algorithm, SimParams, Thermostat};
use crate::physics::real::Precision;
use crate::physics::sim_box::SimBox;
use crate::sim::{AtomState, BackendChoice};

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
    /// With --interactive: the one-click Flow view on (vorticity and streamlines from flow
    /// fields sampled every 10 steps over windows of 5 tau).
    #[arg(long, requires = "interactive")]
    pub flow_view: bool,
    /// With --interactive: instant replay `on` (the app's default budget: every drawn frame
    /// copied into the replay's ring, full states kept at intervals) or `off`, to measure what
    /// keeping the replay costs the app's steps per frame; or `scrub`: on, and once it holds
    /// frames the timeline is scrubbed while timing (a new stored frame every display frame,
    /// back and forth, the live simulation running on), with frame-time percentiles.
    #[arg(long, value_name = "on|off|scrub", default_value = "on", value_parser = ["on", "off", "scrub"])]
    pub replay: String,
    /// With --flow-view: the colour layer shown (a field's name, e.g. `dye` for the dye
    /// fraction, `vorticity`), to measure what a layer costs.
    #[arg(long, value_name = "FIELD", requires = "flow_view")]
    pub layer: Option<String>,
    /// With --interactive: a fixed pace of this many MD steps per displayed frame; absent, the
    /// app's default pace (the display keeps its rate, the simulation fills the rest).
    #[arg(long)]
    pub steps_per_frame: Option<u64>,
    /// Measure a scene instead of the in.lj system: a built-in example's name (`default`, the
    /// app's tank; `argon-sandbox examples` lists them) or a scene file, with its own thermostat, walls, gravity and obstacles, re-initialised as a
    /// liquid slab to each --n like the app's Re-initialise (--n 0: as written). The
    /// simulation alone, with no rendering; with --interactive, the whole app with this scene
    /// open (a scene with `fields` opens in the Flow view, as in the app).
    #[arg(long, value_name = "NAME|FILE", conflicts_with_all = ["render", "publish"])]
    pub scene: Option<std::path::PathBuf>,
    /// Time one g(r) instead (100 bins to 4 sigma, the app's request), whole box and over the
    /// middle half of the box, for each --n, --backend and --precision (median of --repeats).
    #[arg(long, conflicts_with_all = ["render", "interactive", "publish", "scene"])]
    pub rdf: bool,
    /// Sample flow fields every this many steps while timing (bins of 2 sigma through the
    /// depth, windows of 50 tau), to measure what sampling costs; with --interactive, the
    /// Flow view's sampling interval.
    #[arg(long, value_name = "STEPS", conflicts_with_all = ["render", "publish"])]
    pub field_every: Option<u64>,
    /// Measure a transport coefficient while timing (the sampling `measure` does: diffusion's
    /// MSD and VACF origins for lags to 20 tau, or viscosity's pressure tensor every 5 steps),
    /// to measure what it costs.
    #[arg(long, value_enum, value_name = "QUANTITY", conflicts_with_all = ["render", "interactive", "publish", "rdf"])]
    pub transport: Option<crate::cli::measure::Quantity>,
    /// Add dye to what is measured (issue 47): a region tagging the quarter of the atoms in
    /// x from lo + 0.5 L to lo + 0.75 L at step 0, and a rake across the whole height at
    /// x = lo + 0.25 L tagging every atom crossing it, so that a run with and without gives
    /// the cost of dye on each backend. With --interactive the same region and rake are drawn
    /// in the app, as with the Dye tool.
    #[arg(long, conflicts_with_all = ["render", "publish", "rdf"])]
    pub dye: bool,
    /// Neighbour-list skins to measure (sigma; default: in.lj's 0.3, or the scene's own).
    #[arg(long, num_args = 1.., value_name = "SIGMA", conflicts_with_all = ["render", "interactive", "publish", "rdf"])]
    pub skin: Option<Vec<f64>>,
}

/// How `bench --render` draws atoms.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawPath {
    Auto,
    Splat,
    Triangles,
}

/// The scene named by --scene, re-initialised to `n` atoms (0: as written), built.
pub fn scene_setup(which: &std::path::Path, n: usize) -> Result<crate::scene::SimSetup> {
    use crate::scene::reinit::{InitialState, reinitialise};
    let scene = crate::scene::load((which != std::path::Path::new("default")).then_some(which))?;
    let scene = if n == 0 {
        scene
    } else {
        reinitialise(&scene, n, InitialState::LiquidSlab).map_err(|e| anyhow::anyhow!("--n {n}: {e}"))?
    };
    scene.build().map_err(|e| anyhow::anyhow!("{}: {e}", which.display()))
}

/// The in.lj run's parameters (r_c 2.5 unshifted, skin 0.3, T* 1.44, NVE) with the chosen
/// algorithm, precision and CUDA block size.
pub fn in_lj_params(algorithm: Algorithm, precision: Precision, block_size: u32) -> SimParams {
    SimParams {
        cutoff: Cutoff::Absolute(2.5),
        shift: false,
        skin: 0.3,
        temperature: 1.44,
        thermostat: Thermostat::Nve,
        algorithm,
        precision,
        block_size,
        ..SimParams::default()
    }
}

/// The in.lj system with about `n` atoms.
pub fn in_lj_system(n: usize) -> (SimBox, AtomState) {
    let cells = ((n as f64 / 4.0).cbrt().round() as usize).max(3);
    let (b, pos) = lattice_box(LatticeKind::Fcc, 0.8442, [cells; 3]);
    let n = pos.len();
    let vel = maxwell_boltzmann(&vec![1.0; n], 1.44, 3.0 * n as f64 - 3.0, 87287, 0);
    (b, AtomState { positions: pos, velocities: vel, types: vec![0; n], ..Default::default() })
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 { v[m] } else { 0.5 * (v[m - 1] + v[m]) }
}

/// Peak resident memory of this process in MB (Linux), if known.
pub fn peak_rss_mb() -> Option<f64> {
    status_kb("VmHWM:").map(|kb| kb / 1024.0)
}

/// Resident memory of this process now, in bytes (Linux), if known.
pub fn rss_bytes() -> Option<f64> {
    status_kb("VmRSS:").map(|kb| kb * 1024.0)
}

/// Starts the peak-memory mark afresh at the current resident size (Linux; ignored where it
/// cannot), so the peak of one measured case is not an earlier, larger case's.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn status_kb(key: &str) -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `bench --dye`: tags the atoms in x from lo + 0.5 L to lo + 0.75 L with source 1 and
/// returns the rake (source 2) across the whole height at x = lo + 0.25 L.
pub fn bench_dye(
    sim_box: &crate::physics::sim_box::SimBox,
    atoms: &mut crate::sim::AtomState,
) -> crate::physics::dye::DyeRake {
    let (region, rake) = bench_dye_sources(sim_box);
    let positions = std::mem::take(&mut atoms.positions);
    region.tag(&positions, atoms.dye_mut(), 1);
    atoms.positions = positions;
    rake
}

/// The region and the rake `--dye` adds (the rake's tag 2), for the box `sim_box`.
pub fn bench_dye_sources(
    sim_box: &crate::physics::sim_box::SimBox,
) -> (crate::physics::dye::DyeRegion, crate::physics::dye::DyeRake) {
    use crate::physics::dye::{DyeRake, DyeRegion};
    let (lo, l) = (sim_box.lo, sim_box.length());
    let region = DyeRegion { min: [lo[0] + 0.5 * l[0], lo[1]], max: [lo[0] + 0.75 * l[0], sim_box.hi[1]] };
    let x = lo[0] + 0.25 * l[0];
    (region, DyeRake { a: [x, lo[1]], b: [x, sim_box.hi[1]], tag: 2 })
}
