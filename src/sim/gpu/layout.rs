//! The host side of `shaders/sim/common.wgsl`: the constants block (`Params`), the per-step
//! block (`StepInfo`), a species pair's coefficients (`Pair`) and the flag slots, held in f64
//! and written field for field as the shaders read them in each precision (`bytes`, through
//! `block.rs`: reals in f32 or f64; tests pin the sizes), and how `SimParams` and the box
//! fill them.

use super::block::Block;
use crate::physics::lj::{LjPair, Table};
use crate::physics::params::{Algorithm, SimParams, Thermostat};
use crate::physics::real::Precision;
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

/// Bytes of a `real_s` (the state's: positions, velocities, sums) in `precision`.
pub fn state_bytes(precision: Precision) -> u64 {
    if precision == Precision::Single { 4 } else { 8 }
}

/// Bytes of a `real_f` (the forces') in `precision`.
pub fn force_bytes(precision: Precision) -> u64 {
    if precision == Precision::Double { 8 } else { 4 }
}

/// `x` as a `real_s` holds it in `precision` (rounded to f32 in single).
pub fn as_state(x: f64, precision: Precision) -> f64 {
    if precision == Precision::Single { x as f32 as f64 } else { x }
}

/// The reals of a read-back array of `real_s`, as f64.
pub fn state_reals(raw: &[u8], precision: Precision) -> Vec<f64> {
    if precision == Precision::Single {
        raw.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64).collect()
    } else {
        raw.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
    }
}

/// The reals of a read-back array of `real_f`, as f64.
pub fn force_reals(raw: &[u8], precision: Precision) -> Vec<f64> {
    state_reals(raw, if precision == Precision::Double { Precision::Double } else { Precision::Single })
}
/// Bytes between two steps' `StepInfo` (the dynamic-offset alignment wgpu guarantees).
pub const STEP_STRIDE: u64 = 256;
/// `StepInfo::record` when a step writes none.
pub const NO_RECORD: u32 = u32::MAX;

/// The constants block (common.wgsl `Params`): reals in f64 here, written in the precision's.
#[derive(Clone, Copy, Debug, Default)]
pub struct Params {
    pub dims: [u32; 4],
    pub periodic: [u32; 4],
    pub lo: [f64; 4],
    pub hi: [f64; 4],
    pub len: [f64; 4],
    pub cell_inv: [f64; 4],
    pub inv_len: [f64; 4],
    pub wall_a: [f64; 4],
    pub wall_b: [f64; 4],
    pub n: u32,
    pub n_cells: u32,
    pub max_nbrs: u32,
    pub n_groups: u32,
    pub dt: f64,
    pub half_dt: f64,
    pub rlist_sq: f64,
    pub half_skin_sq: f64,
    pub gravity: f64,
    pub drive: f64,
    pub drive_potential: u32,
    pub thermostat: u32,
    pub lang_c1: f64,
    pub lang_c2: f64,
    pub target_t: f64,
    pub dof: f64,
    pub dt_over_tau: f64,
    pub csvr_factor: f64,
    pub seed_lo: u32,
    pub seed_hi: u32,
    pub wall_f: f64,
    pub runaway_sq: f64,
    pub escape: f64,
    pub walls: u32,
    /// Species pair (0, 0), for the one-species fast path.
    pub pair0: Pair,
}

impl Params {
    /// The block as the shaders of `precision` read it (mixed adds the box in f64).
    pub fn bytes(&self, precision: Precision) -> Vec<u8> {
        self.block(precision).finish_uniform()
    }

    /// The block being written, for the layout test.
    pub fn block(&self, precision: Precision) -> Block {
        let mut b = Block::new(precision);
        b.u32s(&self.dims).u32s(&self.periodic);
        for v in [&self.lo, &self.hi, &self.len, &self.cell_inv, &self.inv_len, &self.wall_a, &self.wall_b] {
            b.f(v);
        }
        b.u32s(&[self.n]).u32s(&[self.n_cells]).u32s(&[self.max_nbrs]).u32s(&[self.n_groups]);
        b.s(&[self.dt]).s(&[self.half_dt]);
        b.f(&[self.rlist_sq]).f(&[self.half_skin_sq]).f(&[self.gravity]).f(&[self.drive]);
        b.u32s(&[self.drive_potential]).u32s(&[self.thermostat]);
        for x in [self.lang_c1, self.lang_c2, self.target_t, self.dof, self.dt_over_tau, self.csvr_factor] {
            b.s(&[x]);
        }
        b.u32s(&[self.seed_lo]).u32s(&[self.seed_hi]);
        b.f(&[self.wall_f]).s(&[self.runaway_sq]).s(&[self.escape]).u32s(&[self.walls]);
        b.nested(self.pair0.block(precision));
        if precision == Precision::Mixed {
            b.f64s(&self.lo).f64s(&self.hi).f64s(&self.len);
        }
        b
    }
}

/// One step's own values (common.wgsl `StepInfo`).
#[derive(Clone, Copy, Debug, Default)]
pub struct StepInfo {
    pub step_lo: u32,
    pub step_hi: u32,
    pub k: u32,
    pub ev: u32,
    pub record: u32,
    pub scale: u32,
    pub csvr_rr: f64,
    pub csvr_chi: f64,
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

    /// The block as the shaders of `precision` read it, padded to [`StepInfo::size`].
    pub fn bytes(&self, precision: Precision) -> Vec<u8> {
        let mut bytes = self.block(precision).finish_uniform();
        bytes.resize(Self::size(precision) as usize, 0);
        bytes
    }

    /// The block being written, for the layout test.
    pub fn block(&self, precision: Precision) -> Block {
        let mut b = Block::new(precision);
        for x in [self.step_lo, self.step_hi, self.k, self.ev, self.record, self.scale] {
            b.u32s(&[x]);
        }
        b.s(&[self.csvr_rr]).s(&[self.csvr_chi]);
        for x in [self.no_kick, self.thermostat_on, self.prev_lo, self.prev_hi] {
            b.u32s(&[x]);
        }
        b
    }

    /// Bytes of the block's binding in `precision` (48 in single, 64 where the state is f64).
    pub fn size(precision: Precision) -> u64 {
        if precision == Precision::Single { 48 } else { 64 }
    }
}

/// A species pair's coefficients (common.wgsl `Pair`), in the forces' precision.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pair {
    pub lj1: f64,
    pub lj2: f64,
    pub lj3: f64,
    pub lj4: f64,
    pub offset: f64,
    pub rcut_sq: f64,
}

impl Pair {
    /// The block being written (an array element, or a member of `Params`).
    pub fn block(&self, precision: Precision) -> Block {
        let mut b = Block::new(precision);
        for x in [self.lj1, self.lj2, self.lj3, self.lj4, self.offset, self.rcut_sq, 0.0, 0.0] {
            b.f(&[x]);
        }
        b
    }
}

/// The bytes of `pairs` as the shaders' `array<Pair>` in `precision`.
pub fn pair_bytes(pairs: &[Pair], precision: Precision) -> Vec<u8> {
    pairs.iter().flat_map(|p| p.block(precision).finish()).collect()
}

/// Every species pair's coefficients, row `i` column `j` at `i * n + j`.
pub fn pair_table(params: &SimParams) -> Vec<Pair> {
    let n = params.species.len();
    let table = Table::<f64>::from_params(params);
    let mut out = Vec::with_capacity(n * n);
    for i in 0..n {
        for j in 0..n {
            let p: &LjPair<f64> = &table.pairs[i * n + j];
            out.push(Pair { lj1: p.lj1, lj2: p.lj2, lj3: p.lj3, lj4: p.lj4, offset: p.offset, rcut_sq: p.rcut_sq });
        }
    }
    out
}

/// The neighbour-list build's cells for `n` atoms, list range `range` and cut-off `cutoff`:
/// as wide as [`crate::sim::list_cells::list_cell_widths`] makes them (about 24 atoms a cell,
/// the CUDA build's cells; a thin slab's depth one column, whatever the skin), or None where
/// the box is too small for lists ([`Algorithm::lists_fit`]).
pub fn list_cell_dims(b: &SimBox, range: f64, cutoff: f64, n: usize) -> Option<[u32; 3]> {
    if !Algorithm::lists_fit(b, range, cutoff) {
        return None;
    }
    // (the widths never leave two cells along a periodic axis: a column or three and more)
    let widths = crate::sim::list_cells::list_cell_widths(b, range, cutoff, n);
    let len = b.length();
    Some(std::array::from_fn(|k| ((len[k] / widths[k]).floor() as u32).max(1)))
}

/// The cell grid of the cell list (and the lists' where wider cells do not fit): cells at least `range` wide (one along a closed axis when it
/// is thinner than the range). A periodic axis that holds two such cells but not three (a
/// thin slab's depth) is one cell deep: each cell is a column through the slab, whose pairs
/// take their minimum image along it (`P.dims.w`), so a build workgroup's i-atoms are the
/// whole column and its candidates the columns around it, where two cells deep half the
/// lanes idled on cells of 13 atoms (the vortex street: 307 x 144 columns of 27). None when a
/// periodic axis is shorter than twice the range (the minimum image would miss pairs).
pub fn cell_dims(b: &SimBox, range: f64) -> Option<[u32; 3]> {
    let mut dims = [1u32; 3];
    for k in 0..3 {
        let l = b.length()[k];
        if b.periodic[k] && l < 2.0 * range {
            return None;
        }
        dims[k] = ((l / range).floor() as u32).max(1);
        if b.periodic[k] && dims[k] == 2 {
            dims[k] = 1;
        }
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
    let f4 = |v: [f64; 3]| [v[0], v[1], v[2], 0.0];
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
        wall_a: [wall.coeff1, wall.coeff2, wall.coeff3, wall.coeff4],
        wall_b: [wall.offset, wall.cutoff, wall.d_cap, wall.e_cap],
        n: n as u32,
        n_cells: dims[0] * dims[1] * dims[2],
        max_nbrs,
        n_groups: groups,
        dt: params.dt,
        half_dt: 0.5 * params.dt,
        rlist_sq: range * range,
        // ARGON_WGPU_ALWAYS_REBUILD: every step rebuilds (measuring the build's cost).
        half_skin_sq: if std::env::var_os("ARGON_WGPU_ALWAYS_REBUILD").is_some() {
            -1.0
        } else {
            half_skin * half_skin
        },
        gravity: params.gravity,
        drive: params.drive,
        drive_potential: u32::from(!b.periodic[0]),
        thermostat,
        lang_c1: c1,
        lang_c2: (1.0 - c1 * c1).sqrt(),
        target_t: params.temperature,
        dof,
        dt_over_tau: params.dt / tau,
        csvr_factor: c1,
        seed_lo: params.seed as u32,
        seed_hi: (params.seed >> 32) as u32,
        wall_f: wall.f_cap,
        runaway_sq: crate::sim::RUNAWAY_STEP * crate::sim::RUNAWAY_STEP,
        escape: crate::sim::ESCAPE_MARGIN,
        walls: u32::from(!(b.periodic[0] && b.periodic[1] && b.periodic[2])),
        pair0: pair_table(params)[0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes and places the shaders expect: WGSL's layout of these structs in each
    /// precision (single's as it was when these were plain f32 structs).
    #[test]
    fn blocks_have_the_shader_layout() {
        let p = Params { dt: 0.5, walls: 7, pair0: Pair { lj1: 2.0, ..Default::default() }, ..Default::default() };
        let single = p.bytes(Precision::Single);
        assert_eq!(single.len(), 9 * 16 + 24 * 4 + 32);
        assert_eq!(&single[160..164], &0.5f32.to_le_bytes());
        assert_eq!(&single[236..240], &7u32.to_le_bytes());
        assert_eq!(&single[240..244], &2.0f32.to_le_bytes());
        // Mixed: f32 box and forces, f64 integration; pair0 16-aligned, the f64 box after it.
        let mixed = p.bytes(Precision::Mixed);
        assert_eq!(&mixed[160..168], &0.5f64.to_le_bytes());
        assert_eq!(&mixed[280..284], &7u32.to_le_bytes());
        assert_eq!(&mixed[288..292], &2.0f32.to_le_bytes());
        assert_eq!(mixed.len(), 320 + 3 * 32);
        let double = p.bytes(Precision::Double);
        assert_eq!(&double[272..280], &0.5f64.to_le_bytes());
        assert_eq!(&double[408..412], &7u32.to_le_bytes());
        assert_eq!(&double[416..424], &2.0f64.to_le_bytes());
        assert_eq!(double.len(), 480);
        let s = StepInfo { csvr_rr: 0.25, no_kick: 3, ..StepInfo::at(5, 1) };
        assert_eq!(s.bytes(Precision::Single).len(), 48);
        assert_eq!(&s.bytes(Precision::Single)[24..28], &0.25f32.to_le_bytes());
        assert_eq!(&s.bytes(Precision::Single)[32..36], &3u32.to_le_bytes());
        assert_eq!(&s.bytes(Precision::Double)[24..32], &0.25f64.to_le_bytes());
        assert_eq!(&s.bytes(Precision::Double)[40..44], &3u32.to_le_bytes());
        assert_eq!(s.bytes(Precision::Mixed).len(), 64);
        assert_eq!(pair_bytes(&[Pair::default(); 3], Precision::Single).len(), 96);
        assert_eq!(pair_bytes(&[Pair::default(); 3], Precision::Mixed).len(), 96);
        assert_eq!(pair_bytes(&[Pair::default(); 3], Precision::Double).len(), 192);
    }

    #[test]
    fn cells_are_at_least_the_range_wide() {
        let b = SimBox::new([20.0, 8.0, 5.0], [true, true, false]);
        // A periodic axis of two cells' room is one column deep.
        assert_eq!(cell_dims(&b, 2.8), Some([7, 1, 1]));
        let street = SimBox::new([862.0, 404.0, 5.6463], [true; 3]);
        assert_eq!(cell_dims(&street, 2.8), Some([307, 144, 1]));
        assert_eq!(cell_dims(&SimBox::new([20.0, 8.5, 8.5], [true; 3]), 2.8), Some([7, 3, 3]));
        assert_eq!(cell_dims(&SimBox::new([5.0, 20.0, 20.0], [true; 3]), 2.8), None);
    }
}
