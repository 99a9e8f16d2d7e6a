//! The cell grid shared by the cell-list algorithm, the neighbour-list build and g(r):
//! cells at least as large as an interaction range, atoms binned by a counting sort, and
//! the 27-cell (or forward 13-cell) stencil with periodic wrap-around.
//!
//! Owns binning only; the loops over pairs live with the algorithms that use them.

use crate::physics::params::SimBox;
use crate::physics::real::Real;

/// The most cells a grid may have; larger boxes get larger cells.
const MAX_CELLS: usize = 1 << 23;

#[derive(Clone, Debug)]
pub struct CellGrid {
    pub dims: [usize; 3],
    pub lo: [f64; 3],
    pub inv_cell: [f64; 3],
    pub periodic: [bool; 3],
    /// Atoms of cell `c` are `order[start[c]..start[c + 1]]`.
    pub start: Vec<u32>,
    pub order: Vec<u32>,
    cell_of: Vec<u32>,
}

impl CellGrid {
    /// A grid with cells no smaller than `range` along each axis. None when a periodic axis
    /// would have fewer than three cells (the stencil would see a cell twice).
    pub fn new(b: &SimBox, range: f64) -> Option<CellGrid> {
        let len = b.length();
        let mut range = range;
        loop {
            let dims: [usize; 3] = std::array::from_fn(|k| ((len[k] / range).floor() as usize).max(1));
            if (0..3).any(|k| b.periodic[k] && dims[k] < 3) {
                return None;
            }
            let total = dims[0] * dims[1] * dims[2];
            if total <= MAX_CELLS {
                return Some(CellGrid {
                    dims,
                    lo: b.lo,
                    inv_cell: std::array::from_fn(|k| dims[k] as f64 / len[k]),
                    periodic: b.periodic,
                    start: vec![0; total + 1],
                    order: Vec::new(),
                    cell_of: Vec::new(),
                });
            }
            range *= 1.26;
        }
    }

    pub fn n_cells(&self) -> usize {
        self.dims[0] * self.dims[1] * self.dims[2]
    }

    #[inline]
    pub fn cell_coords(&self, p: [f64; 3]) -> [usize; 3] {
        std::array::from_fn(|k| {
            let c = ((p[k] - self.lo[k]) * self.inv_cell[k]).floor();
            if c.is_nan() || c < 0.0 { 0 } else { (c as usize).min(self.dims[k] - 1) }
        })
    }

    #[inline]
    pub fn index(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }

    /// Bins `pos` (counting sort): fills `start` and `order`.
    pub fn bin<S: Real>(&mut self, pos: &[[S; 3]]) {
        self.bin_by(pos.len(), |i| [pos[i][0].f64(), pos[i][1].f64(), pos[i][2].f64()]);
    }

    /// Bins `n` atoms whose positions `at(i)` gives (counting sort): fills `start` and `order`.
    pub fn bin_by(&mut self, n: usize, at: impl Fn(usize) -> [f64; 3]) {
        let n_cells = self.n_cells();
        let mut cell_of = std::mem::take(&mut self.cell_of);
        cell_of.clear();
        cell_of.extend((0..n).map(|i| self.index(self.cell_coords(at(i))) as u32));
        self.cell_of = cell_of;
        self.start.clear();
        self.start.resize(n_cells + 1, 0);
        for &c in &self.cell_of {
            self.start[c as usize + 1] += 1;
        }
        for c in 0..n_cells {
            self.start[c + 1] += self.start[c];
        }
        let mut next: Vec<u32> = self.start[..n_cells].to_vec();
        self.order.clear();
        self.order.resize(n, 0);
        for (i, &c) in self.cell_of.iter().enumerate() {
            let slot = &mut next[c as usize];
            self.order[*slot as usize] = i as u32;
            *slot += 1;
        }
    }

    /// The cells around cell `c` (itself included): all 27, or with `forward_only` the 13
    /// lexicographically later offsets (without `c` itself). Out-of-range cells on walled
    /// axes are skipped; periodic axes wrap. Writes into `out` and returns how many.
    pub fn stencil(&self, c: [usize; 3], forward_only: bool, out: &mut [usize; 27]) -> usize {
        let mut n = 0;
        for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    if forward_only && (dz, dy, dx) <= (0, 0, 0) {
                        continue;
                    }
                    let d = [dx, dy, dz];
                    let mut nc = [0usize; 3];
                    let mut ok = true;
                    for k in 0..3 {
                        let v = c[k] as i64 + d[k];
                        let m = self.dims[k] as i64;
                        if v < 0 || v >= m {
                            if self.periodic[k] {
                                nc[k] = v.rem_euclid(m) as usize;
                            } else {
                                ok = false;
                            }
                        } else {
                            nc[k] = v as usize;
                        }
                    }
                    if ok {
                        out[n] = self.index(nc);
                        n += 1;
                    }
                }
            }
        }
        n
    }

    /// Coordinates of cell index `i`.
    #[inline]
    pub fn coords_of(&self, i: usize) -> [usize; 3] {
        [i % self.dims[0], (i / self.dims[0]) % self.dims[1], i / (self.dims[0] * self.dims[1])]
    }

    /// The range of `order` holding cell `c`.
    #[inline]
    pub fn range(&self, c: usize) -> std::ops::Range<usize> {
        self.start[c] as usize..self.start[c + 1] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binning_is_a_permutation_grouped_by_cell() {
        let b = SimBox::new([9.0, 9.0, 9.0], [true; 3]);
        let g0 = CellGrid::new(&b, 2.5).unwrap();
        assert_eq!(g0.dims, [3, 3, 3]);
        let mut g = g0.clone();
        let pos: Vec<[f64; 3]> = (0..100).map(|i| [(i * 7 % 9) as f64 + 0.5, (i % 9) as f64, (i * 3 % 9) as f64]).collect();
        g.bin(&pos);
        let mut seen = g.order.clone();
        seen.sort();
        assert_eq!(seen, (0..100).collect::<Vec<u32>>());
        for c in 0..g.n_cells() {
            for &i in &g.order[g.range(c)] {
                assert_eq!(g.index(g.cell_coords(pos[i as usize])), c);
            }
        }
    }

    #[test]
    fn stencils() {
        let b = SimBox::new([9.0, 9.0, 9.0], [true, true, false]);
        let g = CellGrid::new(&b, 3.0).unwrap();
        let mut out = [0; 27];
        assert_eq!(g.stencil([0, 0, 0], false, &mut out), 18);
        assert_eq!(g.stencil([1, 1, 1], false, &mut out), 27);
        assert_eq!(g.stencil([1, 1, 1], true, &mut out), 13);
        assert!(CellGrid::new(&SimBox::new([5.0, 9.0, 9.0], [true; 3]), 2.5).is_none());
    }
}
