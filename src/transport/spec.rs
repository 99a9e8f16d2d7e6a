//! The sampling contract between transport measurements and the backends (CPU and CUDA
//! produce identical records for the same trajectory, up to floating-point sums).
//!
//! Sampling starts at the step `s0` at which `Backend::set_transport` (in `sim`) is
//! called and concerns only the steps the backend advances to afterwards (steps `s > s0`,
//! numbered absolutely, as `Backend::step`); the state "at step s" is the
//! state after step s is complete (positions and full-step velocities).
//!
//! **Origins** (one [`OriginSpec`] for the MSD, one for the VACF): at every step `s > s0`
//! divisible by `origin_every`, slot `(s / origin_every) % slots` is overwritten with the
//! state at `s` (unwrapped positions for the MSD, velocities for the VACF), remembered as
//! origin step `s`. Then, at every step `s > s0` divisible by `every`, each slot holding
//! an origin gives one [`OriginRecord`] with, per species, the sum over that species' atoms
//! of `|u_i(s) - u_i(t_o)|^2` (MSD) or `v_i(s) . v_i(t_o)` (VACF). A new origin at `s`
//! therefore first appears as a lag-0 record at `s`. Records come ordered by step, then by
//! origin step.
//!
//! **Unwrapped positions** start as the wrapped positions at `s0` and are carried forward at
//! every sample step: `u += minimum_image(r(s) - r(previous sample))` along the periodic
//! axes (plain differences along walled axes), which is exact while no atom moves half a
//! box between samples ([`OriginSpec::validate`] bounds `every x dt`). Atoms are followed by
//! their canonical index, whatever order a backend keeps them in.
//!
//! **Stress**: at every step `s > s0` divisible by `stress_every`, one [`StressRecord`] of
//! the pressure tensor `P_ab = (sum_i m_i v_ia v_ib + W_ab) / V` (LAMMPS's `compute pressure`
//! convention), where `W_ab = sum over pairs of r_ij,a f_ij,b` plus the same terms of the
//! external forces (walls, obstacles, tether) as the scalar virial has, so that
//! `(P_xx + P_yy + P_zz) / 3` is the telemetry pressure (without tail corrections) at the
//! same step.
//!
//! A new `set_transport` (or `None`) drops every origin and record; adding or removing
//! atoms, a restore or a rollback do too (the caller restarts the measurement).

use serde::{Deserialize, Serialize};

/// Most origin slots one sampler keeps.
pub const MAX_SLOTS: usize = 64;
/// Longest interval between MSD samples in tau: atoms must move much less than half a box
/// between two samples for the unwrapping to be exact.
pub const MAX_MSD_INTERVAL_TAU: f64 = 0.25;

/// Sampling against stored time origins: the lag resolution (`every`), the spacing of
/// origins (`origin_every`, a multiple of `every`) and how many are kept at once (`slots`):
/// lags reach `(slots - 1) x origin_every` steps for every origin, and up to
/// `slots x origin_every - every` for the newest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginSpec {
    pub every: u64,
    pub origin_every: u64,
    pub slots: usize,
}

/// What a transport measurement asks the backend to sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportSpec {
    /// Mean-squared displacement of unwrapped positions.
    pub msd: Option<OriginSpec>,
    /// Velocity autocorrelation.
    pub vacf: Option<OriginSpec>,
    /// The pressure tensor every `stress_every` steps; 0: not sampled.
    pub stress_every: u64,
}

/// Sums at step `step` against the origin taken at `origin_step`: one per species.
#[derive(Clone, Debug, PartialEq)]
pub struct OriginRecord {
    pub step: u64,
    pub origin_step: u64,
    pub sums: Vec<f64>,
}

/// The pressure tensor at step `step`: xx, yy, zz, xy, xz, yz (LJ units, epsilon/sigma^3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StressRecord {
    pub step: u64,
    pub p: [f64; 6],
}

/// Records produced since the last `Backend::take_transport` (in `sim`), oldest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransportSamples {
    pub msd: Vec<OriginRecord>,
    pub vacf: Vec<OriginRecord>,
    pub stress: Vec<StressRecord>,
    /// Atoms of each species (what the per-species sums are over).
    pub species_counts: Vec<usize>,
}

impl OriginSpec {
    /// Checks the spacing and slots; `msd` also bounds the sampling interval at time step
    /// `dt` ([`MAX_MSD_INTERVAL_TAU`]). The error names the field and the fix.
    pub fn validate(&self, what: &str, dt: f64, msd: bool) -> Result<(), String> {
        if self.every == 0 {
            return Err(format!("{what}.every = 0: sample at least every step (every must be 1 or more)"));
        }
        if self.origin_every == 0 || !self.origin_every.is_multiple_of(self.every) {
            return Err(format!(
                "{what}.origin_every = {}: origins must fall on sample steps, so origin_every must be a positive \
                 multiple of every ({})",
                self.origin_every, self.every
            ));
        }
        if !(1..=MAX_SLOTS).contains(&self.slots) {
            return Err(format!("{what}.slots = {}: keep between 1 and {MAX_SLOTS} origins", self.slots));
        }
        if msd && self.every as f64 * dt > MAX_MSD_INTERVAL_TAU * (1.0 + 1e-12) {
            return Err(format!(
                "{what}.every = {}: at dt = {dt} that is {} tau between samples, more than the {MAX_MSD_INTERVAL_TAU} \
                 tau the unwrapping of positions allows: sample at most every {} steps",
                self.every,
                self.every as f64 * dt,
                (MAX_MSD_INTERVAL_TAU / dt).floor().max(1.0)
            ));
        }
        Ok(())
    }
}

impl TransportSpec {
    /// Checks every part at time step `dt`.
    pub fn validate(&self, dt: f64) -> Result<(), String> {
        if let Some(m) = &self.msd {
            m.validate("msd", dt, true)?;
        }
        if let Some(v) = &self.vacf {
            v.validate("vacf", dt, false)?;
        }
        Ok(())
    }

    /// Whether anything is sampled at all.
    pub fn is_empty(&self) -> bool {
        self.msd.is_none() && self.vacf.is_none() && self.stress_every == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_origin_specs_name_the_field() {
        let ok = OriginSpec { every: 10, origin_every: 100, slots: 8 };
        assert!(ok.validate("msd", 0.005, true).is_ok());
        let e = OriginSpec { every: 0, ..ok }.validate("msd", 0.005, true).unwrap_err();
        assert!(e.starts_with("msd.every"), "{e}");
        let e = OriginSpec { origin_every: 105, ..ok }.validate("vacf", 0.005, false).unwrap_err();
        assert!(e.starts_with("vacf.origin_every"), "{e}");
        let e = OriginSpec { slots: 0, ..ok }.validate("msd", 0.005, true).unwrap_err();
        assert!(e.starts_with("msd.slots"), "{e}");
        let e = OriginSpec { every: 100, origin_every: 1000, slots: 4 }.validate("msd", 0.005, true).unwrap_err();
        assert!(e.contains("at most every 50 steps"), "{e}");
        assert!(OriginSpec { every: 100, origin_every: 1000, slots: 4 }.validate("vacf", 0.005, false).is_ok());
    }
}
