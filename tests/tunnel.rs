//! The wind tunnel's inflow zone (`physics::tunnel`) on the CPU backend: the zone sets the
//! stream velocity and the temperature it should and the fluid downstream starts to move;
//! the momentum (and energy) the zone reports is what the system gained; bad settings are
//! refused naming the field; the scene section parses, builds and round-trips. The CUDA
//! backend against this one is in `tests/cuda.rs` (skipped without a device).

mod common;

use argon_sandbox::physics::params::{SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::physics::tunnel::Tunnel;
use argon_sandbox::scene::{Scene, SceneError};
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomState, Backend, SimError, Snapshot};
use common::jiggled_fluid;

const T: f64 = 1.2;
const TUNNEL: Tunnel = Tunnel { speed: 0.5, zone: 4.0, start_spin: None };

/// A periodic box of LJ fluid at rest (density 0.8, T = 1.2, zero momentum): 8 x 4 x 4 FCC
/// cells, 13.7 x 6.8 x 6.8 sigma, 512 atoms.
fn fluid() -> (SimBox, AtomState) {
    jiggled_fluid([8, 4, 4], [false; 3], 0.05, &[], 3)
}

fn params(tunnel: Option<Tunnel>) -> SimParams {
    SimParams {
        temperature: T,
        tunnel,
        precision: Precision::Double,
        telemetry_every: 50,
        seed: 11,
        ..SimParams::default()
    }
}

/// The velocities of the atoms in the zone `[0, zone)` and of those downstream of it.
fn split(s: &Snapshot, zone: f64) -> (Vec<[f64; 3]>, Vec<[f64; 3]>) {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for (p, v) in s.atoms.positions.iter().zip(&s.atoms.velocities) {
        if s.sim_box.wrap(*p)[0] < zone { inside.push(*v) } else { outside.push(*v) }
    }
    (inside, outside)
}

fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// (a) After each step every atom in the zone has a fresh draw, so the zone's atoms in
/// states 20 steps apart are independent samples: their mean velocity is (U, 0, 0) and their
/// temperature about it T, within 4 standard errors. Downstream, the fluid that was at rest
/// moves along +x.
#[test]
fn the_zone_sets_the_stream_and_the_temperature_and_the_fluid_follows() {
    let (b, atoms) = fluid();
    let mut sim = CpuBackend::new(b, params(Some(TUNNEL)), &atoms, None).unwrap();
    sim.advance(200).unwrap();
    let (mut v, mut heat) = ([Vec::new(), Vec::new(), Vec::new()], Vec::new());
    let mut downstream = Vec::new();
    for _ in 0..20 {
        sim.advance(20).unwrap();
        let s = sim.copy_state().unwrap();
        let (inside, outside) = split(&s, TUNNEL.zone);
        for w in &inside {
            for k in 0..3 {
                v[k].push(w[k]);
            }
            let c = [w[0] - TUNNEL.speed, w[1], w[2]];
            heat.push((c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) / 3.0);
        }
        downstream.push(outside.iter().map(|w| w[0]).sum::<f64>() / outside.len() as f64);
    }
    assert!(v[0].len() > 2000, "only {} samples in the zone", v[0].len());
    for k in 0..3 {
        let (mean, se) = mean_se(&v[k]);
        let want = if k == 0 { TUNNEL.speed } else { 0.0 };
        eprintln!("zone mean v[{k}] = {mean:.4} +- {se:.4} (want {want})");
        assert!((mean - want).abs() < 4.0 * se, "axis {k}: {mean} +- {se}, want {want}");
    }
    let (t, se) = mean_se(&heat);
    eprintln!("zone temperature {t:.4} +- {se:.4} (want {T})");
    assert!((t - T).abs() < 4.0 * se, "zone temperature {t} +- {se}, want {T}");
    // Downstream: a mean flow along +x, well above its noise (sqrt(T / N) per state).
    let (u, _) = mean_se(&downstream);
    let noise = (T / 350.0f64).sqrt();
    eprintln!("downstream mean vx {u:.4} (noise of one state {noise:.4})");
    assert!(u > 4.0 * noise / (downstream.len() as f64).sqrt() && u > 0.05, "downstream mean vx {u}");
    assert!(downstream.last().unwrap() > &0.1, "the flow downstream did not grow: {downstream:?}");
}

/// (b) With no external force, the total momentum changes only through the zone: its change
/// over the run equals the sum of the zone's reported momentum to 1e-9 (relative, double
/// precision). The energy gained is the zone's reported heat, up to the integrator's error.
#[test]
fn the_zones_momentum_bookkeeping_adds_up() {
    let (b, atoms) = fluid();
    let mut sim = CpuBackend::new(b, params(Some(TUNNEL)), &atoms, None).unwrap();
    let first = sim.measure().unwrap();
    assert_eq!((first.tunnel_momentum, first.tunnel_heat), ([0.0; 3], 0.0), "a measure covers no step");
    sim.advance(600).unwrap();
    let records = sim.drain_telemetry();
    assert_eq!(records.len(), 12);
    let (mut given, mut heat) = ([0.0; 3], 0.0);
    for r in &records {
        for k in 0..3 {
            given[k] += r.tunnel_momentum[k];
        }
        heat += r.tunnel_heat;
    }
    let last = records.last().unwrap();
    let gained: [f64; 3] = std::array::from_fn(|k| last.momentum[k] - first.momentum[k]);
    let scale = given.iter().map(|x| x * x).sum::<f64>().sqrt();
    eprintln!("momentum gained {gained:?}, reported by the zone {given:?}");
    assert!(given[0] > 10.0, "the zone gave little x momentum: {given:?}");
    for k in 0..3 {
        assert!(
            (gained[k] - given[k]).abs() <= 1e-9 * scale,
            "axis {k}: gained {} != reported {}",
            gained[k],
            given[k]
        );
    }
    let de = last.total_energy() - first.total_energy();
    eprintln!("energy gained {de:.5}, heat reported {heat:.5}");
    assert!(heat.abs() > 1.0);
    assert!((de - heat).abs() < 0.01 * heat.abs() + 0.05, "energy gained {de} != zone heat {heat}");
    // Without a tunnel nothing is reported and the momentum stays.
    let mut plain = CpuBackend::new(b, params(None), &atoms, None).unwrap();
    plain.advance(100).unwrap();
    for r in plain.drain_telemetry() {
        assert_eq!((r.tunnel_momentum, r.tunnel_heat), ([0.0; 3], 0.0));
        assert!(r.momentum.iter().all(|p| p.abs() < 1e-9), "{:?}", r.momentum);
    }
}

fn field_of(e: SimError) -> &'static str {
    match e {
        SimError::Param(p) => p.field,
        other => panic!("not a parameter error: {other}"),
    }
}

/// (c) Bad settings are refused naming the field: a zone wider than half the box, a tunnel
/// on a walled x, a speed beyond Mach 1, negative and NaN values, hybrid Monte Carlo; a live
/// change to a bad speed leaves the running settings alone. Beyond Mach 0.3 a warning says
/// compressibility matters.
#[test]
fn bad_tunnels_are_refused_naming_the_field() {
    let (b, atoms) = fluid();
    let refuse = |t: Tunnel, b: SimBox, atoms: &AtomState| {
        let e = CpuBackend::new(b, params(Some(t)), atoms, None).err().expect("refused");
        eprintln!("{e}");
        field_of(e)
    };
    let l = b.length()[0];
    assert_eq!(refuse(Tunnel { zone: l + 1.0, ..TUNNEL }, b, &atoms), "tunnel.zone");
    assert_eq!(refuse(Tunnel { zone: 0.6 * l, ..TUNNEL }, b, &atoms), "tunnel.zone");
    for zone in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(refuse(Tunnel { zone, ..TUNNEL }, b, &atoms), "tunnel.zone");
    }
    for speed in [-0.1, f64::NAN, f64::INFINITY] {
        assert_eq!(refuse(Tunnel { speed, ..TUNNEL }, b, &atoms), "tunnel.speed");
    }
    // Beyond Mach 1 (the liquid's sound speed at rho 0.8, T 1.2 is about 5.7 sigma/tau).
    let p = params(Some(TUNNEL));
    let (mach, c, eos) = p.tunnel_mach(&p.mean_fluid(&b, &atoms.types)).unwrap();
    assert!(eos && c > 4.0 && mach < 0.3, "Mach {mach}, c {c}");
    assert_eq!(refuse(Tunnel { speed: 1.01 * c, ..TUNNEL }, b, &atoms), "tunnel.speed");
    let e = CpuBackend::new(b, params(Some(Tunnel { speed: 2.0 * c, ..TUNNEL })), &atoms, None).err().unwrap();
    assert!(e.to_string().contains("is Mach 2:"), "{e}");
    // A walled x.
    let (walled, wa) = jiggled_fluid([8, 4, 4], [true, false, false], 0.05, &[], 3);
    assert_eq!(refuse(TUNNEL, walled, &wa), "tunnel");
    // Hybrid Monte Carlo.
    let hmc = SimParams { thermostat: Thermostat::Hmc { trajectory: 10 }, ..params(Some(TUNNEL)) };
    assert_eq!(hmc.validate(&b).unwrap_err().field, "tunnel");
    // A live change beyond Mach 1 is refused and the running settings stay.
    let mut sim = CpuBackend::new(b, params(Some(TUNNEL)), &atoms, None).unwrap();
    let fast = params(Some(Tunnel { speed: 10.0, ..TUNNEL }));
    assert_eq!(field_of(sim.set_params(fast).unwrap_err()), "tunnel.speed");
    assert_eq!(sim.params().tunnel, Some(TUNNEL));
    sim.advance(10).unwrap();
    // Mach 0.3 warns, below it nothing; a thermostat that brakes the stream warns too.
    let fluid = p.mean_fluid(&b, &atoms.types);
    assert_eq!(p.tunnel_warning(&fluid), None);
    let brisk = params(Some(Tunnel { speed: 0.5 * c, ..TUNNEL }));
    let w = brisk.tunnel_warning(&fluid).expect("a warning");
    assert!(w.contains("stream is Mach 0.5 (") && w.contains("compressibility"), "{w}");
    sim.set_params(brisk).unwrap();
    let csvr = SimParams { thermostat: Thermostat::Csvr { tau: 0.5, relative_to_flow: false }, ..p.clone() };
    assert!(csvr.tunnel_warning(&fluid).unwrap().contains("relative_to_flow"));
    let relative = SimParams { thermostat: Thermostat::Csvr { tau: 0.5, relative_to_flow: true }, ..p };
    assert_eq!(relative.tunnel_warning(&fluid), None);
}

const SCENE: &str = r#"(
    version: 1,
    name: "Tunnel",
    box: (size: (13.68, 6.84, 6.84), boundaries: (Periodic, Periodic, Periodic)),
    temperature_k: 143.76,
    thermostat: Csvr(tau: 1.0, relative_to_flow: true),
    atoms: [Lattice(kind: Fcc, density: 0.8)],
    tunnel: (speed: 0.8, zone: 3.0),
)"#;

/// (d) A scene's `tunnel:` section parses, builds into the parameters, and round-trips;
/// left-out fields take the defaults; bad values are located in the text.
#[test]
fn a_scene_tunnel_section_parses_builds_and_round_trips() {
    let scene = Scene::from_str(SCENE, "tunnel.ron").unwrap();
    assert_eq!(scene.tunnel, Some(Tunnel { speed: 0.8, zone: 3.0, start_spin: None }));
    let text = scene.to_ron();
    assert!(text.contains("tunnel"), "{text}");
    assert_eq!(Scene::from_str(&text, "again.ron").unwrap(), scene);
    let setup = scene.build().unwrap();
    assert_eq!(setup.params.tunnel, Some(Tunnel { speed: 0.8, zone: 3.0, start_spin: None }));
    // Generated atoms start with the stream (an impulsive start): mean x velocity U.
    let n = setup.atoms.len() as f64;
    let mean_vx = setup.atoms.velocities.iter().map(|v| v[0]).sum::<f64>() / n;
    assert!((mean_vx - 0.8).abs() < 1e-12, "mean vx {mean_vx}");
    // The zone is at work: it redraws velocities every step, so it reports heat.
    let mut sim = CpuBackend::new(setup.sim_box, setup.params, &setup.atoms, None).unwrap();
    sim.advance(100).unwrap();
    let first = sim.drain_telemetry().remove(0);
    assert!(first.tunnel_heat != 0.0 && first.tunnel_momentum != [0.0; 3], "{first:?}");
    // Defaults.
    let defaults = Scene::from_str(&SCENE.replace("(speed: 0.8, zone: 3.0)", "()"), "d.ron").unwrap();
    assert_eq!(defaults.tunnel, Some(Tunnel::default()));
    assert_eq!(Tunnel::default(), TUNNEL);
    // No section, no tunnel, and nothing written.
    let none = Scene::from_str(&SCENE.replace("tunnel: (speed: 0.8, zone: 3.0),", ""), "n.ron").unwrap();
    assert_eq!(none.tunnel, None);
    assert!(!none.to_ron().contains("tunnel"));
    // Bad values, located: the field named with its line.
    let located = |text: String, field: &str| {
        let e = Scene::from_str(&text, "bad.ron").unwrap_err();
        eprintln!("{e}");
        let (SceneError::OutOfRange { at, field: f, .. } | SceneError::Invalid { at, field: f, .. }) = &e else {
            panic!("{e}")
        };
        assert_eq!(f, field, "{e}");
        assert_eq!(at.line, 8, "{e}");
    };
    located(SCENE.replace("zone: 3.0", "zone: 9.0"), "tunnel.zone");
    located(SCENE.replace("speed: 0.8", "speed: -1.0"), "tunnel.speed");
    located(SCENE.replace("speed: 0.8", "speed: 40.0"), "tunnel.speed");
    located(SCENE.replace("(Periodic, Periodic, Periodic)", "(Wall, Periodic, Periodic)"), "tunnel");
    let e = Scene::from_str(&SCENE.replace("zone: 3.0", "zone: 3.0, width: 1.0"), "u.ron").unwrap_err();
    assert!(e.to_string().contains("unknown field `width` in `tunnel`"), "{e}");
}
