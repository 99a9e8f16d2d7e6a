//! What the app's frame loop calls for the replay: storing each newly drawn frame (host
//! frames in `poll`, shared GPU slots after the frame was submitted), pointing the view at a
//! stored frame while the timeline shows one, the simulation thread's keyframes and control
//! changes, and once a frame: keyframes on or off with the budget, playback, a finished save.

use std::sync::Arc;
use std::time::Instant;

use super::ring::{StoredFrame, StoredPositions};
use super::states::{ReplayCommand, ReplayReport};
use super::{REPLAY_SEQ, Replay};
use crate::app::App;
use crate::app::commands::SimCommand;
use crate::render::view::{PositionFrame, SceneGeometry};

/// What `App::view_data` hands the renderer.
pub type ViewData = (Option<(u64, PositionFrame)>, (u64, SceneGeometry), Option<(u64, wgpu::Buffer, u32)>);

impl App {
    /// The budget in bytes now.
    pub fn replay_budget(&self) -> usize {
        self.replay.budget(self.settings.replay_budget_mb)
    }

    /// The bytes frames may take: the budget less what the keyframes hold.
    fn frame_budget(&self) -> usize {
        self.replay_budget().saturating_sub(self.replay.states.bytes())
    }

    fn display_fps(&self) -> f64 {
        if self.fps.fps > 1.0 { self.fps.fps } else { 60.0 }
    }

    /// A new host frame for display arrived (it is `self.frame`): stored when the ring keeps it.
    pub(in crate::app) fn replay_host_frame(&mut self, step: u64) {
        let Some(p) = self.frame.clone() else { return };
        let (budget, fps) = (self.frame_budget(), self.display_fps());
        if !self.replay.ring.admit(p.len() * 16, budget, fps) {
            return;
        }
        let id = self.replay.ring.next_id();
        let f = StoredFrame { id, step, at: Instant::now(), positions: StoredPositions::Host(p) };
        self.replay_push(f);
    }

    fn replay_push(&mut self, f: StoredFrame) {
        let evicted = self.replay.ring.push(f, self.frame_budget());
        self.replay.gpu.recycle(evicted);
        self.replay_trim();
    }

    /// Full states within their share of the budget, none older than needed for the oldest
    /// frame, flow windows no stored frame showed dropped.
    fn replay_trim(&mut self) {
        self.replay.states.shrink_to(self.replay_budget() / super::STATE_SHARE);
        if let Some(oldest) = self.replay.ring.get(0).map(|f| f.step) {
            self.replay.states.forget_before(oldest);
        }
        self.replay.forget_flows();
    }

    /// The view's data: the live frame (noting a shared slot drawn, to be stored once the
    /// frame is submitted), or the stored frame the timeline shows.
    pub(in crate::app) fn replay_view(&mut self, live: ViewData) -> ViewData {
        if let Some((seq, buffer, n)) = &live.2
            && self.replay_budget() > 0
            && !self.replay.gpu_failed
        {
            self.replay.gpu.drawn(*seq, buffer, *n, self.frame_step);
        }
        let Some(id) = self.replay.cursor else { return live };
        let Some(f) = self.replay.shown().cloned().or_else(|| self.replay.ring.get(0).cloned()) else {
            self.replay.cursor = None;
            return live;
        };
        // The shown frame was evicted: the oldest one is shown instead.
        self.replay.cursor = Some(f.id);
        let _ = id;
        let seq = REPLAY_SEQ | f.id;
        match f.positions {
            StoredPositions::Host(p) => (Some((seq, p)), live.1, None),
            StoredPositions::Gpu(b, n) => (None, live.1, Some((seq, (*b).clone(), n))),
        }
    }

    /// After the frame's GPU work was submitted (before its slot is released): stores the
    /// shared slot it drew.
    pub(in crate::app) fn replay_submitted(&mut self, queue: &wgpu::Queue) {
        if self.replay.queue.is_none() {
            self.replay.queue = Some(queue.clone());
        }
        if !self.replay.gpu.has_drawn() {
            return;
        }
        let (budget, fps) = (self.frame_budget(), self.display_fps());
        match self.replay.gpu.store(queue, &mut self.replay.ring, budget, fps) {
            Ok(Some(f)) => self.replay_push(f),
            Ok(None) => {}
            Err(e) => {
                self.replay.gpu_failed = true;
                self.notify(format!("{e}; the replay keeps what it has (lower its budget)"), true);
            }
        }
    }

    /// A flow window arrived: shown from the next stored frame on.
    pub(in crate::app) fn replay_flow(&mut self, f: Arc<crate::flow::Fields>) {
        let next = self.replay.ring.iter().next_back().map_or(1, |l| l.id + 1);
        self.replay.flows.push_back((next, f));
    }

    /// The flow window to draw now: the stored one while a stored frame shows.
    pub fn replay_window(&self) -> Option<Option<Arc<crate::flow::Fields>>> {
        let id = self.replay.cursor?;
        Some(self.replay.window_for(id))
    }

    /// A report of the simulation thread for the replay.
    pub(in crate::app) fn replay_report(&mut self, r: ReplayReport) {
        match r {
            ReplayReport::Keyframe(k) => {
                if self.replay_budget() > 0 {
                    self.replay.states.push_key(k);
                    self.replay_trim();
                }
            }
            ReplayReport::Control { step, control } => self.replay.states.push_control(step, *control),
            ReplayReport::Resumed { step, params } => {
                self.replay.resuming = None;
                let dropped = self.replay.ring.truncate_after(step);
                self.replay.gpu.recycle(dropped);
                self.replay.states.truncate_after(step);
                let next = self.replay.ring.iter().next_back().map_or(0, |l| l.id);
                self.replay.flows.retain(|(first, _)| *first <= next);
                self.replay.cursor = None;
                self.replay.playing = false;
                self.params = *params;
                self.notify(format!("resumed from step {step}; the later history was dropped"), false);
            }
            ReplayReport::ResumeFailed(e) => {
                self.replay.resuming = None;
                self.notify(format!("resume from here: {e}"), true);
            }
        }
    }

    /// A new scene: its history starts afresh.
    pub(in crate::app) fn replay_clear(&mut self) {
        let dropped = self.replay.ring.clear();
        self.replay.gpu.recycle(dropped);
        self.replay.states.clear();
        self.replay.flows.clear();
        self.replay.cursor = None;
        self.replay.playing = false;
    }

    /// Once a frame: keyframes on with a budget, the budget applied, playback, saves.
    pub(in crate::app) fn replay_tick(&mut self) {
        let on = self.replay_budget() > 0;
        if self.replay.keep_sent != Some(on) {
            self.replay.keep_sent = Some(on);
            self.sim.send(SimCommand::Replay(ReplayCommand::Keep(on)));
            if !on {
                self.replay_clear();
            }
        }
        self.replay.states.shrink_to(self.replay_budget() / super::STATE_SHARE);
        let evicted = self.replay.ring.shrink_to(self.frame_budget());
        if !evicted.is_empty() {
            self.replay.gpu.recycle(evicted);
            self.replay_trim();
        }
        self.replay_play();
        if let Some(job) = self.replay.save.as_mut()
            && let Some(result) = job.finished()
        {
            let path = job.path.clone();
            self.replay.save = None;
            match result {
                Ok(n) => self.notify(format!("saved {n} replay frames to {}", path.display()), false),
                Err(e) => self.notify(format!("saving the replay to {}: {e}", path.display()), true),
            }
        }
    }

    /// Playback: moves the cursor on by the drawn time elapsed, scaled by the speed; at the
    /// newest stored frame the view goes live.
    fn replay_play(&mut self) {
        let now = Instant::now();
        let dt = self.replay.last_tick.map_or(0.0, |t| now.duration_since(t).as_secs_f64());
        self.replay.last_tick = Some(now);
        if !self.replay.playing {
            self.replay.play_acc = 0.0;
            return;
        }
        let Some(mut i) = self.replay.index() else { return };
        self.replay.play_acc += dt.min(0.25) * self.replay.speed;
        loop {
            let (Some(a), Some(b)) = (self.replay.ring.get(i), self.replay.ring.get(i + 1)) else {
                // The newest stored frame: live again.
                self.replay.cursor = None;
                self.replay.playing = false;
                return;
            };
            let gap = b.at.duration_since(a.at).as_secs_f64();
            if gap > self.replay.play_acc {
                break;
            }
            self.replay.play_acc -= gap;
            i += 1;
        }
        self.replay.cursor = self.replay.ring.get(i).map(|f| f.id);
    }
}

impl Replay {
    /// The renderer's queue, once a frame was submitted.
    pub fn queue(&self) -> Option<&wgpu::Queue> {
        self.queue.as_ref()
    }
}
