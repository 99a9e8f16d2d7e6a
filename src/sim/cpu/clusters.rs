//! Cluster-pair neighbour lists for the single-species f32 force loop on AVX-512 or AVX2
//! (the scheme of GROMACS' nbnxm kernels): atoms are grouped into clusters of [`CLUSTER`]
//! spatial neighbours, and the list holds pairs of clusters whose bounding boxes come within
//! the list range, each with the periodic image the second is seen in. The force loop then
//! reads positions as contiguous vectors and adds reactions with whole-vector stores: no
//! gathers, scatters or per-pair minimum images.
//!
//! Clusters: the box is cut into columns along z about two clusters' widths across; atoms
//! are sorted by column, then by z within a column, and every run of [`CLUSTER`] atoms of a
//! column is a cluster (the last one of a column may be short). The caller permutes its
//! atom slots into that order, so cluster `c` is the slots `first[c]..first[c + 1]`.
//!
//! Each step the caller [`pack`](ClusterList::pack)s the positions into per-cluster
//! structure-of-arrays blocks, unwrapped to the images they had when the list was built (the
//! drift wraps atoms that cross a periodic face; the list's image shifts assume they were
//! not wrapped). Empty lanes sit at a far-away point and never interact.
//!
//! The force loop and the pruning test of the build are ISA-specific: `cluster_kernel` on
//! AVX-512, `cluster_avx2` on AVX2+FMA, picked by [`simd::level`](super::simd::level)
//! through the `kernel` child module (their safe entry points); the rest is portable.

use rayon::prelude::*;

use super::cells::CellGrid;
use super::kernels::{EnergyVirial, TENSOR_AXES, mode};
use super::neighbors::balanced_ranges;
use super::simd::SimdLevel;
use crate::physics::lj::LjPair;
use crate::physics::sim_box::SimBox;

/// Atoms per cluster.
pub const CLUSTER: usize = 8;

/// The shift code of the unshifted image (codes are `(sx+1)*9 + (sy+1)*3 + (sz+1)`).
const ZERO_SHIFT: u32 = 13;

/// Bits of a list entry holding the shift code; the cluster index sits above them.
const SHIFT_BITS: u32 = 5;

/// One cluster's x, y and z (lanes 0..8 of each row; row 3 unused), or its forces.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Block(pub [[f32; CLUSTER]; 4]);

impl Block {
    const ZERO: Block = Block([[0.0; CLUSTER]; 4]);
}

/// Axis-aligned bounding box of a cluster's atoms.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    lo: [f32; 3],
    hi: [f32; 3],
}

impl Bounds {
    /// The smallest box around `lo` and `hi` of each item (inverted when there are none).
    fn around<'a>(items: impl Iterator<Item = (&'a [f32], &'a [f32])>) -> Bounds {
        let mut u = Bounds { lo: [f32::INFINITY; 3], hi: [f32::NEG_INFINITY; 3] };
        for (lo, hi) in items {
            for k in 0..3 {
                u.lo[k] = u.lo[k].min(lo[k]);
                u.hi[k] = u.hi[k].max(hi[k]);
            }
        }
        u
    }
}

/// The list entries of a run of consecutive i-clusters, by half cluster: atoms 4h..4h + 4 of
/// cluster `first + k` pair with `entries[start[2k + h]..start[2k + h + 1]]`, each
/// `j << SHIFT_BITS | shift code` (j-clusters with an atom within the list range of the
/// half). Storage is kept between builds.
#[derive(Clone, Debug, Default)]
pub struct ClusterChunk {
    pub first: usize,
    pub start: Vec<u32>,
    pub entries: Vec<u32>,
}

impl ClusterChunk {
    /// The chunk's rows: (i-cluster, half, entries).
    #[inline(always)]
    pub fn rows(&self) -> impl Iterator<Item = (usize, usize, &[u32])> {
        self.start.windows(2).enumerate().map(|(row, w)| {
            (self.first + row / 2, row % 2, self.entries.get(w[0] as usize..w[1] as usize).unwrap_or(&[]))
        })
    }
}

/// Entry `e` of i-cluster `ci`'s list: the j-cluster's index and block, the shift of its
/// image, and whether it is `ci` itself unshifted (each pair of it counts once); None when
/// it names a cluster outside `packed` or no image.
#[inline(always)]
pub fn resolve<'a>(
    e: u32,
    ci: usize,
    packed: &'a [Block],
    shifts: &'a [[f32; 4]; 27],
) -> Option<(usize, &'a Block, &'a [f32; 4], bool)> {
    let (cj, code) = ((e >> SHIFT_BITS) as usize, e & ((1 << SHIFT_BITS) - 1));
    Some((cj, packed.get(cj)?, shifts.get(code as usize)?, cj == ci && code == ZERO_SHIFT))
}

/// Clusters, their positions and the cluster-pair list.
#[derive(Clone, Debug, Default)]
pub struct ClusterList {
    columns: Option<CellGrid>,
    /// Clusters of column `k`: `col_clusters[k]..col_clusters[k + 1]`.
    col_clusters: Vec<u32>,
    /// Slots of cluster `c`: `first[c]..first[c + 1]` (at most [`CLUSTER`]).
    pub first: Vec<u32>,
    bounds: Vec<Bounds>,
    /// Bounds of each column's clusters together.
    col_bounds: Vec<Bounds>,
    /// Positions by cluster, unwrapped to their images at the build.
    pub packed: Vec<Block>,
    pub chunks: Vec<ClusterChunk>,
    /// Image shifts by code: (sx Lx, sy Ly, sz Lz, 0).
    pub shifts: [[f32; 4]; 27],
    len: [f32; 3],
    periodic: [bool; 3],
}

/// Whether cluster lists may be used: on x86-64 with AVX-512 or AVX2+FMA (the SIMD level in
/// use, see `simd`), unless `ARGON_CPU_CLUSTERS=0` asks for the per-atom list (for
/// comparisons).
pub fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        cfg!(target_arch = "x86_64")
            && super::simd::level() != SimdLevel::Base
            && std::env::var("ARGON_CPU_CLUSTERS").map_or(true, |v| v.trim() != "0")
    })
}

/// Whether clusters can serve `b` at list range `range`: every periodic length must exceed
/// the range, so that partners are at most one image away.
pub fn fits(b: &SimBox, range: f64) -> bool {
    let len = b.length();
    (0..3).all(|k| !b.periodic[k] || len[k] > range)
}

impl ClusterList {
    pub fn n_clusters(&self) -> usize {
        self.first.len().saturating_sub(1)
    }

    /// Sorts the atoms at `pos` into clusters; returns the order the caller must permute its
    /// slots into (new slot `k` holds old slot `order[k]`), after which it calls
    /// [`build`](Self::build).
    pub fn sort(&mut self, pos: &[[f32; 4]], b: &SimBox) -> &[u32] {
        let n = pos.len();
        let len = b.length();
        let density = n as f64 / b.volume().max(f64::MIN_POSITIVE);
        // Columns about two clusters' width across (a cluster is near-cubic then), no more
        // columns than clusters.
        let width = (CLUSTER as f64 / density.max(1e-12)).cbrt();
        let mut dims = [0usize; 2];
        for k in 0..2 {
            dims[k] = ((len[k] / width).floor() as usize).clamp(1, n.div_ceil(CLUSTER).max(1));
        }
        while dims[0] * dims[1] > n.div_ceil(CLUSTER).max(1) {
            let k = if dims[0] >= dims[1] { 0 } else { 1 };
            dims[k] = (dims[k] / 2).max(1);
        }
        let grid = self.columns.insert(CellGrid::with_dims(b, [dims[0], dims[1], 1]));
        grid.bin_by(n, |i| [pos[i][0] as f64, pos[i][1] as f64, pos[i][2] as f64]);
        // Sort each column by z.
        let ncols = grid.n_cells();
        let mut parts: Vec<&mut [u32]> = Vec::with_capacity(ncols);
        let mut rest = &mut grid.order[..];
        for w in grid.start.windows(2) {
            let (head, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
            parts.push(head);
            rest = tail;
        }
        parts
            .into_par_iter()
            .for_each(|p| p.sort_unstable_by(|&a, &b| pos[a as usize][2].total_cmp(&pos[b as usize][2])));
        // Cut every column into clusters.
        self.col_clusters.clear();
        self.first.clear();
        self.col_clusters.push(0);
        for c in 0..ncols {
            let (lo, hi) = (grid.start[c], grid.start[c + 1]);
            let mut s = lo;
            while s < hi {
                self.first.push(s);
                s = (s + CLUSTER as u32).min(hi);
            }
            self.col_clusters.push(self.first.len() as u32);
        }
        self.first.push(n as u32);
        &grid.order
    }

    /// Builds bounds, packed positions and the pair list for `pos`, already permuted into
    /// the order [`sort`](Self::sort) returned, at list range `range`.
    pub fn build(&mut self, pos: &[[f32; 4]], b: &SimBox, range: f64) {
        self.build_with(super::simd::level(), pos, b, range);
    }

    /// [`build`](Self::build), pruning with the loop of SIMD level `level` (AVX-512 or AVX2).
    fn build_with(&mut self, level: SimdLevel, pos: &[[f32; 4]], b: &SimBox, range: f64) {
        let len = b.length();
        self.len = len.map(|l| l as f32);
        self.periodic = b.periodic;
        for (code, s) in self.shifts.iter_mut().enumerate() {
            let image = [code as i32 / 9 - 1, code as i32 / 3 % 3 - 1, code as i32 % 3 - 1];
            *s = [0, 1, 2, 3].map(|k| if k < 3 { image[k] as f32 * self.len[k] } else { 0.0 });
        }
        let nc = self.n_clusters();
        let first = &self.first;
        self.bounds.clear();
        self.bounds.par_extend(
            (0..nc).into_par_iter().map(|c| {
                Bounds::around(pos[first[c] as usize..first[c + 1] as usize].iter().map(|p| (&p[..], &p[..])))
            }),
        );
        let (bounds, col_clusters) = (&self.bounds, &self.col_clusters);
        self.col_bounds.clear();
        self.col_bounds.extend(
            col_clusters
                .windows(2)
                .map(|w| Bounds::around(bounds[w[0] as usize..w[1] as usize].iter().map(|c| (&c.lo[..], &c.hi[..])))),
        );
        // Empty lanes sit further from the box than any atom or image can come.
        let far = (b.lo.iter().fold(f64::INFINITY, |a, &x| a.min(x))
            - 3.0 * len.iter().fold(0.0f64, |a, &x| a.max(x))
            - 100.0) as f32;
        self.packed.clear();
        self.packed.resize(nc, Block([[far; CLUSTER]; 4]));
        self.pack_images(pos, None);
        // Small chunks: the force loop balances its threads by whole chunks.
        let size = (nc / (32 * rayon::current_num_threads().max(1))).clamp(16, 256);
        let mut chunks = std::mem::take(&mut self.chunks);
        chunks.resize_with(nc.div_ceil(size), ClusterChunk::default);
        let this = &*self;
        chunks.par_iter_mut().enumerate().for_each(|(k, chunk)| {
            chunk.first = k * size;
            chunk.start.clear();
            chunk.start.push(0);
            chunk.entries.clear();
            let (mut near, mut halves) = (Vec::new(), Vec::new());
            let r2 = (range * range) as f32;
            for ci in chunk.first..(chunk.first + size).min(nc) {
                near.clear();
                this.pairs_of(ci, b, range as f32, &mut near);
                // Keep, for each half of the i-cluster, the j-clusters with an atom in range.
                kernel::near_halves(level, ci, &near, &this.packed, &this.shifts, r2, &mut halves);
                for h in 0..2 {
                    let kept = near.iter().zip(&halves).filter(|&(_, m)| m >> h & 1 == 1);
                    chunk.entries.extend(kept.map(|(&e, _)| e));
                    chunk.start.push(chunk.entries.len() as u32);
                }
            }
        });
        self.chunks = chunks;
    }

    /// Appends the entries of cluster `ci`: every cluster j (with j > ci, or j = ci in the
    /// unshifted or a "positive" image) whose bounds, in some image, come within `range`.
    fn pairs_of(&self, ci: usize, b: &SimBox, range: f32, out: &mut Vec<u32>) {
        let Some(g) = self.columns.as_ref() else { return };
        let bi = self.bounds[ci];
        let lo = b.lo.map(|x| x as f32);
        let r2 = range * range;
        // Column (or image) index ranges along each axis, with the image of each.
        let window = |k: usize, n: usize, width: f32| -> (i64, i64) {
            let a = ((bi.lo[k] - range - lo[k]) / width).floor() as i64;
            let z = ((bi.hi[k] + range - lo[k]) / width).floor() as i64;
            if b.periodic[k] { (a, z) } else { (a.clamp(0, n as i64 - 1), z.clamp(0, n as i64 - 1)) }
        };
        // Partners are at most one image away (see `fits`).
        let wrap = |v: i64, n: usize| {
            let n = n as i64;
            if v < 0 {
                ((v + n).max(0) as usize, -1)
            } else if v >= n {
                ((v - n).min(n - 1) as usize, 1)
            } else {
                (v as usize, 0)
            }
        };
        let (nx, ny) = (g.dims[0], g.dims[1]);
        let (x0, x1) = window(0, nx, self.len[0] / nx as f32);
        let (y0, y1) = window(1, ny, self.len[1] / ny as f32);
        let (z0, z1) = if b.periodic[2] { window(2, 1, self.len[2]) } else { (0, 0) };
        for yu in y0..=y1 {
            let (cy, sy) = wrap(yu, ny);
            for xu in x0..=x1 {
                let (cx, sx) = wrap(xu, nx);
                let col = cy * nx + cx;
                let cols = self.col_clusters[col] as usize..self.col_clusters[col + 1] as usize;
                // Only clusters from ci on (half list); earlier columns hold only earlier ones.
                if cols.end <= ci {
                    continue;
                }
                let from = cols.start.max(ci);
                // The column's distance across x and y narrows the z window (empty: skipped).
                let (cb, shift) = (&self.col_bounds[col], [sx as f32 * self.len[0], sy as f32 * self.len[1]]);
                let mut room = r2;
                for d in 0..2 {
                    let gap = (cb.lo[d] + shift[d] - bi.hi[d]).max(bi.lo[d] - cb.hi[d] - shift[d]).max(0.0);
                    room -= gap * gap;
                }
                if room.is_nan() || room <= 0.0 {
                    continue;
                }
                let reach = room.sqrt();
                for sz in z0..=z1 {
                    let code = ((sx + 1) * 9 + (sy + 1) * 3 + (sz + 1)) as u32;
                    let s = self.shifts[code as usize];
                    let (below, above) = (bi.lo[2] - reach - s[2], bi.hi[2] + reach - s[2]);
                    // Clusters of a column are sorted by z: scan those overlapping in z.
                    for (cj, bj) in self.bounds[from..cols.end].iter().enumerate().map(|(k, b)| (from + k, b)) {
                        if bj.hi[2] < below {
                            continue;
                        }
                        if bj.lo[2] > above {
                            break;
                        }
                        if cj == ci && code < ZERO_SHIFT {
                            continue;
                        }
                        out.push((cj as u32) << SHIFT_BITS | code);
                    }
                }
            }
        }
    }

    /// Copies `pos` (slots in cluster order) into the packed blocks, each atom in the image
    /// nearest its position at the build (`at_build`).
    pub fn pack(&mut self, pos: &[[f32; 4]], at_build: &[[f32; 3]]) {
        self.pack_images(pos, Some(at_build));
    }

    /// Copies `pos` into the packed blocks as they are (`at_build` None: at the build) or in
    /// the images nearest `at_build`.
    fn pack_images(&mut self, pos: &[[f32; 4]], at_build: Option<&[[f32; 3]]>) {
        let (first, len) = (&self.first, self.len);
        // Half a periodic length (infinite on walled axes): a larger move was a wrap.
        let half: [f32; 3] = std::array::from_fn(|k| if self.periodic[k] { 0.5 * len[k] } else { f32::INFINITY });
        self.packed.par_iter_mut().enumerate().with_min_len(64).for_each(|(c, blk)| {
            for (l, s) in (first[c] as usize..first[c + 1] as usize).enumerate() {
                let (p, q) = (pos[s], at_build.map_or([pos[s][0], pos[s][1], pos[s][2]], |a| a[s]));
                for k in 0..3 {
                    let d = p[k] - q[k];
                    blk.0[k][l] = if d > half[k] {
                        p[k] - len[k]
                    } else if d < -half[k] {
                        p[k] + len[k]
                    } else {
                        p[k]
                    };
                }
            }
        });
    }

    /// Pair forces (written to `force`, slots in cluster order) and the sums of mode `M`
    /// (see `kernels::mode`), from the packed positions. The pair virial tensor is
    /// `sum over pairs of d_a f_b` with `d = x_i - x_j - s` (s the entry's image shift):
    /// `sum over atoms of x_a F_b` (packed x, the total pair force F) plus `sum over
    /// entries of s_a fj_b` (fj the entry's reactions on its j-cluster), so the loops add
    /// only the latter, a few vector adds per entry. Each thread takes a run of clusters with
    /// about the same number of entries and accumulates into its own buffer in `bufs`.
    pub fn forces<const M: u8>(
        &self,
        lj: &LjPair<f32>,
        bufs: &mut Vec<Vec<Block>>,
        force: &mut [[f32; 4]],
    ) -> EnergyVirial<f64> {
        self.forces_with::<M>(super::simd::level(), lj, bufs, force)
    }

    /// [`forces`](Self::forces) with the loop of SIMD level `level` (AVX-512 or AVX2).
    fn forces_with<const M: u8>(
        &self,
        level: SimdLevel,
        lj: &LjPair<f32>,
        bufs: &mut Vec<Vec<Block>>,
        force: &mut [[f32; 4]],
    ) -> EnergyVirial<f64> {
        let nc = self.n_clusters();
        let weights = self.chunks.iter().map(|c| c.entries.len());
        let ranges = balanced_ranges(weights, rayon::current_num_threads());
        bufs.resize_with(ranges.len(), Vec::new);
        let sums: Vec<EnergyVirial<f64>> = bufs
            .par_iter_mut()
            .zip(ranges.par_iter())
            .map(|(buf, range)| {
                buf.clear();
                buf.resize(nc, Block::ZERO);
                let mut sums = EnergyVirial::default();
                for chunk in &self.chunks[range.clone()] {
                    sums.add(kernel::rows::<M>(level, chunk, &self.packed, &self.shifts, lj, buf));
                }
                sums
            })
            .collect();
        // Sum the buffers into the slots, a run of clusters at a time.
        let bufs = &*bufs;
        let mut outs: Vec<(usize, &mut [[f32; 4]])> = Vec::new();
        let mut rest = force;
        for c0 in (0..nc).step_by(256) {
            let c1 = (c0 + 256).min(nc);
            let (head, tail) = rest.split_at_mut((self.first[c1] - self.first[c0]) as usize);
            outs.push((c0, head));
            rest = tail;
        }
        let moments: Vec<[f64; 6]> = outs
            .into_par_iter()
            .map(|(c0, out)| {
                let base = self.first[c0] as usize;
                let mut moment = [0.0; 6];
                for c in c0..(c0 + 256).min(nc) {
                    for s in self.first[c] as usize..self.first[c + 1] as usize {
                        let l = s - self.first[c] as usize;
                        let mut f = [0.0f32; 4];
                        for b in bufs {
                            for k in 0..3 {
                                f[k] += b[c].0[k][l];
                            }
                        }
                        out[s - base] = f;
                        if M & mode::STRESS != 0 {
                            let x = self.packed[c].0;
                            for (q, &(a, b)) in TENSOR_AXES.iter().enumerate() {
                                moment[q] += x[a][l] as f64 * f[b] as f64;
                            }
                        }
                    }
                }
                moment
            })
            .collect();
        let mut total = sums.into_iter().fold(EnergyVirial::default(), |mut a, b| {
            a.add(b);
            a
        });
        for m in moments {
            for q in 0..6 {
                total.tensor[q] += m[q];
            }
        }
        total
    }
}

mod kernel;

#[cfg(test)]
mod tests;
