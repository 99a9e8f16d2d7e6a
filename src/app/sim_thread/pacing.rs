//! Pacing of the simulation thread: sleeping until the next paced frame (applying commands
//! meanwhile) and the step rate and status sent twice a second.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use super::{Flow, Worker};
use crate::app::commands::{SimReport, SimStatus};
use crate::app::trajectory::Recorder;

impl Worker {
    /// The display frames the next chunk advances: 1 on time; 2 when the simulation has
    /// fallen more than a frame behind the pace but nearly keeps it (its last chunk took less
    /// than 1.5 frame periods per frame). It then catches up with one chunk of twice the
    /// steps, which spends the per-chunk costs (synchronising, telemetry, publishing) once. A
    /// simulation far slower than the display never doubles: that would only halve how often
    /// the display gets a new frame.
    pub(super) fn frames_due(&self) -> u64 {
        if self.pace.unlimited {
            return 1;
        }
        frames_due(Instant::now(), self.due, self.frame_period(), self.chunk_per_frame)
    }

    /// One display frame at the pace's rate.
    fn frame_period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.pace.frame_hz.clamp(1.0, 1000.0))
    }

    /// Sleeps until the paced frame after the `frames` just advanced, applying commands that
    /// arrive meanwhile. True when the thread must stop.
    pub(super) fn wait_until_due(&mut self, frames: u64) -> bool {
        if self.pending.is_some() {
            self.hand_over(true);
        }
        if self.pace.unlimited || !self.running {
            self.due = Instant::now();
            return false;
        }
        let period = self.frame_period();
        let now = Instant::now();
        self.due += period * frames as u32;
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

    /// Sends the status when `now` or when it is due (twice a second, with the step rate).
    pub(super) fn maybe_status(&mut self, now: bool) {
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
            pair_search: b.pair_search(),
            trajectory: self.trajectory.as_ref().map(Recorder::status),
        };
        self.report(SimReport::Status(Box::new(status)));
    }
}

/// [`Worker::frames_due`] at `now` for a frame `due`, a frame `period` and the last chunk's
/// time per frame.
fn frames_due(now: Instant, due: Instant, period: Duration, chunk_per_frame: Duration) -> u64 {
    let behind = now > due + period;
    if behind && chunk_per_frame < period * 3 / 2 { 2 } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_catches_up_only_when_behind_and_nearly_on_pace() {
        let p = Duration::from_micros(16_667);
        let due = Instant::now();
        // On time, or less than a frame late: one frame.
        assert_eq!(frames_due(due, due, p, p), 1);
        assert_eq!(frames_due(due + p / 2, due, p, p), 1);
        // More than a frame behind while a chunk takes about a period: catch up.
        assert_eq!(frames_due(due + p * 2, due, p, p * 21 / 20), 2);
        // Far slower than the display: never doubled.
        assert_eq!(frames_due(due + p * 2, due, p, p * 2), 1);
    }
}
