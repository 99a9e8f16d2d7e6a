//! The cell grid shared by the cell-list algorithm, the neighbour-list build and g(r):
//! cells at least as large as an interaction range, atoms binned by a counting sort, and
//! the 27-cell (or forward 13-cell) stencil with periodic wrap-around.
//!
//! Owns binning only; the loops over pairs live with the algorithms that use them.

use crate::physics::params::Algorithm;
use crate::physics::real::Real;
use crate::physics::sim_box::SimBox;

/// The most cells a grid may have; larger boxes get larger cells.
const MAX_CELLS: usize = 1 << 23;

/// A run of atom slots of neighbouring cells and the periodic image they are seen in (see
/// [`CellGrid::forward_spans`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub slots: std::ops::Range<usize>,
    pub image: [i8; 3],
}

#[derive(Clone, Debug)]
pub struct CellGrid {
    pub dims: [usize; 3],
    /// How many cells away partners can be.
    pub reach: usize,
    pub lo: [f64; 3],
    pub inv_cell: [f64; 3],
    pub periodic: [bool; 3],
    /// Atoms of cell `c` are `order[start[c]..start[c + 1]]`.
    pub start: Vec<u32>,
    pub order: Vec<u32>,
    cell_of: Vec<u32>,
}

impl CellGrid {
    /// A grid whose cells are at least `range / reach` wide, so that all partners within
    /// `range` lie within `reach` cells. None when a periodic axis would have fewer than
    /// `2 reach + 1` cells (a stencil would see a cell twice).
    pub fn new(b: &SimBox, range: f64, reach: usize) -> Option<CellGrid> {
        let reach = reach.max(1);
        CellGrid::make(b, range, reach, 2 * reach + 1)
    }

    /// The grid of the pair lists (the cell-list forces and the neighbour-list build): reach 2
    /// where every periodic axis has room for five cells, else reach 1 with as few as two
    /// cells along a periodic axis (a thin slab) and one along a walled one. None only when a
    /// periodic edge is shorter than twice `range`, where the minimum image is ambiguous.
    /// Along a periodic axis of two cells a stencil reaches the other cell both ways: the
    /// full rows visit it once ([`CellGrid::row_ranges`]), the forward spans twice, in the two
    /// images, of which at most one is in range ([`CellGrid::forward_spans`]).
    pub fn for_lists(b: &SimBox, range: f64) -> Option<CellGrid> {
        if !Algorithm::images_fit(b, range) {
            return None;
        }
        CellGrid::new(b, range, 2).or_else(|| CellGrid::make(b, range, 1, 2))
    }

    fn make(b: &SimBox, range: f64, reach: usize, min_periodic: usize) -> Option<CellGrid> {
        let len = b.length();
        let mut cell = range / reach as f64;
        loop {
            let dims: [usize; 3] = std::array::from_fn(|k| ((len[k] / cell).floor() as usize).max(1));
            if (0..3).any(|k| b.periodic[k] && dims[k] < min_periodic) {
                return None;
            }
            let total = dims[0] * dims[1] * dims[2];
            if total <= MAX_CELLS {
                return Some(CellGrid {
                    dims,
                    reach,
                    lo: b.lo,
                    inv_cell: std::array::from_fn(|k| dims[k] as f64 / len[k]),
                    periodic: b.periodic,
                    start: vec![0; total + 1],
                    order: Vec::new(),
                    cell_of: Vec::new(),
                });
            }
            cell *= 1.26;
        }
    }

    /// Whether a periodic axis has fewer than `2 reach + 1` cells (see [`CellGrid::for_lists`]).
    pub fn is_thin(&self) -> bool {
        (0..3).any(|k| self.periodic[k] && self.dims[k] < 2 * self.reach + 1)
    }

    /// A grid of exactly `dims` cells (each at least 1) over `b`, for binning only (reach 1).
    pub fn with_dims(b: &SimBox, dims: [usize; 3]) -> CellGrid {
        let len = b.length();
        let dims = dims.map(|d| d.max(1));
        CellGrid {
            dims,
            reach: 1,
            lo: b.lo,
            inv_cell: std::array::from_fn(|k| dims[k] as f64 / len[k]),
            periodic: b.periodic,
            start: vec![0; dims[0] * dims[1] * dims[2] + 1],
            order: Vec::new(),
            cell_of: Vec::new(),
        }
    }

    /// The finest grid for `range` among reach 2 and 1.
    pub fn finest(b: &SimBox, range: f64) -> Option<CellGrid> {
        CellGrid::new(b, range, 2).or_else(|| CellGrid::new(b, range, 1))
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

    /// Appends the atom-slot ranges (atoms sorted by cell) of the cells around cell `c`:
    /// whole rows along x of `2 reach + 1` cells for every (dy, dz) within reach, so each row
    /// is one or two contiguous ranges; along a periodic axis with fewer cells than that (a
    /// thin grid), each of its cells once. With `forward_only` (grids that are not thin), only
    /// the rows after `c`'s own row in (dz, dy) order plus the cells after `c` in its own row;
    /// `c` itself is left out.
    pub fn row_ranges(&self, c: [usize; 3], forward_only: bool, out: &mut Vec<std::ops::Range<usize>>) {
        debug_assert!(!(forward_only && self.is_thin()), "forward rows of a thin grid would repeat pairs");
        let r = self.reach as i64;
        // The offsets a full stencil takes along axis k: -r..=r, or each cell of a thin
        // periodic axis once.
        let window = |k: usize| -> (i64, i64) {
            let n = self.dims[k] as i64;
            if self.periodic[k] && n < 2 * r + 1 { (-r, -r + n - 1) } else { (-r, r) }
        };
        let (nx, ny, nz) = (self.dims[0] as i64, self.dims[1] as i64, self.dims[2] as i64);
        let wrap = |v: i64, n: i64, k: usize| -> Option<i64> {
            if (0..n).contains(&v) {
                Some(v)
            } else if self.periodic[k] {
                Some(v.rem_euclid(n))
            } else {
                None
            }
        };
        let (x, y, z) = (c[0] as i64, c[1] as i64, c[2] as i64);
        let mut push_row = |yy: i64, zz: i64, x0: i64, x1: i64| {
            // Cells x0..=x1 of row (yy, zz), clipped on a walled x, split where a periodic x wraps.
            let row = (zz * ny + yy) * nx;
            let mut a = x0;
            while a <= x1 {
                let Some(ca) = wrap(a, nx, 0) else {
                    a += 1;
                    continue;
                };
                // Extend while the wrapped cells stay consecutive.
                let mut b = a;
                while b < x1 && wrap(b + 1, nx, 0) == Some(ca + (b + 1 - a)) {
                    b += 1;
                }
                let first = (row + ca) as usize;
                let last = (row + ca + (b - a)) as usize;
                let range = self.start[first] as usize..self.start[last + 1] as usize;
                if !range.is_empty() {
                    out.push(range);
                }
                a = b + 1;
            }
        };
        let (wx, wy, wz) = (window(0), window(1), window(2));
        for dz in wz.0..=wz.1 {
            for dy in wy.0..=wy.1 {
                if forward_only && (dz, dy) < (0, 0) {
                    continue;
                }
                let (Some(yy), Some(zz)) = (wrap(y + dy, ny, 1), wrap(z + dz, nz, 2)) else {
                    continue;
                };
                if forward_only && (dz, dy) == (0, 0) {
                    push_row(yy, zz, x + 1, x + r);
                } else {
                    push_row(yy, zz, x + wx.0, x + wx.1);
                }
            }
        }
    }

    /// The ranges of `row_ranges(c, true, ..)`, in the same order, each with the periodic
    /// image its atoms are seen in from cell `c`: per axis -1, 0 or 1, the number of box
    /// lengths to subtract from `x_i - x_j` (what the minimum image would pick for any
    /// partner within the grid's range). Appends to `out`.
    pub fn forward_spans(&self, c: [usize; 3], out: &mut Vec<Span>) {
        let r = self.reach as i64;
        let n = self.dims.map(|d| d as i64);
        let wrap = |v: i64, k: usize| -> Option<(i64, i8)> {
            if (0..n[k]).contains(&v) {
                Some((v, 0))
            } else if self.periodic[k] {
                Some((v.rem_euclid(n[k]), v.div_euclid(n[k]) as i8))
            } else {
                None
            }
        };
        let (x, y, z) = (c[0] as i64, c[1] as i64, c[2] as i64);
        for dz in 0..=r {
            for dy in -r..=r {
                if dz == 0 && dy < 0 {
                    continue;
                }
                let (Some((yy, ky)), Some((zz, kz))) = (wrap(y + dy, 1), wrap(z + dz, 2)) else {
                    continue;
                };
                let row = ((zz * n[1] + yy) * n[0]) as usize;
                let (x0, x1) = if (dz, dy) == (0, 0) { (x + 1, x + r) } else { (x - r, x + r) };
                let mut push = |a: i64, b: i64, kx: i8| {
                    let slots = self.start[row + a as usize] as usize..self.start[row + b as usize + 1] as usize;
                    if !slots.is_empty() {
                        out.push(Span { slots, image: [kx, ky, kz] });
                    }
                };
                if x0 >= 0 && x1 < n[0] {
                    push(x0, x1, 0);
                    continue;
                }
                // Near an x face: split where a periodic x wraps, clip on a walled one.
                let mut a = x0;
                while a <= x1 {
                    let Some((ca, ka)) = wrap(a, 0) else {
                        a += 1;
                        continue;
                    };
                    let mut b = a;
                    while b < x1 && wrap(b + 1, 0).is_some_and(|(cb, kb)| kb == ka && cb == ca + (b + 1 - a)) {
                        b += 1;
                    }
                    push(ca, ca + (b - a), ka);
                    a = b + 1;
                }
            }
        }
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

    /// Bins one atom at the centre of every cell of `g` and returns their positions.
    fn one_atom_per_cell(g: &mut CellGrid) -> Vec<[f64; 3]> {
        let pos: Vec<[f64; 3]> = (0..g.n_cells())
            .map(|i| {
                let c = g.coords_of(i);
                std::array::from_fn(|k| (c[k] as f64 + 0.5) / g.inv_cell[k])
            })
            .collect();
        g.bin(&pos);
        pos
    }

    /// Every unordered pair of cells within reach is covered exactly once by the forward
    /// rows (plus the own cell), and the full rows cover each neighbour cell once.
    #[test]
    fn row_ranges_cover_each_neighbour_once() {
        for (size, periodic, reach) in [
            ([14.0, 10.0, 7.0], [true, true, true], 2),
            ([9.0, 9.0, 9.0], [true, false, true], 1),
            ([12.0, 7.0, 11.0], [false, true, false], 2),
        ] {
            let b = SimBox::new(size, periodic);
            let mut g = CellGrid::new(&b, 2.5, reach).unwrap();
            one_atom_per_cell(&mut g);
            let near = |a: usize, b2: usize| {
                let (ca, cb) = (g.coords_of(a), g.coords_of(b2));
                (0..3).all(|k| {
                    let d = ca[k] as i64 - cb[k] as i64;
                    let n = g.dims[k] as i64;
                    let d = if periodic[k] { d.rem_euclid(n).min((-d).rem_euclid(n)) } else { d.abs() };
                    d <= reach as i64
                })
            };
            let mut seen = std::collections::HashMap::new();
            let mut full = Vec::new();
            for c in 0..g.n_cells() {
                let mut out = Vec::new();
                g.row_ranges(g.coords_of(c), true, &mut out);
                for r in out {
                    for s in r {
                        let other = g.order[s] as usize;
                        let key = (c.min(other), c.max(other));
                        *seen.entry(key).or_insert(0) += 1;
                    }
                }
                full.clear();
                g.row_ranges(g.coords_of(c), false, &mut full);
                let mut cells: Vec<usize> = full.iter().flat_map(|r| r.clone()).map(|s| g.order[s] as usize).collect();
                let count = cells.len();
                cells.sort();
                cells.dedup();
                assert_eq!(cells.len(), count, "full rows repeat a cell");
                assert!(cells.iter().all(|&o| near(c, o)));
                assert_eq!(cells.len(), (0..g.n_cells()).filter(|&o| near(c, o)).count());
            }
            for a in 0..g.n_cells() {
                for b2 in a + 1..g.n_cells() {
                    let want = near(a, b2) as i32;
                    assert_eq!(seen.get(&(a, b2)).copied().unwrap_or(0), want, "cells {a} {b2}");
                }
            }
        }
    }

    /// The spans are the forward rows, and their images are the minimum images.
    #[test]
    fn forward_spans_match_rows_with_images() {
        for (size, periodic, reach) in [
            ([14.0, 10.0, 7.0], [true, true, true], 2),
            ([9.0, 9.0, 9.0], [true, false, true], 1),
            ([12.0, 7.0, 11.0], [false, true, false], 2),
            ([5.0, 6.0, 7.0], [true, true, true], 2),
        ] {
            let b = SimBox::new(size, periodic);
            let Some(mut g) = CellGrid::new(&b, 2.5, reach).or_else(|| CellGrid::new(&b, 1.0, reach)) else {
                continue;
            };
            let pos = one_atom_per_cell(&mut g);
            let len = b.length();
            for c in 0..g.n_cells() {
                let (mut rows, mut spans) = (Vec::new(), Vec::new());
                g.row_ranges(g.coords_of(c), true, &mut rows);
                g.forward_spans(g.coords_of(c), &mut spans);
                assert_eq!(rows, spans.iter().map(|s| s.slots.clone()).collect::<Vec<_>>(), "cell {c}");
                for s in &spans {
                    for j in s.slots.clone() {
                        let pj = pos[g.order[j] as usize];
                        let d: [f64; 3] = std::array::from_fn(|k| pos[c][k] - pj[k] - len[k] * s.image[k] as f64);
                        assert_eq!(d, b.min_image(pos[c], pj), "cell {c}, slot {j}");
                    }
                }
            }
        }
    }

    #[test]
    fn binning_is_a_permutation_grouped_by_cell() {
        let b = SimBox::new([9.0, 9.0, 9.0], [true; 3]);
        let g0 = CellGrid::new(&b, 2.5, 1).unwrap();
        assert_eq!(g0.dims, [3, 3, 3]);
        let mut g = g0.clone();
        let pos: Vec<[f64; 3]> =
            (0..100).map(|i| [(i * 7 % 9) as f64 + 0.5, (i % 9) as f64, (i * 3 % 9) as f64]).collect();
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
    fn too_small_periodic_boxes_have_no_grid() {
        assert!(CellGrid::new(&SimBox::new([5.0, 9.0, 9.0], [true; 3]), 2.5, 1).is_none());
        assert!(CellGrid::new(&SimBox::new([6.0, 9.0, 9.0], [true; 3]), 2.5, 2).is_none());
        assert!(CellGrid::finest(&SimBox::new([6.0, 9.0, 9.0], [true; 3]), 2.5).is_none());
        assert_eq!(CellGrid::finest(&SimBox::new([8.0, 9.0, 9.0], [true; 3]), 2.5).unwrap().reach, 2);
    }

    /// Thin grids (two cells along periodic axes, one along a walled one): the full rows
    /// visit each cell of the stencil once, and the forward spans with their images find
    /// every pair within range exactly once.
    #[test]
    fn thin_grids_find_every_pair_once() {
        let range = 2.8;
        for (size, periodic) in [
            ([20.0, 14.0, 6.84], [true, true, true]),
            ([6.0, 9.0, 5.7], [true, false, true]),
            ([17.0, 12.0, 2.5], [true, true, false]),
        ] {
            let b = SimBox::new(size, periodic);
            let mut g = CellGrid::for_lists(&b, range).unwrap();
            assert!(g.is_thin() || g.dims.contains(&1));
            let mut s = 12345u64;
            let mut rnd = || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 53) as f64
            };
            let pos: Vec<[f64; 3]> = (0..400).map(|_| std::array::from_fn(|k| rnd() * size[k])).collect();
            g.bin(&pos);
            let sorted: Vec<[f64; 3]> = g.order.iter().map(|&i| pos[i as usize]).collect();
            let within = |d: [f64; 3]| d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < range * range;
            let mut want = 0usize;
            for i in 0..sorted.len() {
                for j in i + 1..sorted.len() {
                    let d = b.min_image(sorted[i], sorted[j]);
                    want += within(d) as usize;
                }
            }
            let mut found = 0usize;
            let mut spans = Vec::new();
            let mut rows = Vec::new();
            let l = b.length();
            for c in 0..g.n_cells() {
                let own = g.range(c);
                spans.clear();
                g.forward_spans(g.coords_of(c), &mut spans);
                rows.clear();
                g.row_ranges(g.coords_of(c), false, &mut rows);
                let mut cells: Vec<usize> = rows.iter().flat_map(|r| r.clone()).collect();
                let count = cells.len();
                cells.sort();
                cells.dedup();
                assert_eq!(cells.len(), count, "{size:?}: full rows repeat an atom");
                for i in own.clone() {
                    for j in i + 1..own.end {
                        found += within(b.min_image(sorted[i], sorted[j])) as usize;
                    }
                    for sp in &spans {
                        for j in sp.slots.clone() {
                            let d: [f64; 3] =
                                std::array::from_fn(|k| sorted[i][k] - sorted[j][k] - sp.image[k] as f64 * l[k]);
                            found += within(d) as usize;
                        }
                    }
                }
            }
            assert!(want > 500, "{size:?}: {want} pairs");
            assert_eq!(found, want, "{size:?}");
        }
        assert!(CellGrid::for_lists(&SimBox::new([5.5, 20.0, 20.0], [true; 3]), 2.8).is_none());
    }
}
