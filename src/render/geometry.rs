//! Triangles and lines for everything that is not an atom: the tank outline and its
//! translucent walls, and obstacles as prisms (a 2D shape extruded through the tank's depth:
//! in the front view their caps are filled shapes). Built on the CPU when the scene changes,
//! never per frame.

use bytemuck::{Pod, Zeroable};

use crate::physics::sim_box::SimBox;
use crate::shapes::Shape;

/// One vertex of flat geometry: position (sigma) and linear RGBA colour.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct FlatVertex {
    pub pos: [f32; 3],
    pub colour: [f32; 4],
}

pub const OUTLINE: [f32; 4] = [0.75, 0.8, 0.9, 1.0];
pub const WALL: [f32; 4] = [0.55, 0.65, 0.85, 0.10];
pub const PISTON: [f32; 4] = [0.95, 0.70, 0.35, 0.35];
pub const PISTON_RIM: [f32; 4] = [1.0, 0.78, 0.45, 1.0];
pub const OBSTACLE_CAP: [f32; 4] = [0.42, 0.46, 0.52, 1.0];
pub const OBSTACLE_SIDE: [f32; 4] = [0.30, 0.33, 0.38, 1.0];

fn v(p: [f32; 3], colour: [f32; 4]) -> FlatVertex {
    FlatVertex { pos: p, colour }
}

/// The 12 edges of the box as a line list.
pub fn tank_outline(b: &SimBox) -> Vec<FlatVertex> {
    let lo = b.lo.map(|x| x as f32);
    let hi = b.hi.map(|x| x as f32);
    let corner = |i: usize| {
        [
            if i & 1 == 0 { lo[0] } else { hi[0] },
            if i & 2 == 0 { lo[1] } else { hi[1] },
            if i & 4 == 0 { lo[2] } else { hi[2] },
        ]
    };
    let mut out = Vec::with_capacity(24);
    for i in 0..8usize {
        for bit in [1usize, 2, 4] {
            if i & bit == 0 {
                out.push(v(corner(i), OUTLINE));
                out.push(v(corner(i | bit), OUTLINE));
            }
        }
    }
    out
}

/// Translucent faces on the walled axes, as a triangle list.
pub fn tank_walls(b: &SimBox) -> Vec<FlatVertex> {
    tank_walls_at(b, None)
}

/// The tank's walls with the top y face drawn as the piston at `piston` (when given): at its
/// height, in the piston's colour.
pub fn tank_walls_at(b: &SimBox, piston: Option<f64>) -> Vec<FlatVertex> {
    let lo = b.lo.map(|x| x as f32);
    let hi = b.hi.map(|x| x as f32);
    let mut out = Vec::new();
    for k in 0..3 {
        if b.periodic[k] {
            continue;
        }
        let (u, w) = ((k + 1) % 3, (k + 2) % 3);
        for (s, side) in [lo[k], hi[k]].into_iter().enumerate() {
            let (side, colour) = match piston {
                Some(h) if k == 1 && s == 1 => (h as f32, PISTON),
                _ => (side, WALL),
            };
            let p = |a: f32, c: f32| {
                let mut q = [0.0; 3];
                q[k] = side;
                q[u] = a;
                q[w] = c;
                q
            };
            let quad = [p(lo[u], lo[w]), p(hi[u], lo[w]), p(hi[u], hi[w]), p(lo[u], hi[w])];
            for idx in [0, 1, 2, 0, 2, 3] {
                out.push(v(quad[idx], colour));
            }
        }
    }
    out
}

/// The piston's rim at height `h`: four lines across the tank, in the piston's colour.
pub fn piston_outline(b: &SimBox, h: f64) -> Vec<FlatVertex> {
    let (x0, x1, z0, z1, y) = (b.lo[0] as f32, b.hi[0] as f32, b.lo[2] as f32, b.hi[2] as f32, h as f32);
    let c = [x0, x1, x1, x0].into_iter().zip([z0, z0, z1, z1]).map(|(x, z)| [x, y, z]).collect::<Vec<_>>();
    (0..4).flat_map(|i| [v(c[i], PISTON_RIM), v(c[(i + 1) % 4], PISTON_RIM)]).collect()
}

/// The shape's boundary as simple polygons (counter-clockwise), curves as segments.
pub fn shape_polygons(shape: &Shape) -> Vec<Vec<[f32; 2]>> {
    const ARC: usize = 40;
    let circle = |c: [f64; 2], r: f64, n: usize| -> Vec<[f32; 2]> {
        (0..n)
            .map(|i| {
                let a = std::f64::consts::TAU * i as f64 / n as f64;
                [(c[0] + r * a.cos()) as f32, (c[1] + r * a.sin()) as f32]
            })
            .collect()
    };
    let capsule = |a: [f64; 2], b: [f64; 2], r: f64| -> Vec<[f32; 2]> {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1e-9 {
            return circle(a, r, ARC);
        }
        let base = dy.atan2(dx);
        let mut pts = Vec::with_capacity(ARC + 2);
        // Half circle around b from -90 to +90 degrees, then around a from +90 to +270.
        for i in 0..=ARC / 2 {
            let t = base - std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * i as f64 / (ARC / 2) as f64;
            pts.push([(b[0] + r * t.cos()) as f32, (b[1] + r * t.sin()) as f32]);
        }
        for i in 0..=ARC / 2 {
            let t = base + std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * i as f64 / (ARC / 2) as f64;
            pts.push([(a[0] + r * t.cos()) as f32, (a[1] + r * t.sin()) as f32]);
        }
        pts
    };
    match shape {
        Shape::Circle { centre, radius } => vec![circle(*centre, *radius, 2 * ARC)],
        Shape::Rectangle { centre, half_size, angle_deg } => {
            let (s, c) = angle_deg.to_radians().sin_cos();
            vec![
                [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]
                    .iter()
                    .map(|k: &[f64; 2]| {
                        let (x, y) = (k[0] * half_size[0], k[1] * half_size[1]);
                        [(centre[0] + c * x - s * y) as f32, (centre[1] + s * x + c * y) as f32]
                    })
                    .collect(),
            ]
        }
        Shape::Segment { a, b, thickness } => vec![capsule(*a, *b, 0.5 * thickness)],
        Shape::Stroke { points, radius } => match points.len() {
            0 => Vec::new(),
            1 => vec![circle(points[0], *radius, ARC)],
            _ => points.windows(2).map(|w| capsule(w[0], w[1], *radius)).collect(),
        },
        Shape::Polygon { points } => {
            let mut p: Vec<[f32; 2]> = points.iter().map(|q| [q[0] as f32, q[1] as f32]).collect();
            if signed_area(&p) < 0.0 {
                p.reverse();
            }
            vec![p]
        }
    }
}

fn signed_area(p: &[[f32; 2]]) -> f32 {
    let n = p.len();
    (0..n).map(|i| p[i][0] * p[(i + 1) % n][1] - p[(i + 1) % n][0] * p[i][1]).sum::<f32>() * 0.5
}

/// Ear-clipping triangulation of a simple counter-clockwise polygon.
pub fn triangulate(p: &[[f32; 2]]) -> Vec<[usize; 3]> {
    let mut idx: Vec<usize> = (0..p.len()).collect();
    let mut out = Vec::new();
    let cross = |a: [f32; 2], b: [f32; 2], c: [f32; 2]| (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    let mut guard = 0;
    while idx.len() > 3 && guard < 10 * p.len() * p.len() + 100 {
        guard += 1;
        let n = idx.len();
        let mut clipped = false;
        for i in 0..n {
            let (a, b, c) = (idx[(i + n - 1) % n], idx[i], idx[(i + 1) % n]);
            if cross(p[a], p[b], p[c]) <= 0.0 {
                continue;
            }
            let inside = idx.iter().any(|&k| {
                k != a
                    && k != b
                    && k != c
                    && cross(p[a], p[b], p[k]) >= 0.0
                    && cross(p[b], p[c], p[k]) >= 0.0
                    && cross(p[c], p[a], p[k]) >= 0.0
            });
            if !inside {
                out.push([a, b, c]);
                idx.remove(i);
                clipped = true;
                break;
            }
        }
        if !clipped {
            // Degenerate remainder (collinear points): fan it.
            break;
        }
    }
    for i in 1..idx.len().saturating_sub(1) {
        out.push([idx[0], idx[i], idx[i + 1]]);
    }
    out
}

/// Obstacles as prisms from z0 to z1: both caps and the side walls, as a triangle list.
pub fn obstacle_prisms(shapes: &[Shape], z0: f32, z1: f32) -> Vec<FlatVertex> {
    let mut out = Vec::new();
    for shape in shapes {
        for poly in shape_polygons(shape) {
            if poly.len() < 3 {
                continue;
            }
            for t in triangulate(&poly) {
                for z in [z0, z1] {
                    for &i in &t {
                        out.push(v([poly[i][0], poly[i][1], z], OBSTACLE_CAP));
                    }
                }
            }
            let n = poly.len();
            for i in 0..n {
                let (a, b) = (poly[i], poly[(i + 1) % n]);
                let quad = [[a[0], a[1], z0], [b[0], b[1], z0], [b[0], b[1], z1], [a[0], a[1], z1]];
                for k in [0, 1, 2, 0, 2, 3] {
                    out.push(v(quad[k], OBSTACLE_SIDE));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tank_has_twelve_edges_and_walls_only_where_walled() {
        let b = SimBox::new([10.0, 5.0, 3.0], [false, false, true]);
        assert_eq!(tank_outline(&b).len(), 24);
        assert_eq!(tank_walls(&b).len(), 2 * 2 * 6);
        // With a piston the top y face moves to its height and takes its colour.
        let with = tank_walls_at(&b, Some(3.5));
        assert_eq!(with.len(), 2 * 2 * 6);
        let piston: Vec<_> = with.iter().filter(|v| v.colour == PISTON).collect();
        assert_eq!(piston.len(), 6);
        assert!(piston.iter().all(|v| v.pos[1] == 3.5));
        assert_eq!(piston_outline(&b, 3.5).len(), 8);
    }

    #[test]
    fn triangulation_covers_a_concave_polygon() {
        // An L shape of area 3.
        let p = vec![[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 2.0]];
        let tris = triangulate(&p);
        assert_eq!(tris.len(), 4);
        let area: f32 = tris.iter().map(|t| signed_area(&[p[t[0]], p[t[1]], p[t[2]]])).sum();
        assert!((area - 3.0).abs() < 1e-5, "{area}");
    }

    #[test]
    fn every_shape_kind_becomes_a_prism() {
        let shapes = vec![
            Shape::Circle { centre: [5.0, 5.0], radius: 1.0 },
            Shape::Rectangle { centre: [2.0, 2.0], half_size: [1.0, 0.5], angle_deg: 30.0 },
            Shape::Segment { a: [1.0, 8.0], b: [6.0, 8.0], thickness: 0.6 },
            Shape::Polygon { points: vec![[7.0, 1.0], [9.0, 1.0], [8.0, 3.0]] },
            Shape::Stroke { points: vec![[1.0, 1.0], [2.0, 2.0], [3.0, 1.0]], radius: 0.3 },
        ];
        for s in &shapes {
            let prism = obstacle_prisms(std::slice::from_ref(s), 0.0, 4.0);
            assert!(prism.len() >= 3 * 4 && prism.len().is_multiple_of(3), "{}", s.kind());
        }
    }
}
