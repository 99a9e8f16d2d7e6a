//! The simulation thread: owns the backend, applies [`SimCommand`]s between chunks of steps,
//! publishes positions into [`FrameSlots`] after every chunk and sends telemetry, analysis
//! and status back. By default it fills each display frame with steps (`pacing.rs`), or paces
//! itself to `steps_per_frame` x the display's frame rate, or runs flat out, on its own clock:
//! it never waits for the renderer, and the UI never waits for it.
//!
//! This file holds [`SimHandle`] (the UI's end), the `Worker` and its main loop (`run`,
//! `chunk`); the rest of the worker lives in child modules, each an `impl Worker` block:
//!
//! - `handle_commands.rs`: applying commands (load, switch backend, edits, analysis);
//! - `safety.rs`: rollback checkpoints, host copies, blow-up rollback, the CPU hand-over;
//! - `pacing.rs`: waiting for the next paced frame, the status reports;
//! - `publish.rs`: publishing positions (host staging or zero-copy slots), trajectories;
//! - `gpu.rs`: the wgpu backend on the renderer's device (taking the device, moving a
//!   running wgpu backend onto it) and leaving the wgpu backend for one that runs an edit
//!   it refuses;
//! - `fields.rs`: flow-field sampling settings and sending finished windows;
//! - `transport.rs`: transport sampling for a measurement, restarted by edits, and sending
//!   its records;
//! - `replay.rs`: keyframes on a schedule of steps and control changes for instant replay,
//!   and resuming from them.
//! - `dye.rs`: dye sources (rakes kept for every backend, tags set through a snapshot).

mod dye;
mod fields;
mod gpu;
mod handle_commands;
pub mod pacing;
mod publish;
mod replay;
mod safety;
mod transport;

use pacing::aligned_chunk;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::commands::{Pace, PaceMode, SimCommand, SimReport};
use super::frames::FrameSlots;
use super::trajectory::Recorder;
use crate::physics::obstacles::ObstacleField;
use crate::physics::sim_box::SimBox;
use crate::scene::Scene;
use crate::shapes::Shape;
use crate::sim::gpu::device::SimDevice;
use crate::sim::{Backend, BackendChoice, CaughtAtoms, ColourScalar, SimError};

/// The UI's end of the simulation thread. Dropping it stops and joins the thread.
pub struct SimHandle {
    tx: Sender<SimCommand>,
    reports: Receiver<SimReport>,
    pub frames: Arc<FrameSlots>,
    join: Option<JoinHandle<()>>,
}

impl SimHandle {
    /// Starts the thread and asks it to load `scene` on `backend`.
    pub fn spawn(scene: Scene, backend: BackendChoice, pace: Pace, colour: ColourScalar, running: bool) -> SimHandle {
        Self::spawn_on(scene, backend, pace, colour, running, None)
    }

    /// As [`SimHandle::spawn`], with a wgpu backend on `gpu` (the renderer's device) when given.
    pub fn spawn_on(
        scene: Scene,
        backend: BackendChoice,
        pace: Pace,
        colour: ColourScalar,
        running: bool,
        gpu: Option<Arc<SimDevice>>,
    ) -> SimHandle {
        let (tx, rx) = channel();
        let (report_tx, reports) = channel();
        let frames = Arc::new(FrameSlots::default());
        let worker = Worker {
            rx,
            tx: report_tx,
            frames: frames.clone(),
            backend: None,
            why: String::new(),
            shapes: Vec::new(),
            running,
            pace,
            colour,
            due: Instant::now(),
            chunk_per_frame: Duration::ZERO,
            fill: pacing::FillPacer::default(),
            rate_since: Instant::now(),
            rate_steps: 0,
            steps_per_s: 0.0,
            status_due: Instant::now(),
            slots: None,
            path: "host staging",
            asked_slots_for: 0,
            host_due: Instant::now(),
            pending: None,
            trajectory: None,
            checkpoint_due: Instant::now(),
            host_state: None,
            host_state_due: Instant::now(),
            caught: CaughtAtoms::Remove,
            fields: None,
            transport: None,
            transport_since: 0,
            gpu,
            replay: Default::default(),
            rakes: Vec::new(),
        };
        let _ = tx.send(SimCommand::Load { scene: Box::new(scene), backend });
        let join = std::thread::Builder::new()
            .name("simulation".into())
            .spawn(move || worker.run())
            .expect("the operating system refused to start the simulation thread");
        SimHandle { tx, reports, frames, join: Some(join) }
    }

    /// Sends a command; if the thread has ended the command is dropped (its error was reported).
    pub fn send(&self, cmd: SimCommand) {
        let _ = self.tx.send(cmd);
    }

    /// Reports received since the last call, oldest first.
    pub fn drain(&self) -> Vec<SimReport> {
        self.reports.try_iter().collect()
    }

    /// Waits up to `timeout` for the next report (for tests and headless drivers).
    pub fn wait(&self, timeout: Duration) -> Option<SimReport> {
        self.reports.recv_timeout(timeout).ok()
    }

    /// False once the thread has ended (after a panic in a backend, say).
    pub fn is_alive(&self) -> bool {
        self.join.as_ref().is_some_and(|j| !j.is_finished())
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        let _ = self.tx.send(SimCommand::Shutdown);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}

struct Worker {
    rx: Receiver<SimCommand>,
    tx: Sender<SimReport>,
    frames: Arc<FrameSlots>,
    backend: Option<Box<dyn Backend>>,
    why: String,
    shapes: Vec<Shape>,
    running: bool,
    pace: Pace,
    colour: ColourScalar,
    /// When the next paced frame is due.
    due: Instant,
    /// How long the last chunk took per display frame it advanced (pacing's catch-up test).
    chunk_per_frame: Duration,
    /// The `Fill` pace's chunk size and share of each frame.
    fill: pacing::FillPacer,
    rate_since: Instant,
    rate_steps: u64,
    steps_per_s: f64,
    status_due: Instant,
    /// Shared GPU buffers for zero-copy publishing, when the UI made them.
    slots: Option<Arc<crate::interop::SharedSlots>>,
    /// How the last frame was published.
    path: &'static str,
    /// Atom count bigger slots were last asked for.
    asked_slots_for: usize,
    /// With zero-copy, a host copy is still published now and then (picking, brushes).
    host_due: Instant,
    /// A slot written asynchronously, handed over once the write has finished:
    /// (slot, step, atoms).
    pending: Option<(usize, u64, usize)>,
    /// The trajectory being written while the simulation runs.
    trajectory: Option<Recorder>,
    /// When the backend next keeps a rollback checkpoint (after a chunk that ran clean).
    checkpoint_due: Instant,
    /// A host copy of the last good state of a GPU run, to continue on the CPU if the GPU
    /// fails, and when it is next refreshed.
    host_state: Option<crate::sim::Snapshot>,
    host_state_due: Instant,
    /// What happens to atoms inside a new shape (as last asked), for re-applying shapes.
    caught: CaughtAtoms,
    /// Flow-field sampling settings while the flow layer is on.
    fields: Option<crate::flow::FieldSpec>,
    /// Transport sampling while a measurement runs, and the step it (re)started at.
    transport: Option<crate::transport::TransportSpec>,
    transport_since: u64,
    /// The renderer's device, where a wgpu backend runs (its positions then drawn zero-copy).
    gpu: Option<Arc<SimDevice>>,
    /// Keyframes and parameter changes for instant replay.
    replay: replay::Keeper,
    /// The dye rakes, given to every backend the thread opens.
    rakes: Vec<crate::physics::dye::DyeRake>,
}

/// Obstacle grid spacing (sigma): DESIGN.md asks for at most 0.1.
const GRID_CELL: f64 = 0.1;

/// The obstacle field of `shapes` in box `b` (None without shapes).
fn bake(shapes: &[Shape], b: &SimBox) -> Option<Arc<ObstacleField>> {
    ObstacleField::bake(shapes, b, GRID_CELL).map(Arc::new)
}

enum Flow {
    Continue,
    Stop,
}

impl Worker {
    fn report(&self, r: SimReport) {
        let _ = self.tx.send(r);
    }

    fn run(mut self) {
        loop {
            let busy = self.running && self.backend.is_some();
            // Apply every queued command; when idle, sleep until one arrives.
            loop {
                let cmd = if busy {
                    match self.rx.try_recv() {
                        Ok(c) => c,
                        Err(std::sync::mpsc::TryRecvError::Empty) => break,
                        Err(_) => return,
                    }
                } else {
                    match self.rx.recv_timeout(Duration::from_millis(200)) {
                        Ok(c) => c,
                        Err(RecvTimeoutError::Timeout) => {
                            self.maybe_status(false);
                            break;
                        }
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                };
                if let Flow::Stop = self.apply(cmd) {
                    return;
                }
                if !self.running && self.pending.is_some() {
                    // Paused: what was published last must reach the display.
                    self.hand_over(true);
                }
                if !busy && self.running {
                    break;
                }
            }
            if self.running && self.backend.is_some() && self.pace.mode == PaceMode::Fill {
                let steps =
                    self.backend.as_ref().map_or(1, |b| aligned_chunk(b.step(), self.fill.steps(), b.step_grain()));
                let t = Instant::now();
                self.chunk(steps);
                if self.after_fill_chunk(steps, t.elapsed()) {
                    return;
                }
            } else if self.running && self.backend.is_some() {
                let frames = self.frames_due();
                let t = Instant::now();
                self.chunk(self.pace.steps_per_frame * frames);
                self.chunk_per_frame = t.elapsed() / frames as u32;
                if self.wait_until_due(frames) {
                    return;
                }
            }
        }
    }

    /// Advances `steps`, publishes the frame, sends telemetry. A blow-up rolls back to the
    /// last checkpoint and pauses; a failed GPU hands over to the CPU; either is reported.
    fn chunk(&mut self, steps: u64) {
        let result = self.advance_recording(steps);
        let Some(b) = self.backend.as_mut() else { return };
        let telemetry: Vec<_> = b
            .drain_telemetry()
            .into_iter()
            .filter(|t| t.total_energy().is_finite() && t.pressure.is_finite())
            .collect();
        if !telemetry.is_empty() {
            let _ = self.tx.send(SimReport::Telemetry(telemetry));
        }
        self.rate_steps += steps;
        if let Err(e) = result {
            self.running = false;
            self.replay_dirty();
            match e {
                SimError::BlowUp { .. } => {
                    self.roll_back(&e);
                    self.restart_transport("rolled back after a blow-up");
                }
                SimError::Device(_) => {
                    self.continue_on_cpu(&e);
                    self.restart_transport("the GPU failed; continued on the CPU backend");
                }
                _ => self.report(SimReport::Error(format!("{e}. The simulation is paused."))),
            }
            self.publish();
            self.maybe_status(true);
            return;
        }
        self.keep_good_state();
        self.send_fields();
        self.send_transport();
        // When the display has not taken the last frame yet, copying a newer one out would only
        // slow the simulation down (16 MB per frame at a million atoms): skip it, unless this
        // chunk ends a run of steps and its state must be shown.
        let unread = match &self.slots {
            Some(s) if self.path.starts_with("zero-copy") => s.has_unread(),
            _ => self.frames.has_unread(),
        };
        if !(self.running && unread) {
            self.publish();
        }
        self.maybe_status(false);
    }
}
