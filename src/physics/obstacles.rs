//! Obstacles as the simulation sees them: every shape broken into exact primitives (circles,
//! capsules, rotated rectangles, polygons) with their periodic images, and a 2D cell grid over
//! the box's x-y face (cell <= 0.1 sigma) that lists, per cell, the few primitives that can be
//! nearest anywhere in it. The distance at a point is the exact minimum signed distance over
//! the shapes (the union), extruded through z, at the cost of one or two primitives per atom
//! however many shapes there are. Because it is exact, a tank with a circle or rectangle
//! matches LAMMPS `fix wall/region` to round-off (see `export/lammps`).
//!
//! Distances are clamped at [`ObstacleField::FAR`]: only the thin layer near surfaces matters
//! to the force. Owns baking and sampling; the force itself comes from [`super::wall::Wall93`].
//! The sampling is mirrored in `kernels/obstacles.cuh`.

use rayon::prelude::*;

use crate::physics::sim_box::SimBox;
use crate::shapes::{Shape, polygon_nearest, segment_distance, to_segment};

/// One exact primitive, laid out for the GPU as well (64 bytes, `struct ObsPrim`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Prim {
    /// [`Prim::CIRCLE`], [`Prim::CAPSULE`], [`Prim::RECT`] or [`Prim::POLYGON`].
    pub kind: u32,
    /// Polygons: first vertex in [`ObstacleField::verts`] and vertex count.
    pub first: u32,
    pub count: u32,
    /// Index of the shape this primitive belongs to (in the order baked).
    pub shape: u32,
    /// Circle: cx, cy, r. Capsule: ax, ay, bx, by, r. Rectangle: cx, cy, hx, hy, cos, sin.
    pub a: [f64; 6],
}

impl Prim {
    pub const CIRCLE: u32 = 0;
    pub const CAPSULE: u32 = 1;
    pub const RECT: u32 = 2;
    pub const POLYGON: u32 = 3;

    fn new(kind: u32, a: &[f64]) -> Prim {
        let mut p = Prim { kind, first: 0, count: 0, shape: 0, a: [0.0; 6] };
        p.a[..a.len()].copy_from_slice(a);
        p
    }

    /// Signed distance (negative inside) and its gradient at `p`.
    #[inline]
    pub fn eval(&self, p: [f64; 2], verts: &[[f64; 2]]) -> (f64, [f64; 2]) {
        let a = &self.a;
        match self.kind {
            Prim::CIRCLE => radial(p[0] - a[0], p[1] - a[1], a[2]),
            Prim::CAPSULE => {
                let d = to_segment(p, [a[0], a[1]], [a[2], a[3]]);
                radial(d[0], d[1], a[4])
            }
            Prim::RECT => {
                let (c, s) = (a[4], a[5]);
                let d = [p[0] - a[0], p[1] - a[1]];
                let l = [c * d[0] + s * d[1], -s * d[0] + c * d[1]];
                let q = [l[0].abs() - a[2], l[1].abs() - a[3]];
                let sign = [if l[0] < 0.0 { -1.0 } else { 1.0 }, if l[1] < 0.0 { -1.0 } else { 1.0 }];
                let (dist, g) = if q[0] > 0.0 || q[1] > 0.0 {
                    let v = [q[0].max(0.0), q[1].max(0.0)];
                    let r = (v[0] * v[0] + v[1] * v[1]).sqrt();
                    (r, [sign[0] * v[0] / r, sign[1] * v[1] / r])
                } else if q[0] > q[1] {
                    (q[0], [sign[0], 0.0])
                } else {
                    (q[1], [0.0, sign[1]])
                };
                (dist, [c * g[0] - s * g[1], s * g[0] + c * g[1]])
            }
            _ => {
                let v = &verts[self.first as usize..(self.first + self.count) as usize];
                let (d, inside) = polygon_nearest(p, v);
                let (dist, g) = radial(d[0], d[1], 0.0);
                if inside { (-dist, [-g[0], -g[1]]) } else { (dist, g) }
            }
        }
    }
}

/// Distance `|d| - r` and its gradient for displacement `d` from a centre or spine.
#[inline]
fn radial(dx: f64, dy: f64, r: f64) -> (f64, [f64; 2]) {
    let len = (dx * dx + dy * dy).sqrt();
    if len > 0.0 { (len - r, [dx / len, dy / len]) } else { (-r, [1.0, 0.0]) }
}

/// The baked obstacles: primitives and the per-cell candidate lists.
#[derive(Clone, Debug, PartialEq)]
pub struct ObstacleField {
    pub lo: [f64; 2],
    pub cell: [f64; 2],
    pub cells: [usize; 2],
    pub periodic: [bool; 2],
    /// Box lengths along x and y (to wrap points on periodic axes).
    pub len: [f64; 2],
    pub prims: Vec<Prim>,
    pub verts: Vec<[f64; 2]>,
    /// Row-major (x fastest) cells: candidates of cell c are `cand[start[c]..start[c + 1]]`.
    pub start: Vec<u32>,
    pub cand: Vec<u32>,
    /// Exact clamped distance at each cell centre (for the free fraction).
    pub centre: Vec<f32>,
    /// The kind of each baked shape ([`Shape::kind`]), in order: the bodies the fluid
    /// pushes on (see `sim::bodies`).
    pub shape_kinds: Vec<&'static str>,
}

/// A sample of the field: distance and its gradient, and the shape whose surface is nearest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldSample {
    pub distance: f64,
    pub gradient: [f64; 2],
    /// Index of the nearest shape ([`FieldSample::NONE`] beyond [`ObstacleField::FAR`]).
    pub shape: u32,
}

impl FieldSample {
    /// The shape index of a sample with no shape within reach.
    pub const NONE: u32 = u32::MAX;
}

impl ObstacleField {
    /// Distances beyond this are reported as this (sigma), with no gradient.
    pub const FAR: f64 = 3.0;
    /// The finest grid the field is allowed to use, in cells.
    pub const MAX_CELLS: usize = 16_000_000;

    /// Bakes `shapes` over the x-y face of `sim_box` with cells no larger than `max_cell`.
    /// Returns None when there are no shapes.
    pub fn bake(shapes: &[Shape], sim_box: &SimBox, max_cell: f64) -> Option<ObstacleField> {
        if shapes.is_empty() {
            return None;
        }
        let full = sim_box.length();
        let len = [full[0], full[1]];
        let periodic = [sim_box.periodic[0], sim_box.periodic[1]];
        let mut cells = [0usize; 2];
        let mut cell = [0f64; 2];
        let mut max_cell = max_cell;
        loop {
            for k in 0..2 {
                cells[k] = ((len[k] / max_cell).ceil() as usize).max(2);
                cell[k] = len[k] / cells[k] as f64;
            }
            if cells[0] * cells[1] <= Self::MAX_CELLS {
                break;
            }
            max_cell *= 1.25;
        }
        let lo = [sim_box.lo[0], sim_box.lo[1]];
        let half_diag = 0.5 * (cell[0] * cell[0] + cell[1] * cell[1]).sqrt();
        let margin = Self::FAR + 3.0 * half_diag;

        // Primitives and their periodic images that come within `margin` of the face.
        let (base, base_verts) = primitives(shapes);
        let mut prims = Vec::new();
        let mut verts = Vec::new();
        let mut reach = Vec::new(); // (lo, hi) of each primitive grown by the margin
        for (p, (blo, bhi)) in &base {
            let shifts = |k: usize| -> Vec<f64> { if periodic[k] { vec![-len[k], 0.0, len[k]] } else { vec![0.0] } };
            for sx in shifts(0) {
                for sy in shifts(1) {
                    let glo = [blo[0] + sx - margin, blo[1] + sy - margin];
                    let ghi = [bhi[0] + sx + margin, bhi[1] + sy + margin];
                    if ghi[0] < lo[0] || glo[0] > lo[0] + len[0] || ghi[1] < lo[1] || glo[1] > lo[1] + len[1] {
                        continue;
                    }
                    prims.push(shifted(p, [sx, sy], &base_verts, &mut verts));
                    reach.push((glo, ghi));
                }
            }
        }

        // Per row: candidates of each cell, and the clamped centre distances.
        let rows: Vec<(Vec<u32>, Vec<u32>, Vec<f32>)> = (0..cells[1])
            .into_par_iter()
            .map(|j| {
                let y = lo[1] + (j as f64 + 0.5) * cell[1];
                let in_row: Vec<usize> =
                    (0..prims.len()).filter(|&q| reach[q].0[1] <= y && y <= reach[q].1[1]).collect();
                let mut counts = Vec::with_capacity(cells[0]);
                let mut cand = Vec::new();
                let mut centre = Vec::with_capacity(cells[0]);
                let mut near: Vec<(u32, f64)> = Vec::new();
                for i in 0..cells[0] {
                    let x = lo[0] + (i as f64 + 0.5) * cell[0];
                    near.clear();
                    let mut dmin = f64::INFINITY;
                    for &q in &in_row {
                        if reach[q].0[0] <= x && x <= reach[q].1[0] {
                            let d = prims[q].eval([x, y], &verts).0;
                            dmin = dmin.min(d);
                            near.push((q as u32, d));
                        }
                    }
                    let before = cand.len();
                    if dmin < Self::FAR + half_diag {
                        cand.extend(near.iter().filter(|(_, d)| *d <= dmin + 2.0 * half_diag).map(|(q, _)| *q));
                    }
                    counts.push((cand.len() - before) as u32);
                    centre.push(dmin.min(Self::FAR) as f32);
                }
                (counts, cand, centre)
            })
            .collect();
        let mut start = Vec::with_capacity(cells[0] * cells[1] + 1);
        let mut cand = Vec::new();
        let mut centre = Vec::with_capacity(cells[0] * cells[1]);
        start.push(0u32);
        for (counts, c, d) in rows {
            let mut at = cand.len() as u32;
            for n in counts {
                at += n;
                start.push(at);
            }
            cand.extend(c);
            centre.extend(d);
        }
        let shape_kinds = shapes.iter().map(Shape::kind).collect();
        Some(ObstacleField { lo, cell, cells, periodic, len, prims, verts, start, cand, centre, shape_kinds })
    }

    /// The cell holding (x, y) (wrapped on periodic axes, clamped on walled ones) and the
    /// point moved into the box on periodic axes.
    #[inline]
    pub fn locate(&self, x: f64, y: f64) -> (usize, [f64; 2]) {
        let mut p = [x, y];
        let mut idx = [0usize; 2];
        for k in 0..2 {
            if self.periodic[k] {
                let u = (p[k] - self.lo[k]) / self.len[k];
                p[k] -= self.len[k] * u.floor();
            }
            let u = ((p[k] - self.lo[k]) / self.cell[k]).floor();
            idx[k] = (u.max(0.0) as usize).min(self.cells[k] - 1);
        }
        (idx[1] * self.cells[0] + idx[0], p)
    }

    /// Exact distance to the nearest obstacle at (x, y) and its gradient; [`Self::FAR`] with no
    /// gradient beyond that.
    #[inline]
    pub fn sample(&self, x: f64, y: f64) -> FieldSample {
        let (c, p) = self.locate(x, y);
        let mut best = FieldSample { distance: Self::FAR, gradient: [0.0; 2], shape: FieldSample::NONE };
        for &q in &self.cand[self.start[c] as usize..self.start[c + 1] as usize] {
            let prim = &self.prims[q as usize];
            let (d, g) = prim.eval(p, &self.verts);
            if d < best.distance {
                best = FieldSample { distance: d, gradient: g, shape: prim.shape };
            }
        }
        best
    }

    /// Fraction of the x-y face at least `clearance` from any obstacle (sampled at cell
    /// centres): the part of the tank the fluid can reach.
    pub fn free_fraction(&self, clearance: f64) -> f64 {
        let free = self.centre.iter().filter(|&&d| d as f64 >= clearance).count();
        free as f64 / self.centre.len() as f64
    }
}

/// Each shape as primitives with their bounds; polygon vertices in one list.
type Bounded = (Prim, ([f64; 2], [f64; 2]));

fn primitives(shapes: &[Shape]) -> (Vec<Bounded>, Vec<[f64; 2]>) {
    let mut out = Vec::new();
    let mut verts = Vec::new();
    let capsule = |a: [f64; 2], b: [f64; 2], r: f64| {
        let s = Shape::Segment { a, b, thickness: 2.0 * r };
        (Prim::new(Prim::CAPSULE, &[a[0], a[1], b[0], b[1], r]), s.bounds())
    };
    for (index, s) in shapes.iter().enumerate() {
        let first = out.len();
        match s {
            Shape::Circle { centre, radius } => {
                out.push((Prim::new(Prim::CIRCLE, &[centre[0], centre[1], *radius]), s.bounds()))
            }
            Shape::Rectangle { centre, half_size, angle_deg } => {
                let (sn, cs) = angle_deg.to_radians().sin_cos();
                out.push((
                    Prim::new(Prim::RECT, &[centre[0], centre[1], half_size[0], half_size[1], cs, sn]),
                    s.bounds(),
                ))
            }
            Shape::Segment { a, b, thickness } => out.push(capsule(*a, *b, 0.5 * thickness)),
            Shape::Stroke { points, radius } => match points.len() {
                0 => {}
                1 => out.push(capsule(points[0], points[0], *radius)),
                _ => out.extend(points.windows(2).map(|w| capsule(w[0], w[1], *radius))),
            },
            Shape::Polygon { points } if points.len() >= 3 => {
                let mut p = Prim::new(Prim::POLYGON, &[]);
                p.first = verts.len() as u32;
                p.count = points.len() as u32;
                verts.extend_from_slice(points);
                out.push((p, s.bounds()));
            }
            Shape::Polygon { .. } => {}
        }
        for (p, _) in &mut out[first..] {
            p.shape = index as u32;
        }
    }
    (out, verts)
}

/// `p` moved by `d`; a polygon's vertices (in `base_verts`) are copied, moved, into `verts`.
fn shifted(p: &Prim, d: [f64; 2], base_verts: &[[f64; 2]], verts: &mut Vec<[f64; 2]>) -> Prim {
    let mut q = *p;
    match p.kind {
        Prim::CIRCLE | Prim::RECT => {
            q.a[0] += d[0];
            q.a[1] += d[1];
        }
        Prim::CAPSULE => {
            q.a[0] += d[0];
            q.a[1] += d[1];
            q.a[2] += d[0];
            q.a[3] += d[1];
        }
        _ => {
            q.first = verts.len() as u32;
            let own = &base_verts[p.first as usize..(p.first + p.count) as usize];
            verts.extend(own.iter().map(|v| [v[0] + d[0], v[1] + d[1]]));
        }
    }
    q
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

    fn all_shapes() -> Vec<Shape> {
        vec![
            Shape::Circle { centre: [4.0, 5.0], radius: 1.5 },
            Shape::Rectangle { centre: [10.0, 3.0], half_size: [1.0, 0.5], angle_deg: 30.0 },
            Shape::Segment { a: [13.0, 2.0], b: [16.0, 8.0], thickness: 0.6 },
            Shape::Polygon { points: vec![[6.0, 7.0], [9.0, 7.5], [7.0, 9.5], [7.5, 8.0]] },
            Shape::Stroke { points: vec![[1.0, 1.0], [2.0, 1.5], [3.0, 1.0]], radius: 0.3 },
        ]
    }

    /// The field equals the exact union distance everywhere (not just near one shape).
    #[test]
    fn sample_is_the_exact_union_distance() {
        let shapes = all_shapes();
        let f = ObstacleField::bake(&shapes, &tank(), 0.1).unwrap();
        let mut rng = 12345u64;
        let mut next = || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..20_000 {
            let p = [20.0 * next(), 10.0 * next()];
            let exact = shapes.iter().map(|s| s.signed_distance(p)).fold(f64::INFINITY, f64::min);
            let s = f.sample(p[0], p[1]);
            assert!((s.distance - exact.min(ObstacleField::FAR)).abs() < 1e-12, "{p:?}: {} vs {exact}", s.distance);
        }
    }

    #[test]
    fn gradient_is_the_distance_slope() {
        let f = ObstacleField::bake(&all_shapes(), &tank(), 0.1).unwrap();
        for p in [[6.0, 5.2], [11.3, 3.9], [14.0, 5.5], [8.0, 6.5], [2.0, 2.1], [7.3, 8.4], [10.2, 3.1]] {
            let s = f.sample(p[0], p[1]);
            let h = 1e-6;
            let gx = (f.sample(p[0] + h, p[1]).distance - f.sample(p[0] - h, p[1]).distance) / (2.0 * h);
            let gy = (f.sample(p[0], p[1] + h).distance - f.sample(p[0], p[1] - h).distance) / (2.0 * h);
            assert!((s.gradient[0] - gx).abs() < 1e-6 && (s.gradient[1] - gy).abs() < 1e-6, "{p:?}");
        }
    }

    #[test]
    fn periodic_axis_wraps_the_shape() {
        let b = SimBox::new([20.0, 10.0, 5.0], [true, false, true]);
        let shapes = vec![Shape::Circle { centre: [0.5, 5.0], radius: 1.0 }];
        let f = ObstacleField::bake(&shapes, &b, 0.1).unwrap();
        // 19.8 is 0.7 from the circle's centre through the periodic boundary: inside.
        assert!((f.sample(19.8, 5.0).distance + 0.3).abs() < 1e-12);
        assert!((f.sample(18.5, 5.0).distance - 1.0).abs() < 1e-12);
        assert!((f.sample(-1.5, 5.0).distance - 1.0).abs() < 1e-12);
    }

    #[test]
    fn far_field_is_clamped_and_empty_scene_has_no_field() {
        let shapes = vec![Shape::Circle { centre: [2.0, 2.0], radius: 0.5 }];
        let f = ObstacleField::bake(&shapes, &tank(), 0.1).unwrap();
        assert_eq!(f.sample(18.0, 8.0).distance, ObstacleField::FAR);
        assert!(f.free_fraction(1.0) > 0.9 && f.free_fraction(1.0) < 1.0);
        assert!(ObstacleField::bake(&[], &tank(), 0.1).is_none());
    }
}
