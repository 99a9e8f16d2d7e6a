//! The Verlet neighbour list of the CPU backend: a half list (each pair once, j after i) in
//! CSR form (`start`, `nbrs`), built from the cell grid over atoms already sorted by cell,
//! with range cutoff + skin. Each atom's list is padded with its own index to a multiple of
//! `LANES` so the inner loop never needs a remainder. Rebuilt by the caller when any atom
//! moved more than skin/2 since `pos_at_build`.

use rayon::prelude::*;

use super::cells::{CellGrid, Span};
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

/// Where the build reads positions: `pos` itself (for the portable scan and brute force)
/// and, for the AVX-512 scan, the same positions as structure of arrays with the box lengths.
struct Candidates<'a, F> {
    pos: &'a [[F; 4]],
    soa: [&'a [F]; 3],
    img: &'a MinImage<F>,
    range_sq: F,
}

/// Appends to `out` every j in the `spans` within `sqrt(range_sq)` of `pi` (minimum image,
/// which each span's `image` gives when `images` is set).
#[inline(always)]
fn scan_candidates<F: Real>(pi: [F; 4], spans: &[Span], images: bool, c: &Candidates<F>, out: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    if images && super::simd::level() == super::simd::SimdLevel::Avx512 {
        use super::simd::cast_slice;
        let n = c.pos.len();
        assert!(spans.iter().all(|s| s.slots.end <= n) && c.soa.iter().all(|a| a.len() == n));
        if let (Some(x), Some(y), Some(z)) = (cast_slice(c.soa[0]), cast_slice(c.soa[1]), cast_slice(c.soa[2])) {
            let q = [pi[0].f64(), pi[1].f64(), pi[2].f64()];
            let len = c.img.len.map(|l| l.f64());
            // SAFETY: AVX-512 was detected and every span lies within the arrays.
            return unsafe { super::avx512::scan_soa_f64(q, spans, [x, y, z], len, c.range_sq.f64(), out) };
        }
        if let (Some(x), Some(y), Some(z)) = (cast_slice(c.soa[0]), cast_slice(c.soa[1]), cast_slice(c.soa[2])) {
            let q = [pi[0].f64() as f32, pi[1].f64() as f32, pi[2].f64() as f32];
            let len = c.img.len.map(|l| l.f64() as f32);
            // SAFETY: as above.
            return unsafe { super::avx512::scan_soa_f32(q, spans, [x, y, z], len, c.range_sq.f64() as f32, out) };
        }
    }
    // Branch-free append: write every candidate, advance only past those in range.
    for js in spans {
        let shift: [F; 3] = std::array::from_fn(|k| F::of(js.image[k] as f64) * c.img.len[k]);
        out.reserve(js.slots.len());
        let mut len = out.len();
        let base = out.as_mut_ptr();
        for j in js.slots.clone() {
            let pj = c.pos[j];
            let d = if images {
                // The span's own image: a thin grid reaches one cell in two images, of which
                // the minimum image would pick the same one twice.
                [pi[0] - pj[0] - shift[0], pi[1] - pj[1] - shift[1], pi[2] - pj[2] - shift[2]]
            } else {
                c.img.apply([pi[0] - pj[0], pi[1] - pj[1], pi[2] - pj[2]])
            };
            let inside = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < c.range_sq;
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
fn build_body<F: Real>(chunk: &mut ListChunk, atoms: usize, c: &Candidates<F>, grid: Option<&CellGrid>) {
    let lo = chunk.first;
    let hi = lo + atoms;
    let n = c.pos.len();
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
    let mut rows: Vec<Span> = Vec::with_capacity(32);
    let mut last_cell = usize::MAX;
    for i in lo..hi {
        let pi = c.pos[i];
        match grid {
            Some(g) => {
                let cell = g.cell_coords([pi[0].f64(), pi[1].f64(), pi[2].f64()]);
                let ci = g.index(cell);
                if ci != last_cell {
                    rows.clear();
                    g.forward_spans(cell, &mut rows);
                    last_cell = ci;
                }
                // The rest of the own cell usually runs straight into the next cells of its
                // row (forward_spans lists those first): scan them as one span.
                let own = g.range(ci);
                let (first, rest) = match rows.first() {
                    Some(r) if r.slots.start == own.end && r.image == [0; 3] => (i + 1..r.slots.end, &rows[1..]),
                    _ => (i + 1..own.end, &rows[..]),
                };
                scan_candidates(pi, &[Span { slots: first, image: [0; 3] }], true, c, nbrs);
                scan_candidates(pi, rest, true, c, nbrs);
            }
            None => scan_candidates(pi, &[Span { slots: i + 1..n, image: [0; 3] }], false, c, nbrs),
        }
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
    chunk: &mut ListChunk, atoms: usize, c: &Candidates<F>, grid: Option<&CellGrid>
) = build_body);

impl NeighborList {
    /// Builds the list for `pos`, which must be sorted by `grid` cell (cell c holds the atoms
    /// `grid.range(c)`), or with `grid = None` by brute force (boxes too small for cells).
    /// `scratch` (at least `3 * pos.len()` long) holds a structure-of-arrays copy of `pos`.
    pub fn build<F: Real>(
        &mut self,
        pos: &[[F; 4]],
        grid: Option<&CellGrid>,
        range: f64,
        img: &MinImage<F>,
        scratch: &mut [F],
    ) {
        let n = pos.len();
        let (x, rest) = scratch[..3 * n].split_at_mut(n);
        let (y, z) = rest.split_at_mut(n);
        x.par_iter_mut().zip(y.par_iter_mut()).zip(z.par_iter_mut()).zip(pos.par_iter()).with_min_len(4096).for_each(
            |(((x, y), z), p)| {
                (*x, *y, *z) = (p[0], p[1], p[2]);
            },
        );
        let c = Candidates { pos, soa: [&*x, &*y, &*z], img, range_sq: F::of(range * range) };
        let size = chunk_atoms(n, rayon::current_num_threads());
        let count = n.div_ceil(size);
        self.chunks.resize_with(count, ListChunk::default);
        self.chunks.par_iter_mut().enumerate().for_each(|(k, chunk)| {
            chunk.first = k * size;
            let atoms = size.min(n - chunk.first);
            build_chunk::<F>(chunk, atoms, &c, grid);
        });
        self.record_build(pos);
    }

    /// Notes a build (of this list or of a cluster list) at positions `pos`.
    pub fn record_build<F: Real>(&mut self, pos: &[[F; 4]]) {
        self.pos_at_build.clear();
        self.pos_at_build.extend(pos.iter().map(|p| [p[0].f64() as f32, p[1].f64() as f32, p[2].f64() as f32]));
        self.builds += 1;
    }

    /// Splits the chunks into at most `parts` contiguous runs with about equal pair counts;
    /// returns the runs as chunk index ranges.
    pub fn balanced_ranges(&self, parts: usize) -> Vec<std::ops::Range<usize>> {
        balanced_ranges(self.chunks.iter().map(ListChunk::pairs), parts)
    }
}

/// Splits items of the given weights into at most `parts` contiguous runs of about equal
/// weight; returns the runs as index ranges (one empty run when there are no items).
pub fn balanced_ranges(weights: impl Iterator<Item = usize> + Clone, parts: usize) -> Vec<std::ops::Range<usize>> {
    let total: usize = weights.clone().sum();
    let count = weights.clone().count();
    let parts = parts.clamp(1, count.max(1));
    let mut out = Vec::with_capacity(parts);
    let (mut lo, mut acc) = (0, 0usize);
    for (k, w) in weights.enumerate() {
        acc += w;
        if out.len() + 1 < parts && acc * parts >= total * (out.len() + 1) {
            out.push(lo..k + 1);
            lo = k + 1;
        }
    }
    out.push(lo..count);
    out
}
