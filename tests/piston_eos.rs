//! The piston against the equation of state of Johnson, Zollweg & Gubbins (1993),
//! `jzg1993_eos.csv`: a CSVR-thermostatted fluid at T = 2.0 under the piston settles to the
//! density at which the fluid's pressure equals the piston's.
//!
//! The table is for the full LJ potential; the simulation truncates forces at r_c = 2.5, which
//! leaves out the attraction beyond r_c (pressure P_tail = -0.26735 at rho = 0.5, the CSV's own
//! column, which our formula reproduces). A truncated fluid at rho = 0.5, T = 2 therefore has
//! the virial pressure P_JZG - P_tail = 1.07745 + 0.26735 = 1.3448, so that is the pressure the
//! piston is set to: the full-LJ fluid at P = 1.0775 (the JZG point) with the missing tail
//! cohesion supplied by the piston. (At P_ext = 1.0775 itself the truncated fluid would settle
//! near rho = 0.44.) Checks:
//! - the bulk density (density profile, middle 40% of the height under the piston, away
//!   from the wall layers) is within 3% of 0.5 (the fit is good to 1-2% in P, and dP/drho ~ 6
//!   turns a 2% pressure error into under 1% in density);
//! - the time-averaged force per area on the piston equals P_ext within 3 standard errors
//!   (20 blocks), and that error bar is under 2% of P_ext;
//! - the thermostat holds T = 2.

mod common;

use argon_sandbox::physics::params::SimParams;
use argon_sandbox::scene::Scene;
use argon_sandbox::sim::Backend;
use argon_sandbox::sim::cpu::CpuBackend;
use common::*;

const RC: f64 = 2.5;
const T: f64 = 2.0;
const RHO: f64 = 0.5;
const EQUILIBRATION_STEPS: u64 = 6_000;
const PRODUCTION_STEPS: u64 = 24_000;
const PROFILE_EVERY: u64 = 200;
const BLOCKS: usize = 20;

#[test]
fn piston_holds_the_jzg_density_at_its_pressure() {
    let want = *jzg_table()
        .iter()
        .find(|r| (r.t - T).abs() < 1e-9 && (r.rho - RHO).abs() < 1e-9)
        .expect("JZG row T = 2, rho = 0.5");
    assert!((p_tail(RHO, RC) - want.p_tail).abs() < 1e-5);
    let p_ext = want.p - p_tail(RHO, RC);
    assert!((p_ext - 1.3448).abs() < 1e-3, "{p_ext}");

    // 14 x 26 x 14 (x and z periodic, 7 fcc cells of 2 sigma at rho = 0.5), about 2000 atoms
    // filling y < 22; the piston (default mass 200 and friction 0.2/tau) starts at the top,
    // y = 26, falls onto the fluid and settles near y = 21.
    let text = format!(
        "(version: 1, box: (size: (14.0, 26.0, 14.0), boundaries: (Periodic, Wall, Periodic)),
          potential: (cutoff: {RC}, shift: false),
          temperature_k: {}, thermostat: Csvr(tau: 0.2),
          atoms: [Lattice(kind: Fcc, density: {RHO}, region: Some((lo: (0.0, 0.0, 0.0), hi: (14.0, 22.0, 14.0))))],
          piston: (pressure: {p_ext}),
          seed: 5)",
        T * argon_sandbox::units::ARGON_EPSILON_K
    );
    let setup = Scene::from_str(&text, "piston_eos.ron").unwrap().build().unwrap();
    let params = SimParams { telemetry_every: 10, ..setup.params.clone() };
    let mut sim = CpuBackend::new(setup.sim_box, params, &setup.atoms, None).unwrap();
    let n = sim.n_atoms();
    sim.advance(EQUILIBRATION_STEPS).expect("equilibration");
    sim.drain_telemetry();

    let bins = 130; // 0.2 sigma slabs
    let mut bulk = Vec::new();
    let mut rows = Vec::new();
    for _ in 0..PRODUCTION_STEPS / PROFILE_EVERY {
        sim.advance(PROFILE_EVERY).expect("production");
        rows.extend(sim.drain_telemetry());
        let h = rows.last().unwrap().piston.unwrap().height;
        let profile = sim.density_profile(bins).unwrap();
        let middle: Vec<f64> = (0..bins)
            .filter(|&i| (0.3 * h..0.7 * h).contains(&profile.bin_centre(i)))
            .map(|i| profile.values[i])
            .collect();
        bulk.push(mean(&middle));
    }
    let force: Vec<f64> = rows.iter().map(|r| r.piston.unwrap().force_per_area).collect();
    let height: Vec<f64> = rows.iter().map(|r| r.piston.unwrap().height).collect();
    let temp: Vec<f64> = rows.iter().map(|r| r.temperature).collect();
    let pressure: Vec<f64> = rows.iter().map(|r| r.pressure).collect();
    let (f_mean, f_err) = block_mean_sem(&force, BLOCKS);
    let (rho_mean, rho_err) = block_mean_sem(&bulk, BLOCKS);
    let (h_mean, h_err) = block_mean_sem(&height, BLOCKS);
    let (t_mean, t_err) = block_mean_sem(&temp, BLOCKS);
    let (p_mean, p_err) = block_mean_sem(&pressure, BLOCKS);
    println!(
        "N = {n}, P_ext = {p_ext:.5}: <F/A> = {f_mean:.5} +- {f_err:.5}; bulk rho = {rho_mean:.5} +- {rho_err:.5} \
         (JZG {RHO}, rel {:+.2}%); h = {h_mean:.3} +- {h_err:.3}; <T> = {t_mean:.4} +- {t_err:.4}; \
         virial P of the volume under the piston = {p_mean:.4} +- {p_err:.4} (walls' layers included)",
        100.0 * (rho_mean - RHO) / RHO
    );
    assert!(rel(t_mean, T) < 0.01, "<T> = {t_mean} +- {t_err}");
    // The piston floats: well clear of both stops.
    let (lo, hi) = argon_sandbox::physics::piston::PistonParams::limits(&setup.sim_box);
    assert!(height.iter().all(|&h| h > lo + 5.0 && h < hi - 1.0), "h = {h_mean}, limits {lo}..{hi}");
    assert!(f_err < 0.02 * p_ext, "force error bar {f_err} too large for the comparison");
    assert!((f_mean - p_ext).abs() < 3.0 * f_err + 1e-3, "<F/A> = {f_mean} +- {f_err}, P_ext = {p_ext}");
    assert!(rho_err < 0.01 * RHO, "density error bar {rho_err} too large");
    assert!(rel(rho_mean, RHO) < 0.03, "bulk rho = {rho_mean} +- {rho_err}, JZG {RHO}");
}
