//! The 12-6 Lennard-Jones pair evaluator, written once and mirrored in `kernels/lj.cuh`.
//!
//! E(r) = 4 eps [ (sig/r)^12 - (sig/r)^6 ] - E_shift   for r < r_c
//!
//! In LAMMPS's coefficient form (so round-off matches `pair_style lj/cut`):
//! lj1 = 48 eps sig^12, lj2 = 24 eps sig^6, lj3 = 4 eps sig^12, lj4 = 4 eps sig^6,
//! force_divr = r^-8 (lj1 r^-6 - lj2), energy = r^-6 (lj3 r^-6 - lj4) - offset,
//! where offset = E(r_c) when shifting, else 0. Mixed species use Lorentz-Berthelot rules;
//! each pair has its own r_c (`SimParams::pair_cutoff`) and is shifted at it, as LAMMPS's
//! `pair_modify shift yes` does per pair.

use super::params::SimParams;
use super::real::Real;

/// Coefficients of one species pair.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LjPair<F> {
    pub lj1: F,
    pub lj2: F,
    pub lj3: F,
    pub lj4: F,
    pub offset: F,
    pub rcut_sq: F,
}

impl<F: Real> LjPair<F> {
    pub fn new(epsilon: f64, sigma: f64, cutoff: f64, shift: bool) -> Self {
        let s6 = sigma.powi(6);
        let s12 = s6 * s6;
        let offset = if shift {
            let ratio6 = (sigma / cutoff).powi(6);
            4.0 * epsilon * (ratio6 * ratio6 - ratio6)
        } else {
            0.0
        };
        LjPair {
            lj1: F::of(48.0 * epsilon * s12),
            lj2: F::of(24.0 * epsilon * s6),
            lj3: F::of(4.0 * epsilon * s12),
            lj4: F::of(4.0 * epsilon * s6),
            offset: F::of(offset),
            rcut_sq: F::of(cutoff * cutoff),
        }
    }

    /// Species `i`'s pair with itself, from its own sigma and epsilon (no mixing round-off),
    /// at its cut-off: the one-species fast path.
    pub fn like_pair(params: &SimParams, i: usize) -> Self {
        let s = &params.species[i];
        LjPair::new(s.epsilon, s.sigma, params.pair_cutoff(i, i), params.shift)
    }

    /// (force_divr, energy) at squared distance `rsq`, without the cutoff test.
    #[inline(always)]
    pub fn eval(&self, rsq: F) -> (F, F) {
        let r2inv = F::one() / rsq;
        let r6inv = r2inv * r2inv * r2inv;
        let force_divr = r6inv * (self.lj1 * r6inv - self.lj2) * r2inv;
        let energy = r6inv * (self.lj3 * r6inv - self.lj4) - self.offset;
        (force_divr, energy)
    }

    /// (force_divr, energy), both zero at or beyond the cutoff.
    #[inline(always)]
    pub fn eval_cut(&self, rsq: F) -> (F, F) {
        if rsq < self.rcut_sq { self.eval(rsq) } else { (F::zero(), F::zero()) }
    }
}

/// Pair coefficients for every species pair, looked up by the two atoms' types.
pub trait PairCoeffs<F>: Sync {
    fn get(&self, ti: u32, tj: u32) -> &LjPair<F>;
    /// The one coefficient set when every pair shares it (enables specialised loops).
    fn uniform(&self) -> Option<&LjPair<F>> {
        None
    }
}

/// One species: the types are ignored (the fast path).
#[derive(Clone, Copy, Debug)]
pub struct Uniform<F>(pub LjPair<F>);

impl<F: Sync> PairCoeffs<F> for Uniform<F> {
    #[inline(always)]
    fn get(&self, _ti: u32, _tj: u32) -> &LjPair<F> {
        &self.0
    }
    fn uniform(&self) -> Option<&LjPair<F>> {
        Some(&self.0)
    }
}

/// Several species with Lorentz-Berthelot mixing: sigma_ij = (sigma_i + sigma_j) / 2,
/// eps_ij = sqrt(eps_i eps_j), each pair at its own cut-off (one absolute distance, or
/// k sigma_ij: `physics::cutoff`).
#[derive(Clone, Debug)]
pub struct Table<F> {
    pub n_types: usize,
    pub pairs: Vec<LjPair<F>>,
}

impl<F: Sync> PairCoeffs<F> for Table<F> {
    #[inline(always)]
    fn get(&self, ti: u32, tj: u32) -> &LjPair<F> {
        &self.pairs[ti as usize * self.n_types + tj as usize]
    }
}

impl<F: Real> Table<F> {
    pub fn from_params(params: &SimParams) -> Self {
        let n = params.species.len();
        let mut pairs = Vec::with_capacity(n * n);
        for (i, a) in params.species.iter().enumerate() {
            for (j, b) in params.species.iter().enumerate() {
                let (sigma, epsilon) = a.mixed(b);
                pairs.push(LjPair::new(epsilon, sigma, params.pair_cutoff(i, j), params.shift));
            }
        }
        Table { n_types: n, pairs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifted_energy_is_zero_at_cutoff_and_minimum_is_at_two_to_the_sixth() {
        let lj = LjPair::<f64>::new(1.0, 1.0, 2.5, true);
        let (_, e) = lj.eval(2.5 * 2.5);
        assert!(e.abs() < 1e-15);
        let rmin = 2f64.powf(1.0 / 6.0);
        let (f, e) = lj.eval(rmin * rmin);
        assert!(f.abs() < 1e-12);
        let unshifted = LjPair::<f64>::new(1.0, 1.0, 2.5, false);
        assert!((unshifted.eval(rmin * rmin).1 + 1.0).abs() < 1e-12);
        assert!((e - (-1.0 - lj.offset)).abs() < 1e-12);
    }

    #[test]
    fn lorentz_berthelot_at_absolute_and_per_pair_cutoffs() {
        use crate::physics::cutoff::Cutoff;
        let mut p = SimParams { cutoff: Cutoff::Absolute(2.5), ..SimParams::default() };
        p.species.push(crate::physics::params::Species { name: "X".into(), sigma: 2.0, epsilon: 4.0, mass: 2.0 });
        for (cutoff, rc_01, rc_11) in [(Cutoff::Absolute(2.5), 2.5, 2.5), (Cutoff::PerPair(2.5), 3.75, 5.0)] {
            p.cutoff = cutoff;
            let t = Table::<f64>::from_params(&p);
            let mixed = t.get(0, 1);
            let expect = LjPair::<f64>::new(2.0, 1.5, rc_01, true);
            for (a, b) in [(mixed.lj1, expect.lj1), (mixed.lj2, expect.lj2), (mixed.offset, expect.offset)] {
                assert!((a - b).abs() <= 1e-14 * b.abs(), "{cutoff}: {a} vs {b}");
            }
            assert_eq!(mixed.rcut_sq, rc_01 * rc_01);
            assert_eq!(t.get(1, 0), mixed);
            assert_eq!(t.get(1, 1).rcut_sq, rc_11 * rc_11);
            assert_eq!(*t.get(1, 1), LjPair::like_pair(&p, 1), "{cutoff}: the like pair mixes to itself");
            assert_eq!(t.get(0, 0).rcut_sq, 6.25);
            assert_eq!(p.max_cutoff(), rc_11);
        }
    }
}
