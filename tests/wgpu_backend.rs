//! The wgpu compute backend against the CPU backend and LAMMPS, on whatever adapter wgpu
//! finds (CI: Mesa's lavapipe; the GPU machine: the NVIDIA driver's Vulkan). Without an
//! adapter each test prints `skipped: no wgpu adapter` and passes, unless
//! ARGON_REQUIRE_RENDER=1 (as CI sets) makes that a failure.
//!
//! Forces in single precision within 1e-5 of the CPU's in double (norm-wise), for lists and
//! all pairs, in a periodic liquid (cells of about 40 atoms: the list build takes them 32
//! at a time), a tank with walls, gravity and a drive, a slab two cells thick along a
//! periodic axis, and a four-species mixture at per-pair cut-offs; checked and unchecked shader modules giving
//! the same forces bit for bit; LAMMPS's 200-step NVE thermo within 1e-4; NVE drift over
//! 20,000 steps; the thermostats' temperatures; identical reruns; a blow-up rolled back; a
//! CPU -> wgpu -> CPU switch keeping the atoms and the energy; refusals naming the backends
//! that run what this one does not yet.

mod common;

use argon_sandbox::io::extxyz::read_extxyz;
use argon_sandbox::physics::params::{Algorithm, SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::gpu::GpuBackend;
use argon_sandbox::sim::{AtomState, Backend};
use common::{jiggled_fluid, reference, rel, validation_dir};

use common::wgpu_adapter as adapter;

fn single(algorithm: Algorithm) -> SimParams {
    SimParams { algorithm, precision: Precision::Single, ..SimParams::default() }
}

/// Largest |F_gpu - F_cpu| over the largest |F_cpu|.
fn force_error(got: &[[f64; 3]], want: &[[f64; 3]]) -> f64 {
    let norm = |f: &[f64; 3]| (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
    let scale = want.iter().map(norm).fold(0.0, f64::max);
    got.iter().zip(want).map(|(a, b)| norm(&[a[0] - b[0], a[1] - b[1], a[2] - b[2]])).fold(0.0, f64::max) / scale
}

/// The atoms of `a` for which `want(index, position)` holds.
fn keep(a: &AtomState, want: impl Fn(usize, [f64; 3]) -> bool) -> AtomState {
    let k: Vec<usize> = (0..a.len()).filter(|&i| want(i, a.positions[i])).collect();
    AtomState {
        positions: k.iter().map(|&i| a.positions[i]).collect(),
        velocities: k.iter().map(|&i| a.velocities[i]).collect(),
        types: k.iter().map(|&i| a.types[i]).collect(),
        ..Default::default()
    }
}

fn systems() -> Vec<(&'static str, SimBox, SimParams, AtomState)> {
    let (b, atoms) = jiggled_fluid([6, 6, 6], [false; 3], 0.1, &[], 3);
    let (tb, tank) = jiggled_fluid([6, 5, 4], [true, true, false], 0.1, &[], 4);
    let tank_params = SimParams { gravity: 0.3, drive: 0.2, ..SimParams::default() };
    // Two cells across z: the list build visits each once and takes minimum images there.
    let (sb, slab) = jiggled_fluid([7, 7, 4], [false; 3], 0.1, &[], 5);
    let (mb, mix, species) = common::mixture::four_species_fluid(5);
    let mix_params = SimParams { species, ..SimParams::default() };
    // The list build's segments of a row: a box filled in its lower half only (its full rows
    // hold twice the mean, so their segments take them in two rounds), and a dilute gas with
    // walls along x (a segment spans many cells: long runs, and whole rows where periodic).
    let (hb, full) = jiggled_fluid([12, 6, 6], [false; 3], 0.1, &[], 7);
    let half = keep(&full, |k, p| p[1] < 0.5 * hb.length()[1] || k % 97 == 0);
    let (gb, dense) = jiggled_fluid([12, 6, 6], [true, false, false], 0.1, &[], 8);
    let gas = keep(&dense, |k, _| k % 9 == 0);
    vec![
        ("periodic liquid", b, SimParams::default(), atoms),
        ("lower half filled", hb, SimParams::default(), half),
        ("dilute gas, walls along x", gb, SimParams::default(), gas),
        ("tank with walls, gravity and a drive", tb, tank_params, tank),
        ("thin periodic slab", sb, SimParams::default(), slab.clone()),
        // The list range (3.5) past half the depth (6.84): one column, minimum images.
        ("thin slab, skin past half its depth", sb, SimParams { skin: 1.0, ..SimParams::default() }, slab),
        ("four-species mixture", mb, mix_params, mix),
    ]
}

#[test]
fn forces_and_energies_match_the_cpu() {
    if !adapter() {
        return;
    }
    for (name, b, p, atoms) in systems() {
        let cpu_params = SimParams { precision: Precision::Double, algorithm: Algorithm::Neighbors, ..p.clone() };
        let mut cpu = CpuBackend::new(b, cpu_params, &atoms, None).unwrap();
        let want = cpu.forces().unwrap();
        let want_t = cpu.measure().unwrap();
        for algorithm in [Algorithm::Neighbors, Algorithm::AllPairsTiled] {
            let params = SimParams { algorithm, precision: Precision::Single, ..p.clone() };
            let mut g = GpuBackend::new(b, params, &atoms, None).unwrap();
            let got = g.forces().unwrap();
            if algorithm == Algorithm::Neighbors {
                assert_eq!(g.pair_search(), "neighbour list", "{name}: the list fell back");
            }
            let err = force_error(&got, &want);
            assert!(err < 1e-5, "{name}, {algorithm:?}: forces off by {err:e}");
            let t = g.measure().unwrap();
            for (what, a, c) in [
                ("pair energy", t.pair_energy, want_t.pair_energy),
                ("external energy", t.external_energy, want_t.external_energy),
                ("virial", t.virial, want_t.virial),
                ("kinetic energy", t.kinetic_energy, want_t.kinetic_energy),
            ] {
                let off = (a - c).abs() / c.abs().max(1.0);
                assert!(off < 1e-5, "{name}, {algorithm:?}: {what} {a} vs CPU {c}");
            }
            for k in 0..3 {
                assert!((t.momentum[k] - want_t.momentum[k]).abs() < 1e-4, "{name}: momentum {:?}", t.momentum);
            }
        }
    }
}

/// wgpu's runtime bounds checks change nothing: checked and trusted modules agree bit for bit.
#[test]
fn checked_and_unchecked_shaders_give_the_same_forces() {
    if !adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 6);
    let run = |checked: bool| {
        let mut g = GpuBackend::with_checks(b, single(Algorithm::Neighbors), &atoms, None, checked).unwrap();
        g.advance(30).unwrap();
        g.forces().unwrap()
    };
    assert_eq!(run(true), run(false));
}

/// The held-out LAMMPS trajectory (4,000 atoms, NVE) in single precision: thermo within 1e-4.
#[test]
fn lammps_trajectory_in_single_precision() {
    if !adapter() {
        return;
    }
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
    let p = SimParams { telemetry_every: 50, ..single(Algorithm::Neighbors) };
    let mut g = GpuBackend::new(f.sim_box, p, &atoms, None).unwrap();
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
            assert!(off < 1e-4, "step {} {col}: {mine} vs LAMMPS {} ({off:.1e})", t.step, want[col]);
        }
    }
    eprintln!("largest relative difference from LAMMPS over 200 steps: {worst:.1e}");
}

/// Total energy in NVE over 20,000 steps drifts less than 1e-3 per atom (epsilon) in single.
#[test]
fn nve_energy_is_conserved() {
    if !adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.05, &[], 7);
    let p = SimParams { telemetry_every: 1000, ..single(Algorithm::Neighbors) };
    let mut g = GpuBackend::new(b, p, &atoms, None).unwrap();
    let e0 = g.measure().unwrap().etotal_per_atom();
    g.advance(20_000).unwrap();
    let t = g.drain_telemetry();
    assert_eq!(t.len(), 20);
    let drift = t.iter().map(|x| (x.etotal_per_atom() - e0).abs()).fold(0.0, f64::max);
    assert!(drift < 1e-3, "energy drifted {drift:e} per atom");
}

/// Berendsen, CSVR and Langevin hold the target temperature.
#[test]
fn thermostats_hold_the_target() {
    if !adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.05, &[], 8);
    for thermostat in [
        Thermostat::Berendsen { tau: 0.1, relative_to_flow: false },
        Thermostat::Csvr { tau: 0.1, relative_to_flow: false },
        Thermostat::Langevin { damp: 0.2 },
    ] {
        let p = SimParams { thermostat, temperature: 0.9, telemetry_every: 10, ..single(Algorithm::Neighbors) };
        let mut g = GpuBackend::new(b, p, &atoms, None).unwrap();
        g.advance(1000).unwrap();
        g.drain_telemetry();
        g.advance(2000).unwrap();
        let ts: Vec<f64> = g.drain_telemetry().iter().map(|t| t.temperature).collect();
        let mean = common::mean(&ts);
        assert!((mean - 0.9).abs() < 0.02, "{thermostat:?}: mean T {mean}");
        if matches!(thermostat, Thermostat::Berendsen { .. }) {
            continue;
        }
        // Canonical fluctuations: the kinetic temperature's relative spread is sqrt(2 / 3N).
        let sd = (ts.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / ts.len() as f64).sqrt();
        let want = mean * (2.0 / (3.0 * atoms.len() as f64)).sqrt();
        assert!(sd > 0.6 * want && sd < 1.5 * want, "{thermostat:?}: spread {sd} vs canonical {want}");
    }
}

/// Steps without energies take the list forces with several threads an atom (small
/// systems): after such a step the forces equal, to f32 round-off, those a fresh backend
/// computes from the same state with one thread an atom (as every energy step does), in a
/// liquid and a tank with walls, gravity and a drive.
#[test]
fn split_and_whole_force_kernels_agree() {
    if !adapter() {
        return;
    }
    for (name, b, p, atoms) in systems().into_iter().take(2) {
        let params = SimParams { telemetry_every: 1000, ..SimParams { precision: Precision::Single, ..p } };
        let mut g = GpuBackend::new(b, params.clone(), &atoms, None).unwrap();
        g.advance(5).unwrap();
        let split = g.forces().unwrap();
        let snap = g.copy_state().unwrap();
        let mut fresh = GpuBackend::new(snap.sim_box, params, &snap.atoms, None).unwrap();
        let whole = fresh.forces().unwrap();
        let err = force_error(&split, &whole);
        assert!(err < 1e-5, "{name}: split and whole kernels differ by {err:e}");
    }
}

/// The same run twice gives the same bits (fixed-order sums, cells ordered by id).
#[test]
fn reruns_are_identical() {
    if !adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 9);
    let run = || {
        let p = SimParams { thermostat: Thermostat::Langevin { damp: 0.5 }, ..single(Algorithm::Neighbors) };
        let mut g = GpuBackend::new(b, p, &atoms, None).unwrap();
        g.advance(200).unwrap();
        let t: Vec<u64> = g.drain_telemetry().iter().map(|t| t.total_energy().to_bits()).collect();
        (g.snapshot().unwrap().atoms, t)
    };
    assert_eq!(run(), run());
}

/// A blow-up is reported with its step and rolled back to the checkpoint.
#[test]
fn blow_ups_roll_back() {
    if !adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 10);
    let open = |b: SimBox, p: SimParams, a: &AtomState| -> Box<dyn Backend> {
        Box::new(GpuBackend::new(b, p, a, None).unwrap())
    };
    common::blowup::huge_time_step(&open, b, single(Algorithm::Neighbors), &atoms);
    common::blowup::atoms_on_top_of_each_other(&open, b, single(Algorithm::Neighbors), &atoms);
    let tank = SimBox::new([12.0, 10.0, 10.0], [false, true, true]);
    common::blowup::atom_leaving_the_tank(&open, tank, single(Algorithm::Neighbors));
}

/// CPU -> wgpu -> CPU, as the app's live switch does (snapshot, open, restore): the atoms and
/// the energy carry over.
#[test]
fn switching_backends_keeps_the_state() {
    if !adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 11);
    let p = single(Algorithm::Neighbors);
    let mut cpu = CpuBackend::new(b, p.clone(), &atoms, None).unwrap();
    cpu.advance(50).unwrap();
    let s1 = cpu.snapshot().unwrap();
    let e1 = cpu.measure().unwrap().total_energy();
    let mut g = GpuBackend::new(s1.sim_box, p.clone(), &s1.atoms, None).unwrap();
    g.restore(&s1).unwrap();
    let eg = g.measure().unwrap().total_energy();
    assert!(rel(eg, e1) < 1e-5, "wgpu {eg} vs CPU {e1}");
    g.advance(50).unwrap();
    let s2 = g.snapshot().unwrap();
    assert_eq!(s2.atoms.len(), atoms.len());
    assert_eq!(s2.step, 100);
    let e2 = g.measure().unwrap().total_energy();
    let mut back = CpuBackend::new(s2.sim_box, p, &s2.atoms, None).unwrap();
    back.restore(&s2).unwrap();
    let e3 = back.measure().unwrap().total_energy();
    assert!(rel(e3, e2) < 1e-5, "CPU {e3} vs wgpu {e2}");
    assert!(rel(e2, e1) < 1e-3, "NVE energy {e1} -> {e2} over 50 steps");
}

/// What this backend does not run yet is refused, naming the backends that do (mixed and
/// double precision where the adapter has no 64-bit floats: tests/wgpu_precision.rs).
#[test]
fn what_is_not_there_yet_is_refused_by_name() {
    let (b, atoms) = jiggled_fluid([4, 4, 4], [false; 3], 0.1, &[], 12);
    let p = SimParams { thermostat: Thermostat::Hmc { trajectory: 10 }, ..single(Algorithm::Auto) };
    let e = GpuBackend::new(b, p, &atoms, None).err().expect("refused").to_string();
    assert!(e.contains("hybrid Monte Carlo") && e.contains("--backend cpu or cuda"), "{e}");
    if !adapter() {
        return;
    }
    let mut g = GpuBackend::new(b, single(Algorithm::Auto), &atoms, None).unwrap();
    let spec = argon_sandbox::transport::TransportSpec { stress_every: 10, ..Default::default() };
    let e = g.set_transport(Some(spec)).unwrap_err().to_string();
    assert!(e.contains("transport") && e.contains("--backend cpu or cuda"), "{e}");
}

/// Lists are rebuilt only when an atom has moved half the skin: a liquid at T = 1.2 with the
/// usual skin of 0.3 rebuilds every few steps, not every step, and more often with a
/// thinner skin.
#[test]
fn lists_are_rebuilt_when_atoms_moved_half_the_skin() {
    if !adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.05, &[], 13);
    let builds = |skin: f64| {
        let p = SimParams { skin, ..single(Algorithm::Neighbors) };
        let mut g = GpuBackend::new(b, p, &atoms, None).unwrap();
        g.advance(200).unwrap();
        g.list_builds()
    };
    let (usual, thin) = (builds(0.3), builds(0.1));
    assert!((5..=50).contains(&usual), "{usual} builds in 200 steps with skin 0.3");
    assert!(thin > 2 * usual, "skin 0.1: {thin} builds, skin 0.3: {usual}");
}
