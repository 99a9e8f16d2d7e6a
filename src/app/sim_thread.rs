//! The simulation thread: owns the backend, applies [`SimCommand`]s between chunks of steps,
//! publishes positions into [`FrameSlots`] after every chunk and sends telemetry, analysis
//! and status back. It paces itself to `steps_per_frame` x the display's frame rate (or runs
//! flat out) on its own clock: it never waits for the renderer, and the UI never waits for it.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::commands::{Analysis, AnalysisRequest, Pace, SimCommand, SimReport, SimStatus, TrajectorySpec};
use super::frames::FrameSlots;
use super::trajectory::Recorder;
use crate::physics::obstacles::ObstacleField;
use crate::physics::sim_box::SimBox;
use crate::scene::Scene;
use crate::shapes::Shape;
use crate::sim::{
    AtomState, Backend, BackendChoice, CaughtAtoms, ColourScalar, PositionTarget, SimError, open_backend, start_at,
};

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
}

/// Wall time between rollback checkpoints (device copies on CUDA).
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);
/// Wall time between host copies of a GPU run's state (a download each).
const HOST_STATE_EVERY: Duration = Duration::from_secs(5);

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
            if self.running && self.backend.is_some() {
                self.chunk(self.pace.steps_per_frame);
                if self.wait_until_due() {
                    return;
                }
            }
        }
    }

    /// Sleeps until the next paced frame, applying commands that arrive meanwhile. True when
    /// the thread must stop.
    fn wait_until_due(&mut self) -> bool {
        if self.pending.is_some() {
            self.hand_over(true);
        }
        if self.pace.unlimited || !self.running {
            self.due = Instant::now();
            return false;
        }
        let period = Duration::from_secs_f64(1.0 / self.pace.frame_hz.clamp(1.0, 1000.0));
        let now = Instant::now();
        self.due += period;
        if self.due + period * 6 < now {
            // Far behind (the simulation is slower than the display): do not try to catch up.
            self.due = now;
        }
        while let Some(left) = self.due.checked_duration_since(Instant::now()) {
            match self.rx.recv_timeout(left) {
                Ok(cmd) => {
                    if let Flow::Stop = self.apply(cmd) {
                        return true;
                    }
                    if !self.running {
                        return false;
                    }
                }
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return true,
            }
        }
        false
    }

    /// Advances `steps`, stopping at every trajectory frame on the way to write it.
    fn advance_recording(&mut self, steps: u64) -> Result<(), SimError> {
        let Some(b) = self.backend.as_mut() else { return Ok(()) };
        let mut left = steps;
        while left > 0 {
            let n = match &self.trajectory {
                Some(t) => left.min(t.next.saturating_sub(b.step()).max(1)),
                None => left,
            };
            b.advance(n)?;
            left -= n;
            if let Some(t) = self.trajectory.as_mut()
                && b.step() >= t.next
            {
                let snap = b.copy_state()?;
                if let Err(e) = t.send(snap) {
                    self.trajectory = None;
                    let _ = self.tx.send(SimReport::Error(e));
                }
            }
        }
        Ok(())
    }

    /// A new backend (load, switch): its state is good, so it is the first checkpoint.
    fn fresh_backend(&mut self) {
        self.host_state = None;
        self.host_state_due = Instant::now();
        self.take_checkpoint();
    }

    /// Keeps a rollback checkpoint now; the next one is due after [`CHECKPOINT_EVERY`].
    fn take_checkpoint(&mut self) {
        self.checkpoint_due = Instant::now() + CHECKPOINT_EVERY;
        if let Some(b) = self.backend.as_mut()
            && let Err(e) = b.checkpoint()
        {
            let _ = self.tx.send(SimReport::Error(format!("keeping a rollback checkpoint failed: {e}")));
        }
    }

    /// After a chunk that ran clean: a rollback checkpoint now and then, and for a GPU run a
    /// host copy now and then.
    fn keep_good_state(&mut self) {
        let now = Instant::now();
        if now >= self.checkpoint_due {
            self.take_checkpoint();
        }
        let Some(b) = self.backend.as_mut() else { return };
        if b.info().kind == "cuda" && now >= self.host_state_due {
            self.host_state_due = now + HOST_STATE_EVERY;
            match b.copy_state() {
                Ok(s) => self.host_state = Some(s),
                Err(e) => {
                    let _ = self.tx.send(SimReport::Error(format!("keeping a host copy of the state failed: {e}")));
                }
            }
        }
    }

    /// A blow-up: back to the newest checkpoint (obstacles re-applied to its atoms), paused,
    /// with what happened and what to change.
    fn roll_back(&mut self, e: &SimError) {
        let Some(b) = self.backend.as_mut() else { return };
        let outcome = b.rollback().and_then(|step| {
            if let Some(step) = step
                && !self.shapes.is_empty()
            {
                // The checkpoint may predate a shape drawn since: its atoms need the same care.
                b.set_obstacles(bake(&self.shapes, &b.sim_box()), self.caught)?;
                return Ok(Some(step));
            }
            Ok(step)
        });
        let msg = match outcome {
            Ok(Some(step)) => format!(
                "{e} Rolled back to step {step} and paused; your settings, shapes and atoms edits are kept. \
                 Change what the hint says, then press Play."
            ),
            Ok(None) => format!("{e} There is no checkpoint to roll back to; the simulation is paused. Reset it."),
            Err(r) => format!("{e} Rolling back failed too ({r}); the simulation is paused. Reset it."),
        };
        self.report(SimReport::Error(msg));
    }

    /// The GPU failed: continue on the CPU backend from the last good host copy.
    fn continue_on_cpu(&mut self, e: &SimError) {
        let Some(b) = self.backend.as_mut() else { return };
        let Some(snap) = self.host_state.take() else {
            self.report(SimReport::Error(format!(
                "{e}. The simulation is paused (no copy of its state to continue from)."
            )));
            return;
        };
        let params = b.params().clone();
        let field = bake(&self.shapes, &snap.sim_box);
        let opened = open_backend(BackendChoice::Cpu, snap.sim_box, params, &snap.atoms, field)
            .and_then(|(mut c, why)| c.restore(&snap).map(|()| (c, why)));
        match opened {
            Ok((c, why)) => {
                self.backend = Some(c);
                self.why = format!("{why}: the GPU failed");
                self.slots = None;
                self.pending = None;
                self.report(SimReport::Error(format!(
                    "The GPU failed ({e}). Continuing on the CPU backend from step {}; the simulation is paused.",
                    snap.step
                )));
            }
            Err(c) => self.report(SimReport::Error(format!(
                "The GPU failed ({e}) and the CPU backend could not take over ({c}). The simulation is paused."
            ))),
        }
    }

    /// Starts (finishing a running one) or stops the trajectory.
    fn set_trajectory(&mut self, spec: Option<TrajectorySpec>) {
        if let Some(mut old) = self.trajectory.take() {
            match old.finish() {
                Ok(m) => self.report(SimReport::Notice(m)),
                Err(e) => self.report(SimReport::Error(e)),
            }
        }
        let (Some(spec), Some(b)) = (spec, self.backend.as_mut()) else { return };
        let species = b.params().species.iter().map(|s| s.name.clone()).collect();
        let started = b.copy_state().map_err(|e| e.to_string()).and_then(|snap| Recorder::start(&spec, species, snap));
        match started {
            Ok(r) => {
                self.trajectory = Some(r);
                self.report(SimReport::Notice(format!(
                    "writing a trajectory to {} every {} steps",
                    spec.path.display(),
                    spec.every
                )));
            }
            Err(e) => self.report(SimReport::Error(format!("the trajectory could not start: {e}"))),
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
            match e {
                SimError::BlowUp { .. } => self.roll_back(&e),
                SimError::Device(_) => self.continue_on_cpu(&e),
                _ => self.report(SimReport::Error(format!("{e}. The simulation is paused."))),
            }
            self.publish();
            self.maybe_status(true);
            return;
        }
        self.keep_good_state();
        // When the display has not taken the last frame yet, copying a newer one out would only
        // slow the simulation down (16 MB per frame at a million atoms): skip it, unless this
        // chunk ends a run of steps and its state must be shown.
        let unread = match &self.slots {
            Some(s) if self.path == "zero-copy" => s.has_unread(),
            _ => self.frames.has_unread(),
        };
        if !(self.running && unread) {
            self.publish();
        }
        self.maybe_status(false);
    }

    fn publish(&mut self) {
        if self.publish_shared() && Instant::now() < self.host_due {
            return;
        }
        if self.path == "zero-copy" {
            self.host_due = Instant::now() + Duration::from_millis(250);
        }
        let Some(b) = self.backend.as_mut() else { return };
        let pinned = b.info().kind == "cuda";
        let mut buf = self.frames.buffer(b.n_atoms(), pinned);
        match b.write_positions(PositionTarget::Host(&mut buf[..]), self.colour) {
            Ok(()) => self.frames.publish_as(buf, b.step(), self.path != "zero-copy"),
            Err(e) => {
                self.frames.give_back(buf);
                self.report(SimReport::Error(format!("reading positions failed: {e}")));
            }
        }
    }

    /// Publishes into a shared slot when zero-copy is set up for this backend; true if done
    /// (or skipped because every slot is busy).
    fn publish_shared(&mut self) -> bool {
        // The previous frame must be handed over before another is started.
        if self.pending.is_some() && !self.hand_over(false) {
            return true;
        }
        let (Some(slots), Some(b)) = (self.slots.clone(), self.backend.as_mut()) else {
            self.path = "host staging";
            return false;
        };
        if b.info().kind != "cuda" {
            self.path = "host staging";
            return false;
        }
        let n = b.n_atoms();
        if n > slots.capacity {
            if self.asked_slots_for != n {
                self.asked_slots_for = n;
                let _ = self.tx.send(SimReport::NeedSlots(n));
            }
            self.path = "host staging";
            return false;
        }
        let Some(k) = slots.begin_write() else { return true };
        match b.write_positions_async(slots.ptrs[k], slots.capacity, self.colour) {
            Ok(()) => {
                self.pending = Some((k, b.step(), n));
                self.path = "zero-copy";
                // Usually finished already (the kernel takes microseconds); if not, the next
                // check hands it over.
                self.hand_over(false);
                true
            }
            Err(e) => {
                slots.abort_write();
                self.slots = None;
                self.path = "host staging";
                self.report(SimReport::Error(format!("zero-copy publishing failed, using host staging: {e}")));
                false
            }
        }
    }

    /// Hands the pending slot to the display if its write has finished (with `wait`, waits
    /// for it). True when nothing is pending any more.
    fn hand_over(&mut self, wait: bool) -> bool {
        let (Some((k, step, n)), Some(slots), Some(b)) = (self.pending, self.slots.clone(), self.backend.as_mut())
        else {
            self.pending = None;
            return true;
        };
        match b.positions_written(wait) {
            Ok(true) => {
                slots.finish_write(k, step, n);
                self.pending = None;
                true
            }
            Ok(false) => false,
            Err(e) => {
                slots.abort_write();
                self.pending = None;
                self.report(SimReport::Error(format!("zero-copy publishing failed: {e}")));
                true
            }
        }
    }

    /// Sends the status when `now` or when it is due (twice a second, with the step rate).
    fn maybe_status(&mut self, now: bool) {
        let t = Instant::now();
        let dt = t.duration_since(self.rate_since).as_secs_f64();
        if dt >= 0.5 {
            self.steps_per_s = self.rate_steps as f64 / dt;
            self.rate_steps = 0;
            self.rate_since = t;
        }
        if !self.running {
            self.steps_per_s = 0.0;
        }
        if !(now || t >= self.status_due) {
            return;
        }
        self.status_due = t + Duration::from_millis(500);
        let Some(b) = self.backend.as_ref() else { return };
        let status = SimStatus {
            info: b.info(),
            why: self.why.clone(),
            n_atoms: b.n_atoms(),
            step: b.step(),
            time: b.step() as f64 * b.params().dt,
            running: self.running,
            params: b.params().clone(),
            sim_box: b.sim_box(),
            n_obstacles: self.shapes.len(),
            steps_per_s: self.steps_per_s,
            position_path: self.path,
            trajectory: self.trajectory.as_ref().map(Recorder::status),
        };
        self.report(SimReport::Status(Box::new(status)));
    }

    fn apply(&mut self, cmd: SimCommand) -> Flow {
        match cmd {
            SimCommand::Shutdown => return Flow::Stop,
            SimCommand::Run(on) => {
                if !on && self.running {
                    // The last chunk's frame may have been skipped: show where it stopped.
                    self.publish();
                }
                self.running = on && self.backend.is_some();
                self.due = Instant::now();
                self.rate_since = Instant::now();
                self.rate_steps = 0;
                self.maybe_status(true);
            }
            SimCommand::Step(n) => {
                self.running = false;
                self.chunk(n.max(1));
                self.maybe_status(true);
            }
            SimCommand::SetPace(p) => self.pace = p,
            SimCommand::UseSlots(s) => {
                if self.pending.is_some() {
                    self.hand_over(true);
                }
                self.slots = s;
                self.asked_slots_for = 0;
                self.publish();
                self.maybe_status(true);
            }
            SimCommand::SetColour(c) => {
                self.colour = c;
                self.publish();
            }
            SimCommand::Load { scene, backend } => {
                // A new system ends the old one's trajectory.
                self.set_trajectory(None);
                self.load(&scene, backend)
            }
            SimCommand::Trajectory(spec) => {
                self.set_trajectory(spec);
                self.maybe_status(true);
            }
            SimCommand::SwitchBackend(choice) => self.switch_backend(choice),
            other => {
                let Some(b) = self.backend.as_mut() else {
                    self.report(SimReport::Error("no simulation is loaded".into()));
                    return Flow::Continue;
                };
                if let Err(e) = Self::edit(b.as_mut(), other, &mut self.shapes, &mut self.caught, &self.tx) {
                    self.report(SimReport::Error(e.to_string()));
                }
                self.publish();
                self.maybe_status(true);
            }
        }
        Flow::Continue
    }

    /// Commands that change the loaded system.
    fn edit(
        b: &mut dyn Backend,
        cmd: SimCommand,
        shapes: &mut Vec<Shape>,
        caught_policy: &mut CaughtAtoms,
        tx: &Sender<SimReport>,
    ) -> Result<(), SimError> {
        match cmd {
            SimCommand::SetParams(p) => b.set_params(*p)?,
            SimCommand::DragPiston(target) => b.drag_piston(target)?,
            SimCommand::SetObstacles { shapes: new, caught } => {
                *caught_policy = caught;
                let field = bake(&new, &b.sim_box());
                let n = b.set_obstacles(field, caught)?;
                *shapes = new;
                if n > 0 {
                    let what = match caught {
                        CaughtAtoms::Remove => "removed",
                        CaughtAtoms::PushOut => "pushed out",
                    };
                    let _ = tx.send(SimReport::Notice(format!("{n} atoms inside the shape were {what}")));
                }
            }
            SimCommand::RemoveAtoms(sel) => {
                b.remove_atoms(&sel)?;
            }
            SimCommand::AddAtoms(atoms) => {
                // The brush checked clearance against the last frame it saw; atoms have moved
                // since, so the current state decides (an overlap would blow the run up).
                let atoms = clear_of_current(b, atoms)?;
                if !atoms.is_empty() {
                    b.add_atoms(&atoms)?;
                }
            }
            SimCommand::Analyse(req) => {
                let a = analyse(b, &req)?;
                let _ = tx.send(SimReport::Analysis(Box::new(a)));
            }
            SimCommand::TakeSnapshot(purpose) => {
                let snapshot = Box::new(b.snapshot()?);
                let species = b.params().species.iter().map(|s| s.name.clone()).collect();
                let _ = tx.send(SimReport::Snapshot { purpose, snapshot, species });
            }
            SimCommand::Restore(s) => b.restore(&s)?,
            _ => {}
        }
        Ok(())
    }

    fn load(&mut self, scene: &Scene, choice: BackendChoice) {
        let setup = match scene.build() {
            Ok(s) => s,
            Err(e) => {
                self.report(SimReport::Error(format!("the scene could not be built: {e}")));
                return;
            }
        };
        let field = bake(&setup.shapes, &setup.sim_box);
        // Free the old system first: two large systems may not fit side by side.
        self.backend = None;
        let opened = open_backend(choice, setup.sim_box, setup.params.clone(), &setup.atoms, field)
            .and_then(|(mut b, why)| start_at(b.as_mut(), setup.step, setup.time, setup.piston).map(|()| (b, why)));
        match opened {
            Ok((b, why)) => {
                self.backend = Some(b);
                self.fresh_backend();
                self.why = why;
                self.shapes = setup.shapes;
                self.report(SimReport::Loaded(Box::new(scene.clone())));
                self.publish();
                self.maybe_status(true);
            }
            Err(e) => {
                self.running = false;
                self.report(SimReport::Error(format!("the simulation could not start: {e}")));
            }
        }
    }

    fn switch_backend(&mut self, choice: BackendChoice) {
        let Some(old) = self.backend.as_mut() else { return };
        let field = bake(&self.shapes, &old.sim_box());
        let result = (|| {
            let snap = old.snapshot()?;
            let params = old.params().clone();
            let (mut b, why) = open_backend(choice, snap.sim_box, params, &snap.atoms, field)?;
            b.restore(&snap)?;
            Ok::<_, SimError>((b, why))
        })();
        match result {
            Ok((b, why)) => {
                self.report(SimReport::Notice(why.clone()));
                self.backend = Some(b);
                self.fresh_backend();
                self.why = why;
                self.publish();
            }
            Err(e) => self.report(SimReport::Error(format!("switching backend failed, staying on the old one: {e}"))),
        }
        self.maybe_status(true);
    }
}

/// The atoms of `new` at least [`super::actions::ADD_CLEARANCE`] from every current atom.
fn clear_of_current(b: &mut dyn Backend, new: AtomState) -> Result<AtomState, SimError> {
    let Some(first) = new.positions.first() else { return Ok(new) };
    let snap = b.copy_state()?;
    let sb = snap.sim_box;
    let min_sq = super::actions::ADD_CLEARANCE * super::actions::ADD_CLEARANCE;
    let dist_sq = |a: [f64; 3], c: [f64; 3]| {
        let d = sb.min_image(a, c);
        d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    };
    // Only current atoms near the new ones matter: those within reach of their bounding sphere.
    let reach =
        new.positions.iter().map(|&p| dist_sq(p, *first)).fold(0.0, f64::max).sqrt() + super::actions::ADD_CLEARANCE;
    let near: Vec<[f64; 3]> =
        snap.atoms.positions.into_iter().filter(|&q| dist_sq(q, *first) <= reach * reach).collect();
    let mut kept = AtomState::default();
    for i in 0..new.len() {
        let p = new.positions[i];
        if near.iter().all(|&q| dist_sq(p, q) >= min_sq) {
            kept.positions.push(p);
            kept.velocities.push(new.velocities[i]);
            kept.types.push(new.types[i]);
        }
    }
    Ok(kept)
}

fn analyse(b: &mut dyn Backend, req: &AnalysisRequest) -> Result<Analysis, SimError> {
    let temperature = b.measure()?.temperature;
    let len = b.sim_box().length();
    // g(r) beyond half the shortest periodic edge would count images twice.
    let half = (0..3).filter(|&k| b.sim_box().periodic[k]).map(|k| 0.5 * len[k]).fold(f64::INFINITY, f64::min);
    let r_max = req.rdf_r_max.min(half * 0.999);
    let rdf = if req.rdf_bins > 0 && r_max > 0.5 { Some(b.rdf(req.rdf_bins, r_max)?) } else { None };
    let speed = if req.speed_bins > 0 { Some(b.speed_histogram(req.speed_bins, req.speed_v_max)?) } else { None };
    let density = if req.density_bins > 0 { Some(b.density_profile(req.density_bins)?) } else { None };
    let masses = mass_fractions(b)?;
    Ok(Analysis { step: b.step(), temperature, rdf, speed, density, masses })
}

/// (mass, fraction of the atoms) of every species present: one argon-mass entry without a
/// copy of the state when there is one species.
fn mass_fractions(b: &mut dyn Backend) -> Result<Vec<(f64, f64)>, SimError> {
    let species = b.params().species.clone();
    if species.len() == 1 {
        return Ok(vec![(species[0].mass, 1.0)]);
    }
    let types = b.copy_state()?.atoms.types;
    let mut counts = vec![0usize; species.len()];
    for &t in &types {
        if let Some(c) = counts.get_mut(t as usize) {
            *c += 1;
        }
    }
    let n = types.len().max(1) as f64;
    Ok(species.iter().zip(counts).filter(|(_, c)| *c > 0).map(|(s, c)| (s.mass, c as f64 / n)).collect())
}
