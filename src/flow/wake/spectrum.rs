//! The dominant frequency of a uniformly sampled signal (lift force, or cross-stream velocity
//! at a wake probe) and its Strouhal number St = f D / U: a Hann-windowed, zero-padded FFT
//! of the detrended signal, the largest peak refined by a parabola through the log power of
//! its three bins, and a standard error from the scatter of the same estimate over
//! overlapping segments (Welch-like).

use rustfft::FftPlanner;
use rustfft::num_complex::Complex;

use super::{WakeError, check_positive, uniform_step};

/// Fewest samples a signal must have for a frequency.
pub const MIN_SAMPLES: usize = 16;
/// Fewest periods of the found frequency the signal (and each segment) must cover.
pub const MIN_PERIODS: f64 = 2.0;
/// The segment counts tried for the standard error, most first (50 % overlap).
const SEGMENTS: std::ops::RangeInclusive<usize> = 3..=8;

/// One-sided power spectral density of the detrended, Hann-windowed, zero-padded signal.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Spectrum {
    /// Frequencies, 1/tau: k / (n_fft dt) for k = 0 ..= n_fft / 2.
    pub frequency: Vec<f64>,
    /// Power spectral density at each frequency, (signal units)^2 tau, normalised by the
    /// window's energy so a white noise of variance s^2 reads about 2 s^2 dt.
    pub power: Vec<f64>,
}

/// The dominant frequency of a signal and its Strouhal number.
#[derive(Clone, Debug, PartialEq)]
pub struct StrouhalEstimate {
    /// Dominant frequency, 1/tau, and its standard error.
    pub frequency: f64,
    pub frequency_sem: f64,
    /// St = f D / U and its standard error.
    pub strouhal: f64,
    pub strouhal_sem: f64,
    /// How many periods of `frequency` the signal covers (first to last sample).
    pub periods: f64,
    /// Segments behind the standard error; 0 when the signal was too short to split and the
    /// error is half the FFT bin width of the whole signal, 1 / (2 n dt).
    pub segments: usize,
    /// The whole signal's spectrum, for a plot.
    pub spectrum: Spectrum,
}

/// The dominant frequency of `signal` sampled at `times` (uniform within 1e-6 relative, at
/// least [`MIN_SAMPLES`], all finite) and St = f `diameter` / `speed`.
///
/// Method: remove the mean and a linear trend, apply a Hann window, zero-pad to a power of
/// two at least 4 times the length, FFT; take the largest peak above the lowest bin of the
/// unpadded signal (frequencies under 1 / (n dt) are the trend's, not an oscillation's);
/// refine it by a parabola through the log power of the peak bin and its neighbours.
/// Standard error: the same estimate on K overlapping segments (50 % overlap, K from 8 down
/// to 3, the most for which each segment still covers [`MIN_PERIODS`] periods and 16
/// samples), std / sqrt(K); the segments overlap, so this is a little optimistic. A signal
/// too short to split gets half the bin width of the whole signal, 1 / (2 n dt).
///
/// Errors name the problem: too few samples, a non-finite value, a non-uniform step, a
/// signal with no oscillation, or one covering fewer than 2 periods of its frequency.
pub fn strouhal(times: &[f64], signal: &[f64], speed: f64, diameter: f64) -> Result<StrouhalEstimate, WakeError> {
    if times.len() != signal.len() {
        return Err(WakeError::LengthMismatch { what: "signal", times: times.len(), values: signal.len() });
    }
    if signal.len() < MIN_SAMPLES {
        return Err(WakeError::TooShort { what: "signal", got: signal.len(), need: MIN_SAMPLES });
    }
    if let Some((index, &value)) = signal.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(WakeError::NonFinite { what: "signal", index, value });
    }
    let dt = uniform_step(times)?;
    check_positive("speed", speed)?;
    check_positive("diameter", diameter)?;

    let n = signal.len();
    let (frequency, spectrum) = dominant_frequency(signal, dt)?;
    let periods = frequency * (n - 1) as f64 * dt;
    if periods < MIN_PERIODS {
        return Err(WakeError::TooFewPeriods { periods, frequency });
    }
    let (frequency_sem, segments) = match segment_spread(signal, dt, frequency) {
        Some((sem, k)) => (sem, k),
        None => (0.5 / (n as f64 * dt), 0),
    };
    let scale = diameter / speed;
    Ok(StrouhalEstimate {
        frequency,
        frequency_sem,
        strouhal: frequency * scale,
        strouhal_sem: frequency_sem * scale,
        periods,
        segments,
        spectrum,
    })
}

/// The refined frequency of the largest spectral peak above the lowest unpadded bin, and
/// the spectrum. `signal` is finite with at least [`MIN_SAMPLES`] values.
fn dominant_frequency(signal: &[f64], dt: f64) -> Result<(f64, Spectrum), WakeError> {
    let n = signal.len();
    let detrended = detrend(signal);
    let scale = signal.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let left = detrended.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if left <= 1e-12 * scale || left == 0.0 {
        return Err(WakeError::NoOscillation);
    }
    let n_fft = (4 * n).next_power_of_two();
    let mut buf: Vec<Complex<f64>> = vec![Complex::new(0.0, 0.0); n_fft];
    let mut window_energy = 0.0;
    for (i, (b, x)) in buf.iter_mut().zip(&detrended).enumerate() {
        let w = 0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / (n - 1) as f64).cos();
        window_energy += w * w;
        *b = Complex::new(w * x, 0.0);
    }
    FftPlanner::<f64>::new().plan_fft_forward(n_fft).process(&mut buf);

    let half = n_fft / 2;
    let df = 1.0 / (n_fft as f64 * dt);
    let norm = dt / window_energy;
    let frequency: Vec<f64> = (0..=half).map(|k| k as f64 * df).collect();
    let power: Vec<f64> = (0..=half)
        .map(|k| {
            let one_sided = if k == 0 || k == half { 1.0 } else { 2.0 };
            one_sided * norm * buf[k].norm_sqr()
        })
        .collect();

    // Bins below one unpadded bin (1 / (n dt)) hold the trend and the window's own lobe.
    let k_min = n_fft.div_ceil(n);
    let k_max = half - 1;
    let mut best = None;
    for k in k_min..=k_max {
        let p = power[k];
        if p.is_finite() && best.is_none_or(|(_, bp)| p > bp) {
            best = Some((k, p));
        }
    }
    let Some((k, p)) = best.filter(|&(_, p)| p > 0.0) else { return Err(WakeError::NoOscillation) };
    let shift = parabolic_shift(power[k - 1], p, power[k + 1]);
    Ok(((k as f64 + shift) * df, Spectrum { frequency, power }))
}

/// The offset (in bins, within +-1/2) of the vertex of the parabola through the log powers
/// of a peak bin `b` and its neighbours `a`, `c`; 0 where the logs are undefined or the
/// three points do not bend down.
fn parabolic_shift(a: f64, b: f64, c: f64) -> f64 {
    if a <= 0.0 || b <= 0.0 || c <= 0.0 {
        return 0.0;
    }
    let (la, lb, lc) = (a.ln(), b.ln(), c.ln());
    let bend = la - 2.0 * lb + lc;
    if bend < 0.0 { (0.5 * (la - lc) / bend).clamp(-0.5, 0.5) } else { 0.0 }
}

/// The signal less its least-squares straight line over the sample index.
fn detrend(signal: &[f64]) -> Vec<f64> {
    let n = signal.len() as f64;
    let i_mean = (n - 1.0) / 2.0;
    let x_mean = signal.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, x) in signal.iter().enumerate() {
        let di = i as f64 - i_mean;
        sxy += di * (x - x_mean);
        sxx += di * di;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    signal.iter().enumerate().map(|(i, x)| x - x_mean - slope * (i as f64 - i_mean)).collect()
}

/// The standard error of the dominant frequency from K overlapping segments, and K: the
/// most segments (up to 8, at least 3) that still each cover [`MIN_PERIODS`] periods of
/// `frequency` and [`MIN_SAMPLES`] samples. None when even 3 segments are too short or a
/// segment has no peak.
fn segment_spread(signal: &[f64], dt: f64, frequency: f64) -> Option<(f64, usize)> {
    let n = signal.len();
    // (L - 1) dt >= MIN_PERIODS / f.
    let periods_len = (MIN_PERIODS / (frequency * dt)).ceil() + 1.0;
    if !periods_len.is_finite() {
        return None;
    }
    let min_len = MIN_SAMPLES.max(periods_len as usize);
    let k = SEGMENTS.rev().find(|&k| 2 * n / (k + 1) >= min_len)?;
    let len = 2 * n / (k + 1);
    let hop = len / 2;
    let peaks: Vec<f64> = (0..k)
        .map(|j| dominant_frequency(&signal[j * hop..j * hop + len], dt).map(|(f, _)| f).ok())
        .collect::<Option<_>>()?;
    let mean = peaks.iter().sum::<f64>() / k as f64;
    let var = peaks.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    Some(((var / k as f64).sqrt(), k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Sequence, Stream};
    use std::f64::consts::TAU;

    fn sampled(n: usize, dt: f64, mut f: impl FnMut(f64) -> f64) -> (Vec<f64>, Vec<f64>) {
        let t: Vec<f64> = (0..n).map(|i| 10.0 + i as f64 * dt).collect();
        let x = t.iter().map(|&t| f(t)).collect();
        (t, x)
    }

    #[test]
    fn noisy_sinusoid_frequency_within_one_percent_and_covered_by_its_error() {
        // 4000 samples at dt 0.05: 200 tau, 14.6 periods of f = 0.0731, noise of half the
        // amplitude, a drift and an offset the detrending must remove.
        let f0 = 0.0731;
        let mut rng = Sequence::new(7, Stream::Langevin, 0, 0);
        let (t, x) = sampled(4000, 0.05, |t| 3.0 + 0.01 * t + (TAU * f0 * t + 0.4).sin() + 0.5 * rng.normal());
        let (u, d) = (0.5, 4.0);
        let s = strouhal(&t, &x, u, d).unwrap();
        let rel = (s.frequency / f0 - 1.0).abs();
        assert!(rel < 0.01, "f {} against {f0}: {:.2} %", s.frequency, rel * 100.0);
        assert!(s.segments >= 3, "segments {}", s.segments);
        assert!(s.frequency_sem > 0.0 && s.frequency_sem < 0.05 * f0, "sem {}", s.frequency_sem);
        assert!(
            (s.frequency - f0).abs() <= 3.0 * s.frequency_sem,
            "f {} +- {} does not cover {f0}",
            s.frequency,
            s.frequency_sem
        );
        assert!((s.strouhal - s.frequency * d / u).abs() < 1e-15);
        assert!((s.strouhal_sem - s.frequency_sem * d / u).abs() < 1e-15);
        assert!((s.periods - f0 * 3999.0 * 0.05).abs() < 0.1, "periods {}", s.periods);
        // The spectrum peaks where the frequency is.
        let sp = &s.spectrum;
        assert_eq!(sp.frequency.len(), sp.power.len());
        assert_eq!(sp.frequency.len(), 16384 / 2 + 1);
        let k = (1..sp.power.len()).max_by(|&a, &b| sp.power[a].total_cmp(&sp.power[b])).unwrap();
        assert!((sp.frequency[k] - f0).abs() < 1.0 / (4000.0 * 0.05), "peak bin at {}", sp.frequency[k]);
    }

    #[test]
    fn noiseless_sinusoid_is_found_to_a_small_fraction_of_a_bin() {
        let f0 = 0.173;
        let (t, x) = sampled(500, 0.1, |t| (TAU * f0 * t).cos());
        let s = strouhal(&t, &x, 1.0, 1.0).unwrap();
        let bin = 1.0 / (500.0 * 0.1);
        assert!((s.frequency - f0).abs() < 0.02 * bin, "f {} against {f0}", s.frequency);
    }

    #[test]
    fn two_sinusoids_give_the_stronger() {
        let (fa, fb) = (0.05, 0.13);
        for (amp_a, amp_b, want) in [(1.0, 0.5, fa), (0.4, 1.0, fb)] {
            let (t, x) = sampled(2000, 0.1, |t| amp_a * (TAU * fa * t).sin() + amp_b * (TAU * fb * t + 1.0).sin());
            let s = strouhal(&t, &x, 1.0, 1.0).unwrap();
            assert!((s.frequency / want - 1.0).abs() < 0.01, "{amp_a}/{amp_b}: f {} not {want}", s.frequency);
        }
    }

    #[test]
    fn one_and_a_half_periods_are_refused() {
        let n = 64;
        let dt = 0.1;
        let f0 = 1.5 / ((n - 1) as f64 * dt);
        let (t, x) = sampled(n, dt, |t| (TAU * f0 * t).sin());
        match strouhal(&t, &x, 1.0, 1.0) {
            Err(WakeError::TooFewPeriods { periods, .. }) => assert!(periods < 2.0),
            other => panic!("1.5 periods: {other:?}"),
        }
        let msg = strouhal(&t, &x, 1.0, 1.0).unwrap_err().to_string();
        assert!(msg.contains("periods") && msg.contains("longer"), "{msg}");
    }

    #[test]
    fn non_uniform_step_is_refused() {
        let (mut t, x) = sampled(100, 0.1, |t| (TAU * 0.2 * t).sin());
        t[40] += 1e-4;
        let err = strouhal(&t, &x, 1.0, 1.0).unwrap_err();
        assert!(matches!(err, WakeError::NonUniform { index: 39, .. }), "{err:?}");
        assert!(err.to_string().contains("uniform"), "{err}");
        // Within the tolerance it passes (200 samples: 4 periods).
        let (mut t, x) = sampled(200, 0.1, |t| (TAU * 0.2 * t).sin());
        t[40] += 1e-9;
        assert!(strouhal(&t, &x, 1.0, 1.0).is_ok());
    }

    #[test]
    fn non_finite_values_are_refused() {
        let (t, mut x) = sampled(100, 0.1, |t| (TAU * 0.2 * t).sin());
        x[17] = f64::NAN;
        let err = strouhal(&t, &x, 1.0, 1.0).unwrap_err();
        assert!(matches!(err, WakeError::NonFinite { what: "signal", index: 17, .. }), "{err:?}");
        let (mut t, x) = sampled(100, 0.1, |t| (TAU * 0.2 * t).sin());
        t[3] = f64::INFINITY;
        assert!(matches!(strouhal(&t, &x, 1.0, 1.0), Err(WakeError::NonFinite { what: "times", index: 3, .. })));
    }

    #[test]
    fn short_flat_or_mismatched_signals_and_bad_parameters_are_refused() {
        let (t, x) = sampled(15, 0.1, |t| (TAU * 2.0 * t).sin());
        assert!(matches!(strouhal(&t, &x, 1.0, 1.0), Err(WakeError::TooShort { got: 15, need: 16, .. })));
        let (t, x) = sampled(100, 0.1, |t| 2.0 + 0.3 * t);
        assert_eq!(strouhal(&t, &x, 1.0, 1.0), Err(WakeError::NoOscillation));
        let (t, x) = sampled(100, 0.1, |t| (TAU * 0.2 * t).sin());
        assert!(matches!(strouhal(&t[..99], &x, 1.0, 1.0), Err(WakeError::LengthMismatch { .. })));
        assert!(matches!(strouhal(&t, &x, 0.0, 1.0), Err(WakeError::BadParameter { name: "speed", .. })));
        assert!(matches!(strouhal(&t, &x, 1.0, f64::NAN), Err(WakeError::BadParameter { name: "diameter", .. })));
    }

    #[test]
    fn a_signal_too_short_to_split_gets_half_a_bin() {
        // 3 periods in 64 samples: 3 segments of 32 samples hold 1.5 periods each.
        let n = 64;
        let dt = 0.1;
        let f0 = 3.0 / ((n - 1) as f64 * dt);
        let (t, x) = sampled(n, dt, |t| (TAU * f0 * t).sin());
        let s = strouhal(&t, &x, 2.0, 3.0).unwrap();
        assert_eq!(s.segments, 0);
        assert!((s.frequency_sem - 0.5 / (n as f64 * dt)).abs() < 1e-15);
        assert!((s.strouhal_sem - s.frequency_sem * 1.5).abs() < 1e-15);
        assert!((s.frequency / f0 - 1.0).abs() < 0.01, "f {} against {f0}", s.frequency);
    }
}
