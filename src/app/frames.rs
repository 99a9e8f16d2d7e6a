//! The newest complete frame of positions, handed from the simulation thread to the renderer
//! without either waiting for the other (the host-staging path): the simulation fills a spare
//! buffer and publishes it (replacing an unread older frame, whose buffer becomes spare); the
//! UI takes the newest frame when it draws and gives the buffer back. At most three buffers
//! ever exist. With the CUDA backend the buffers are page-locked (pinned) host memory, so the
//! copy from the GPU runs at full bus speed.

use std::sync::Mutex;

pub use crate::sim::HostBuf;

/// One published frame: `[x, y, z, colour]` per atom in canonical order.
#[derive(Debug)]
pub struct Frame {
    pub positions: HostBuf,
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
    spare: Vec<HostBuf>,
    seq: u64,
}

/// Shared between the simulation thread (writer) and the UI (reader).
#[derive(Default)]
pub struct FrameSlots {
    inner: Mutex<Slots>,
}

/// Spare buffers kept (the one on display, the newest and the one being written make up the
/// rest); more are dropped by whoever returns them.
const MAX_SPARE: usize = 3;

impl FrameSlots {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        // A panic while holding this lock cannot leave the slots inconsistent: use them anyway.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A buffer for the next frame, `n` long (contents unspecified), pinned when asked.
    pub fn buffer(&self, n: usize, pinned: bool) -> HostBuf {
        match self.lock().spare.pop() {
            Some(mut b) if b.is_pinned() == pinned => {
                b.resize(n);
                b
            }
            _ => HostBuf::new(n, pinned),
        }
    }

    /// Makes `positions` the newest frame.
    pub fn publish(&self, positions: HostBuf, step: u64) {
        self.publish_as(positions, step, true);
    }

    /// Publishes, saying whether the frame is for display (see [`Frame::display`]).
    pub fn publish_as(&self, positions: HostBuf, step: u64, display: bool) {
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
    pub fn give_back(&self, positions: HostBuf) {
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
        let mut a = slots.buffer(3, false);
        a[0][0] = 1.0;
        slots.publish(a, 10);
        let mut b = slots.buffer(3, false);
        b[0][0] = 2.0;
        slots.publish(b, 20);
        let f = slots.take_latest().unwrap();
        assert_eq!((f.step, f.seq, f.positions[0][0]), (20, 2, 2.0));
        assert!(slots.take_latest().is_none());
        slots.give_back(f.positions);
        // The unread frame 10 and the returned one are the spares: no new allocation.
        let c = slots.buffer(5, false);
        assert_eq!(c.len(), 5);
        // Without CUDA a pinned buffer falls back to plain memory; either way it is usable.
        let mut p = HostBuf::new(4, true);
        p[3] = [1.0, 2.0, 3.0, 4.0];
        p.resize(2);
        assert_eq!(p.len(), 2);
        p.resize(8);
        assert_eq!(p.len(), 8);
    }
}
