//! The desktop app: state and per-frame logic, apart from any window. [`App::ui`] draws one
//! frame into an egui `Ui` (panels from `crate::ui`, the 3D view through a paint callback) and
//! talks to the simulation thread only through commands and reports. The window shell
//! (`window.rs`), the headless loop (`headless.rs`) and egui_kittest tests all drive the same
//! `App`, so what is tested is what people run.
//!
//! - `commands.rs`: the messages; `sim_thread.rs`: the simulation thread; `frames.rs`: the
//!   newest-frame hand-over of positions.
//! - `actions.rs`: what UI gestures and keys do (parameters, tools, undo, files, captures).
//! - `settings.rs` (persisted), `undo.rs`, `tools.rs`, `plots.rs`: state pieces.
//! - `eos.rs`: the equation-of-state sweep's settings and its worker thread.
//! - `measure.rs`: the Measure panel's transport measurement of the running simulation
//!   (`measure_files.rs`: its text and CSV).
//! - `capture.rs`: screenshots and recordings; `painter.rs`: egui + the view on a wgpu target.
//! - `replay/`: instant replay (the recent past kept within a budget, the timeline's actions).
//! - `reports.rs`: what the simulation thread's reports change; `view.rs`: the camera, the
//!   overlay's content and what the renderer draws; `streaming.rs`: positions handed to the
//!   renderer without the host (zero-copy slots, the shared wgpu device).
//!
//! Must not touch backend internals (only `sim::Backend` through the thread) or GPU code
//! beyond handing the renderer a `ViewCallback`.

pub mod actions;
pub mod capture;
pub mod commands;
pub mod dye;
pub mod eos;
pub mod exports;
pub mod files;
pub mod flow;
pub mod force_plots;
pub mod frames;
pub mod gallery;
pub mod headless;
pub mod measure;
pub mod measure_files;
pub mod painter;
pub mod plots;
pub mod probe;
pub mod replay;
mod reports;
pub mod settings;
pub mod sim_thread;
pub mod species;
mod streaming;
pub mod tools;
pub mod trajectory;
pub mod undo;
mod view;
pub mod wake;
pub mod window;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use self::capture::Capture;
use self::commands::{AnalysisRequest, Pace, SimCommand, SimReport, SimStatus, SnapshotPurpose};
use self::plots::Plots;
use self::settings::Settings;
use self::sim_thread::SimHandle;
use self::tools::Tools;
use self::undo::History;
use crate::physics::params::SimParams;
use crate::physics::sim_box::SimBox;
use crate::render::overlay_layout::{self, Content, Placement};
use crate::render::view::{PositionFrame, SceneGeometry};
use crate::render::{Camera, CameraMode};
use crate::scene::reinit::{self, InitialState};
use crate::scene::{self, Scene};
use crate::shapes::Shape;
use crate::sim::{BackendChoice, Snapshot, Telemetry};

/// How the app starts.
#[derive(Clone, Debug, Default)]
pub struct AppOptions {
    /// Scene to open; else the last one (from the settings), else the default scene.
    pub scene: Option<PathBuf>,
    /// Backend to use instead of the remembered choice.
    pub backend: Option<BackendChoice>,
    /// Where settings are read and saved; None keeps them in memory only (tests, benches).
    pub settings_path: Option<PathBuf>,
    /// Start with the simulation paused.
    pub paused: bool,
    /// Re-initialise the scene with about this many atoms (liquid slab).
    pub atoms: Option<usize>,
    /// Settings to start from when `settings_path` is None.
    pub settings: Option<Settings>,
    /// Say on stderr which backend and position path run, and why, whenever they change.
    pub verbose: bool,
    /// The renderer's wgpu device, for a wgpu backend to run on (its positions then drawn
    /// zero-copy); the window and headless loops give it.
    pub gpu: Option<Arc<crate::sim::gpu::device::SimDevice>>,
}

/// A message shown for a few seconds (and kept in the log).
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub text: String,
    pub error: bool,
    pub at: Instant,
}

/// Heat / cool ramp of the target temperature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ramp {
    /// Kelvin per second of wall time (negative cools).
    pub k_per_s: f64,
    last: Instant,
    sent: Instant,
}

/// Frames per second of the UI, over the last second.
#[derive(Clone, Debug)]
pub struct FpsCounter {
    since: Instant,
    frames: u32,
    pub fps: f64,
}

impl Default for FpsCounter {
    fn default() -> Self {
        FpsCounter { since: Instant::now(), frames: 0, fps: 0.0 }
    }
}

impl FpsCounter {
    /// Counts a frame; true when a new rate was measured (once a second).
    fn tick(&mut self) -> bool {
        self.frames += 1;
        let dt = self.since.elapsed().as_secs_f64();
        if dt >= 1.0 {
            self.fps = self.frames as f64 / dt;
            self.frames = 0;
            self.since = Instant::now();
            return true;
        }
        false
    }
}

/// The whole app state.
pub struct App {
    pub settings: Settings,
    settings_path: Option<PathBuf>,
    /// The scene document (what Save writes): as loaded, with the current parameters and
    /// obstacles written back at save time.
    pub scene: Scene,
    pub scene_path: Option<PathBuf>,
    pub sim: SimHandle,
    /// The simulation thread's latest status (None until the first scene is loaded).
    pub status: Option<SimStatus>,
    /// Parameters as the panels edit them; sent on change.
    pub params: SimParams,
    pub pace: Pace,
    pub plots: Plots,
    pub last_telemetry: Option<Telemetry>,
    /// The piston is being dragged in the view (the top wall was grabbed).
    pub piston_drag: bool,
    pub tools: Tools,
    pub history: History,
    /// Obstacle shapes as the UI knows them (sent to the simulation on every change).
    pub shapes: Vec<Shape>,
    pub camera: Camera,
    /// The camera as the last fit left it: while it still is (the user has not moved it),
    /// a resized view is fitted again.
    fitted_camera: Option<Camera>,
    fitted_box: Option<SimBox>,
    /// The overlay the last fit kept a strip for: while the camera is untouched, a legend
    /// that changes (the Flow view turned on, another colour map) is fitted again.
    fitted_overlay: Option<Content>,
    /// Where the overlay (legends, scale bar) was painted last frame, in egui points.
    pub overlay: Option<Placement>,
    /// The box the tank is drawn for (follows every change).
    drawn_box: Option<SimBox>,
    /// Newest positions (host staging path), the step they are from, and their sequence number.
    pub frame: Option<PositionFrame>,
    pub frame_step: u64,
    retiring_frames: Vec<PositionFrame>,
    frame_seq: u64,
    /// Tank and obstacle geometry as drawn, and its sequence number.
    geometry: (u64, SceneGeometry),
    pending_scene: bool,
    pub messages: Vec<Message>,
    pub help_open: bool,
    pub ui_hidden: bool,
    pub fps: FpsCounter,
    analysis_due: Instant,
    analysis_pending: bool,
    /// Snapshots kept for undoing atom edits.
    snapshots: HashMap<u64, Snapshot>,
    next_snapshot_id: u64,
    atom_edit_before: Option<u64>,
    /// Canonical index of the atom held by the drag tool.
    pub grabbed: Option<u32>,
    /// The g(r) region drawn with the g(r) region tool, and whether g(r) uses it.
    pub rdf_region: Option<crate::analysis::RdfRegion>,
    pub rdf_use_region: bool,
    pub ramp: Option<Ramp>,
    pub capture: Capture,
    /// Atom count and initial state chosen for re-initialising.
    pub reinit_atoms: usize,
    pub reinit_state: InitialState,
    /// Species and fractions for re-initialising, as typed ("Ar 0.7, Kr 0.3").
    pub reinit_composition: String,
    /// Frames drawn since start.
    pub frames_drawn: u64,
    /// Size of the 3D view last frame, in pixels.
    pub view_size: [u32; 2],
    /// Where the 3D view was last frame, in egui points.
    pub view_rect: egui::Rect,
    /// Pixels per egui point in the view last frame.
    pub view_ppp: f32,
    /// Size of the whole window last frame, in pixels.
    pub window_size_px: [u32; 2],
    /// Zero-copy streaming (CUDA backend on the GPU that draws), why it is off, shared buffers
    /// being retired (kept until the simulation surely stopped writing them), frames counted
    /// for the slot protocol, and when the display last changed by each path.
    pub interop: Option<crate::interop::Interop>,
    pub interop_note: String,
    interop_failed: bool,
    /// Auto takes the wgpu backend here (a hardware GPU, no CUDA): scenes naming no precision
    /// open in single.
    auto_wgpu: bool,
    retired: Vec<(Instant, crate::interop::Interop)>,
    need_slots: usize,
    gpu_frame: u64,
    last_slot_seq: u64,
    last_slot_change: Option<Instant>,
    last_host_display: Option<Instant>,
    pub verbose: bool,
    /// Background jobs (saving files): name and handle.
    pub tasks: Vec<(String, std::thread::JoinHandle<Result<String, String>>)>,
    /// The equation-of-state sweep (its own worker and backend).
    pub eos: eos::EosState,
    /// The flow layer: sampling, the newest window, its geometry.
    pub flow: flow::FlowState,
    /// The probe line, its profile's windows, the viscosity readout's data.
    pub probe: probe::ProbeState,
    /// The Measure panel: its settings and the current or last transport measurement.
    pub measure: measure::MeasureState,
    /// The examples gallery (opened by itself on the first launch).
    pub gallery: gallery::GalleryState,
    /// Instant replay: the recent past and the timeline's state.
    pub replay: replay::Replay,
    /// Dye sources and pathlines.
    pub dye: dye::DyeState,
}

/// Analysis (g(r), histograms) is refreshed this often while the plots show.
const ANALYSIS_PERIOD: Duration = Duration::from_millis(250);
/// Analysis waits this many times its own cost (on the simulation thread) before it is asked
/// for again.
const ANALYSIS_COST_FACTOR: u32 = 100;

impl App {
    /// Opens the app: settings, the scene (falling back to the default scene with a message
    /// when it cannot be read), and the simulation thread.
    pub fn new(opts: AppOptions) -> App {
        let mut messages = Vec::new();
        let mut note = |text: String, error: bool| messages.push(Message { text, error, at: Instant::now() });
        let settings = match &opts.settings_path {
            Some(p) => {
                let (s, problem) = Settings::load(p);
                if let Some(problem) = problem {
                    note(problem, true);
                }
                s
            }
            None => opts.settings.clone().unwrap_or_default(),
        };
        let wanted = opts.scene.clone().or_else(|| settings.last_scene.clone());
        let (mut scene, scene_path) = match &wanted {
            Some(path) => match scene::load(Some(path)) {
                // A built-in example has no file to save into.
                Ok(s) => (s, scene::preset_named(path).is_none().then(|| path.clone())),
                Err(e) => {
                    note(format!("{e}; opened the default scene instead"), true);
                    (scene::default_scene(), None)
                }
            },
            None => (scene::default_scene(), None),
        };
        let backend = opts.backend.unwrap_or(settings.backend);
        if let Some(n) = opts.atoms {
            match reinit::reinitialise(&scene, n, InitialState::LiquidSlab) {
                Ok(s) => scene = s,
                Err(e) => note(e, true),
            }
        }
        // Auto on a hardware GPU without CUDA takes the wgpu backend: a scene naming no
        // precision then runs in single, the one it runs.
        let auto_wgpu = crate::sim::auto_prefers_wgpu(opts.gpu.as_ref());
        let scene = actions::with_app_defaults_on(scene, backend, auto_wgpu);
        let pace = Pace { steps_per_frame: settings.steps_per_frame, mode: settings.pace, ..Pace::default() };
        let mut settings = settings;
        if scene.species.len() > 1 {
            settings.view.colour_by = crate::render::ColourBy::Species;
        }
        let colour = settings.view.colour_by.scalar();
        let sim = SimHandle::spawn_on(scene.clone(), backend, pace, colour, !opts.paused, opts.gpu.clone());
        let params = scene.sim_params();
        let shapes = scene.obstacles.clone();
        let sim_box = scene.sim_box();
        let camera = Camera::fit(settings.camera_mode, &sim_box, 16.0 / 9.0);
        let plots = Plots::new(settings.rdf_window);
        let mut app = App {
            reinit_atoms: 0,
            reinit_state: InitialState::LiquidSlab,
            reinit_composition: species::composition_text(&scene),
            settings,
            settings_path: opts.settings_path,
            scene,
            scene_path,
            sim,
            status: None,
            params,
            pace,
            plots,
            last_telemetry: None,
            piston_drag: false,
            tools: Tools::default(),
            history: History::default(),
            shapes,
            camera,
            fitted_camera: None,
            fitted_box: None,
            fitted_overlay: None,
            overlay: None,
            drawn_box: None,
            frame: None,
            frame_step: 0,
            retiring_frames: Vec::new(),
            frame_seq: 0,
            geometry: (1, Arc::new((sim_box, Vec::new(), None))),
            pending_scene: true,
            messages,
            help_open: false,
            ui_hidden: false,
            fps: FpsCounter::default(),
            analysis_due: Instant::now(),
            analysis_pending: false,
            snapshots: HashMap::new(),
            next_snapshot_id: 1,
            atom_edit_before: None,
            grabbed: None,
            rdf_region: None,
            rdf_use_region: false,
            ramp: None,
            capture: Capture::default(),
            frames_drawn: 0,
            view_size: [1, 1],
            window_size_px: [1, 1],
            view_rect: egui::Rect::NOTHING,
            view_ppp: 1.0,
            tasks: Vec::new(),
            eos: eos::EosState::new(backend),
            verbose: opts.verbose,
            interop: None,
            interop_note: "no GPU device attached (host staging)".into(),
            interop_failed: false,
            auto_wgpu,
            retired: Vec::new(),
            need_slots: 0,
            gpu_frame: 0,
            last_slot_seq: 0,
            last_slot_change: None,
            last_host_display: None,
            flow: flow::FlowState::default(),
            probe: probe::ProbeState::default(),
            measure: measure::MeasureState::default(),
            gallery: gallery::GalleryState::default(),
            replay: replay::Replay::default(),
            dye: dye::DyeState::default(),
        };
        app.sync_flow_sampling();
        app.adopt_scene_view(app.scene.fields.clone(), app.scene.steps_per_frame);
        // The first launch (settings kept, none saved yet, no scene asked for) offers the examples.
        if app.settings_path.is_some() && !app.settings.examples_offered && opts.scene.is_none() {
            app.gallery.open = true;
        }
        app.settings.examples_offered = true;
        app
    }

    /// Shows `text` to the person (and prints errors to stderr for logs).
    pub fn notify(&mut self, text: impl Into<String>, error: bool) {
        let text = text.into();
        if error {
            eprintln!("argon-sandbox: {text}");
        }
        self.messages.push(Message { text, error, at: Instant::now() });
        if self.messages.len() > 200 {
            self.messages.remove(0);
        }
    }

    /// The newest error shown, if any (for tests and the status bar).
    pub fn last_error(&self) -> Option<&str> {
        self.messages.iter().rev().find(|m| m.error).map(|m| m.text.as_str())
    }

    /// True when the simulation is running.
    pub fn running(&self) -> bool {
        self.status.as_ref().is_some_and(|s| s.running)
    }

    /// Applies everything the simulation thread sent since the last frame.
    pub fn poll(&mut self) {
        self.eos.poll();
        for report in self.sim.drain() {
            self.handle_report(report);
        }
        self.poll_measurement();
        if let Some(f) = self.sim.frames.take_latest() {
            if f.display {
                self.frame_step = f.step;
                self.last_host_display = Some(Instant::now());
            }
            if let Some(old) = self.frame.replace(Arc::new(f.positions)) {
                self.retiring_frames.push(old);
            }
            self.frame_seq += 1;
            if f.display {
                self.replay_host_frame(f.step);
            }
            self.dye_frame();
        }
        // Frames the renderer may still hold go back to the simulation once it lets go: freeing
        // pinned memory here would stall the UI (it synchronises the GPU).
        let mut i = 0;
        while i < self.retiring_frames.len() {
            if Arc::strong_count(&self.retiring_frames[i]) == 1 {
                let f = self.retiring_frames.swap_remove(i);
                if let Ok(buf) = Arc::try_unwrap(f) {
                    self.sim.frames.give_back(buf);
                }
            } else {
                i += 1;
            }
        }
        if !self.sim.is_alive() && !self.messages.iter().any(|m| m.text.starts_with("the simulation thread stopped")) {
            self.notify("the simulation thread stopped unexpectedly; reopen the scene to start again", true);
        }
        self.finish_tasks();
    }

    /// Asks for fresh g(r) and histograms when the plots show and the last ones are old.
    fn request_analysis(&mut self) {
        if !self.settings.show_plots || self.ui_hidden || self.analysis_pending || Instant::now() < self.analysis_due {
            return;
        }
        let Some(s) = &self.status else { return };
        if !s.running && self.plots.analysis_step == s.step && self.plots.rdf_frames() > 0 {
            return;
        }
        let t = s.params.temperature.max(0.05);
        self.sim.send(SimCommand::Analyse(AnalysisRequest {
            rdf_bins: 100,
            rdf_r_max: 4.0,
            rdf_region: if self.rdf_use_region { self.rdf_region } else { None },
            speed_bins: 60,
            speed_v_max: 5.0 * t.sqrt(),
            density_bins: 60,
        }));
        self.analysis_pending = true;
    }

    /// Draws one frame of the whole app into `ui`.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        self.poll();
        self.replay_tick();
        self.update_ramp();
        crate::ui::shortcuts(self, ui.ctx());
        crate::ui::app_ui(self, ui);
        self.request_analysis();
        if self.fps.tick() {
            self.sim.send(SimCommand::DisplayRate { fps: self.fps.fps });
        }
        self.frames_drawn += 1;
        let pace_hz = if self.fps.fps > 1.0 { self.fps.fps.min(240.0) } else { 60.0 };
        if (self.pace.frame_hz - pace_hz).abs() > 5.0 {
            self.pace.frame_hz = pace_hz;
            self.sim.send(SimCommand::SetPace(self.pace));
        }
        ui.ctx().request_repaint();
    }

    /// Saves the settings (window shell calls this on exit).
    pub fn save_settings(&mut self) {
        self.settings.last_scene = self.scene_path.clone();
        self.settings.steps_per_frame = self.pace.steps_per_frame;
        self.settings.pace = self.pace.mode;
        self.settings.rdf_window = self.plots.rdf_window;
        if let Some(p) = &self.settings_path
            && let Err(e) = self.settings.save(p)
        {
            eprintln!("argon-sandbox: could not save settings to {}: {e}", p.display());
        }
    }

    fn snapshot_arrived(&mut self, purpose: SnapshotPurpose, snapshot: Snapshot, species: Vec<String>) {
        match purpose {
            SnapshotPurpose::Undo(id) => {
                let live: Vec<u64> = self.history.snapshot_ids().collect();
                if self.atom_edit_before == Some(id) || live.contains(&id) || id + 1 >= self.next_snapshot_id {
                    self.snapshots.insert(id, snapshot);
                }
            }
            SnapshotPurpose::SaveScene(path) => self.save_scene_with_atoms(path, snapshot),
            SnapshotPurpose::ExportXyz(path) => self.export_xyz(path, snapshot, species),
            SnapshotPurpose::ExportLammps(dir) => self.export_lammps(dir, snapshot),
        }
    }

    fn finish_tasks(&mut self) {
        let mut i = 0;
        while i < self.tasks.len() {
            if self.tasks[i].1.is_finished() {
                let (name, handle) = self.tasks.remove(i);
                match handle.join() {
                    Ok(Ok(text)) => self.notify(text, false),
                    Ok(Err(text)) => self.notify(format!("{name}: {text}"), true),
                    Err(_) => self.notify(format!("{name} failed unexpectedly"), true),
                }
            } else {
                i += 1;
            }
        }
    }
}

impl Drop for App {
    fn drop(&mut self) {
        self.capture.stop_recording();
        if let Some(mut job) = self.replay.save.take() {
            let _ = job.wait();
        }
        for (_, t) in self.tasks.drain(..) {
            let _ = t.join();
        }
    }
}

/// Whether two boxes differ only by the breathing of constant-pressure Monte Carlo (every
/// edge within 15%, the same boundaries): the camera then stays where it is.
fn similar_box(a: &SimBox, b: &SimBox) -> bool {
    let (la, lb) = (a.length(), b.length());
    a.periodic == b.periodic && (0..3).all(|k| (la[k] - lb[k]).abs() <= 0.15 * la[k].abs().max(1e-12))
}
