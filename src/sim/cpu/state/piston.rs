//! The piston (the top wall as a moving plane, `physics/piston.rs`), stepped in lockstep with
//! the atoms: its state kept in line with the parameters, its half kicks from the top wall's
//! force sum of the last force pass (or toward the drag target while dragged) and its drift.

use super::CpuSim;
use crate::physics::params::SimParams;
use crate::physics::piston::PistonState;
use crate::physics::real::PrecisionMode;

impl<P: PrecisionMode> CpuSim<P> {
    /// Brings the piston state in line with `params` (none without a piston, at rest at the
    /// top when one is switched on, inside the limits); forces are recomputed if it changed.
    pub fn sync_piston(&mut self, params: &SimParams) {
        let s = PistonState::reconcile(params.piston.as_ref(), self.piston, &self.sim_box);
        if s != self.piston {
            self.piston = s;
            self.forces_valid = false;
        }
        if s.is_none() {
            self.piston_target = None;
        }
    }

    /// The piston's half kick with the last force pass's push; while dragged, its velocity
    /// is set toward the target instead.
    pub(super) fn piston_kick(&mut self, params: &SimParams) {
        let Some(s) = self.piston.as_mut() else { return };
        match (self.piston_target, params.piston.as_ref()) {
            (Some(target), _) => s.velocity = s.drag_velocity(target),
            (None, Some(p)) => s.half_kick(p, &self.sim_box, self.piston_force, params.dt),
            (None, None) => {}
        }
    }

    pub(super) fn piston_drift(&mut self, dt: f64) {
        if let Some(s) = self.piston.as_mut() {
            s.drift(dt, &self.sim_box);
        }
    }
}
