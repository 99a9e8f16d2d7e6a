//! Observables computed from state: degrees of freedom, temperature, pressure, and the
//! normalisation of g(r), speed histograms and density profiles. Shared by every backend,
//! so the conventions (LAMMPS's where one exists) are written once.

use crate::physics::params::{SimBox, SimParams, Thermostat};

/// Degrees of freedom for the temperature: 3N minus one for each axis whose total momentum
/// is conserved and was zeroed (periodic, no body force along it, no obstacle breaking the
/// symmetry, no Langevin noise). A fully periodic NVE box gets LAMMPS's 3N - 3.
pub fn degrees_of_freedom(n_atoms: usize, sim_box: &SimBox, params: &SimParams, has_obstacles: bool) -> f64 {
    let langevin = matches!(params.thermostat, Thermostat::Langevin { .. });
    let conserved = (0..3)
        .filter(|&k| {
            let body = (k == 0 && params.drive != 0.0) || (k == 1 && params.gravity != 0.0);
            let obstacle = has_obstacles && k < 2;
            sim_box.periodic[k] && !body && !obstacle && !langevin
        })
        .count();
    (3 * n_atoms).saturating_sub(conserved).max(1) as f64
}

/// Temperature from twice the kinetic energy (sum of m v^2).
pub fn temperature(twice_kinetic: f64, dof: f64) -> f64 {
    twice_kinetic / dof
}

/// Virial pressure, LAMMPS convention: P = (2 KE + W) / (3 V), where W = sum r . f over
/// pairs plus the wall and obstacle terms (distance times outward force).
pub fn pressure(twice_kinetic: f64, virial: f64, volume: f64) -> f64 {
    (twice_kinetic + virial) / (3.0 * volume)
}
