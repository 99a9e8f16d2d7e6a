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

/// A half neighbour list (HOOMD calls the GPU's kind "full"; on the CPU we use half).
#[derive(Clone, Debug, Default)]
pub struct NeighborList {
    /// List of atom i is `nbrs[start[i]..start[i + 1]]`.
    pub start: Vec<u32>,
    pub nbrs: Vec<u32>,
    /// Positions (f64) when the list was built, for the skin test.
    pub pos_at_build: Vec<[f64; 3]>,
    /// How many times it was built.
    pub builds: u64,
}

/// Atoms per parallel build task.
const BUILD_CHUNK: usize = 512;

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

/// The padded lists and their lengths for atoms `range.0..range.1`.
#[inline(always)]
fn build_body<F: Real>(
    range: (usize, usize),
    pos: &[[F; 4]],
    grid: Option<&CellGrid>,
    range_sq: F,
    img: &MinImage<F>,
) -> (Vec<u32>, Vec<u32>) {
    let (lo, hi) = range;
    let n = pos.len();
    let mut nbrs: Vec<u32> = Vec::with_capacity((hi - lo) * 48);
    let mut counts = Vec::with_capacity(hi - lo);
    let mut rows: Vec<std::ops::Range<usize>> = Vec::with_capacity(32);
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::with_capacity(32);
    let mut last_cell = usize::MAX;
    for i in lo..hi {
        let before = nbrs.len();
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
        scan_candidates(pi, &ranges, pos, range_sq, img, &mut nbrs);
        while !(nbrs.len() - before).is_multiple_of(LANES) {
            nbrs.push(i as u32);
        }
        counts.push((nbrs.len() - before) as u32);
    }
    (nbrs, counts)
}

multiversion!(fn build_chunk<F: Real;>(
    range: (usize, usize), pos: &[[F; 4]], grid: Option<&CellGrid>, range_sq: F, img: &MinImage<F>
) -> (Vec<u32>, Vec<u32>) = build_body);

impl NeighborList {
    /// Builds the list for `pos`, which must be sorted by `grid` cell (cell c holds the atoms
    /// `grid.range(c)`), or with `grid = None` by brute force (boxes too small for cells).
    pub fn build<F: Real>(&mut self, pos: &[[F; 4]], grid: Option<&CellGrid>, range: f64, img: &MinImage<F>) {
        let n = pos.len();
        let range_sq = F::of(range * range);
        let parts: Vec<(Vec<u32>, Vec<u32>)> = (0..n.div_ceil(BUILD_CHUNK))
            .into_par_iter()
            .map(|chunk| {
                let lo = chunk * BUILD_CHUNK;
                build_chunk::<F>((lo, (lo + BUILD_CHUNK).min(n)), pos, grid, range_sq, img)
            })
            .collect();
        self.start.clear();
        self.start.reserve(n + 1);
        self.start.push(0);
        self.nbrs.clear();
        self.nbrs.reserve(parts.iter().map(|p| p.0.len()).sum());
        let mut total = 0u32;
        for (nbrs, counts) in &parts {
            self.nbrs.extend_from_slice(nbrs);
            for &c in counts {
                total += c;
                self.start.push(total);
            }
        }
        // Tail padding: vector loops may read 16 indices from a list's last 8.
        self.nbrs.extend(std::iter::repeat_n(0, 2 * LANES));
        self.pos_at_build.clear();
        self.pos_at_build.extend(pos.iter().map(|p| [p[0].f64(), p[1].f64(), p[2].f64()]));
        self.builds += 1;
    }

    /// Splits the atoms into at most `parts` contiguous ranges with about equal pair counts.
    pub fn balanced_ranges(&self, parts: usize) -> Vec<(usize, usize)> {
        let n = self.start.len().saturating_sub(1);
        let total = *self.start.last().unwrap_or(&0) as u64;
        let parts = parts.clamp(1, n.max(1));
        let mut out = Vec::with_capacity(parts);
        let mut lo = 0;
        for p in 1..=parts {
            let hi = if p == parts {
                n
            } else {
                let target = (total * p as u64 / parts as u64) as u32;
                self.start.partition_point(|&s| s < target).clamp(lo, n)
            };
            out.push((lo, hi));
            lo = hi;
        }
        out
    }
}
