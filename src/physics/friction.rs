//! Surface friction: thermal, no-slip walls and obstacles. Its settings ([`SurfaceFriction`])
//! and the per-atom arithmetic both backends use (mirrored in `kernels/friction.cu`).
//!
//! The 9-3 walls and the obstacles are smooth: their force depends on the distance only, so
//! it is purely normal and a fluid slips along them freely (a perfect-slip boundary). With
//! surface friction on, an atom within `range` of a wall face or an obstacle surface also
//! feels a Langevin force on its velocity components tangential to that surface, toward the
//! surface's velocity (zero; the piston moves only along its normal):
//!
//! F = -gamma m v_t + sqrt(2 gamma m k_B T / dt) xi_t,     gamma = 1 / damp,
//!
//! with T the thermostat's target temperature and xi standard normal numbers projected onto
//! the tangent plane. For a wall face on axis k the tangential components are the two other
//! axes; for an obstacle (a prism along z) v_t = v - (v.n) n with n = (gx, gy, 0), the unit
//! gradient of the signed distance. An atom near several surfaces gets each one's term. The
//! velocity is the one the atom has at the force evaluation (the half-step velocity of
//! velocity Verlet), as LAMMPS `fix langevin` uses in `post_force`. The force is not part of
//! the potential energy or the virial, and its reaction counts in the surface's body force.
//!
//! Noise: `rng::normal4(seed, Stream::SurfaceFriction, id, step * 8 + surface)`, with
//! `surface` = 2 axis + hi for the wall faces and [`OBSTACLE_SURFACE`] for the obstacles, and
//! `step` the step whose force pass it is; component j of the four numbers drives axis j.

use serde::{Deserialize, Serialize};

/// The counter slot of the obstacle surface (the wall faces take 0 to 5).
pub const OBSTACLE_SURFACE: u64 = 6;
/// Noise counters per step: `step * SURFACES_PER_STEP + surface`.
pub const SURFACES_PER_STEP: u64 = 8;
/// Largest friction range accepted (sigma); below the obstacle field's reach (3 sigma).
pub const MAX_RANGE: f64 = 2.5;

/// The friction's settings: damping time `damp` (tau; gamma = 1/damp) and the distance from
/// a surface within which it acts, `range` (sigma).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SurfaceFriction {
    pub damp: f64,
    pub range: f64,
}

impl Default for SurfaceFriction {
    fn default() -> Self {
        SurfaceFriction { damp: 0.5, range: 1.5 }
    }
}

/// The friction of one force pass in f64: drag per unit mass and velocity (gamma), the noise
/// amplitude per sqrt(mass), and what keys the noise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Friction {
    pub gamma: f64,
    pub range: f64,
    /// sqrt(2 gamma k_B T / dt): times sqrt(m), the noise amplitude.
    pub noise: f64,
    pub seed: u64,
    pub step: u64,
}

impl Friction {
    /// The friction of `s` at temperature `t` and time step `dt`, for the force pass of `step`.
    pub fn new(s: &SurfaceFriction, t: f64, dt: f64, seed: u64, step: u64) -> Friction {
        let gamma = 1.0 / s.damp;
        Friction { gamma, range: s.range, noise: (2.0 * gamma * t / dt).sqrt(), seed, step }
    }

    /// The Philox counter of `surface` (0-5 wall faces, 6 obstacles) at this step.
    #[inline]
    pub fn counter(&self, surface: u64) -> u64 {
        self.step.wrapping_mul(SURFACES_PER_STEP).wrapping_add(surface)
    }
}

/// The friction force of a wall face on axis `k` on an atom of mass `m` and velocity `v`,
/// with the standard normals `xi` (component k unused).
#[inline]
pub fn wall_term(k: usize, m: f64, v: [f64; 3], xi: [f64; 4], gamma: f64, noise: f64) -> [f64; 3] {
    let drag = gamma * m;
    let sd = noise * m.sqrt();
    std::array::from_fn(|j| if j == k { 0.0 } else { -drag * v[j] + sd * xi[j] })
}

/// The friction force of an obstacle surface with unit normal (gx, gy, 0) on an atom of mass
/// `m` and velocity `v`, with the standard normals `xi` projected onto the tangent plane.
#[inline]
pub fn obstacle_term(g: [f64; 2], m: f64, v: [f64; 3], xi: [f64; 4], gamma: f64, noise: f64) -> [f64; 3] {
    let drag = gamma * m;
    let sd = noise * m.sqrt();
    let vn = v[0] * g[0] + v[1] * g[1];
    let xn = xi[0] * g[0] + xi[1] * g[1];
    let vt = [v[0] - vn * g[0], v[1] - vn * g[1], v[2]];
    let xt = [xi[0] - xn * g[0], xi[1] - xn * g[1], xi[2]];
    std::array::from_fn(|j| -drag * vt[j] + sd * xt[j])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_tangential() {
        let v = [1.0, -2.0, 0.5];
        let xi = [0.3, -1.1, 0.7, 0.0];
        let f = wall_term(1, 2.0, v, xi, 2.0, 0.5);
        assert_eq!(f[1], 0.0);
        assert!((f[0] - (-4.0 * 1.0 + 0.5 * 2f64.sqrt() * 0.3)).abs() < 1e-12);
        let g = [0.6, 0.8];
        let f = obstacle_term(g, 1.0, v, xi, 2.0, 0.5);
        assert!((f[0] * g[0] + f[1] * g[1]).abs() < 1e-12, "{f:?}");
        assert!((f[2] - (-2.0 * 0.5 + 0.5 * 0.7)).abs() < 1e-12);
    }
}
