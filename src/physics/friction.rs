//! Surface friction: thermal, no-slip walls and obstacles. Its settings ([`SurfaceFriction`])
//! and the per-atom arithmetic both backends use (mirrored in `kernels/surface.cuh`).
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
//!
//! The tunnel's start spin ([`Spin`], `physics::tunnel::StartSpin`): for the force passes of
//! the steps before its end the obstacle surface moves tangentially at speed u in the
//! counter-clockwise sense, surface velocity u t with t = (-gy, gx, 0), and the obstacle drag
//! pulls toward it: -gamma m (v_t - u t). For a circle that is a rigid rotation at
//! omega = u / R. With u = 0 (no spin, or past its end) the term is left out by a branch, so
//! the force is the plain friction's to the bit. The wall faces never move.

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
    /// The obstacle surfaces' tangential speed u at this step (the start spin; 0 without).
    pub spin: f64,
}

impl Friction {
    /// The friction of `s` at temperature `t` and time step `dt`, for the force pass of `step`,
    /// with the obstacles at rest.
    pub fn new(s: &SurfaceFriction, t: f64, dt: f64, seed: u64, step: u64) -> Friction {
        let gamma = 1.0 / s.damp;
        Friction { gamma, range: s.range, noise: (2.0 * gamma * t / dt).sqrt(), seed, step, spin: 0.0 }
    }

    /// The Philox counter of `surface` (0-5 wall faces, 6 obstacles) at this step.
    #[inline]
    pub fn counter(&self, surface: u64) -> u64 {
        self.step.wrapping_mul(SURFACES_PER_STEP).wrapping_add(surface)
    }
}

/// The start spin as the backends run it: the obstacle surfaces' tangential speed
/// u = spin * U (sigma/tau, counter-clockwise) for the force passes of the steps before
/// `until`. Without a spin, without surface friction or with u = 0: speed 0 and until 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spin {
    pub speed: f64,
    pub until: u64,
}

impl Spin {
    /// The surface speed at the force pass of `step`.
    #[inline]
    pub fn at(&self, step: u64) -> f64 {
        if step < self.until { self.speed } else { 0.0 }
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

/// The friction force of an obstacle surface with unit normal (gx, gy, 0) moving at speed `u`
/// along t = (-gy, gx, 0) (the start spin; 0: at rest) on an atom of mass `m` and velocity
/// `v`, with the standard normals `xi` projected onto the tangent plane.
#[inline]
pub fn obstacle_term(g: [f64; 2], m: f64, v: [f64; 3], xi: [f64; 4], gamma: f64, noise: f64, u: f64) -> [f64; 3] {
    let drag = gamma * m;
    let sd = noise * m.sqrt();
    let vn = v[0] * g[0] + v[1] * g[1];
    let xn = xi[0] * g[0] + xi[1] * g[1];
    let mut vt = [v[0] - vn * g[0], v[1] - vn * g[1], v[2]];
    // The velocity relative to the moving surface, v_t - u t; left out at rest (same bits).
    if u != 0.0 {
        vt[0] += u * g[1];
        vt[1] -= u * g[0];
    }
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
        let f = obstacle_term(g, 1.0, v, xi, 2.0, 0.5, 0.0);
        assert!((f[0] * g[0] + f[1] * g[1]).abs() < 1e-12, "{f:?}");
        assert!((f[2] - (-2.0 * 0.5 + 0.5 * 0.7)).abs() < 1e-12);
    }

    /// The obstacle term as it was before the start spin (a copy of the old code).
    fn old_obstacle_term(g: [f64; 2], m: f64, v: [f64; 3], xi: [f64; 4], gamma: f64, noise: f64) -> [f64; 3] {
        let drag = gamma * m;
        let sd = noise * m.sqrt();
        let vn = v[0] * g[0] + v[1] * g[1];
        let xn = xi[0] * g[0] + xi[1] * g[1];
        let vt = [v[0] - vn * g[0], v[1] - vn * g[1], v[2]];
        let xt = [xi[0] - xn * g[0], xi[1] - xn * g[1], xi[2]];
        std::array::from_fn(|j| -drag * vt[j] + sd * xt[j])
    }

    /// An atom 0.5 sigma outside a circle of radius 2 at 90 degrees (n = (0, 1), so the
    /// counter-clockwise tangent is t = (-1, 0)), velocity (0.2, 0.3, -0.1), m = 2,
    /// gamma = 2, no noise, surface speed u = 1.5: v_t - u t = (0.2 + 1.5, 0, -0.1), so
    /// F = -gamma m (1.7, 0, -0.1) = (-6.8, 0, 0.4): the drag pulls the atom along the
    /// moving surface (-x at the top of a counter-clockwise circle).
    #[test]
    fn a_spinning_circle_drags_atoms_along_its_surface() {
        use crate::physics::obstacles::ObstacleField;
        use crate::physics::sim_box::SimBox;
        use crate::shapes::Shape;
        let b = SimBox::new([10.0, 10.0, 4.0], [true; 3]);
        let field = ObstacleField::bake(&[Shape::Circle { centre: [5.0, 5.0], radius: 2.0 }], &b, 0.1).unwrap();
        let s = field.sample(5.0, 7.5);
        assert!((s.distance - 0.5).abs() < 1e-9 && (s.gradient[0]).abs() < 1e-9 && (s.gradient[1] - 1.0).abs() < 1e-9);
        let v = [0.2, 0.3, -0.1];
        let xi = [0.7, -0.4, 1.1, 0.0];
        let f = obstacle_term(s.gradient, 2.0, v, xi, 2.0, 0.0, 1.5);
        for (got, want) in f.iter().zip([-6.8, 0.0, 0.4]) {
            assert!((got - want).abs() < 1e-9, "{f:?}");
        }
        // At rest the same atom is only slowed: F = -gamma m v_t = (-0.8, 0, 0.4).
        let f0 = obstacle_term(s.gradient, 2.0, v, xi, 2.0, 0.0, 0.0);
        for (got, want) in f0.iter().zip([-0.8, 0.0, 0.4]) {
            assert!((got - want).abs() < 1e-9, "{f0:?}");
        }
        // On the circle's right (n = (1, 0), t = (0, 1)) the surface moves along +y.
        let s = field.sample(7.5, 5.0);
        let f = obstacle_term(s.gradient, 1.0, [0.0; 3], xi, 2.0, 0.0, 1.5);
        assert!(f[0].abs() < 1e-9 && (f[1] - 3.0).abs() < 1e-9, "{f:?}");
    }

    /// Without a spin the obstacle term is the old one to the bit, noise and all, for any
    /// normal (unit or the zero of a medial point) and velocity.
    #[test]
    fn no_spin_is_the_old_friction_to_the_bit() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
        };
        for i in 0..10_000 {
            let a = next() * std::f64::consts::PI;
            let g = if i % 100 == 0 { [0.0, 0.0] } else { [a.cos(), a.sin()] };
            let v = [next(), next(), next()];
            let xi = [next(), next(), next(), next()];
            let (m, gamma, noise) = (1.0 + next().abs(), 2.0 + next(), next().abs());
            let new = obstacle_term(g, m, v, xi, gamma, noise, 0.0);
            let old = old_obstacle_term(g, m, v, xi, gamma, noise);
            assert_eq!(new.map(f64::to_bits), old.map(f64::to_bits), "{g:?} {v:?}");
        }
    }

    /// The spin's schedule: u = spin U while step * dt < time, then 0; none without surface
    /// friction or a tunnel, and the step the spin ends is the first with step * dt >= time.
    #[test]
    fn the_spin_lasts_its_stated_time() {
        use crate::physics::params::SimParams;
        use crate::physics::tunnel::{StartSpin, Tunnel};
        let spin = StartSpin { spin: 1.5, time: 0.1 };
        let p = SimParams {
            dt: 0.005,
            surface_friction: Some(SurfaceFriction::default()),
            tunnel: Some(Tunnel { speed: 2.0, zone: 4.0, start_spin: Some(spin) }),
            ..SimParams::default()
        };
        // 20 * 0.005 rounds to 0.1 (>= time); 19 * 0.005 = 0.095 < 0.1.
        assert_eq!(spin.end_step(0.005), 20);
        let s = p.start_spin();
        assert_eq!(s, Spin { speed: 3.0, until: 20 });
        assert_eq!((s.at(0), s.at(19), s.at(20), s.at(1 << 40)), (3.0, 3.0, 0.0, 0.0));
        assert_eq!(p.friction_at(19).unwrap().spin, 3.0);
        assert_eq!(p.friction_at(20).unwrap().spin, 0.0);
        for dt in [0.004, 0.003, 0.007, 0.001] {
            for time in [35.0, 0.1, 1.0 / 3.0, 1e-6] {
                let e = StartSpin { spin: 1.0, time }.end_step(dt);
                assert!((e as f64) * dt >= time && (e == 0 || ((e - 1) as f64) * dt < time), "{dt} {time}: {e}");
            }
        }
        assert_eq!(StartSpin { spin: 1.0, time: 35.0 }.end_step(0.004), 8750);
        assert_eq!(SimParams { surface_friction: None, ..p.clone() }.start_spin(), Spin::default());
        let no_spin = Some(Tunnel { start_spin: None, ..p.tunnel.unwrap() });
        assert_eq!(SimParams { tunnel: no_spin, ..p.clone() }.start_spin(), Spin::default());
        assert_eq!(SimParams { tunnel: no_spin, ..p.clone() }.friction_at(0).unwrap().spin, 0.0);
    }
}
