//! The newest complete frame of positions, handed from the simulation thread to the renderer
//! without either waiting for the other: the simulation fills a spare buffer and publishes
//! it (replacing an unread older frame, whose buffer becomes spare); the UI takes the newest
//! frame when it draws and gives the buffer back. At most three buffers ever exist.

use std::sync::Mutex;

/// One published frame: `[x, y, z, colour]` per atom in canonical order.
#[derive(Debug)]
pub struct Frame {
    pub positions: Vec<[f32; 4]>,
    pub step: u64,
    /// Increases by one with every publish.
    pub seq: u64,
    /// False for the occasional host copy made while zero-copy streaming feeds the display
    /// (kept for picking and brushes, not drawn).
    pub display: bool,
}

#[derive(Default)]
struct Slots {
    latest: Option<Frame>,
    spare: Vec<Vec<[f32; 4]>>,
    seq: u64,
}

/// Shared between the simulation thread (writer) and the UI (reader).
#[derive(Default)]
pub struct FrameSlots {
    inner: Mutex<Slots>,
}

const MAX_SPARE: usize = 2;

impl FrameSlots {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        // A panic while holding this lock cannot leave the slots inconsistent: use them anyway.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A buffer for the next frame, `n` long (contents unspecified).
    pub fn buffer(&self, n: usize) -> Vec<[f32; 4]> {
        let mut v = self.lock().spare.pop().unwrap_or_default();
        v.resize(n, [0.0; 4]);
        v
    }

    /// Makes `positions` the newest frame.
    pub fn publish(&self, positions: Vec<[f32; 4]>, step: u64) {
        self.publish_as(positions, step, true);
    }

    /// Publishes, saying whether the frame is for display (see [`Frame::display`]).
    pub fn publish_as(&self, positions: Vec<[f32; 4]>, step: u64, display: bool) {
        let mut s = self.lock();
        s.seq += 1;
        let seq = s.seq;
        if let Some(old) = s.latest.replace(Frame { positions, step, seq, display })
            && s.spare.len() < MAX_SPARE
        {
            s.spare.push(old.positions);
        }
    }

    /// True while a published frame has not been taken.
    pub fn has_unread(&self) -> bool {
        self.lock().latest.is_some()
    }

    /// The newest frame not taken yet.
    pub fn take_latest(&self) -> Option<Frame> {
        self.lock().latest.take()
    }

    /// Returns a buffer taken with [`FrameSlots::take_latest`] for reuse.
    pub fn give_back(&self, positions: Vec<[f32; 4]>) {
        let mut s = self.lock();
        if s.spare.len() < MAX_SPARE {
            s.spare.push(positions);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_wins_and_buffers_are_reused() {
        let slots = FrameSlots::default();
        assert!(slots.take_latest().is_none());
        let mut a = slots.buffer(3);
        a[0][0] = 1.0;
        slots.publish(a, 10);
        let mut b = slots.buffer(3);
        b[0][0] = 2.0;
        slots.publish(b, 20);
        let f = slots.take_latest().unwrap();
        assert_eq!((f.step, f.seq, f.positions[0][0]), (20, 2, 2.0));
        assert!(slots.take_latest().is_none());
        slots.give_back(f.positions);
        // The unread frame 10 and the returned one are the spares: no new allocation.
        let c = slots.buffer(5);
        assert_eq!(c.len(), 5);
    }
}
