//! The piston: the top tank wall (y = h on a walled y axis) as a rigid plane of mass M that
//! moves under a set external pressure. Its settings ([`PistonParams`]), its state
//! ([`PistonState`]: height and velocity, part of the simulation state like the atoms) and the
//! arithmetic of its velocity-Verlet step, shared by every backend (mirrored in
//! `kernels/piston.cu`).
//!
//! Equations (reduced units), with A = Lx Lz the piston's area and F the sum over atoms of
//! the top 9-3 wall's force on them (the same `Wall93` as the fixed walls, at distance h - y):
//!
//! M dv/dt = F - P_ext A - gamma M v,     dh/dt = v.
//!
//! The step runs in lockstep with the atoms: half kick (with F from the previous force pass),
//! drift, force pass at the new h, half kick. The friction gamma enters each half kick as the
//! exact decay factor exp(-gamma dt / 2). With gamma = 0 and NVE atoms,
//! H = KE_atoms + PE + M v^2 / 2 + P_ext A (h - lo_y) is conserved.
//!
//! Limits: the piston stays within `[lo_y + MIN_GAP, hi_y]` (the box top is where it starts);
//! reaching either end is a hard stop that sets its velocity to zero (an inelastic stop: H is
//! not conserved across it).

use serde::{Deserialize, Serialize};

use super::sim_box::SimBox;

/// The smallest distance (sigma) between the piston and the bottom of the tank: room for
/// about two atomic layers, so a full stroke cannot crush the fluid into the wall caps.
pub const MIN_GAP: f64 = 2.0;

/// A dragged piston closes the gap to the cursor with this time constant (tau): 40 steps.
pub const DRAG_TIME: f64 = 0.2;
/// The fastest a dragged piston moves (sigma/tau), about an atom's thermal speed at T* = 2:
/// 0.01 sigma per step, gentle enough for the atoms it pushes.
pub const DRAG_SPEED_MAX: f64 = 2.0;

/// What a person sets. All in reduced units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PistonParams {
    /// External pressure pushing the piston down, P* = P sigma^3 / epsilon.
    pub pressure: f64,
    /// The piston's mass in argon masses.
    pub mass: f64,
    /// Friction coefficient gamma (1/tau): the force -gamma M v.
    pub damping: f64,
}

impl PistonParams {
    /// Default mass: 200 argon masses. In a tank of ~15 sigma at a liquid-like density the
    /// fluid acts on the piston like a spring of stiffness A K_T / L (~40 epsilon/sigma^2), so
    /// the piston oscillates with a period of ~15 tau (~3000 steps): slow next to the atoms'
    /// collisions, so it feels their mean pressure and its own thermal jiggle stays small
    /// (v_rms = sqrt(T/M) ~ 0.1 sigma/tau at T = 2), yet fast enough to watch it settle.
    pub const DEFAULT_MASS: f64 = 200.0;
    /// Default friction: 0.2 / tau, a velocity decay time of 5 tau, so an oscillation of period
    /// ~15 tau dies out in a few periods and a compression in the app settles in seconds. Set
    /// it to 0 for Hamiltonian dynamics (the mean force balance P = P_ext holds either way).
    pub const DEFAULT_DAMPING: f64 = 0.2;

    /// A piston at pressure `pressure` with the default mass and damping.
    pub fn at_pressure(pressure: f64) -> Self {
        PistonParams { pressure, mass: Self::DEFAULT_MASS, damping: Self::DEFAULT_DAMPING }
    }

    /// The piston's area A = Lx Lz.
    pub fn area(b: &SimBox) -> f64 {
        let l = b.length();
        l[0] * l[2]
    }

    /// The heights the piston may take: `[lo_y + MIN_GAP, hi_y]`.
    pub fn limits(b: &SimBox) -> (f64, f64) {
        ((b.lo[1] + MIN_GAP).min(b.hi[1]), b.hi[1])
    }
}

impl Default for PistonParams {
    fn default() -> Self {
        // JZG's full-LJ pressure at T = 2, rho = 0.5: a moderately dense supercritical fluid.
        PistonParams::at_pressure(1.0775)
    }
}

/// The piston's dynamical state.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PistonState {
    /// Height of the piston plane (sigma), the top wall's y.
    pub height: f64,
    /// Velocity along y (sigma/tau).
    pub velocity: f64,
}

impl PistonState {
    /// At rest at the top of the box (where the fixed top wall would be).
    pub fn at_top(b: &SimBox) -> Self {
        PistonState { height: b.hi[1], velocity: 0.0 }
    }

    /// The state a backend runs with for `params`: none without a piston; else `state`
    /// moved into the limits (or a piston at rest at the top when there is no state yet).
    pub fn reconcile(params: Option<&PistonParams>, state: Option<PistonState>, b: &SimBox) -> Option<PistonState> {
        params?;
        let s = state.filter(|s| s.height.is_finite() && s.velocity.is_finite()).unwrap_or(Self::at_top(b));
        Some(s.clamped(b))
    }

    /// Hard stops at the limits: clamps the height and zeroes the velocity there.
    pub fn clamped(self, b: &SimBox) -> Self {
        let (lo, hi) = PistonParams::limits(b);
        if self.height < lo {
            PistonState { height: lo, velocity: 0.0 }
        } else if self.height > hi {
            PistonState { height: hi, velocity: 0.0 }
        } else {
            self
        }
    }

    /// Half kick: v <- v exp(-gamma dt/2) + dt/(2M) (F - P_ext A), with `force` the atoms'
    /// push on the piston (positive up) and A the area of `b`. A piston resting on a stop
    /// stays at rest while the kick pushes it into the stop.
    pub fn half_kick(&mut self, p: &PistonParams, b: &SimBox, force: f64, dt: f64) {
        let decay = (-0.5 * p.damping * dt).exp();
        self.velocity = self.velocity * decay + 0.5 * dt / p.mass * (force - p.pressure * PistonParams::area(b));
        let (lo, hi) = PistonParams::limits(b);
        if (self.height <= lo && self.velocity < 0.0) || (self.height >= hi && self.velocity > 0.0) {
            self.velocity = 0.0;
        }
    }

    /// The velocity of a dragged piston: toward `target` with the time constant
    /// [`DRAG_TIME`], at most [`DRAG_SPEED_MAX`], so the piston follows the cursor smoothly and
    /// never jumps over atoms.
    pub fn drag_velocity(&self, target: f64) -> f64 {
        ((target - self.height) / DRAG_TIME).clamp(-DRAG_SPEED_MAX, DRAG_SPEED_MAX)
    }

    /// Drift h <- h + dt v, then the hard stops.
    pub fn drift(&mut self, dt: f64, b: &SimBox) {
        self.height += dt * self.velocity;
        *self = self.clamped(b);
    }

    /// The volume under the piston, A (h - lo_y): the volume the pressure is reported for.
    pub fn volume(&self, b: &SimBox) -> f64 {
        PistonParams::area(b) * (self.height - b.lo[1])
    }

    /// Kinetic energy M v^2 / 2 plus the external work term P_ext A (h - lo_y): what the
    /// piston adds to the atoms' energy in the conserved quantity.
    pub fn energy(&self, p: &PistonParams, b: &SimBox) -> f64 {
        0.5 * p.mass * self.velocity * self.velocity + p.pressure * self.volume(b)
    }
}

/// What telemetry reports about the piston at one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PistonTelemetry {
    pub height: f64,
    pub velocity: f64,
    /// The atoms' force on the piston divided by its area (epsilon/sigma^3).
    pub force_per_area: f64,
    /// The volume under the piston (sigma^3); the reported pressure uses it.
    pub volume: f64,
    /// The set external pressure.
    pub pressure_set: f64,
    /// M v^2 / 2 + P_ext V: add to the atoms' total energy for the conserved quantity.
    pub energy: f64,
}

impl PistonTelemetry {
    pub fn new(state: &PistonState, p: &PistonParams, b: &SimBox, force: f64) -> Self {
        PistonTelemetry {
            height: state.height,
            velocity: state.velocity,
            force_per_area: force / PistonParams::area(b),
            volume: state.volume(b),
            pressure_set: p.pressure,
            energy: state.energy(p, b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_piston_falls_like_a_body_under_constant_force() {
        // No atoms: M a = -P A exactly, so after n steps h = h0 - (P A / M) t^2 / 2.
        let b = SimBox::new([4.0, 20.0, 5.0], [true, false, true]);
        assert_eq!(PistonParams::area(&b), 20.0);
        let p = PistonParams { pressure: 0.5, mass: 50.0, damping: 0.0 };
        let mut s = PistonState::at_top(&b);
        let dt = 0.01;
        for _ in 0..100 {
            s.half_kick(&p, &b, 0.0, dt);
            s.drift(dt, &b);
            s.half_kick(&p, &b, 0.0, dt);
        }
        let a = 0.5 * 20.0 / 50.0;
        assert!((s.height - (20.0 - 0.5 * a * 1.0)).abs() < 1e-12, "{}", s.height);
        assert!((s.velocity + a * 1.0).abs() < 1e-12);
    }

    #[test]
    fn hard_stops_zero_the_velocity() {
        let b = SimBox::new([4.0, 10.0, 5.0], [true, false, true]);
        let mut s = PistonState { height: 2.1, velocity: -50.0 };
        s.drift(0.01, &b);
        assert_eq!(s, PistonState { height: MIN_GAP, velocity: 0.0 });
        // Pressed into the stop, it stays at rest; pulled away, it leaves.
        let p = PistonParams { pressure: 1.0, mass: 1.0, damping: 0.0 };
        s.half_kick(&p, &b, 0.0, 0.01);
        assert_eq!(s.velocity, 0.0);
        s.half_kick(&p, &b, 100.0, 0.01);
        assert!(s.velocity > 0.0);
        let mut s = PistonState { height: 9.9, velocity: 50.0 };
        s.drift(0.01, &b);
        assert_eq!(s, PistonState { height: 10.0, velocity: 0.0 });
    }

    #[test]
    fn damping_decays_velocity_by_the_exact_factor() {
        let p = PistonParams { pressure: 0.0, mass: 1.0, damping: 2.0 };
        let b = SimBox::new([1.0, 10.0, 1.0], [true, false, true]);
        let mut s = PistonState { height: 5.0, velocity: 1.0 };
        s.half_kick(&p, &b, 0.0, 0.1);
        assert!((s.velocity - (-0.1f64).exp()).abs() < 1e-15);
    }
}
