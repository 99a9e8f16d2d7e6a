//! `bench --interactive --replay scrub`: the replay timeline scrubbed as a person drags its
//! slider, every display frame a new stored frame, back and forth through what the replay
//! holds, through the slider's own action (`App::replay_seek`) while the live simulation runs
//! on; and what the view really drew each frame (the stored frame asked for, or not).

use std::collections::HashSet;
use std::time::Duration;

use crate::app::headless::Headless;
use crate::app::replay::REPLAY_SEQ;

/// Stored frames the replay should hold before scrubbing starts (fewer after
/// [`FILL_TIMEOUT`]: it scrubs what there is).
const WANT_FRAMES: usize = 120;
/// How long to run for the replay to fill.
const FILL_TIMEOUT: Duration = Duration::from_secs(60);
/// Display frames one sweep through the stored frames takes (a second at 60 FPS).
const SWEEP_FRAMES: usize = 60;

/// What scrubbing showed.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ScrubResult {
    /// Stored frames the replay held when scrubbing started.
    pub stored: usize,
    /// Display frames scrubbed.
    pub frames: u64,
    /// Of them, the frames whose view was drawn from the stored frame the seek asked for.
    pub shown: u64,
    /// Distinct stored frames the view was drawn from.
    pub distinct: usize,
}

/// The stored frame (0: the oldest) to show at display frame `k` of a scrub through `n`
/// frames, `stride` frames a display frame: from the newest back to the oldest and forward
/// again, a triangle wave.
pub fn scrub_index(k: u64, n: usize, stride: usize) -> usize {
    if n < 2 {
        return 0;
    }
    let period = 2 * (n as u64 - 1);
    let p = (k * stride.max(1) as u64) % period;
    let back = if p < n as u64 { p } else { period - p };
    n - 1 - back as usize
}

/// A scrub in progress.
pub struct Scrub {
    stride: usize,
    k: u64,
    seen: HashSet<u64>,
    pub result: ScrubResult,
}

impl Scrub {
    /// Runs the app until the replay holds frames to scrub; None where it holds fewer than 2.
    pub fn start(h: &mut Headless) -> Option<Scrub> {
        h.run_until(FILL_TIMEOUT, |a| a.replay.ring.len() >= WANT_FRAMES);
        let stored = h.app.replay.ring.len();
        (stored >= 2).then(|| Scrub {
            stride: stored.div_ceil(SWEEP_FRAMES).max(1),
            k: 0,
            seen: HashSet::new(),
            result: ScrubResult { stored, ..Default::default() },
        })
    }

    /// One display frame: the slider moved to the next stored frame, the app run and drawn.
    pub fn frame(&mut self, h: &mut Headless) {
        let i = scrub_index(self.k, h.app.replay.ring.len(), self.stride);
        self.k += 1;
        h.app.replay_seek(i);
        let asked = h.app.replay.cursor;
        h.frame();
        self.result.frames += 1;
        if let Some(seq) = h.painter.drawn_positions().filter(|s| s & REPLAY_SEQ != 0) {
            let id = seq & !REPLAY_SEQ;
            self.seen.insert(id);
            self.result.shown += u64::from(asked == Some(id));
        }
        self.result.distinct = self.seen.len();
    }

    /// Back to the live view.
    pub fn end(self, h: &mut Headless) -> ScrubResult {
        h.app.replay_live();
        self.result
    }
}

#[cfg(test)]
mod tests {
    use super::scrub_index;

    #[test]
    fn the_scrub_sweeps_back_and_forth_from_the_newest() {
        let seq: Vec<usize> = (0..10).map(|k| scrub_index(k, 4, 1)).collect();
        assert_eq!(seq, vec![3, 2, 1, 0, 1, 2, 3, 2, 1, 0]);
        let seq: Vec<usize> = (0..6).map(|k| scrub_index(k, 5, 3)).collect();
        assert_eq!(seq, vec![4, 1, 2, 3, 0, 3]);
        assert_eq!(scrub_index(7, 1, 1), 0);
        assert!((0..1000).all(|k| scrub_index(k, 37, 5) < 37));
    }
}
