//! Surface friction (`physics::friction`): no-slip walls. A channel driven along x with
//! friction reaches a steady, curved (Poiseuille) profile, where smooth walls let it
//! accelerate as a plug; friction alone holds the fluid by the walls at the target
//! temperature and stops a uniform stream; CUDA follows the CPU's trajectory (same Philox
//! numbers; skipped without a device).

mod common;

use std::sync::Arc;

use argon_sandbox::physics::friction::SurfaceFriction;
use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{Algorithm, SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomState, Backend, Snapshot};
use common::jiggled_fluid;

const FRICTION: SurfaceFriction = SurfaceFriction { damp: 0.5, range: 1.5 };

/// A channel periodic in x and z with walls in y, at density 0.8.
fn channel(cells: [usize; 3], seed: u64) -> (SimBox, AtomState) {
    jiggled_fluid(cells, [false, true, false], 0.1, &[], seed)
}

fn params(thermostat: Thermostat, drive: f64, friction: bool) -> SimParams {
    SimParams {
        thermostat,
        drive,
        temperature: 1.0,
        surface_friction: friction.then_some(FRICTION),
        precision: Precision::Double,
        algorithm: Algorithm::Neighbors,
        telemetry_every: 50,
        seed: 7,
        ..SimParams::default()
    }
}

fn mean_vx(s: &Snapshot) -> f64 {
    s.atoms.velocities.iter().map(|v| v[0]).sum::<f64>() / s.atoms.len() as f64
}

/// The mean vx over snapshots taken every `every` steps for `steps` steps.
fn run_mean_vx(sim: &mut CpuBackend, steps: u64, every: u64, out: &mut Vec<Snapshot>) -> f64 {
    let mut sum = 0.0;
    for _ in 0..steps / every {
        sim.advance(every).unwrap();
        let s = sim.snapshot().unwrap();
        sum += mean_vx(&s);
        out.push(s);
    }
    sum / (steps / every) as f64
}

/// Driven along x (CSVR relative to the flow, so the thermostat does not brake it): with
/// friction the mean flow levels off and the profile across y is curved (faster in the
/// middle than by the walls); with smooth walls the same run keeps accelerating.
#[test]
fn driven_channel_reaches_a_steady_curved_profile_only_with_friction() {
    let (b, atoms) = channel([10, 7, 8], 3);
    let n = atoms.len();
    assert!((2000..4000).contains(&n), "{n} atoms");
    let csvr = Thermostat::Csvr { tau: 1.0, relative_to_flow: true };
    let drive = 0.05;
    let mut growth = [0.0; 2];
    for (case, friction) in [true, false].into_iter().enumerate() {
        let mut sim = CpuBackend::new(b, params(csvr, drive, friction), &atoms, None).unwrap();
        // 60 tau to settle (the viscous time across the channel is about 8 tau), then two
        // windows of 10 tau.
        sim.advance(12000).unwrap();
        let mut snaps = Vec::new();
        let w1 = run_mean_vx(&mut sim, 2000, 100, &mut snaps);
        let w2 = run_mean_vx(&mut sim, 2000, 100, &mut snaps);
        growth[case] = w2 - w1;
        eprintln!("friction {friction}: mean vx {w1:.4} then {w2:.4} (a plug would gain {:.3})", drive * 10.0);
        if friction {
            // The profile over the last window: the middle third against the layers within
            // the friction range of either wall.
            let (lo, hi) = (b.lo[1], b.hi[1]);
            let h = hi - lo;
            let (mut mid, mut wall) = (Vec::new(), Vec::new());
            for s in &snaps[snaps.len() / 2..] {
                let (mut m, mut w) = ((0.0, 0), (0.0, 0));
                for (p, v) in s.atoms.positions.iter().zip(&s.atoms.velocities) {
                    let y = p[1] - lo;
                    if (h / 3.0..2.0 * h / 3.0).contains(&y) {
                        m = (m.0 + v[0], m.1 + 1);
                    } else if y < FRICTION.range + 0.5 || y > h - FRICTION.range - 0.5 {
                        w = (w.0 + v[0], w.1 + 1);
                    }
                }
                mid.push(m.0 / m.1 as f64);
                wall.push(w.0 / w.1 as f64);
            }
            let diff: Vec<f64> = mid.iter().zip(&wall).map(|(a, b)| a - b).collect();
            let (d, sem) = common::block_mean_sem(&diff, 5);
            eprintln!(
                "middle {:.4}, by the walls {:.4}: difference {d:.4} +- {sem:.4}",
                common::mean(&mid),
                common::mean(&wall)
            );
            assert!(d > 0.1 && d > 6.0 * sem, "no curved profile: middle - walls = {d} +- {sem}");
            assert!(w2 > 0.05, "the drive should make a flow: {w2}");
        }
    }
    // Smooth walls: the plug gains drive * 10 tau = 0.5 between the windows.
    assert!(growth[1] > 0.4, "without friction the flow should keep accelerating: {}", growth[1]);
    assert!(growth[0].abs() < 0.05, "with friction the flow should be steady: gained {}", growth[0]);
}

/// Kinetic temperature (sum m v^2 / 3N) of the atoms within `range` of a y wall.
fn near_wall_temperature(s: &Snapshot, b: &SimBox, range: f64) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    for (p, v) in s.atoms.positions.iter().zip(&s.atoms.velocities) {
        if p[1] - b.lo[1] < range || b.hi[1] - p[1] < range {
            sum += v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            count += 1;
        }
    }
    sum / (3.0 * count as f64)
}

/// With no thermostat and no drive, the friction alone brings the fluid by the walls to the
/// target temperature (the start is hotter: T = 1.2 plus the lattice's melting), and stops a
/// uniform stream, which smooth walls leave untouched.
#[test]
fn friction_alone_holds_the_walls_at_t_and_stops_a_stream() {
    let (b, atoms) = channel([8, 6, 8], 5);
    let target = 0.9;
    let mut p = params(Thermostat::Nve, 0.0, true);
    p.temperature = target;
    let mut sim = CpuBackend::new(b, p.clone(), &atoms, None).unwrap();
    sim.advance(10000).unwrap();
    let (mut temps, mut whole) = (Vec::new(), Vec::new());
    for _ in 0..40 {
        sim.advance(100).unwrap();
        let s = sim.snapshot().unwrap();
        temps.push(near_wall_temperature(&s, &b, FRICTION.range));
        whole.push(near_wall_temperature(&s, &b, f64::INFINITY));
    }
    let (t, sem) = common::block_mean_sem(&temps, 8);
    eprintln!("near-wall temperature {t:.4} +- {sem:.4}, whole fluid {:.4} (target {target})", common::mean(&whole));
    assert!((t - target).abs() < (4.0 * sem).max(0.03), "near-wall T {t} +- {sem}, target {target}");

    // A uniform stream U along x.
    let u = 1.0;
    let mut streaming = atoms.clone();
    for v in &mut streaming.velocities {
        v[0] += u;
    }
    for friction in [true, false] {
        let p = params(Thermostat::Nve, 0.0, friction);
        let mut sim = CpuBackend::new(b, p, &streaming, None).unwrap();
        let start = mean_vx(&sim.snapshot().unwrap());
        sim.advance(4000).unwrap();
        let end = mean_vx(&sim.snapshot().unwrap());
        eprintln!("friction {friction}: stream {start:.4} -> {end:.4} after 20 tau");
        if friction {
            assert!(end.abs() < 0.2 * u, "the walls should stop the stream: {end}");
        } else {
            assert!((end - start).abs() < 1e-9, "smooth walls take no x momentum: {start} -> {end}");
        }
    }
}

/// The CUDA backend follows the CPU's trajectory with friction on (walls and a cylinder, a
/// drive, double precision): the same Philox numbers, so positions stay close.
#[test]
fn cuda_follows_the_cpu_with_friction() {
    if !common::gpu() {
        return;
    }
    let circle = vec![Shape::Circle { centre: [6.0, 6.0], radius: 1.5 }];
    let (b, atoms) = jiggled_fluid([8, 6, 4], [false, true, false], 0.1, &circle, 9);
    let field = ObstacleField::bake(&circle, &b, 0.1).map(Arc::new);
    let mut p = params(Thermostat::Csvr { tau: 0.5, relative_to_flow: true }, 0.1, true);
    p.telemetry_every = 20;
    for algorithm in [Algorithm::Neighbors, Algorithm::AllPairsTiled] {
        p.algorithm = algorithm;
        let mut c = CpuBackend::new(b, p.clone(), &atoms, field.clone()).unwrap();
        let mut g = argon_sandbox::sim::cuda::CudaBackend::new(b, p.clone(), &atoms, field.clone()).unwrap();
        c.advance(300).unwrap();
        g.advance(300).unwrap();
        let (sc, sg) = (c.snapshot().unwrap(), g.snapshot().unwrap());
        let gap = sc
            .atoms
            .positions
            .iter()
            .zip(&sg.atoms.positions)
            .map(|(x, y)| (0..3).map(|k| b.min_image(*x, *y)[k].abs()).fold(0.0, f64::max))
            .fold(0.0, f64::max);
        eprintln!("{algorithm:?}: largest position gap after 300 steps {gap:.3e} sigma");
        assert!(gap < 1e-6, "{algorithm:?}: CPU and CUDA trajectories part by {gap}");
        let (rc, rg) = (c.drain_telemetry(), g.drain_telemetry());
        let (fc, fg) = (&rc.last().unwrap().body_forces, &rg.last().unwrap().body_forces);
        for (x, y) in fc.iter().zip(fg) {
            for k in 0..3 {
                assert!(
                    (x.force[k] - y.force[k]).abs() < 1e-6 * (1.0 + x.force[k].abs()),
                    "{}: cpu {:?} cuda {:?}",
                    x.body.name(),
                    x.force,
                    y.force
                );
            }
        }
    }
}
