//! Counting the shedding periods in the wake probe's signal (the cross-stream velocity behind
//! the body, one value per field window, [`super::WakeSeries`]): how many full periods the
//! probe has seen at half its running amplitude or more, and when each completed. Pure: the
//! series so far in, the periods out; call it again as the series grows.
//!
//! # Definitions
//!
//! - **Smoothed signal** s: the probe values smoothed over 5 neighbouring samples with the
//!   binomial weights [`SMOOTHING`] (1 4 6 4 1)/16 (renormalised at the ends). It damps
//!   white noise to 0.52 of its deviation and a shedding period of 14 samples (the vortex
//!   street's: 140 tau in 10 tau windows) to 0.90 of its swing.
//! - **Noise level** sigma: the standard deviation of the probe's noise, measured from the
//!   signal itself as the median absolute fourth difference (x[i-2] - 4 x[i-1] + 6 x[i] -
//!   4 x[i+1] + x[i+2]) over 0.6745 sqrt(70), which is sigma for white noise. A fourth
//!   difference all but cancels the shedding (a clean sine of 14 samples a period reads as a
//!   noise of 0.5 % of its amplitude; the same estimate from second differences would read
//!   8.5 %), so the estimate is the noise's even while the probe swings; the median ignores
//!   the few samples where the signal bends sharply.
//! - **Reversal**: the smoothed signal's turning points, found as a zigzag: a maximum (or
//!   minimum) is confirmed once the smoothed signal has fallen (or risen) from it by more than
//!   [`REVERSAL_NOISE`] sigma, so every swing between a confirmed maximum and minimum exceeds
//!   6 sigma peak to peak. White noise, which moves the smoothed signal by about 0.5 sigma,
//!   does not swing that far (see the calibration below); no mean is needed, so a drift of
//!   the signal's offset does not matter.
//! - **Upward crossing**: on each rise from a confirmed minimum to the next confirmed
//!   maximum, the time (linearly interpolated between samples) where the smoothed signal
//!   first crosses their midpoint, (min + max) / 2: the local mean of that swing. The rise
//!   into the first confirmed maximum starts from the lowest point before it: the swing
//!   before the first turn may be too small to confirm (the shedding growing out of the
//!   noise), but its rise still starts the first period; then that period's start is only as
//!   good as that lowest point, its end and swing are the real ones. Where that lowest point
//!   is the first sample, the rise counts only if the series starts quiet (flat: its second
//!   and third smoothed values within a reversal of the first, as in a tunnel started from a
//!   uniform stream); otherwise it may have begun before the series.
//! - **Period**: from one upward crossing to the next. Between them lie exactly one confirmed
//!   maximum and one confirmed minimum; the period's **half swing** is (max - min) / 2 of the
//!   smoothed signal. It is complete at its second crossing: its `end`, the time it
//!   completed.
//! - **Running amplitude** A: the largest half swing of the periods seen so far.
//! - **Full period**: a period whose half swing is at least [`HALF_AMPLITUDE`] A. The count
//!   is of these, over the whole series so far, compared with the amplitude as it stands now:
//!   while the shedding still grows, a period that was half the amplitude when it completed
//!   can fall below half of a later, larger one, and the count and the time of the third
//!   move on with it; once the amplitude saturates they stay. A growing sine is so counted
//!   from where its amplitude passes half its final one (the smoothing damps every period
//!   alike, so the ratio is the unsmoothed signal's).
//!
//! # Calibration and limits
//!
//! Swept with a prototype of this code. On Gaussian noise alone (series of 150 and 1,000
//! samples, 300 and 60 of each): white noise makes periods at a reversal of 3 sigma (17 of
//! the 60 long series have one or more) and none from 3.5. [`REVERSAL_NOISE`] = 6 leaves
//! room for noise correlated from one window to the next, which the fourth difference
//! underestimates: at a correlation of 0.3 (AR(1)) 6 sigma makes none, at 0.5 most long
//! series still get a period or more. The probe's real noise, recorded in a small CPU tunnel
//! with a steady wake (`tests/data/wake_probe/README.md`), is anti-correlated between 10 tau
//! windows (-0.54: the estimate is then on the safe side; no period at any reversal from 2
//! sigma) and correlated between 2 tau windows (+0.54: periods below 4.5 sigma, none above).
//!
//! The price is sensitivity: a swing must exceed 6 sigma peak to peak. On the vortex street's
//! measured growth (30 random phases, noise relative to the final amplitude), every period at
//! 0.6 of the final amplitude or more was counted, at the right time, in every run up to a
//! noise of 0.1 at 14 windows a period (the preset), in 29 of 30 at 10 windows a period and
//! 26 of 30 at 7; at a noise of 0.15, 27, 26 and 15 of 30 runs were whole. By its measured
//! numbers the vortex street's noise is about 0.05 of its final amplitude (its oscillation
//! rises out of the noise at about a twentieth of that).

use super::WakeError;

/// The smoothing weights (binomial, 5 samples), summing to 16.
pub const SMOOTHING: [f64; 5] = [1.0, 4.0, 6.0, 4.0, 1.0];
/// A turning point is confirmed once the smoothed signal has moved this many noise
/// deviations back from it.
pub const REVERSAL_NOISE: f64 = 6.0;
/// A full period swings at least this fraction of the running amplitude.
pub const HALF_AMPLITUDE: f64 = 0.5;
/// The full period whose completion time the readout gives.
pub const SHOWN_PERIOD: usize = 3;

/// For white noise, the median absolute fourth difference over the noise deviation:
/// 0.6745 (the median of |N(0, 1)|) times sqrt(1 + 16 + 36 + 16 + 1).
const FOURTH_DIFFERENCE_MEDIAN: f64 = 0.674_489_750_196_081_7 * 8.366_600_265_340_756;

/// One period of the smoothed signal between two upward crossings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShedPeriod {
    /// Its first and second upward crossing (tau): it completed at `end`.
    pub start: f64,
    pub end: f64,
    /// Half the difference between its maximum and minimum (smoothed), signal units.
    pub half_swing: f64,
    /// Whether it is a full period: `half_swing` >= [`HALF_AMPLITUDE`] times the running
    /// amplitude.
    pub full: bool,
}

/// The periods of a probe series so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SheddingPeriods {
    /// Every period above the noise, oldest first; `full` marks those counted.
    pub periods: Vec<ShedPeriod>,
    /// The running amplitude: the largest half swing (0 with no period).
    pub amplitude: f64,
    /// The noise level sigma the reversals are measured against (0 for fewer than 5 samples).
    pub noise: f64,
}

impl SheddingPeriods {
    /// Full periods completed so far.
    pub fn count(&self) -> usize {
        self.full().count()
    }

    /// When the `n`-th full period (1 for the first) completed, tau.
    pub fn completed_at(&self, n: usize) -> Option<f64> {
        self.full().nth(n.checked_sub(1)?).map(|p| p.end)
    }

    /// When the [`SHOWN_PERIOD`]-th (third) full period completed.
    pub fn third(&self) -> Option<f64> {
        self.completed_at(SHOWN_PERIOD)
    }

    /// The full periods, oldest first.
    pub fn full(&self) -> impl Iterator<Item = &ShedPeriod> {
        self.periods.iter().filter(|p| p.full)
    }

    /// "N full periods at half the running amplitude (A) or more; the third completed at T
    /// tau" (or that it has not yet, or that none has), the signal's unit given by `unit`.
    pub fn describe(&self, unit: &str) -> String {
        let n = self.count();
        if n == 0 {
            let floor = if self.noise > 0.0 {
                format!(
                    " (a period counts once it swings more than {REVERSAL_NOISE} times the noise, {:.3} {unit}, peak \
                     to peak)",
                    self.noise
                )
            } else {
                String::new()
            };
            return format!("0 full periods yet{floor}");
        }
        let what = if n == 1 { "full period" } else { "full periods" };
        let third = match self.third() {
            Some(t) => format!("the third completed at {t:.1} tau"),
            None => "the third not complete yet".to_string(),
        };
        format!("{n} {what} at half the running amplitude ({:.3} {unit}) or more; {third}", self.amplitude)
    }
}

/// The shedding periods in the probe signal `vy` sampled at `times` (increasing, one time per
/// value, all finite; the step need not be uniform): see the module's definitions. Fewer
/// than 5 samples have no period. Errors name the bad input.
pub fn shedding_periods(times: &[f64], vy: &[f64]) -> Result<SheddingPeriods, WakeError> {
    if times.len() != vy.len() {
        return Err(WakeError::LengthMismatch { what: "probe signal", times: times.len(), values: vy.len() });
    }
    for (what, xs) in [("times", times), ("probe signal", vy)] {
        if let Some((index, &value)) = xs.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(WakeError::NonFinite { what, index, value });
        }
    }
    if let Some(i) = (1..times.len()).find(|&i| times[i] <= times[i - 1]) {
        return Err(WakeError::NotIncreasing { index: i, time: times[i], previous: times[i - 1] });
    }
    if vy.len() < SMOOTHING.len() {
        return Ok(SheddingPeriods::default());
    }
    let noise = noise_level(vy);
    let s = smooth(vy);
    // A floor for round-off: a constant signal has no noise and must not turn on its last bit.
    let scale = s.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let reversal = (REVERSAL_NOISE * noise).max(1e-12 * scale);
    let turns = turning_points(&s, reversal);
    // The series starts quiet where it starts flat: its second and third values within a
    // reversal of the first (a tunnel started from a uniform stream has no cross-stream
    // velocity yet; a swing under way moves more between samples).
    let quiet_start = (s[1] - s[0]).abs() <= reversal && (s[2] - s[0]).abs() <= reversal;
    let crossings = upward_crossings(&s, times, &turns, quiet_start);
    let mut periods: Vec<ShedPeriod> = crossings
        .windows(2)
        .map(|w| {
            // The rise w[0] ends at its maximum turns[k]; the next minimum is turns[k + 1].
            let (start, k) = w[0];
            let half_swing = 0.5 * (s[turns[k]] - s[turns[k + 1]]);
            ShedPeriod { start, end: w[1].0, half_swing, full: false }
        })
        .collect();
    let amplitude = periods.iter().fold(0.0f64, |m, p| m.max(p.half_swing));
    for p in &mut periods {
        p.full = p.half_swing >= HALF_AMPLITUDE * amplitude;
    }
    Ok(SheddingPeriods { periods, amplitude, noise })
}

/// The noise deviation of `x` (at least 5 values) from its median absolute fourth difference.
fn noise_level(x: &[f64]) -> f64 {
    let mut d4: Vec<f64> = x.windows(5).map(|w| (w[0] - 4.0 * w[1] + 6.0 * w[2] - 4.0 * w[3] + w[4]).abs()).collect();
    let mid = d4.len() / 2;
    let (_, median, _) = d4.select_nth_unstable_by(mid, f64::total_cmp);
    *median / FOURTH_DIFFERENCE_MEDIAN
}

/// `x` smoothed with the [`SMOOTHING`] weights, renormalised where they run past the ends.
fn smooth(x: &[f64]) -> Vec<f64> {
    let half = SMOOTHING.len() / 2;
    (0..x.len())
        .map(|i| {
            let (mut sum, mut weight) = (0.0, 0.0);
            for (k, w) in SMOOTHING.iter().enumerate() {
                if let Some(v) = (i + k).checked_sub(half).and_then(|j| x.get(j)) {
                    sum += w * v;
                    weight += w;
                }
            }
            sum / weight
        })
        .collect()
}

/// The confirmed turning points of `s` (indices, alternately maxima and minima): each one
/// the extreme of its stretch, confirmed once `s` has moved back from it by more than
/// `reversal`. The extremes at the two ends (the first sample, the one still in progress at
/// the last) are not among them.
fn turning_points(s: &[f64], reversal: f64) -> Vec<usize> {
    let mut turns = Vec::new();
    // Before the first turn: the lowest and highest so far. After: +1 rising (tracking a
    // maximum at `cand`), -1 falling (tracking a minimum).
    let (mut lo, mut hi, mut dir, mut cand) = (0, 0, 0i8, 0);
    for (i, &v) in s.iter().enumerate() {
        match dir {
            0 => {
                if v < s[lo] {
                    lo = i;
                }
                if v > s[hi] {
                    hi = i;
                }
                // The first sample is no turning point: the signal may have kept going before it.
                if v - s[lo] > reversal {
                    turns.extend((lo > 0).then_some(lo));
                    (dir, cand) = (1, i);
                } else if s[hi] - v > reversal {
                    turns.extend((hi > 0).then_some(hi));
                    (dir, cand) = (-1, i);
                }
            }
            1 => {
                if v > s[cand] {
                    cand = i;
                } else if s[cand] - v > reversal {
                    turns.push(cand);
                    (dir, cand) = (-1, i);
                }
            }
            _ => {
                if v < s[cand] {
                    cand = i;
                } else if v - s[cand] > reversal {
                    turns.push(cand);
                    (dir, cand) = (1, i);
                }
            }
        }
    }
    turns
}

/// For each confirmed maximum `turns[k]`, the rise into it: (the time `s` first crosses the
/// midpoint between the maximum and the rise's base, k), oldest first. The base is the
/// confirmed minimum before the maximum; before the first turning point there is none, and
/// the first maximum's base is the lowest point before it, unless that is the first sample
/// of a series that did not start quiet (`quiet_start`: then the rise may have begun before
/// the series; a quiet start, flat, is where the rise began). Two
/// successive rises k and k + 2 bracket one period, whose minimum is `turns[k + 1]`.
fn upward_crossings(s: &[f64], times: &[f64], turns: &[usize], quiet_start: bool) -> Vec<(f64, usize)> {
    let mut out = Vec::new();
    for (k, &b) in turns.iter().enumerate() {
        let a = match k.checked_sub(1).map(|j| turns[j]) {
            Some(a) => a,
            None => (0..b).min_by(|&i, &j| s[i].total_cmp(&s[j])).unwrap_or(0),
        };
        if (a == 0 && !(k == 0 && quiet_start)) || s[a] >= s[b] {
            continue; // a minimum, or no base
        }
        let mid = 0.5 * (s[a] + s[b]);
        // s[a] < mid < s[b], so some step from below mid to mid or above exists in a..b.
        if let Some(i) = (a..b).find(|&i| s[i] < mid && s[i + 1] >= mid) {
            let f = (mid - s[i]) / (s[i + 1] - s[i]);
            out.push((times[i] + f * (times[i + 1] - times[i]), k));
        }
    }
    out
}

#[cfg(test)]
mod tests;
