//! Publishing from the simulation thread: positions into `FrameSlots` (host staging) or the
//! shared GPU slots (zero-copy: CUDA's handed over once written; the wgpu backend's on the
//! renderer's device handed over once submitted, as the queue orders the renderer's reads
//! after it), and trajectories (starting and finishing the recorder, advancing in steps that
//! stop at each trajectory frame).

use std::time::{Duration, Instant};

use super::Worker;
use crate::app::commands::{SimReport, TrajectorySpec};
use crate::app::trajectory::Recorder;
use crate::interop::SlotMemory;
use crate::sim::{PositionTarget, SimError};

impl Worker {
    pub(super) fn publish(&mut self) {
        if self.publish_shared() && Instant::now() < self.host_due {
            return;
        }
        if self.path.starts_with("zero-copy") {
            self.host_due = Instant::now() + Duration::from_millis(250);
        }
        let Some(b) = self.backend.as_mut() else { return };
        let pinned = b.info().kind == "cuda";
        let mut buf = self.frames.buffer(b.n_atoms(), pinned);
        match b.write_positions(PositionTarget::Host(&mut buf[..]), self.colour) {
            Ok(()) => self.frames.publish_as(buf, b.step(), !self.path.starts_with("zero-copy")),
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
        let on_gpu = self.on_render_device();
        let (Some(slots), Some(b)) = (self.slots.clone(), self.backend.as_mut()) else {
            self.path = "host staging";
            return false;
        };
        let same_device = match &slots.memory {
            SlotMemory::Cuda => false,
            SlotMemory::SameDevice { .. } => true,
        };
        let writes = if same_device { on_gpu } else { b.info().kind == "cuda" };
        if !writes {
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
        let written = match &slots.memory {
            SlotMemory::Cuda => b.write_positions_async(slots.ptrs[k], slots.capacity, self.colour),
            SlotMemory::SameDevice { buffers, .. } => {
                b.write_positions(PositionTarget::Buffer { buffer: &buffers[k], len: slots.capacity }, self.colour)
            }
        };
        match written {
            Ok(()) if same_device => {
                // Submitted on the queue the renderer draws with: its next frame sees it.
                slots.finish_write(k, b.step(), n);
                self.path = "zero-copy (same device)";
                true
            }
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
    pub(super) fn hand_over(&mut self, wait: bool) -> bool {
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

    /// Starts (finishing a running one) or stops the trajectory.
    pub(super) fn set_trajectory(&mut self, spec: Option<TrajectorySpec>) {
        if let Some(mut old) = self.trajectory.take() {
            match old.finish() {
                Ok(m) => self.report(SimReport::Notice(m)),
                Err(e) => self.report(SimReport::Error(e)),
            }
        }
        let (Some(spec), Some(b)) = (spec, self.backend.as_mut()) else { return };
        let species = b.params().species.clone();
        let started = b.copy_state().map_err(|e| e.to_string()).and_then(|snap| Recorder::start(&spec, &species, snap));
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

    /// Advances `steps`, stopping at every trajectory frame on the way to write it, and at
    /// every replay keyframe the schedule has on the way to take it (`replay.rs`).
    pub(super) fn advance_recording(&mut self, steps: u64) -> Result<(), SimError> {
        let mut left = steps;
        while left > 0 {
            self.keep_replay_state();
            let Some(b) = self.backend.as_mut() else { return Ok(()) };
            let n = match &self.trajectory {
                Some(t) => left.min(t.next.saturating_sub(b.step()).max(1)),
                None => left,
            };
            let n = self.replay.room(b.step(), n);
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
}
