//! Forces are minus the gradient of the energy: central differences of the potential energy
//! against the reported forces, separately for the LJ pairs, the 9-3 walls (repulsive and
//! attractive), the obstacle signed-distance field and the body forces.

mod common;

use std::sync::Arc;

use argon_sandbox::physics::cutoff::Cutoff;
use argon_sandbox::physics::init::gas_positions;
use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{Algorithm, SimParams};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::physics::wall::WallParams;
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomState, Backend};
use common::{at_rest, numeric_force};

/// Compares forces with central differences of the potential energy for every atom.
fn check_gradient(b: SimBox, params: SimParams, atoms: AtomState, shapes: &[Shape], what: &str) {
    let field = ObstacleField::bake(shapes, &b, 0.05).map(Arc::new);
    let mut sim = CpuBackend::new(b, params, &atoms, field).expect("backend");
    let forces = sim.forces().unwrap();
    let base = sim.snapshot().unwrap();
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    let mut checked = 0;
    for i in 0..atoms.len() {
        for k in 0..3 {
            let numeric = numeric_force(&mut sim, &base, i, k, h);
            let f = forces[i][k];
            let err = (numeric - f).abs() / (1.0 + f.abs());
            worst = worst.max(err);
            assert!(err < 2e-5, "{what}: atom {i} axis {k}: force {f} vs -dE/dx {numeric}");
            if f.abs() > 1e-3 {
                checked += 1;
            }
        }
    }
    assert!(checked >= atoms.len() / 2, "{what}: too few non-zero force components to be a test ({checked})");
    eprintln!("{what}: worst relative error {worst:.2e} over {checked} non-zero components");
}

fn params() -> SimParams {
    SimParams { algorithm: Algorithm::AllPairsGlobal, precision: Precision::Double, ..SimParams::default() }
}

#[test]
fn pair_forces() {
    let b = SimBox::new([7.0, 7.5, 8.0], [true; 3]);
    let pos = gas_positions(&b, b.lo, b.hi, 60, 0.95, &[], 5);
    for shift in [true, false] {
        check_gradient(b, SimParams { shift, ..params() }, at_rest(pos.clone()), &[], "LJ pairs");
    }
}

/// Atoms at assorted distances from the walls, including inside the linear cap region.
fn near_walls(b: &SimBox) -> Vec<[f64; 3]> {
    let l = b.length();
    let mut pos = Vec::new();
    for (i, d) in [0.3, 0.55, 0.7, 0.8, 0.95, 1.3, 2.0].iter().enumerate() {
        let t = 2.0 + 2.0 * i as f64;
        pos.push([*d, t, 0.3 * t]);
        pos.push([l[0] - d, t + 0.7, 1.0]);
        pos.push([t * 0.9, *d, 2.0]);
        pos.push([t * 0.9 + 0.4, l[1] - d, 3.0]);
    }
    pos
}

#[test]
fn repulsive_and_attractive_walls() {
    let b = SimBox::new([16.0, 18.0, 6.0], [false, false, true]);
    let pos = near_walls(&b);
    let no_pairs = SimParams { cutoff: Cutoff::Absolute(1.0), ..params() };
    check_gradient(b, no_pairs.clone(), at_rest(pos.clone()), &[], "repulsive wall");
    let sticky = SimParams { wall: WallParams { epsilon: 1.7, sigma: 1.1, cutoff: 2.5 }, ..no_pairs };
    check_gradient(b, sticky, at_rest(pos), &[], "attractive wall");
}

#[test]
fn obstacle_field() {
    let b = SimBox::new([20.0, 20.0, 5.0], [true, false, true]);
    let shapes = vec![
        Shape::Circle { centre: [6.0, 10.0], radius: 2.0 },
        Shape::Rectangle { centre: [14.0, 10.0], half_size: [1.5, 3.0], angle_deg: 25.0 },
    ];
    // Atoms around both shapes at distances from the surface between 0.55 and 0.95 sigma,
    // placed off the grid lines.
    let mut pos = Vec::new();
    for k in 0..12 {
        let a = k as f64 * 0.523 + 0.1;
        let r = 2.0 + 0.55 + 0.035 * k as f64;
        pos.push([6.0 + r * a.cos(), 10.0 + r * a.sin(), 1.0 + 0.2 * k as f64]);
    }
    for k in 0..8 {
        let y = 7.6 + 0.61 * k as f64;
        let d = 0.55 + 0.05 * k as f64;
        // Outside the rotated rectangle's long sides: offset along its local x axis.
        let (s, c) = 25f64.to_radians().sin_cos();
        let along = y - 10.0;
        let (lx, ly) = (1.5 + d, along);
        pos.push([14.0 + c * lx - s * ly, 10.0 + s * lx + c * ly, 2.5]);
    }
    let p = SimParams { cutoff: Cutoff::Absolute(1.0), ..params() };
    check_gradient(b, p, at_rest(pos), &shapes, "obstacles");
}

#[test]
fn body_forces() {
    let b = SimBox::new([12.0, 12.0, 12.0], [false, false, true]);
    let pos = gas_positions(&b, [2.0, 2.0, 0.0], [10.0, 10.0, 12.0], 40, 1.0, &[], 9);
    let p = SimParams { gravity: 0.7, drive: 0.3, ..params() };
    check_gradient(b, p, at_rest(pos), &[], "gravity and drive");
}

/// Every test above again under each other CPU path (AVX2, baseline, no cluster lists):
/// see `common::cpu_paths`.
#[test]
fn all_of_these_under_every_cpu_path() {
    common::cpu_paths::rerun_under_other_cpu_paths("all_of_these_under_every_cpu_path");
}
