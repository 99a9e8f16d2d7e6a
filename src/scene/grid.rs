//! A uniform cell grid over a box for "is any atom within r of this point?" questions, so
//! overlap checks and fills cost O(N) instead of O(N^2). Minimum image on periodic axes.
//!
//! Used by scene validation (overlapping explicit atoms) and building (lattice sites that
//! clash with earlier fills); [`find_close_pair`] is public for tests and tools.

use crate::physics::sim_box::SimBox;

const EMPTY: usize = usize::MAX;

/// Points binned into cells at least `min_cell` wide, as linked lists (`head` per cell,
/// `next` per point), so points can be added one at a time.
pub(crate) struct NeighbourGrid {
    sim_box: SimBox,
    dims: [usize; 3],
    head: Vec<usize>,
    next: Vec<usize>,
    points: Vec<[f64; 3]>,
}

impl NeighbourGrid {
    /// An empty grid with cells no narrower than `min_cell`, sized for about `expected` points
    /// (the cell count is capped near the point count, so memory stays O(N)).
    pub fn new(sim_box: &SimBox, min_cell: f64, expected: usize) -> Self {
        let len = sim_box.length();
        let cap = expected.saturating_mul(2).clamp(1 << 12, 1 << 26) as f64;
        let mut cell = if min_cell.is_finite() && min_cell > 1e-3 { min_cell } else { 1e-3 };
        let dims = loop {
            let dims: [f64; 3] = std::array::from_fn(|k| {
                let d = len[k] / cell;
                if d.is_finite() && d >= 1.0 { d.floor().min(1e9) } else { 1.0 }
            });
            if dims[0] * dims[1] * dims[2] <= cap {
                break dims.map(|d| d as usize);
            }
            cell *= 1.26;
        };
        NeighbourGrid {
            sim_box: *sim_box,
            dims,
            head: vec![EMPTY; dims[0] * dims[1] * dims[2]],
            next: Vec::with_capacity(expected.min(1 << 26)),
            points: Vec::with_capacity(expected.min(1 << 26)),
        }
    }

    fn cell_of(&self, p: [f64; 3]) -> [usize; 3] {
        let p = self.sim_box.wrap(p);
        let len = self.sim_box.length();
        std::array::from_fn(|k| {
            let u = (p[k] - self.sim_box.lo[k]) / len[k] * self.dims[k] as f64;
            (u.floor().max(0.0) as usize).min(self.dims[k] - 1)
        })
    }

    fn index(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }

    /// Adds a point; returns its index (insertion order).
    pub fn insert(&mut self, p: [f64; 3]) -> usize {
        let slot = self.index(self.cell_of(p));
        let i = self.points.len();
        self.points.push(p);
        self.next.push(self.head[slot]);
        self.head[slot] = i;
        i
    }

    /// Cells along axis `k` next to cell `c` (each once, even when the grid is narrow).
    fn around(&self, k: usize, c: usize) -> ([usize; 3], usize) {
        let n = self.dims[k];
        let mut out = [0usize; 3];
        let mut len = 0;
        if self.sim_box.periodic[k] && n < 3 {
            for (slot, v) in out.iter_mut().zip(0..n) {
                *slot = v;
                len += 1;
            }
        } else {
            for d in [-1i64, 0, 1] {
                let v = c as i64 + d;
                let v = if self.sim_box.periodic[k] { v.rem_euclid(n as i64) } else { v };
                if (0..n as i64).contains(&v) {
                    out[len] = v as usize;
                    len += 1;
                }
            }
        }
        (out, len)
    }

    /// The closest stored point closer than `r` to `p` (r must not exceed the cell width
    /// given to [`NeighbourGrid::new`]), with its distance.
    pub fn nearest_within(&self, p: [f64; 3], r: f64) -> Option<(usize, f64)> {
        let c = self.cell_of(p);
        let (xs, nx) = self.around(0, c[0]);
        let (ys, ny) = self.around(1, c[1]);
        let (zs, nz) = self.around(2, c[2]);
        let mut best: Option<(usize, f64)> = None;
        for &z in &zs[..nz] {
            for &y in &ys[..ny] {
                for &x in &xs[..nx] {
                    let mut j = self.head[self.index([x, y, z])];
                    while j != EMPTY {
                        let d = self.sim_box.min_image(p, self.points[j]);
                        let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                        if dist < r && best.is_none_or(|(_, b)| dist < b) {
                            best = Some((j, dist));
                        }
                        j = self.next[j];
                    }
                }
            }
        }
        best
    }
}

/// The first atom (in order) closer than `min_distance` to an earlier one: `(earlier, later,
/// distance)`, the earlier being the closest such atom. None when all pairs are far enough.
pub fn find_close_pair(sim_box: &SimBox, positions: &[[f64; 3]], min_distance: f64) -> Option<(usize, usize, f64)> {
    let mut grid = NeighbourGrid::new(sim_box, min_distance, positions.len());
    for (i, &p) in positions.iter().enumerate() {
        if let Some((j, d)) = grid.nearest_within(p, min_distance) {
            return Some((j, i, d));
        }
        grid.insert(p);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_pairs_across_periodic_boundaries_only() {
        let periodic = SimBox::new([10.0, 10.0, 1.5], [true, true, true]);
        let walled = SimBox::new([10.0, 10.0, 1.5], [false, true, true]);
        let pts = [[0.1, 5.0, 0.5], [5.0, 5.0, 0.5], [9.8, 5.0, 0.6]];
        let (a, b, d) = find_close_pair(&periodic, &pts, 0.5).unwrap();
        assert_eq!((a, b), (0, 2));
        assert!((d - (0.09f64 + 0.01).sqrt()).abs() < 1e-12);
        assert!(find_close_pair(&walled, &pts, 0.5).is_none());
    }

    #[test]
    fn agrees_with_brute_force() {
        let b = SimBox::new([7.0, 5.0, 3.0], [true, false, true]);
        let pts: Vec<[f64; 3]> = (0..300)
            .map(|i| {
                let t = i as f64;
                [(t * 0.731).rem_euclid(7.0), (t * 0.377).rem_euclid(5.0), (t * 0.913).rem_euclid(3.0)]
            })
            .collect();
        let brute = |r: f64| {
            (0..pts.len()).any(|i| {
                (0..i).any(|j| {
                    let d = b.min_image(pts[i], pts[j]);
                    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() < r
                })
            })
        };
        for r in [0.05, 0.1, 0.2, 0.4] {
            assert_eq!(find_close_pair(&b, &pts, r).is_some(), brute(r), "r = {r}");
        }
    }
}
