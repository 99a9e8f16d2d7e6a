//! Neighbour-list upkeep: the displacement since the last build, the rebuilds (the
//! per-atom list after re-sorting the atoms by cell, or the cluster-pair list after sorting
//! them into clusters), the in-place permutation of the atom arrays that both sorts use, and
//! invalidation when parameters change. When to rebuild is decided by the force pass
//! (`dispatch.rs`).

use rayon::prelude::*;

use super::{CpuSim, force_positions};
use crate::physics::params::SimParams;
use crate::physics::real::{PrecisionMode, Real};
use crate::sim::cpu::cells::CellGrid;
use crate::sim::cpu::kernels::MinImage;
use crate::sim::cpu::simd::cast_slice;

/// Reorders `v` so that the new `v[k]` is the old `v[order[k]]`, gathering through
/// `scratch` (the force array, dead while the list is rebuilt: no allocation, no extra
/// memory). When an element is wider than the scratch holds per atom, it moves in parts.
fn permute<T: bytemuck::Pod + Send + Sync>(v: &mut [T], order: &[u32], scratch: &mut [u8]) {
    let n = v.len();
    let size = std::mem::size_of::<T>();
    let room = scratch.len().checked_div(n).map_or(size, |r| r.min(size));
    assert!(room > 0, "permutation scratch too small");
    if room == size {
        // Whole elements fit: a typed gather (when the scratch is aligned for T).
        if let Ok(tmp) = bytemuck::try_cast_slice_mut::<u8, T>(&mut scratch[..std::mem::size_of_val(v)]) {
            let src = &*v;
            tmp.par_iter_mut().zip(order.par_iter()).with_min_len(4096).for_each(|(d, &i)| *d = src[i as usize]);
            v.copy_from_slice(tmp);
            return;
        }
    }
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(v);
    let mut offset = 0;
    while offset < size {
        let w = room.min(size - offset);
        let src = &*bytes;
        scratch[..n * w].par_chunks_mut(w).zip(order.par_iter()).with_min_len(4096).for_each(|(d, &i)| {
            let from = i as usize * size + offset;
            d.copy_from_slice(&src[from..from + w]);
        });
        bytes.par_chunks_mut(size).zip(scratch[..n * w].par_chunks(w)).with_min_len(4096).for_each(|(e, d)| {
            e[offset..offset + w].copy_from_slice(d);
        });
        offset += w;
    }
}

impl<P: PrecisionMode> CpuSim<P> {
    /// Forces must be recomputed (parameters, obstacles or algorithm changed).
    pub fn invalidate(&mut self) {
        self.forces_valid = false;
        self.nl_valid = false;
        self.pos_f_fresh = false;
    }

    /// Largest squared displacement since the neighbour list was built.
    pub(super) fn max_disp_sq_since_build(&self) -> f64 {
        let b = &self.sim_box;
        self.pos
            .par_iter()
            .zip(self.nl.pos_at_build.par_iter())
            .with_min_len(4096)
            .map(|(p, q)| {
                let d = b.min_image([p[0].f64(), p[1].f64(), p[2].f64()], q.map(f64::from));
                d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
            })
            .reduce(|| 0.0, f64::max)
    }

    pub(super) fn rebuild_neighbors(&mut self, params: &SimParams) {
        let range = params.list_range();
        if self.nl_grid.is_none() || (!self.nl_valid && (self.nl_range != range || self.nl.builds == 0)) {
            self.nl_grid = CellGrid::for_lists(&self.sim_box, range);
            self.nl_range = range;
        }
        if let Some(g) = self.nl_grid.as_mut() {
            let pf = force_positions(&self.pos, &self.pos_f);
            g.bin_by(pf.len(), |i| [pf[i][0].f64(), pf[i][1].f64(), pf[i][2].f64()]);
            // Forces are recomputed right after a rebuild: their array is free scratch.
            let (order, scratch) = (&g.order, bytemuck::cast_slice_mut::<_, u8>(&mut self.force[..]));
            permute(&mut self.pos, order, scratch);
            permute(&mut self.vel, order, scratch);
            permute(&mut self.types, order, scratch);
            permute(&mut self.dye, order, scratch);
            permute(&mut self.ids, order, scratch);
            self.sync_pos_f();
        }
        let img = MinImage::new(&self.sim_box);
        // The force array is still free scratch.
        let scratch = self.force.as_flattened_mut();
        self.nl.build(force_positions(&self.pos, &self.pos_f), self.nl_grid.as_ref(), range, &img, scratch);
        self.nl_valid = true;
    }

    /// Sorts the atoms into clusters and builds the cluster-pair list (f32 forces only).
    pub(super) fn rebuild_clusters(&mut self, range: f64) {
        let pf = force_positions(&self.pos, &self.pos_f);
        let Some(p32) = cast_slice::<_, [f32; 4]>(pf) else { return };
        let order = self.clusters.sort(p32, &self.sim_box);
        // Forces are recomputed right after a rebuild: their array is free scratch.
        let scratch = bytemuck::cast_slice_mut::<_, u8>(&mut self.force[..]);
        permute(&mut self.pos, order, scratch);
        permute(&mut self.vel, order, scratch);
        permute(&mut self.types, order, scratch);
        permute(&mut self.dye, order, scratch);
        permute(&mut self.ids, order, scratch);
        self.sync_pos_f();
        let pf = force_positions(&self.pos, &self.pos_f);
        if let Some(p32) = cast_slice::<_, [f32; 4]>(pf) {
            self.clusters.build(p32, &self.sim_box, range);
        }
        self.nl.record_build(pf);
        self.nl_valid = true;
    }
}

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn permutation_in_place_gathers() {
        let order = [3u32, 0, 4, 1, 2, 5];
        let mut v = vec![10u32, 11, 12, 13, 14, 15];
        permute(&mut v, &order, &mut [0u8; 24]);
        assert_eq!(v, vec![13, 10, 14, 11, 12, 15]);
        // Elements wider than the scratch per atom move in parts.
        let mut w: Vec<[f64; 3]> = (0..6).map(|i| [i as f64, 10.0 + i as f64, 20.0 + i as f64]).collect();
        permute(&mut w, &order, &mut [0u8; 6 * 16]);
        assert_eq!(w[0], [3.0, 13.0, 23.0]);
        assert_eq!(w[4], [2.0, 12.0, 22.0]);
    }
}
