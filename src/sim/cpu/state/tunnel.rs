//! The wind tunnel's inflow zone on the CPU (`physics::tunnel`, mirrored by
//! `kernels/tunnel.cu`): at the end of a step, after the second half kick and the
//! thermostat, every atom whose wrapped x lies in the zone gets a fresh Maxwell-Boltzmann
//! velocity around the stream velocity, keyed by (seed, step, canonical id); what that gave
//! the atoms (momentum and kinetic energy) is added, chunk by chunk in order, to the sums the
//! next telemetry record reports.

use rayon::prelude::*;

use super::{CpuSim, Ctx, REDUCE_CHUNK};
use crate::physics::real::{PrecisionMode, Real};
use crate::physics::tunnel::{ZoneSums, in_zone, inflow_velocity};

impl<P: PrecisionMode> CpuSim<P> {
    /// Applies the inflow zone after step `step` (nothing without a tunnel).
    pub(super) fn tunnel_zone(&mut self, ctx: &Ctx, step: u64) {
        let p = ctx.params;
        let Some(tunnel) = p.tunnel.as_ref() else { return };
        let (lo, hi) = tunnel.bounds(&self.sim_box);
        let (t, u, seed) = (p.temperature, tunnel.speed, p.seed);
        let (pos, types, ids, masses) = (&self.pos, &self.types, &self.ids, &ctx.masses);
        let sums: Vec<ZoneSums> = self
            .vel
            .par_chunks_mut(REDUCE_CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let mut sum = ZoneSums::default();
                for (k, v) in chunk.iter_mut().enumerate() {
                    let i = c * REDUCE_CHUNK + k;
                    if !in_zone(pos[i][0].f64(), lo, hi) {
                        continue;
                    }
                    let m = masses[types[i] as usize];
                    let old = v.map(|x| x.f64());
                    *v = inflow_velocity(seed, step, ids[i], m, t, u).map(P::State::of);
                    sum.add(&ZoneSums::of_atom(m, old, v.map(|x| x.f64())));
                }
                sum
            })
            .collect();
        for s in &sums {
            self.tunnel.add(s);
        }
    }
}
