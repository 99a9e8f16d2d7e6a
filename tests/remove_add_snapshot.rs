//! State edits on the CPU backend (fcc 5x5x5 = 500 atoms and 8x8x8 = 2048 atoms at
//! rho = 0.8442, T = 1.44, r_c = 2.5):
//! - snapshot / restore resumes a trajectory exactly (the `Snapshot` contract): restoring a
//!   snapshot and advancing 400 steps gives bit-identical positions, velocities and telemetry
//!   (pair sums to 1e-13, see `assert_same_telemetry`) to advancing the original backend, for
//!   all-pairs and cell list on 500 atoms and the neighbour list on 2048 atoms. The
//!   neighbour-list case FAILS at present: `restore` rebuilds the engine in canonical atom order
//!   with a fresh list, while the running engine keeps its cell-sorted order and older list, so
//!   pair forces are summed in another order and the runs part at round-off (~1e-13 after 400
//!   steps). Restoring one snapshot twice is bit-identical for every algorithm;
//! - remove_atoms (Disc and Indices) removes exactly the selected atoms and keeps the others
//!   in order, add_atoms appends atoms, and the simulation keeps running with the new count;
//! - a precision switch through set_params keeps the state (positions and velocities rounded
//!   to f32 going to single, unchanged otherwise);
//! - an algorithm switch mid-run changes the measured energy only at round-off (1e-12).

mod common;

use argon_sandbox::physics::init::LatticeKind;
use argon_sandbox::physics::params::{Algorithm, SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomSelection, AtomState, Backend, Snapshot, Telemetry};
use common::*;

fn liquid(cells: usize) -> (SimBox, AtomState) {
    lattice_system(LatticeKind::Fcc, 0.8442, [cells; 3], 1.44, 77)
}

fn bits3(v: &[[f64; 3]]) -> Vec<[u64; 3]> {
    v.iter().map(|x| x.map(f64::to_bits)).collect()
}

/// Asserts two snapshots are bit-identical (clock, box, types, positions, velocities).
fn assert_same_state(a: &Snapshot, b: &Snapshot, what: &str) {
    assert_eq!(a.step, b.step, "{what}: step");
    assert_eq!(a.time.to_bits(), b.time.to_bits(), "{what}: time");
    assert_eq!(a.sim_box, b.sim_box, "{what}: box");
    assert_eq!(a.atoms.types, b.atoms.types, "{what}: types");
    let (pa, pb) = (bits3(&a.atoms.positions), bits3(&b.atoms.positions));
    let (va, vb) = (bits3(&a.atoms.velocities), bits3(&b.atoms.velocities));
    let first_p = pa.iter().zip(&pb).position(|(x, y)| x != y);
    let first_v = va.iter().zip(&vb).position(|(x, y)| x != y);
    assert!(
        first_p.is_none() && first_v.is_none(),
        "{what}: states differ; first position mismatch {:?}, first velocity mismatch {:?}",
        first_p.map(|i| (i, a.atoms.positions[i], b.atoms.positions[i])),
        first_v.map(|i| (i, a.atoms.velocities[i], b.atoms.velocities[i]))
    );
}

/// The telemetry fields that must match bit for bit: everything except the wall-clock
/// `steps_per_s` and the pair sums (see [`assert_same_telemetry`]).
fn telemetry_bits(t: &Telemetry) -> Vec<u64> {
    let mut v = vec![t.step, t.n_atoms as u64];
    v.extend([t.time, t.dof, t.temperature, t.kinetic_energy, t.external_energy].map(f64::to_bits));
    v.extend(t.momentum.map(f64::to_bits));
    v
}

/// Telemetry rows agree bit for bit, except pair energy, virial and pressure, which agree to
/// 1e-13 relative: the force kernels reduce those over row chunks with rayon's `reduce`, whose
/// association follows work stealing, so their last bits can differ between two identical runs
/// (seen once: 3.6e-12 in -2.1e4 on 4000 atoms with the cell list). The positions and velocities,
/// compared bitwise by the caller, would show any real difference in the trajectory.
fn assert_same_telemetry(a: &[Telemetry], b: &[Telemetry], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: row count");
    for (x, y) in a.iter().zip(b) {
        assert_eq!(telemetry_bits(x), telemetry_bits(y), "{what}: step {} telemetry {x:?} vs {y:?}", x.step);
        for (name, u, v) in [
            ("pair_energy", x.pair_energy, y.pair_energy),
            ("virial", x.virial, y.virial),
            ("pressure", x.pressure, y.pressure),
        ] {
            assert!(rel(u, v) <= 1e-13, "{what}: step {} {name} {u} vs {v}", x.step);
        }
    }
}

/// Snapshot at step 300, run 400 steps on; restore and run the same 400 steps again, in the
/// same backend and in a fresh one. All three continuations must be bit-identical.
fn check_restore_exact(b: SimBox, atoms: &AtomState, params: SimParams) {
    let mut sim = cpu(b, params.clone(), atoms);
    let alg = sim.resolved_algorithm();
    sim.advance(300).expect("advance");
    sim.drain_telemetry();
    let snap = sim.snapshot().expect("snapshot");
    assert_eq!(snap.step, 300);
    sim.advance(400).expect("advance");
    let rows_a = sim.drain_telemetry();
    let end_a = sim.snapshot().expect("snapshot");

    sim.restore(&snap).expect("restore");
    assert_eq!(sim.step(), 300);
    sim.advance(400).expect("advance");
    let rows_b = sim.drain_telemetry();
    let end_b = sim.snapshot().expect("snapshot");

    let mut fresh = cpu(b, params, atoms);
    fresh.restore(&snap).expect("restore");
    fresh.advance(400).expect("advance");
    let rows_c = fresh.drain_telemetry();
    let end_c = fresh.snapshot().expect("snapshot");

    assert_eq!(rows_a.len(), 400 / 50);
    assert_same_state(&end_b, &end_c, &format!("{alg:?}: two restores of one snapshot"));
    assert_same_telemetry(&rows_b, &rows_c, &format!("{alg:?}: two restores of one snapshot"));
    assert_same_state(&end_a, &end_b, &format!("{alg:?}: restored run vs the original run"));
    assert_same_telemetry(&rows_a, &rows_b, &format!("{alg:?}: restored run vs the original run"));
    println!("{alg:?} ({} atoms): restore + 400 steps is bit-identical to the original run", atoms.len());
}

#[test]
fn snapshot_restore_is_bit_exact() {
    let (b, atoms) = liquid(5);
    let base = SimParams { telemetry_every: 50, seed: 3, ..SimParams::default() };
    // Langevin draws per-atom random streams, CSVR a global one: both must resume exactly.
    let tiled = SimParams { thermostat: Thermostat::Langevin { damp: 0.5 }, ..base.clone() };
    assert_eq!(CpuBackend::new(b, tiled.clone(), &atoms, None).unwrap().resolved_algorithm(), Algorithm::AllPairsTiled);
    check_restore_exact(b, &atoms, tiled);
    check_restore_exact(
        b,
        &atoms,
        SimParams {
            algorithm: Algorithm::Cells,
            thermostat: Thermostat::Csvr { tau: 0.1, relative_to_flow: false },
            ..base
        },
    );
}

#[test]
fn snapshot_restore_is_bit_exact_with_neighbor_list() {
    let (b, atoms) = liquid(8);
    let params = SimParams {
        telemetry_every: 50,
        thermostat: Thermostat::Langevin { damp: 0.5 },
        seed: 3,
        ..SimParams::default()
    };
    assert_eq!(CpuBackend::new(b, params.clone(), &atoms, None).unwrap().resolved_algorithm(), Algorithm::Neighbors);
    check_restore_exact(b, &atoms, params);
}

#[test]
fn remove_and_add_atoms() {
    let (b, atoms) = liquid(5);
    let l = b.length();
    let params = SimParams {
        thermostat: Thermostat::Langevin { damp: 0.5 },
        temperature: 1.0,
        telemetry_every: 50,
        ..SimParams::default()
    };
    let mut sim = cpu(b, params, &atoms);
    sim.advance(200).expect("advance");
    let n0 = sim.n_atoms();
    assert_eq!(n0, 500);

    // Disc: every atom with (x, y) within 2 of the box centre (a cylinder along z).
    let before = sim.snapshot().expect("snapshot");
    let (centre, radius) = ([0.5 * l[0], 0.5 * l[1]], 2.0);
    let inside = |p: &[f64; 3]| (p[0] - centre[0]).powi(2) + (p[1] - centre[1]).powi(2) <= radius * radius;
    let expected: Vec<usize> = (0..n0).filter(|&i| !inside(&before.atoms.positions[i])).collect();
    let removed = sim.remove_atoms(&AtomSelection::Disc { centre, radius }).expect("remove");
    println!("disc of radius {radius}: removed {removed} of {n0}");
    assert!(removed > 10, "the disc should hold atoms, removed {removed}");
    assert_eq!(removed, n0 - expected.len());
    assert_eq!(sim.n_atoms(), expected.len());
    let after = sim.snapshot().expect("snapshot");
    assert_eq!(after.step, before.step, "an edit does not advance the clock");
    for (k, &i) in expected.iter().enumerate() {
        assert_eq!(after.atoms.positions[k], before.atoms.positions[i], "survivor {k} (was {i}) moved");
        assert_eq!(after.atoms.velocities[k], before.atoms.velocities[i], "survivor {k} (was {i}) changed velocity");
    }
    assert_eq!(sim.remove_atoms(&AtomSelection::Disc { centre, radius }).unwrap(), 0, "the disc is empty now");

    // Indices: duplicates count once, out-of-range indices are ignored.
    let n1 = sim.n_atoms();
    let snap1 = sim.snapshot().unwrap();
    let removed = sim.remove_atoms(&AtomSelection::Indices(vec![0, 7, 7, 42, n1 + 5])).expect("remove");
    assert_eq!(removed, 3);
    assert_eq!(sim.n_atoms(), n1 - 3);
    let snap2 = sim.snapshot().unwrap();
    let kept: Vec<[f64; 3]> = (0..n1).filter(|i| ![0, 7, 42].contains(i)).map(|i| snap1.atoms.positions[i]).collect();
    assert_eq!(snap2.atoms.positions, kept);

    // Add 24 atoms back into the empty cylinder: 4 columns 0.85 from its axis, 1.1 apart in z.
    let layers = (l[2] / 1.1).floor() as usize;
    let mut added = AtomState::default();
    for j in 0..layers.min(6) {
        for (dx, dy) in [(-0.6, -0.6), (0.6, -0.6), (-0.6, 0.6), (0.6, 0.6)] {
            added.positions.push([centre[0] + dx, centre[1] + dy, 0.3 + 1.1 * j as f64]);
            added.velocities.push([0.1 * dx, -0.1 * dy, 0.05]);
            added.types.push(0);
        }
    }
    let n2 = sim.n_atoms();
    sim.add_atoms(&added).expect("add");
    assert_eq!(sim.n_atoms(), n2 + added.len());
    let snap3 = sim.snapshot().unwrap();
    assert_eq!(&snap3.atoms.positions[n2..], &added.positions[..], "added atoms are appended in order");
    assert_eq!(&snap3.atoms.velocities[n2..], &added.velocities[..]);
    assert_eq!(&snap3.atoms.positions[..n2], &snap2.atoms.positions[..], "existing atoms are untouched");

    // The edited system keeps running, at the new size, at the thermostat's temperature.
    sim.advance(1_000).expect("advance after edits");
    let rows = sim.drain_telemetry();
    let last = rows.last().unwrap();
    let n3 = n2 + added.len();
    let t_late: Vec<f64> = rows.iter().rev().take(10).map(|r| r.temperature).collect();
    println!("after edits: {} atoms, dof {}, <T> over the last 500 steps {:.3}", last.n_atoms, last.dof, mean(&t_late));
    assert!(rows[rows.len() - 10..].iter().all(|r| r.n_atoms == n3 && r.dof == 3.0 * n3 as f64));
    assert!(last.total_energy().is_finite() && last.pressure.is_finite());
    assert!(rel(mean(&t_late), 1.0) < 0.1, "T after edits {t_late:?}");
}

#[test]
fn precision_switch_keeps_state() {
    let (b, atoms) = liquid(5);
    let params = SimParams { telemetry_every: 50, ..SimParams::default() };
    let mut sim = cpu(b, params.clone(), &atoms);
    sim.advance(100).expect("advance");
    let s0 = sim.snapshot().unwrap();
    let e0 = measure(&mut sim);

    // Double -> mixed keeps f64 state exactly.
    sim.set_params(SimParams { precision: Precision::Mixed, ..params.clone() }).unwrap();
    assert_same_state(&s0, &sim.snapshot().unwrap(), "double -> mixed");

    // -> single rounds positions and velocities to f32, nothing else.
    sim.set_params(SimParams { precision: Precision::Single, ..params.clone() }).unwrap();
    let s1 = sim.snapshot().unwrap();
    let to_f32 = |v: &[[f64; 3]]| -> Vec<[f64; 3]> { v.iter().map(|x| x.map(|c| c as f32 as f64)).collect() };
    let rounded = Snapshot {
        atoms: AtomState {
            positions: to_f32(&s0.atoms.positions),
            velocities: to_f32(&s0.atoms.velocities),
            types: s0.atoms.types.clone(),
            ..Default::default()
        },
        ..s0.clone()
    };
    assert_same_state(&rounded, &s1, "double -> single");
    assert_ne!(s0.atoms.positions, s1.atoms.positions, "single precision should actually round");
    let e1 = measure(&mut sim);
    let de = (e1.etotal_per_atom() - e0.etotal_per_atom()).abs();
    println!(
        "energy per atom: double {:.10}, single {:.10}, |diff| {de:.2e}",
        e0.etotal_per_atom(),
        e1.etotal_per_atom()
    );
    assert!(de < 1e-5, "switching to single changed E by {de} per atom");

    // Single runs on; going back up keeps its (f32-representable) state exactly.
    sim.advance(200).expect("advance in single");
    let s2 = sim.snapshot().unwrap();
    let e2 = measure(&mut sim);
    assert!((e2.etotal_per_atom() - e0.etotal_per_atom()).abs() < 1e-3, "single drifted: {e2:?}");
    sim.set_params(SimParams { precision: Precision::Double, ..params.clone() }).unwrap();
    assert_same_state(&s2, &sim.snapshot().unwrap(), "single -> double");
    sim.advance(100).expect("advance in double");
}

#[test]
fn algorithm_switch_changes_energy_only_at_round_off() {
    let (b, atoms) = liquid(5);
    let params = SimParams { telemetry_every: 50, ..SimParams::default() };
    let mut sim = cpu(b, SimParams { algorithm: Algorithm::AllPairsTiled, ..params.clone() }, &atoms);
    sim.advance(200).expect("advance");
    let e_start = measure(&mut sim).total_energy();
    let mut order = Algorithm::CONCRETE.to_vec();
    order.extend(Algorithm::CONCRETE.iter().rev());
    let mut worst = 0.0f64;
    for alg in order {
        let before = measure(&mut sim);
        let state = sim.snapshot().unwrap();
        sim.set_params(SimParams { algorithm: alg, ..params.clone() }).unwrap();
        assert_eq!(sim.resolved_algorithm(), alg);
        let after = measure(&mut sim);
        // The switch leaves positions and velocities alone (the neighbour list may re-sort
        // atoms internally, so sums such as KE can change in their last bits).
        assert_same_state(&state, &sim.snapshot().unwrap(), &format!("switch to {alg:?}"));
        let d = rel(after.total_energy(), before.total_energy());
        let dp = rel(after.pressure, before.pressure);
        worst = worst.max(d).max(dp);
        assert!(
            d < 1e-12 && dp < 1e-12,
            "switch to {alg:?}: E {} -> {}, P {} -> {}",
            before.total_energy(),
            after.total_energy(),
            before.pressure,
            after.pressure
        );
        sim.advance(100).expect("advance");
    }
    let e_end = measure(&mut sim).total_energy();
    let drift = (e_end - e_start).abs() / atoms.len() as f64;
    println!(
        "algorithm switches: worst relative change at a switch {worst:.2e}; NVE drift over 800 steps {drift:.2e} per atom"
    );
    assert!(drift < 1e-3, "energy drifted {drift} per atom across switches");
}
