//! The force of the fluid on each obstacle and wall (`Telemetry::body_forces`): against an
//! independent per-atom sum from `physics::wall` and `physics::obstacles`; Newton's third law
//! through the momentum balance of velocity Verlet (closed tank, and a channel driven past a
//! cylinder, with smooth and with no-slip surfaces); CUDA against the CPU (skipped without a
//! device).

mod common;

use std::sync::Arc;

use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{Algorithm, SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::physics::wall::Wall93;
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::bodies::Body;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomState, Backend, Telemetry};
use common::jiggled_fluid;

fn shapes() -> Vec<Shape> {
    vec![
        Shape::Circle { centre: [4.0, 5.0], radius: 1.6 },
        Shape::Rectangle { centre: [9.0, 6.0], half_size: [1.0, 0.7], angle_deg: 20.0 },
    ]
}

struct Tank {
    b: SimBox,
    atoms: AtomState,
    params: SimParams,
    field: Option<Arc<ObstacleField>>,
    shapes: Vec<Shape>,
}

/// A closed tank (walls on every axis) with two obstacles, NVE in double precision.
fn closed_tank() -> Tank {
    let shapes = shapes();
    let (b, atoms) = jiggled_fluid([8, 7, 4], [true; 3], 0.1, &shapes, 11);
    let params = SimParams {
        thermostat: Thermostat::Nve,
        precision: Precision::Double,
        algorithm: Algorithm::Neighbors,
        telemetry_every: 1,
        ..SimParams::default()
    };
    let field = ObstacleField::bake(&shapes, &b, 0.1).map(Arc::new);
    Tank { b, atoms, params, field, shapes }
}

fn cpu(t: &Tank) -> CpuBackend {
    CpuBackend::new(t.b, t.params.clone(), &t.atoms, t.field.clone()).unwrap()
}

fn scale(records: &[Telemetry]) -> f64 {
    records.iter().flat_map(|t| t.body_forces.iter().flat_map(|b| b.force)).fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The body forces equal minus the per-atom wall and obstacle forces summed here from
/// `physics::wall` and `physics::obstacles`, each obstacle force given to the shape whose
/// exact signed distance is least.
#[test]
fn body_forces_are_minus_the_independent_per_atom_sum() {
    let t = closed_tank();
    let mut sim = cpu(&t);
    // Long enough for the fluid to reach the obstacles (the lattice starts clear of them).
    sim.advance(100).unwrap();
    let rec = sim.drain_telemetry().pop().unwrap();
    let state = sim.copy_state().unwrap();
    let names: Vec<String> = rec.body_forces.iter().map(|b| b.body.name()).collect();
    assert_eq!(
        names,
        ["circle 1", "rectangle 2", "wall x-lo", "wall x-hi", "wall y-lo", "wall y-hi", "wall z-lo", "wall z-hi"]
    );
    let wall = Wall93::<f64>::new(&t.params.wall);
    let obstacle = Wall93::<f64>::new(&t.params.obstacle);
    let field = t.field.as_deref().unwrap();
    let mut expect = vec![[0.0f64; 3]; 8];
    for p in &state.atoms.positions {
        for k in 0..3 {
            let (fl, _) = wall.eval(p[k] - t.b.lo[k]);
            let (fh, _) = wall.eval(t.b.hi[k] - p[k]);
            expect[2 + 2 * k][k] -= fl;
            expect[3 + 2 * k][k] += fh;
        }
        let s = field.sample(p[0], p[1]);
        let (fo, _) = obstacle.eval(s.distance);
        if fo != 0.0 {
            let d: Vec<f64> = t.shapes.iter().map(|sh| sh.signed_distance([p[0], p[1]])).collect();
            let nearest = if d[0] <= d[1] { 0 } else { 1 };
            expect[nearest][0] -= fo * s.gradient[0];
            expect[nearest][1] -= fo * s.gradient[1];
        }
    }
    let big = expect.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(big > 10.0, "the fluid should press on the walls: {expect:?}");
    // Both obstacles are touched by the fluid.
    assert!(expect[0][0].abs() + expect[0][1].abs() > 1.0 && expect[1][0].abs() + expect[1][1].abs() > 1.0);
    for (b, e) in rec.body_forces.iter().zip(&expect) {
        for k in 0..3 {
            assert!((b.force[k] - e[k]).abs() <= 1e-10 * big, "{}: {:?} vs {e:?}", b.body.name(), b.force);
        }
    }
}

/// Velocity Verlet moves the total momentum by dt (F(n) + F(n + 1)) / 2 per step, and with no
/// drive or gravity the only net force is the walls' and obstacles': minus the body forces.
/// Records every step give F(n) exactly, so the balance holds to round-off.
#[test]
fn closed_tank_momentum_changes_by_minus_the_body_forces() {
    let t = closed_tank();
    let mut sim = cpu(&t);
    sim.advance(300).unwrap();
    let rec = sim.drain_telemetry();
    assert_eq!(rec.len(), 300);
    let on_atoms =
        |r: &Telemetry| -> [f64; 3] { std::array::from_fn(|k| -r.body_forces.iter().map(|b| b.force[k]).sum::<f64>()) };
    let dt = t.params.dt;
    let mut predicted = [0.0; 3];
    for w in rec.windows(2) {
        let (a, b) = (on_atoms(&w[0]), on_atoms(&w[1]));
        for k in 0..3 {
            predicted[k] += 0.5 * dt * (a[k] + b[k]);
        }
    }
    let first = rec.first().unwrap().momentum;
    let last = rec.last().unwrap().momentum;
    let impulse = dt * scale(&rec) * rec.len() as f64;
    for k in 0..3 {
        let moved = last[k] - first[k];
        assert!(
            (moved - predicted[k]).abs() < 1e-9 * impulse,
            "axis {k}: momentum moved {moved}, forces {}",
            predicted[k]
        );
    }
    // The walls are pushed outward: opposite faces carry opposite forces.
    let mean = |name: &str, k: usize| {
        rec.iter().map(|r| r.body_forces.iter().find(|b| b.body.name() == name).unwrap().force[k]).sum::<f64>()
            / rec.len() as f64
    };
    let (lo, hi) = (mean("wall x-lo", 0), mean("wall x-hi", 0));
    assert!(lo < 0.0 && hi > 0.0, "x walls: {lo} {hi}");
}

/// A channel (periodic x and z, walls in y) driven along +x past a cylinder, NVE from rest:
/// the momentum along x grows by N m a t minus the time integral of the drag (smooth walls
/// take no x force); a sign or factor error in the drag fails it. Once the flow has built up
/// (the last half of 20 tau) the drag is positive and balances the drive N m a to within the
/// flow's remaining acceleration (the run gives 0.94 +- 0.05).
#[test]
fn driven_channel_balances_drive_drag_and_momentum() {
    let circle = vec![Shape::Circle { centre: [10.0, 6.0], radius: 2.0 }];
    let (b, atoms) = jiggled_fluid([12, 6, 3], [false, true, false], 0.1, &circle, 5);
    let drive = 0.2;
    let every = 10u64;
    let params = SimParams {
        thermostat: Thermostat::Nve,
        precision: Precision::Double,
        drive,
        telemetry_every: every,
        ..SimParams::default()
    };
    let field = ObstacleField::bake(&circle, &b, 0.1).map(Arc::new);
    let n = atoms.len() as f64;
    let mut sim = CpuBackend::new(b, params.clone(), &atoms, field).unwrap();
    let steps = 4000u64;
    sim.advance(steps).unwrap();
    let rec = sim.drain_telemetry();
    assert_eq!(rec.len() as u64, steps / every);
    let dt = params.dt;
    let block = dt * every as f64;
    let drag: Vec<f64> = rec.iter().map(|r| r.body_forces[0].force[0]).collect();
    let walls_x: f64 = rec.iter().flat_map(|r| r.body_forces[1..].iter().map(|f| f.force[0].abs())).sum();
    assert_eq!(walls_x, 0.0, "smooth y walls take no x force");
    // x: P(end) - P(first record) = sum over the steps between of (N m a - drag) dt, up to the
    // half steps at either end (the records average blocks of `every` steps).
    let drive_impulse = n * drive * block * (rec.len() - 1) as f64;
    let drag_impulse: f64 = drag[1..].iter().map(|d| d * block).sum();
    let moved = rec.last().unwrap().momentum[0] - rec[0].momentum[0];
    let predicted = drive_impulse - drag_impulse;
    let ends = 0.5 * dt * (drag[0].abs() + drag.last().unwrap().abs()) + 0.5 * block * 200.0;
    eprintln!(
        "N {n}, drive impulse {drive_impulse:.2}, drag impulse {drag_impulse:.2}, momentum moved {moved:.2} (predicted {predicted:.2})"
    );
    assert!(drag_impulse > 0.1 * drive_impulse, "the cylinder should hold back the flow: {drag_impulse}");
    assert!((moved - predicted).abs() < 0.002 * drive_impulse + ends, "x: moved {moved}, predicted {predicted}");
    // Drag over the last half, by block averages: positive along the drive.
    let late = &drag[drag.len() / 2..];
    let (m, sem) = common::block_mean_sem(late, 10);
    eprintln!("late drag {m:.2} +- {sem:.2} (drive on all atoms {:.2})", n * drive);
    assert!(m > 3.0 * sem && m > 0.0, "drag {m} +- {sem}");
    // Near steady state by then (20 tau): the drag holds back the whole drive N m a (the
    // flow still accelerates a little, so a bit less).
    let ratio = m / (n * drive);
    assert!((0.75..1.1).contains(&ratio), "late drag / drive {ratio}");
}

/// The same channel with no-slip walls and cylinder (surface friction): the friction's drag
/// counts in the body forces, so the momentum along x still moves by exactly the drive's
/// impulse minus the bodies' (up to the record averaging at the ends), the walls now take an
/// x force, and at steady state walls and cylinder together hold back the whole drive N m a
/// within statistical error.
#[test]
fn no_slip_channel_walls_and_cylinder_balance_the_drive() {
    let circle = vec![Shape::Circle { centre: [10.0, 6.0], radius: 2.0 }];
    let (b, atoms) = jiggled_fluid([12, 6, 3], [false, true, false], 0.1, &circle, 5);
    let drive = 0.2;
    let every = 10u64;
    let params = SimParams {
        // Friction is the only thermostat: it takes out the heat the drive puts in.
        thermostat: Thermostat::Nve,
        precision: Precision::Double,
        drive,
        surface_friction: Some(argon_sandbox::physics::friction::SurfaceFriction { damp: 0.5, range: 1.5 }),
        telemetry_every: every,
        ..SimParams::default()
    };
    let field = ObstacleField::bake(&circle, &b, 0.1).map(Arc::new);
    let n = atoms.len() as f64;
    let mut sim = CpuBackend::new(b, params.clone(), &atoms, field).unwrap();
    let steps = 6000u64;
    sim.advance(steps).unwrap();
    let rec = sim.drain_telemetry();
    let dt = params.dt;
    let block = dt * every as f64;
    let total: Vec<f64> = rec.iter().map(|r| r.body_forces.iter().map(|f| f.force[0]).sum()).collect();
    let walls: Vec<f64> = rec.iter().map(|r| r.body_forces[1..].iter().map(|f| f.force[0]).sum()).collect();
    let drive_impulse = n * drive * block * (rec.len() - 1) as f64;
    let body_impulse: f64 = total[1..].iter().map(|d| d * block).sum();
    let moved = rec.last().unwrap().momentum[0] - rec[0].momentum[0];
    let predicted = drive_impulse - body_impulse;
    let ends = 0.5 * dt * (total[0].abs() + total.last().unwrap().abs()) + 0.5 * block * 400.0;
    eprintln!("drive impulse {drive_impulse:.2}, body impulse {body_impulse:.2}, moved {moved:.2} ({predicted:.2})");
    assert!((moved - predicted).abs() < 0.002 * drive_impulse + ends, "x: moved {moved}, predicted {predicted}");
    // Steady state over the last half: walls and cylinder together take the whole drive.
    let late = &total[total.len() / 2..];
    let (m, sem) = common::block_mean_sem(late, 10);
    let (w, wsem) = common::block_mean_sem(&walls[walls.len() / 2..], 10);
    eprintln!("late force on the bodies {m:.2} +- {sem:.2} (walls {w:.2} +- {wsem:.2}), drive {:.2}", n * drive);
    assert!(w > 5.0 * wsem, "no-slip walls should take an x force: {w} +- {wsem}");
    assert!((m - n * drive).abs() < 4.0 * sem + 0.03 * n * drive, "bodies {m} +- {sem} vs drive {}", n * drive);
}

/// The CUDA backend's body forces from the first steps agree with the CPU's in double.
#[test]
fn cuda_body_forces_match_the_cpu() {
    if !common::gpu() {
        return;
    }
    let mut t = closed_tank();
    t.params.telemetry_every = 5;
    t.params.drive = 0.05;
    for algorithm in [Algorithm::Neighbors, Algorithm::Cells, Algorithm::AllPairsTiled] {
        t.params.algorithm = algorithm;
        let mut c = cpu(&t);
        let mut g =
            argon_sandbox::sim::cuda::CudaBackend::new(t.b, t.params.clone(), &t.atoms, t.field.clone()).unwrap();
        c.advance(20).unwrap();
        g.advance(20).unwrap();
        let (rc, rg) = (c.drain_telemetry(), g.drain_telemetry());
        assert_eq!(rc.len(), 4);
        assert_eq!(rg.len(), 4);
        let s = scale(&rc);
        for (a, b) in rc.iter().zip(&rg) {
            assert_eq!(a.body_forces.len(), b.body_forces.len());
            for (x, y) in a.body_forces.iter().zip(&b.body_forces) {
                assert_eq!(x.body, y.body);
                for k in 0..3 {
                    assert!(
                        (x.force[k] - y.force[k]).abs() <= 1e-9 * s,
                        "{algorithm:?} step {} {}: cpu {:?} cuda {:?}",
                        a.step,
                        x.body.name(),
                        x.force,
                        y.force
                    );
                }
            }
        }
        assert!(matches!(rc[0].body_forces[0].body, Body::Shape { index: 0, .. }));
    }
}

fn channel_scene(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("channel.ron");
    let text = "(version: 1, box: (size: (20.0, 12.0, 5.4), boundaries: (Periodic, Wall, Periodic)),
        temperature_k: 119.8, thermostat: Csvr(tau: 1.0), forces: (gravity: 0.0, drive: 0.05),
        atoms: [Lattice(kind: Fcc, density: 0.7)], obstacles: [Circle(centre: (8.0, 6.0), radius: 2.0)], seed: 3)";
    std::fs::write(&path, text).unwrap();
    path
}

fn run_cli(args: &[&str]) {
    let o = std::process::Command::new(
        std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string()),
    )
    .args(args)
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn csv(path: &std::path::Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(str::to_string).collect();
    let rows = lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
    (header, rows)
}

/// `run --forces FILE` writes one row per telemetry record; `run --fields DIR` writes
/// `forces.csv` (one row per field window) and `forces_series.csv` into the folder.
#[test]
fn run_writes_the_force_csvs() {
    let dir = common::temp_dir("body-forces-cli");
    let scene = channel_scene(&dir);
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let forces = dir.join("forces.csv");
    run_cli(&["run", &s(&scene), "--steps", "400", "--backend", "cpu", "--quiet", "--forces", &s(&forces)]);
    let (header, rows) = csv(&forces);
    let want: Vec<String> = ["time_tau", "step"]
        .into_iter()
        .map(str::to_string)
        .chain(
            ["circle_1", "wall_y_lo", "wall_y_hi"]
                .iter()
                .flat_map(|b| ["fx", "fy", "fz"].iter().map(move |a| format!("{b}_{a}_eps_per_sigma"))),
        )
        .collect();
    assert_eq!(header, want);
    // telemetry every 100 steps (the default): steps 100 .. 400.
    assert_eq!(rows.iter().map(|r| r[1] as u64).collect::<Vec<_>>(), [100, 200, 300, 400]);
    assert!((rows[3][0] - 2.0).abs() < 1e-9, "time {}", rows[3][0]);
    // The walls are pushed outward along y, the bottom one down, the top one up.
    assert!(rows.iter().all(|r| r[6] < 0.0 && r[9] > 0.0), "{rows:?}");

    let out = dir.join("fields");
    run_cli(&[
        "run",
        &s(&scene),
        "--steps",
        "400",
        "--backend",
        "cpu",
        "--quiet",
        "--fields",
        &s(&out),
        "--field-window",
        "1.0",
    ]);
    let (h_windows, windows) = csv(&out.join("forces.csv"));
    let (h_series, series) = csv(&out.join("forces_series.csv"));
    assert_eq!(h_windows, want);
    assert_eq!(h_series, want);
    assert_eq!(series.len(), 4);
    // Windows of 1 tau = 200 steps: each the mean of its two records.
    assert_eq!(windows.len(), 2);
    for (w, pair) in windows.iter().zip(series.chunks(2)) {
        assert_eq!(w[1], pair[1][1]);
        for c in 2..w.len() {
            let mean = 0.5 * (pair[0][c] + pair[1][c]);
            assert!((w[c] - mean).abs() <= 1e-12 * mean.abs().max(1.0), "column {c}: {} vs {mean}", w[c]);
        }
    }
}
