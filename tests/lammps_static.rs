//! Static lattice energies and pressures against LAMMPS (`lammps_reference.json`), for every
//! algorithm, to 1e-9 relative in double precision.

mod common;

use argon_sandbox::physics::init::{LatticeKind, lattice_box};
use argon_sandbox::physics::params::Algorithm;
use argon_sandbox::physics::real::Precision;
use common::*;

fn check(kind: LatticeKind, density: f64, cells: usize, shift: bool, key: &str) {
    let r = reference();
    let want = &r["static_lattices_T0"][key];
    let (b, pos) = lattice_box(kind, density, [cells; 3]);
    assert_eq!(pos.len() as u64, want["n"].as_u64().unwrap());
    let atoms = at_rest(pos);
    for algorithm in Algorithm::CONCRETE {
        let mut sim = cpu(b, params(algorithm, Precision::Double, shift), &atoms);
        let t = measure(&mut sim);
        let pe = t.pe_per_atom();
        let press = t.pressure;
        let (pe_ref, p_ref) = (want["pe_per_atom"].as_f64().unwrap(), want["press"].as_f64().unwrap());
        assert!(rel(pe, pe_ref) < 1e-9, "{key} {algorithm:?}: pe {pe} vs {pe_ref}");
        assert!(rel(press, p_ref) < 1e-9, "{key} {algorithm:?}: press {press} vs {p_ref}");
    }
}

#[test]
fn fcc_4000_unshifted() {
    check(LatticeKind::Fcc, 0.8442, 10, false, "fcc_4000_rho0.8442_unshifted");
}

#[test]
fn fcc_4000_shifted() {
    check(LatticeKind::Fcc, 0.8442, 10, true, "fcc_4000_rho0.8442_shifted");
}

#[test]
fn fcc_32000_unshifted() {
    check(LatticeKind::Fcc, 0.8442, 20, false, "fcc_32000_rho0.8442_unshifted");
}

#[test]
fn sc_4096_unshifted() {
    check(LatticeKind::Sc, 0.8, 16, false, "sc_4096_rho0.8_unshifted");
}

#[test]
fn sc_4096_shifted() {
    check(LatticeKind::Sc, 0.8, 16, true, "sc_4096_rho0.8_shifted");
}

/// Every test above again under each other CPU path (AVX2, baseline, no cluster lists):
/// see `common::cpu_paths`.
#[test]
fn all_of_these_under_every_cpu_path() {
    common::cpu_paths::rerun_under_other_cpu_paths("all_of_these_under_every_cpu_path");
}
