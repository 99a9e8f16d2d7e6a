//! The smooth 9-3 LJ wall: its parameters ([`WallParams`]) and evaluator, used for the box walls (distance to the wall plane) and
//! for obstacles (signed distance to the obstacle surface). Mirrored in `kernels/wall.cuh`.
//!
//! E(d) = eps [ (2/15) (sig/d)^9 - (sig/d)^3 ] - E(d_c)      for d_cap <= d < d_c
//! (LAMMPS `fix wall/lj93` form). Below d_cap = sig/2, where the wall is already ~60 eps high,
//! the energy continues linearly, so an atom that ends up inside a wall or obstacle (a shape
//! drawn over it, a huge time step) is pushed out by a finite force instead of exploding.

use serde::{Deserialize, Serialize};

use super::real::Real;

/// The smooth 9-3 LJ wall (LAMMPS `fix wall/lj93`):
/// E(d) = epsilon [ (2/15) (sigma/d)^9 - (sigma/d)^3 ] - E(cutoff), for d < cutoff.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WallParams {
    pub epsilon: f64,
    pub sigma: f64,
    /// The distance where the wall potential ends. At [`WallParams::repulsive_cutoff`] the wall
    /// is purely repulsive; beyond it the wall attracts (wetting).
    pub cutoff: f64,
}

impl WallParams {
    /// The minimum of the 9-3 potential, (2/5)^(1/6) sigma: cutting there leaves only repulsion.
    pub fn repulsive_cutoff(sigma: f64) -> f64 {
        0.4f64.powf(1.0 / 6.0) * sigma
    }

    pub fn repulsive(epsilon: f64, sigma: f64) -> Self {
        WallParams { epsilon, sigma, cutoff: Self::repulsive_cutoff(sigma) }
    }
}

impl Default for WallParams {
    fn default() -> Self {
        WallParams::repulsive(1.0, 1.0)
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wall93<F> {
    /// 6/5 eps sig^9
    pub coeff1: F,
    /// 3 eps sig^3
    pub coeff2: F,
    /// 2/15 eps sig^9
    pub coeff3: F,
    /// eps sig^3
    pub coeff4: F,
    pub offset: F,
    pub cutoff: F,
    pub d_cap: F,
    /// Energy and outward force at d_cap.
    pub e_cap: F,
    pub f_cap: F,
}

impl<F: Real> Wall93<F> {
    pub fn new(w: &WallParams) -> Self {
        let s3 = w.sigma.powi(3);
        let s9 = s3 * s3 * s3;
        let (c1, c2, c3, c4) =
            (1.2 * w.epsilon * s9, 3.0 * w.epsilon * s3, 2.0 / 15.0 * w.epsilon * s9, w.epsilon * s3);
        let raw_e = |d: f64| c3 / d.powi(9) - c4 / d.powi(3);
        let raw_f = |d: f64| c1 / d.powi(10) - c2 / d.powi(4);
        let offset = raw_e(w.cutoff);
        let d_cap = 0.5 * w.sigma;
        Wall93 {
            coeff1: F::of(c1),
            coeff2: F::of(c2),
            coeff3: F::of(c3),
            coeff4: F::of(c4),
            offset: F::of(offset),
            cutoff: F::of(w.cutoff),
            d_cap: F::of(d_cap),
            e_cap: F::of(raw_e(d_cap) - offset),
            f_cap: F::of(raw_f(d_cap)),
        }
    }

    /// (force pushing away from the surface, energy) at distance `d`; zero beyond the cutoff.
    #[inline(always)]
    pub fn eval(&self, d: F) -> (F, F) {
        if d >= self.cutoff {
            (F::zero(), F::zero())
        } else if d < self.d_cap {
            (self.f_cap, self.e_cap + self.f_cap * (self.d_cap - d))
        } else {
            let rinv = F::one() / d;
            let r2inv = rinv * rinv;
            let r4inv = r2inv * r2inv;
            let r10inv = r4inv * r4inv * r2inv;
            let f = self.coeff1 * r10inv - self.coeff2 * r4inv;
            let e = self.coeff3 * r4inv * r4inv * rinv - self.coeff4 * r2inv * rinv - self.offset;
            (f, e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repulsive_wall_is_zero_at_its_minimum_and_continuous_at_the_cap() {
        let w = Wall93::<f64>::new(&WallParams::repulsive(1.0, 1.0));
        let (f, e) = w.eval(w.cutoff - 1e-12);
        assert!(f.abs() < 1e-9 && e.abs() < 1e-12, "{f} {e}");
        let (f1, e1) = w.eval(0.5 + 1e-12);
        let (f2, e2) = w.eval(0.5 - 1e-12);
        assert!((f1 - f2).abs() < 1e-6 && (e1 - e2).abs() < 1e-6);
        // Inside the wall the force is finite and still pushes outward.
        let (f3, _) = w.eval(-3.0);
        assert!(f3 > 0.0 && f3.is_finite());
    }

    #[test]
    fn force_is_minus_energy_slope() {
        let w = Wall93::<f64>::new(&WallParams { epsilon: 1.5, sigma: 1.1, cutoff: 2.5 });
        for d in [0.3, 0.7, 1.0, 1.4, 2.2] {
            let h = 1e-6;
            let slope = (w.eval(d + h).1 - w.eval(d - h).1) / (2.0 * h);
            let (f, _) = w.eval(d);
            assert!((f + slope).abs() < 1e-6 * f.abs().max(1.0), "d={d}: {f} vs {}", -slope);
        }
    }
}
