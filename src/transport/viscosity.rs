//! Shear viscosity by Green-Kubo from the backends' pressure-tensor records
//! ([`StressRecord`]): `eta(t) = V / (k_B T) integral_0^t <P_ab(0) P_ab(s)> ds`, the
//! autocorrelation of the three off-diagonal components xy, xz, yz averaged, through the
//! multiple-tau correlator of [`crate::analysis::correlator`] (Ramirez, Sukumaran,
//! Vorselaars & Likhtman, J. Chem. Phys. 133 (2010) 154103; LAMMPS's `fix
//! ave/correlate/long`), integrated by trapezoid over the correlator's lags. Pure functions
//! of records; no backend code (reduced LJ units: epsilon tau / sigma^3).
//!
//! **Plateau rule**: the value is the running integral at a fixed cut `t_cut`
//! ([`DEFAULT_T_CUT`] = 5 tau unless asked otherwise, the cut of the LAMMPS reference in
//! `tests/data/viscosity_gk`, whose running integral is flat from about 2 tau in the dense
//! fluid), integrating over every lag up to and including the last at or below `t_cut`
//! (as that reference's `reduce.py`). The integral at 0.6 and 1.6 `t_cut` is reported
//! beside it so a reader sees whether it is flat there.
//!
//! **Standard error**: the stress series is split into as many consecutive blocks as are
//! at least [`BLOCK_CUTS`] `t_cut` long (at most [`MAX_BLOCKS`]); each block's own
//! correlator gives its eta at `t_cut`, and the error is the standard error of their mean
//! (blocks much longer than the stress correlation time are independent).

use super::spec::StressRecord;
use crate::analysis::correlator::{self, Correlator};

/// The default cut of the running integral, in tau.
pub const DEFAULT_T_CUT: f64 = 5.0;
/// Blocks must be at least this many `t_cut` long.
pub const BLOCK_CUTS: f64 = 3.0;
/// Most blocks the error is estimated from.
pub const MAX_BLOCKS: usize = 20;
/// Blocks needed at least for a standard error.
pub const MIN_BLOCKS: usize = 5;

/// The Green-Kubo result of one series.
#[derive(Clone, Debug, PartialEq)]
pub struct Running {
    /// Lags in tau (the correlator's), increasing from 0.
    pub lag: Vec<f64>,
    /// Autocorrelation of the off-diagonal pressure, averaged over xy, xz, yz.
    pub acf: Vec<f64>,
    /// eta(t) = V / T * trapezoid integral up to each lag.
    pub eta: Vec<f64>,
}

impl Running {
    /// eta at `t_cut`: the running integral at the last lag at or below it; None when the
    /// lags do not reach it.
    pub fn at(&self, t_cut: f64) -> Option<f64> {
        if self.lag.last().is_none_or(|&l| l < t_cut * (1.0 - 1e-9)) {
            return None;
        }
        let i = self.lag.iter().rposition(|&t| t <= t_cut * (1.0 + 1e-9))?;
        Some(self.eta[i])
    }
}

/// The viscosity with its error, the rule's numbers and the running integral.
#[derive(Clone, Debug, PartialEq)]
pub struct Viscosity {
    pub value: f64,
    pub stderr: f64,
    pub t_cut: f64,
    /// eta at 0.6 and 1.6 t_cut (None where the lags end before).
    pub at_shorter: Option<f64>,
    pub at_longer: Option<f64>,
    pub blocks: usize,
    pub running: Running,
}

/// Correlator levels whose lags reach `t_max` tau at a sampling interval of `interval` tau.
pub fn levels_for(t_max: f64, interval: f64) -> usize {
    let samples = (t_max / interval).ceil().max(1.0);
    let mut levels = 1;
    while ((correlator::P - 1) * correlator::M.pow(levels as u32 - 1)) as f64 * 1.0 < samples && levels < 40 {
        levels += 1;
    }
    levels
}

/// The Green-Kubo running integral of `records` (consecutive, `interval` tau apart) in a
/// volume `volume` (sigma^3) at temperature `temperature`, with lags reaching `t_max`.
pub fn running(records: &[StressRecord], interval: f64, volume: f64, temperature: f64, t_max: f64) -> Running {
    let mut c = Correlator::new(3, levels_for(t_max, interval));
    for r in records {
        c.add(&[r.p[3], r.p[4], r.p[5]]);
    }
    let result = c.result();
    let lag: Vec<f64> = result.iter().map(|(l, _)| *l as f64 * interval).collect();
    let acf: Vec<f64> = result.iter().map(|(_, v)| *v).collect();
    let mut eta = vec![0.0; lag.len()];
    for i in 1..lag.len() {
        eta[i] = eta[i - 1] + 0.5 * (acf[i] + acf[i - 1]) * (lag[i] - lag[i - 1]) * volume / temperature;
    }
    Running { lag, acf, eta }
}

/// The steps of stress records a measurement with cut `t_cut` needs at time step `dt`:
/// [`MIN_BLOCKS`] blocks of [`BLOCK_CUTS`] `t_cut`.
pub fn min_steps(t_cut: f64, dt: f64) -> u64 {
    (MIN_BLOCKS as f64 * BLOCK_CUTS * t_cut / dt).ceil() as u64
}

/// The shear viscosity from `records` (every `every` steps at time step `dt`, consecutive),
/// in `volume` at `temperature`, by the module's plateau rule at `t_cut` with block errors.
pub fn green_kubo(
    records: &[StressRecord],
    every: u64,
    dt: f64,
    volume: f64,
    temperature: f64,
    t_cut: f64,
) -> Result<Viscosity, String> {
    if !(t_cut > 0.0 && t_cut.is_finite()) {
        return Err(format!("t_cut = {t_cut}: the cut of the Green-Kubo integral must be a positive time (tau)"));
    }
    if !(temperature > 0.0 && volume > 0.0) {
        return Err(format!("temperature {temperature} and volume {volume} must be positive"));
    }
    if let Some(w) = records.windows(2).find(|w| w[1].step != w[0].step + every) {
        return Err(format!(
            "the stress records are not consecutive: step {} follows {} (expected every {every} steps)",
            w[1].step, w[0].step
        ));
    }
    let interval = every as f64 * dt;
    let span = records.len() as f64 * interval;
    let block_len = BLOCK_CUTS * t_cut;
    let blocks = ((span / block_len).floor() as usize).min(MAX_BLOCKS);
    if blocks < MIN_BLOCKS {
        return Err(format!(
            "{} stress samples span {span:.1} tau, too short for t_cut = {t_cut} tau: the standard error needs \
             {MIN_BLOCKS} blocks of {block_len} tau, at least {} steps",
            records.len(),
            min_steps(t_cut, dt)
        ));
    }
    let t_max = 1.6 * t_cut;
    let all = running(records, interval, volume, temperature, t_max);
    let value = all.at(t_cut).ok_or("the correlator's lags do not reach t_cut")?;
    let per_block = records.len() / blocks;
    let values: Vec<f64> = (0..blocks)
        .filter_map(|b| {
            running(&records[b * per_block..(b + 1) * per_block], interval, volume, temperature, t_cut).at(t_cut)
        })
        .collect();
    if values.len() < MIN_BLOCKS {
        return Err("the blocks' correlators do not reach t_cut: run longer".into());
    }
    let (_, stderr) = crate::analysis::blocks::mean_sem(&values).ok_or("fewer than 2 blocks")?;
    Ok(Viscosity {
        value,
        stderr,
        t_cut,
        at_shorter: all.at(0.6 * t_cut),
        at_longer: all.at(1.6 * t_cut),
        blocks: values.len(),
        running: all,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Sequence, Stream};

    /// An Ornstein-Uhlenbeck signal per channel with variance `var` and correlation time
    /// `tau`, sampled every `h`: its autocorrelation integrates to var * tau.
    fn ou(n: usize, h: f64, var: f64, tau: f64, seed: u64) -> Vec<StressRecord> {
        let mut rng = Sequence::new(seed, Stream::GasPlacement, 1, 0);
        let a = (-h / tau).exp();
        let b = (var * (1.0 - a * a)).sqrt();
        let mut x = [0.0f64; 3];
        (0..n)
            .map(|i| {
                for v in x.iter_mut() {
                    // Box-Muller from two uniforms.
                    let (u1, u2) = (rng.uniform().max(1e-300), rng.uniform());
                    *v = a * *v + b * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                }
                StressRecord { step: 2 * i as u64 + 2, p: [0.0, 0.0, 0.0, x[0], x[1], x[2]] }
            })
            .collect()
    }

    #[test]
    fn green_kubo_of_an_ou_process_is_variance_times_correlation_time() {
        // V / T * var * tau = 1000 * 0.01 * 0.2 = 2.
        let r = ou(200_000, 0.01, 0.01, 0.2, 3);
        let v = green_kubo(&r, 2, 0.005, 1000.0, 1.0, 2.0).unwrap();
        assert!((v.value - 2.0).abs() < 3.0 * v.stderr + 0.02, "{} +- {}", v.value, v.stderr);
        assert!(v.stderr > 0.0 && v.stderr < 0.2, "{}", v.stderr);
        assert_eq!(v.blocks, MAX_BLOCKS);
        assert!(v.at_longer.is_some());
    }

    #[test]
    fn short_or_gappy_series_are_refused_with_the_steps_needed() {
        let r = ou(1000, 0.01, 0.01, 0.2, 4);
        let e = green_kubo(&r, 2, 0.005, 1000.0, 1.0, 5.0).unwrap_err();
        assert!(e.contains(&format!("at least {} steps", min_steps(5.0, 0.005))), "{e}");
        let mut gap = ou(10, 0.01, 0.01, 0.2, 5);
        gap.remove(3);
        assert!(green_kubo(&gap, 2, 0.005, 1.0, 1.0, 0.01).unwrap_err().contains("not consecutive"));
    }

    #[test]
    fn levels_reach_the_asked_lag() {
        let l = levels_for(8.0, 0.02);
        assert!(((correlator::P - 1) * correlator::M.pow(l as u32 - 1)) as f64 * 0.02 >= 8.0);
        assert!(((correlator::P - 1) * correlator::M.pow(l as u32 - 2)) as f64 * 0.02 < 8.0);
    }
}

/// A finished Green-Kubo shear viscosity (reduced) with the state it was measured at (number
/// density and thermostat temperature, NaN when unknown).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GreenKubo {
    pub value: f64,
    pub stderr: f64,
    pub density: f64,
    pub temperature: f64,
}

impl GreenKubo {
    /// The line shown beside another viscosity `(value, stderr)` (the flow profile's): this
    /// one with its state, and how far apart the two are in their combined standard errors.
    pub fn beside(&self, other: (f64, f64)) -> String {
        let sigma = (self.stderr * self.stderr + other.1 * other.1).sqrt();
        let apart = if sigma > 0.0 {
            format!("; the two differ by {:.1} combined standard errors", (other.0 - self.value).abs() / sigma)
        } else {
            String::new()
        };
        let state = if self.density.is_finite() && self.temperature.is_finite() {
            format!(" at ρ* {:.3}, T* {:.3}", self.density, self.temperature)
        } else {
            String::new()
        };
        format!("Green-Kubo (Measure panel){state}: η* = {:.3} ± {:.3}{apart}", self.value, self.stderr)
    }
}

#[cfg(test)]
mod green_kubo_tests {
    use super::GreenKubo;

    #[test]
    fn beside_gives_the_state_and_the_distance_in_combined_errors() {
        let gk = GreenKubo { value: 2.0, stderr: 0.03, density: 0.8, temperature: 1.0 };
        // |2.2 - 2.0| / sqrt(0.03^2 + 0.04^2) = 0.2 / 0.05 = 4.0
        assert_eq!(
            gk.beside((2.2, 0.04)),
            "Green-Kubo (Measure panel) at ρ* 0.800, T* 1.000: η* = 2.000 ± 0.030; the two differ by 4.0 combined standard errors"
        );
        let unknown = GreenKubo { density: f64::NAN, stderr: 0.0, ..gk };
        assert_eq!(unknown.beside((2.0, 0.0)), "Green-Kubo (Measure panel): η* = 2.000 ± 0.000");
    }
}
