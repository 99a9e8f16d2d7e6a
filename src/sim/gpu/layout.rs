//! The host side of `shaders/sim/common.wgsl`: the constants block (`Params`), the per-step
//! block (`StepInfo`), a species pair's coefficients (`Pair`) and the flag slots, laid out
//! field for field as the shaders read them (a test pins the sizes), and how `SimParams` and
//! the box fill them.

use bytemuck::{Pod, Zeroable};

use crate::physics::lj::{LjPair, Table};
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::sim_box::SimBox;
use crate::physics::wall::Wall93;

/// Flag slots of the device's flag array (common.wgsl `F_*`).
pub mod flag {
    pub const REBUILD: usize = 0;
    pub const OVERFLOW: usize = 1;
    pub const MAX_SEEN: usize = 2;
    pub const BLOWUP: usize = 3;
    pub const BLOWUP_AT: usize = 4;
    pub const ESCAPE: usize = 5;
    /// List builds in the call.
    pub const BUILDS: usize = 6;
    /// Odd steps' rebuild flag (REBUILD: even steps').
    pub const REBUILD_ODD: usize = 7;
    pub const COUNT: usize = 8;
}

/// (hi, lo) pairs per telemetry record: 2 KE, pair E, pair W, external E, external W, px, py, pz.
pub const RECORD_WORDS: usize = 8;
/// Bytes between two steps' `StepInfo` (the dynamic-offset alignment wgpu guarantees).
pub const STEP_STRIDE: u64 = 256;
/// `StepInfo::record` when a step writes none.
pub const NO_RECORD: u32 = u32::MAX;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct Params {
    pub dims: [u32; 4],
    pub periodic: [u32; 4],
    pub lo: [f32; 4],
    pub hi: [f32; 4],
    pub len: [f32; 4],
    pub cell_inv: [f32; 4],
    pub inv_len: [f32; 4],
    pub wall_a: [f32; 4],
    pub wall_b: [f32; 4],
    pub n: u32,
    pub n_cells: u32,
    pub max_nbrs: u32,
    pub n_groups: u32,
    pub dt: f32,
    pub half_dt: f32,
    pub rlist_sq: f32,
    pub half_skin_sq: f32,
    pub gravity: f32,
    pub drive: f32,
    pub drive_potential: u32,
    pub thermostat: u32,
    pub lang_c1: f32,
    pub lang_c2: f32,
    pub target_t: f32,
    pub dof: f32,
    pub dt_over_tau: f32,
    pub csvr_factor: f32,
    pub seed_lo: u32,
    pub seed_hi: u32,
    pub wall_f: f32,
    pub runaway_sq: f32,
    pub escape: f32,
    pub walls: u32,
    /// Species pair (0, 0), for the one-species fast path.
    pub pair0: Pair,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct StepInfo {
    pub step_lo: u32,
    pub step_hi: u32,
    pub k: u32,
    pub ev: u32,
    pub record: u32,
    pub scale: u32,
    pub csvr_rr: f32,
    pub csvr_chi: f32,
    pub no_kick: u32,
    pub thermostat_on: u32,
    /// The previous step, whose second half kick (and Langevin noise) a fused first kick takes.
    pub prev_lo: u32,
    pub prev_hi: u32,
}

impl StepInfo {
    /// Step `step` (the step being taken), the `k`-th of its call.
    pub fn at(step: u64, k: u32) -> StepInfo {
        let prev = step.saturating_sub(1);
        StepInfo {
            step_lo: step as u32,
            step_hi: (step >> 32) as u32,
            k,
            record: NO_RECORD,
            prev_lo: prev as u32,
            prev_hi: (prev >> 32) as u32,
            ..Default::default()
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct Pair {
    pub lj1: f32,
    pub lj2: f32,
    pub lj3: f32,
    pub lj4: f32,
    pub offset: f32,
    pub rcut_sq: f32,
    pub pad: [f32; 2],
}

/// Every species pair's coefficients, row `i` column `j` at `i * n + j`.
pub fn pair_table(params: &SimParams) -> Vec<Pair> {
    let n = params.species.len();
    let table = Table::<f64>::from_params(params);
    let mut out = Vec::with_capacity(n * n);
    for i in 0..n {
        for j in 0..n {
            let p: &LjPair<f64> = &table.pairs[i * n + j];
            out.push(Pair {
                lj1: p.lj1 as f32,
                lj2: p.lj2 as f32,
                lj3: p.lj3 as f32,
                lj4: p.lj4 as f32,
                offset: p.offset as f32,
                rcut_sq: p.rcut_sq as f32,
                pad: [0.0; 2],
            });
        }
    }
    out
}

/// The cell grid of the lists: cells at least `range` wide, two at least along a periodic
/// axis (one along a closed axis when it is thinner than the range). None when a periodic
/// axis is shorter than twice the range (the minimum image would miss pairs).
pub fn cell_dims(b: &SimBox, range: f64) -> Option<[u32; 3]> {
    let mut dims = [1u32; 3];
    for k in 0..3 {
        let l = b.length()[k];
        if b.periodic[k] && l < 2.0 * range {
            return None;
        }
        dims[k] = ((l / range).floor() as u32).max(1);
    }
    Some(dims)
}

/// The constants for `params` in box `b` with `n` atoms, `dims` cells and room for
/// `max_nbrs` neighbours, `dof` degrees of freedom and `groups` workgroups over the atoms.
pub fn params_block(
    params: &SimParams,
    b: &SimBox,
    n: usize,
    dims: [u32; 3],
    max_nbrs: u32,
    dof: f64,
    groups: u32,
) -> Params {
    let len = b.length();
    let (lo, hi) = (b.lo, b.hi);
    let wall = Wall93::<f64>::new(&params.wall);
    let range = params.list_range();
    let half_skin = 0.5 * params.skin;
    let (thermostat, tau) = match params.thermostat {
        Thermostat::Berendsen { tau, .. } => (1, tau),
        Thermostat::Csvr { tau, .. } => (2, tau),
        Thermostat::Langevin { damp } => (3, damp),
        _ => (0, 1.0),
    };
    let c1 = (-params.dt / tau).exp();
    let f4 = |v: [f64; 3]| [v[0] as f32, v[1] as f32, v[2] as f32, 0.0];
    Params {
        // w: bit k set where periodic axis k has fewer than three cells (the build takes
        // minimum images along it).
        dims: [dims[0], dims[1], dims[2], (0..3).filter(|&k| b.periodic[k] && dims[k] < 3).map(|k| 1u32 << k).sum()],
        periodic: [b.periodic[0] as u32, b.periodic[1] as u32, b.periodic[2] as u32, 0],
        lo: f4(lo),
        hi: f4(hi),
        len: f4(len),
        cell_inv: f4([dims[0] as f64 / len[0], dims[1] as f64 / len[1], dims[2] as f64 / len[2]]),
        inv_len: f4([1.0 / len[0], 1.0 / len[1], 1.0 / len[2]]),
        wall_a: [wall.coeff1 as f32, wall.coeff2 as f32, wall.coeff3 as f32, wall.coeff4 as f32],
        wall_b: [wall.offset as f32, wall.cutoff as f32, wall.d_cap as f32, wall.e_cap as f32],
        n: n as u32,
        n_cells: dims[0] * dims[1] * dims[2],
        max_nbrs,
        n_groups: groups,
        dt: params.dt as f32,
        half_dt: (0.5 * params.dt) as f32,
        rlist_sq: (range * range) as f32,
        // ARGON_WGPU_ALWAYS_REBUILD: every step rebuilds (measuring the build's cost).
        half_skin_sq: if std::env::var_os("ARGON_WGPU_ALWAYS_REBUILD").is_some() {
            -1.0
        } else {
            (half_skin * half_skin) as f32
        },
        gravity: params.gravity as f32,
        drive: params.drive as f32,
        drive_potential: u32::from(!b.periodic[0]),
        thermostat,
        lang_c1: c1 as f32,
        lang_c2: (1.0 - c1 * c1).sqrt() as f32,
        target_t: params.temperature as f32,
        dof: dof as f32,
        dt_over_tau: (params.dt / tau) as f32,
        csvr_factor: c1 as f32,
        seed_lo: params.seed as u32,
        seed_hi: (params.seed >> 32) as u32,
        wall_f: wall.f_cap as f32,
        runaway_sq: (crate::sim::RUNAWAY_STEP * crate::sim::RUNAWAY_STEP) as f32,
        escape: crate::sim::ESCAPE_MARGIN as f32,
        walls: u32::from(!(b.periodic[0] && b.periodic[1] && b.periodic[2])),
        pair0: pair_table(params)[0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes the shaders expect: WGSL's uniform layout of these structs.
    #[test]
    fn blocks_have_the_shader_layout() {
        assert_eq!(std::mem::size_of::<Params>(), 9 * 16 + 24 * 4 + 32);
        assert_eq!(std::mem::size_of::<Params>() % 16, 0);
        assert_eq!(std::mem::size_of::<StepInfo>(), 48);
        assert_eq!(std::mem::size_of::<Pair>(), 32);
    }

    #[test]
    fn cells_are_at_least_the_range_wide() {
        let b = SimBox::new([20.0, 8.0, 5.0], [true, true, false]);
        assert_eq!(cell_dims(&b, 2.8), Some([7, 2, 1]));
        assert_eq!(cell_dims(&SimBox::new([5.0, 20.0, 20.0], [true; 3]), 2.8), None);
    }
}
