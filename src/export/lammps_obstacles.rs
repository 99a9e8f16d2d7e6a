//! The LAMMPS deck's obstacles, beside `lammps.rs`: each shape a region extruded through z
//! with `fix wall/region lj93` on it (circles and rectangles exactly; segments, strokes and
//! polygons as unions of cylinders and rotated blocks, with a warning), periodic images near
//! the box included, and the hand-over to the cylinders' surface friction
//! (`lammps_obstacle_friction.rs`). Text generation only.

use std::fmt::Write as _;

use super::lammps::{ExportInput, Scale, num};
use crate::shapes::Shape;

/// Half-thickness (sigma) of the edge walls that stand in for a polygon's sides.
const POLYGON_EDGE_RADIUS: f64 = 1e-3;

/// One obstacle's region in the deck (the shape or one of its periodic images): the scene's
/// shape index, the `fix wall/region` ID, and for circles the centre and radius (LAMMPS units).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Placed {
    pub shape: usize,
    pub fix: String,
    pub circle: Option<([f64; 2], f64)>,
}

/// The obstacles' surface friction: exact for circles (`lammps_obstacle_friction.rs`), a
/// warning naming the other shapes, which stay smooth.
pub(super) fn obstacle_friction(
    script: &mut String,
    warnings: &mut Vec<String>,
    inp: &ExportInput,
    s: &Scale,
    f: &crate::physics::friction::SurfaceFriction,
    placed: &[Placed],
) -> Vec<super::lammps_obstacle_friction::FrictionReaction> {
    use super::lammps_obstacle_friction::{FrictionCircle, obstacle_friction};
    let circles: Vec<FrictionCircle> = placed
        .iter()
        .filter_map(|q| q.circle.map(|(centre, radius)| FrictionCircle { shape: q.shape, centre, radius }))
        .collect();
    let len = inp.sim_box.length();
    let zspan = (len[2] + 100.0) * s.length;
    let (zlo, zhi) = (num(-zspan), num(len[2] * s.length + zspan));
    let reactions = obstacle_friction(script, inp, s, f, &circles, (&zlo, &zhi));
    let smooth: Vec<String> = inp
        .shapes
        .iter()
        .enumerate()
        .filter(|(_, sh)| !matches!(sh, Shape::Circle { .. }))
        .map(|(i, sh)| format!("obstacles[{i}] ({})", sh.kind()))
        .collect();
    if !smooth.is_empty() {
        let msg = format!(
            "surface friction at {} is not exported: the deck writes the tangential Langevin force for circles \
             (cylinders) only, so these obstacles are smooth (perfect-slip) in the deck",
            smooth.join(", ")
        );
        let _ = writeln!(script, "# Not exported: {msg}.");
        warnings.push(msg);
    }
    reactions
}

/// Regions and `fix wall/region` for every shape (and the periodic images near the box);
/// returns where each one went.
pub(super) fn obstacles(
    script: &mut String,
    warnings: &mut Vec<String>,
    inp: &ExportInput,
    s: &Scale,
    coeffs: &str,
) -> Vec<Placed> {
    let b = inp.sim_box;
    let len = b.length();
    let lo = b.lo;
    // Regions span z well beyond the box, so their z faces never touch an atom.
    let zspan = (len[2] + 100.0) * s.length;
    let (zlo, zhi) = (num(-zspan), num(len[2] * s.length + zspan));
    let _ = writeln!(
        script,
        "\n# Obstacles: each shape a region (extruded through z) with a 9-3 LJ wall on its surface,\n\
         # fix wall/region lj93, the potential argon-sandbox puts on the exact distance to the shape."
    );
    let reach = inp.params.obstacle.cutoff;
    let mut approximate = Vec::new();
    let mut placed = Vec::new();
    let mut id = 0usize;
    for (si, shape) in inp.shapes.iter().enumerate() {
        let (blo, bhi) = shape.bounds();
        let shifts = |k: usize| -> Vec<f64> {
            if !b.periodic[k] {
                return vec![0.0];
            }
            let mut v = vec![0.0];
            if blo[k] - reach < lo[k] {
                v.push(len[k]);
            }
            if bhi[k] + reach > lo[k] + len[k] {
                v.push(-len[k]);
            }
            v
        };
        for sx in shifts(0) {
            for sy in shifts(1) {
                let shape = shape.translated([sx - lo[0], sy - lo[1]]).scaled(s.length);
                let name = format!("obs{id}");
                id += 1;
                let image = if sx != 0.0 || sy != 0.0 { " (periodic image)" } else { "" };
                let _ = writeln!(script, "# obstacles[{si}]: {}{image}", shape.kind());
                if !region(script, &name, &shape, &zlo, &zhi, s.length) && sx == 0.0 && sy == 0.0 {
                    approximate.push(format!("obstacles[{si}] ({})", shape.kind()));
                }
                let _ = writeln!(script, "fix             {name} all wall/region {name} lj93 {coeffs}");
                let _ = writeln!(script, "fix_modify      {name} energy yes virial yes");
                let circle = match shape {
                    Shape::Circle { centre, radius } => Some((centre, radius)),
                    _ => None,
                };
                placed.push(Placed { shape: si, fix: name, circle });
            }
        }
    }
    if !approximate.is_empty() {
        let msg = format!(
            "{} become unions of LAMMPS regions; LAMMPS sums the wall contacts of the pieces, so near joints and corners \
             the force differs from argon-sandbox's distance to the whole shape (circles and rectangles are exact)",
            approximate.join(", ")
        );
        let _ = writeln!(script, "# Warning: {msg}.");
        warnings.push(msg);
    }
    placed
}

/// Writes the region(s) for one shape (already in LAMMPS units) as `name`, side out.
/// Returns whether the region is exact.
fn region(script: &mut String, name: &str, shape: &Shape, zlo: &str, zhi: &str, unit_length: f64) -> bool {
    let mut parts: Vec<String> = Vec::new();
    let mut piece = |script: &mut String, body: String| {
        let pname = format!("{name}_{}", parts.len());
        let _ = writeln!(script, "region          {pname} {body}");
        parts.push(pname);
    };
    let cyl = |c: [f64; 2], r: f64| format!("cylinder z {} {} {} {zlo} {zhi} units box", num(c[0]), num(c[1]), num(r));
    let bar = |script: &mut String, a: [f64; 2], bb: [f64; 2], r: f64| {
        // A block along the segment a-b, half thickness r, rotated about its centre.
        let (dx, dy) = (bb[0] - a[0], bb[1] - a[1]);
        let l = (dx * dx + dy * dy).sqrt();
        let c = [0.5 * (a[0] + bb[0]), 0.5 * (a[1] + bb[1])];
        rotated_block(script, c, [0.5 * l, r], dy.atan2(dx), zlo, zhi)
    };
    let exact = match shape {
        Shape::Circle { centre, radius } => {
            let _ = writeln!(script, "region          {name} {} side out", cyl(*centre, *radius));
            return true;
        }
        Shape::Rectangle { centre, half_size, angle_deg } => {
            let body = rotated_block(script, *centre, *half_size, angle_deg.to_radians(), zlo, zhi);
            let _ = writeln!(script, "region          {name} {body} side out");
            return true;
        }
        Shape::Segment { a, b, thickness } => {
            let r = 0.5 * thickness;
            piece(script, cyl(*a, r));
            piece(script, cyl(*b, r));
            if a != b {
                let body = bar(script, *a, *b, r);
                piece(script, body);
            }
            false
        }
        Shape::Stroke { points, radius } => {
            for q in points {
                piece(script, cyl(*q, *radius));
            }
            for w in points.windows(2) {
                if w[0] != w[1] {
                    let body = bar(script, w[0], w[1], *radius);
                    piece(script, body);
                }
            }
            false
        }
        Shape::Polygon { points } => {
            let r = POLYGON_EDGE_RADIUS * unit_length;
            for q in points {
                piece(script, cyl(*q, r));
            }
            for i in 0..points.len() {
                let (p0, p1) = (points[i], points[(i + 1) % points.len()]);
                if p0 != p1 {
                    let body = bar(script, p0, p1, r);
                    piece(script, body);
                }
            }
            false
        }
    };
    if parts.len() == 1 {
        // A single piece (a stroke of one point): rename through a one-member union.
        let _ = writeln!(script, "region          {name} union 1 {} side out", parts[0]);
    } else {
        let _ = writeln!(script, "region          {name} union {} {} side out", parts.len(), parts.join(" "));
    }
    exact
}

/// A block of half extents `half` centred at `c`, rotated by `angle` (radians, counter-clockwise
/// about z). Axis-aligned blocks are written plainly; others through an angle variable.
fn rotated_block(script: &mut String, c: [f64; 2], half: [f64; 2], angle: f64, zlo: &str, zhi: &str) -> String {
    let box_of = |h: [f64; 2]| {
        format!(
            "block {} {} {} {} {zlo} {zhi} units box",
            num(c[0] - h[0]),
            num(c[0] + h[0]),
            num(c[1] - h[1]),
            num(c[1] + h[1])
        )
    };
    if angle == 0.0 {
        return box_of(half);
    }
    let var = format!("rot{}", script.matches("\nvariable        rot").count());
    let _ = writeln!(script, "variable        {var} equal {}", num(angle));
    format!("{} rotate v_{var} {} {} 0 0 0 1", box_of(half), num(c[0]), num(c[1]))
}
