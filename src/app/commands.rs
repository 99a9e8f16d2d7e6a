//! The messages between the UI and the simulation thread: [`SimCommand`] goes to the
//! simulation, [`SimReport`] comes back. Nothing else crosses (positions travel through
//! [`super::frames::FrameSlots`]). Every command is applied between two `advance` calls, so a
//! shape drawn or a parameter changed acts from the next chunk of steps on.

use crate::analysis::Histogram;
use crate::physics::params::SimParams;
use crate::physics::sim_box::SimBox;
use crate::scene::Scene;
use crate::shapes::Shape;
use crate::sim::{
    AtomSelection, AtomState, BackendChoice, BackendInfo, CaughtAtoms, ColourScalar, Snapshot, Telemetry,
};

/// How the simulation thread spends its time between displayed frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum PaceMode {
    /// The default: the display keeps its rate and the simulation gets all the time drawing
    /// does not need (chunks sized to one display frame, backing off only while the display
    /// falls below its rate; see `sim_thread/pacing.rs`).
    #[default]
    Fill,
    /// `steps_per_frame` steps per displayed frame: slow motion, or a pace to compare.
    Fixed,
    /// Flat out in chunks of `steps_per_frame`, whatever the display does (tests, benches).
    Unlimited,
}

/// How fast the simulation thread runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pace {
    /// Steps advanced per published frame (`Fixed`), or per chunk (`Unlimited`).
    pub steps_per_frame: u64,
    /// The display's frame rate as measured (what `Fixed` paces to).
    pub frame_hz: f64,
    /// The rate the display should keep (the monitor's refresh rate): `Fill` backs off while
    /// the display falls below [`DISPLAY_KEEP`] of it.
    pub target_hz: f64,
    pub mode: PaceMode,
}

/// The share of its target rate the display must keep under `Fill` (55 of 60 frames/s).
pub const DISPLAY_KEEP: f64 = 0.92;

impl Default for Pace {
    fn default() -> Self {
        Pace { steps_per_frame: 10, frame_hz: 60.0, target_hz: 60.0, mode: PaceMode::Fill }
    }
}

impl Pace {
    /// Flat out in chunks of `steps` (tests and benches).
    pub fn unlimited(steps: u64) -> Pace {
        Pace { steps_per_frame: steps, mode: PaceMode::Unlimited, ..Pace::default() }
    }
}

/// Which histograms to compute, and over what ranges (reduced units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnalysisRequest {
    pub rdf_bins: usize,
    pub rdf_r_max: f64,
    /// Centres of g(r) only inside this region (partners anywhere); None: the whole box.
    pub rdf_region: Option<crate::analysis::RdfRegion>,
    pub speed_bins: usize,
    pub speed_v_max: f64,
    pub density_bins: usize,
}

/// A trajectory the simulation thread writes while it runs: a frame now, then one every
/// `every` steps (exactly: chunks are split at those steps), until stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct TrajectorySpec {
    pub path: std::path::PathBuf,
    pub format: crate::io::trajectory::TrajectoryFormat,
    pub units: crate::units::UnitSystem,
    pub every: u64,
}

/// A trajectory being written, for the panel.
#[derive(Clone, Debug, PartialEq)]
pub struct TrajectoryStatus {
    pub path: std::path::PathBuf,
    pub every: u64,
    /// Frames handed to the writer so far.
    pub frames: u64,
}

/// Why a snapshot was asked for; comes back with it.
#[derive(Clone, Debug, PartialEq)]
pub enum SnapshotPurpose {
    /// Save the scene with its current atoms to this file.
    SaveScene(std::path::PathBuf),
    /// Write the current frame as extended XYZ to this file.
    ExportXyz(std::path::PathBuf),
    /// Write a LAMMPS input deck of the current state into this folder.
    ExportLammps(std::path::PathBuf),
    /// Kept by the UI so an atom edit can be undone.
    Undo(u64),
}

/// A change of the dye sources (`app/dye.rs`), applied in this order: every atom tagged with
/// a number of `clear` is untagged, the atoms inside each of `regions` and the atoms of
/// `atoms` (canonical index) take its tag, and `rakes` tag from now on (all the rakes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DyeEdit {
    pub rakes: Vec<crate::physics::dye::DyeRake>,
    pub clear: Vec<crate::physics::dye::Dye>,
    pub regions: Vec<(crate::physics::dye::DyeRegion, crate::physics::dye::Dye)>,
    pub atoms: Vec<(u32, crate::physics::dye::Dye)>,
}

/// What the UI asks of the simulation thread.
#[derive(Debug)]
pub enum SimCommand {
    /// Play (true) or pause (false).
    Run(bool),
    /// Advance this many steps now, then stay paused.
    Step(u64),
    SetPace(Pace),
    /// The display's measured frame rate, once a second (the `Fill` pace gives way while it is
    /// below the target).
    DisplayRate {
        fps: f64,
    },
    /// Any parameter: dt, thermostat, target T, forces, algorithm, precision, block size.
    SetParams(Box<SimParams>),
    /// Replace the obstacles; atoms caught inside are removed or pushed out.
    SetObstacles {
        shapes: Vec<Shape>,
        caught: CaughtAtoms,
    },
    RemoveAtoms(AtomSelection),
    /// Drag the piston toward this height (sigma), or release it (None).
    DragPiston(Option<f64>),
    AddAtoms(AtomState),
    /// Build this scene (atoms, box, parameters, obstacles) and start over from it.
    Load {
        scene: Box<Scene>,
        backend: BackendChoice,
    },
    /// Move the running system to another backend, keeping its state.
    SwitchBackend(BackendChoice),
    SetColour(ColourScalar),
    Analyse(AnalysisRequest),
    TakeSnapshot(SnapshotPurpose),
    Restore(Box<Snapshot>),
    /// Start writing a trajectory (finishing any running one), or stop (None). Closing the
    /// app finishes a running trajectory too.
    Trajectory(Option<TrajectorySpec>),
    /// Sample flow fields with these settings (sigma, tau), or stop (None).
    Fields(Option<crate::flow::FieldSpec>),
    /// Sample for a transport measurement with this plan from the current step on, or stop
    /// (None). While it samples, edits that change the dynamics (parameters, obstacles, atoms
    /// added or removed, a restore, a load, a backend switch, a rollback) restart it at the
    /// step they happen, reported by [`SimReport::TransportStarted`].
    Transport(Option<crate::transport::TransportSpec>),
    /// Change the dye sources: the rakes from now on, and the tags to clear and set now.
    Dye(DyeEdit),
    /// Publish positions into these shared GPU buffers (zero-copy), or back to host staging.
    UseSlots(Option<std::sync::Arc<crate::interop::SharedSlots>>),
    /// The renderer's wgpu device: a wgpu backend runs there from now on (a running one moves
    /// onto it), so its positions can be drawn where they are.
    UseDevice(std::sync::Arc<crate::sim::gpu::device::SimDevice>),
    /// Instant replay: keep keyframes or not, resume from a stored frame.
    Replay(crate::app::replay::states::ReplayCommand),
    Shutdown,
}

/// What the simulation thread is, for the status bar and panels.
#[derive(Clone, Debug, PartialEq)]
pub struct SimStatus {
    pub info: BackendInfo,
    /// Why this backend runs (e.g. "CPU backend: no usable CUDA device (...)").
    pub why: String,
    pub n_atoms: usize,
    pub step: u64,
    pub time: f64,
    pub running: bool,
    pub params: SimParams,
    pub sim_box: SimBox,
    pub n_obstacles: usize,
    /// Steps per second over the last second of wall time.
    pub steps_per_s: f64,
    /// How positions reach the renderer: "host staging", "zero-copy" (CUDA through Vulkan
    /// external memory) or "zero-copy (same device)" (the wgpu backend on the renderer's device).
    pub position_path: &'static str,
    /// The backend runs on the renderer's own wgpu device (slots there can be written).
    pub on_render_device: bool,
    /// Bytes of device memory the backend holds (`Backend::device_bytes`).
    pub device_bytes: Option<usize>,
    /// How the pair forces are found now (`Backend::pair_search`: after any fallback).
    pub pair_search: &'static str,
    /// The trajectory being written, if any.
    pub trajectory: Option<TrajectoryStatus>,
}

/// g(r), speed histogram and density profile at one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    pub step: u64,
    /// Temperature (reduced) when measured, for the Maxwell-Boltzmann curve.
    pub temperature: f64,
    pub rdf: Option<Histogram>,
    /// The region g(r) was computed over (None: the whole box), and why it could not be.
    pub rdf_region: Option<crate::analysis::RdfRegion>,
    pub rdf_error: Option<String>,
    pub speed: Option<Histogram>,
    pub density: Option<Histogram>,
    /// (mass, fraction of the atoms) per species present, for the Maxwell-Boltzmann curve.
    pub masses: Vec<(f64, f64)>,
    /// The simulation thread's time computing it (the simulation waits meanwhile).
    pub cost: std::time::Duration,
}

/// What the simulation thread tells the UI.
#[derive(Debug)]
pub enum SimReport {
    Status(Box<SimStatus>),
    Telemetry(Vec<Telemetry>),
    Analysis(Box<Analysis>),
    Snapshot {
        purpose: SnapshotPurpose,
        snapshot: Box<Snapshot>,
        species: Vec<String>,
    },
    /// Something the person should know (atoms caught by a shape, a backend switch).
    Notice(String),
    /// Something failed; the simulation is paused where it makes sense.
    Error(String),
    /// A scene was loaded: its document as built (the UI keeps it for saving).
    Loaded(Box<Scene>),
    /// The shared buffers hold fewer atoms than this: allocate bigger ones.
    NeedSlots(usize),
    /// The newest finished window of the flow fields.
    Fields(Box<crate::flow::Fields>),
    /// Flow-field sampling was refused and is off.
    FieldsOff,
    /// Transport sampling (re)started at `step`: records from before it are void. `why` says
    /// what restarted it (None: it was asked for).
    TransportStarted {
        step: u64,
        why: Option<String>,
    },
    /// Transport records taken after a chunk (with the species counts), of the sampling that
    /// started at `since`.
    Transport {
        since: u64,
        samples: Box<crate::transport::TransportSamples>,
    },
    /// Transport sampling was refused or failed (the backend's reason) and is off.
    TransportOff(String),
    /// Instant replay: keyframes, parameter changes, the outcome of a resume.
    Replay(crate::app::replay::states::ReplayReport),
}
