//! Mixed and double precision on the wgpu backend (64-bit floats in WGSL, `SHADER_F64`),
//! against the CPU backend in the same precision and LAMMPS, on whatever adapter wgpu finds
//! (CI: Mesa's lavapipe, which has them). A test that needs them prints `skipped: adapter has
//! no SHADER_F64` and passes on an adapter without (Metal); without any adapter, `skipped: no
//! wgpu adapter` (a failure under ARGON_REQUIRE_RENDER=1).
//!
//! From the same state: forces within 1e-12 of the CPU's in double (1e-5 in mixed, whose
//! forces are f32) and energies likewise, kinetic energy within 1e-12 in both (f64
//! velocities), for lists and all pairs in a periodic liquid, a tank with walls, gravity and a
//! drive, a thin periodic slab and a four-species mixture; LAMMPS's 200-step NVE thermo within
//! 1e-10 in double (as the CUDA backend's) and 1e-4 in mixed (single's bound); trajectories
//! under NVE, Berendsen, CSVR and Langevin as the CPU's (positions within 1e-9 of the box and
//! velocities 1e-8 in double after 50 steps, as CUDA's test; 1e-5 and 1e-4 in mixed); total
//! energy in double NVE as the CPU's to 1e-10 over 400 steps and within Verlet's own
//! fluctuation of its start; a wind tunnel (obstacle, friction, inflow zone, CSVR relative to
//! the flow, fields) in double as the CPU's; a blow-up rolled back; a precision switch in the
//! middle of a run keeping the state (to f32 round-off) and a rollback across one; and where
//! the adapter has no 64-bit floats (as `SimDevice::hide_f64` makes it look), mixed and
//! double refused naming why and the backends that run them, and offered greyed out.

mod common;

use std::sync::Arc;

use argon_sandbox::flow::FieldSpec;
use argon_sandbox::io::extxyz::read_extxyz;
use argon_sandbox::physics::friction::SurfaceFriction;
use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{Algorithm, SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::physics::tunnel::Tunnel;
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::gpu::GpuBackend;
use argon_sandbox::sim::gpu::device::{self, NO_F64, SimDevice};
use argon_sandbox::sim::{AtomState, Backend, BackendChoice};
use common::{jiggled_fluid, reference, rel, validation_dir};

/// A device with 64-bit floats; otherwise None, saying why the test is skipped.
fn f64_device() -> Option<SimDevice> {
    match device::open() {
        Ok(d) => match d.f64_missing() {
            None => Some(d),
            Some(why) => {
                eprintln!("skipped: adapter has no SHADER_F64 ({why})");
                None
            }
        },
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            eprintln!("skipped: no wgpu adapter ({e})");
            None
        }
    }
}

/// Any device (for the paths without 64-bit floats); otherwise None, saying why.
fn any_device() -> Option<SimDevice> {
    match device::open() {
        Ok(d) => Some(d),
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            eprintln!("skipped: no wgpu adapter ({e})");
            None
        }
    }
}

fn at(p: &SimParams, precision: Precision) -> SimParams {
    SimParams { precision, ..p.clone() }
}

/// Largest |F_gpu - F_cpu| over the largest |F_cpu|.
fn force_error(got: &[[f64; 3]], want: &[[f64; 3]]) -> f64 {
    let norm = |f: &[f64; 3]| (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
    let scale = want.iter().map(norm).fold(0.0, f64::max);
    got.iter().zip(want).map(|(a, b)| norm(&[a[0] - b[0], a[1] - b[1], a[2] - b[2]])).fold(0.0, f64::max) / scale
}

/// The largest distance between the same atoms in two states (minimum image).
fn position_gap(b: &SimBox, x: &AtomState, y: &AtomState) -> f64 {
    x.positions
        .iter()
        .zip(&y.positions)
        .map(|(p, q)| b.min_image(*p, *q).iter().fold(0.0f64, |m, d| m.max(d.abs())))
        .fold(0.0, f64::max)
}

fn velocity_gap(x: &AtomState, y: &AtomState) -> f64 {
    x.velocities
        .iter()
        .zip(&y.velocities)
        .flat_map(|(p, q)| (0..3).map(move |k| (p[k] - q[k]).abs()))
        .fold(0.0, f64::max)
}

/// The in.lj lattice of `bench` at 500 atoms (fcc, rho 0.8442), jiggled by up to 0.1: two
/// cells a side, over 32 atoms a cell, so the list build takes each cell's atoms in two rounds
/// and every pair's minimum image, past every stream's end too.
fn two_cells_a_side() -> (SimBox, AtomState) {
    use argon_sandbox::physics::init::{LatticeKind, lattice_box, maxwell_boltzmann};
    use argon_sandbox::rng::{Sequence, Stream};
    let (b, sites) = lattice_box(LatticeKind::Fcc, 0.8442, [5; 3]);
    let mut rng = Sequence::new(47, Stream::GasPlacement, 7, 0);
    let positions: Vec<[f64; 3]> =
        sites.iter().map(|p| b.wrap(std::array::from_fn(|k| p[k] + 0.1 * (2.0 * rng.uniform() - 1.0)))).collect();
    let n = positions.len();
    let velocities = maxwell_boltzmann(&vec![1.0; n], 1.44, 3.0 * n as f64 - 3.0, 47, 0);
    (b, AtomState { positions, velocities, types: vec![0; n], ..Default::default() })
}

/// The systems of tests/wgpu_backend.rs: a periodic liquid, a tank with walls, gravity and a
/// drive, a slab two cells thick along a periodic axis (minimum images in the list build), a
/// four-species mixture at per-pair cut-offs; and the in.lj lattice two cells a side.
fn systems() -> Vec<(&'static str, SimBox, SimParams, AtomState)> {
    let (b, atoms) = jiggled_fluid([6, 6, 6], [false; 3], 0.1, &[], 3);
    let (tb, tank) = jiggled_fluid([6, 5, 4], [true, true, false], 0.1, &[], 4);
    let tank_params = SimParams { gravity: 0.3, drive: 0.2, ..SimParams::default() };
    let (sb, slab) = jiggled_fluid([7, 7, 4], [false; 3], 0.1, &[], 5);
    let (mb, mix, species) = common::mixture::four_species_fluid(5);
    let mix_params = SimParams { species, ..SimParams::default() };
    let (lb, lattice) = two_cells_a_side();
    vec![
        ("periodic liquid", b, SimParams::default(), atoms),
        ("tank with walls, gravity and a drive", tb, tank_params, tank),
        ("thin periodic slab", sb, SimParams::default(), slab),
        ("four-species mixture", mb, mix_params, mix),
        ("in.lj lattice, two cells a side", lb, SimParams::default(), lattice),
    ]
}

/// Forces and energies from the same state as the CPU's in the same precision: in double
/// within 1e-12 (the CUDA backend's bound: f64 round-off summed over ~50 neighbours), in mixed
/// within 1e-5 as single's (f32 forces); the kinetic energy (f64 velocities) within 1e-12 in
/// both. Lists and all pairs. Then 20 steps of each in double stay finite (the lattice two
/// cells a side blew up at once when far candidates' images joined the lists).
#[test]
fn forces_and_energies_match_the_cpu_in_mixed_and_double() {
    let Some(dev) = f64_device() else { return };
    let dev = Arc::new(dev);
    for (name, b, p, atoms) in systems() {
        for (precision, bound) in [(Precision::Double, 1e-12), (Precision::Mixed, 1e-5)] {
            let cpu_params = SimParams { algorithm: Algorithm::Neighbors, ..at(&p, precision) };
            let mut cpu = CpuBackend::new(b, cpu_params, &atoms, None).unwrap();
            let want = cpu.forces().unwrap();
            let want_t = cpu.measure().unwrap();
            for algorithm in [Algorithm::Neighbors, Algorithm::AllPairsTiled] {
                let params = SimParams { algorithm, ..at(&p, precision) };
                let mut g = GpuBackend::on_device(dev.clone(), b, params, &atoms, None).unwrap();
                let err = force_error(&g.forces().unwrap(), &want);
                eprintln!("{name}, {precision:?}, {algorithm:?}: forces off by {err:.1e}");
                assert!(err < bound, "{name}, {precision:?}, {algorithm:?}: forces off by {err:e}");
                let t = g.measure().unwrap();
                for (what, a, c, bound) in [
                    ("pair energy", t.pair_energy, want_t.pair_energy, bound),
                    ("external energy", t.external_energy, want_t.external_energy, bound),
                    ("virial", t.virial, want_t.virial, bound),
                    ("kinetic energy", t.kinetic_energy, want_t.kinetic_energy, 1e-12),
                ] {
                    let off = (a - c).abs() / c.abs().max(1.0);
                    assert!(off < bound, "{name}, {precision:?}, {algorithm:?}: {what} {a} vs CPU {c} ({off:.1e})");
                }
                for k in 0..3 {
                    assert!((t.momentum[k] - want_t.momentum[k]).abs() < 1e-10, "{name}: momentum {:?}", t.momentum);
                }
                if precision == Precision::Double {
                    g.advance(20).unwrap();
                    assert!(common::blowup::finite(&g.snapshot().unwrap()), "{name}, {algorithm:?}");
                }
            }
        }
    }
}

/// The held-out LAMMPS trajectory (4,000 atoms, NVE, 200 steps): thermo within 1e-10 in
/// double (as the CUDA backend's), within 1e-4 in mixed (single's bound; f32 forces).
#[test]
fn lammps_trajectory_in_double_and_mixed() {
    let Some(dev) = f64_device() else { return };
    let dev = Arc::new(dev);
    let r = reference();
    let rows = r["nve_trajectory_fcc4000"]["rows"].as_array().unwrap();
    let f = read_extxyz(&validation_dir().join("lammps_fcc4000_T1.44_initial.extxyz")).unwrap();
    let n = f.positions.len();
    let atoms = AtomState {
        positions: f.positions,
        velocities: f.velocities.unwrap(),
        types: vec![0; n],
        ..Default::default()
    };
    for (precision, bound) in [(Precision::Double, 1e-10), (Precision::Mixed, 1e-4)] {
        let p = SimParams { algorithm: Algorithm::Neighbors, precision, telemetry_every: 50, ..SimParams::default() };
        let mut g = GpuBackend::on_device(dev.clone(), f.sim_box, p, &atoms, None).unwrap();
        let mut got = vec![g.measure().unwrap()];
        g.advance(200).unwrap();
        got.extend(g.drain_telemetry());
        assert_eq!(got.len(), rows.len());
        let mut worst = 0.0f64;
        for (t, want) in got.iter().zip(rows) {
            assert_eq!(t.step, want["step"].as_u64().unwrap());
            for (col, mine) in [
                ("temp", t.temperature),
                ("pe", t.pe_per_atom()),
                ("ke", t.ke_per_atom()),
                ("etotal", t.etotal_per_atom()),
                ("press", t.pressure),
            ] {
                let off = rel(mine, want[col].as_f64().unwrap());
                worst = worst.max(off);
                assert!(off < bound, "{precision:?} step {} {col}: {mine} vs LAMMPS {} ({off:.1e})", t.step, want[col]);
            }
        }
        eprintln!("{precision:?}: largest relative difference from LAMMPS over 200 steps: {worst:.1e}");
    }
}

/// 50 steps from the same state under NVE, Berendsen, CSVR (its numbers drawn on the host)
/// and Langevin (Philox on the device, f64 normals) as the CPU in the same precision: in
/// double positions within 1e-9 of the box and velocities within 1e-8, and each record's
/// temperature and energies within 1e-9 (the CUDA backend's bounds); in mixed within 1e-5 of
/// the box and 1e-4 (f32 forces, whose round-off the steps carry).
#[test]
fn trajectories_match_the_cpu_with_every_thermostat() {
    let Some(dev) = f64_device() else { return };
    let dev = Arc::new(dev);
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.05, &[], 41);
    let l = b.length()[0];
    for thermostat in [
        Thermostat::Nve,
        Thermostat::Berendsen { tau: 0.1, relative_to_flow: false },
        Thermostat::Csvr { tau: 0.1, relative_to_flow: false },
        Thermostat::Langevin { damp: 0.5 },
    ] {
        for (precision, dx_bound, dv_bound, t_bound) in
            [(Precision::Double, 1e-9, 1e-8, 1e-9), (Precision::Mixed, 1e-5, 1e-4, 1e-5)]
        {
            let p = SimParams {
                thermostat,
                temperature: 1.5,
                precision,
                algorithm: Algorithm::Neighbors,
                telemetry_every: 10,
                ..SimParams::default()
            };
            let mut cpu = CpuBackend::new(b, p.clone(), &atoms, None).unwrap();
            let mut g = GpuBackend::on_device(dev.clone(), b, p, &atoms, None).unwrap();
            cpu.advance(50).unwrap();
            g.advance(50).unwrap();
            let (tc, tg) = (cpu.drain_telemetry(), g.drain_telemetry());
            assert_eq!(tg.len(), 5);
            for (x, y) in tc.iter().zip(&tg) {
                for (what, a, c) in [
                    ("temperature", y.temperature, x.temperature),
                    ("pair energy", y.pair_energy, x.pair_energy),
                    ("total energy", y.total_energy(), x.total_energy()),
                ] {
                    assert!(rel(a, c) < t_bound, "{thermostat:?} {precision:?} step {}: {what} {a} vs CPU {c}", x.step);
                }
            }
            let (sc, sg) = (cpu.snapshot().unwrap(), g.snapshot().unwrap());
            let (dx, dv) = (position_gap(&b, &sc.atoms, &sg.atoms), velocity_gap(&sc.atoms, &sg.atoms));
            eprintln!("{thermostat:?} {precision:?}: positions {dx:.1e}, velocities {dv:.1e} from the CPU's");
            assert!(dx < dx_bound * l, "{thermostat:?} {precision:?}: positions part ({dx:e})");
            assert!(dv < dv_bound, "{thermostat:?} {precision:?}: velocities part ({dv:e})");
        }
    }
}

/// Double NVE over 400 steps of the LAMMPS liquid (4,000 atoms): the total energy of every
/// record as the CPU's in double to 1e-10 (the same trajectory, so the same conservation),
/// and within 1e-3 per atom of its start (single's bound over 20,000 steps; what remains,
/// 3.7e-4 at most, is velocity Verlet's own fluctuation at dt = 0.005 from this start, the
/// CPU's too).
#[test]
fn double_nve_conserves_energy_as_the_cpu() {
    let Some(dev) = f64_device() else { return };
    let f = read_extxyz(&validation_dir().join("lammps_fcc4000_T1.44_initial.extxyz")).unwrap();
    let n = f.positions.len();
    let atoms = AtomState {
        positions: f.positions,
        velocities: f.velocities.unwrap(),
        types: vec![0; n],
        ..Default::default()
    };
    let b = f.sim_box;
    let p = SimParams {
        precision: Precision::Double,
        algorithm: Algorithm::Neighbors,
        telemetry_every: 20,
        ..SimParams::default()
    };
    let mut cpu = CpuBackend::new(b, p.clone(), &atoms, None).unwrap();
    let mut g = GpuBackend::on_device(Arc::new(dev), b, p, &atoms, None).unwrap();
    let e0 = g.measure().unwrap().etotal_per_atom();
    assert!(rel(e0, cpu.measure().unwrap().etotal_per_atom()) < 1e-12);
    cpu.advance(400).unwrap();
    g.advance(400).unwrap();
    let (tc, tg) = (cpu.drain_telemetry(), g.drain_telemetry());
    assert_eq!(tg.len(), 20);
    let mut drift = 0.0f64;
    for (x, y) in tc.iter().zip(&tg) {
        assert!(rel(y.total_energy(), x.total_energy()) < 1e-10, "step {}: {y:?} vs CPU {x:?}", x.step);
        drift = drift.max((y.etotal_per_atom() - e0).abs());
    }
    eprintln!("double NVE over 400 steps: max |E(t) - E(0)| = {drift:.2e} per atom");
    assert!(drift < 1e-3, "energy moved {drift:e} per atom");
}

/// A small wind tunnel in double: a circle in a periodic box, surface friction, the inflow
/// zone, CSVR relative to the flow and flow fields, 40 steps from the same state as the CPU
/// in double: positions within 1e-9 of the box and velocities 1e-8, each record's forces on
/// the bodies, zone momentum and heat, kinetic energy and thermal readout within 1e-9 of
/// their scale, and the window's fields bin by bin within the device sums' fixed-point step
/// (2^-16 a term) of the CPU's.
#[test]
fn flow_scene_in_double_matches_the_cpu() {
    let Some(dev) = f64_device() else { return };
    let shapes = vec![Shape::Circle { centre: [6.0, 4.0], radius: 1.5 }];
    let (b, mut atoms) = jiggled_fluid([8, 5, 3], [false; 3], 0.05, &shapes, 43);
    for v in &mut atoms.velocities {
        v[0] += 1.0;
    }
    let field = Arc::new(ObstacleField::bake(&shapes, &b, 0.1).unwrap());
    let p = SimParams {
        precision: Precision::Double,
        algorithm: Algorithm::Neighbors,
        thermostat: Thermostat::Csvr { tau: 0.1, relative_to_flow: true },
        temperature: 1.0,
        tunnel: Some(Tunnel { speed: 1.0, zone: 3.0, start_spin: None }),
        surface_friction: Some(SurfaceFriction { damp: 0.5, range: 1.5 }),
        telemetry_every: 10,
        seed: 17,
        ..SimParams::default()
    };
    let spec = FieldSpec { bin: 2.0, every: 2, window_tau: 0.2, ..FieldSpec::default() };
    let mut cpu = CpuBackend::new(b, p.clone(), &atoms, Some(field.clone())).unwrap();
    let mut g = GpuBackend::on_device(Arc::new(dev), b, p, &atoms, Some(field)).unwrap();
    for s in [&mut cpu as &mut dyn Backend, &mut g] {
        s.set_fields(Some(spec.clone())).unwrap();
        s.advance(40).unwrap();
    }
    let (tc, tg) = (cpu.drain_telemetry(), g.drain_telemetry());
    assert_eq!((tc.len(), tg.len()), (4, 4));
    let (sc, sg) = (cpu.snapshot().unwrap(), g.snapshot().unwrap());
    let (dx, dv) = (position_gap(&b, &sc.atoms, &sg.atoms), velocity_gap(&sc.atoms, &sg.atoms));
    eprintln!("tunnel in double: positions {dx:.1e}, velocities {dv:.1e} from the CPU's");
    let scale: f64 = atoms.velocities.iter().map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()).sum();
    for (x, y) in tc.iter().zip(&tg) {
        let what = format!("step {}", x.step);
        assert_eq!(x.body_forces.len(), y.body_forces.len(), "{what}");
        assert!(!x.body_forces.is_empty(), "{what}: the circle is a body");
        let fscale = x.body_forces.iter().flat_map(|f| f.force).fold(1.0f64, |m, v| m.max(v.abs()));
        for (a, c) in y.body_forces.iter().zip(&x.body_forces) {
            for k in 0..3 {
                let off = (a.force[k] - c.force[k]).abs();
                assert!(off < 1e-9 * fscale, "{what}: {} {:?} vs CPU {:?}", c.body.name(), a.force, c.force);
            }
        }
        let (ty, tx) = (y.thermal.expect("thermal readout"), x.thermal.unwrap());
        assert_eq!(ty.occupied_bins, tx.occupied_bins, "{what}");
        for (w, a, c) in [
            ("zone momentum x", y.tunnel_momentum[0], x.tunnel_momentum[0]),
            ("zone momentum y", y.tunnel_momentum[1], x.tunnel_momentum[1]),
            ("zone heat", y.tunnel_heat, x.tunnel_heat),
            ("kinetic energy", y.kinetic_energy, x.kinetic_energy),
            ("thermal kinetic energy", ty.kinetic_energy, tx.kinetic_energy),
        ] {
            assert!((a - c).abs() < 1e-9 * scale, "{what}: {w} {a} vs CPU {c}");
        }
    }
    assert!(tc[3].tunnel_momentum[0].abs() > 0.0);
    assert!(dx < 1e-9 * b.length()[0], "positions part ({dx:e})");
    assert!(dv < 1e-8, "velocities part ({dv:e})");
    let (fc, fg) = (cpu.take_fields(true).unwrap(), g.take_fields(true).unwrap());
    assert_eq!((fc.len(), fg.len()), (1, 1));
    let (fc, fg) = (&fc[0], &fg[0]);
    assert_eq!(fc.samples, fg.samples);
    let vb = fc.grid.bin_volume();
    for bin in 0..fc.grid.len() {
        assert_eq!(fg.count[bin], fc.count[bin], "bin {bin}: atom-samples");
        // Each term is rounded to 2^-16 on the device: a mean over n terms is off by 2^-17.
        let step = 1.0 / 131072.0;
        assert!((fg.density[bin] - fc.density[bin]).abs() * vb <= step * fc.count[bin].max(1.0), "bin {bin} density");
        if fc.count[bin] > 0.0 {
            assert!((fg.vx[bin] - fc.vx[bin]).abs() < 4.0 * step, "bin {bin}: vx {} vs CPU {}", fg.vx[bin], fc.vx[bin]);
            assert!((fg.vy[bin] - fc.vy[bin]).abs() < 4.0 * step, "bin {bin}: vy {} vs CPU {}", fg.vy[bin], fc.vy[bin]);
        }
    }
}

/// A blow-up in double is reported and rolled back to the checkpoint, as in single.
#[test]
fn blow_ups_roll_back_in_double() {
    let Some(dev) = f64_device() else { return };
    let dev = Arc::new(dev);
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 44);
    let open = |b: SimBox, p: SimParams, a: &AtomState| -> Box<dyn Backend> {
        Box::new(GpuBackend::on_device(dev.clone(), b, p, a, None).unwrap())
    };
    let p = SimParams { precision: Precision::Double, algorithm: Algorithm::Neighbors, ..SimParams::default() };
    common::blowup::huge_time_step(&open, b, p.clone(), &atoms);
    let tank = SimBox::new([12.0, 10.0, 10.0], [false, true, true]);
    common::blowup::atom_leaving_the_tank(&open, tank, p);
}

/// Single -> mixed -> double -> single in the middle of a run (the app's precision menu):
/// each switch keeps the step and the state to f32 round-off (exactly going up), the energy
/// with it, and the run goes on; a rollback to a checkpoint taken in another precision
/// returns its state.
#[test]
fn a_precision_switch_keeps_the_state() {
    let Some(dev) = f64_device() else { return };
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 45);
    let p = SimParams { precision: Precision::Single, algorithm: Algorithm::Neighbors, ..SimParams::default() };
    let mut g = GpuBackend::on_device(Arc::new(dev), b, p.clone(), &atoms, None).unwrap();
    g.advance(20).unwrap();
    g.checkpoint().unwrap();
    let at_checkpoint = g.copy_state().unwrap();
    for precision in [Precision::Mixed, Precision::Double, Precision::Single] {
        g.advance(10).unwrap();
        let before = g.copy_state().unwrap();
        let e_before = g.measure().unwrap().total_energy();
        g.set_params(at(&p, precision)).unwrap();
        assert_eq!(g.params().precision, precision);
        let after = g.copy_state().unwrap();
        assert_eq!((after.step, after.time), (before.step, before.time), "{precision:?}");
        let (dx, dv) = (position_gap(&b, &before.atoms, &after.atoms), velocity_gap(&before.atoms, &after.atoms));
        if precision == Precision::Single {
            assert!(dx <= 1e-6 * b.length()[0] && dv <= 1e-6 * 4.0, "to single: {dx:e} {dv:e}");
        } else {
            assert_eq!((dx, dv), (0.0, 0.0), "to {precision:?}: f32 values are f64 values");
        }
        let e_after = g.measure().unwrap().total_energy();
        assert!(rel(e_after, e_before) < 1e-5, "{precision:?}: energy {e_before} -> {e_after}");
        g.advance(10).unwrap();
        assert!(common::blowup::finite(&g.snapshot().unwrap()));
    }
    // Back to the checkpoint of step 20, taken in single, from double.
    g.set_params(at(&p, Precision::Double)).unwrap();
    assert_eq!(g.rollback().unwrap(), Some(20));
    let back = g.copy_state().unwrap();
    assert_eq!(position_gap(&b, &back.atoms, &at_checkpoint.atoms), 0.0);
    assert_eq!(back.atoms.velocities, at_checkpoint.atoms.velocities);
    g.advance(5).unwrap();
}

/// Where the adapter has no 64-bit floats (`hide_f64`, as `ARGON_WGPU_NO_F64=1` does for the
/// app), mixed and double are refused naming why and the backends that run them: opening, a
/// parameter change (the state and precision kept), and Auto's reason; the backend offers
/// them greyed out with that reason (the precision menu's data), single as usual. Where it
/// has them, every precision is offered.
#[test]
fn without_f64_mixed_and_double_are_refused_and_greyed_out() {
    let Some(mut dev) = any_device() else { return };
    let had_f64 = dev.f64_missing().is_none();
    dev.hide_f64();
    let dev = Arc::new(dev);
    let (b, atoms) = jiggled_fluid([4, 4, 4], [false; 3], 0.1, &[], 46);
    let single = SimParams { precision: Precision::Single, algorithm: Algorithm::Neighbors, ..SimParams::default() };
    for precision in [Precision::Mixed, Precision::Double] {
        let e = GpuBackend::on_device(dev.clone(), b, at(&single, precision), &atoms, None).err().expect("refused");
        let e = e.to_string();
        let name = format!("{} precision", precision.name());
        assert!(e.contains(&name) && e.contains(NO_F64) && e.contains("--backend cpu or cuda"), "{e}");
    }
    let mut g = GpuBackend::on_device(dev.clone(), b, single.clone(), &atoms, None).unwrap();
    g.advance(5).unwrap();
    let info = g.info();
    assert_eq!(info.precisions.len(), 3);
    assert_eq!(info.refuses(Precision::Single), None);
    for precision in [Precision::Mixed, Precision::Double] {
        let why = info.refuses(precision).expect("greyed out");
        assert!(why.contains(NO_F64) && why.contains("CPU and CUDA"), "{why}");
        let before = g.copy_state().unwrap();
        let e = g.set_params(at(&single, precision)).unwrap_err().to_string();
        assert!(e.contains(NO_F64), "{e}");
        assert_eq!(g.params().precision, Precision::Single);
        assert_eq!(g.copy_state().unwrap().atoms.positions, before.atoms.positions);
        let moved = argon_sandbox::sim::gpu::unsupported_on(&at(&single, precision), &info).expect("leaves wgpu");
        assert!(moved.contains(NO_F64), "{moved}");
    }
    // Auto does not take the wgpu backend for double there, and says why.
    let (auto, why) = argon_sandbox::sim::open_backend_on(
        BackendChoice::Auto,
        b,
        at(&single, Precision::Double),
        &atoms,
        None,
        Some(&dev),
    )
    .unwrap();
    assert_ne!(auto.info().kind, "wgpu", "{why}");
    if auto.info().kind == "cpu" {
        assert!(why.contains(NO_F64), "{why}");
    }
    // With 64-bit floats every precision is offered.
    if had_f64 {
        let g = GpuBackend::on_device(Arc::new(device::open().unwrap()), b, single, &atoms, None).unwrap();
        assert!(g.info().precisions.iter().all(|(_, why)| why.is_none()), "{:?}", g.info().precisions);
    }
}
