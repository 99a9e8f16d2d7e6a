//! The ring of drawn frames: the `[x, y, z, colour]` quadruples the view drew, newest last,
//! within a byte budget (the oldest evicted first), thinned to every k-th drawn frame when a
//! frame is so large that the budget would not span [`SPAN_S`] seconds at the display rate.
//! Host frames (the CPU path) are the very buffers the renderer drew, shared; GPU frames are
//! wgpu buffers of the renderer's device filled by one device copy each (`gpu.rs`), never
//! passing through the host.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use crate::render::view::PositionFrame;

/// Seconds of history the thinning aims the budget to span at the display rate.
pub const SPAN_S: f64 = 30.0;

/// Where a stored frame's quadruples are.
#[derive(Clone, Debug)]
pub enum StoredPositions {
    /// Host memory: the frame the renderer drew (CPU backend, host staging).
    Host(PositionFrame),
    /// A buffer of the renderer's device holding `n` quadruples (zero-copy paths).
    Gpu(Arc<wgpu::Buffer>, u32),
}

/// One stored frame.
#[derive(Clone, Debug)]
pub struct StoredFrame {
    /// Increases by one with every stored frame (the view's sequence number for it).
    pub id: u64,
    /// The simulation step the frame shows.
    pub step: u64,
    /// When it was drawn (playback keeps these intervals, scaled by the speed).
    pub at: Instant,
    pub positions: StoredPositions,
}

impl StoredFrame {
    /// Atoms in the frame.
    pub fn n_atoms(&self) -> usize {
        match &self.positions {
            StoredPositions::Host(p) => p.len(),
            StoredPositions::Gpu(_, n) => *n as usize,
        }
    }

    /// Bytes the frame holds.
    pub fn bytes(&self) -> usize {
        self.n_atoms() * 16
    }
}

/// Every k-th drawn frame is kept so that `budget` bytes span [`SPAN_S`] seconds of frames of
/// `frame_bytes` drawn `fps` times a second (1: every frame).
pub fn thinning(frame_bytes: usize, budget: usize, fps: f64) -> u64 {
    if budget == 0 {
        return u64::MAX;
    }
    let wanted = SPAN_S * fps.clamp(1.0, 240.0) * frame_bytes as f64;
    (wanted / budget as f64).ceil().max(1.0) as u64
}

/// The stored frames, oldest first.
#[derive(Debug, Default)]
pub struct FrameRing {
    frames: VecDeque<StoredFrame>,
    bytes: usize,
    /// Drawn frames offered since the start (thinning counts them).
    offered: u64,
    /// The thinning last used.
    pub every: u64,
    next_id: u64,
    /// Frames offered per second, over the last whole second measured.
    rate: Option<f64>,
    rate_since: Option<Instant>,
    rate_from: u64,
}

impl FrameRing {
    /// Counts a drawn frame of `frame_bytes`; true when it is one to keep (every k-th at the
    /// thinning for `budget` and the rate frames come at: measured over each second, `fps`
    /// until then).
    pub fn admit(&mut self, frame_bytes: usize, budget: usize, fps: f64) -> bool {
        let now = Instant::now();
        let since = *self.rate_since.get_or_insert(now);
        let dt = now.duration_since(since).as_secs_f64();
        if dt >= 1.0 {
            self.rate = Some((self.offered - self.rate_from) as f64 / dt);
            (self.rate_since, self.rate_from) = (Some(now), self.offered);
        }
        self.every = thinning(frame_bytes, budget, self.rate.unwrap_or(fps));
        self.offered += 1;
        frame_bytes <= budget && self.offered.is_multiple_of(self.every.max(1))
    }

    /// The id the next stored frame gets.
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Stores a frame and evicts the oldest until `budget` bytes hold them; returns what was
    /// evicted (GPU buffers may be reused, host frames go back to the simulation).
    pub fn push(&mut self, frame: StoredFrame, budget: usize) -> Vec<StoredFrame> {
        self.bytes += frame.bytes();
        self.frames.push_back(frame);
        self.shrink_to(budget)
    }

    /// Evicts the oldest frames until `budget` bytes hold the rest.
    pub fn shrink_to(&mut self, budget: usize) -> Vec<StoredFrame> {
        let mut out = Vec::new();
        while self.bytes > budget
            && let Some(f) = self.frames.pop_front()
        {
            self.bytes -= f.bytes();
            out.push(f);
        }
        out
    }

    /// Drops the frames after `step` (a resumed run replaces them), returning them.
    pub fn truncate_after(&mut self, step: u64) -> Vec<StoredFrame> {
        let mut out = Vec::new();
        while let Some(f) = self.frames.pop_back() {
            if f.step <= step {
                self.frames.push_back(f);
                break;
            }
            self.bytes -= f.bytes();
            out.push(f);
        }
        out
    }

    /// Drops every frame, returning them.
    pub fn clear(&mut self) -> Vec<StoredFrame> {
        self.bytes = 0;
        self.frames.drain(..).collect()
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Frame `i` (0: oldest).
    pub fn get(&self, i: usize) -> Option<&StoredFrame> {
        self.frames.get(i)
    }

    /// The index of the frame with this id.
    pub fn index_of(&self, id: u64) -> Option<usize> {
        let first = self.frames.front()?.id;
        let i = id.checked_sub(first)? as usize;
        // Ids are consecutive except where frames after a resume point were dropped.
        match self.frames.get(i) {
            Some(f) if f.id == id => Some(i),
            _ => self.frames.iter().position(|f| f.id == id),
        }
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &StoredFrame> {
        self.frames.iter()
    }

    /// Wall seconds from the oldest to the newest frame.
    pub fn seconds(&self) -> f64 {
        match (self.frames.front(), self.frames.back()) {
            (Some(a), Some(b)) => b.at.duration_since(a.at).as_secs_f64(),
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(ring: &mut FrameRing, step: u64, n: usize) -> StoredFrame {
        let id = ring.next_id();
        StoredFrame {
            id,
            step,
            at: Instant::now(),
            positions: StoredPositions::Host(Arc::new(vec![[step as f32; 4]; n].into())),
        }
    }

    #[test]
    fn the_budget_evicts_the_oldest_frames() {
        let mut ring = FrameRing::default();
        // Frames of 100 atoms (1600 bytes); a budget of 5 frames.
        let budget = 5 * 1600;
        for s in 0..12 {
            let f = host(&mut ring, s, 100);
            let evicted = ring.push(f, budget);
            assert!(ring.bytes() <= budget);
            if s >= 5 {
                assert_eq!(evicted.len(), 1);
                assert_eq!(evicted[0].step, s - 5);
            }
        }
        assert_eq!(ring.len(), 5);
        let steps: Vec<u64> = ring.iter().map(|f| f.step).collect();
        assert_eq!(steps, vec![7, 8, 9, 10, 11]);
        // A smaller budget evicts more; a resume drops the frames after its step.
        assert_eq!(ring.shrink_to(3 * 1600).len(), 2);
        assert_eq!(ring.truncate_after(9).len(), 2);
        assert_eq!(ring.iter().map(|f| f.step).collect::<Vec<_>>(), vec![9]);
        assert_eq!(ring.index_of(ring.get(0).unwrap().id), Some(0));
    }

    #[test]
    fn large_frames_are_thinned_to_span_thirty_seconds() {
        // 32,000 atoms (512 kB a frame) at 60 FPS: 30 s is 0.92 GB, within 3 GB: every frame.
        assert_eq!(thinning(32_000 * 16, 3 << 30, 60.0), 1);
        // A million atoms (16 MB) at 60 FPS: 28.8 GB for 30 s: every 9th frame fits 3 GB.
        let k = thinning(1_000_000 * 16, 3 << 30, 60.0);
        assert_eq!(k, 9);
        assert!(30.0 * 60.0 / k as f64 * 16e6 <= (3u64 << 30) as f64);
        assert!(30.0 * 60.0 / (k - 1) as f64 * 16e6 > (3u64 << 30) as f64);
        // Admission keeps exactly every k-th offered frame.
        let mut ring = FrameRing::default();
        let kept = (0..90).filter(|_| ring.admit(1_000_000 * 16, 3 << 30, 60.0)).count();
        // (Within the first second the rate is the display's, 60.)
        assert_eq!(kept, 10);
        // A frame bigger than the whole budget is never kept.
        assert!(!(0..20).any(|_| ring.admit(1000, 999, 60.0)));
    }
}
