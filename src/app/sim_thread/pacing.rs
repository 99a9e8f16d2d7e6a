//! Pacing of the simulation thread: sleeping until the next paced frame (applying commands
//! meanwhile) and the step rate and status sent twice a second.
//!
//! Three paces ([`PaceMode`]): `Fixed` advances `steps_per_frame` steps per displayed frame and
//! sleeps to the next; `Unlimited` runs chunks of `steps_per_frame` back to back; `Fill`, the
//! default, runs back to back in chunks sized by [`FillPacer`] to take [`FRAMES_PER_CHUNK`]
//! display frames, so the per-chunk costs (synchronising, telemetry, publishing) are paid
//! seldom and the simulation gets all the time drawing does not need. Only while the display falls below
//! [`DISPLAY_KEEP`] of its target rate (a GPU shared with the renderer, or CPU cores shared
//! with a software renderer) does the simulation rest for part of each frame, down to half.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use super::{Flow, Worker};
use crate::app::commands::{DISPLAY_KEEP, PaceMode, SimReport, SimStatus};
use crate::app::trajectory::Recorder;

impl Worker {
    /// The display frames the next chunk advances: 1 on time; 2 when the simulation has
    /// fallen more than a frame behind the pace but nearly keeps it (its last chunk took less
    /// than 1.5 frame periods per frame). It then catches up with one chunk of twice the
    /// steps, which spends the per-chunk costs (synchronising, telemetry, publishing) once. A
    /// simulation far slower than the display never doubles: that would only halve how often
    /// the display gets a new frame.
    pub(super) fn frames_due(&self) -> u64 {
        if self.pace.mode != PaceMode::Fixed {
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
        if self.pace.mode != PaceMode::Fixed || !self.running {
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
        self.wait_until(self.due)
    }

    /// After a `Fill` chunk of `steps` that took `took`: sizes the next chunk and rests as long
    /// as the pacer says (applying commands meanwhile). True when the thread must stop.
    pub(super) fn after_fill_chunk(&mut self, steps: u64, took: Duration) -> bool {
        if self.pending.is_some() {
            self.hand_over(true);
        }
        self.fill.chunk_done(steps, took, chunk_period(self.pace.target_hz));
        let rest = self.fill.rest(took);
        self.due = Instant::now();
        if rest.is_zero() || !self.running {
            return false;
        }
        self.wait_until(Instant::now() + rest)
    }

    /// Applies commands until `deadline` (or until paused). True when the thread must stop.
    fn wait_until(&mut self, deadline: Instant) -> bool {
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
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
            on_render_device: self.on_render_device(),
            device_bytes: b.device_bytes(),
            pair_search: b.pair_search(),
            trajectory: self.trajectory.as_ref().map(Recorder::status),
        };
        self.report(SimReport::Status(Box::new(status)));
    }
}

/// Display frames a `Fill` chunk aims to take. Two: each chunk's fixed costs (backups,
/// synchronising, telemetry, publishing; 3 % of a one-frame chunk of the vortex street on an
/// H200) are paid half as often, and the view, drawn again only when new positions arrive, is
/// drawn every other display frame (1.45 ms of the GPU per draw of a million atoms at 1080p);
/// the display keeps its rate, each new state shown for two of its frames.
pub const FRAMES_PER_CHUNK: u32 = 2;
/// The shortest time a `Fill` chunk aims at, whatever the display's rate: on a 144 or 240 Hz
/// monitor two frames are 14 or 8 ms, and the per-chunk costs of a small system (on 2 CPU
/// cores, a chunk of 3,000 atoms at 240 Hz rested to half a frame stepped at a quarter of its
/// flat-out rate instead of a half) would eat into the steps. New states still reach the
/// display 30 times a second.
pub const MIN_CHUNK: Duration = Duration::from_micros(33_333);

/// The time a `Fill` chunk aims at with a display of `target_hz`: [`FRAMES_PER_CHUNK`]
/// frames, at least [`MIN_CHUNK`].
pub fn chunk_period(target_hz: f64) -> Duration {
    let frame = Duration::from_secs_f64(1.0 / target_hz.clamp(1.0, 1000.0));
    (frame * FRAMES_PER_CHUNK).max(MIN_CHUNK)
}

/// Chunks under `Fill` never exceed this many steps (a few hundred atoms on a GPU).
pub const MAX_FILL_STEPS: u64 = 100_000;
/// The least share of each frame the simulation keeps under `Fill`, however slow the display.
pub const MIN_SHARE: f64 = 0.5;

/// The `Fill` pace's rule: how many steps the next chunk takes and how long the simulation
/// rests after it. A chunk aims at `share` of a display frame (the step time is measured on
/// the chunks themselves, so it follows the system, the backend and the machine); `share` is 1
/// while the display keeps [`DISPLAY_KEEP`] of its target rate, and falls by 15 % a report
/// (once a second) while it does not, to [`MIN_SHARE`] at most, the simulation resting
/// for the rest of the frame. A single short second (a scene loading, shaders compiling, a
/// window resized) is a blip, not contention: the share falls only from the second short
/// report in a row. Climbing back, it stays 5 % below the share at which the display last
/// fell short, a ceiling that itself rises by 1 % a report.
#[derive(Clone, Debug, PartialEq)]
pub struct FillPacer {
    steps: u64,
    share: f64,
    ceiling: f64,
    /// Reports in a row with the display short of its rate.
    short: u32,
}

impl Default for FillPacer {
    fn default() -> Self {
        FillPacer { steps: 1, share: 1.0, ceiling: 1.0, short: 0 }
    }
}

impl FillPacer {
    /// Steps of the next chunk.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The share of each frame the simulation takes.
    pub fn share(&self) -> f64 {
        self.share
    }

    /// A chunk of `steps` took `took`, with display frames of `period`: the next chunk is
    /// scaled toward `share` x `period`, at most halved or doubled at a time.
    pub fn chunk_done(&mut self, steps: u64, took: Duration, period: Duration) {
        let steps = steps.max(1);
        let aim = period.as_secs_f64() * self.share;
        let took = took.as_secs_f64();
        let scaled = if took > 0.0 { steps as f64 * aim / took } else { steps as f64 * 2.0 };
        let bounded = scaled.clamp(steps as f64 / 2.0, steps as f64 * 2.0);
        self.steps = (bounded.round() as u64).clamp(1, MAX_FILL_STEPS);
    }

    /// How long to rest after a chunk that took `took`, so the simulation's share of the
    /// time is `share`.
    pub fn rest(&self, took: Duration) -> Duration {
        if self.share >= 1.0 { Duration::ZERO } else { took.mul_f64((1.0 - self.share) / self.share) }
    }

    /// The display's measured rate `fps` against its `target_hz` (a report a second).
    pub fn display(&mut self, fps: f64, target_hz: f64) {
        if !(fps.is_finite() && fps > 0.0 && target_hz > 0.0) {
            return;
        }
        if fps < DISPLAY_KEEP * target_hz {
            self.short += 1;
            if self.short < 2 {
                return;
            }
            self.ceiling = (self.share - 0.05).max(MIN_SHARE);
            self.share = (self.share * 0.85).max(MIN_SHARE);
        } else {
            self.short = 0;
            self.ceiling = (self.ceiling + 0.01).min(1.0);
            self.share = (self.share + 0.05).min(self.ceiling).max(MIN_SHARE);
        }
    }
}

/// A `Fill` chunk of about `steps` from `step`, moved to end on the nearest multiple of the
/// backend's `grain` ([`crate::sim::Backend::step_grain`]) when it is at least two grains
/// long, so the backend meets the few step shapes of one long run (on CUDA, cached graphs
/// instead of new ones: about 1.2 graphs built per chunk of a million-atom tank on an H200
/// before, each 2 to 45 ms); shorter chunks are left as they are.
pub fn aligned_chunk(step: u64, steps: u64, grain: u64) -> u64 {
    if grain <= 1 || steps < 2 * grain {
        return steps;
    }
    let end = (step + steps + grain / 2) / grain * grain;
    end.max((step / grain + 1) * grain) - step
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

    const FRAME: Duration = Duration::from_micros(16_667);

    /// Chunks converge on one display frame whatever the step costs, within the bounds.
    #[test]
    fn fill_chunks_converge_on_one_frame() {
        for step_us in [0.3, 25.0, 400.0, 5_000.0] {
            let mut p = FillPacer::default();
            for _ in 0..60 {
                let s = p.steps();
                p.chunk_done(s, Duration::from_secs_f64(s as f64 * step_us * 1e-6), FRAME);
            }
            let chunk = p.steps() as f64 * step_us * 1e-6;
            let frame = FRAME.as_secs_f64();
            if p.steps() < MAX_FILL_STEPS {
                assert!((chunk - frame).abs() <= step_us * 1e-6 + 0.01 * frame, "{step_us} us: {} steps", p.steps());
            }
            assert!(p.rest(Duration::from_secs_f64(chunk)).is_zero());
        }
        // A step slower than a frame: one step a chunk.
        let mut p = FillPacer::default();
        p.chunk_done(1, FRAME * 5, FRAME);
        assert_eq!(p.steps(), 1);
        // Far faster: capped.
        let mut p = FillPacer { steps: MAX_FILL_STEPS, ..FillPacer::default() };
        p.chunk_done(MAX_FILL_STEPS, Duration::from_micros(10), FRAME);
        assert_eq!(p.steps(), MAX_FILL_STEPS);
    }

    /// The display below 92 % of its target: the simulation gives way (rests part of each
    /// frame, never below half); at its target again it takes the time back, staying under
    /// the share at which the display fell short.
    #[test]
    fn fill_gives_way_to_a_display_below_its_rate_and_takes_the_time_back() {
        let mut p = FillPacer::default();
        p.display(60.0, 60.0);
        assert_eq!(p.share(), 1.0);
        // One short second is a blip (a scene loading): nothing changes.
        p.display(50.0, 60.0);
        assert_eq!(p.share(), 1.0);
        p.display(60.0, 60.0);
        p.display(50.0, 60.0);
        assert_eq!(p.share(), 1.0, "blips apart are not contention");
        // Two in a row are.
        p.display(50.0, 60.0);
        assert!((p.share() - 0.85).abs() < 1e-12);
        let took = FRAME.mul_f64(0.85);
        let rest = p.rest(took);
        assert!((took + rest).as_secs_f64() - FRAME.as_secs_f64() < 1e-6, "a chunk and its rest fill a frame");
        for _ in 0..20 {
            p.display(30.0, 60.0);
        }
        assert_eq!(p.share(), MIN_SHARE);
        // Recovered: the share climbs, under the last failing share's ceiling at first.
        p.display(60.0, 60.0);
        assert!(p.share() > MIN_SHARE && p.share() <= MIN_SHARE + 0.05 + 1e-12);
        for _ in 0..200 {
            p.display(59.0, 60.0);
        }
        assert_eq!(p.share(), 1.0, "a display at its rate gets the whole frame back to the simulation");
        // 55 of 60 is kept; 54 is not.
        p.display(55.5, 60.0);
        assert_eq!(p.share(), 1.0);
        p.display(54.0, 60.0);
        p.display(54.0, 60.0);
        assert!(p.share() < 1.0);
        // Nonsense rates change nothing.
        let before = p.clone();
        p.display(f64::NAN, 60.0);
        p.display(0.0, 60.0);
        assert_eq!(p, before);
    }

    #[test]
    fn fill_chunks_take_two_frames_and_at_least_a_thirtieth_of_a_second() {
        let near = |a: Duration, b: f64| (a.as_secs_f64() - b).abs() < 1e-6;
        assert!(near(chunk_period(60.0), 2.0 / 60.0));
        assert!(near(chunk_period(30.0), 2.0 / 30.0));
        assert_eq!(chunk_period(144.0), MIN_CHUNK);
        assert_eq!(chunk_period(240.0), MIN_CHUNK);
        assert_eq!(chunk_period(0.0), Duration::from_secs(2), "a nonsense rate is clamped");
    }

    #[test]
    fn fill_chunks_end_on_the_backends_grain_when_long_enough() {
        for step in [0u64, 1, 15, 16, 17, 1_000_003] {
            for steps in [32u64, 40, 88, 95, 1000] {
                let n = aligned_chunk(step, steps, 16);
                assert_eq!((step + n) % 16, 0, "{step} + {n}");
                assert!(n >= 1 && n.abs_diff(steps) <= 8, "{step}: {steps} -> {n}");
            }
        }
        // Short chunks, or no grain: as asked.
        assert_eq!(aligned_chunk(5, 31, 16), 31);
        assert_eq!(aligned_chunk(5, 3, 16), 3);
        assert_eq!(aligned_chunk(5, 77, 1), 77);
        assert_eq!(aligned_chunk(5, 77, 0), 77);
        // Never empty: from just before a multiple, the next one.
        assert_eq!(aligned_chunk(31, 32, 16), 33);
    }

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
