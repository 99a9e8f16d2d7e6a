//! The slot protocol of zero-copy position streaming: a few shared buffers that the
//! simulation thread writes and the renderer reads, each named by what the simulation writes
//! through (`SlotMemory`: CUDA device addresses, or wgpu buffers of the device both run on).
//! The simulation writes only a slot that is neither the newest complete one, nor the one on
//! display, nor read by a frame the GPU may still be executing; a slot becomes the newest
//! only after its write has finished (a CUDA stream sync) or, on the renderer's own device,
//! once the write is submitted (later submissions on that queue see it). The renderer takes
//! the newest complete slot when it starts a frame and marks it read by that frame; frames
//! report completion from the GPU.

use std::sync::Mutex;

/// A finished write: which slot, its sequence number, the step and atom count it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotFrame {
    pub slot: usize,
    pub seq: u64,
    pub step: u64,
    pub n_atoms: usize,
}

#[derive(Debug)]
struct State {
    latest: Option<SlotFrame>,
    displayed: Option<SlotFrame>,
    writing: Option<usize>,
    /// The last UI frame index that read each slot (0: never).
    last_read: Vec<u64>,
    /// The newest UI frame index the GPU has finished.
    completed: u64,
    seq: u64,
}

/// What the simulation writes the slots through.
#[derive(Debug, Clone)]
pub enum SlotMemory {
    /// CUDA device addresses (Vulkan memory imported into CUDA).
    Cuda,
    /// Storage buffers of the device the wgpu backend runs on and the renderer draws with:
    /// the slots' buffers themselves.
    SameDevice { buffers: Vec<wgpu::Buffer> },
}

/// Device addresses of the shared buffers and the state of each (shared by both threads).
#[derive(Debug)]
pub struct SharedSlots {
    /// CUDA device address of each slot (zeros on the same device).
    pub ptrs: Vec<u64>,
    /// Atoms each slot holds at most.
    pub capacity: usize,
    /// What the simulation writes through.
    pub memory: SlotMemory,
    state: Mutex<State>,
}

impl SharedSlots {
    /// Slots at CUDA device addresses `ptrs`.
    pub fn new(ptrs: Vec<u64>, capacity: usize) -> SharedSlots {
        Self::with_memory(ptrs, capacity, SlotMemory::Cuda)
    }

    /// Slots that are `buffers` of a device, written by a backend on that device.
    pub fn same_device(buffers: Vec<wgpu::Buffer>, capacity: usize) -> SharedSlots {
        let ptrs = vec![0; buffers.len()];
        Self::with_memory(ptrs, capacity, SlotMemory::SameDevice { buffers })
    }

    fn with_memory(ptrs: Vec<u64>, capacity: usize, memory: SlotMemory) -> SharedSlots {
        let k = ptrs.len();
        SharedSlots {
            ptrs,
            capacity,
            memory,
            state: Mutex::new(State {
                latest: None,
                displayed: None,
                writing: None,
                last_read: vec![0; k],
                completed: 0,
                seq: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Simulation side: a slot that may be written now, or None (all busy: skip this frame).
    pub fn begin_write(&self) -> Option<usize> {
        let mut s = self.lock();
        if s.writing.is_some() {
            return None;
        }
        let busy = |k: usize, s: &State| {
            s.latest.is_some_and(|f| f.slot == k)
                || s.displayed.is_some_and(|f| f.slot == k)
                || s.last_read[k] > s.completed
        };
        let k = (0..self.ptrs.len()).find(|&k| !busy(k, &s))?;
        s.writing = Some(k);
        Some(k)
    }

    /// Simulation side: the write into `slot` has finished (the stream was synchronised).
    pub fn finish_write(&self, slot: usize, step: u64, n_atoms: usize) -> u64 {
        let mut s = self.lock();
        s.writing = None;
        s.seq += 1;
        let seq = s.seq;
        s.latest = Some(SlotFrame { slot, seq, step, n_atoms });
        seq
    }

    /// Simulation side: the write failed; the slot is free again.
    pub fn abort_write(&self) {
        self.lock().writing = None;
    }

    /// Renderer side, at the start of UI frame `frame` (counting from 1): the slot to draw
    /// (the newest complete one, else the one already on display), marked read by `frame`.
    pub fn acquire(&self, frame: u64) -> Option<SlotFrame> {
        let mut s = self.lock();
        if let Some(l) = s.latest.take() {
            s.displayed = Some(l);
        }
        let d = s.displayed?;
        s.last_read[d.slot] = s.last_read[d.slot].max(frame);
        Some(d)
    }

    /// The GPU finished UI frame `frame` (and every earlier one).
    pub fn frame_completed(&self, frame: u64) {
        let mut s = self.lock();
        s.completed = s.completed.max(frame);
    }

    /// The frame on display (without marking it read).
    pub fn displayed(&self) -> Option<SlotFrame> {
        self.lock().displayed
    }

    /// True when a newer complete frame waits than the one on display.
    pub fn has_unread(&self) -> bool {
        self.lock().latest.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_writes_a_slot_on_display_newest_or_in_flight() {
        let s = SharedSlots::new(vec![10, 20, 30], 100);
        // Write slot a, publish, display it in frame 1.
        let a = s.begin_write().unwrap();
        assert!(s.begin_write().is_none(), "one write at a time");
        s.finish_write(a, 5, 100);
        let f1 = s.acquire(1).unwrap();
        assert_eq!((f1.slot, f1.step, f1.seq), (a, 5, 1));
        // Two more writes fill the other slots; a fourth finds none free (a displayed, b newest,
        // c writing), and never a.
        let b = s.begin_write().unwrap();
        assert_ne!(b, a);
        s.finish_write(b, 10, 100);
        let c = s.begin_write().unwrap();
        assert!(c != a && c != b);
        assert!(s.begin_write().is_none());
        s.finish_write(c, 15, 100);
        // b was replaced as newest by c before display: b is free again; a is on display.
        let d = s.begin_write().unwrap();
        assert_eq!(d, b);
        s.abort_write();
        // Frame 2 shows c; a was read by frame 1, still in flight until frame 1 completes.
        let f2 = s.acquire(2).unwrap();
        assert_eq!((f2.slot, f2.seq), (c, 3));
        let w = s.begin_write().unwrap();
        assert_eq!(w, b, "a is still read by an unfinished frame");
        s.abort_write();
        s.frame_completed(1);
        // Now a or b may be written, never c (on display, read by frame 2).
        let w = s.begin_write().unwrap();
        assert_ne!(w, c);
        // Sequence numbers only grow.
        s.finish_write(w, 20, 100);
        assert!(s.acquire(3).unwrap().seq > f2.seq);
    }
}
