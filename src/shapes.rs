//! Obstacle shapes drawn in the x-y (front) plane and extruded through z, with their exact
//! signed distance (negative inside). Scenes store these; the physics bakes them into a
//! signed-distance grid; the renderer and the drawing tools read them.
//!
//! Pure geometry: no simulation state, no drawing code.

use serde::{Deserialize, Serialize};

/// One 2D obstacle shape. Coordinates and lengths in sigma.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Shape {
    Circle {
        centre: [f64; 2],
        radius: f64,
    },
    /// A rectangle of half extents `half_size`, rotated counter-clockwise by `angle_deg`.
    Rectangle {
        centre: [f64; 2],
        half_size: [f64; 2],
        angle_deg: f64,
    },
    /// A straight wall from `a` to `b` with rounded ends.
    Segment {
        a: [f64; 2],
        b: [f64; 2],
        thickness: f64,
    },
    /// A simple polygon (either winding), at least three points.
    Polygon {
        points: Vec<[f64; 2]>,
    },
    /// A free-hand stroke: a chain of capsules of `radius` through `points`.
    Stroke {
        points: Vec<[f64; 2]>,
        radius: f64,
    },
}

fn sub(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0] - b[0], a[1] - b[1]]
}

fn dot(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

fn len(a: [f64; 2]) -> f64 {
    dot(a, a).sqrt()
}

/// Distance from `p` to the segment `a`-`b`.
pub fn segment_distance(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    len(to_segment(p, a, b))
}

impl Shape {
    /// Signed distance from `p` to the shape's boundary: negative inside.
    pub fn signed_distance(&self, p: [f64; 2]) -> f64 {
        match self {
            Shape::Circle { centre, radius } => len(sub(p, *centre)) - radius,
            Shape::Rectangle { centre, half_size, angle_deg } => {
                let (s, c) = angle_deg.to_radians().sin_cos();
                let d = sub(p, *centre);
                // Rotate into the rectangle's own frame.
                let local = [c * d[0] + s * d[1], -s * d[0] + c * d[1]];
                let q = [local[0].abs() - half_size[0], local[1].abs() - half_size[1]];
                let outside = len([q[0].max(0.0), q[1].max(0.0)]);
                outside + q[0].max(q[1]).min(0.0)
            }
            Shape::Segment { a, b, thickness } => segment_distance(p, *a, *b) - 0.5 * thickness,
            Shape::Polygon { points } => polygon_signed_distance(p, points),
            Shape::Stroke { points, radius } => {
                let d = match points.len() {
                    0 => f64::INFINITY,
                    1 => len(sub(p, points[0])),
                    _ => points.windows(2).map(|w| segment_distance(p, w[0], w[1])).fold(f64::INFINITY, f64::min),
                };
                d - radius
            }
        }
    }

    /// The centre of the shape's bounds and its extent across x (along y): where a body in a
    /// stream along x sits, and its diameter D for the wake numbers.
    pub fn centre_and_height(&self) -> ([f64; 2], f64) {
        let (lo, hi) = self.bounds();
        ([0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])], hi[1] - lo[1])
    }

    /// Axis-aligned bounds `(min, max)` of the shape.
    pub fn bounds(&self) -> ([f64; 2], [f64; 2]) {
        let grow = |pts: &[[f64; 2]], r: f64| {
            let mut lo = [f64::INFINITY; 2];
            let mut hi = [f64::NEG_INFINITY; 2];
            for p in pts {
                for k in 0..2 {
                    lo[k] = lo[k].min(p[k] - r);
                    hi[k] = hi[k].max(p[k] + r);
                }
            }
            (lo, hi)
        };
        match self {
            Shape::Circle { centre, radius } => grow(&[*centre], *radius),
            Shape::Rectangle { centre, half_size, angle_deg } => {
                let (s, c) = angle_deg.to_radians().sin_cos();
                let corners: Vec<[f64; 2]> = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]
                    .iter()
                    .map(|k| {
                        let x = k[0] * half_size[0];
                        let y = k[1] * half_size[1];
                        [centre[0] + c * x - s * y, centre[1] + s * x + c * y]
                    })
                    .collect();
                grow(&corners, 0.0)
            }
            Shape::Segment { a, b, thickness } => grow(&[*a, *b], 0.5 * thickness),
            Shape::Polygon { points } => grow(points, 0.0),
            Shape::Stroke { points, radius } => grow(points, *radius),
        }
    }

    /// The shape moved by `delta`.
    pub fn translated(&self, delta: [f64; 2]) -> Shape {
        let mv = |p: &[f64; 2]| [p[0] + delta[0], p[1] + delta[1]];
        match self {
            Shape::Circle { centre, radius } => Shape::Circle { centre: mv(centre), radius: *radius },
            Shape::Rectangle { centre, half_size, angle_deg } => {
                Shape::Rectangle { centre: mv(centre), half_size: *half_size, angle_deg: *angle_deg }
            }
            Shape::Segment { a, b, thickness } => Shape::Segment { a: mv(a), b: mv(b), thickness: *thickness },
            Shape::Polygon { points } => Shape::Polygon { points: points.iter().map(mv).collect() },
            Shape::Stroke { points, radius } => {
                Shape::Stroke { points: points.iter().map(mv).collect(), radius: *radius }
            }
        }
    }

    /// The shape with every coordinate and length multiplied by `f` (about the origin).
    pub fn scaled(&self, f: f64) -> Shape {
        let sc = |p: &[f64; 2]| [p[0] * f, p[1] * f];
        match self {
            Shape::Circle { centre, radius } => Shape::Circle { centre: sc(centre), radius: radius * f },
            Shape::Rectangle { centre, half_size, angle_deg } => {
                Shape::Rectangle { centre: sc(centre), half_size: sc(half_size), angle_deg: *angle_deg }
            }
            Shape::Segment { a, b, thickness } => Shape::Segment { a: sc(a), b: sc(b), thickness: thickness * f },
            Shape::Polygon { points } => Shape::Polygon { points: points.iter().map(sc).collect() },
            Shape::Stroke { points, radius } => {
                Shape::Stroke { points: points.iter().map(sc).collect(), radius: radius * f }
            }
        }
    }

    /// A short human name ("circle", ...), for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Shape::Circle { .. } => "circle",
            Shape::Rectangle { .. } => "rectangle",
            Shape::Segment { .. } => "segment",
            Shape::Polygon { .. } => "polygon",
            Shape::Stroke { .. } => "stroke",
        }
    }
}

/// Displacement from the nearest point of segment `a`-`b` to `p`.
pub fn to_segment(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    let pa = sub(p, a);
    let ba = sub(b, a);
    let bb = dot(ba, ba);
    let h = if bb > 0.0 { (dot(pa, ba) / bb).clamp(0.0, 1.0) } else { 0.0 };
    [pa[0] - ba[0] * h, pa[1] - ba[1] * h]
}

/// For a closed polygon `v` (at least three points): the displacement from its nearest
/// boundary point to `p`, and whether `p` is inside (crossing number).
pub fn polygon_nearest(p: [f64; 2], v: &[[f64; 2]]) -> ([f64; 2], bool) {
    let mut best = f64::INFINITY;
    let mut delta = [1.0, 0.0];
    let mut inside = false;
    let mut j = v.len() - 1;
    for i in 0..v.len() {
        let d = to_segment(p, v[j], v[i]);
        let d2 = dot(d, d);
        if d2 < best {
            best = d2;
            delta = d;
        }
        let (a, b) = (v[i], v[j]);
        if (a[1] > p[1]) != (b[1] > p[1]) {
            let x = a[0] + (p[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0]);
            if p[0] < x {
                inside = !inside;
            }
        }
        j = i;
    }
    (delta, inside)
}

/// Exact signed distance to a closed polygon (crossing-number sign).
fn polygon_signed_distance(p: [f64; 2], v: &[[f64; 2]]) -> f64 {
    if v.len() < 3 {
        return f64::INFINITY;
    }
    let (d, inside) = polygon_nearest(p, v);
    if inside { -len(d) } else { len(d) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn circle() {
        let c = Shape::Circle { centre: [1.0, 1.0], radius: 2.0 };
        assert!(close(c.signed_distance([1.0, 1.0]), -2.0));
        assert!(close(c.signed_distance([4.0, 1.0]), 1.0));
    }

    #[test]
    fn rotated_rectangle() {
        let r = Shape::Rectangle { centre: [0.0, 0.0], half_size: [2.0, 1.0], angle_deg: 90.0 };
        // After a quarter turn the long side lies along y.
        assert!(close(r.signed_distance([0.0, 3.0]), 1.0));
        assert!(close(r.signed_distance([2.0, 0.0]), 1.0));
        assert!(close(r.signed_distance([0.0, 0.0]), -1.0));
        let (lo, hi) = r.bounds();
        assert!(close(lo[0], -1.0) && close(hi[1], 2.0));
    }

    #[test]
    fn segment_and_stroke() {
        let s = Shape::Segment { a: [0.0, 0.0], b: [4.0, 0.0], thickness: 1.0 };
        assert!(close(s.signed_distance([2.0, 2.0]), 1.5));
        assert!(close(s.signed_distance([-1.0, 0.0]), 0.5));
        let k = Shape::Stroke { points: vec![[0.0, 0.0], [4.0, 0.0], [4.0, 4.0]], radius: 0.5 };
        assert!(close(k.signed_distance([5.0, 2.0]), 0.5));
        assert!(close(k.signed_distance([4.0, 2.0]), -0.5));
    }

    #[test]
    fn polygon_either_winding() {
        let sq = vec![[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]];
        let mut rev = sq.clone();
        rev.reverse();
        for pts in [sq, rev] {
            let p = Shape::Polygon { points: pts };
            assert!(close(p.signed_distance([1.0, 1.0]), -1.0));
            assert!(close(p.signed_distance([3.0, 1.0]), 1.0));
            assert!(close(p.signed_distance([3.0, 3.0]), 2f64.sqrt()));
        }
    }
}
