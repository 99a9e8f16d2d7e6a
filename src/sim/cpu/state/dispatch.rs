//! The force pass of one step: picks the pair coefficients (one species or a table), runs
//! the chosen algorithm from `sim/cpu/forces.rs` (all pairs, cells, the per-atom neighbour
//! list, or the cluster-pair list where it serves), rebuilding the lists when atoms moved
//! more than skin/2 (`lists.rs`), then adds the external forces (`sim/cpu/external.rs`) and
//! records the piston's push. The force algorithms themselves live in `sim/cpu/forces.rs`;
//! this file only dispatches to them.

use super::{CpuSim, Ctx, Sums, force_positions};
use crate::physics::lj::{LjPair, PairCoeffs, Table, Uniform};
use crate::physics::params::Algorithm;
use crate::physics::real::{PrecisionMode, Real};
use crate::physics::sim_box::SimBox;
use crate::sim::bodies::{BodyLayout, BodySums};
use crate::sim::cpu::cells::CellGrid;
use crate::sim::cpu::clusters;
use crate::sim::cpu::external::External;
use crate::sim::cpu::forces::{self, TILE};
use crate::sim::cpu::kernels::{EnergyVirial, MinImage, mode};
use crate::sim::cpu::simd::{cast_slice, cast_slice_mut};

impl<P: PrecisionMode> CpuSim<P> {
    /// Computes forces at the current positions for the force pass of `step` (it keys the
    /// surface friction's noise), and the sums of mode `M` (see `kernels::mode`); in
    /// [`mode::STRESS`] the pair virial tensor is also kept for `stress.rs`.
    pub(super) fn compute_forces<const M: u8>(&mut self, ctx: &Ctx, step: u64) -> Sums {
        if !self.pos_f_fresh {
            self.sync_pos_f();
            self.disp_since_build = None;
        }
        self.pos_f_fresh = false;
        let p = ctx.params;
        let sums = if p.species.len() == 1 {
            let c = Uniform(LjPair::<P::Force>::like_pair(p, 0));
            self.pair_forces::<_, M>(ctx, &c)
        } else {
            let c = Table::<P::Force>::from_params(p);
            self.pair_forces::<_, M>(ctx, &c)
        };
        let ext = External::<P::Force>::new(&self.sim_box, p, ctx.field, self.piston.map(|s| s.height), step);
        let layout = BodyLayout::new(&self.sim_box, ctx.field);
        if layout != self.bodies.layout {
            self.bodies = BodySums::new(layout);
        }
        self.body_step.resize(self.bodies.layout.len(), [0.0; 3]);
        let bodies = Some((&self.bodies.layout, &mut self.body_step[..]));
        let (e, top): (EnergyVirial<P::Accum>, f64) =
            ext.apply(&self.pos, &self.vel, &self.types, &self.ids, &ctx.masses, &mut self.force, bodies);
        self.piston_force = top;
        self.forces_valid = true;
        self.pair_tensor = (M & mode::STRESS != 0).then_some((step, sums.tensor));
        (sums, e.to_f64())
    }

    fn pair_forces<C: PairCoeffs<P::Force>, const M: u8>(&mut self, ctx: &Ctx, c: &C) -> EnergyVirial<f64> {
        type A<P> = <P as PrecisionMode>::Accum;
        let img = MinImage::<P::Force>::new(&self.sim_box);
        let mut algorithm = ctx.algorithm;
        let lj32 = if algorithm == Algorithm::Neighbors {
            cluster_coeffs(c, &self.sim_box, ctx.params.list_range())
        } else {
            None
        };
        // A list range past half a thin periodic depth (the device backends take that depth
        // as one column of list cells, whose pairs take their minimum image) leaves this
        // per-atom list no cells: without the cluster-pair lists, which handle it, the cell
        // list (range the cut-off) serves instead of a list built from all pairs.
        self.nl_as_cells = algorithm == Algorithm::Neighbors
            && lj32.is_none()
            && !Algorithm::images_fit(&self.sim_box, ctx.params.list_range())
            && Algorithm::images_fit(&self.sim_box, ctx.params.max_cutoff());
        if self.nl_as_cells {
            algorithm = Algorithm::Cells;
        }
        if algorithm == Algorithm::Cells {
            // Every pair's cut-off is within the largest.
            let range = ctx.params.max_cutoff();
            if self.cells.grid.is_none() || self.cells_range != range {
                self.cells.grid = CellGrid::for_lists(&self.sim_box, range);
                self.cells_range = range;
            }
            if self.cells.grid.is_none() {
                algorithm = Algorithm::AllPairsTiled;
            }
        }
        if algorithm == Algorithm::Neighbors {
            if lj32.is_some() != self.nl_clusters || self.nl.pos_at_build.len() != self.pos.len() {
                self.nl_valid = false;
            }
            // Build positions are kept in f32: allow for their rounding.
            let half_skin = (0.5 * ctx.params.skin - 1e-4).max(0.0);
            let moved = match self.disp_since_build.take() {
                Some(d) => d,
                None if self.nl_valid => self.max_disp_sq_since_build(),
                None => f64::INFINITY,
            };
            let rebuild = !self.nl_valid || moved > half_skin * half_skin;
            if rebuild {
                self.nl_clusters = lj32.is_some();
                match lj32 {
                    Some(_) => self.rebuild_clusters(ctx.params.list_range()),
                    None => self.rebuild_neighbors(ctx.params),
                }
            }
            let pf = force_positions(&self.pos, &self.pos_f);
            if let (Some(lj), Some(p32), Some(f32s)) =
                (lj32, cast_slice::<_, [f32; 4]>(pf), cast_slice_mut::<_, [f32; 4]>(&mut self.force))
            {
                if !rebuild {
                    self.clusters.pack(p32, &self.nl.pos_at_build);
                }
                return self.clusters.forces::<M>(&lj, &mut self.cluster_bufs, f32s);
            }
        }
        let pf = force_positions(&self.pos, &self.pos_f);
        let ev: EnergyVirial<A<P>> = match algorithm {
            Algorithm::AllPairsGlobal => forces::all_pairs::<_, _, C, M>(pf, None, c, &img, &mut self.force),
            Algorithm::Cells => forces::cell_list::<_, _, C, M>(pf, &mut self.cells, c, &img, &mut self.force),
            Algorithm::Neighbors => {
                forces::neighbor_list::<_, _, C, M>(pf, &self.nl, &mut self.bufs, c, &img, &mut self.force)
            }
            Algorithm::AllPairsTiled | Algorithm::Auto => {
                forces::all_pairs::<_, _, C, M>(pf, Some(TILE), c, &img, &mut self.force)
            }
        };
        ev.to_f64()
    }

    /// How the last force pass found its pairs under `algorithm` (see `Backend::pair_search`).
    pub fn pair_search(&self, algorithm: Algorithm) -> &'static str {
        match algorithm {
            Algorithm::AllPairsGlobal => "all pairs",
            Algorithm::Cells if self.cells.grid.is_some() => "cell list",
            Algorithm::Neighbors if self.nl_as_cells => {
                "cell list (the list range passes half a thin periodic depth: no list cells on the CPU)"
            }
            Algorithm::Neighbors if self.nl_clusters => "cluster-pair list",
            Algorithm::Neighbors if self.nl_grid.is_some() => "neighbour list",
            Algorithm::Neighbors => "neighbour list (built from all pairs: the box is too small for cells)",
            _ => "all pairs (tiled)",
        }
    }

    /// Forces at the current positions in canonical order.
    pub fn forces(&mut self, ctx: &Ctx) -> Vec<[f64; 3]> {
        self.sync_piston(ctx.params);
        self.compute_forces::<{ mode::FORCES }>(ctx, self.step);
        let mut out = vec![[0.0; 3]; self.n()];
        for (s, f) in self.force.iter().enumerate() {
            out[self.ids[s] as usize] = [f[0].f64(), f[1].f64(), f[2].f64()];
        }
        out
    }
}

/// The f32 pair coefficients when the cluster-pair list serves this case: one species,
/// f32 forces, AVX-512 or AVX2 in use (see [`clusters::enabled`]), a box the clusters fit
/// (see [`clusters::fits`]) and not switched off (`ARGON_CPU_CLUSTERS=0`).
fn cluster_coeffs<F: Real, C: PairCoeffs<F>>(c: &C, b: &SimBox, range: f64) -> Option<LjPair<f32>> {
    if !clusters::enabled() || !clusters::fits(b, range) {
        return None;
    }
    c.uniform().and_then(crate::sim::cpu::simd::cast_ref::<LjPair<F>, LjPair<f32>>).copied()
}
