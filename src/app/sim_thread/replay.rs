//! The simulation thread's side of instant replay: keyframes (`Backend::snapshot`, so the
//! live run continues from exactly the state kept, its atoms re-listed) taken on a
//! [`Schedule`] of steps and after every edit the controls alone do not describe; control
//! changes (parameters, dye rakes, the piston's drag target) logged with their step; and
//! "resume from here": restore a keyframe, re-apply the changes at their steps, advance to the
//! frame's step, continue live from there on the same schedule.
//!
//! A schedule starts with every keyframe an edit asks for (and with the replay turned on):
//! its origin is that keyframe's step. Its step count is fixed by the first periodic keyframe,
//! taken once the run has spent [`KEY_EVERY`] (or, when the origin's keyframe cost more,
//! [`KEY_COST_RATIO`] times that) running: the steps from the origin to there. From then on
//! keyframes fall on the origin plus multiples of it, the chunks split there
//! ([`Keeper::room`]), until an edit or a resume starts another. Keyframes thus re-list the
//! atoms at the same steps in a resumed run as in the original, which keeps the two equal bit
//! for bit for all time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Worker, bake};
use crate::app::commands::{SimCommand, SimReport};
use crate::app::replay::states::{Control, Controls, Keyframe, ReplayCommand, ReplayReport, ResumePlan, Schedule};
use crate::sim::{Backend, SimError};

/// Least running time between the keyframe that starts a schedule and the one that fixes its
/// step count.
pub const KEY_EVERY: Duration = Duration::from_secs(3);
/// ... or this many times what the schedule's first keyframe took, when that is longer:
/// keyframes then cost the simulation at most about 1 % of its time.
pub const KEY_COST_RATIO: u32 = 100;

/// The worker's replay state.
#[derive(Debug)]
pub(super) struct Keeper {
    on: bool,
    /// An edit the controls do not describe happened: a keyframe, starting a new schedule,
    /// before the next steps.
    dirty: bool,
    /// The schedule in force (None before the first keyframe).
    schedule: Option<Schedule>,
    /// The step of the last keyframe (a scheduled one is taken once).
    taken_at: Option<u64>,
    /// While the schedule's step count is unset: the running time it waits for, the running
    /// time since its origin, and when the last check found the run running.
    period: Duration,
    ran: Duration,
    clock: Option<Instant>,
    /// A step count every new schedule takes (`ReplayCommand::Every`).
    every: Option<u64>,
    /// The controls as last reported.
    controls: Option<Controls>,
    /// The piston's drag target in force (backends do not keep it in their snapshots).
    drag: Option<f64>,
    /// A control command being applied, logged once it was.
    applying: Option<Control>,
    /// The backend that took the last keyframe: another one needs a keyframe of its own.
    kind: &'static str,
}

impl Default for Keeper {
    fn default() -> Self {
        Keeper {
            on: false,
            dirty: true,
            schedule: None,
            taken_at: None,
            period: KEY_EVERY,
            ran: Duration::ZERO,
            clock: None,
            every: None,
            controls: None,
            drag: None,
            applying: None,
            kind: "",
        }
    }
}

impl Keeper {
    /// At most `left` steps from `step` without passing the next scheduled keyframe: the
    /// simulation thread splits its chunks there.
    pub(super) fn room(&self, step: u64, left: u64) -> u64 {
        if !self.on {
            return left;
        }
        self.schedule.and_then(|s| s.next_after(step)).map_or(left, |k| left.min(k - step))
    }
}

/// What a command means for the replay.
enum Mark {
    Nothing,
    /// A control change, logged with its step.
    Log(Control),
    /// An edit that needs a keyframe (and starts a new schedule).
    Key,
}

fn mark(cmd: &SimCommand) -> Mark {
    use SimCommand as C;
    match cmd {
        C::Run(_)
        | C::Step(_)
        | C::SetPace(_)
        | C::DisplayRate { .. }
        | C::SetColour(_)
        | C::Analyse(_)
        | C::Trajectory(_)
        | C::Fields(_)
        | C::Transport(_)
        | C::UseSlots(_)
        | C::Replay(_)
        | C::Shutdown => Mark::Nothing,
        C::SetParams(p) => Mark::Log(Control::Params(p.clone())),
        C::DragPiston(target) => Mark::Log(Control::Drag(*target)),
        // Rakes alone leave the atoms as they are; tags are set through a snapshot.
        C::Dye(e) if e.clear.is_empty() && e.regions.is_empty() && e.atoms.is_empty() => {
            Mark::Log(Control::Rakes(e.rakes.clone()))
        }
        _ => Mark::Key,
    }
}

impl Worker {
    /// Before a command is applied: remembers whether it needs a keyframe or is a control
    /// change to log.
    pub(super) fn replay_before(&mut self, cmd: &SimCommand) {
        if let SimCommand::Run(_) = cmd {
            // A pause does not count as running time.
            self.replay.clock = None;
        }
        match mark(cmd) {
            Mark::Nothing => {}
            Mark::Log(c) => self.replay.applying = Some(c),
            Mark::Key => {
                self.replay.dirty = true;
                if matches!(cmd, SimCommand::Load { .. } | SimCommand::SwitchBackend(_)) {
                    // A new backend starts without a drag.
                    self.replay.drag = None;
                }
            }
        }
    }

    /// After a command was applied (and before the next steps): a control change is logged
    /// with its step.
    pub(super) fn replay_after(&mut self) {
        let Some(c) = self.replay.applying.take() else { return };
        let Some(b) = self.backend.as_ref() else { return };
        let applied = match c {
            // Refused parameters leave the backend's as they were: nothing to log.
            Control::Params(p) => {
                let changed = self.replay.controls.as_ref().is_none_or(|k| &k.params != b.params());
                (*p == *b.params() || changed).then(|| Control::Params(Box::new(b.params().clone())))
            }
            Control::Drag(t) => crate::sim::check_piston_drag(b.params(), t).is_ok().then_some(Control::Drag(t)),
            Control::Rakes(_) => Some(Control::Rakes(self.rakes.clone())),
        };
        let Some(c) = applied else { return };
        if let Control::Drag(t) = c {
            self.replay.drag = t;
        }
        if !self.replay.on {
            return;
        }
        if let Some(k) = self.replay.controls.as_mut() {
            k.apply(&c);
        }
        self.report(SimReport::Replay(ReplayReport::Control { step: b.step(), control: Box::new(c) }));
    }

    /// A rollback or a backend change happened outside a command: a keyframe before the
    /// next steps (and no drag: a rollback or a new backend ends it).
    pub(super) fn replay_dirty(&mut self) {
        self.replay.dirty = true;
        self.replay.drag = None;
    }

    pub(super) fn replay_command(&mut self, c: ReplayCommand) {
        match c {
            ReplayCommand::Keep(on) => {
                self.replay.on = on;
                self.replay.dirty = true;
            }
            ReplayCommand::Every(every) => {
                self.replay.every = every.map(|k| k.max(1));
                self.replay.dirty = true;
            }
            ReplayCommand::Resume(plan) => match self.resume(&plan).map(|c| (c, self.backend.as_ref())) {
                Ok((controls, Some(b))) => {
                    // No keyframe right away: the run goes on as the original did from this
                    // step, on its schedule (a keyframe at this very step was the one restored).
                    let r = &mut self.replay;
                    r.dirty = false;
                    r.schedule = Some(plan.schedule);
                    r.taken_at = (plan.from.step() == plan.to_step).then_some(plan.to_step);
                    r.period = KEY_EVERY.max(plan.from.took * KEY_COST_RATIO);
                    r.ran = Duration::ZERO;
                    r.clock = None;
                    r.kind = b.info().kind;
                    r.drag = controls.drag;
                    r.applying = None;
                    r.controls = Some(controls);
                    let params = Box::new(b.params().clone());
                    self.report(SimReport::Replay(ReplayReport::Resumed { step: b.step(), params }));
                    self.restart_transport("resumed from the replay");
                    self.publish();
                    self.maybe_status(true);
                }
                Ok((_, None)) => {
                    self.replay.dirty = true;
                    self.report(SimReport::Replay(ReplayReport::ResumeFailed("no simulation to resume".into())));
                }
                Err(e) => {
                    self.replay.dirty = true;
                    self.report(SimReport::Replay(ReplayReport::ResumeFailed(e.to_string())));
                }
            },
        }
    }

    /// Before the backend advances (each piece of a chunk, `advance_recording`): logs a control
    /// applied since, and takes a keyframe when an edit asked for one or the schedule has one
    /// at this step.
    pub(super) fn keep_replay_state(&mut self) {
        self.replay_after();
        if !self.replay.on {
            return;
        }
        let Some(b) = self.backend.as_mut() else { return };
        let step = b.step();
        let kind = b.info().kind;
        let r = &mut self.replay;
        if kind != r.kind {
            // The system moved to another backend (leaving wgpu for an edit, dye on the CPU).
            r.dirty = true;
        }
        let now = Instant::now();
        if self.running {
            if let Some(t) = r.clock {
                r.ran += now.duration_since(t);
            }
            r.clock = Some(now);
        } else {
            r.clock = None;
        }
        let scheduled = match r.schedule {
            None => true,
            Some(s) if s.every.is_some() => s.due_at(step),
            Some(s) => step > s.origin && r.ran >= r.period,
        };
        if !(r.dirty || scheduled && r.taken_at != Some(step)) {
            return;
        }
        let fresh = r.dirty || r.schedule.is_none();
        let t = Instant::now();
        let taken = b.snapshot();
        let took = t.elapsed();
        let schedule = match r.schedule {
            Some(mut s) if !fresh => {
                s.every.get_or_insert(step - s.origin);
                s
            }
            _ => {
                r.period = KEY_EVERY.max(took * KEY_COST_RATIO);
                r.ran = Duration::ZERO;
                Schedule { origin: step, every: r.every }
            }
        };
        r.schedule = Some(schedule);
        r.dirty = false;
        r.taken_at = Some(step);
        r.kind = kind;
        match taken {
            Ok(snapshot) => {
                if kind != "cpu" {
                    // The host copy kept in case the GPU fails is this one: no second download.
                    self.host_state = Some(snapshot.clone());
                    self.host_state_due = Instant::now() + KEY_EVERY.max(took * KEY_COST_RATIO);
                }
                let controls = Controls { params: b.params().clone(), rakes: self.rakes.clone(), drag: r.drag };
                r.controls = Some(controls.clone());
                let key = Keyframe {
                    snapshot,
                    controls,
                    shapes: self.shapes.clone(),
                    caught: self.caught,
                    backend: kind,
                    took,
                    schedule,
                };
                self.report(SimReport::Replay(ReplayReport::Keyframe(Arc::new(key))));
            }
            Err(e) => self.report(SimReport::Error(format!("keeping a state for the replay failed: {e}"))),
        }
    }

    /// Restores `plan.from` with its controls, re-applies the control changes at their steps
    /// and advances to `plan.to_step`, re-listing where the schedule kept a keyframe; returns
    /// the controls in force there.
    fn resume(&mut self, plan: &ResumePlan) -> Result<Controls, SimError> {
        if self.pending.is_some() {
            self.hand_over(true);
        }
        let Some(b) = self.backend.as_mut() else { return Err(SimError::Invalid("no simulation is loaded".into())) };
        let k = &plan.from;
        if plan.to_step < k.step() {
            return Err(SimError::Invalid(format!("no state at or before step {} is kept", plan.to_step)));
        }
        let mut controls = k.controls.clone();
        b.set_params(controls.params.clone())?;
        if self.shapes != k.shapes {
            b.set_obstacles(bake(&k.shapes, &k.snapshot.sim_box), k.caught)?;
            self.shapes = k.shapes.clone();
            self.caught = k.caught;
        }
        b.restore(&k.snapshot)?;
        b.set_dye_rakes(&controls.rakes)?;
        if controls.params.piston.is_some() {
            b.drag_piston(controls.drag)?;
        }
        let mut listed = k.step();
        for (step, control) in &plan.edits {
            advance_on(b.as_mut(), *step, &plan.schedule, &mut listed)?;
            match control {
                Control::Params(p) => b.set_params((**p).clone())?,
                Control::Rakes(r) => b.set_dye_rakes(r)?,
                Control::Drag(t) => b.drag_piston(*t)?,
            }
            controls.apply(control);
        }
        advance_on(b.as_mut(), plan.to_step, &plan.schedule, &mut listed)?;
        // The steps re-simulated were shown before: their telemetry is not sent again.
        b.drain_telemetry();
        let _ = b.take_fields(false);
        self.rakes = controls.rakes.clone();
        Ok(controls)
    }
}

/// Advances `b` to `step` (nothing when it is there already), re-listing its atoms (a
/// snapshot, dropped) at each of `schedule`'s keyframe steps on the way, as the live run did
/// when it kept a keyframe there; `listed` is the step last re-listed.
fn advance_on(b: &mut dyn Backend, step: u64, schedule: &Schedule, listed: &mut u64) -> Result<(), SimError> {
    while b.step() < step {
        let at = b.step();
        if schedule.due_at(at) && *listed != at {
            b.snapshot()?;
            *listed = at;
        }
        let next = schedule.next_after(at).map_or(step, |k| k.min(step));
        b.advance(next - at)?;
    }
    Ok(())
}
