//! The velocity-rescaling thermostats (Berendsen, Bussi's CSVR), applied after the step
//! from the kinetic sum of the second half kick, and the kinetic sums (sum m v^2, total
//! momentum) that telemetry reads. The Langevin thermostat is not here: it is fused into the
//! second half kick (`step.rs`).

use rayon::prelude::*;

use super::{CpuSim, Ctx, REDUCE_CHUNK};
use crate::physics::params::Thermostat;
use crate::physics::real::{PrecisionMode, Real};
use crate::rng::{Sequence, Stream};

impl<P: PrecisionMode> CpuSim<P> {
    fn scale_velocities(&mut self, lambda: f64) {
        let l = P::State::of(lambda);
        self.vel.par_iter_mut().with_min_len(4096).for_each(|v| {
            for x in v.iter_mut() {
                *x *= l;
            }
        });
    }

    /// Velocity rescaling of Berendsen or Bussi (CSVR) after the step, from sum m v^2.
    pub(super) fn thermostat(&mut self, ctx: &Ctx, twice_ke: f64, step: u64) {
        let p = ctx.params;
        if twice_ke <= 0.0 {
            return;
        }
        let lambda = match p.thermostat {
            Thermostat::Berendsen { tau } => {
                let t = twice_ke / ctx.dof;
                (1.0 + p.dt / tau * (p.temperature / t - 1.0)).max(0.0).sqrt().clamp(0.8, 1.25)
            }
            Thermostat::Csvr { tau } => {
                let mut rng = Sequence::new(p.seed, Stream::Csvr, 0, step.wrapping_mul(64));
                let ke = 0.5 * twice_ke;
                let target = 0.5 * ctx.dof * p.temperature;
                let factor = (-p.dt / tau).exp();
                let rr = rng.normal();
                let noises = rng.chi_squared(ctx.dof - 1.0);
                let new_ke = ke
                    + (1.0 - factor) * (target * (noises + rr * rr) / ctx.dof - ke)
                    + 2.0 * rr * (ke * target / ctx.dof * (1.0 - factor) * factor).sqrt();
                (new_ke.max(0.0) / ke).sqrt()
            }
            Thermostat::Nve | Thermostat::Langevin { .. } | Thermostat::Hmc { .. } | Thermostat::HmcNpt { .. } => {
                return;
            }
        };
        if lambda != 1.0 {
            self.scale_velocities(lambda);
        }
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
