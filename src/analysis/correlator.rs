//! A multiple-tau correlator (Ramirez, Sukumaran, Vorselaars & Likhtman, J. Chem. Phys. 133
//! (2010) 154103; the scheme of LAMMPS's `fix ave/correlate/long`): the time
//! autocorrelation of one or more channels of a signal sampled at equal intervals, over lags
//! from 1 to about `P * M^(levels - 1)` samples in memory and time that grow only with the
//! number of levels. Level 0 keeps the last `P` samples and correlates lags 0 .. P - 1 exactly;
//! every `M` samples of a level are averaged into one sample of the next, whose lags are `M`
//! times longer (P / M .. P - 1 of its own spacing). With several channels (the three
//! off-diagonal pressure components, the components of a velocity) the result is their mean.

/// Samples each level keeps, and the lags it correlates.
pub const P: usize = 16;
/// Samples of one level averaged into one of the next.
pub const M: usize = 2;

/// One level: the last `P` samples per channel (newest at `head`), the sums of products per
/// lag, and the running sum that feeds the next level.
#[derive(Clone, Debug)]
struct Level {
    /// Sample s of channel c at `shift[s * channels + c]`, a ring of P.
    shift: Vec<f64>,
    head: usize,
    filled: usize,
    corr: [f64; P],
    count: [u64; P],
    acc: Vec<f64>,
    acc_n: usize,
}

impl Level {
    fn new(channels: usize) -> Level {
        Level {
            shift: vec![0.0; P * channels],
            head: 0,
            filled: 0,
            corr: [0.0; P],
            count: [0; P],
            acc: vec![0.0; channels],
            acc_n: 0,
        }
    }
}

/// The autocorrelation, averaged over channels, of a signal fed one sample at a time.
#[derive(Clone, Debug)]
pub struct Correlator {
    channels: usize,
    levels: Vec<Level>,
    samples: u64,
    /// The value passed from level to level in `add` (kept, so adding allocates nothing).
    value: Vec<f64>,
}

impl Correlator {
    /// A correlator of `channels` channels (at least 1) over `levels` levels (at least 1):
    /// lags up to (P - 1) * M^(levels - 1) samples.
    pub fn new(channels: usize, levels: usize) -> Correlator {
        let channels = channels.max(1);
        Correlator {
            channels,
            levels: (0..levels.max(1)).map(|_| Level::new(channels)).collect(),
            samples: 0,
            value: vec![0.0; channels],
        }
    }

    /// Samples added so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The longest lag the levels reach, in samples.
    pub fn max_lag(&self) -> usize {
        (P - 1) * M.pow(self.levels.len() as u32 - 1)
    }

    /// Adds one sample (one value per channel; extra values are ignored, missing ones are 0).
    pub fn add(&mut self, sample: &[f64]) {
        self.samples += 1;
        let mut value = std::mem::take(&mut self.value);
        for (c, v) in value.iter_mut().enumerate() {
            *v = sample.get(c).copied().unwrap_or(0.0);
        }
        for l in 0..self.levels.len() {
            let ch = self.channels;
            let level = &mut self.levels[l];
            level.head = (level.head + P - 1) % P;
            level.shift[level.head * ch..(level.head + 1) * ch].copy_from_slice(&value);
            level.filled = (level.filled + 1).min(P);
            // Lags below P / M on the levels above 0 are covered, more finely, by the level below.
            let first = if l == 0 { 0 } else { P / M };
            for j in first..level.filled {
                let s = (level.head + j) % P;
                let product: f64 = (0..ch).map(|c| value[c] * level.shift[s * ch + c]).sum();
                level.corr[j] += product / ch as f64;
                level.count[j] += 1;
            }
            for c in 0..ch {
                level.acc[c] += value[c];
            }
            level.acc_n += 1;
            if level.acc_n < M {
                break;
            }
            for c in 0..ch {
                value[c] = level.acc[c] / M as f64;
                level.acc[c] = 0.0;
            }
            level.acc_n = 0;
        }
        self.value = value;
    }

    /// (lag in samples, mean of x(t) x(t + lag) over the channels) for every lag with data,
    /// in increasing lag.
    pub fn result(&self) -> Vec<(usize, f64)> {
        let mut out = Vec::new();
        for (l, level) in self.levels.iter().enumerate() {
            let first = if l == 0 { 0 } else { P / M };
            let spacing = M.pow(l as u32);
            for j in first..P {
                if level.count[j] > 0 {
                    out.push((j * spacing, level.corr[j] / level.count[j] as f64));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Sequence, Stream};

    #[test]
    fn a_constant_correlates_to_its_square_at_every_lag() {
        let mut c = Correlator::new(2, 6);
        for _ in 0..1000 {
            c.add(&[3.0, -3.0]);
        }
        let r = c.result();
        assert_eq!(r.last().unwrap().0, c.max_lag());
        assert_eq!(r.len(), P + 5 * (P - P / M));
        for (lag, v) in r {
            assert!((v - 9.0).abs() < 1e-12, "lag {lag}: {v}");
        }
    }

    #[test]
    fn level_zero_is_the_direct_average_over_every_pair() {
        let mut rng = Sequence::new(7, Stream::InitialVelocities, 0, 0);
        let xs: Vec<[f64; 2]> = (0..500).map(|_| [rng.normal(), rng.normal()]).collect();
        let mut c = Correlator::new(2, 3);
        for x in &xs {
            c.add(x);
        }
        for (lag, v) in c.result().into_iter().filter(|&(lag, _)| lag < P) {
            let pairs = xs.len() - lag;
            let direct: f64 = (0..pairs).map(|t| 0.5 * (xs[t][0] * xs[t + lag][0] + xs[t][1] * xs[t + lag][1])).sum();
            assert!((v - direct / pairs as f64).abs() < 1e-12, "lag {lag}: {v} vs {}", direct / pairs as f64);
        }
    }

    #[test]
    fn an_exponentially_correlated_signal_decays_as_it_should_at_long_lags() {
        // AR(1) with phi = exp(-1/50): C(k) = phi^k for unit variance. 2^18 samples of a
        // correlation time of 50 give a relative error of about sqrt(2 * 50 / 2^18) = 0.02 on
        // each lag; averaging M^l samples smooths C by (b / tau)^2 / 12, under 0.3 % here.
        let phi = (-1.0f64 / 50.0).exp();
        let mut rng = Sequence::new(11, Stream::InitialVelocities, 0, 0);
        let mut x = rng.normal();
        let mut c = Correlator::new(1, 6);
        for _ in 0..(1 << 18) {
            x = phi * x + (1.0 - phi * phi).sqrt() * rng.normal();
            c.add(&[x]);
        }
        let r = c.result();
        assert!(r.iter().any(|&(lag, _)| lag >= 200));
        for (lag, v) in r.into_iter().filter(|&(lag, _)| lag <= 200) {
            let want = phi.powi(lag as i32);
            // The absolute error of one lag is about sqrt(tau / N) = 0.014: 0.05 is 3.5 of it.
            assert!((v - want).abs() < 0.05, "lag {lag}: {v:.4} against {want:.4}");
        }
    }
}
