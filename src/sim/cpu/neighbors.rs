//! The Verlet neighbour list of the CPU backend: a half list (each pair once, j after i) in
//! CSR form (`start`, `nbrs`), built from the cell grid over atoms already sorted by cell,
//! with range cutoff + skin. Each atom's list is padded with its own index to a multiple of
//! `LANES` so the inner loop never needs a remainder. Rebuilt by the caller when any atom
//! moved more than skin/2 since `pos_at_build`.

use rayon::prelude::*;

use super::cells::CellGrid;
use super::kernels::{LANES, MinImage};
use super::simd::multiversion;
use crate::physics::real::Real;

/// The lists of a run of consecutive atoms (see [`chunk_atoms`]): atom `first + k` has
/// `nbrs[start[k]..start[k + 1]]`. Each chunk keeps its storage between builds, so a rebuild
/// allocates nothing and never holds two copies of the list.
#[derive(Clone, Debug, Default)]
pub struct ListChunk {
    pub first: usize,
    pub start: Vec<u32>,
    /// Followed by `2 * LANES` padding entries so vector loops may read past a list's end.
    pub nbrs: Vec<u32>,
}

impl ListChunk {
    /// Pairs stored for this chunk's atoms (padding of each list included).
    pub fn pairs(&self) -> usize {
        *self.start.last().unwrap_or(&0) as usize
    }
}

/// A half neighbour list (each pair once, j after i) in chunks.
#[derive(Clone, Debug, Default)]
pub struct NeighborList {
    pub chunks: Vec<ListChunk>,
    /// Positions when the list was built (f32 is plenty for the skin test), for the skin test.
    pub pos_at_build: Vec<[f32; 3]>,
    /// How many times it was built.
    pub builds: u64,
}

/// Atoms per chunk: about 32 chunks per thread for load balance, at least 256 atoms, and
/// at most 8192 so each chunk's storage is one large allocation the system can return.
pub fn chunk_atoms(n: usize, threads: usize) -> usize {
    (n / (32 * threads.max(1))).clamp(256, 8192)
}

/// Appends to `out` every j in the `ranges` within `sqrt(range_sq)` of `pi` (minimum image).
#[inline(always)]
fn scan_candidates<F: Real>(
    pi: [F; 4],
    ranges: &[std::ops::Range<usize>],
    pos: &[[F; 4]],
    range_sq: F,
    img: &MinImage<F>,
    out: &mut Vec<u32>,
) {
    #[cfg(target_arch = "x86_64")]
    if super::simd::level() == super::simd::SimdLevel::Avx512 && ranges.iter().all(|r| r.end <= pos.len()) {
        use super::simd::{cast_ref, cast_slice};
        if let (Some(p), Some(m)) = (cast_slice::<_, [f64; 4]>(pos), cast_ref(img)) {
            let q = [pi[0].f64(), pi[1].f64(), pi[2].f64(), 0.0];
            // SAFETY: AVX-512 was detected and every range lies within `pos`.
            return unsafe { super::avx512::scan_f64(q, ranges, p, range_sq.f64(), m, out) };
        }
        if let (Some(p), Some(m)) = (cast_slice::<_, [f32; 4]>(pos), cast_ref(img)) {
            let q = [pi[0].f64() as f32, pi[1].f64() as f32, pi[2].f64() as f32, 0.0];
            // SAFETY: as above.
            return unsafe { super::avx512::scan_f32(q, ranges, p, range_sq.f64() as f32, m, out) };
        }
    }
    // Branch-free append: write every candidate, advance only past those in range.
    for js in ranges {
        out.reserve(js.len());
        let mut len = out.len();
        let base = out.as_mut_ptr();
        for j in js.clone() {
            let pj = pos[j];
            let d = img.apply([pi[0] - pj[0], pi[1] - pj[1], pi[2] - pj[2]]);
            let inside = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < range_sq;
            // SAFETY: `reserve` made room for every candidate of this range.
            unsafe { base.add(len).write(j as u32) };
            len += inside as usize;
        }
        // SAFETY: the first `len` elements were written above or before.
        unsafe { out.set_len(len) };
    }
}

/// Builds the padded lists of `chunk.first..chunk.first + atoms` into `chunk`.
#[inline(always)]
fn build_body<F: Real>(
    chunk: &mut ListChunk,
    atoms: usize,
    pos: &[[F; 4]],
    grid: Option<&CellGrid>,
    range_sq: F,
    img: &MinImage<F>,
) {
    let lo = chunk.first;
    let hi = lo + atoms;
    let n = pos.len();
    let nbrs = &mut chunk.nbrs;
    // Room for the last build's size plus headroom, so rebuilds neither reallocate nor
    // grow by doubling (either makes the resident memory creep).
    let want = nbrs.len() + nbrs.len() / 8 + 64 * LANES;
    nbrs.clear();
    if nbrs.capacity() < want {
        nbrs.reserve_exact(want);
    }
    chunk.start.clear();
    chunk.start.push(0);
    let mut rows: Vec<std::ops::Range<usize>> = Vec::with_capacity(32);
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::with_capacity(32);
    let mut last_cell = usize::MAX;
    for i in lo..hi {
        let pi = pos[i];
        ranges.clear();
        match grid {
            Some(g) => {
                let c = g.cell_coords([pi[0].f64(), pi[1].f64(), pi[2].f64()]);
                let ci = g.index(c);
                if ci != last_cell {
                    rows.clear();
                    g.row_ranges(c, true, &mut rows);
                    last_cell = ci;
                }
                // The rest of the own cell usually runs straight into the next cells of its
                // row (row_ranges lists those first): scan them as one range.
                let own = g.range(ci);
                match rows.first() {
                    Some(r) if r.start == own.end => {
                        ranges.push(i + 1..r.end);
                        ranges.extend(rows[1..].iter().cloned());
                    }
                    _ => {
                        ranges.push(i + 1..own.end);
                        ranges.extend(rows.iter().cloned());
                    }
                }
            }
            None => ranges.push(i + 1..n),
        }
        scan_candidates(pi, &ranges, pos, range_sq, img, nbrs);
        while !nbrs.len().is_multiple_of(LANES) {
            nbrs.push(i as u32);
        }
        chunk.start.push(nbrs.len() as u32);
    }
    nbrs.extend(std::iter::repeat_n(0, 2 * LANES));
    // The first build grows by doubling and can leave up to twice the room needed.
    if nbrs.capacity() > nbrs.len() + nbrs.len() / 2 {
        nbrs.shrink_to_fit();
    }
}

multiversion!(fn build_chunk<F: Real;>(
    chunk: &mut ListChunk, atoms: usize, pos: &[[F; 4]], grid: Option<&CellGrid>, range_sq: F, img: &MinImage<F>
) = build_body);

impl NeighborList {
    /// Builds the list for `pos`, which must be sorted by `grid` cell (cell c holds the atoms
    /// `grid.range(c)`), or with `grid = None` by brute force (boxes too small for cells).
    pub fn build<F: Real>(&mut self, pos: &[[F; 4]], grid: Option<&CellGrid>, range: f64, img: &MinImage<F>) {
        let n = pos.len();
        let range_sq = F::of(range * range);
        let size = chunk_atoms(n, rayon::current_num_threads());
        let count = n.div_ceil(size);
        self.chunks.resize_with(count, ListChunk::default);
        self.chunks.par_iter_mut().enumerate().for_each(|(k, chunk)| {
            chunk.first = k * size;
            let atoms = size.min(n - chunk.first);
            build_chunk::<F>(chunk, atoms, pos, grid, range_sq, img);
        });
        self.pos_at_build.clear();
        self.pos_at_build.extend(pos.iter().map(|p| [p[0].f64() as f32, p[1].f64() as f32, p[2].f64() as f32]));
        self.builds += 1;
    }

    /// Splits the chunks into at most `parts` contiguous runs with about equal pair counts;
    /// returns the runs as chunk index ranges.
    pub fn balanced_ranges(&self, parts: usize) -> Vec<std::ops::Range<usize>> {
        let total: usize = self.chunks.iter().map(ListChunk::pairs).sum();
        let parts = parts.clamp(1, self.chunks.len().max(1));
        let mut out = Vec::with_capacity(parts);
        let (mut lo, mut acc) = (0, 0usize);
        for (k, c) in self.chunks.iter().enumerate() {
            acc += c.pairs();
            if out.len() + 1 < parts && acc * parts >= total * (out.len() + 1) {
                out.push(lo..k + 1);
                lo = k + 1;
            }
        }
        out.push(lo..self.chunks.len());
        out
    }
}
