//! Thermostats on an LJ liquid (fcc 5x5x5 = 500 atoms melted at rho = 0.7, T = 1.2, r_c = 2.5):
//! (a) Berendsen, CSVR and Langevin hold the time-averaged kinetic temperature within 2% of
//! the target; (b) CSVR samples the canonical kinetic-energy distribution: std(KE) within 10%
//! of sqrt(dof/2) T (the Gamma(dof/2, T) width); (c) Berendsen, which is known not to be
//! canonical, gives KE fluctuations well below that value, so (b) can tell the two apart.
//! Error bars are standard errors of block averages and must be well inside each tolerance.

mod common;

use argon_sandbox::physics::init::LatticeKind;
use argon_sandbox::physics::params::{SimParams, Thermostat};
use argon_sandbox::sim::{Backend, Telemetry};
use common::*;

const T_TARGET: f64 = 1.2;
const RHO: f64 = 0.7;

/// Telemetry rows of a production run (after `equilibrate` steps) sampled every `every` steps.
fn run(thermostat: Thermostat, equilibrate: u64, steps: u64, every: u64) -> Vec<Telemetry> {
    // Start hot-ish and off target so the thermostat has to do work.
    let (b, atoms) = lattice_system(LatticeKind::Fcc, RHO, [5; 3], 1.5 * T_TARGET, 99);
    let params =
        SimParams { temperature: T_TARGET, thermostat, telemetry_every: every, seed: 31, ..SimParams::default() };
    let mut sim = cpu(b, params, &atoms);
    sim.advance(equilibrate).expect("equilibration");
    sim.drain_telemetry();
    sim.advance(steps).expect("production");
    let rows = sim.drain_telemetry();
    assert_eq!(rows.len() as u64, steps / every);
    rows
}

/// std(KE) of the rows and its standard error (from block averages of (KE - <KE>)^2).
fn ke_std(rows: &[Telemetry], blocks: usize) -> (f64, f64) {
    let ke: Vec<f64> = rows.iter().map(|r| r.kinetic_energy).collect();
    let m = mean(&ke);
    let dev2: Vec<f64> = ke.iter().map(|k| (k - m).powi(2)).collect();
    let (var, var_err) = block_mean_sem(&dev2, blocks);
    let sd = var.sqrt();
    (sd, var_err / (2.0 * sd))
}

#[test]
fn average_temperature_is_the_target() {
    const TOL: f64 = 0.02;
    for thermostat in [
        Thermostat::Berendsen { tau: 0.1, relative_to_flow: false },
        Thermostat::Csvr { tau: 0.1, relative_to_flow: false },
        Thermostat::Langevin { damp: 0.5 },
    ] {
        let rows = run(thermostat, 2_000, 10_000, 10);
        let t: Vec<f64> = rows.iter().map(|r| r.temperature).collect();
        let (t_mean, t_err) = block_mean_sem(&t, 20);
        println!(
            "{thermostat:?}: <T> = {t_mean:.5} +- {t_err:.5} (target {T_TARGET}, rel {:+.3}%)",
            100.0 * (t_mean / T_TARGET - 1.0)
        );
        assert!(t_err < 0.25 * TOL * T_TARGET, "{thermostat:?}: error bar {t_err} too large");
        assert!(rel(t_mean, T_TARGET) < TOL, "{thermostat:?}: <T> = {t_mean} +- {t_err}, target {T_TARGET}");
    }
}

#[test]
fn csvr_kinetic_energy_fluctuations_are_canonical() {
    const TOL: f64 = 0.10;
    // tau = 0.05: KE decorrelates in a few tens of steps (lag-20 autocorrelation ~0.15).
    let rows = run(Thermostat::Csvr { tau: 0.05, relative_to_flow: false }, 3_000, 40_000, 20);
    let dof = rows[0].dof;
    assert_eq!(dof, 3.0 * 500.0 - 3.0, "periodic CSVR keeps total momentum: 3N - 3");
    let canonical = (dof / 2.0).sqrt() * T_TARGET;
    let (sd, sd_err) = ke_std(&rows, 20);
    println!(
        "CSVR tau 0.05: std(KE) = {sd:.4} +- {sd_err:.4}, canonical sqrt(dof/2) T = {canonical:.4}, ratio {:.4} +- {:.4} ({} samples)",
        sd / canonical,
        sd_err / canonical,
        rows.len()
    );
    assert!(sd_err < 0.3 * TOL * canonical, "error bar {sd_err} too large for a {TOL} test");
    assert!(rel(sd, canonical) < TOL, "std(KE) = {sd} +- {sd_err}, canonical {canonical}");
}

#[test]
fn berendsen_kinetic_energy_fluctuations_are_too_small() {
    let rows = run(Thermostat::Berendsen { tau: 0.1, relative_to_flow: false }, 2_000, 20_000, 20);
    let canonical = (rows[0].dof / 2.0).sqrt() * T_TARGET;
    let (sd, sd_err) = ke_std(&rows, 20);
    let ratio = sd / canonical;
    println!(
        "Berendsen tau 0.1: std(KE) = {sd:.4} +- {sd_err:.4}, canonical {canonical:.4}, ratio {ratio:.4} +- {:.4}",
        sd_err / canonical
    );
    // Clearly outside the 10% band that the CSVR test accepts, by many error bars.
    assert!(
        ratio + 5.0 * sd_err / canonical < 0.9,
        "Berendsen looks canonical: ratio {ratio} +- {}",
        sd_err / canonical
    );
}

/// Every test above again under each other CPU path (AVX2, baseline, no cluster lists):
/// see `common::cpu_paths`.
#[test]
fn all_of_these_under_every_cpu_path() {
    common::cpu_paths::rerun_under_other_cpu_paths("all_of_these_under_every_cpu_path");
}
