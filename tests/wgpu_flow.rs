//! The wind tunnel on the wgpu backend against the CPU backend, on whatever adapter wgpu finds
//! (CI: Mesa's lavapipe). Without an adapter each test prints `skipped: no wgpu adapter` and
//! passes, unless ARGON_REQUIRE_RENDER=1 makes that a failure.
//!
//! From the same state: forces with obstacles (every primitive kind, a periodic image across
//! the box edge) and surface friction within 1e-5 of the CPU's in double, with the obstacles'
//! energy and virial, also with the tunnel's start spin moving the surfaces (and the plain
//! friction's bits once it is over); the forces on the obstacles and wall faces per telemetry record; the
//! tunnel's zone (momentum and heat per record as the CPU's, and the stream's velocity and
//! temperature in the zone within statistical errors); surface friction slowing the fluid
//! near the surfaces as much as on the CPU; thermostats relative to the flow with the thermal
//! readout as the CPU's; flow fields of a quiescent box and of a short tunnel run; identical
//! reruns; `set_obstacles`' caught-atom policies; and the twin eddies scene (scaled down)
//! running 200 steps.

mod common;

use std::sync::Arc;

use argon_sandbox::flow::{FieldSpec, Fields};
use argon_sandbox::physics::friction::SurfaceFriction;
use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{Algorithm, SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::physics::tunnel::{StartSpin, Tunnel};
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::gpu::GpuBackend;
use argon_sandbox::sim::{AtomState, Backend, Snapshot, Telemetry};
use common::jiggled_fluid;

use common::wgpu_adapter as adapter;

fn with(p: &SimParams, precision: Precision) -> SimParams {
    SimParams { precision, algorithm: Algorithm::Neighbors, ..p.clone() }
}

/// Largest |F_gpu - F_cpu| over the largest |F_cpu|.
fn force_error(got: &[[f64; 3]], want: &[[f64; 3]]) -> f64 {
    let norm = |f: &[f64; 3]| (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
    let scale = want.iter().map(norm).fold(0.0, f64::max);
    got.iter().zip(want).map(|(a, b)| norm(&[a[0] - b[0], a[1] - b[1], a[2] - b[2]])).fold(0.0, f64::max) / scale
}

/// Every primitive kind: a circle across the periodic x edge (its image on the other side
/// too), a rotated rectangle, a concave polygon and a two-segment stroke.
fn shapes() -> Vec<Shape> {
    vec![
        Shape::Circle { centre: [0.5, 4.0], radius: 1.6 },
        Shape::Rectangle { centre: [6.5, 4.0], half_size: [1.4, 0.7], angle_deg: 30.0 },
        Shape::Polygon { points: vec![[9.5, 7.5], [13.0, 7.0], [12.0, 10.0], [11.0, 8.6]] },
        Shape::Stroke { points: vec![[3.0, 9.5], [5.0, 11.0], [7.0, 9.8]], radius: 0.4 },
    ]
}

/// A tank periodic in x and y with walls in z and the shapes of [`shapes`], about 1,700 atoms.
fn tank() -> (SimBox, AtomState, Arc<ObstacleField>) {
    let shapes = shapes();
    let (b, mut atoms) = jiggled_fluid([9, 8, 4], [false, false, true], 0.1, &shapes, 21);
    let field = Arc::new(ObstacleField::bake(&shapes, &b, 0.1).unwrap());
    // Also clear the circle's periodic image on the far side of the box.
    let keep: Vec<bool> = atoms.positions.iter().map(|p| field.sample(p[0], p[1]).distance > 0.9).collect();
    let pick = |v: &[[f64; 3]]| v.iter().zip(&keep).filter(|(_, k)| **k).map(|(x, _)| *x).collect::<Vec<_>>();
    atoms = AtomState {
        positions: pick(&atoms.positions),
        velocities: pick(&atoms.velocities),
        types: vec![0; keep.iter().filter(|k| **k).count()],
        ..Default::default()
    };
    (b, atoms, field)
}

fn friction() -> Option<SurfaceFriction> {
    Some(SurfaceFriction { damp: 0.5, range: 1.5 })
}

/// The tank after 30 CPU steps under a drive with friction on: atoms pressed against every
/// surface and moving past them.
fn pressed() -> (Snapshot, SimParams, Arc<ObstacleField>) {
    let (b, atoms, field) = tank();
    let p = SimParams { drive: 0.5, surface_friction: friction(), ..SimParams::default() };
    let mut cpu = CpuBackend::new(b, with(&p, Precision::Double), &atoms, Some(field.clone())).unwrap();
    cpu.advance(30).unwrap();
    (cpu.snapshot().unwrap(), p, field)
}

fn gpu(s: &Snapshot, p: &SimParams, field: Option<Arc<ObstacleField>>) -> GpuBackend {
    let mut g = GpuBackend::new(s.sim_box, with(p, Precision::Single), &s.atoms, field).unwrap();
    g.restore(s).unwrap();
    g
}

fn cpu(s: &Snapshot, p: &SimParams, precision: Precision, field: Option<Arc<ObstacleField>>) -> CpuBackend {
    let mut c = CpuBackend::new(s.sim_box, with(p, precision), &s.atoms, field).unwrap();
    c.restore(s).unwrap();
    c
}

/// Forces with obstacles and surface friction within 1e-5 of the largest force of the CPU's
/// in double, as the pair forces are (tests/wgpu_backend.rs). The bound: f32 carries 6e-8
/// relative per operation; the largest error comes from the 9-3 walls' d^-10, ten times the
/// relative error of the distance, a few ulps (2e-7) with the coordinates held as (hi, lo)
/// pairs, and from the friction's normal numbers (f32 Box-Muller, 1e-6 relative): at most
/// about 2e-6, a factor 5 below the bound. The obstacles' energy and virial (in the external
/// terms) within 1e-5 relative likewise.
#[test]
fn obstacle_and_friction_forces_match_the_cpu() {
    if !adapter() {
        return;
    }
    let (s, p, field) = pressed();
    for fr in [None, friction()] {
        let p = SimParams { surface_friction: fr, ..p.clone() };
        let mut c = cpu(&s, &p, Precision::Double, Some(field.clone()));
        let want = c.forces().unwrap();
        let want_t = c.measure().unwrap();
        let mut g = gpu(&s, &p, Some(field.clone()));
        let err = force_error(&g.forces().unwrap(), &want);
        assert!(err < 1e-5, "friction {fr:?}: forces off by {err:e}");
        eprintln!("friction {}: forces off by {err:.1e} of the largest", fr.is_some());
        let t = g.measure().unwrap();
        assert!(want_t.external_energy > 1.0, "the obstacles push: {}", want_t.external_energy);
        for (what, a, b) in [
            ("external energy", t.external_energy, want_t.external_energy),
            ("virial", t.virial, want_t.virial),
            ("pair energy", t.pair_energy, want_t.pair_energy),
        ] {
            let off = (a - b).abs() / b.abs().max(1.0);
            assert!(off < 1e-5, "friction {fr:?}: {what} {a} vs CPU {b}");
        }
        assert_eq!(t.dof, want_t.dof, "obstacles take the x and y momentum's degrees of freedom");
    }
}

/// The tunnel's start spin (2 U) in the pressed tank (state at step 30): while it spins (ends at
/// step 40) the forces, with every shape's surface moving, are the CPU's in double within
/// 1e-5 of the largest, and the spin changes them far beyond that; with the spin over (ends at
/// step 20) the wgpu forces equal, to the bit, those without the option.
#[test]
fn start_spin_forces_match_the_cpu() {
    if !adapter() {
        return;
    }
    let (s, p, field) = pressed();
    assert_eq!(s.step, 30);
    let tunnel = |time: Option<f64>| {
        let start_spin = time.map(|time| StartSpin { spin: 2.0, time });
        Some(Tunnel { speed: 0.5, zone: 1.0, start_spin })
    };
    let forces_of = |p: &SimParams| {
        let want = cpu(&s, p, Precision::Double, Some(field.clone())).forces().unwrap();
        (gpu(&s, p, Some(field.clone())).forces().unwrap(), want)
    };
    let spinning = SimParams { tunnel: tunnel(Some(0.2)), ..p.clone() };
    assert_eq!(StartSpin { spin: 2.0, time: 0.2 }.end_step(p.dt), 40);
    let (got, want) = forces_of(&spinning);
    let (plain_got, plain_want) = forces_of(&SimParams { tunnel: tunnel(None), ..p.clone() });
    let err = force_error(&got, &want);
    let effect = force_error(&plain_want, &want);
    eprintln!("start spin: wgpu vs CPU {err:.1e} of the largest force; the spin changes them by {effect:.1e}");
    assert!(err < 1e-5, "spinning: forces off by {err:e}");
    assert!(effect > 1e-3, "the spin changes the forces only by {effect:e}");
    let over = SimParams { tunnel: tunnel(Some(0.1)), ..p.clone() };
    let (over_got, over_want) = forces_of(&over);
    let bits = |f: &[[f64; 3]]| f.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert!(bits(&over_want) == bits(&plain_want), "the CPU still spins past the end");
    assert!(bits(&over_got) == bits(&plain_got), "wgpu still spins past the end of the spin");
}

/// The forces on the four shapes and two wall faces, each record's mean over its five steps,
/// as the CPU's (double) from the same state: within 1e-4 of the largest body force (the
/// trajectories part at f32 round-off, 1e-6 relative per force, over ten steps).
#[test]
fn body_forces_match_the_cpu() {
    if !adapter() {
        return;
    }
    let (s, p, field) = pressed();
    let p = SimParams { telemetry_every: 5, ..p };
    let mut c = cpu(&s, &p, Precision::Double, Some(field.clone()));
    let mut g = gpu(&s, &p, Some(field));
    c.advance(10).unwrap();
    g.advance(10).unwrap();
    let (want, got) = (c.drain_telemetry(), g.drain_telemetry());
    assert_eq!(got.len(), 2);
    for (a, b) in got.iter().zip(&want) {
        assert_eq!(a.step, b.step);
        let names: Vec<String> = a.body_forces.iter().map(|f| f.body.name()).collect();
        let want_names: Vec<String> = b.body_forces.iter().map(|f| f.body.name()).collect();
        assert_eq!(names, want_names);
        assert_eq!(names.len(), 6, "{names:?}");
        let scale = b.body_forces.iter().map(|f| f.force.iter().map(|x| x * x).sum::<f64>().sqrt()).fold(0.0, f64::max);
        for (x, y) in a.body_forces.iter().zip(&b.body_forces) {
            eprintln!("step {}: {} {:?} vs CPU {:?}", a.step, x.body.name(), x.force, y.force);
            for k in 0..3 {
                let off = (x.force[k] - y.force[k]).abs();
                assert!(off < 1e-4 * scale, "step {}: {} {:?} vs CPU {:?}", a.step, x.body.name(), x.force, y.force);
            }
        }
    }
}

/// A periodic box under a wind tunnel (U = 1.5, zone 4 sigma) and CSVR.
fn tunnel_box() -> (SimBox, AtomState, SimParams) {
    let (b, atoms) = jiggled_fluid([10, 6, 4], [false; 3], 0.1, &[], 22);
    let p = SimParams {
        tunnel: Some(Tunnel { speed: 1.5, zone: 4.0, start_spin: None }),
        thermostat: Thermostat::Csvr { tau: 0.5, relative_to_flow: false },
        temperature: 1.1,
        telemetry_every: 1,
        ..SimParams::default()
    };
    (b, atoms, p)
}

/// What the zone gave each step (momentum and kinetic energy), and the kinetic energy and
/// momentum after it, as the CPU's (double, same Philox numbers): within 1e-5 of the sum of
/// |m v| over the atoms (f32 round-off on ~2,000 terms).
#[test]
fn tunnel_zone_records_match_the_cpu() {
    if !adapter() {
        return;
    }
    let (b, atoms, p) = tunnel_box();
    let s = Snapshot { sim_box: b, atoms: atoms.clone(), step: 0, time: 0.0, piston: None };
    let mut c = cpu(&s, &p, Precision::Double, None);
    let mut g = gpu(&s, &p, None);
    c.advance(6).unwrap();
    g.advance(6).unwrap();
    let scale: f64 = atoms.velocities.iter().map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()).sum();
    let (want, got) = (c.drain_telemetry(), g.drain_telemetry());
    assert_eq!(got.len(), 6);
    assert!(want[0].tunnel_momentum[0] > 100.0, "the zone sets the stream going: {:?}", want[0].tunnel_momentum);
    for (a, b) in got.iter().zip(&want) {
        let pairs = [
            ("zone momentum x", a.tunnel_momentum[0], b.tunnel_momentum[0]),
            ("zone momentum y", a.tunnel_momentum[1], b.tunnel_momentum[1]),
            ("zone momentum z", a.tunnel_momentum[2], b.tunnel_momentum[2]),
            ("zone heat", a.tunnel_heat, b.tunnel_heat),
            ("kinetic energy", a.kinetic_energy, b.kinetic_energy),
            ("momentum x", a.momentum[0], b.momentum[0]),
            ("momentum y", a.momentum[1], b.momentum[1]),
        ];
        for (what, x, y) in pairs {
            assert!((x - y).abs() < 1e-5 * scale, "step {}: {what} {x} vs CPU {y}", a.step);
        }
    }
}

/// After 150 steps the atoms in the zone (reset at the last step) have the stream velocity
/// (U, 0, 0) and the temperature, within 4 standard errors of their number.
#[test]
fn tunnel_zone_gives_the_stream_velocity_and_temperature() {
    if !adapter() {
        return;
    }
    let (b, atoms, p) = tunnel_box();
    let p = SimParams { telemetry_every: 50, ..p };
    let mut g = GpuBackend::new(b, with(&p, Precision::Single), &atoms, None).unwrap();
    g.advance(150).unwrap();
    let s = g.snapshot().unwrap();
    let zone: Vec<[f64; 3]> =
        (0..s.atoms.len()).filter(|&i| s.atoms.positions[i][0] < 4.0).map(|i| s.atoms.velocities[i]).collect();
    let n = zone.len() as f64;
    assert!(n > 150.0, "{n} atoms in the zone");
    let (u, t) = (1.5, 1.1);
    let mean: [f64; 3] = std::array::from_fn(|k| zone.iter().map(|v| v[k]).sum::<f64>() / n);
    let se = (t / n).sqrt();
    for (k, want) in [u, 0.0, 0.0].into_iter().enumerate() {
        assert!((mean[k] - want).abs() < 4.0 * se, "axis {k}: mean {} vs {want} +- {se}", mean[k]);
    }
    let temp = zone.iter().map(|v| (v[0] - u).powi(2) + v[1] * v[1] + v[2] * v[2]).sum::<f64>() / (3.0 * n);
    let se_t = t * (2.0 / (3.0 * n)).sqrt();
    assert!((temp - t).abs() < 4.0 * se_t, "zone T {temp} vs {t} +- {se_t}");
    let last = g.drain_telemetry().pop().unwrap();
    assert!(last.tunnel_momentum[0] != 0.0 && last.tunnel_heat.is_finite());
}

/// Mean x velocity of the atoms within `range` of the y walls, and of the others.
fn near_and_far(s: &Snapshot, range: f64) -> ((f64, usize), (f64, usize)) {
    let (lo, hi) = (s.sim_box.lo[1], s.sim_box.hi[1]);
    let (mut near, mut far) = ((0.0, 0), (0.0, 0));
    for (p, v) in s.atoms.positions.iter().zip(&s.atoms.velocities) {
        let slot = if p[1] - lo < range || hi - p[1] < range { &mut near } else { &mut far };
        slot.0 += v[0];
        slot.1 += 1;
    }
    ((near.0 / near.1 as f64, near.1), (far.0 / far.1 as f64, far.1))
}

/// A slab sliding along x at 1.5 sigma/tau between y walls with surface friction: after 200
/// steps (1 tau) the atoms near the walls are slowed, 4 standard errors below the others, on
/// both backends, and
/// the wgpu backend's near-wall mean is the CPU's within 4 standard errors of the thermal
/// spread over the near-wall atoms.
#[test]
fn surface_friction_slows_the_fluid_near_the_walls_as_on_the_cpu() {
    if !adapter() {
        return;
    }
    let (b, mut atoms) = jiggled_fluid([10, 6, 6], [false, true, false], 0.1, &[], 23);
    for v in &mut atoms.velocities {
        v[0] += 1.5;
    }
    let p = SimParams { surface_friction: friction(), telemetry_every: 200, ..SimParams::default() };
    let s = Snapshot { sim_box: b, atoms, step: 0, time: 0.0, piston: None };
    let mut c = cpu(&s, &p, Precision::Single, None);
    let mut g = gpu(&s, &p, None);
    c.advance(200).unwrap();
    g.advance(200).unwrap();
    let ((near_c, n_near), (far_c, _)) = near_and_far(&c.snapshot().unwrap(), 1.5);
    let ((near_g, _), (far_g, _)) = near_and_far(&g.snapshot().unwrap(), 1.5);
    eprintln!("mean vx near the walls: CPU {near_c}, wgpu {near_g}; elsewhere: CPU {far_c}, wgpu {far_g}");
    let se = (1.2 / n_near as f64).sqrt();
    for (who, near, far) in [("CPU", near_c, far_c), ("wgpu", near_g, far_g)] {
        assert!(far - near > 4.0 * se, "{who}: near the walls {near}, elsewhere {far}");
    }
    assert!((near_g - near_c).abs() < 4.0 * se, "near-wall mean vx: wgpu {near_g}, CPU {near_c} (+- {se})");
    assert!((far_g - far_c).abs() < 4.0 * se, "mean vx elsewhere: wgpu {far_g}, CPU {far_c}");
    // The walls feel the drag: the fluid pushes them along +x.
    let t = g.drain_telemetry().pop().unwrap();
    let wall_x: f64 = t.body_forces.iter().map(|f| f.force[0]).sum();
    assert!(wall_x > 0.0, "{:?}", t.body_forces);
}

/// Windows of a run with fields sampled every 2 steps over 0.1 tau (10 samples a window).
fn fields_of(b: &mut dyn Backend, spec: FieldSpec, steps: u64) -> Vec<Fields> {
    b.set_fields(Some(spec)).unwrap();
    b.advance(steps).unwrap();
    b.take_fields(false).unwrap()
}

/// Checks `f` (a window of a quiescent fluid with `n_atoms` atoms in volume `v`): each bin's
/// density N/V and velocity zero within 5 standard errors of one sample (the window's mean
/// of correlated samples spreads less), and the mean of the bins' temperatures at `t` within
/// 3% (the bins' own mean velocities take 3 of their ~3 n degrees of freedom, ~1%).
fn check_quiescent(f: &Fields, n_atoms: usize, v: f64, t: f64) {
    let rho = n_atoms as f64 / v;
    let vb = f.grid.bin_volume();
    let per_bin = rho * vb;
    let total: f64 = f.density.iter().sum::<f64>() * vb;
    assert!((total - n_atoms as f64).abs() < 1e-9 * n_atoms as f64, "every atom counted once: {total}");
    for b in 0..f.grid.len() {
        assert!((f.density[b] - rho).abs() * vb < 5.0 * per_bin.sqrt(), "bin {b}: density {}", f.density[b]);
        let se = (t / per_bin).sqrt();
        for (k, u) in [f.vx[b], f.vy[b], f.vz[b]].into_iter().enumerate() {
            assert!(u.abs() < 5.0 * se, "bin {b}: velocity {k} {u} (+- {se})");
        }
    }
    let mean_t = f.temperature.iter().sum::<f64>() / f.grid.len() as f64;
    assert!((mean_t - t).abs() < 0.03 * t, "bins' mean T {mean_t} vs {t}");
}

/// A quiescent periodic liquid (no net momentum): density N/V, velocity zero and T as the
/// kinetic temperature says, per bin, on the wgpu backend and on the CPU from the same state.
#[test]
fn fields_of_a_quiescent_box() {
    if !adapter() {
        return;
    }
    let (b, mut atoms) = jiggled_fluid([8, 8, 4], [false; 3], 0.05, &[], 24);
    let n = atoms.len();
    let drift: [f64; 3] = std::array::from_fn(|k| atoms.velocities.iter().map(|v| v[k]).sum::<f64>() / n as f64);
    for v in &mut atoms.velocities {
        for k in 0..3 {
            v[k] -= drift[k];
        }
    }
    let p = SimParams { telemetry_every: 2, ..SimParams::default() };
    let spec = FieldSpec { bin: 3.4, every: 2, window_tau: 0.1, ..FieldSpec::default() };
    let s = Snapshot { sim_box: b, atoms, step: 0, time: 0.0, piston: None };
    let mut g = gpu(&s, &p, None);
    let mut c = cpu(&s, &p, Precision::Single, None);
    let got = fields_of(&mut g, spec.clone(), 40);
    let want = fields_of(&mut c, spec, 40);
    assert_eq!(got.len(), 2);
    assert_eq!(want.len(), 2);
    let temps: Vec<f64> = g.drain_telemetry().iter().map(|t| t.temperature).collect();
    for (w, (f, fc)) in got.iter().zip(&want).enumerate() {
        assert_eq!(f.samples, 10, "window {w}");
        assert!((f.time[0] - fc.time[0]).abs() < 1e-9 && (f.time[1] - fc.time[1]).abs() < 1e-9, "{:?}", f.time);
        let t = common::mean(&temps[10 * w..10 * w + 10]);
        check_quiescent(f, n, b.volume(), t);
        check_quiescent(fc, n, b.volume(), t);
    }
}

/// A short tunnel run past a circle: the wgpu backend's fields (density, velocity,
/// temperature per bin) are the CPU's within 5 standard errors of one sample per bin.
#[test]
fn tunnel_fields_match_the_cpu() {
    if !adapter() {
        return;
    }
    let shapes = vec![Shape::Circle { centre: [9.0, 5.0], radius: 2.0 }];
    let (b, mut atoms) = jiggled_fluid([12, 6, 4], [false; 3], 0.05, &shapes, 25);
    for v in &mut atoms.velocities {
        v[0] += 1.5;
    }
    let field = Arc::new(ObstacleField::bake(&shapes, &b, 0.1).unwrap());
    let p = SimParams {
        tunnel: Some(Tunnel { speed: 1.5, zone: 4.0, start_spin: None }),
        surface_friction: friction(),
        telemetry_every: 20,
        ..SimParams::default()
    };
    let spec = FieldSpec { bin: 1.7, every: 2, window_tau: 0.2, ..FieldSpec::default() };
    let s = Snapshot { sim_box: b, atoms, step: 0, time: 0.0, piston: None };
    let mut g = gpu(&s, &p, Some(field.clone()));
    let mut c = cpu(&s, &p, Precision::Single, Some(field));
    let (got, want) = (fields_of(&mut g, spec.clone(), 40), fields_of(&mut c, spec, 40));
    assert_eq!((got.len(), want.len()), (1, 1));
    let (f, fc) = (&got[0], &want[0]);
    let vb = f.grid.bin_volume();
    let mut flowing = 0;
    for bin in 0..f.grid.len() {
        let n = fc.density[bin] * vb;
        if n < 4.0 {
            // Inside the circle: empty on both.
            assert!(f.density[bin] * vb < 4.0 + 5.0 * 2.0, "bin {bin}: {} vs CPU {}", f.density[bin], fc.density[bin]);
            continue;
        }
        flowing += 1;
        assert!((f.density[bin] - fc.density[bin]).abs() * vb < 5.0 * n.sqrt(), "bin {bin} density");
        let se = (1.2 / n).sqrt();
        assert!((f.vx[bin] - fc.vx[bin]).abs() < 5.0 * se, "bin {bin}: vx {} vs CPU {}", f.vx[bin], fc.vx[bin]);
        assert!((f.vy[bin] - fc.vy[bin]).abs() < 5.0 * se, "bin {bin}: vy {} vs CPU {}", f.vy[bin], fc.vy[bin]);
        let se_t = 1.2 * (2.0 / (3.0 * n)).sqrt();
        let (tg, tc) = (f.temperature[bin], fc.temperature[bin]);
        assert!((tg - tc).abs() < 5.0 * se_t, "bin {bin}: T {tg} vs CPU {tc}");
    }
    assert!(flowing > 40, "{flowing} bins with fluid");
    let mean_vx = (0..f.grid.len()).filter(|&b| f.count[b] > 0.0).map(|b| f.vx[b]).sum::<f64>() / flowing as f64;
    assert!(mean_vx > 0.5, "the stream flows: mean vx {mean_vx}");
}

/// `assets/scenes/twin_eddies.ron` scaled down (a quarter of the box each way, the cylinder
/// likewise) loads and runs 200 steps on wgpu with its obstacles, friction, tunnel, CSVR
/// relative to the flow and fields: finite telemetry with the thermal readout, the cylinder's
/// drag along the stream.
#[test]
fn twin_eddies_scaled_down_runs_on_wgpu() {
    if !adapter() {
        return;
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/twin_eddies.ron");
    let mut scene = argon_sandbox::scene::Scene::load(&path).unwrap();
    scene.tank.size = [36.75, 18.0, scene.tank.size[2]];
    scene.obstacles = vec![Shape::Circle { centre: [13.55, 9.0], radius: 3.0 }];
    // The preset's dye rakes sit in the full-size tank (dye on wgpu: tests/wgpu_dye.rs).
    scene.dye.clear();
    let setup = scene.build().unwrap();
    assert!(setup.params.tunnel.is_some() && setup.params.surface_friction.is_some());
    assert!(setup.params.thermostat.relative_to_flow());
    let field = Arc::new(ObstacleField::bake(&setup.shapes, &setup.sim_box, 0.1).unwrap());
    let params = SimParams { telemetry_every: 20, ..setup.params.clone() };
    let mut g = GpuBackend::new(setup.sim_box, params, &setup.atoms, Some(field)).unwrap();
    g.set_fields(setup.fields.clone()).unwrap();
    g.advance(200).unwrap();
    let t: Vec<Telemetry> = g.drain_telemetry();
    assert_eq!(t.len(), 10);
    assert!(t.iter().all(|r| r.total_energy().is_finite() && r.tunnel_heat.is_finite()));
    assert!(t.iter().all(|r| r.thermal.is_some_and(|x| x.temperature > 1.0 && x.temperature < 5.0)));
    let drag = t.iter().map(|r| r.body_forces[0].force[0]).sum::<f64>() / t.len() as f64;
    eprintln!("twin eddies, scaled down: mean drag {drag}, last record {:?}", t.last().map(|r| &r.body_forces));
    assert!(drag > 0.0, "drag on the cylinder {drag}");
    assert_eq!(g.step(), 200);
}

/// Thermostats relative to the flow (Berendsen, CSVR with its numbers drawn on the device from
/// the host's Philox sequence) in a tunnel past a circle: per record the kinetic energy, the
/// thermal readout (temperature relative to the local flow, its degrees of freedom) and the
/// zone's heat as the CPU's (double) from the same state, within 1e-5 of the sum of |v|.
#[test]
fn relative_thermostats_match_the_cpu() {
    if !adapter() {
        return;
    }
    let shapes = vec![Shape::Circle { centre: [9.0, 5.0], radius: 2.0 }];
    let (b, mut atoms) = jiggled_fluid([12, 6, 4], [false; 3], 0.05, &shapes, 26);
    for v in &mut atoms.velocities {
        v[0] += 1.5;
    }
    let field = Arc::new(ObstacleField::bake(&shapes, &b, 0.1).unwrap());
    let scale: f64 = atoms.velocities.iter().map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()).sum();
    let s = Snapshot { sim_box: b, atoms, step: 0, time: 0.0, piston: None };
    for thermostat in [
        Thermostat::Berendsen { tau: 0.1, relative_to_flow: true },
        Thermostat::Csvr { tau: 0.1, relative_to_flow: true },
    ] {
        let p = SimParams {
            thermostat,
            temperature: 0.9,
            tunnel: Some(Tunnel { speed: 1.5, zone: 4.0, start_spin: None }),
            surface_friction: friction(),
            telemetry_every: 1,
            ..SimParams::default()
        };
        let mut c = cpu(&s, &p, Precision::Double, Some(field.clone()));
        let mut g = gpu(&s, &p, Some(field.clone()));
        c.advance(8).unwrap();
        g.advance(8).unwrap();
        let (want, got) = (c.drain_telemetry(), g.drain_telemetry());
        assert_eq!(got.len(), 8);
        for (a, w) in got.iter().zip(&want) {
            let (ta, tw) = (a.thermal.expect("thermal readout"), w.thermal.unwrap());
            assert_eq!(ta.occupied_bins, tw.occupied_bins, "{thermostat:?} step {}", a.step);
            for (what, x, y) in [
                ("kinetic energy", a.kinetic_energy, w.kinetic_energy),
                ("thermal kinetic energy", ta.kinetic_energy, tw.kinetic_energy),
                ("zone heat", a.tunnel_heat, w.tunnel_heat),
            ] {
                assert!((x - y).abs() < 1e-5 * scale, "{thermostat:?} step {}: {what} {x} vs CPU {y}", a.step);
            }
        }
        // A measurement carries the thermal readout too, with no steps behind it.
        let (mg, mc) = (g.measure().unwrap(), c.measure().unwrap());
        let (ta, tw) = (mg.thermal.expect("measured thermal readout"), mc.thermal.unwrap());
        assert!((ta.kinetic_energy - tw.kinetic_energy).abs() < 1e-5 * scale, "measure: {ta:?} vs CPU {tw:?}");
        assert_eq!(ta.occupied_bins, tw.occupied_bins);
        assert!(mg.body_forces.is_empty() && mg.tunnel_heat == 0.0);
        // The thermostat pulls the thermal motion (T 1.2 at the start) toward 0.9.
        let (t0, t1) = (got[0].thermal.unwrap().temperature, got[7].thermal.unwrap().temperature);
        assert!(t1 < t0 - 0.05, "{thermostat:?}: thermal T {t0} -> {t1}");
    }
}

/// The same wind-tunnel run twice (obstacles, friction, zone, relative CSVR, fields) gives the
/// same bits: every sum has a fixed order or is an integer.
#[test]
fn tunnel_reruns_are_identical() {
    if !adapter() {
        return;
    }
    let shapes = vec![Shape::Circle { centre: [9.0, 5.0], radius: 2.0 }];
    let (b, atoms) = jiggled_fluid([12, 6, 4], [false; 3], 0.05, &shapes, 27);
    let field = Arc::new(ObstacleField::bake(&shapes, &b, 0.1).unwrap());
    let p = SimParams {
        thermostat: Thermostat::Csvr { tau: 0.2, relative_to_flow: true },
        tunnel: Some(Tunnel { speed: 1.5, zone: 4.0, start_spin: None }),
        surface_friction: friction(),
        telemetry_every: 10,
        ..SimParams::default()
    };
    let run = || {
        let mut g = GpuBackend::new(b, with(&p, Precision::Single), &atoms, Some(field.clone())).unwrap();
        g.set_fields(Some(FieldSpec { bin: 1.7, every: 5, window_tau: 0.25, ..FieldSpec::default() })).unwrap();
        g.advance(100).unwrap();
        let t: Vec<u64> = g
            .drain_telemetry()
            .iter()
            .flat_map(|t| [t.total_energy().to_bits(), t.body_forces[0].force[0].to_bits(), t.tunnel_heat.to_bits()])
            .collect();
        let f: Vec<u64> = g.take_fields(false).unwrap().iter().flat_map(|f| f.vx.iter().map(|x| x.to_bits())).collect();
        (g.snapshot().unwrap().atoms, t, f)
    };
    let (a, b2) = (run(), run());
    assert!(!a.2.is_empty());
    assert_eq!(a, b2);
}

/// Obstacles placed on a running system: caught atoms removed or pushed out as the CPU backend
/// does it, and the dof of the x-y momentum given up.
#[test]
fn set_obstacles_follows_the_caught_atoms_policy() {
    if !adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([8, 6, 4], [false; 3], 0.05, &[], 28);
    let field = Arc::new(ObstacleField::bake(&[Shape::Circle { centre: [6.0, 5.0], radius: 2.0 }], &b, 0.1).unwrap());
    let p = SimParams::default();
    let s = Snapshot { sim_box: b, atoms, step: 0, time: 0.0, piston: None };
    for caught in [argon_sandbox::sim::CaughtAtoms::Remove, argon_sandbox::sim::CaughtAtoms::PushOut] {
        let mut c = cpu(&s, &p, Precision::Single, None);
        let mut g = gpu(&s, &p, None);
        let n_cpu = c.set_obstacles(Some(field.clone()), caught).unwrap();
        let n_gpu = g.set_obstacles(Some(field.clone()), caught).unwrap();
        assert!(n_cpu > 10 && n_gpu == n_cpu, "{caught:?}: {n_gpu} vs CPU {n_cpu}");
        assert_eq!(g.n_atoms(), c.n_atoms());
        let (tg, tc) = (g.measure().unwrap(), c.measure().unwrap());
        assert_eq!(tg.dof, tc.dof);
        assert!((tg.external_energy - tc.external_energy).abs() < 1e-4 * tc.external_energy.abs().max(1.0));
        assert_eq!(g.set_obstacles(None, caught).unwrap(), 0);
        assert_eq!(g.measure().unwrap().external_energy, 0.0);
    }
}
