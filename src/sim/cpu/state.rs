//! One CPU simulation at one precision (`CpuSim`): the atom arrays (with the force-precision
//! copy of the positions that mixed precision keeps), construction from a snapshot and back,
//! and telemetry. The rest lives in child modules, each adding an `impl CpuSim` block:
//!
//! - `state/step.rs`: velocity-Verlet stepping (kick and drift, the step loop, blow-ups);
//! - `state/thermostat.rs`: the rescaling thermostats (Berendsen, CSVR), the kinetic sums and
//!   the thermal temperature relative to the flow that telemetry reports;
//! - `state/tunnel.rs`: the wind tunnel's inflow zone (`physics/tunnel.rs`), applied after the
//!   thermostat, and its momentum and energy bookkeeping;
//! - `state/dispatch.rs`: the force pass through the chosen algorithm of `sim/cpu/forces.rs`;
//! - `state/lists.rs`: neighbour-list upkeep (rebuild past skin/2 with spatial re-sorting);
//! - `state/dye.rs`: dye rakes crossed in the drift and tags cleared in the tunnel's zone;
//! - `state/piston.rs`: the piston (the top wall as a moving plane, `physics/piston.rs`),
//!   stepped in lockstep with the atoms: its half kicks use the top wall's force sum from
//!   the force pass.
//!
//! Atoms live in "slots" that are re-sorted by cell for locality; `ids` maps each slot to the
//! atom's canonical index, which is what leaves this type (snapshots, positions, RNG streams).

mod dispatch;
mod dye;
mod lists;
mod piston;
mod step;
mod thermostat;
mod tunnel;

use num_traits::Zero;
use rayon::prelude::*;

use super::cells::CellGrid;
use super::clusters::{Block, ClusterList};
use super::forces::CellScratch;
use super::kernels::{EnergyVirial, mode};
use super::neighbors::NeighborList;
use crate::analysis;
use crate::physics::dye::Dye;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{Algorithm, SimParams};
use crate::physics::piston::{PistonState, PistonTelemetry};
use crate::physics::real::{PrecisionMode, Real};
use crate::physics::sim_box::SimBox;
use crate::physics::tunnel::ZoneSums;
use crate::sim::bodies::BodySums;
use crate::sim::{AtomState, Snapshot, Telemetry};

/// The per-call context: parameters and what is derived from them.
pub struct Ctx<'a> {
    pub params: &'a SimParams,
    pub algorithm: Algorithm,
    pub field: Option<&'a ObstacleField>,
    pub masses: Vec<f64>,
    pub dof: f64,
    /// Dye rakes applied after every drift (`dye.rs`).
    pub rakes: &'a [crate::physics::dye::DyeRake],
}

/// Atoms per chunk of the ordered parallel sums.
const REDUCE_CHUNK: usize = 4096;

/// Sums from the last force computation with energies: (pair, external).
type Sums = (EnergyVirial<f64>, EnergyVirial<f64>);

pub struct CpuSim<P: PrecisionMode> {
    pub sim_box: SimBox,
    /// x, y, z and the species index (as a number) of every slot.
    pub pos: Vec<[P::State; 4]>,
    pub vel: Vec<[P::State; 3]>,
    pub types: Vec<u32>,
    /// Each slot's dye tag (`physics::dye`), permuted with the others; empty when the state
    /// has no dye column.
    pub dye: Vec<Dye>,
    pub ids: Vec<u32>,
    pub step: u64,
    pub time: f64,
    /// The piston's state, when the parameters have a piston (see [`CpuSim::sync_piston`]).
    pub piston: Option<PistonState>,
    /// Dragged by the user toward this height: the piston ignores forces (see
    /// [`PistonState::drag_velocity`]) until released (None).
    pub piston_target: Option<f64>,
    /// The atoms' push on the upper y wall (the piston) from the last force pass.
    piston_force: f64,
    force: Vec<[P::Force; 4]>,
    /// Force-precision copy of `pos`, kept only when the two precisions differ (mixed).
    pos_f: Vec<[P::Force; 4]>,
    forces_valid: bool,
    /// Steps divisible by this (when not 0) sum the pair virial tensor in their force pass,
    /// for a viscosity measurement (set by the transport sampler's owner).
    pub stress_every: u64,
    /// The pair virial tensor of the force pass of a step (see `stress.rs`), with that step.
    pair_tensor: Option<(u64, [f64; 6])>,
    cells: CellScratch<P::Force>,
    cells_range: f64,
    nl: NeighborList,
    nl_grid: Option<CellGrid>,
    nl_range: f64,
    nl_valid: bool,
    /// The valid list is the cluster list (else the per-atom list).
    nl_clusters: bool,
    /// Whether the last neighbour-list force pass ran the cell list instead: a list range
    /// past half a thin periodic depth leaves the per-atom list no cells (the device backends
    /// take such a depth as one column; see `dispatch.rs`).
    nl_as_cells: bool,
    clusters: ClusterList,
    cluster_bufs: Vec<Vec<Block>>,
    bufs: Vec<Vec<[P::Force; 4]>>,
    /// `pos_f` matches `pos` (set by the drift, cleared once forces use it).
    pos_f_fresh: bool,
    /// Largest squared displacement since the list was built, measured by the drift.
    disp_since_build: Option<f64>,
    /// The per-bin mean flow of a thermostat relative to the flow (made on first use).
    profile: Option<crate::flow::FlowProfile>,
    /// The force on each body summed over the steps since the last telemetry record.
    bodies: BodySums,
    /// The force on each body from the last force pass.
    body_step: Vec<[f64; 3]>,
    /// What the tunnel's inflow zone gave the atoms over the steps since the last record.
    tunnel: ZoneSums,
}

/// The positions the force loops read: `pos` itself when state and force precision agree,
/// else the force-precision copy.
fn force_positions<'a, S: 'static, F: 'static>(pos: &'a [[S; 4]], pos_f: &'a [[F; 4]]) -> &'a [[F; 4]] {
    super::simd::cast_slice::<[S; 4], [F; 4]>(pos).unwrap_or(pos_f)
}

impl<P: PrecisionMode> CpuSim<P> {
    pub fn from_snapshot(s: &Snapshot) -> Self {
        let st = |x: &[f64; 3]| x.map(P::State::of);
        let n = s.atoms.len();
        let pos = s
            .atoms
            .positions
            .iter()
            .zip(&s.atoms.types)
            .map(|(p, &t)| {
                let w = s.sim_box.wrap(*p);
                [P::State::of(w[0]), P::State::of(w[1]), P::State::of(w[2]), P::State::of(t as f64)]
            })
            .collect();
        CpuSim {
            sim_box: s.sim_box,
            pos,
            vel: s.atoms.velocities.iter().map(st).collect(),
            types: s.atoms.types.clone(),
            dye: s.atoms.dye.clone(),
            ids: (0..n as u32).collect(),
            step: s.step,
            time: s.time,
            piston: s.piston,
            piston_target: None,
            piston_force: 0.0,
            force: vec![[P::Force::zero(); 4]; n],
            pos_f: Vec::new(),
            forces_valid: false,
            stress_every: 0,
            pair_tensor: None,
            cells: CellScratch::default(),
            cells_range: 0.0,
            nl: NeighborList::default(),
            nl_grid: None,
            nl_range: 0.0,
            nl_valid: false,
            nl_clusters: false,
            nl_as_cells: false,
            clusters: ClusterList::default(),
            cluster_bufs: Vec::new(),
            bufs: Vec::new(),
            pos_f_fresh: false,
            disp_since_build: None,
            profile: None,
            bodies: BodySums::default(),
            body_step: Vec::new(),
            tunnel: ZoneSums::default(),
        }
    }

    pub fn n(&self) -> usize {
        self.pos.len()
    }

    pub fn snapshot(&self) -> Snapshot {
        let n = self.n();
        let dye = if self.dye.is_empty() { Vec::new() } else { vec![0; n] };
        let mut atoms =
            AtomState { positions: vec![[0.0; 3]; n], velocities: vec![[0.0; 3]; n], types: vec![0; n], dye };
        for s in 0..n {
            let i = self.ids[s] as usize;
            let p = self.pos[s];
            atoms.positions[i] = [p[0].f64(), p[1].f64(), p[2].f64()];
            atoms.velocities[i] = self.vel[s].map(|x| x.f64());
            atoms.types[i] = self.types[s];
            if let Some(&d) = self.dye.get(s) {
                atoms.dye[i] = d;
            }
        }
        Snapshot { sim_box: self.sim_box, atoms, step: self.step, time: self.time, piston: self.piston }
    }

    /// Whether state and force precision differ (a separate force-precision copy is kept).
    fn mixed() -> bool {
        std::any::TypeId::of::<P::State>() != std::any::TypeId::of::<P::Force>()
    }

    fn sync_pos_f(&mut self) {
        if !Self::mixed() {
            return;
        }
        let pos = &self.pos;
        self.pos_f.resize(pos.len(), [P::Force::zero(); 4]);
        self.pos_f.par_iter_mut().enumerate().with_min_len(4096).for_each(|(i, q)| {
            *q = pos[i].map(|x| P::Force::of(x.f64()));
        });
    }

    /// Telemetry from sums computed at the current positions (no body forces: the step loop
    /// adds those; no thermal temperature: the callers add it, `thermostat.rs`).
    pub fn telemetry(&self, ctx: &Ctx, sums: Sums) -> Telemetry {
        let (twice_ke, momentum) = self.kinetic(&ctx.masses);
        let (pair, ext) = sums;
        let virial = pair.virial + ext.virial;
        let piston = match (&self.piston, &ctx.params.piston) {
            (Some(s), Some(p)) => Some(PistonTelemetry::new(s, p, &self.sim_box, self.piston_force)),
            _ => None,
        };
        let volume = piston.map_or(self.sim_box.volume(), |p| p.volume);
        Telemetry {
            step: self.step,
            time: self.time,
            n_atoms: self.n(),
            dof: ctx.dof,
            temperature: analysis::temperature(twice_ke, ctx.dof),
            kinetic_energy: 0.5 * twice_ke,
            pair_energy: pair.energy,
            external_energy: ext.energy,
            virial,
            pressure: analysis::pressure(twice_ke, virial, volume),
            volume,
            momentum,
            piston,
            steps_per_s: 0.0,
            mc: Default::default(),
            body_forces: Vec::new(),
            tunnel_momentum: [0.0; 3],
            tunnel_heat: 0.0,
            thermal: None,
        }
    }

    /// The pair virial tensor of the current positions when this step's force pass summed it
    /// (a stress step, see [`CpuSim::stress_every`]) and nothing has changed since.
    pub(super) fn pair_tensor_now(&self) -> Option<[f64; 6]> {
        match self.pair_tensor {
            Some((step, t)) if self.forces_valid && step == self.step => Some(t),
            _ => None,
        }
    }

    /// Telemetry of the current state (forces recomputed with energies; the state is unchanged).
    pub fn measure(&mut self, ctx: &Ctx) -> Telemetry {
        self.sync_piston(ctx.params);
        let sums = self.compute_forces::<{ mode::ENERGY }>(ctx, self.step);
        let mut t = self.telemetry(ctx, sums);
        t.thermal = self.thermal(ctx, 2.0 * t.kinetic_energy);
        t
    }
}
