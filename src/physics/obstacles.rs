//! Obstacles as the simulation sees them: the union of all shapes baked into one 2D
//! signed-distance grid over the box's x-y face (cell <= 0.1 sigma, bilinear), extruded
//! through z. The obstacle force costs O(1) per atom however many shapes there are.
//!
//! Distances are clamped at [`ObstacleField::FAR`]: only the thin layer near surfaces matters
//! to the force. Owns baking and sampling; the force itself comes from [`super::wall::Wall93`].

use crate::physics::params::SimBox;
use crate::shapes::{Shape, segment_distance};

/// A baked signed-distance grid. Nodes sit at `lo + i * cell`; on a periodic axis there are
/// `cells` nodes (the grid wraps), on a walled axis `cells + 1`.
#[derive(Clone, Debug, PartialEq)]
pub struct ObstacleField {
    pub lo: [f64; 2],
    pub cell: [f64; 2],
    pub cells: [usize; 2],
    pub nodes: [usize; 2],
    pub periodic: [bool; 2],
    /// Row-major (x fastest) signed distances in sigma, clamped to +FAR.
    pub dist: Vec<f32>,
}

/// A sample of the field: distance and its gradient (of the bilinear interpolant).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldSample {
    pub distance: f64,
    pub gradient: [f64; 2],
}

impl ObstacleField {
    /// Distances beyond this are stored as this (sigma).
    pub const FAR: f64 = 3.0;
    /// The finest grid the field is allowed to use, in nodes.
    pub const MAX_NODES: usize = 32_000_000;

    /// Bakes `shapes` over the x-y face of `sim_box` with cells no larger than `max_cell`.
    /// Returns None when there are no shapes.
    pub fn bake(shapes: &[Shape], sim_box: &SimBox, max_cell: f64) -> Option<ObstacleField> {
        if shapes.is_empty() {
            return None;
        }
        let len = sim_box.length();
        let mut cells = [0usize; 2];
        let mut cell = [0f64; 2];
        let mut nodes = [0usize; 2];
        let periodic = [sim_box.periodic[0], sim_box.periodic[1]];
        let mut max_cell = max_cell;
        loop {
            for k in 0..2 {
                cells[k] = ((len[k] / max_cell).ceil() as usize).max(2);
                cell[k] = len[k] / cells[k] as f64;
                nodes[k] = if periodic[k] { cells[k] } else { cells[k] + 1 };
            }
            if nodes[0] * nodes[1] <= Self::MAX_NODES {
                break;
            }
            max_cell *= 1.25;
        }
        let lo = [sim_box.lo[0], sim_box.lo[1]];
        let mut dist = vec![Self::FAR as f32; nodes[0] * nodes[1]];

        // Strokes bake as separate capsules so each piece only touches nodes near it.
        let mut pieces: Vec<Shape> = Vec::new();
        for s in shapes {
            match s {
                Shape::Stroke { points, radius } if points.len() > 2 => {
                    for w in points.windows(2) {
                        pieces.push(Shape::Segment { a: w[0], b: w[1], thickness: 2.0 * radius });
                    }
                }
                other => pieces.push(other.clone()),
            }
        }

        for shape in &pieces {
            let (blo, bhi) = shape.bounds();
            // Periodic images of the shape that can reach the grid.
            let shifts = |k: usize| -> Vec<f64> { if periodic[k] { vec![-len[k], 0.0, len[k]] } else { vec![0.0] } };
            for sx in shifts(0) {
                for sy in shifts(1) {
                    let lo_x = blo[0] + sx - Self::FAR;
                    let hi_x = bhi[0] + sx + Self::FAR;
                    let lo_y = blo[1] + sy - Self::FAR;
                    let hi_y = bhi[1] + sy + Self::FAR;
                    let i0 = (((lo_x - lo[0]) / cell[0]).floor().max(0.0)) as usize;
                    let i1 = (((hi_x - lo[0]) / cell[0]).ceil().max(-1.0) + 1.0) as usize;
                    let j0 = (((lo_y - lo[1]) / cell[1]).floor().max(0.0)) as usize;
                    let j1 = (((hi_y - lo[1]) / cell[1]).ceil().max(-1.0) + 1.0) as usize;
                    for j in j0..j1.min(nodes[1]) {
                        let y = lo[1] + j as f64 * cell[1] - sy;
                        for i in i0..i1.min(nodes[0]) {
                            let x = lo[0] + i as f64 * cell[0] - sx;
                            let d = shape.signed_distance([x, y]).min(Self::FAR) as f32;
                            let slot = &mut dist[j * nodes[0] + i];
                            if d < *slot {
                                *slot = d;
                            }
                        }
                    }
                }
            }
        }
        Some(ObstacleField { lo, cell, cells, nodes, periodic, dist })
    }

    /// Distance and gradient at (x, y), bilinear between the four surrounding nodes.
    #[inline]
    pub fn sample(&self, x: f64, y: f64) -> FieldSample {
        let (i0, i1, tx) = self.locate(0, x);
        let (j0, j1, ty) = self.locate(1, y);
        let n = self.nodes[0];
        let d00 = self.dist[j0 * n + i0] as f64;
        let d10 = self.dist[j0 * n + i1] as f64;
        let d01 = self.dist[j1 * n + i0] as f64;
        let d11 = self.dist[j1 * n + i1] as f64;
        let distance = (1.0 - tx) * (1.0 - ty) * d00 + tx * (1.0 - ty) * d10 + (1.0 - tx) * ty * d01 + tx * ty * d11;
        let gx = ((1.0 - ty) * (d10 - d00) + ty * (d11 - d01)) / self.cell[0];
        let gy = ((1.0 - tx) * (d01 - d00) + tx * (d11 - d10)) / self.cell[1];
        FieldSample { distance, gradient: [gx, gy] }
    }

    /// Lower node, upper node and fraction along axis `k` for coordinate `x`.
    #[inline]
    fn locate(&self, k: usize, x: f64) -> (usize, usize, f64) {
        let u = (x - self.lo[k]) / self.cell[k];
        if self.periodic[k] {
            let n = self.cells[k] as f64;
            let u = u - n * (u / n).floor();
            let i = (u.floor() as usize).min(self.cells[k] - 1);
            let t = u - i as f64;
            (i, (i + 1) % self.cells[k], t)
        } else {
            let u = u.clamp(0.0, self.cells[k] as f64);
            let i = (u.floor() as usize).min(self.cells[k] - 1);
            (i, i + 1, u - i as f64)
        }
    }

    /// Fraction of the x-y face where the field is at least `clearance` from any obstacle
    /// (sampled at node centres): the part of the tank the fluid can reach.
    pub fn free_fraction(&self, clearance: f64) -> f64 {
        let free = self.dist.iter().filter(|&&d| d as f64 >= clearance).count();
        free as f64 / self.dist.len() as f64
    }
}

/// Exact distance from a point to a polyline (for tools that need it without a grid).
pub fn polyline_distance(p: [f64; 2], points: &[[f64; 2]]) -> f64 {
    points.windows(2).map(|w| segment_distance(p, w[0], w[1])).fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tank() -> SimBox {
        SimBox::new([20.0, 10.0, 5.0], [false, false, true])
    }

    #[test]
    fn bilinear_matches_exact_distance_near_a_circle() {
        let shapes = vec![Shape::Circle { centre: [10.0, 5.0], radius: 2.0 }];
        let f = ObstacleField::bake(&shapes, &tank(), 0.1).unwrap();
        assert!(f.cell[0] <= 0.1 && f.cell[1] <= 0.1);
        for (x, y) in [(12.5, 5.0), (10.0, 7.3), (11.0, 6.0), (9.0, 5.0)] {
            let exact = shapes[0].signed_distance([x, y]);
            let s = f.sample(x, y);
            assert!((s.distance - exact).abs() < 0.01, "{x},{y}: {} vs {exact}", s.distance);
        }
        let s = f.sample(12.5, 5.0);
        assert!((s.gradient[0] - 1.0).abs() < 0.02 && s.gradient[1].abs() < 0.02);
    }

    #[test]
    fn periodic_axis_wraps_the_shape() {
        let b = SimBox::new([20.0, 10.0, 5.0], [true, false, true]);
        let shapes = vec![Shape::Circle { centre: [0.5, 5.0], radius: 1.0 }];
        let f = ObstacleField::bake(&shapes, &b, 0.1).unwrap();
        // 19.8 is 0.7 from the circle's centre through the periodic boundary: inside.
        assert!(f.sample(19.8, 5.0).distance < 0.0);
        assert!((f.sample(18.5, 5.0).distance - 1.0).abs() < 0.01);
    }

    #[test]
    fn far_field_is_clamped_and_empty_scene_has_no_field() {
        let shapes = vec![Shape::Circle { centre: [2.0, 2.0], radius: 0.5 }];
        let f = ObstacleField::bake(&shapes, &tank(), 0.1).unwrap();
        assert_eq!(f.sample(18.0, 8.0).distance, ObstacleField::FAR);
        assert!(ObstacleField::bake(&[], &tank(), 0.1).is_none());
    }
}
