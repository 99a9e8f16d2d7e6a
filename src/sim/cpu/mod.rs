//! The multithreaded CPU backend (rayon), generic over single / mixed / double precision,
//! with all four force algorithms. Implements [`Backend`] for machines without a usable GPU
//! and serves as the reference the CUDA backend is checked against.
//!
//! Owns the CPU-side state; it never touches UI or rendering code.

#[cfg(target_arch = "x86_64")]
mod avx512;
mod cells;
#[cfg(target_arch = "x86_64")]
mod cluster_avx2;
#[cfg(target_arch = "x86_64")]
mod cluster_kernel;
mod clusters;
mod external;
mod forces;
mod kernels;
mod neighbors;
mod observe;
pub use observe::publish as publish_positions;
pub mod simd;
mod state;
mod stress;
mod transport;

use std::sync::Arc;

use self::state::{CpuSim, Ctx};
use super::{
    AtomSelection, AtomState, Backend, BackendInfo, CaughtAtoms, ColourScalar, PositionTarget, SimError, Snapshot,
    Telemetry, check_atoms, check_tunnel,
};
use crate::analysis::{self, Histogram, RdfCounts, RdfRegion};
use crate::flow::{FieldSpec, Fields};
use crate::physics::dye::DyeRake;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::SimParams;
use crate::physics::real::Precision;
use crate::physics::real::{Double, Mixed, Real, Single};
use crate::physics::sim_box::SimBox;
use crate::sim::fields::FieldSampler;
use crate::transport::{TransportSamples, TransportSpec};

use self::transport::TransportSampler;

enum Engine {
    Single(CpuSim<Single>),
    Mixed(CpuSim<Mixed>),
    Double(CpuSim<Double>),
}

macro_rules! with_sim {
    ($engine:expr, $s:ident => $body:expr) => {
        match $engine {
            Engine::Single($s) => $body,
            Engine::Mixed($s) => $body,
            Engine::Double($s) => $body,
        }
    };
}

impl Engine {
    fn new(precision: Precision, s: &Snapshot) -> Engine {
        match precision {
            Precision::Single => Engine::Single(CpuSim::from_snapshot(s)),
            Precision::Mixed => Engine::Mixed(CpuSim::from_snapshot(s)),
            Precision::Double => Engine::Double(CpuSim::from_snapshot(s)),
        }
    }
}

/// The CPU backend.
pub struct CpuBackend {
    params: SimParams,
    engine: Engine,
    field: Option<Arc<ObstacleField>>,
    telemetry: Vec<Telemetry>,
    /// The hybrid Monte Carlo chain (idle in molecular dynamics).
    hmc: crate::sim::hmc::HmcState,
    /// Rollback checkpoints, oldest first.
    checkpoints: std::collections::VecDeque<Snapshot>,
    /// Flow-field sampling, while on.
    fields: Option<FieldSampler>,
    /// Transport sampling (`transport.rs`), while on.
    transport: Option<TransportSampler>,
    /// Dye rakes applied every step (`state/dye.rs`).
    rakes: Vec<DyeRake>,
}

fn make_ctx<'a>(
    params: &'a SimParams,
    field: Option<&'a ObstacleField>,
    rakes: &'a [DyeRake],
    engine: &Engine,
) -> Ctx<'a> {
    let (n, b) = with_sim!(engine, s => (s.n(), s.sim_box));
    Ctx {
        params,
        algorithm: params.algorithm.resolve(n, &b, params.list_range(), params.max_cutoff()),
        field,
        masses: params.species.iter().map(|s| s.mass).collect(),
        dof: analysis::degrees_of_freedom(n, &b, params, field.is_some()),
        rakes,
    }
}

/// Bytes the CPU backend needs per atom, at most: state, forces and list positions in f64,
/// ids and types, a half neighbour list at the densest allowed fluid (1.3 / sigma^3) within
/// `list_range`, the rollback checkpoints and one transient copy during edits.
pub fn bytes_per_atom(list_range: f64) -> usize {
    let half_list = 4.0 / 3.0 * std::f64::consts::PI * list_range.powi(3) * 1.3 / 2.0 + 8.0;
    let snapshot = 7 * 8;
    8 * (4 + 3 + 4 + 3) + 2 * 4 + (4.0 * half_list) as usize + (crate::sim::CHECKPOINTS + 1) * snapshot
}

/// The memory the CPU backend may use: `ARGON_CPU_MEMORY_MB` when set, else 90% of what the
/// system reports available (Linux `MemAvailable`), else unknown (no check).
pub fn memory_budget() -> Option<usize> {
    if let Some(mb) = std::env::var("ARGON_CPU_MEMORY_MB").ok().and_then(|v| v.trim().parse::<f64>().ok()) {
        return Some((mb * 1e6) as usize);
    }
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: f64 = info.lines().find(|l| l.starts_with("MemAvailable:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some((kb * 1024.0 * 0.9) as usize)
}

/// Refuses `n` atoms that would not fit in `budget` bytes, naming the largest N that would.
pub fn memory_check(n: usize, list_range: f64, budget: Option<usize>) -> Result<(), SimError> {
    let Some(budget) = budget else { return Ok(()) };
    let per = bytes_per_atom(list_range);
    let needed = n.saturating_mul(per);
    if needed > budget {
        return Err(SimError::OutOfMemory {
            what: format!("{n} atoms on the CPU backend"),
            needed_mb: needed as f64 / 1e6,
            available_mb: budget as f64 / 1e6,
            max_atoms: budget / per,
        });
    }
    Ok(())
}

impl CpuBackend {
    /// A backend for `atoms` in `sim_box` with `params`, optionally with obstacles.
    pub fn new(
        sim_box: SimBox,
        params: SimParams,
        atoms: &AtomState,
        field: Option<Arc<ObstacleField>>,
    ) -> Result<CpuBackend, SimError> {
        params.validate(&sim_box)?;
        check_atoms(atoms, &params)?;
        check_tunnel(&params, &sim_box, &atoms.types)?;
        memory_check(atoms.len(), params.list_range(), memory_budget())?;
        let snap = Snapshot { sim_box, atoms: atoms.clone(), step: 0, time: 0.0, piston: None };
        let mut b = CpuBackend {
            engine: Engine::new(params.precision, &snap),
            params,
            field,
            telemetry: Vec::new(),
            hmc: Default::default(),
            checkpoints: Default::default(),
            fields: None,
            transport: None,
            rakes: Vec::new(),
        };
        with_sim!(&mut b.engine, s => s.sync_piston(&b.params));
        Ok(b)
    }

    /// The algorithm that actually runs (Auto resolved).
    pub fn resolved_algorithm(&self) -> crate::physics::params::Algorithm {
        self.params.algorithm.resolve(
            self.n_atoms(),
            &self.sim_box(),
            self.params.list_range(),
            self.params.max_cutoff(),
        )
    }

    /// Raw g(r) counts (see [`RdfCounts`]) by the chosen pair search, for comparing the cell
    /// grid with all pairs; [`Backend::rdf`] normalises the cell grid's.
    pub fn pair_counts(
        &self,
        bins: usize,
        r_max: f64,
        region: Option<&RdfRegion>,
        search: super::PairSearch,
    ) -> Result<RdfCounts, SimError> {
        observe::pair_counts(&self.state_copy(), bins, r_max, region, search)
    }

    /// The current state, without disturbing the run (for analysis and edits).
    fn state_copy(&self) -> Snapshot {
        with_sim!(&self.engine, s => s.snapshot())
    }

    /// Starts any transport measurement afresh at the current state (every origin and record
    /// dropped, per the contract): after atoms were added or removed, a restore, a rollback,
    /// or a change of the time step or species. A spec the new time step refuses stops it.
    fn restart_transport(&mut self) {
        let Some(t) = self.transport.take() else { return };
        if t.spec().validate(self.params.dt).is_err() {
            return;
        }
        let n_species = self.params.species.len();
        self.transport = Some(with_sim!(&self.engine, s => t.restart(s, n_species)));
    }

    /// Rebuilds the engine from a snapshot, keeping the precision and any drag in progress.
    fn reload(&mut self, snap: &Snapshot) {
        let target = with_sim!(&self.engine, s => s.piston_target);
        self.engine = Engine::new(self.params.precision, snap);
        with_sim!(&mut self.engine, s => {
            s.piston_target = target;
            s.sync_piston(&self.params)
        });
    }
}

impl Backend for CpuBackend {
    fn pair_search(&self) -> &'static str {
        let algorithm = self.resolved_algorithm();
        with_sim!(&self.engine, s => s.pair_search(algorithm))
    }

    fn info(&self) -> BackendInfo {
        BackendInfo {
            kind: "cpu",
            device: format!("CPU, {} threads, {}", rayon::current_num_threads(), simd::level().name()),
            precisions: BackendInfo::all_precisions(),
        }
    }

    fn n_atoms(&self) -> usize {
        with_sim!(&self.engine, s => s.n())
    }

    fn step(&self) -> u64 {
        with_sim!(&self.engine, s => s.step)
    }

    fn sim_box(&self) -> SimBox {
        with_sim!(&self.engine, s => s.sim_box)
    }

    fn params(&self) -> &SimParams {
        &self.params
    }

    fn set_params(&mut self, params: SimParams) -> Result<(), SimError> {
        self.hmc.forget();
        params.validate(&self.sim_box())?;
        if params.species.len() < self.params.species.len() {
            let snap = self.state_copy();
            check_atoms(&snap.atoms, &params)?;
        }
        with_sim!(&self.engine, s => check_tunnel(&params, &s.sim_box, &s.types))?;
        let precision_changed = params.precision != self.params.precision;
        let restart = params.dt != self.params.dt || params.species.len() != self.params.species.len();
        self.params = params;
        if precision_changed {
            let snap = with_sim!(&self.engine, s => s.snapshot());
            self.reload(&snap);
        } else {
            with_sim!(&mut self.engine, s => s.invalidate());
        }
        with_sim!(&mut self.engine, s => s.sync_piston(&self.params));
        if restart {
            self.restart_transport();
        }
        Ok(())
    }

    fn advance_md(&mut self, steps: u64) -> Result<(), SimError> {
        let ctx = make_ctx(&self.params, self.field.as_deref(), &self.rakes, &self.engine);
        let engine = &mut self.engine;
        // The step loop runs on a pool thread, so that its parallel loops start without
        // handing work over from this thread and waking it again for each one.
        let telemetry = &mut self.telemetry;
        let fields = &mut self.fields;
        let transport = &mut self.transport;
        rayon::scope(|_| {
            super::timed_advance(steps, telemetry, |out| {
                let stress_every = transport.as_ref().map_or(0, |t| t.spec().stress_every);
                with_sim!(&mut *engine, s => s.stress_every = stress_every);
                if fields.is_none() && transport.is_none() {
                    return with_sim!(engine, s => s.advance(steps, &ctx, out));
                }
                // Advance to each sampling step (flow fields, transport), sample there, go on.
                let mut left = steps;
                while left > 0 {
                    let now = with_sim!(&*engine, s => s.step);
                    let to_fields = fields.as_ref().map_or(u64::MAX, |f| f.steps_to_next(now));
                    let to_transport = transport.as_ref().map_or(u64::MAX, |t| t.steps_to_next(now));
                    let chunk = to_fields.min(to_transport).min(left);
                    with_sim!(&mut *engine, s => s.advance(chunk, &ctx, out))?;
                    left -= chunk;
                    with_sim!(&*engine, s => {
                        if let Some(f) = fields.as_mut()
                            && f.due(s.step)
                        {
                            let masses = &ctx.masses;
                            f.sample_cpu(s.time, s.n(), &s.dye, |i| {
                                let (p, v) = (s.pos[i], s.vel[i]);
                                let m = masses[s.types[i] as usize];
                                ([p[0].f64(), p[1].f64(), p[2].f64()], [v[0].f64(), v[1].f64(), v[2].f64()], m)
                            });
                        }
                        if let Some(t) = transport.as_mut() {
                            t.sample(s, &ctx);
                        }
                    });
                }
                Ok(())
            })
        })
    }

    fn set_dye_rakes(&mut self, rakes: &[DyeRake]) -> Result<(), SimError> {
        if !rakes.is_empty() {
            // The dye column exists from now on, so snapshots carry it even before a crossing.
            with_sim!(&mut self.engine, s => {
                let n = s.n();
                s.dye.resize(n, 0)
            });
        }
        self.rakes = rakes.to_vec();
        Ok(())
    }

    fn set_fields(&mut self, spec: Option<FieldSpec>) -> Result<(), SimError> {
        let b = with_sim!(&self.engine, s => s.sim_box);
        self.fields = spec.map(|spec| FieldSampler::new(spec, &b, self.params.dt)).transpose()?;
        Ok(())
    }

    fn take_fields(&mut self, close: bool) -> Result<Vec<Fields>, SimError> {
        let time = with_sim!(&self.engine, s => s.time);
        let Some(f) = self.fields.as_mut() else { return Ok(Vec::new()) };
        if close {
            f.close(time);
        }
        f.take()
    }

    fn set_transport(&mut self, spec: Option<TransportSpec>) -> Result<(), SimError> {
        self.transport = None;
        let Some(spec) = spec else { return Ok(()) };
        spec.validate(self.params.dt).map_err(SimError::Invalid)?;
        let n_species = self.params.species.len();
        self.transport = Some(with_sim!(&self.engine, s => TransportSampler::new(spec, s, n_species)));
        Ok(())
    }

    fn take_transport(&mut self) -> Result<TransportSamples, SimError> {
        Ok(self.transport.as_mut().map_or_else(TransportSamples::default, TransportSampler::take))
    }

    fn hmc_parts(&mut self) -> (&mut crate::sim::hmc::HmcState, &mut Vec<Telemetry>) {
        (&mut self.hmc, &mut self.telemetry)
    }

    fn drain_telemetry(&mut self) -> Vec<Telemetry> {
        std::mem::take(&mut self.telemetry)
    }

    fn measure(&mut self) -> Result<Telemetry, SimError> {
        let ctx = make_ctx(&self.params, self.field.as_deref(), &self.rakes, &self.engine);
        Ok(with_sim!(&mut self.engine, s => s.measure(&ctx)))
    }

    fn forces(&mut self) -> Result<Vec<[f64; 3]>, SimError> {
        let ctx = make_ctx(&self.params, self.field.as_deref(), &self.rakes, &self.engine);
        Ok(with_sim!(&mut self.engine, s => s.forces(&ctx)))
    }

    fn set_obstacles(&mut self, field: Option<Arc<ObstacleField>>, caught: CaughtAtoms) -> Result<usize, SimError> {
        self.hmc.forget();
        let mut snap = self.state_copy();
        let n_caught = match field.as_deref() {
            Some(f) => crate::sim::edit::resolve_caught(&mut snap.atoms, f, &self.params, caught),
            None => 0,
        };
        self.field = field;
        self.reload(&snap);
        if n_caught > 0 {
            self.restart_transport();
        }
        Ok(n_caught)
    }

    fn add_atoms(&mut self, atoms: &AtomState) -> Result<(), SimError> {
        self.hmc.forget();
        check_atoms(atoms, &self.params)?;
        memory_check(self.n_atoms() + atoms.len(), self.params.list_range(), memory_budget())?;
        let mut snap = self.state_copy();
        snap.atoms.extend(atoms);
        self.reload(&snap);
        self.restart_transport();
        Ok(())
    }

    fn remove_atoms(&mut self, which: &AtomSelection) -> Result<usize, SimError> {
        self.hmc.forget();
        let mut snap = self.state_copy();
        let removed = crate::sim::edit::remove(&mut snap.atoms, which);
        if removed > 0 {
            self.reload(&snap);
            self.restart_transport();
        }
        Ok(removed)
    }

    fn snapshot(&mut self) -> Result<Snapshot, SimError> {
        let snap = self.state_copy();
        // Continue from the snapshot itself (canonical order, fresh lists), so that a backend
        // restored from it runs bit for bit like this one.
        self.reload(&snap);
        Ok(snap)
    }

    fn restore(&mut self, snapshot: &Snapshot) -> Result<(), SimError> {
        self.hmc.forget();
        self.params.validate(&snapshot.sim_box)?;
        check_atoms(&snapshot.atoms, &self.params)?;
        check_tunnel(&self.params, &snapshot.sim_box, &snapshot.atoms.types)?;
        self.reload(snapshot);
        self.restart_transport();
        Ok(())
    }

    fn copy_state(&mut self) -> Result<Snapshot, SimError> {
        Ok(self.state_copy())
    }

    fn checkpoint(&mut self) -> Result<(), SimError> {
        let snap = self.state_copy();
        if self.checkpoints.len() >= super::CHECKPOINTS {
            self.checkpoints.pop_front();
        }
        self.checkpoints.push_back(snap);
        Ok(())
    }

    fn rollback(&mut self) -> Result<Option<u64>, SimError> {
        self.hmc.forget();
        let Some(snap) = self.checkpoints.back() else { return Ok(None) };
        // Not through `reload`: the checkpoint is not cloned. A rollback also ends any drag.
        self.engine = Engine::new(self.params.precision, snap);
        let step = snap.step;
        with_sim!(&mut self.engine, s => s.sync_piston(&self.params));
        self.restart_transport();
        Ok(Some(step))
    }

    fn rdf(&mut self, bins: usize, r_max: f64, region: Option<&RdfRegion>) -> Result<Histogram, SimError> {
        let snap = self.state_copy();
        observe::rdf(&snap, &self.params, self.field.as_deref(), bins, r_max, region)
    }

    fn speed_histogram(&mut self, bins: usize, v_max: f64) -> Result<Histogram, SimError> {
        let snap = self.state_copy();
        analysis::speed_histogram(&snap.atoms.velocities, bins, v_max).map_err(SimError::Invalid)
    }

    fn density_profile(&mut self, bins: usize) -> Result<Histogram, SimError> {
        let snap = self.state_copy();
        analysis::density_profile(&snap.atoms.positions, &snap.sim_box, bins).map_err(SimError::Invalid)
    }

    fn drag_piston(&mut self, target: Option<f64>) -> Result<(), SimError> {
        super::check_piston_drag(&self.params, target)?;
        with_sim!(&mut self.engine, s => s.piston_target = target);
        Ok(())
    }

    fn write_positions(&mut self, target: PositionTarget<'_>, colour: ColourScalar) -> Result<(), SimError> {
        let out = match target {
            PositionTarget::Host(out) => out,
            PositionTarget::Device { .. } | PositionTarget::Buffer { .. } => {
                return Err(SimError::Invalid(
                    "the CPU backend cannot write into device memory; use a host buffer".into(),
                ));
            }
        };
        let masses: Vec<f64> = self.params.species.iter().map(|s| s.mass).collect();
        with_sim!(&self.engine, s => observe::publish(
            &s.pos,
            &s.vel,
            observe::SlotTags { types: &s.types, ids: &s.ids, dye: &s.dye },
            &masses,
            colour,
            out
        ))
    }
}
