//! Long-range (tail) corrections of the truncated LJ potential beyond r_c, assuming
//! g(r) = 1 there: what turns a truncated, unshifted simulation into the full LJ fluid
//! (Allen & Tildesley eq. 2.144).

use std::f64::consts::PI;

use crate::physics::params::SimParams;

/// Pressure correction: (16/3) pi rho^2 [(2/3) r_c^-9 - r_c^-3].
pub fn p_tail(rho: f64, rc: f64) -> f64 {
    16.0 / 3.0 * PI * rho * rho * (2.0 / 3.0 * rc.powi(-9) - rc.powi(-3))
}

/// Energy-per-atom correction: (8/3) pi rho [(1/3) r_c^-9 - r_c^-3].
pub fn u_tail(rho: f64, rc: f64) -> f64 {
    8.0 / 3.0 * PI * rho * (1.0 / 3.0 * rc.powi(-9) - rc.powi(-3))
}

/// The analytic tail correction of the truncated LJ energy (whole system) for atoms of
/// `types` in `volume`: (2 pi / V) sum_ij N_i N_j eps_ij sigma_ij^3 [(4/9)(sigma_ij/r_c,ij)^9 -
/// (4/3)(sigma_ij/r_c,ij)^3], Lorentz-Berthelot mixing, each pair from its own cut-off
/// (`SimParams::pair_cutoff`); N u_tail for one species.
pub fn tail_energy(params: &SimParams, types: &[u32], volume: f64) -> f64 {
    let mut counts = vec![0.0f64; params.species.len()];
    for &t in types {
        counts[t as usize] += 1.0;
    }
    let mut sum = 0.0;
    for (i, a) in params.species.iter().enumerate() {
        for (j, b) in params.species.iter().enumerate() {
            let (sigma, eps) = a.mixed(b);
            let s3 = (sigma / params.pair_cutoff(i, j)).powi(3);
            sum += counts[i] * counts[j] * eps * sigma.powi(3) * (4.0 / 9.0 * s3 * s3 * s3 - 4.0 / 3.0 * s3);
        }
    }
    2.0 * PI * sum / volume
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::cutoff::Cutoff;
    use crate::physics::params::Species;

    #[test]
    fn tail_energy_matches_the_textbook_single_species_formula() {
        // u_tail = (8/3) pi rho [(1/3) r_c^-9 - r_c^-3] per atom (Allen & Tildesley eq. 2.144).
        let p = SimParams { cutoff: Cutoff::Absolute(2.5), ..SimParams::default() };
        let (n, v) = (1000usize, 2000.0);
        let rho = n as f64 / v;
        let want = n as f64 * 8.0 / 3.0 * PI * rho * (2.5f64.powi(-9) / 3.0 - 2.5f64.powi(-3));
        let got = tail_energy(&p, &vec![0; n], v);
        assert!((got - want).abs() < 1e-12 * want.abs(), "{got} vs {want}");
    }

    #[test]
    fn tail_energy_of_a_mixture_sums_the_mixed_pairs() {
        let kr = Species { name: "Kr".into(), sigma: 1.1, epsilon: 1.4, mass: 2.1 };
        let p =
            SimParams { cutoff: Cutoff::Absolute(3.0), species: vec![Species::argon(), kr], ..SimParams::default() };
        let types = [0u32, 0, 1];
        let v = 50.0;
        let pair = |s: f64, e: f64| {
            let x = (s / 3.0f64).powi(3);
            2.0 * PI / v * e * s.powi(3) * (4.0 / 9.0 * x * x * x - 4.0 / 3.0 * x)
        };
        let s01 = 0.5 * (1.0 + 1.1);
        let e01 = (1.4f64).sqrt();
        let want = 4.0 * pair(1.0, 1.0) + 2.0 * 2.0 * pair(s01, e01) + pair(1.1, 1.4);
        assert!((tail_energy(&p, &types, v) - want).abs() < 1e-14);
    }

    /// Per-pair cut-offs k sigma_ij make every pair's term (sigma_ij / r_c,ij)^n the same
    /// number: the sum is N_i N_j eps_ij sigma_ij^3 times one bracket.
    #[test]
    fn tail_energy_at_per_pair_cutoffs_uses_each_pairs_radius() {
        let kr = Species { name: "Kr".into(), sigma: 1.1, epsilon: 1.4, mass: 2.1 };
        let p = SimParams { cutoff: Cutoff::PerPair(2.5), species: vec![Species::argon(), kr], ..SimParams::default() };
        let (types, v) = ([0u32, 0, 1], 50.0);
        let x = 2.5f64.powi(-3);
        let bracket = 4.0 / 9.0 * x * x * x - 4.0 / 3.0 * x;
        let s01 = 0.5 * (1.0f64 + 1.1);
        let weights = 4.0 * 1.0 + 2.0 * 2.0 * 1.4f64.sqrt() * s01.powi(3) + 1.4 * 1.1f64.powi(3);
        let want = 2.0 * PI / v * weights * bracket;
        assert!((tail_energy(&p, &types, v) - want).abs() < 1e-14, "{} vs {want}", tail_energy(&p, &types, v));
    }

    /// Against the integrals done numerically: P_tail = -(2/3) pi rho^2 int r^3 u'(r) dr and
    /// u_tail = 2 pi rho int r^2 u(r) dr from r_c to infinity.
    #[test]
    fn match_numerical_integrals() {
        let (rho, rc) = (0.7, 2.5);
        let n = 200_000;
        let h = (200.0 - rc) / n as f64;
        let (mut ip, mut iu) = (0.0, 0.0);
        for i in 0..n {
            let r = rc + (i as f64 + 0.5) * h;
            let u = 4.0 * (r.powi(-12) - r.powi(-6));
            let du = 4.0 * (-12.0 * r.powi(-13) + 6.0 * r.powi(-7));
            ip += r.powi(3) * du * h;
            iu += r * r * u * h;
        }
        assert!(
            (p_tail(rho, rc) - (-2.0 / 3.0 * PI * rho * rho * ip)).abs() < 1e-5,
            "cut at r = 200: the rest is about 1e-6"
        );
        assert!((u_tail(rho, rc) - 2.0 * PI * rho * iu).abs() < 1e-5);
    }
}
