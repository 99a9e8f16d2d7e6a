//! Dye on the CPU backend (`physics::dye`): in each drift, every atom whose move crossed a
//! rake takes that rake's tag (`apply_rakes`, run on the drift's own parallel chunks); after
//! the tunnel's inflow zone, the atoms in the zone lose theirs (an O(N) pass, only with a
//! tunnel and a dye column). Tags live per slot (`CpuSim::dye`) and are permuted with the
//! other arrays, so they follow their atoms through the list re-sorting.

use rayon::prelude::*;

use super::CpuSim;
use crate::physics::dye::{Dye, DyeRake, after_move};
use crate::physics::params::SimParams;
use crate::physics::real::{PrecisionMode, Real};
use crate::physics::sim_box::SimBox;
use crate::physics::tunnel::in_zone;

/// Atoms per parallel work item.
const CHUNK: usize = 4096;

/// Tags the atoms of a run whose last drift (x += dt v, v still the drift's velocity)
/// crossed one of `rakes` (`pos`, `vel`, `tags` the run's slots). A move wrapped across a
/// periodic x or y edge is also tested in the image on the other side. Called by the drift
/// on each of its chunks, so it costs no pass of its own. (Unlike the devices, which skip it
/// on a blow-up's step, it also tags on that step; the state is rolled back then anyway.)
pub(super) fn apply_rakes<S: Real>(
    rakes: &[DyeRake],
    b: &SimBox,
    dt: f64,
    pos: &[[S; 4]],
    vel: &[[S; 3]],
    tags: &mut [Dye],
) {
    let len = b.length();
    // A move longer than this is a blow-up.
    let reach = crate::sim::RUNAWAY_STEP;
    let wraps = |k: usize, x: f64| b.periodic[k] && (x - reach < b.lo[k] || x + reach >= b.hi[k]);
    for (i, d) in tags.iter_mut().enumerate() {
        let p1 = [pos[i][0].f64(), pos[i][1].f64()];
        // Most atoms are far from every rake and from a periodic edge: two compares each.
        if !wraps(0, p1[0]) && !wraps(1, p1[1]) && !rakes.iter().any(|r| r.near(p1, reach)) {
            continue;
        }
        let p0 = [p1[0] - dt * vel[i][0].f64(), p1[1] - dt * vel[i][1].f64()];
        let mut tag = after_move(rakes, p0, p1, *d);
        let mut shift = [0.0; 2];
        for k in 0..2 {
            if b.periodic[k] && p0[k] < b.lo[k] {
                shift[k] = len[k];
            } else if b.periodic[k] && p0[k] >= b.hi[k] {
                shift[k] = -len[k];
            }
        }
        if shift != [0.0; 2] {
            let q0 = [p0[0] + shift[0], p0[1] + shift[1]];
            let q1 = [p1[0] + shift[0], p1[1] + shift[1]];
            tag = after_move(rakes, q0, q1, tag);
        }
        *d = tag;
    }
}

impl<P: PrecisionMode> CpuSim<P> {
    /// Clears the tags of the atoms in the tunnel's inflow zone (nothing without a tunnel or
    /// a dye column).
    pub(super) fn clear_zone_dye(&mut self, params: &SimParams) {
        let Some(tunnel) = params.tunnel.as_ref() else { return };
        if self.dye.is_empty() {
            return;
        }
        let (lo, hi) = tunnel.bounds(&self.sim_box);
        let pos = &self.pos;
        self.dye.par_iter_mut().enumerate().with_min_len(CHUNK).for_each(|(i, d)| {
            if in_zone(pos[i][0].f64(), lo, hi) {
                *d = 0;
            }
        });
    }
}
