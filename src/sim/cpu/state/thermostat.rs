//! The velocity-rescaling thermostats (Berendsen, Bussi's CSVR), applied after the step
//! from the kinetic sum of the second half kick, plain or relative to the local mean flow
//! (`flow::FlowProfile`: per-bin means removed before measuring and rescaling), and the
//! kinetic sums (sum m v^2, total momentum) that telemetry reads (the ordinary temperature,
//! flow included, either way), and the thermal temperature relative to the flow that
//! telemetry adds with a tunnel or a thermostat relative to the flow (the same profile,
//! measured afresh at the record's state). The Langevin thermostat is not here: it is fused
//! into the second half kick (`step.rs`).

use rayon::prelude::*;

use super::{CpuSim, Ctx, REDUCE_CHUNK};
use crate::flow::{FlowProfile, relative_dof};
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::real::{PrecisionMode, Real};
use crate::rng::{Sequence, Stream};
use crate::sim::ThermalTelemetry;

impl<P: PrecisionMode> CpuSim<P> {
    fn scale_velocities(&mut self, lambda: f64) {
        let l = P::State::of(lambda);
        self.vel.par_iter_mut().with_min_len(4096).for_each(|v| {
            for x in v.iter_mut() {
                *x *= l;
            }
        });
    }

    /// Velocity rescaling of Berendsen or Bussi (CSVR) after the step, from sum m v^2
    /// (`twice_ke`). Relative to the flow, the factor comes from the kinetic energy and
    /// degrees of freedom of the motion relative to each bin's mean velocity
    /// (`flow::FlowProfile`), and only that motion is rescaled: each bin's momentum is kept.
    pub(super) fn thermostat(&mut self, ctx: &Ctx, twice_ke: f64, step: u64) {
        let p = ctx.params;
        let Some((_, relative)) = p.thermostat.rescaling() else { return };
        let (k, dof) = if relative {
            let n = self.n();
            let profile = self.measure_profile(&ctx.masses);
            (profile.relative_twice_ke(twice_ke), relative_dof(n, profile.occupied()))
        } else {
            (twice_ke, ctx.dof)
        };
        if k <= 0.0 {
            return;
        }
        let lambda = rescale_factor(p, k, dof, step);
        if lambda == 1.0 {
            return;
        }
        if relative {
            self.scale_relative(lambda);
        } else {
            self.scale_velocities(lambda);
        }
    }

    /// The motion relative to the local mean flow in the current state, from sum m v^2 of all
    /// of it (`twice_ke`), the profile measured afresh here: what a telemetry record reports
    /// beside the ordinary temperature. None unless the parameters ask for it
    /// ([`SimParams::thermal_readout`]), and without atoms.
    pub(super) fn thermal(&mut self, ctx: &Ctx, twice_ke: f64) -> Option<ThermalTelemetry> {
        let n = self.n();
        if !ctx.params.thermal_readout() || n == 0 {
            return None;
        }
        let profile = self.measure_profile(&ctx.masses);
        Some(ThermalTelemetry::from_sums(twice_ke, profile.flow_twice_ke(), n, profile.occupied()))
    }

    /// The mean flow per bin of the current positions and velocities (the profile is made,
    /// or remade for a changed box, here).
    fn measure_profile(&mut self, masses: &[f64]) -> &FlowProfile {
        if !self.profile.as_ref().is_some_and(|f| f.fits(&self.sim_box)) {
            self.profile = None;
        }
        let sim_box = self.sim_box;
        let (pos, vel, types) = (&self.pos, &self.vel, &self.types);
        let profile = self.profile.get_or_insert_with(|| FlowProfile::new(&sim_box));
        profile.measure(pos.len(), |i| {
            let x = pos[i];
            ([x[0].f64(), x[1].f64(), x[2].f64()], vel[i].map(|v| v.f64()), masses[types[i] as usize])
        });
        profile
    }

    /// v <- u_b + lambda (v - u_b) with the means of the last `measure_profile`.
    fn scale_relative(&mut self, lambda: f64) {
        let Some(profile) = self.profile.as_ref() else { return };
        let pos = &self.pos;
        self.vel.par_iter_mut().enumerate().with_min_len(4096).for_each(|(i, v)| {
            let x = pos[i];
            let new = profile.rescale([x[0].f64(), x[1].f64(), x[2].f64()], v.map(|c| c.f64()), lambda);
            *v = new.map(P::State::of);
        });
    }

    /// Sum m v^2 and total momentum (chunk sums added in order: deterministic).
    pub(super) fn kinetic(&self, masses: &[f64]) -> (f64, [f64; 3]) {
        let types = &self.types;
        self.vel
            .par_chunks(REDUCE_CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let (mut ke, mut p) = (0.0, [0.0; 3]);
                for (k, v) in chunk.iter().enumerate() {
                    let m = masses[types[c * REDUCE_CHUNK + k] as usize];
                    let v = [v[0].f64(), v[1].f64(), v[2].f64()];
                    ke += m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
                    for d in 0..3 {
                        p[d] += m * v[d];
                    }
                }
                (ke, p)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .fold((0.0, [0.0; 3]), |a, b| (a.0 + b.0, [a.1[0] + b.1[0], a.1[1] + b.1[1], a.1[2] + b.1[2]]))
    }
}

/// The velocity factor of Berendsen or CSVR at step `step` from twice the kinetic energy `k`
/// over `dof` degrees of freedom (1 for any other thermostat). The CUDA backend's
/// `finish_step` (kernels/integrate.cu) is the same arithmetic.
fn rescale_factor(p: &SimParams, k: f64, dof: f64, step: u64) -> f64 {
    match p.thermostat {
        Thermostat::Berendsen { tau, .. } => {
            let t = k / dof;
            (1.0 + p.dt / tau * (p.temperature / t - 1.0)).max(0.0).sqrt().clamp(0.8, 1.25)
        }
        Thermostat::Csvr { tau, .. } => {
            let mut rng = Sequence::new(p.seed, Stream::Csvr, 0, step.wrapping_mul(64));
            let ke = 0.5 * k;
            let target = 0.5 * dof * p.temperature;
            let factor = (-p.dt / tau).exp();
            let rr = rng.normal();
            let noises = rng.chi_squared(dof - 1.0);
            let new_ke = ke
                + (1.0 - factor) * (target * (noises + rr * rr) / dof - ke)
                + 2.0 * rr * (ke * target / dof * (1.0 - factor) * factor).sqrt();
            (new_ke.max(0.0) / ke).sqrt()
        }
        Thermostat::Nve | Thermostat::Langevin { .. } | Thermostat::Hmc { .. } | Thermostat::HmcNpt { .. } => 1.0,
    }
}
