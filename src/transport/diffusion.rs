//! Self-diffusion from the backends' origin records ([`OriginRecord`]): the mean-squared
//! displacement and the velocity autocorrelation per lag averaged over time origins, the
//! Einstein coefficient from a weighted line through the MSD's linear regime, the
//! Green-Kubo coefficient from the VACF's integral (a check), standard errors from blocks of
//! consecutive origins, and the Yeh-Hummer finite-size correction. Pure functions of records;
//! no backend code (reduced LJ units throughout).
//!
//! **Linear regime** (the rule [`einstein`] applies): the fit ends at the longest lag that at
//! least half as many origins reach as the best-sampled lag ([`usable_end`]); it starts at
//! the first lag from which on every local log-log slope of the MSD, `ln(MSD(t')/MSD(t)) /
//! ln(t'/t)` with `t'` the first lag at least [`SLOPE_SPAN`] times `t`, is within
//! [`SLOPE_TOLERANCE`] of 1 (past the ballistic `t^2` and the caging regime). At least
//! [`MIN_FIT_POINTS`] lags must remain, else the run is too short (the error says so).

use super::spec::OriginRecord;
use crate::physics::sim_box::SimBox;

/// Local log-log slopes within this of 1 count as linear (diffusive).
pub const SLOPE_TOLERANCE: f64 = 0.1;
/// A local slope compares lag t with the first lag at least this many times longer.
pub const SLOPE_SPAN: f64 = 1.2;
/// Lags a fit needs at least.
pub const MIN_FIT_POINTS: usize = 4;
/// Most time blocks the standard errors come from.
pub const BLOCKS: usize = 8;
/// A block is at least this many times the longest lag long.
pub const BLOCK_LAGS: f64 = 1.5;
/// Blocks needed at least for a standard error.
pub const MIN_BLOCKS: usize = 4;
/// The Yeh-Hummer constant for a cubic periodic lattice (the Ewald-like sum of the
/// Oseen tensor over images).
pub const YEH_HUMMER_XI: f64 = 2.837297;

/// One quantity (MSD in sigma^2 or VACF in sigma^2/tau^2) per atom of one species, per lag,
/// averaged over origins.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curve {
    /// Lags in steps, increasing.
    pub lag_steps: Vec<u64>,
    /// Lags in tau.
    pub lag: Vec<f64>,
    /// Mean over origins of the per-atom value.
    pub mean: Vec<f64>,
    /// Standard error of the mean over origins (the scatter of the origins' values over the
    /// square root of their number; 0 with one origin).
    pub stderr: Vec<f64>,
    /// Origins behind each lag.
    pub origins: Vec<usize>,
}

/// A transport coefficient with its standard error and how it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub stderr: f64,
    /// The lags (tau) the value comes from: the fit range or the integration range.
    pub from_lag: f64,
    pub to_lag: f64,
    /// Independent blocks behind the standard error.
    pub blocks: usize,
}

/// Averages `records` of species `species` (over its `atoms` atoms) into a curve, lags in tau
/// at time step `dt`. Only records whose origin step passes `keep` count.
pub fn average(records: &[OriginRecord], species: usize, atoms: usize, dt: f64, keep: impl Fn(u64) -> bool) -> Curve {
    let mut by_lag: std::collections::BTreeMap<u64, (f64, f64, usize)> = Default::default();
    let per_atom = 1.0 / atoms.max(1) as f64;
    for r in records.iter().filter(|r| keep(r.origin_step) && r.step >= r.origin_step) {
        let Some(&s) = r.sums.get(species) else { continue };
        let x = s * per_atom;
        let e = by_lag.entry(r.step - r.origin_step).or_insert((0.0, 0.0, 0));
        e.0 += x;
        e.1 += x * x;
        e.2 += 1;
    }
    let mut c = Curve::default();
    for (lag, (sum, sum_sq, n)) in by_lag {
        let mean = sum / n as f64;
        let var = if n > 1 { ((sum_sq - n as f64 * mean * mean) / (n - 1) as f64).max(0.0) } else { 0.0 };
        c.lag_steps.push(lag);
        c.lag.push(lag as f64 * dt);
        c.mean.push(mean);
        c.stderr.push((var / n as f64).sqrt());
        c.origins.push(n);
    }
    c
}

/// The index of the longest lag that at least half as many origins reach as the
/// best-sampled lag; None for an empty curve.
pub fn usable_end(c: &Curve) -> Option<usize> {
    let most = *c.origins.iter().max()?;
    c.origins.iter().rposition(|&n| 2 * n >= most)
}

/// The MSD's linear regime as an index range (see the module's rule), or an error saying
/// what is missing.
pub fn linear_regime(msd: &Curve) -> Result<std::ops::RangeInclusive<usize>, String> {
    let end = usable_end(msd).ok_or("no mean-squared displacement records: the run sampled nothing")?;
    // The local slope at each lag i > 0 with a partner lag j >= SLOPE_SPAN t_i within the end
    // (None for the last lags, which have none: they join the regime that precedes them).
    let slope_ok = |i: usize| -> Option<bool> {
        let t = msd.lag[i];
        let j = (i + 1..=end).find(|&j| msd.lag[j] >= SLOPE_SPAN * t)?;
        let (a, b) = (msd.mean[i], msd.mean[j]);
        if a <= 0.0 || b <= 0.0 {
            return Some(false);
        }
        Some(((b / a).ln() / (msd.lag[j] / t).ln() - 1.0).abs() <= SLOPE_TOLERANCE)
    };
    let checked: Vec<(usize, bool)> =
        (1..=end).filter(|&i| msd.lag[i] > 0.0).filter_map(|i| slope_ok(i).map(|ok| (i, ok))).collect();
    let first = checked.iter().rev().take_while(|(_, ok)| *ok).last().map(|(i, _)| *i);
    let Some(start) = first else {
        return Err(format!(
            "the mean-squared displacement is not yet linear at the longest lag ({:.3} tau): its log-log slope \
             differs from 1 by more than {SLOPE_TOLERANCE}; use longer lags or a denser fluid",
            msd.lag[end]
        ));
    };
    if end + 1 - start < MIN_FIT_POINTS {
        return Err(format!(
            "the linear regime of the mean-squared displacement ({:.3} to {:.3} tau) holds {} lags, fewer than \
             the {MIN_FIT_POINTS} a fit needs: use longer lags",
            msd.lag[start],
            msd.lag[end],
            end + 1 - start
        ));
    }
    Ok(start..=end)
}

/// Weighted least-squares line y = a + b x (weights 1/sigma^2; all 1 when any sigma is 0):
/// returns (a, b).
fn weighted_line(x: &[f64], y: &[f64], sigma: &[f64]) -> Option<(f64, f64)> {
    let unweighted = sigma.iter().any(|&s| s <= 0.0 || !s.is_finite());
    let w: Vec<f64> = sigma.iter().map(|&s| if unweighted { 1.0 } else { 1.0 / (s * s) }).collect();
    let sw: f64 = w.iter().sum();
    let mx = x.iter().zip(&w).map(|(a, w)| a * w).sum::<f64>() / sw;
    let my = y.iter().zip(&w).map(|(a, w)| a * w).sum::<f64>() / sw;
    let sxx: f64 = x.iter().zip(&w).map(|(a, w)| w * (a - mx) * (a - mx)).sum();
    let sxy: f64 = x.iter().zip(y).zip(&w).map(|((a, b), w)| w * (a - mx) * (b - my)).sum();
    (x.len() >= 2 && sxx > 0.0).then(|| (my - sxy / sxx * mx, sxy / sxx))
}

/// The weighted line MSD = a + b t through `c` over its lags from `from` to `to` (tau), as
/// (a, b): the line the Einstein coefficient D = b / 6 comes from (and a plot draws).
pub fn fit_line(c: &Curve, from: f64, to: f64) -> Option<(f64, f64)> {
    let idx: Vec<usize> = (0..c.lag.len()).filter(|&i| c.lag[i] >= from && c.lag[i] <= to).collect();
    let pick = |v: &[f64]| idx.iter().map(|&i| v[i]).collect::<Vec<f64>>();
    weighted_line(&pick(&c.lag), &pick(&c.mean), &pick(&c.stderr))
}

/// D = slope / 6 of a weighted line through `c` over the lags from `from` to `to` (tau).
fn einstein_slope(c: &Curve, from: f64, to: f64) -> Option<f64> {
    fit_line(c, from, to).map(|(_, b)| b / 6.0)
}

/// Applies `estimate` to each of up to [`BLOCKS`] disjoint time blocks of the run, each at
/// least [`BLOCK_LAGS`] times `lag_steps` long, with only the records whose origin and step
/// both lie inside the block (so blocks share no stretch of trajectory and are independent
/// once longer than the correlation time); the values' scatter gives the standard error.
/// Each block has fewer origin pairs than the whole run, so this error is, if anything, a
/// little larger than the whole run's.
fn block_errors(
    records: &[OriginRecord],
    species: usize,
    atoms: usize,
    dt: f64,
    lag_steps: u64,
    estimate: impl Fn(&Curve) -> Option<f64>,
) -> Result<(f64, usize), String> {
    let first = records.iter().map(|r| r.origin_step).min().unwrap_or(0);
    let last = records.iter().map(|r| r.step).max().unwrap_or(0);
    let span = last.saturating_sub(first) + 1;
    let need = (BLOCK_LAGS * lag_steps as f64).ceil().max(1.0) as u64;
    let blocks = ((span / need) as usize).min(BLOCKS);
    if blocks < MIN_BLOCKS {
        return Err(format!(
            "the records span {span} steps, too few for a standard error: {MIN_BLOCKS} independent blocks of {BLOCK_LAGS} x the longest lag ({lag_steps} steps) need at least {} steps (run longer or shorten the lags)",
            MIN_BLOCKS as u64 * need
        ));
    }
    let len = span / blocks as u64;
    let mut values = Vec::with_capacity(blocks);
    for b in 0..blocks as u64 {
        let (lo, hi) = (first + b * len, first + (b + 1) * len);
        let inside: Vec<OriginRecord> =
            records.iter().filter(|r| r.origin_step >= lo && r.step < hi).cloned().collect();
        let c = average(&inside, species, atoms, dt, |_| true);
        if let Some(v) = estimate(&c) {
            values.push(v);
        }
    }
    if values.len() < MIN_BLOCKS {
        return Err(format!(
            "only {} of {blocks} blocks of the run reach the lags the estimate needs: run longer",
            values.len()
        ));
    }
    let (_, sem) = crate::analysis::blocks::mean_sem(&values).ok_or("fewer than 2 blocks")?;
    Ok((sem, values.len()))
}

/// Einstein self-diffusion D = (1/6) d MSD / dt of species `species` (`atoms` of them) from
/// MSD records at time step `dt`: the weighted line over the linear regime (module rule);
/// the standard error from independent time blocks of the run fitted over the same lags.
pub fn einstein(records: &[OriginRecord], species: usize, atoms: usize, dt: f64) -> Result<(Estimate, Curve), String> {
    let c = average(records, species, atoms, dt, |_| true);
    let range = linear_regime(&c)?;
    let (from, to) = (c.lag[*range.start()], c.lag[*range.end()]);
    let value = einstein_slope(&c, from, to).ok_or("the mean-squared displacement could not be fitted")?;
    let lag_steps = c.lag_steps[*range.end()];
    let (stderr, blocks) = block_errors(records, species, atoms, dt, lag_steps, |b| einstein_slope(b, from, to))?;
    Ok((Estimate { value, stderr, from_lag: from, to_lag: to, blocks }, c))
}

/// Trapezoid integral of `c.mean` over its lags up to index `end`.
fn integral(c: &Curve, end: usize) -> f64 {
    (1..=end.min(c.lag.len().saturating_sub(1)))
        .map(|i| 0.5 * (c.mean[i] + c.mean[i - 1]) * (c.lag[i] - c.lag[i - 1]))
        .sum()
}

/// Green-Kubo self-diffusion D = (1/3) integral_0^t <v(0) . v(t)> dt of species `species`
/// from VACF records, by trapezoid over the lags up to the longest usable one
/// ([`usable_end`]); the standard error from independent time blocks of the run
/// integrated to the same lag.
pub fn green_kubo(
    records: &[OriginRecord],
    species: usize,
    atoms: usize,
    dt: f64,
) -> Result<(Estimate, Curve), String> {
    let c = average(records, species, atoms, dt, |_| true);
    let end = usable_end(&c).ok_or("no velocity autocorrelation records: the run sampled nothing")?;
    if c.lag_steps.first() != Some(&0) || end < MIN_FIT_POINTS {
        return Err("the velocity autocorrelation has too few lags to integrate: run longer".into());
    }
    let to = c.lag[end];
    let value = integral(&c, end) / 3.0;
    let (stderr, blocks) = block_errors(records, species, atoms, dt, c.lag_steps[end], |b| {
        let e = b.lag.iter().rposition(|&t| t <= to + 1e-12)?;
        (b.lag_steps.first() == Some(&0) && (b.lag[e] - to).abs() < 1e-9).then(|| integral(b, e) / 3.0)
    })?;
    Ok((Estimate { value, stderr, from_lag: 0.0, to_lag: to, blocks }, c))
}

/// Why the Yeh-Hummer correction does not apply to a box, or None when it does (cubic and
/// periodic along every axis).
pub fn yeh_hummer_inapplicable(b: &SimBox) -> Option<String> {
    if !b.fully_periodic() {
        return Some("the box has walls (the correction is for a periodic box)".into());
    }
    let l = b.length();
    if (l[0] - l[1]).abs() > 1e-9 * l[0] || (l[0] - l[2]).abs() > 1e-9 * l[0] {
        return Some(format!(
            "the box is not cubic ({:.4} x {:.4} x {:.4} sigma; the constant xi is for a cube)",
            l[0], l[1], l[2]
        ));
    }
    None
}

/// The Yeh-Hummer finite-size correction of a self-diffusion coefficient measured in a
/// cubic periodic box of edge `edge` (sigma): `D_inf = D_pbc + xi k_B T / (6 pi eta L)`,
/// xi = [`YEH_HUMMER_XI`], with `temperature` (epsilon / k_B) and shear viscosity
/// `viscosity` (epsilon tau / sigma^3). I.-C. Yeh and G. Hummer, "System-size dependence of
/// diffusion coefficients and viscosities from molecular dynamics simulations with periodic
/// boundary conditions", J. Phys. Chem. B 108 (2004) 15873.
pub fn yeh_hummer_correction(temperature: f64, viscosity: f64, edge: f64) -> f64 {
    YEH_HUMMER_XI * temperature / (6.0 * std::f64::consts::PI * viscosity * edge)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of one species of `atoms` atoms whose per-atom MSD is `f(lag_tau)` exactly.
    fn records(
        f: impl Fn(f64) -> f64,
        atoms: usize,
        origins: u64,
        every: u64,
        lags: u64,
        dt: f64,
    ) -> Vec<OriginRecord> {
        let mut out = Vec::new();
        for o in 0..origins {
            let origin_step = 100 + o * every * 10;
            for l in 0..=lags {
                let step = origin_step + l * every;
                out.push(OriginRecord {
                    step,
                    origin_step,
                    sums: vec![f((step - origin_step) as f64 * dt) * atoms as f64],
                });
            }
        }
        out
    }

    #[test]
    fn einstein_recovers_the_slope_past_the_ballistic_regime() {
        // Ballistic t^2 below t = 1, then 6 D t with D = 0.07: the fit starts past the bend.
        let d = 0.07;
        let msd = |t: f64| if t < 1.0 { 6.0 * d * t * t } else { 6.0 * d * (2.0 * t - 1.0) };
        let r = records(msd, 100, 400, 20, 200, 0.005);
        let (e, c) = einstein(&r, 0, 100, 0.005).unwrap();
        assert!(e.from_lag > 1.0, "fit starts at {}", e.from_lag);
        assert!((e.value - 2.0 * d).abs() < 1e-9, "{}", e.value);
        assert_eq!(c.origins[0], 400);
        assert!(e.stderr < 1e-9 && e.blocks == BLOCKS);
    }

    #[test]
    fn a_ballistic_curve_has_no_linear_regime() {
        let r = records(|t| t * t, 10, 10, 20, 100, 0.005);
        let err = einstein(&r, 0, 10, 0.005).unwrap_err();
        assert!(err.contains("not yet linear"), "{err}");
    }

    #[test]
    fn green_kubo_integrates_an_exponential() {
        // <v(0).v(t)> = 3 T exp(-t / tau_v): D = T tau_v.
        let (t, tau_v) = (1.0, 0.2);
        let r = records(|s| 3.0 * t * (-s / tau_v).exp(), 50, 800, 1, 1000, 0.005);
        let (e, _) = green_kubo(&r, 0, 50, 0.005).unwrap();
        assert!((e.value - t * tau_v).abs() < 1e-4, "{}", e.value);
    }

    #[test]
    fn too_few_origins_for_an_error_say_so() {
        // 20 origins 200 steps apart with lags to 2000 steps: 5800 steps, not 4 blocks of 3000.
        let r = records(|t| 0.42 * t, 10, 20, 20, 100, 0.005);
        let err = einstein(&r, 0, 10, 0.005).unwrap_err();
        assert!(err.contains("too few for a standard error") && err.contains("at least 12000 steps"), "{err}");
    }

    #[test]
    fn yeh_hummer_applies_only_to_cubic_periodic_boxes() {
        assert!(yeh_hummer_inapplicable(&SimBox::new([10.0; 3], [true; 3])).is_none());
        assert!(yeh_hummer_inapplicable(&SimBox::new([10.0, 10.0, 12.0], [true; 3])).unwrap().contains("not cubic"));
        assert!(yeh_hummer_inapplicable(&SimBox::new([10.0; 3], [true, false, true])).unwrap().contains("walls"));
        // xi k T / (6 pi eta L) at T = 1, eta = 2.12, L = 17.1: Yeh and Hummer's equation 11.
        let c = yeh_hummer_correction(1.0, 2.12, 17.1);
        assert!((c - 2.837297 / (6.0 * std::f64::consts::PI * 2.12 * 17.1)).abs() < 1e-15);
        assert!((c - 0.004152).abs() < 1e-5, "{c}");
    }
}
