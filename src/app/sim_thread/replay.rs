//! The simulation thread's side of instant replay: keyframes (`Backend::snapshot`, so the
//! live run continues from exactly the state kept) taken at the start of a chunk every
//! [`KEY_EVERY`] (or, when one costs more, [`KEY_COST_RATIO`] times its cost) and after every
//! edit the parameters alone do not describe; parameter changes logged with their step; and
//! "resume from here": restore a keyframe, re-apply the changes at their steps, advance to
//! the frame's step, continue live from there.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Worker, bake};
use crate::app::commands::{SimCommand, SimReport};
use crate::app::replay::states::{Keyframe, ReplayCommand, ReplayReport, ResumePlan};
use crate::physics::params::SimParams;
use crate::sim::SimError;

/// Least wall time between periodic keyframes.
pub const KEY_EVERY: Duration = Duration::from_secs(3);
/// A keyframe is next due after this many times what the last one took when that is longer:
/// keyframes then cost the simulation at most about 1 % of its time.
pub const KEY_COST_RATIO: u32 = 100;

/// The worker's replay state.
#[derive(Debug)]
pub(super) struct Keeper {
    on: bool,
    due: Instant,
    /// An edit the parameters do not describe happened: a keyframe before the next steps.
    dirty: bool,
    /// The parameters as last reported (changes are logged against them).
    params: Option<SimParams>,
}

impl Default for Keeper {
    fn default() -> Self {
        Keeper { on: false, due: Instant::now(), dirty: true, params: None }
    }
}

/// What a command means for the replay: nothing, a parameter change to log, or an edit that
/// needs a keyframe.
fn mark(cmd: &SimCommand) -> Option<bool> {
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
        | C::Shutdown => None,
        C::SetParams(_) => Some(false),
        _ => Some(true),
    }
}

impl Worker {
    /// Before a command is applied: remembers whether it needs a keyframe.
    pub(super) fn replay_before(&mut self, cmd: &SimCommand) {
        if mark(cmd) == Some(true) {
            self.replay.dirty = true;
        }
    }

    /// After a command was applied: a parameter change is logged with its step.
    pub(super) fn replay_after(&mut self) {
        if !self.replay.on {
            return;
        }
        let Some(b) = self.backend.as_ref() else { return };
        if self.replay.params.as_ref() != Some(b.params()) {
            let params = b.params().clone();
            self.replay.params = Some(params.clone());
            self.report(SimReport::Replay(ReplayReport::Params { step: b.step(), params: Box::new(params) }));
        }
    }

    /// A rollback or a backend change happened outside a command: a keyframe before the
    /// next steps.
    pub(super) fn replay_dirty(&mut self) {
        self.replay.dirty = true;
    }

    pub(super) fn replay_command(&mut self, c: ReplayCommand) {
        match c {
            ReplayCommand::Keep(on) => {
                self.replay.on = on;
                self.replay.dirty = true;
            }
            ReplayCommand::Resume(plan) => match self.resume(&plan) {
                Ok(()) => {
                    // No keyframe right away: a keyframe re-lists the atoms (canonical order), and
                    // the run from here must go on as the original did from this step.
                    self.replay.dirty = false;
                    self.replay.due = Instant::now() + KEY_EVERY;
                    let b = self.backend.as_ref().expect("resumed a backend");
                    self.replay.params = Some(b.params().clone());
                    let params = Box::new(b.params().clone());
                    self.report(SimReport::Replay(ReplayReport::Resumed { step: b.step(), params }));
                    self.restart_transport("resumed from the replay");
                    self.publish();
                    self.maybe_status(true);
                }
                Err(e) => {
                    self.replay.dirty = true;
                    self.report(SimReport::Replay(ReplayReport::ResumeFailed(e.to_string())));
                }
            },
        }
    }

    /// At the start of a chunk: a keyframe when one is due or an edit asked for one.
    pub(super) fn keep_replay_state(&mut self) {
        let now = Instant::now();
        if !self.replay.on || !(self.replay.dirty || now >= self.replay.due) {
            return;
        }
        let Some(b) = self.backend.as_mut() else { return };
        let taken = b.snapshot();
        let took = now.elapsed();
        self.replay.due = Instant::now() + KEY_EVERY.max(took * KEY_COST_RATIO);
        self.replay.dirty = false;
        match taken {
            Ok(snapshot) => {
                if b.info().kind != "cpu" {
                    // The host copy kept in case the GPU fails is this one: no second download.
                    self.host_state = Some(snapshot.clone());
                    self.host_state_due = self.replay.due;
                }
                let params = b.params().clone();
                self.replay.params = Some(params.clone());
                let key = Keyframe {
                    snapshot,
                    params,
                    shapes: self.shapes.clone(),
                    caught: self.caught,
                    backend: b.info().kind,
                    took,
                };
                self.report(SimReport::Replay(ReplayReport::Keyframe(Arc::new(key))));
            }
            Err(e) => self.report(SimReport::Error(format!("keeping a state for the replay failed: {e}"))),
        }
    }

    /// Restores `plan.from`, re-applies its parameter changes at their steps and advances to
    /// `plan.to_step`.
    fn resume(&mut self, plan: &ResumePlan) -> Result<(), SimError> {
        if self.pending.is_some() {
            self.hand_over(true);
        }
        let Some(b) = self.backend.as_mut() else { return Err(SimError::Invalid("no simulation is loaded".into())) };
        let k = &plan.from;
        if plan.to_step < k.step() {
            return Err(SimError::Invalid(format!("no state at or before step {} is kept", plan.to_step)));
        }
        b.set_params(k.params.clone())?;
        if self.shapes != k.shapes {
            b.set_obstacles(bake(&k.shapes, &k.snapshot.sim_box), k.caught)?;
            self.shapes = k.shapes.clone();
            self.caught = k.caught;
        }
        b.restore(&k.snapshot)?;
        for (step, params) in &plan.edits {
            advance_to(b.as_mut(), *step)?;
            b.set_params(params.clone())?;
        }
        advance_to(b.as_mut(), plan.to_step)?;
        // The steps re-simulated were shown before: their telemetry is not sent again.
        b.drain_telemetry();
        let _ = b.take_fields(false);
        Ok(())
    }
}

/// Advances `b` to `step` (nothing when it is there already).
fn advance_to(b: &mut dyn crate::sim::Backend, step: u64) -> Result<(), SimError> {
    let n = step.saturating_sub(b.step());
    if n > 0 { b.advance(n) } else { Ok(()) }
}
