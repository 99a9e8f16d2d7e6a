//! Equation of state of the LJ fluid against Johnson, Zollweg & Gubbins (1993),
//! `jzg1993_eos.csv` in the validation folder: NVT (CSVR) runs of 2048 atoms with the
//! truncated, unshifted potential at r_c = 2.5 at T = 2.0, rho = 0.5 and 0.8. The averaged
//! virial pressure plus P_tail and the pair energy per atom plus u_tail must match the
//! table's P and U/N within 2% relative (the fit itself is good to 1-2%; LAMMPS gets within
//! 1%, see `nvt_eos_check_of_jzg_table` in `lammps_reference.json`). Error bars are standard
//! errors of 20 block averages and must be under a quarter of the tolerance.

mod common;

use argon_sandbox::physics::cutoff::Cutoff;
use argon_sandbox::physics::init::LatticeKind;
use argon_sandbox::physics::params::{SimParams, Thermostat};
use argon_sandbox::sim::Backend;
use common::*;

const RC: f64 = 2.5;
const REL_TOL: f64 = 0.02;
const EQUILIBRATION_STEPS: u64 = 4_000;
const PRODUCTION_STEPS: u64 = 30_000;
const SAMPLE_EVERY: u64 = 10;
const BLOCKS: usize = 20;

fn eos_point(t: f64, rho: f64) {
    let table = jzg_table();
    let want = *table
        .iter()
        .find(|r| (r.t - t).abs() < 1e-9 && (r.rho - rho).abs() < 1e-9)
        .unwrap_or_else(|| panic!("no JZG row for T={t} rho={rho}"));
    // The CSV's tail columns and our formulas must agree (they are what turns r_c = 2.5 into the full potential).
    assert!((p_tail(rho, RC) - want.p_tail).abs() < 1e-5, "P_tail {} vs csv {}", p_tail(rho, RC), want.p_tail);
    assert!((u_tail(rho, RC) - want.u_tail).abs() < 1e-5, "u_tail {} vs csv {}", u_tail(rho, RC), want.u_tail);

    // fcc 8x8x8 = 2048 atoms at the target density, melted and equilibrated at T.
    let (b, atoms) = lattice_system(LatticeKind::Fcc, rho, [8; 3], t, 2024);
    assert_eq!(atoms.len(), 2048);
    let params = SimParams {
        cutoff: Cutoff::Absolute(RC),
        shift: false,
        temperature: t,
        thermostat: Thermostat::Csvr { tau: 0.2, relative_to_flow: false },
        telemetry_every: SAMPLE_EVERY,
        seed: 7,
        ..SimParams::default()
    };
    let mut sim = cpu(b, params, &atoms);
    sim.advance(EQUILIBRATION_STEPS).expect("equilibration");
    sim.drain_telemetry();
    sim.advance(PRODUCTION_STEPS).expect("production");
    let rows = sim.drain_telemetry();
    assert_eq!(rows.len() as u64, PRODUCTION_STEPS / SAMPLE_EVERY);

    let p: Vec<f64> = rows.iter().map(|r| r.pressure + p_tail(rho, RC)).collect();
    let u: Vec<f64> = rows.iter().map(|r| r.pair_energy / r.n_atoms as f64 + u_tail(rho, RC)).collect();
    let temp: Vec<f64> = rows.iter().map(|r| r.temperature).collect();
    let (p_mean, p_err) = block_mean_sem(&p, BLOCKS);
    let (u_mean, u_err) = block_mean_sem(&u, BLOCKS);
    let (t_mean, t_err) = block_mean_sem(&temp, BLOCKS);
    println!(
        "T={t} rho={rho}: <T> = {t_mean:.5} +- {t_err:.5}; P = {p_mean:.5} +- {p_err:.5} (JZG {:.5}, rel {:+.3}%); \
         U/N = {u_mean:.5} +- {u_err:.5} (JZG {:.5}, rel {:+.3}%)",
        want.p,
        100.0 * (p_mean - want.p) / want.p,
        want.u_per_n,
        100.0 * (u_mean - want.u_per_n) / want.u_per_n.abs()
    );

    // The thermostat holds the state point the table is for.
    assert!(rel(t_mean, t) < 0.005 && t_err < 0.0025 * t, "<T> = {t_mean} +- {t_err}, wanted {t}");
    // The error bars are well inside the tolerance, so the comparison means something.
    assert!(p_err < 0.25 * REL_TOL * want.p.abs(), "P error bar {p_err} too large for a {REL_TOL} test");
    assert!(u_err < 0.25 * REL_TOL * want.u_per_n.abs(), "U error bar {u_err} too large for a {REL_TOL} test");
    assert!(rel(p_mean, want.p) < REL_TOL, "P = {p_mean} +- {p_err}, JZG {}", want.p);
    assert!(rel(u_mean, want.u_per_n) < REL_TOL, "U/N = {u_mean} +- {u_err}, JZG {}", want.u_per_n);
}

#[test]
fn jzg_t2_rho05() {
    eos_point(2.0, 0.5);
}

#[test]
fn jzg_t2_rho08() {
    eos_point(2.0, 0.8);
}
