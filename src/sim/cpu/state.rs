//! One CPU simulation at one precision: the atom arrays, velocity-Verlet stepping with the
//! thermostats, force computation through the chosen algorithm, neighbour-list upkeep
//! (rebuild past skin/2 with spatial re-sorting), and telemetry.
//!
//! The piston (the top wall as a moving plane, `physics/piston.rs`) is stepped here in lockstep
//! with the atoms: its half kicks use the top wall's force sum from the force pass.
//!
//! Atoms live in "slots" that are re-sorted by cell for locality; `ids` maps each slot to the
//! atom's canonical index, which is what leaves this type (snapshots, positions, RNG streams).

use num_traits::Zero;
use rayon::prelude::*;

use super::cells::CellGrid;
use super::clusters::{self, Block, ClusterList};
use super::external::External;
use super::forces::{self, CellScratch, TILE};
use super::kernels::{EnergyVirial, MinImage};
use super::neighbors::NeighborList;
use super::simd::{cast_slice, cast_slice_mut, multiversion};
use crate::analysis;
use crate::physics::lj::{LjPair, PairCoeffs, Table, Uniform};
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{Algorithm, SimParams, Thermostat};
use crate::physics::piston::{PistonState, PistonTelemetry};
use crate::physics::real::{PrecisionMode, Real};
use crate::physics::sim_box::SimBox;
use crate::rng::{Sequence, Stream, normal4};
use crate::sim::{AtomState, ESCAPE_MARGIN, RUNAWAY_STEP, SimError, Snapshot, Telemetry};

/// The per-call context: parameters and what is derived from them.
pub struct Ctx<'a> {
    pub params: &'a SimParams,
    pub algorithm: Algorithm,
    pub field: Option<&'a ObstacleField>,
    pub masses: Vec<f64>,
    pub dof: f64,
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
    cells: CellScratch<P::Force>,
    cells_range: f64,
    nl: NeighborList,
    nl_grid: Option<CellGrid>,
    nl_range: f64,
    nl_valid: bool,
    /// The valid list is the cluster list (else the per-atom list).
    nl_clusters: bool,
    clusters: ClusterList,
    cluster_bufs: Vec<Vec<Block>>,
    bufs: Vec<Vec<[P::Force; 4]>>,
    /// `pos_f` matches `pos` (set by the drift, cleared once forces use it).
    pos_f_fresh: bool,
    /// Largest squared displacement since the list was built, measured by the drift.
    disp_since_build: Option<f64>,
}

/// Reorders `v` so that the new `v[k]` is the old `v[order[k]]`, gathering through
/// `scratch` (the force array, dead while the list is rebuilt: no allocation, no extra
/// memory). When an element is wider than the scratch holds per atom, it moves in parts.
fn permute<T: bytemuck::Pod + Send + Sync>(v: &mut [T], order: &[u32], scratch: &mut [u8]) {
    let n = v.len();
    let size = std::mem::size_of::<T>();
    let room = scratch.len().checked_div(n).map_or(size, |r| r.min(size));
    assert!(room > 0, "permutation scratch too small");
    if room == size {
        // Whole elements fit: a typed gather (when the scratch is aligned for T).
        if let Ok(tmp) = bytemuck::try_cast_slice_mut::<u8, T>(&mut scratch[..std::mem::size_of_val(v)]) {
            let src = &*v;
            tmp.par_iter_mut().zip(order.par_iter()).with_min_len(4096).for_each(|(d, &i)| *d = src[i as usize]);
            v.copy_from_slice(tmp);
            return;
        }
    }
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(v);
    let mut offset = 0;
    while offset < size {
        let w = room.min(size - offset);
        let src = &*bytes;
        scratch[..n * w].par_chunks_mut(w).zip(order.par_iter()).with_min_len(4096).for_each(|(d, &i)| {
            let from = i as usize * size + offset;
            d.copy_from_slice(&src[from..from + w]);
        });
        bytes.par_chunks_mut(size).zip(scratch[..n * w].par_chunks(w)).with_min_len(4096).for_each(|(e, d)| {
            e[offset..offset + w].copy_from_slice(d);
        });
        offset += w;
    }
}

/// The positions the force loops read: `pos` itself when state and force precision agree,
/// else the force-precision copy.
fn force_positions<'a, S: 'static, F: 'static>(pos: &'a [[S; 4]], pos_f: &'a [[F; 4]]) -> &'a [[F; 4]] {
    super::simd::cast_slice::<[S; 4], [F; 4]>(pos).unwrap_or(pos_f)
}

/// Atoms per parallel work item of the drift.
const DRIFT_CHUNK: usize = 2048;

/// dt / 2m per species in the state precision: the velocity change per unit force of a half
/// kick.
fn half_kicks<S: Real>(dt: f64, masses: &[f64]) -> Vec<S> {
    masses.iter().map(|m| S::of(0.5 * dt / m)).collect()
}

/// What the drift needs, precomputed once per step in the state precision: the half kick
/// per species and the box (bounds for wrapping and the escape test, the minimum image for
/// the skin test).
struct Drift<S> {
    dt: S,
    dtfm: Vec<S>,
    periodic: [bool; 3],
    lo: [S; 3],
    hi: [S; 3],
    len: [S; 3],
    /// Walled axes: an atom beyond these has escaped.
    lo_escape: [f64; 3],
    hi_escape: [f64; 3],
    img: MinImage<f64>,
}

impl<S: Real> Drift<S> {
    fn new(b: &SimBox, dt: f64, masses: &[f64]) -> Self {
        let len = b.length();
        Drift {
            dt: S::of(dt),
            dtfm: half_kicks(dt, masses),
            periodic: b.periodic,
            lo: b.lo.map(S::of),
            hi: b.hi.map(S::of),
            len: len.map(S::of),
            lo_escape: b.lo.map(|x| x - ESCAPE_MARGIN),
            hi_escape: b.hi.map(|x| x + ESCAPE_MARGIN),
            img: MinImage::new(b),
        }
    }
}

/// Half kick and drift of a run of atoms (see [`CpuSim::kick_drift`]); `at_build` is their
/// positions at the last list build, or empty when not tracked. Returns the largest squared
/// move this step (infinite for NaN, `f64::MAX` for an escaped atom) and the largest squared
/// distance from `at_build`.
#[inline(always)]
fn drift_body<S: Real, F: Real>(
    d: &Drift<S>,
    pos: &mut [[S; 4]],
    vel: &mut [[S; 3]],
    force: &[[F; 4]],
    types: &[u32],
    at_build: &[[f32; 3]],
) -> (f64, f64) {
    let (mut moved_max, mut since_max) = (0.0f64, if at_build.is_empty() { f64::INFINITY } else { 0.0 });
    for (i, (x, v)) in pos.iter_mut().zip(vel.iter_mut()).enumerate() {
        let dtfm = d.dtfm[types[i] as usize];
        let mut moved = S::zero();
        let mut escaped = false;
        for k in 0..3 {
            v[k] += dtfm * S::of(force[i][k].f64());
            let dx = d.dt * v[k];
            let xk = x[k] + dx;
            moved += dx * dx;
            x[k] = if !d.periodic[k] {
                let w = xk.f64();
                escaped |= w < d.lo_escape[k] || w > d.hi_escape[k];
                xk
            } else if xk < d.lo[k] {
                xk + d.len[k]
            } else if xk >= d.hi[k] {
                xk - d.len[k]
            } else {
                xk
            };
        }
        if let Some(q) = at_build.get(i) {
            let dk = d.img.apply(std::array::from_fn(|k| x[k].f64() - q[k] as f64));
            since_max = since_max.max(dk[0] * dk[0] + dk[1] * dk[1] + dk[2] * dk[2]);
        }
        let m = moved.f64();
        // f64::MAX marks an atom that left a closed tank (see `blow_up`).
        let m = if m.is_nan() {
            f64::INFINITY
        } else if escaped {
            m.max(f64::MAX)
        } else {
            m
        };
        moved_max = moved_max.max(m);
    }
    (moved_max, since_max)
}

/// The velocity half kick `v += dt/2m f` of a run of atoms (`dtfm` per species).
#[inline(always)]
fn kick_body<S: Real, F: Real>(vel: &mut [[S; 3]], force: &[[F; 4]], types: &[u32], dtfm: &[S]) {
    for ((v, f), &t) in vel.iter_mut().zip(force).zip(types) {
        let dtfm = dtfm[t as usize];
        for d in 0..3 {
            v[d] += dtfm * S::of(f[d].f64());
        }
    }
}

multiversion!(fn kick_rows<S: Real, F: Real;>(vel: &mut [[S; 3]], force: &[[F; 4]], types: &[u32], dtfm: &[S]) = kick_body);

multiversion!(fn drift_rows<S: Real, F: Real;>(
    d: &Drift<S>, pos: &mut [[S; 4]], vel: &mut [[S; 3]], force: &[[F; 4]], types: &[u32], at_build: &[[f32; 3]]
) -> (f64, f64) = drift_body);

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
            ids: (0..n as u32).collect(),
            step: s.step,
            time: s.time,
            piston: s.piston,
            piston_target: None,
            piston_force: 0.0,
            force: vec![[P::Force::zero(); 4]; n],
            pos_f: Vec::new(),
            forces_valid: false,
            cells: CellScratch::default(),
            cells_range: 0.0,
            nl: NeighborList::default(),
            nl_grid: None,
            nl_range: 0.0,
            nl_valid: false,
            nl_clusters: false,
            clusters: ClusterList::default(),
            cluster_bufs: Vec::new(),
            bufs: Vec::new(),
            pos_f_fresh: false,
            disp_since_build: None,
        }
    }

    pub fn n(&self) -> usize {
        self.pos.len()
    }

    /// Forces must be recomputed (parameters, obstacles or algorithm changed).
    pub fn invalidate(&mut self) {
        self.forces_valid = false;
        self.nl_valid = false;
        self.pos_f_fresh = false;
    }

    pub fn snapshot(&self) -> Snapshot {
        let n = self.n();
        let mut atoms = AtomState { positions: vec![[0.0; 3]; n], velocities: vec![[0.0; 3]; n], types: vec![0; n] };
        for s in 0..n {
            let i = self.ids[s] as usize;
            let p = self.pos[s];
            atoms.positions[i] = [p[0].f64(), p[1].f64(), p[2].f64()];
            atoms.velocities[i] = self.vel[s].map(|x| x.f64());
            atoms.types[i] = self.types[s];
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

    /// Largest squared displacement since the neighbour list was built.
    fn max_disp_sq_since_build(&self) -> f64 {
        let b = &self.sim_box;
        self.pos
            .par_iter()
            .zip(self.nl.pos_at_build.par_iter())
            .with_min_len(4096)
            .map(|(p, q)| {
                let d = b.min_image([p[0].f64(), p[1].f64(), p[2].f64()], q.map(f64::from));
                d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
            })
            .reduce(|| 0.0, f64::max)
    }

    fn rebuild_neighbors(&mut self, params: &SimParams) {
        let range = params.list_range();
        if self.nl_grid.is_none() || (!self.nl_valid && (self.nl_range != range || self.nl.builds == 0)) {
            self.nl_grid = CellGrid::finest(&self.sim_box, range);
            self.nl_range = range;
        }
        if let Some(g) = self.nl_grid.as_mut() {
            let pf = force_positions(&self.pos, &self.pos_f);
            g.bin_by(pf.len(), |i| [pf[i][0].f64(), pf[i][1].f64(), pf[i][2].f64()]);
            // Forces are recomputed right after a rebuild: their array is free scratch.
            let (order, scratch) = (&g.order, bytemuck::cast_slice_mut::<_, u8>(&mut self.force[..]));
            permute(&mut self.pos, order, scratch);
            permute(&mut self.vel, order, scratch);
            permute(&mut self.types, order, scratch);
            permute(&mut self.ids, order, scratch);
            self.sync_pos_f();
        }
        let img = MinImage::new(&self.sim_box);
        // The force array is still free scratch.
        let scratch = self.force.as_flattened_mut();
        self.nl.build(force_positions(&self.pos, &self.pos_f), self.nl_grid.as_ref(), range, &img, scratch);
        self.nl_valid = true;
    }

    /// Sorts the atoms into clusters and builds the cluster-pair list (f32 forces only).
    fn rebuild_clusters(&mut self, range: f64) {
        let pf = force_positions(&self.pos, &self.pos_f);
        let Some(p32) = cast_slice::<_, [f32; 4]>(pf) else { return };
        let order = self.clusters.sort(p32, &self.sim_box);
        // Forces are recomputed right after a rebuild: their array is free scratch.
        let scratch = bytemuck::cast_slice_mut::<_, u8>(&mut self.force[..]);
        permute(&mut self.pos, order, scratch);
        permute(&mut self.vel, order, scratch);
        permute(&mut self.types, order, scratch);
        permute(&mut self.ids, order, scratch);
        self.sync_pos_f();
        let pf = force_positions(&self.pos, &self.pos_f);
        if let Some(p32) = cast_slice::<_, [f32; 4]>(pf) {
            self.clusters.build(p32, &self.sim_box, range);
        }
        self.nl.record_build(pf);
        self.nl_valid = true;
    }

    /// Computes forces at the current positions; with `EV`, also energies and virials.
    pub fn compute_forces<const EV: bool>(&mut self, ctx: &Ctx) -> Sums {
        if !self.pos_f_fresh {
            self.sync_pos_f();
            self.disp_since_build = None;
        }
        self.pos_f_fresh = false;
        let p = ctx.params;
        let sums = if p.species.len() == 1 {
            let s = &p.species[0];
            let c = Uniform(LjPair::<P::Force>::new(s.epsilon, s.sigma, p.cutoff, p.shift));
            self.pair_forces::<_, EV>(ctx, &c)
        } else {
            let c = Table::<P::Force>::from_params(p);
            self.pair_forces::<_, EV>(ctx, &c)
        };
        let ext = External::<P::Force>::new(&self.sim_box, p, ctx.field, self.piston.map(|s| s.height));
        let (e, top): (EnergyVirial<P::Accum>, f64) =
            ext.apply(&self.pos, &self.types, &self.ids, &ctx.masses, &mut self.force);
        self.piston_force = top;
        self.forces_valid = true;
        (sums, EnergyVirial { energy: e.energy.f64(), virial: e.virial.f64() })
    }

    fn pair_forces<C: PairCoeffs<P::Force>, const EV: bool>(&mut self, ctx: &Ctx, c: &C) -> EnergyVirial<f64> {
        type A<P> = <P as PrecisionMode>::Accum;
        let img = MinImage::<P::Force>::new(&self.sim_box);
        let mut algorithm = ctx.algorithm;
        if algorithm == Algorithm::Cells {
            let range = ctx.params.cutoff;
            if self.cells.grid.is_none() || self.cells_range != range {
                self.cells.grid = CellGrid::finest(&self.sim_box, range);
                self.cells_range = range;
            }
            if self.cells.grid.is_none() {
                algorithm = Algorithm::AllPairsTiled;
            }
        }
        if algorithm == Algorithm::Neighbors {
            let lj32 = cluster_coeffs(c, &self.sim_box, ctx.params.list_range());
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
                let (energy, virial) = self.clusters.forces::<EV>(&lj, &mut self.cluster_bufs, f32s);
                return EnergyVirial { energy, virial };
            }
        }
        let pf = force_positions(&self.pos, &self.pos_f);
        let ev: EnergyVirial<A<P>> = match algorithm {
            Algorithm::AllPairsGlobal => forces::all_pairs::<_, _, C, EV>(pf, None, c, &img, &mut self.force),
            Algorithm::Cells => forces::cell_list::<_, _, C, EV>(pf, &mut self.cells, c, &img, &mut self.force),
            Algorithm::Neighbors => {
                forces::neighbor_list::<_, _, C, EV>(pf, &self.nl, &mut self.bufs, c, &img, &mut self.force)
            }
            Algorithm::AllPairsTiled | Algorithm::Auto => {
                forces::all_pairs::<_, _, C, EV>(pf, Some(TILE), c, &img, &mut self.force)
            }
        };
        EnergyVirial { energy: ev.energy.f64(), virial: ev.virial.f64() }
    }

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
    fn piston_kick(&mut self, params: &SimParams) {
        let Some(s) = self.piston.as_mut() else { return };
        match (self.piston_target, params.piston.as_ref()) {
            (Some(target), _) => s.velocity = s.drag_velocity(target),
            (None, Some(p)) => s.half_kick(p, &self.sim_box, self.piston_force, params.dt),
            (None, None) => {}
        }
    }

    fn piston_drift(&mut self, dt: f64) {
        if let Some(s) = self.piston.as_mut() {
            s.drift(dt, &self.sim_box);
        }
    }

    /// Half kick and drift; refreshes the force-precision positions and measures how far
    /// atoms have moved since the neighbour list was built. Returns the largest squared
    /// distance moved this step.
    fn kick_drift(&mut self, dt: f64, masses: &[f64]) -> f64 {
        let n = self.pos.len();
        let track = self.nl_valid && self.nl.pos_at_build.len() == n;
        let at_build: &[[f32; 3]] = if track { &self.nl.pos_at_build } else { &[] };
        let drift = Drift::<P::State>::new(&self.sim_box, dt, masses);
        let (force, types) = (&self.force, &self.types);
        let (moved, since_build) = self
            .pos
            .par_chunks_mut(DRIFT_CHUNK)
            .zip(self.vel.par_chunks_mut(DRIFT_CHUNK))
            .enumerate()
            .map(|(c, (x, v))| {
                let first = c * DRIFT_CHUNK;
                let last = first + x.len();
                let built = at_build.get(first..last).unwrap_or(&[]);
                drift_rows(&drift, x, v, &force[first..last], &types[first..last], built)
            })
            .reduce(|| (0.0, 0.0), |a, b| (a.0.max(b.0), a.1.max(b.1)));
        self.sync_pos_f();
        self.pos_f_fresh = true;
        self.disp_since_build = if track && n > 0 { Some(since_build) } else { None };
        moved
    }

    /// Second half kick, with the Langevin velocity update fused in; returns sum m v^2 when
    /// the thermostat needs it (Berendsen, CSVR), else 0.
    fn kick(&mut self, ctx: &Ctx, step: u64) -> f64 {
        let dt = ctx.params.dt;
        let masses = &ctx.masses;
        let dtfm: Vec<P::State> = half_kicks(dt, masses);
        let (force, types, ids) = (&self.force, &self.types, &self.ids);
        let langevin = match ctx.params.thermostat {
            Thermostat::Langevin { damp } => {
                let c1 = (-dt / damp).exp();
                Some((c1, (1.0 - c1 * c1).sqrt(), ctx.params.temperature, ctx.params.seed))
            }
            _ => None,
        };
        let need_ke = matches!(ctx.params.thermostat, Thermostat::Berendsen { .. } | Thermostat::Csvr { .. });
        self.vel
            .par_chunks_mut(REDUCE_CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let first = c * REDUCE_CHUNK;
                let last = first + chunk.len();
                kick_rows(chunk, &force[first..last], &types[first..last], &dtfm);
                let mut twice_ke = 0.0;
                for (k, v) in chunk.iter_mut().enumerate() {
                    let i = first + k;
                    let m = masses[types[i] as usize];
                    if let Some((c1, c2, t, seed)) = langevin {
                        let xi = normal4(seed, Stream::Langevin, ids[i], step);
                        let sd = c2 * (t / m).sqrt();
                        for d in 0..3 {
                            v[d] = P::State::of(c1 * v[d].f64() + sd * xi[d]);
                        }
                    } else if !need_ke {
                        break;
                    }
                    twice_ke += m * (v[0].f64() * v[0].f64() + v[1].f64() * v[1].f64() + v[2].f64() * v[2].f64());
                }
                if need_ke { twice_ke } else { 0.0 }
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum()
    }

    fn scale_velocities(&mut self, lambda: f64) {
        let l = P::State::of(lambda);
        self.vel.par_iter_mut().with_min_len(4096).for_each(|v| {
            for x in v.iter_mut() {
                *x *= l;
            }
        });
    }

    /// Velocity rescaling of Berendsen or Bussi (CSVR) after the step, from sum m v^2.
    fn thermostat(&mut self, ctx: &Ctx, twice_ke: f64, step: u64) {
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
    fn kinetic(&self, masses: &[f64]) -> (f64, [f64; 3]) {
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

    /// Telemetry from sums computed at the current positions.
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
        }
    }

    /// Telemetry of the current state (forces recomputed with energies; the state is unchanged).
    pub fn measure(&mut self, ctx: &Ctx) -> Telemetry {
        self.sync_piston(ctx.params);
        let sums = self.compute_forces::<true>(ctx);
        self.telemetry(ctx, sums)
    }

    /// Forces at the current positions in canonical order.
    pub fn forces(&mut self, ctx: &Ctx) -> Vec<[f64; 3]> {
        self.sync_piston(ctx.params);
        self.compute_forces::<false>(ctx);
        let mut out = vec![[0.0; 3]; self.n()];
        for (s, f) in self.force.iter().enumerate() {
            out[self.ids[s] as usize] = [f[0].f64(), f[1].f64(), f[2].f64()];
        }
        out
    }

    /// Advances `steps` steps, pushing telemetry at every step divisible by `telemetry_every`.
    pub fn advance(&mut self, steps: u64, ctx: &Ctx, out: &mut Vec<Telemetry>) -> Result<(), SimError> {
        if self.n() == 0 {
            self.step += steps;
            self.time += steps as f64 * ctx.params.dt;
            return Ok(());
        }
        self.sync_piston(ctx.params);
        if !self.forces_valid {
            self.compute_forces::<false>(ctx);
        }
        let every = ctx.params.telemetry_every.max(1);
        let limit = RUNAWAY_STEP * RUNAWAY_STEP;
        for _ in 0..steps {
            let next = self.step + 1;
            let moved = self.kick_drift(ctx.params.dt, &ctx.masses);
            self.piston_kick(ctx.params);
            self.piston_drift(ctx.params.dt);
            if moved > limit {
                self.forces_valid = false;
                return Err(blow_up(next, moved));
            }
            let sums = if next.is_multiple_of(every) {
                Some(self.compute_forces::<true>(ctx))
            } else {
                self.compute_forces::<false>(ctx);
                None
            };
            let twice_ke = self.kick(ctx, next);
            self.piston_kick(ctx.params);
            self.thermostat(ctx, twice_ke, next);
            self.step = next;
            self.time += ctx.params.dt;
            if let Some(sums) = sums {
                let t = self.telemetry(ctx, sums);
                if !(t.total_energy().is_finite() && t.pressure.is_finite()) {
                    self.forces_valid = false;
                    return Err(SimError::BlowUp {
                        step: next,
                        what: "the energy or pressure is not a finite number".into(),
                        hint: "Use a smaller time step (dt), or remove overlapping atoms.".into(),
                    });
                }
                out.push(t);
            }
        }
        Ok(())
    }
}

/// The f32 pair coefficients when the cluster-pair list serves this case: one species,
/// f32 forces, AVX-512 present, a box the clusters fit (see [`clusters::fits`]) and not
/// switched off (`ARGON_CPU_CLUSTERS=0`).
fn cluster_coeffs<F: Real, C: PairCoeffs<F>>(c: &C, b: &SimBox, range: f64) -> Option<LjPair<f32>> {
    if !clusters::enabled() || !clusters::fits(b, range) {
        return None;
    }
    c.uniform().and_then(super::simd::cast_ref::<LjPair<F>, LjPair<f32>>).copied()
}

fn blow_up(step: u64, moved_sq: f64) -> SimError {
    let what = if moved_sq == f64::MAX {
        format!("an atom left the closed tank (more than {ESCAPE_MARGIN} sigma through a wall)")
    } else if moved_sq.is_finite() {
        format!("an atom moved {:.3} sigma in one step (more than {RUNAWAY_STEP} sigma)", moved_sq.sqrt())
    } else {
        "a position or velocity became NaN or infinite".to_string()
    };
    SimError::BlowUp {
        step,
        what,
        hint: "Use a smaller time step (dt, e.g. 0.002), a lower temperature, or remove overlapping atoms.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn permutation_in_place_gathers() {
        let order = [3u32, 0, 4, 1, 2, 5];
        let mut v = vec![10u32, 11, 12, 13, 14, 15];
        permute(&mut v, &order, &mut [0u8; 24]);
        assert_eq!(v, vec![13, 10, 14, 11, 12, 15]);
        // Elements wider than the scratch per atom move in parts.
        let mut w: Vec<[f64; 3]> = (0..6).map(|i| [i as f64, 10.0 + i as f64, 20.0 + i as f64]).collect();
        permute(&mut w, &order, &mut [0u8; 6 * 16]);
        assert_eq!(w[0], [3.0, 13.0, 23.0]);
        assert_eq!(w[4], [2.0, 12.0, 22.0]);
    }
}
