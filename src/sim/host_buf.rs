//! Host buffers of `[x, y, z, colour]` positions for the renderer (the host-staging path):
//! plain memory, or CUDA page-locked (pinned) memory when the CUDA backend fills them, so
//! the copy from the GPU runs at full bus speed. Derefs to a slice either way.

use std::ops::{Deref, DerefMut};

enum Storage {
    Plain(Vec<[f32; 4]>),
    /// CUDA page-locked memory (cacheable, not write-combined: the UI reads it).
    Pinned {
        _alloc: cudarc::driver::PinnedHostSlice<f32>,
        ptr: *mut [f32; 4],
    },
}

/// A host buffer of `[x, y, z, colour]` quadruples, plain or pinned.
pub struct HostBuf {
    data: Storage,
    len: usize,
    capacity: usize,
}

// SAFETY: the pinned pointer is owned by this buffer alone (it came from its own allocation).
unsafe impl Send for HostBuf {}
// SAFETY: shared access only reads.
unsafe impl Sync for HostBuf {}

impl std::fmt::Debug for HostBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostBuf({} atoms{})", self.len, if self.is_pinned() { ", pinned" } else { "" })
    }
}

impl HostBuf {
    /// `n` quadruples, pinned when asked and CUDA can provide it (else plain).
    pub fn new(n: usize, pinned: bool) -> HostBuf {
        if pinned
            && let Ok(dev) = crate::sim::cuda::device::open()
            // SAFETY: the memory is only used as plain f32s; flags 0 keeps it cacheable.
            && let Ok(mut p) = unsafe { dev.ctx.alloc_pinned_with_flags::<f32>(n.max(1) * 4, 0) }
            && let Ok(ptr) = p.as_mut_ptr()
        {
            let mut b =
                HostBuf { data: Storage::Pinned { _alloc: p, ptr: ptr as *mut [f32; 4] }, len: n, capacity: n.max(1) };
            b.fill(0.0);
            return b;
        }
        HostBuf { data: Storage::Plain(vec![[0.0; 4]; n]), len: n, capacity: n }
    }

    pub fn is_pinned(&self) -> bool {
        matches!(self.data, Storage::Pinned { .. })
    }

    fn fill(&mut self, v: f32) {
        for q in self.iter_mut() {
            *q = [v; 4];
        }
    }

    /// Makes it `n` long (contents unspecified), reallocating only when it must grow.
    pub fn resize(&mut self, n: usize) {
        match &mut self.data {
            Storage::Plain(v) => {
                v.resize(n, [0.0; 4]);
                self.capacity = v.len();
                self.len = n;
            }
            Storage::Pinned { .. } if n <= self.capacity => self.len = n,
            Storage::Pinned { .. } => *self = HostBuf::new(n, true),
        }
    }
}

impl From<Vec<[f32; 4]>> for HostBuf {
    fn from(v: Vec<[f32; 4]>) -> HostBuf {
        let n = v.len();
        HostBuf { data: Storage::Plain(v), len: n, capacity: n }
    }
}

impl Deref for HostBuf {
    type Target = [[f32; 4]];
    fn deref(&self) -> &[[f32; 4]] {
        match &self.data {
            Storage::Plain(v) => &v[..self.len],
            // SAFETY: the allocation holds `capacity` >= `len` quadruples and lives with self.
            Storage::Pinned { ptr, .. } => unsafe { std::slice::from_raw_parts(*ptr, self.len) },
        }
    }
}

impl DerefMut for HostBuf {
    fn deref_mut(&mut self) -> &mut [[f32; 4]] {
        match &mut self.data {
            Storage::Plain(v) => &mut v[..self.len],
            // SAFETY: as above, and &mut self gives exclusive access.
            Storage::Pinned { ptr, .. } => unsafe { std::slice::from_raw_parts_mut(*ptr, self.len) },
        }
    }
}
