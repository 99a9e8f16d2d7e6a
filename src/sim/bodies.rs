//! The bodies the fluid pushes on and the force on each: every obstacle shape (in the order
//! baked into the [`ObstacleField`]) and every wall face on a walled axis (x-lo, x-hi, y-lo,
//! y-hi, z-lo, z-hi; with a piston, the piston is the y-hi wall). The force ON a body is minus
//! the sum of the body's one-body forces on the atoms (Newton's third law), in epsilon/sigma.
//!
//! Each atom feels the obstacle force from the nearest surface only; that force is attributed
//! to the shape the surface belongs to ([`crate::physics::obstacles::FieldSample::shape`]).
//!
//! Both backends sum the forces at the end of every step (the force pass at the new positions,
//! the one the second half kick uses) and report, in [`crate::sim::Telemetry::body_forces`],
//! the mean over the steps since the previous telemetry record (the record's own step
//! included). Force passes outside the step loop (measure, forces, the first pass after an
//! edit) are not counted. Owns the body order, names and the host-side running sum; the
//! per-atom terms themselves come from `sim/cpu/external.rs` and `kernels/forces.cu`.

use crate::physics::obstacles::ObstacleField;
use crate::physics::sim_box::SimBox;

/// One body the fluid pushes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Body {
    /// Obstacle shape `index` (0-based, in the order of the scene's shapes) of `kind`
    /// ("circle", "rectangle", ...).
    Shape { index: usize, kind: &'static str },
    /// The wall face at the low (`hi == false`) or high end of `axis` (0 x, 1 y, 2 z).
    Wall { axis: usize, hi: bool },
}

impl Body {
    /// A short name: "circle 1" (shapes numbered from 1), "wall y-lo".
    pub fn name(&self) -> String {
        match self {
            Body::Shape { index, kind } => format!("{kind} {}", index + 1),
            Body::Wall { axis, hi } => format!("wall {}-{}", ["x", "y", "z"][*axis], if *hi { "hi" } else { "lo" }),
        }
    }

    /// The name as a CSV column prefix: spaces and dashes as underscores ("circle_1").
    pub fn column(&self) -> String {
        self.name().replace([' ', '-'], "_")
    }

    pub fn is_wall(&self) -> bool {
        matches!(self, Body::Wall { .. })
    }
}

/// The force on one body (epsilon/sigma), averaged over the steps a telemetry record covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyForce {
    pub body: Body,
    pub force: [f64; 3],
}

/// Where each body's sum sits: shapes first (by index), then the walls on walled axes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BodyLayout {
    pub bodies: Vec<Body>,
    /// Index of the wall body at (axis, hi), when that axis is walled.
    pub wall: [[Option<usize>; 2]; 3],
}

impl BodyLayout {
    /// The bodies of a tank `sim_box` with obstacles `field`.
    pub fn new(sim_box: &SimBox, field: Option<&ObstacleField>) -> BodyLayout {
        let mut bodies: Vec<Body> = field
            .map(|f| f.shape_kinds.iter().enumerate().map(|(index, &kind)| Body::Shape { index, kind }).collect())
            .unwrap_or_default();
        let mut wall = [[None; 2]; 3];
        for (axis, w) in wall.iter_mut().enumerate() {
            if !sim_box.periodic[axis] {
                for (h, slot) in w.iter_mut().enumerate() {
                    *slot = Some(bodies.len());
                    bodies.push(Body::Wall { axis, hi: h == 1 });
                }
            }
        }
        BodyLayout { bodies, wall }
    }

    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Number of shape bodies (they come first).
    pub fn shapes(&self) -> usize {
        self.bodies.iter().filter(|b| !b.is_wall()).count()
    }
}

/// The running sum of the force on each body over the steps since the last record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BodySums {
    pub layout: BodyLayout,
    pub sum: Vec<[f64; 3]>,
    pub steps: u64,
}

impl BodySums {
    /// Zero sums for `layout`.
    pub fn new(layout: BodyLayout) -> BodySums {
        let sum = vec![[0.0; 3]; layout.len()];
        BodySums { layout, sum, steps: 0 }
    }

    /// Adds one step's forces (on the bodies, in layout order).
    pub fn add(&mut self, step: &[[f64; 3]]) {
        for (s, f) in self.sum.iter_mut().zip(step) {
            for k in 0..3 {
                s[k] += f[k];
            }
        }
        self.steps += 1;
    }

    /// The mean force per body over the steps summed (zero when none), and restarts the sums.
    pub fn take(&mut self) -> Vec<BodyForce> {
        let out = mean_forces(&self.layout, &self.sum, self.steps);
        self.sum.iter_mut().for_each(|s| *s = [0.0; 3]);
        self.steps = 0;
        out
    }

    /// Forgets the steps summed so far (after a rollback or restore).
    pub fn clear(&mut self) {
        self.sum.iter_mut().for_each(|s| *s = [0.0; 3]);
        self.steps = 0;
    }
}

/// The mean of `sum` over `steps` steps for every body of `layout`.
pub fn mean_forces(layout: &BodyLayout, sum: &[[f64; 3]], steps: u64) -> Vec<BodyForce> {
    let inv = if steps > 0 { 1.0 / steps as f64 } else { 0.0 };
    layout.bodies.iter().zip(sum).map(|(&body, s)| BodyForce { body, force: s.map(|x| x * inv) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::Shape;

    #[test]
    fn shapes_come_first_then_walls_on_walled_axes() {
        let b = SimBox::new([20.0, 10.0, 5.0], [true, false, false]);
        let shapes = vec![
            Shape::Circle { centre: [5.0, 5.0], radius: 1.0 },
            Shape::Stroke { points: vec![[1.0, 1.0], [2.0, 2.0]], radius: 0.3 },
        ];
        let f = ObstacleField::bake(&shapes, &b, 0.1).unwrap();
        let l = BodyLayout::new(&b, Some(&f));
        let names: Vec<String> = l.bodies.iter().map(Body::name).collect();
        assert_eq!(names, ["circle 1", "stroke 2", "wall y-lo", "wall y-hi", "wall z-lo", "wall z-hi"]);
        assert_eq!(l.wall, [[None, None], [Some(2), Some(3)], [Some(4), Some(5)]]);
        assert_eq!(l.shapes(), 2);
        let mut s = BodySums::new(l);
        s.add(&[[1.0, 2.0, 0.0]; 6]);
        s.add(&[[3.0, 0.0, 0.0]; 6]);
        let m = s.take();
        assert_eq!(m[0].force, [2.0, 1.0, 0.0]);
        assert_eq!(s.steps, 0);
    }
}
