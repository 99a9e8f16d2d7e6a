//! The pressure tensor of the CPU backend's current state, for transport sampling
//! (`transport.rs`): `P_ab = (sum_i m_i v_ia v_ib + W_ab) / V` with `W_ab` the pair virial
//! `sum over pairs of r_ij,a f_ij,b` (summed by the step's own force pass on stress steps,
//! see `CpuSim::stress_every` and `kernels::mode::STRESS`; a separate f64 pass through a
//! cell grid when the state was sampled some other way) plus the wall and obstacle
//! terms of [`External::virial_tensor`], so that the trace over 3 is the telemetry pressure
//! (without tail corrections) to round-off. V is the telemetry's volume (under the piston
//! when there is one). Order of the tensor: xx, yy, zz, xy, xz, yz.
//!
//! Owns only this computation; the force loops of the step stay in `forces.rs`.

use rayon::prelude::*;

use super::cells::CellGrid;
use super::external::External;
use super::kernels::{MinImage, TENSOR_AXES};
use super::state::{CpuSim, Ctx};
use crate::physics::lj::{LjPair, PairCoeffs, Table, Uniform};
use crate::physics::real::{PrecisionMode, Real};

/// Adds the pair `(i, j)`'s virial tensor to `w` when it is within its cut-off.
#[inline]
fn add_pair<C: PairCoeffs<f64>>(
    w: &mut [f64; 6],
    c: &C,
    img: &MinImage<f64>,
    pos: &[[f64; 3]],
    types: &[u32],
    i: usize,
    j: usize,
) {
    let (a, b) = (pos[i], pos[j]);
    let d = img.apply([a[0] - b[0], a[1] - b[1], a[2] - b[2]]);
    let rsq = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    let (fdr, _) = c.get(types[i], types[j]).eval_cut(rsq);
    if fdr != 0.0 {
        for (q, &(x, y)) in TENSOR_AXES.iter().enumerate() {
            w[q] += fdr * d[x] * d[y];
        }
    }
}

fn add6(mut a: [f64; 6], b: [f64; 6]) -> [f64; 6] {
    for k in 0..6 {
        a[k] += b[k];
    }
    a
}

/// The pair virial tensor of atoms at `pos` (slot order) of species `types`, each pair once.
/// Per-cell sums are added in cell order, so the result does not depend on scheduling.
fn pair_virial<C: PairCoeffs<f64>>(
    c: &C,
    b: &crate::physics::sim_box::SimBox,
    range: f64,
    pos: &[[f64; 3]],
    types: &[u32],
) -> [f64; 6] {
    let img = MinImage::<f64>::new(b);
    let n = pos.len();
    let Some(mut grid) = CellGrid::finest(b, range) else {
        // A box too small for a grid: every pair.
        let parts: Vec<[f64; 6]> = (0..n)
            .into_par_iter()
            .map(|i| {
                let mut w = [0.0; 6];
                for j in i + 1..n {
                    add_pair(&mut w, c, &img, pos, types, i, j);
                }
                w
            })
            .collect();
        return parts.into_iter().fold([0.0; 6], add6);
    };
    grid.bin(pos);
    let g = &grid;
    let parts: Vec<[f64; 6]> = (0..g.n_cells())
        .into_par_iter()
        // One row buffer per task, not one allocation per cell (the threads would queue on
        // the allocator's lock).
        .map_init(Vec::new, |rows, cell| {
            let mut w = [0.0; 6];
            rows.clear();
            g.row_ranges(g.coords_of(cell), true, rows);
            let own = &g.order[g.range(cell)];
            for (a, &i) in own.iter().enumerate() {
                for &j in &own[a + 1..] {
                    add_pair(&mut w, c, &img, pos, types, i as usize, j as usize);
                }
                for r in rows.iter() {
                    for &j in &g.order[r.clone()] {
                        add_pair(&mut w, c, &img, pos, types, i as usize, j as usize);
                    }
                }
            }
            w
        })
        .collect();
    parts.into_iter().fold([0.0; 6], add6)
}

/// The pressure tensor (xx, yy, zz, xy, xz, yz) of `sim`'s current positions and velocities.
pub fn pressure_tensor<P: PrecisionMode>(sim: &CpuSim<P>, ctx: &Ctx) -> [f64; 6] {
    let params = ctx.params;
    let b = sim.sim_box;
    let pos = || -> Vec<[f64; 3]> { sim.pos.iter().map(|p| [p[0].f64(), p[1].f64(), p[2].f64()]).collect() };
    let mut w = if let Some(t) = sim.pair_tensor_now() {
        t
    } else if params.species.len() == 1 {
        let c = Uniform(LjPair::<f64>::like_pair(params, 0));
        pair_virial(&c, &b, params.max_cutoff(), &pos(), &sim.types)
    } else {
        let c = Table::<f64>::from_params(params);
        pair_virial(&c, &b, params.max_cutoff(), &pos(), &sim.types)
    };
    let ext = External::<P::Force>::new(&b, params, ctx.field, sim.piston.map(|s| s.height), sim.step);
    if !ext.is_empty() {
        let parts: Vec<[f64; 6]> = sim
            .pos
            .par_chunks(4096)
            .map(|chunk| {
                chunk.iter().map(|p| ext.virial_tensor([p[0].f64(), p[1].f64(), p[2].f64()])).fold([0.0; 6], add6)
            })
            .collect();
        w = parts.into_iter().fold(w, add6);
    }
    let kin = sim
        .vel
        .par_chunks(4096)
        .zip(sim.types.par_chunks(4096))
        .map(|(vel, types)| {
            let mut kin = [0.0; 6];
            for (v, &t) in vel.iter().zip(types) {
                let m = ctx.masses[t as usize];
                let v = v.map(|x| x.f64());
                let mv = [m * v[0], m * v[1], m * v[2]];
                kin = add6(kin, [mv[0] * v[0], mv[1] * v[1], mv[2] * v[2], mv[0] * v[1], mv[0] * v[2], mv[1] * v[2]]);
            }
            kin
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold([0.0; 6], add6);
    let volume = match (&sim.piston, &params.piston) {
        (Some(s), Some(_)) => s.volume(&b),
        _ => b.volume(),
    };
    std::array::from_fn(|k| (kin[k] + w[k]) / volume)
}
