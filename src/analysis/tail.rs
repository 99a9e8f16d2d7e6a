//! Long-range (tail) corrections of the truncated LJ potential beyond r_c, assuming
//! g(r) = 1 there: what turns a truncated, unshifted simulation into the full LJ fluid
//! (Allen & Tildesley eq. 2.144).

use std::f64::consts::PI;

/// Pressure correction: (16/3) pi rho^2 [(2/3) r_c^-9 - r_c^-3].
pub fn p_tail(rho: f64, rc: f64) -> f64 {
    16.0 / 3.0 * PI * rho * rho * (2.0 / 3.0 * rc.powi(-9) - rc.powi(-3))
}

/// Energy-per-atom correction: (8/3) pi rho [(1/3) r_c^-9 - r_c^-3].
pub fn u_tail(rho: f64, rc: f64) -> f64 {
    8.0 / 3.0 * PI * rho * (1.0 / 3.0 * rc.powi(-9) - rc.powi(-3))
}

#[cfg(test)]
mod tests {
    use super::*;

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
