//! The Verlet neighbour list of the CPU backend: a half list (each pair once, j after i) in
//! CSR form (`start`, `nbrs`), built from the cell grid over atoms already sorted by cell,
//! with range cutoff + skin. Each atom's list is padded with its own index to a multiple of
//! `LANES` so the inner loop never needs a remainder. Rebuilt by the caller when any atom
//! moved more than skin/2 since `pos_at_build`.

use rayon::prelude::*;

use super::cells::CellGrid;
use super::kernels::{LANES, MinImage};
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
                let hi = (lo + BUILD_CHUNK).min(n);
                let mut nbrs = Vec::with_capacity((hi - lo) * 48);
                let mut counts = Vec::with_capacity(hi - lo);
                let mut stencil = [0usize; 27];
                for i in lo..hi {
                    let before = nbrs.len();
                    let pi = pos[i];
                    let mut scan = |js: std::ops::Range<usize>| {
                        for j in js {
                            let pj = pos[j];
                            let d = img.apply([pi[0] - pj[0], pi[1] - pj[1], pi[2] - pj[2]]);
                            if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < range_sq {
                                nbrs.push(j as u32);
                            }
                        }
                    };
                    match grid {
                        Some(g) => {
                            let c = g.cell_coords([pi[0].f64(), pi[1].f64(), pi[2].f64()]);
                            let own = g.range(g.index(c));
                            scan(i + 1..own.end);
                            let k = g.stencil(c, true, &mut stencil);
                            for &nc in &stencil[..k] {
                                scan(g.range(nc));
                            }
                        }
                        None => scan(i + 1..n),
                    }
                    while (nbrs.len() - before) % LANES != 0 {
                        nbrs.push(i as u32);
                    }
                    counts.push((nbrs.len() - before) as u32);
                }
                (nbrs, counts)
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

    /// Number of stored pairs, padding included.
    pub fn stored(&self) -> usize {
        self.nbrs.len()
    }
}
