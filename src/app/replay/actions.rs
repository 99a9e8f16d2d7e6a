//! What the timeline's buttons and keys do: seek, step a frame back or forward, play and
//! pause the replay, its speed, back to live, "resume from here" and "save the last N
//! seconds". None of them pauses the live simulation.

use std::path::PathBuf;

use super::save::{SaveJob, SaveView};
use super::states::ReplayCommand;
use crate::app::App;
use crate::app::commands::SimCommand;

impl App {
    /// Shows stored frame `i` (0: the oldest); past the newest, the view goes live.
    pub fn replay_seek(&mut self, i: usize) {
        self.replay.cursor = self.replay.ring.get(i).map(|f| f.id);
        if i + 1 >= self.replay.ring.len() && self.replay.cursor.is_some() && self.replay.playing {
            self.replay.cursor = None;
        }
    }

    /// One stored frame back (from live: the one before the newest).
    pub fn replay_back(&mut self) {
        let Some(i) = self.replay.index() else { return };
        self.replay.playing = false;
        self.replay.cursor = self.replay.ring.get(i.saturating_sub(1)).map(|f| f.id);
    }

    /// One stored frame forward (past the newest: live).
    pub fn replay_forward(&mut self) {
        let Some(i) = self.replay.index() else { return };
        if self.replay.cursor.is_none() {
            return;
        }
        self.replay.playing = false;
        self.replay.cursor = self.replay.ring.get(i + 1).map(|f| f.id);
    }

    /// The oldest stored frame.
    pub fn replay_oldest(&mut self) {
        self.replay.playing = false;
        self.replay_seek(0);
    }

    /// Plays or pauses the replay (from live, plays from the oldest frame).
    pub fn replay_play_pause(&mut self) {
        if self.replay.playing {
            self.replay.playing = false;
            return;
        }
        if self.replay.cursor.is_none() {
            self.replay.cursor = self.replay.ring.get(0).map(|f| f.id);
        }
        self.replay.playing = self.replay.cursor.is_some();
    }

    pub fn replay_set_speed(&mut self, speed: f64) {
        self.replay.speed = speed;
    }

    /// Back to the live view.
    pub fn replay_live(&mut self) {
        self.replay.cursor = None;
        self.replay.playing = false;
    }

    /// "Resume from here": the live simulation restarts from the frame on display (the
    /// nearest stored state at or before it, re-simulated to its step); the history after it
    /// is dropped once it has.
    pub fn replay_resume(&mut self) {
        let Some(f) = self.replay.shown() else {
            self.notify("resume from here: pick a past frame on the timeline first", true);
            return;
        };
        let step = f.step;
        let Some(plan) = self.replay.states.plan(step) else {
            self.notify(
                format!("resume from here: no full state at or before step {step} is kept; pick a later frame"),
                true,
            );
            return;
        };
        let kind = self.status.as_ref().map(|s| s.info.kind).unwrap_or("cpu");
        if plan.from.backend != kind {
            self.notify(
                format!(
                    "resuming on the {kind} backend from a state the {} backend kept: the re-run follows another \
                     rounding",
                    plan.from.backend
                ),
                false,
            );
        }
        self.replay.resuming = Some(step);
        self.replay.playing = false;
        self.sim.send(SimCommand::Replay(ReplayCommand::Resume(Box::new(plan))));
    }

    /// "Save the last N seconds" of stored frames to `path` (`.mp4`, `.gif`, or a folder of
    /// PNGs), drawn with the view's camera and settings, on a thread of its own.
    pub fn replay_save(&mut self, path: PathBuf, seconds: f64) {
        if self.replay.save.is_some() {
            self.notify("a replay is being saved already; wait for it to finish", true);
            return;
        }
        if !(seconds.is_finite() && seconds > 0.0) {
            self.notify("save the last N seconds: N must be a positive number of seconds", true);
            return;
        }
        let (Some(device), Some(queue)) = (self.replay.gpu.device().cloned(), self.replay.queue().cloned()) else {
            self.notify("save the last N seconds: the view has not been drawn yet", true);
            return;
        };
        let frames = super::save::plan(&self.replay.ring, seconds);
        let view = SaveView {
            geometry: self.geometry.1.clone(),
            camera: self.camera,
            settings: self.settings.view,
            size: self.view_size,
        };
        match SaveJob::start(device, queue, frames, view, path.clone()) {
            Ok(job) => {
                self.notify(format!("saving {} frames to {}", job.total, path.display()), false);
                self.replay.save = Some(job);
            }
            Err(e) => self.notify(format!("save the last N seconds to {}: {e}", path.display()), true),
        }
    }
}
