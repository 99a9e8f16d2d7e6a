//! Validation of obstacle shapes in a scene: finite coordinates, positive sizes, polygons with
//! area, point counts the baked field can afford, and no shape entirely outside the tank's
//! x-y face (partly outside is fine: the field clips it).

use super::error::{num, tuple};
use super::locate::FieldPath;
use super::validate::{MAX_OBSTACLES, MAX_POLYGON_POINTS, MAX_SHAPE_COORDINATE, MAX_STROKE_POINTS, Problem};
use crate::physics::sim_box::SimBox;
use crate::shapes::Shape;

type Check = Result<(), Problem>;

fn point(p: FieldPath, x: [f64; 2]) -> Check {
    if x.iter().all(|c| c.is_finite() && c.abs() <= MAX_SHAPE_COORDINATE) {
        Ok(())
    } else {
        Err(Problem::range(
            p,
            tuple(&x),
            format!("coordinates must be finite numbers within ±{} sigma", num(MAX_SHAPE_COORDINATE)),
        ))
    }
}

fn length(p: FieldPath, x: f64, what: &str) -> Check {
    if x.is_finite() && x > 0.0 && x <= MAX_SHAPE_COORDINATE {
        Ok(())
    } else {
        Err(Problem::range(p, num(x), format!("{what} must be in (0, {}] sigma", num(MAX_SHAPE_COORDINATE))))
    }
}

fn points(p: FieldPath, pts: &[[f64; 2]], min: usize, max: usize, what: &str) -> Check {
    if pts.len() < min || pts.len() > max {
        return Err(Problem::invalid(
            p,
            format!("a {what} needs between {min} and {max} points, this one has {}", pts.len()),
        ));
    }
    for (j, &x) in pts.iter().enumerate() {
        point(p.clone().index(j), x)?;
    }
    Ok(())
}

/// Twice the signed area of a closed polygon (shoelace).
fn twice_area(pts: &[[f64; 2]]) -> f64 {
    let n = pts.len();
    (0..n)
        .map(|i| {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum()
}

/// Checks one shape at path `p` (sizes and coordinates, then its place against the tank).
pub(crate) fn check_shape(p: &FieldPath, shape: &Shape, sim_box: &SimBox) -> Check {
    match shape {
        Shape::Circle { centre, radius } => {
            point(p.clone().field("centre"), *centre)?;
            length(p.clone().field("radius"), *radius, "the radius")?;
        }
        Shape::Rectangle { centre, half_size, angle_deg } => {
            point(p.clone().field("centre"), *centre)?;
            for (k, &h) in half_size.iter().enumerate() {
                length(p.clone().field("half_size").index(k), h, "each half size")?;
            }
            if !(angle_deg.is_finite() && angle_deg.abs() <= 360.0) {
                return Err(Problem::range(
                    p.clone().field("angle_deg"),
                    num(*angle_deg),
                    "allowed range is [-360, 360] degrees",
                ));
            }
        }
        Shape::Segment { a, b, thickness } => {
            point(p.clone().field("a"), *a)?;
            point(p.clone().field("b"), *b)?;
            length(p.clone().field("thickness"), *thickness, "the thickness")?;
        }
        Shape::Polygon { points: pts } => {
            points(p.clone().field("points"), pts, 3, MAX_POLYGON_POINTS, "polygon")?;
            let (lo, hi) = shape.bounds();
            let scale = (hi[0] - lo[0]).max(hi[1] - lo[1]);
            if twice_area(pts).abs() <= 1e-9 * scale * scale {
                return Err(Problem::invalid(
                    p.clone().field("points"),
                    "the points enclose no area (they lie on one line or repeat): a polygon needs at least three \
                     points not on a line",
                ));
            }
        }
        Shape::Stroke { points: pts, radius } => {
            points(p.clone().field("points"), pts, 1, MAX_STROKE_POINTS, "stroke")?;
            length(p.clone().field("radius"), *radius, "the radius")?;
        }
    }
    let len = sim_box.length();
    let (lo, hi) = shape.bounds();
    let outside = (0..2).any(|k| hi[k] < sim_box.lo[k] || lo[k] > sim_box.lo[k] + len[k]);
    if outside {
        return Err(Problem::invalid(
            p.clone(),
            format!(
                "the {} lies entirely outside the tank: it spans x {} to {}, y {} to {}, but the tank's x-y face is \
                 [0, {}] x [0, {}] sigma; move it inside (shapes partly outside are fine)",
                shape.kind(),
                num(lo[0]),
                num(hi[0]),
                num(lo[1]),
                num(hi[1]),
                num(len[0]),
                num(len[1])
            ),
        ));
    }
    Ok(())
}

/// Checks every obstacle of a scene.
pub(crate) fn check_obstacles(shapes: &[Shape], sim_box: &SimBox) -> Check {
    let p = FieldPath::fields(&["obstacles"]);
    if shapes.len() > MAX_OBSTACLES {
        return Err(Problem::invalid(
            p,
            format!("{} shapes, more than the {MAX_OBSTACLES} a scene may hold", shapes.len()),
        ));
    }
    for (i, shape) in shapes.iter().enumerate() {
        check_shape(&p.clone().index(i), shape, sim_box)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tank() -> SimBox {
        SimBox::new([60.0, 40.0, 6.0], [false, false, true])
    }

    #[test]
    fn degenerate_and_outside_shapes_are_refused() {
        let flat = Shape::Polygon { points: vec![[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]] };
        assert!(check_shape(&FieldPath::root(), &flat, &tank()).is_err());
        let far = Shape::Circle { centre: [100.0, 10.0], radius: 3.0 };
        assert!(check_shape(&FieldPath::root(), &far, &tank()).is_err());
        let partly = Shape::Circle { centre: [61.0, 10.0], radius: 3.0 };
        assert!(check_shape(&FieldPath::root(), &partly, &tank()).is_ok());
        let dot = Shape::Stroke { points: vec![[5.0, 5.0]], radius: 1.0 };
        assert!(check_shape(&FieldPath::root(), &dot, &tank()).is_ok());
    }
}
