//! What a measurement asks the backend to sample, from the time step and the lags wanted,
//! and the production steps it needs: the sampling plans behind `argon-sandbox measure`.
//!
//! Diffusion: MSD samples every ~0.1 tau (within the unwrapping bound of
//! [`super::spec::MAX_MSD_INTERVAL_TAU`]), an origin every ~1 tau, lags to `max_lag`; VACF
//! samples every ~0.05 tau, an origin every ~1 tau, lags to half of `max_lag`. Viscosity:
//! the pressure tensor every ~0.025 tau (5 steps at dt 0.005, the interval of LAMMPS's
//! `examples/VISCOSITY` Green-Kubo inputs). Both correlation functions are even and smooth in
//! time, so the trapezoid rule over their lags has no error term from t = 0 (the odd
//! derivatives vanish there; what is left is aliasing from frequencies near 2 pi / h, 125 /
//! tau at 0.05 tau, where the liquid's vibrational spectrum has long ended), and samples much
//! closer than their decay times (0.1 to 0.3 tau in the liquid) add little information while
//! each costs a pass over the atoms (and, for the stress, a force pass with the tensor).

use super::spec::{MAX_SLOTS, OriginSpec, TransportSpec};

/// Spacing of MSD samples and origins, of VACF samples and origins, and of stress samples, in tau.
pub const MSD_EVERY_TAU: f64 = 0.1;
pub const MSD_ORIGIN_TAU: f64 = 1.0;
pub const VACF_EVERY_TAU: f64 = 0.05;
pub const VACF_ORIGIN_TAU: f64 = 1.0;
pub const STRESS_EVERY_TAU: f64 = 0.025;

/// Steps nearest to `tau` at time step `dt`, at least 1.
fn steps(tau: f64, dt: f64) -> u64 {
    ((tau / dt).round() as u64).max(1)
}

/// Origins `spacing_tau` apart (rounded to a multiple of the sample interval) reaching lags
/// of `max_lag` tau, with more spacing where [`MAX_SLOTS`] would not reach.
fn origins(every: u64, spacing_tau: f64, max_lag: f64, dt: f64) -> OriginSpec {
    let mut origin_every = every * (steps(spacing_tau, dt) / every).max(1);
    let slots_for = |oe: u64| (max_lag / (oe as f64 * dt)).ceil() as usize + 1;
    while slots_for(origin_every) > MAX_SLOTS {
        origin_every += every;
    }
    OriginSpec { every, origin_every, slots: slots_for(origin_every).max(2) }
}

/// The MSD and VACF sampling of a diffusion measurement with lags to `max_lag` tau.
pub fn diffusion(dt: f64, max_lag: f64) -> TransportSpec {
    let msd_every = steps(MSD_EVERY_TAU, dt).min(steps(super::spec::MAX_MSD_INTERVAL_TAU, dt));
    TransportSpec {
        msd: Some(origins(msd_every, MSD_ORIGIN_TAU, max_lag, dt)),
        vacf: Some(origins(steps(VACF_EVERY_TAU, dt), VACF_ORIGIN_TAU, 0.5 * max_lag, dt)),
        stress_every: 0,
    }
}

/// Production steps a diffusion measurement with lags to `max_lag` needs: the independent
/// time blocks of its standard error, [`super::diffusion::MIN_BLOCKS`] of
/// [`super::diffusion::BLOCK_LAGS`] times the longest lag (which also lets half the origins
/// reach that lag, `diffusion::usable_end`).
pub fn diffusion_min_steps(dt: f64, max_lag: f64) -> u64 {
    let spec = diffusion(dt, max_lag);
    let m = spec.msd.unwrap_or(OriginSpec { every: 1, origin_every: 1, slots: 1 });
    // The longest lag any record has (the newest origin's), which the fit may reach.
    let lag = m.slots as u64 * m.origin_every - m.every;
    let block = (super::diffusion::BLOCK_LAGS * lag as f64).ceil() as u64;
    // Records start at the first origin, one origin spacing after the start.
    (super::diffusion::MIN_BLOCKS as u64 * block).max(2 * lag) + m.origin_every
}

/// The stress sampling of a viscosity measurement.
pub fn viscosity(dt: f64) -> TransportSpec {
    TransportSpec { msd: None, vacf: None, stress_every: steps(STRESS_EVERY_TAU, dt) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_pass_the_contract_and_reach_their_lags() {
        for dt in [0.001, 0.002, 0.005, 0.01] {
            for lag in [5.0, 20.0, 200.0] {
                let s = diffusion(dt, lag);
                s.validate(dt).unwrap();
                let m = s.msd.unwrap();
                assert!((m.slots as u64 - 1) * m.origin_every >= (lag / dt).floor() as u64, "{dt} {lag} {m:?}");
                assert!(diffusion_min_steps(dt, lag) >= 2 * (lag / dt) as u64);
            }
            viscosity(dt).validate(dt).unwrap();
        }
        assert_eq!(diffusion(0.005, 20.0).msd.unwrap(), OriginSpec { every: 20, origin_every: 200, slots: 21 });
    }
}
