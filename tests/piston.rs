//! The piston (`physics/piston.rs`) on the CPU backend:
//! (a) with NVE atoms and no friction, H = KE + PE + M v^2 / 2 + P_ext A (h - lo_y) is
//! conserved in every precision while the piston swings through several sigma (and the atoms'
//! energy alone is not, so the piston terms are what balance it);
//! (b) the piston's state survives snapshot/restore, a precision switch, checkpoints and
//! rollback, and a scene saved with the running state (`resume`), bit for bit;
//! (c) dragging (`set_piston` held) moves it at the set velocity, and release frees it;
//! (d) scene files: the `piston` section round-trips; a periodic y, a bad pressure and an
//! unknown field are refused naming the field; the CUDA backend refuses it (or is skipped).

mod common;

use argon_sandbox::physics::params::SimParams;
use argon_sandbox::physics::piston::{MIN_GAP, PistonParams, PistonState};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::scene::{Scene, SceneError, SimSetup};
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{Backend, SimError, Telemetry};

/// A walled-y tank (x and z periodic) filled with an fcc lattice at `density` (lattice constant
/// 2 sigma at 0.5, so 10 x 10 fits whole cells), with a piston at `pressure`.
fn scene_text(size: [f64; 3], density: f64, temperature_k: f64, thermostat: &str, piston: &str) -> String {
    format!(
        "(version: 1, box: (size: ({}, {}, {}), boundaries: (Periodic, Wall, Periodic)),
          potential: (cutoff: 2.5, shift: true),
          temperature_k: {temperature_k}, thermostat: {thermostat},
          atoms: [Lattice(kind: Fcc, density: {density})],
          {piston}
          seed: 11)",
        size[0], size[1], size[2]
    )
}

fn build(text: &str) -> SimSetup {
    Scene::from_str(text, "test.ron").expect("scene").build().expect("build")
}

fn open(setup: &SimSetup, precision: Precision) -> CpuBackend {
    let params = SimParams { precision, telemetry_every: 20, ..setup.params.clone() };
    CpuBackend::new(setup.sim_box, params, &setup.atoms, None).expect("backend")
}

/// H per atom: the atoms' energy plus the piston's kinetic and P V terms.
fn conserved(t: &Telemetry) -> f64 {
    (t.total_energy() + t.piston.expect("piston telemetry").energy) / t.n_atoms as f64
}

fn nve_setup() -> SimSetup {
    // 650 atoms at rho 0.5, T* = 1.5 (P ~ 0.6): P_ext = 3 pushes the piston down ~3.5 sigma and
    // it swings back; a light piston (50 m) swings a few times in 30 tau.
    build(&scene_text(
        [10.0, 14.0, 10.0],
        0.5,
        1.5 * 119.8,
        "Nve",
        "piston: (pressure: 3.0, mass: 50.0, damping: 0.0),",
    ))
}

/// Runs 30 tau at `dt`; returns max |H(t) - H(0)| per atom and the atoms' own largest energy
/// change per atom, after checking that the piston swung without reaching a stop.
fn conservation(precision: Precision, dt: f64) -> (f64, f64) {
    let setup = nve_setup();
    let mut sim = open(&setup, precision);
    sim.set_params(SimParams { dt, ..sim.params().clone() }).unwrap();
    let t0 = common::measure(&mut sim);
    let h0 = conserved(&t0);
    let steps = (30.0 / dt).round() as u64;
    sim.advance(steps).expect("advance");
    let rows = sim.drain_telemetry();
    assert_eq!(rows.len() as u64, steps / 20);
    let (lo, hi) = PistonParams::limits(&setup.sim_box);
    let heights: Vec<f64> = rows.iter().map(|r| r.piston.unwrap().height).collect();
    let (h_min, h_max) = heights.iter().fold((f64::MAX, f64::MIN), |(a, b), &h| (a.min(h), b.max(h)));
    let dh = rows.iter().map(|r| (conserved(r) - h0).abs()).fold(0.0, f64::max);
    let de_atoms = rows.iter().map(|r| (r.etotal_per_atom() - t0.etotal_per_atom()).abs()).fold(0.0, f64::max);
    println!(
        "{precision:?} dt = {dt}: N = {}, piston {h_min:.3}..{h_max:.3} sigma (limits {lo}..{hi}); \
         max |dH|/N = {dh:.2e}, max |dE_atoms|/N = {de_atoms:.2e}",
        t0.n_atoms
    );
    // The piston really moves (several sigma) and comes back up, never touching a hard stop
    // (which would break H).
    assert!(h_max - h_min > 3.0, "the piston barely moved: {h_min}..{h_max}");
    assert!(h_min > lo + 0.5 && h_max <= hi, "the piston reached a stop: {h_min}..{h_max}");
    let i_min = heights.iter().position(|&h| h == h_min).unwrap();
    assert!(heights[i_min..].iter().any(|&h| h > h_min + 1.0), "no swing back up: {heights:?}");
    (dh, de_atoms)
}

// The bounds: with the same tank and no piston, the atoms' energy error at dt = 0.005 is
// about 1.5e-3 per atom (the lattice starting against the stiff walls), scaling as dt^2; the
// piston runs measured 4.1e-3 to 4.4e-3 (double, mixed and single alike at this size) and
// 1.1e-3 at dt = 0.0025. The trajectory is chaotic, so the bound leaves room for round-off
// on other machines; the dt^2 scaling is the sharper check.

#[test]
fn conserved_quantity_double_and_its_dt_squared_scaling() {
    let (dh, de_atoms) = conservation(Precision::Double, 0.005);
    assert!(dh < 8e-3, "max |H(t) - H(0)| per atom = {dh:e}");
    // Without the piston's terms the atoms' energy changes by far more: the terms matter.
    assert!(de_atoms > 100.0 * dh, "the atoms' energy hardly changed ({de_atoms:e}): the test would be vacuous");
    // The error is the integrator's: halving dt cuts it by about 4 (an inconsistent piston
    // force would leave an error that does not shrink).
    let (dh_half, _) = conservation(Precision::Double, 0.0025);
    assert!(dh_half < dh / 2.5, "dt 0.005: {dh:e}, dt 0.0025: {dh_half:e}");
}

#[test]
fn conserved_quantity_mixed() {
    let (dh, _) = conservation(Precision::Mixed, 0.005);
    assert!(dh < 8e-3, "max |H(t) - H(0)| per atom = {dh:e}");
}

#[test]
fn conserved_quantity_single() {
    let (dh, _) = conservation(Precision::Single, 0.005);
    assert!(dh < 8e-3, "max |H(t) - H(0)| per atom = {dh:e}");
}

#[test]
fn telemetry_reports_height_force_and_volume() {
    let setup = nve_setup();
    let mut sim = open(&setup, Precision::Double);
    let t = common::measure(&mut sim);
    let p = t.piston.expect("piston telemetry");
    let area = 10.0 * 10.0;
    assert_eq!(p.height, 14.0, "the piston starts at the box top");
    assert_eq!(p.velocity, 0.0);
    assert!((p.volume - area * 14.0).abs() < 1e-9, "{}", p.volume);
    assert_eq!(p.pressure_set, 3.0);
    // The force per area is the sum of the top wall's forces on the atoms over A: recompute it
    // from the atoms with the wall evaluator.
    let snap = sim.snapshot().unwrap();
    let wall = argon_sandbox::physics::wall::Wall93::<f64>::new(&setup.params.wall);
    let push: f64 = snap.atoms.positions.iter().map(|x| wall.eval(14.0 - x[1]).0).sum();
    assert!((p.force_per_area - push / area).abs() < 1e-12, "{} vs {}", p.force_per_area, push / area);
    // The pressure is the virial pressure of the volume under the piston.
    let twice_ke = 2.0 * t.kinetic_energy;
    assert!((t.pressure - (twice_ke + t.virial) / (3.0 * p.volume)).abs() < 1e-12);
    // Without a piston there is no piston telemetry.
    let mut plain = sim;
    plain.set_params(SimParams { piston: None, ..plain.params().clone() }).unwrap();
    assert!(common::measure(&mut plain).piston.is_none());
}

fn piston_of(sim: &mut CpuBackend) -> PistonState {
    sim.snapshot().unwrap().piston.expect("a piston state")
}

#[test]
fn state_survives_snapshots_precision_switches_rollback_and_resume() {
    let setup = build(&scene_text(
        [10.0, 14.0, 10.0],
        0.5,
        2.0 * 119.8,
        "Csvr(tau: 0.5)",
        "piston: (pressure: 1.5, mass: 50.0),",
    ));
    let mut a = open(&setup, Precision::Double);
    a.advance(300).unwrap();
    a.checkpoint().unwrap();
    let snap = a.snapshot().unwrap();
    let s = snap.piston.expect("piston");
    assert!(s.height < 14.0 && s.velocity != 0.0, "{s:?}");
    // Restore into a fresh backend: both continue bit for bit alike.
    let mut b = open(&setup, Precision::Double);
    b.restore(&snap).unwrap();
    a.advance(200).unwrap();
    b.advance(200).unwrap();
    let (sa, sb) = (a.snapshot().unwrap(), b.snapshot().unwrap());
    assert_eq!(sa.piston, sb.piston);
    assert_eq!(sa.atoms, sb.atoms);
    // Rollback returns to the checkpoint's piston.
    assert_eq!(a.rollback().unwrap(), Some(300));
    assert_eq!(piston_of(&mut a), s);
    // A precision switch keeps it (mixed keeps f64 state: exactly).
    a.set_params(SimParams { precision: Precision::Mixed, ..a.params().clone() }).unwrap();
    assert_eq!(piston_of(&mut a), s);
    // Changing the pressure keeps the state; switching the piston off and on restarts it at the top.
    a.set_params(SimParams { piston: Some(PistonParams::at_pressure(0.7)), ..a.params().clone() }).unwrap();
    assert_eq!(piston_of(&mut a), s);
    a.set_params(SimParams { piston: None, ..a.params().clone() }).unwrap();
    assert_eq!(a.snapshot().unwrap().piston, None);
    a.set_params(SimParams { piston: Some(PistonParams::at_pressure(0.7)), ..a.params().clone() }).unwrap();
    assert_eq!(piston_of(&mut a), PistonState { height: 14.0, velocity: 0.0 });

    // Saved as a scene with the running state, loaded back: the same piston, the same run.
    let scene = Scene::from_str(
        &scene_text([10.0, 14.0, 10.0], 0.5, 2.0 * 119.8, "Csvr(tau: 0.5)", "piston: (pressure: 1.5, mass: 50.0),"),
        "t.ron",
    )
    .unwrap();
    let text = scene.with_state(&snap).to_ron();
    assert!(text.contains("piston"), "{text}");
    let back = Scene::from_str(&text, "saved.ron").expect("reload").build().expect("build");
    assert_eq!(back.piston, Some(s));
    let mut c = open(&back, Precision::Double);
    argon_sandbox::sim::start_at(&mut c, back.step, back.time, back.piston).unwrap();
    let mut d = open(&setup, Precision::Double);
    d.restore(&snap).unwrap();
    c.advance(100).unwrap();
    d.advance(100).unwrap();
    assert_eq!(c.snapshot().unwrap().piston, d.snapshot().unwrap().piston);
}

#[test]
fn dragging_follows_the_target_and_release_frees_it() {
    let setup = nve_setup();
    let mut sim = open(&setup, Precision::Double);
    // Dragged down to 11: it moves at the capped drag speed, then settles on the target.
    sim.drag_piston(Some(11.0)).unwrap();
    sim.advance(20).unwrap();
    let s = piston_of(&mut sim);
    let speed_max = argon_sandbox::physics::piston::DRAG_SPEED_MAX;
    assert!((s.height - (14.0 - 20.0 * 0.005 * speed_max)).abs() < 1e-9, "{s:?}");
    sim.advance(600).unwrap();
    let s = piston_of(&mut sim);
    assert!((s.height - 11.0).abs() < 1e-3 && s.velocity.abs() < 1e-2, "{s:?}");
    // Released: forces act again (the compressed fluid pushes it up).
    sim.drag_piston(None).unwrap();
    sim.advance(200).unwrap();
    let free = piston_of(&mut sim);
    assert!(free.velocity > 0.05 && free.height > 11.0, "{free:?}");
    // Non-finite targets and a backend without a piston are refused with a message.
    assert!(matches!(sim.drag_piston(Some(f64::NAN)), Err(SimError::Invalid(_))));
    sim.set_params(SimParams { piston: None, ..sim.params().clone() }).unwrap();
    let e = sim.drag_piston(Some(5.0)).unwrap_err();
    assert!(e.to_string().contains("switch the piston on"), "{e}");
}

#[test]
fn hard_stops_hold_the_piston_in_the_tank() {
    // One atom resting below the minimum gap, out of every wall's reach: nothing pushes back,
    // so P_ext drives the piston down to the minimum gap, where it stops dead.
    let b = argon_sandbox::physics::sim_box::SimBox::new([6.0, 10.0, 6.0], [true, false, true]);
    let piston = PistonParams { pressure: 1.0, mass: 10.0, damping: 0.0 };
    let params = SimParams { piston: Some(piston), ..SimParams::default() };
    let atoms = common::at_rest(vec![[3.0, 0.9, 3.0]]);
    let mut sim = CpuBackend::new(b, params, &atoms, None).unwrap();
    sim.advance(2000).unwrap();
    assert_eq!(piston_of(&mut sim), PistonState { height: MIN_GAP, velocity: 0.0 });
    // Without pressure, sent upward and released: it coasts to the top and stops there.
    sim.set_params(SimParams { piston: Some(PistonParams { pressure: 0.0, ..piston }), ..sim.params().clone() })
        .unwrap();
    sim.drag_piston(Some(100.0)).unwrap();
    sim.advance(10).unwrap();
    sim.drag_piston(None).unwrap();
    sim.advance(1000).unwrap();
    assert_eq!(piston_of(&mut sim), PistonState { height: 10.0, velocity: 0.0 });
}

fn scene_error(text: &str) -> SceneError {
    match Scene::from_str(text, "bad.ron").and_then(|s| s.build()) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e,
    }
}

#[test]
fn scene_piston_section_round_trips_and_bad_values_are_refused() {
    let text = scene_text([10.0, 14.0, 10.0], 0.5, 239.6, "Nve", "piston: (pressure: 1.25, mass: 80.0, damping: 0.5),");
    let scene = Scene::from_str(&text, "t.ron").unwrap();
    let p = scene.sim_params().piston.expect("piston");
    assert_eq!((p.pressure, p.mass, p.damping), (1.25, 80.0, 0.5));
    let again = Scene::from_str(&scene.to_ron(), "again.ron").unwrap();
    assert_eq!(again, scene);
    // Defaults for mass and damping.
    let text = scene_text([10.0, 14.0, 10.0], 0.5, 239.6, "Nve", "piston: (pressure: 1.0),");
    let p = Scene::from_str(&text, "t.ron").unwrap().sim_params().piston.unwrap();
    assert_eq!((p.mass, p.damping), (PistonParams::DEFAULT_MASS, PistonParams::DEFAULT_DAMPING));
    // No piston section: no piston.
    assert!(
        Scene::from_str(&scene_text([10.0, 14.0, 10.0], 0.5, 239.6, "Nve", ""), "t")
            .unwrap()
            .sim_params()
            .piston
            .is_none()
    );

    let periodic = scene_text([10.0, 14.0, 10.0], 0.5, 239.6, "Nve", "piston: (pressure: 1.0),")
        .replace("(Periodic, Wall, Periodic)", "(Periodic, Periodic, Periodic)");
    let e = scene_error(&periodic).to_string();
    assert!(e.contains("piston") && e.contains("y is periodic") && e.contains("Wall"), "{e}");
    let e = scene_error(&scene_text([10.0, 14.0, 10.0], 0.5, 239.6, "Nve", "piston: (pressure: -2.0),")).to_string();
    assert!(e.contains("piston.pressure") && e.contains("[0, 50]") && e.contains(":"), "{e}");
    let e = scene_error(&scene_text([10.0, 14.0, 10.0], 0.5, 239.6, "Nve", "piston: (pressure: 1.0, mass: 0.0),"))
        .to_string();
    assert!(e.contains("piston.mass"), "{e}");
    let e = scene_error(&scene_text([10.0, 14.0, 10.0], 0.5, 239.6, "Nve", "piston: (pressure: 1.0, heigth: 3.0),"))
        .to_string();
    assert!(e.contains("heigth"), "{e}");
}

/// The CUDA backend runs the same piston: in double precision its trajectory follows the
/// CPU's (height, velocity, push, pressure on the piston's volume) over 400 steps, the
/// conserved quantity holds on the GPU in every precision, dragging moves it, and the state
/// survives a snapshot. `auto` picks CUDA for a piston scene when there is a device.
#[test]
fn cuda_runs_the_piston_like_the_cpu() {
    if !common::gpu() {
        return;
    }
    use argon_sandbox::sim::cuda::CudaBackend;
    let setup = nve_setup();
    let params = SimParams { precision: Precision::Double, telemetry_every: 20, ..setup.params.clone() };
    let mut cpu = CpuBackend::new(setup.sim_box, params.clone(), &setup.atoms, None).unwrap();
    let mut gpu = CudaBackend::new(setup.sim_box, params.clone(), &setup.atoms, None).unwrap();
    cpu.advance(400).unwrap();
    gpu.advance(400).unwrap();
    let (a, b) = (cpu.drain_telemetry(), gpu.drain_telemetry());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        let (px, py) = (x.piston.unwrap(), y.piston.unwrap());
        let close = |u: f64, v: f64| (u - v).abs() <= 1e-7 * (1.0 + u.abs());
        assert!(
            close(px.height, py.height)
                && close(px.velocity, py.velocity)
                && close(px.force_per_area, py.force_per_area),
            "step {}: CPU {px:?} vs CUDA {py:?}",
            x.step
        );
        assert!(close(x.pressure, y.pressure) && close(x.volume, y.volume), "step {}: P/V differ", x.step);
    }
    let moved = a.last().unwrap().piston.unwrap().height - setup.sim_box.hi[1];
    assert!(moved < -0.05, "the piston should have started down: {moved}");
    let s = gpu.snapshot().unwrap();
    assert!(s.piston.is_some_and(|p| (p.height - a.last().unwrap().piston.unwrap().height).abs() < 1e-7));

    for precision in [Precision::Single, Precision::Mixed, Precision::Double] {
        let p = SimParams { precision, telemetry_every: 20, ..setup.params.clone() };
        let mut g = CudaBackend::new(setup.sim_box, p, &setup.atoms, None).unwrap();
        let h0 = conserved(&g.measure().unwrap());
        g.advance(6_000).unwrap();
        let dh = g.drain_telemetry().iter().map(|r| (conserved(r) - h0).abs()).fold(0.0, f64::max);
        println!("CUDA {precision:?}: max |dH|/N over 30 tau = {dh:.2e}");
        assert!(dh < 8e-3, "{precision:?}: {dh}");
    }

    // Dragging down moves it toward the target; releasing frees it.
    let target = setup.sim_box.hi[1] - 3.0;
    gpu.drag_piston(Some(target)).unwrap();
    gpu.advance(400).unwrap();
    let h = gpu.measure().unwrap().piston.unwrap().height;
    assert!((h - target).abs() < 0.2, "dragged to {h}, target {target}");
    gpu.drag_piston(None).unwrap();
    gpu.advance(100).unwrap();

    let (b, why) = argon_sandbox::sim::open_backend(
        argon_sandbox::sim::BackendChoice::Auto,
        setup.sim_box,
        setup.params.clone(),
        &setup.atoms,
        None,
    )
    .expect("auto opens a backend");
    assert_eq!(b.info().kind, "cuda", "{why}");
}
