//! Unit conversions between the reduced Lennard-Jones units used everywhere inside the
//! simulation (sigma = epsilon = m = k_B = 1) and argon's physical units shown to people.
//!
//! Owns the argon constants and nothing else; no other module hard-codes them.

/// Argon's LJ diameter in ångström.
pub const ARGON_SIGMA_ANGSTROM: f64 = 3.405;
/// Argon's LJ well depth over Boltzmann's constant, in kelvin.
pub const ARGON_EPSILON_K: f64 = 119.8;
/// Argon's atomic mass in unified atomic mass units.
pub const ARGON_MASS_U: f64 = 39.948;

const BOLTZMANN_J_PER_K: f64 = 1.380_649e-23;
const ATOMIC_MASS_KG: f64 = 1.660_539_066_60e-27;

/// The LJ time unit tau = sigma * sqrt(m / epsilon) for argon, in picoseconds (~2.156 ps).
pub fn argon_tau_ps() -> f64 {
    let sigma_m = ARGON_SIGMA_ANGSTROM * 1e-10;
    let mass_kg = ARGON_MASS_U * ATOMIC_MASS_KG;
    let epsilon_j = ARGON_EPSILON_K * BOLTZMANN_J_PER_K;
    sigma_m * (mass_kg / epsilon_j).sqrt() * 1e12
}

/// Kelvin to reduced temperature T* = k_B T / epsilon.
pub fn kelvin_to_reduced(temperature_k: f64) -> f64 {
    temperature_k / ARGON_EPSILON_K
}

/// Reduced temperature to kelvin.
pub fn reduced_to_kelvin(temperature: f64) -> f64 {
    temperature * ARGON_EPSILON_K
}

/// Reduced energy (per atom) to kJ/mol.
pub fn reduced_energy_to_kj_per_mol(energy: f64) -> f64 {
    energy * ARGON_EPSILON_K * BOLTZMANN_J_PER_K * 6.022_140_76e23 / 1000.0
}

/// Reduced pressure P* = P sigma^3 / epsilon to megapascal.
pub fn reduced_pressure_to_mpa(pressure: f64) -> f64 {
    let sigma_m = ARGON_SIGMA_ANGSTROM * 1e-10;
    pressure * ARGON_EPSILON_K * BOLTZMANN_J_PER_K / sigma_m.powi(3) / 1e6
}

/// Reduced length to nanometres.
pub fn reduced_length_to_nm(length: f64) -> f64 {
    length * ARGON_SIGMA_ANGSTROM / 10.0
}

/// Reduced time to picoseconds.
pub fn reduced_time_to_ps(time: f64) -> f64 {
    time * argon_tau_ps()
}

/// Reduced speed (sigma / tau) to metres per second.
pub fn reduced_speed_to_m_per_s(speed: f64) -> f64 {
    speed * ARGON_SIGMA_ANGSTROM * 1e-10 / (argon_tau_ps() * 1e-12)
}

/// Reduced shear viscosity eta* = eta sigma^2 / sqrt(m epsilon) to millipascal seconds
/// (about 0.0904 mPa s per unit for argon).
pub fn reduced_viscosity_to_mpa_s(viscosity: f64) -> f64 {
    let sigma_m = ARGON_SIGMA_ANGSTROM * 1e-10;
    let mass_kg = ARGON_MASS_U * ATOMIC_MASS_KG;
    let epsilon_j = ARGON_EPSILON_K * BOLTZMANN_J_PER_K;
    viscosity * (mass_kg * epsilon_j).sqrt() / (sigma_m * sigma_m) * 1e3
}

/// Reduced diffusion coefficient D* = D tau / sigma^2 to square metres per second (about
/// 5.38e-8 m^2/s per unit for argon).
pub fn reduced_diffusion_to_m2_per_s(diffusion: f64) -> f64 {
    let sigma_m = ARGON_SIGMA_ANGSTROM * 1e-10;
    diffusion * sigma_m * sigma_m / (argon_tau_ps() * 1e-12)
}

/// Which unit system a person reads numbers in (CLI `--units`, CSV columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
pub enum UnitSystem {
    /// Argon: kelvin, kJ/mol, MPa, nm, ps.
    #[default]
    Argon,
    /// Reduced Lennard-Jones units, LAMMPS `units lj` conventions.
    Lj,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_is_about_2_156_ps() {
        assert!((argon_tau_ps() - 2.156).abs() < 2e-3, "{}", argon_tau_ps());
    }

    #[test]
    fn temperature_round_trip() {
        assert!((reduced_to_kelvin(kelvin_to_reduced(90.0)) - 90.0).abs() < 1e-12);
        assert!((kelvin_to_reduced(119.8) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn pressure_unit_is_about_42_mpa() {
        // epsilon / sigma^3 for argon is about 41.9 MPa.
        let p = reduced_pressure_to_mpa(1.0);
        assert!((p - 41.9).abs() < 0.2, "{p}");
    }
}
