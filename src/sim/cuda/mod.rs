//! The CUDA backend: all state resident on the GPU, kernels from `kernels/*.cu` compiled at
//! run time by NVRTC (cudarc with dynamic loading, so building needs no CUDA toolkit), one
//! module per (precision, block size, species count) cached so live switches are instant
//! after their first use. Implements [`Backend`] exactly as the CPU backend does.
//!
//! Owns device memory and launches; it never touches UI or rendering code.

pub mod consts;
pub mod device;
mod engine;
mod graph;
mod launch;
pub mod source;

use std::sync::Arc;

use self::device::Device;
use self::engine::Engine;
use self::engine::fields::DeviceFields;
use self::engine::transport::{DeviceTransport, MAX_SPECIES};
use super::{
    AtomSelection, AtomState, Backend, BackendInfo, CaughtAtoms, ColourScalar, PairSearch, PositionTarget, SimError,
    Snapshot, Telemetry,
};
use crate::analysis::{self, Histogram, RdfCounts, RdfRegion};
use crate::flow::{Accumulator, FieldSpec, Fields};
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{Algorithm, SimParams};
use crate::physics::sim_box::SimBox;
use crate::sim::edit;
use crate::sim::fields::FieldSampler;
use crate::sim::{check_atoms, check_tunnel};
use crate::transport::{TransportSamples, TransportSpec};

/// The CUDA backend.
pub struct CudaBackend {
    dev: Arc<Device>,
    engine: Engine,
    params: SimParams,
    field: Option<Arc<ObstacleField>>,
    telemetry: Vec<Telemetry>,
    /// The hybrid Monte Carlo chain (idle in molecular dynamics).
    hmc: crate::sim::hmc::HmcState,
    /// Recorded after the last asynchronous publish.
    published: Option<cudarc::driver::CudaEvent>,
    /// Rollback checkpoints on the device, oldest first.
    checkpoints: std::collections::VecDeque<engine::checkpoint::DeviceCheckpoint>,
    /// For tests: `ARGON_FAULT_GPU_AT_STEP=N` makes `advance` fail as a lost GPU would once
    /// the step count reaches N.
    fault_at: Option<u64>,
    /// Steps as CUDA graphs (default; `ARGON_CUDA_GRAPHS=0` turns them off) or kernel by kernel.
    step_graphs: bool,
    /// Fused steps where they apply (default; `ARGON_FUSED_STEPS=0` turns them off).
    fused_steps: bool,
    /// Flow-field sampling while on: the windows on the host, the sums on the device.
    fields: Option<(FieldSampler, DeviceFields)>,
    /// Transport sampling while on (MSD and VACF; the records stay on the device until taken).
    transport: Option<DeviceTransport>,
    /// Dye rakes run every step (`Backend::set_dye_rakes`; kept across rebuilds).
    rakes: Vec<crate::physics::dye::DyeRake>,
}

impl CudaBackend {
    /// Starts any transport measurement afresh at the current state (every origin and record
    /// dropped), as after adding or removing atoms, a restore or a rollback.
    fn restart_transport(&mut self) -> Result<(), SimError> {
        let Some(spec) = self.transport.take().map(|t| t.spec()) else { return Ok(()) };
        self.set_transport(Some(spec))
    }
}

/// Advances `steps` steps; with flow fields on, the engine samples on the device between its
/// step launches, and a call ends where a window fills, whose sums then come back once.
fn advance_sampling_fields(
    engine: &mut Engine,
    dev: &Device,
    params: &SimParams,
    dof: f64,
    out: &mut Vec<Telemetry>,
    fields: &mut Option<(FieldSampler, DeviceFields)>,
    steps: u64,
) -> Result<(), SimError> {
    let Some((sampler, sums)) = fields.as_mut() else {
        return engine.advance(dev, steps, params, dof, out, None);
    };
    let every = sampler.spec.every;
    let mut left = steps;
    while left > 0 {
        let step0 = engine.step;
        let first = step0 + sampler.steps_to_next(step0);
        let closing = first + (sampler.per_window - sampler.taken() - 1) * every;
        let chunk = (closing - step0).min(left);
        engine.advance(dev, chunk, params, dof, out, Some((&mut *sums, every)))?;
        left -= chunk;
        let mut s = first;
        while s <= engine.step {
            let time = engine.time - (engine.step - s) as f64 * params.dt;
            if sampler.count_sample(time) {
                close_window(dev, sampler, sums, time)?;
            }
            s += every;
        }
    }
    Ok(())
}

fn colour_code(colour: ColourScalar) -> i32 {
    match colour {
        ColourScalar::Speed => 0,
        ColourScalar::KineticEnergy => 1,
        ColourScalar::Height => 2,
        ColourScalar::Species => 3,
        ColourScalar::Dye => 4,
    }
}

fn dof_of(n: usize, b: &SimBox, params: &SimParams, field: &Option<Arc<ObstacleField>>) -> f64 {
    analysis::degrees_of_freedom(n, b, params, field.is_some())
}

impl CudaBackend {
    /// Raw g(r) counts (see [`RdfCounts`]) by the chosen pair search, for comparing the cell
    /// grid with all pairs; [`Backend::rdf`] normalises the cell grid's.
    pub fn pair_counts(
        &mut self,
        bins: usize,
        r_max: f64,
        region: Option<&RdfRegion>,
        search: PairSearch,
    ) -> Result<RdfCounts, SimError> {
        let b = self.engine.sim_box;
        analysis::check_rdf_request(&b, bins, r_max).map_err(SimError::Invalid)?;
        if let Some(r) = region {
            analysis::rdf::check_rdf_region(&b, r).map_err(SimError::Invalid)?;
        }
        self.engine.rdf_counts(&self.dev, bins, r_max, region, search)
    }

    /// Opens the CUDA device and uploads the system.
    pub fn new(
        sim_box: SimBox,
        params: SimParams,
        atoms: &AtomState,
        field: Option<Arc<ObstacleField>>,
    ) -> Result<CudaBackend, SimError> {
        params.validate(&sim_box)?;
        check_atoms(atoms, &params)?;
        check_tunnel(&params, &sim_box, &atoms.types)?;
        let dev = device::open().map_err(SimError::Device)?;
        let module = launch::module(&dev, params.precision, params.block_size, params.species.len())?;
        let snap = Snapshot { sim_box, atoms: atoms.clone(), step: 0, time: 0.0, piston: None };
        let dof = dof_of(atoms.len(), &sim_box, &params, &field);
        let mut engine = Engine::new(&dev, module, &params, &snap, field.as_deref(), dof)?;
        engine.set_dye(&dev, &[], params.tunnel.is_some())?;
        let step_graphs = std::env::var("ARGON_CUDA_GRAPHS").map(|v| v.trim() != "0").unwrap_or(true);
        engine.use_graphs = step_graphs;
        let fused_steps = std::env::var("ARGON_FUSED_STEPS").map(|v| v.trim() != "0").unwrap_or(true);
        engine.fuse_steps = fused_steps;
        if let Ok(skip) = std::env::var("ARGON_CUDA_SKIP") {
            eprintln!(
                "warning: ARGON_CUDA_SKIP={skip}: these kernels are left out of every step (measuring only; the physics is wrong)"
            );
        }
        Ok(CudaBackend {
            dev,
            engine,
            params,
            field,
            telemetry: Vec::new(),
            hmc: Default::default(),
            published: None,
            checkpoints: Default::default(),
            fault_at: std::env::var("ARGON_FAULT_GPU_AT_STEP").ok().and_then(|v| v.trim().parse().ok()),
            step_graphs,
            fused_steps,
            fields: None,
            transport: None,
            rakes: Vec::new(),
        })
    }

    /// Runs steps as CUDA graphs (`true`, the default) or launches every kernel from the host
    /// (for comparison and profiling: Nsight Compute cannot profile kernels inside graphs
    /// with conditional nodes). Both compute the same numbers.
    pub fn set_step_graphs(&mut self, on: bool) {
        self.step_graphs = on;
        self.engine.use_graphs = on;
    }

    /// Runs pairs of plain steps as fused steps, the integrator in the force kernel
    /// (`true`, the default, where they apply: neighbour lists, no telemetry, thermostat
    /// factor, sample, pressure tensor or piston between two steps) or as separate kernels.
    /// Both compute the same bits.
    pub fn set_fused_steps(&mut self, on: bool) {
        self.fused_steps = on;
        self.engine.set_fused(on);
    }

    /// Step graphs built since this backend was made (each costs milliseconds; see
    /// `graph::GraphCache`).
    pub fn graphs_built(&self) -> u64 {
        self.engine.graphs_built()
    }

    /// Steps that ran fused since this backend was made.
    pub fn fused_steps_run(&self) -> u64 {
        self.engine.fused_count
    }

    /// The algorithm that actually runs (Auto resolved, fallbacks applied).
    pub fn resolved_algorithm(&self) -> Algorithm {
        self.engine.algorithm
    }

    fn dof(&self) -> f64 {
        dof_of(self.engine.n, &self.engine.sim_box, &self.params, &self.field)
    }

    /// Replaces the engine with one built from `snap` (new precision, atoms or obstacles).
    /// On failure the current engine and state are kept.
    fn rebuild(&mut self, snap: &Snapshot) -> Result<(), SimError> {
        let p = &self.params;
        let module = launch::module(&self.dev, p.precision, p.block_size, p.species.len())?;
        let dof = dof_of(snap.atoms.len(), &snap.sim_box, p, &self.field);
        if let Some(t) = self.transport.as_mut() {
            t.drain_stress(&self.dev, &self.engine)?;
        }
        let fused_count = self.engine.fused_count;
        self.engine = Engine::new(&self.dev, module, p, snap, self.field.as_deref(), dof)?;
        self.engine.use_graphs = self.step_graphs;
        self.engine.fuse_steps = self.fused_steps;
        self.engine.fused_count = fused_count;
        self.engine.set_dye(&self.dev, &self.rakes, p.tunnel.is_some())?;
        // A measurement of the pressure tensor goes on in the new engine (the caller restarts
        // the whole measurement where the atoms changed).
        if let Some(t) = self.transport.as_ref() {
            self.engine.set_stress(&self.dev, t.spec().stress_every)?;
            self.engine.set_transport_nodes(Some(t.nodes(&self.dev)));
        }
        Ok(())
    }
}

/// Ends the open flow-field window at `time`: its sums come back from the device once.
/// Closes the open window at `time`: its sums start on their way to the host behind the work
/// already queued (and are zeroed on the device for the next window), and are finished on a
/// thread of their own, so the steps after them are launched at once.
fn close_window(dev: &Device, sampler: &mut FieldSampler, sums: &mut DeviceFields, time: f64) -> Result<(), SimError> {
    if sampler.taken() == 0 {
        return Ok(());
    }
    let copy = sums.take_async(dev)?;
    let (grid, taken) = (sampler.grid.clone(), sampler.taken());
    sampler.close_later(time, move || {
        let (data, tagged) = copy.wait()?;
        Accumulator::from_raw_dye(&grid, data, tagged, taken).map_err(|e| e.to_string())
    });
    Ok(())
}

impl Backend for CudaBackend {
    fn step_grain(&self) -> u64 {
        engine::step_grain(self.fields.as_ref().map_or(0, |(s, _)| s.spec.every))
    }

    fn pair_search(&self) -> &'static str {
        match self.engine.algorithm {
            Algorithm::AllPairsGlobal => "all pairs",
            Algorithm::Cells => "cell list",
            Algorithm::Neighbors => "neighbour list",
            _ => "all pairs (tiled)",
        }
    }

    fn info(&self) -> BackendInfo {
        let (major, minor) = self.dev.arch;
        BackendInfo {
            kind: "cuda",
            device: format!("{} (sm_{major}{minor}, device {})", self.dev.name, self.dev.ordinal),
            precisions: BackendInfo::all_precisions(),
        }
    }

    fn device_bytes(&self) -> Option<usize> {
        let checkpoints: usize = self.checkpoints.iter().map(|c| c.bytes()).sum();
        let fields = self.fields.as_ref().map_or(0, |(_, d)| d.bytes());
        let transport = self.transport.as_ref().map_or(0, |t| t.bytes());
        Some(self.engine.array_bytes() + checkpoints + fields + transport)
    }

    fn n_atoms(&self) -> usize {
        self.engine.n
    }

    fn step(&self) -> u64 {
        self.engine.step
    }

    fn sim_box(&self) -> SimBox {
        self.engine.sim_box
    }

    fn params(&self) -> &SimParams {
        &self.params
    }

    fn set_params(&mut self, params: SimParams) -> Result<(), SimError> {
        self.hmc.forget();
        params.validate(&self.engine.sim_box)?;
        if params.tunnel.is_some() {
            // The Mach number needs the atoms' mean mass: their species come from the device
            // only in a mixture.
            let b = self.engine.sim_box;
            let fluid = if params.species.len() == 1 {
                let n = self.engine.n;
                crate::physics::tunnel::MeanFluid::new(&b, n, n as f64 * params.species[0].mass)
            } else {
                params.mean_fluid(&b, &self.engine.snapshot(&self.dev)?.atoms.types)
            };
            params.validate_tunnel_speed(&fluid)?;
        }
        let old = std::mem::replace(&mut self.params, params);
        let p = &self.params;
        let result = if p.precision != old.precision || p.species.len() != old.species.len() {
            self.engine.snapshot(&self.dev).and_then(|snap| {
                check_atoms(&snap.atoms, &self.params)?;
                self.rebuild(&snap)
            })
        } else {
            let module = launch::module(&self.dev, p.precision, p.block_size, p.species.len());
            module.and_then(|m| {
                self.engine.set_module(&self.dev, m)?;
                let dof = self.dof();
                self.engine.configure(&self.dev, &self.params, self.field.as_deref(), dof)?;
                self.engine.set_dye(&self.dev, &self.rakes, self.params.tunnel.is_some())
            })
        };
        if result.is_err() {
            self.params = old;
        }
        result
    }

    fn set_dye_rakes(&mut self, rakes: &[crate::physics::dye::DyeRake]) -> Result<(), SimError> {
        self.engine.set_dye(&self.dev, rakes, self.params.tunnel.is_some())?;
        self.rakes = rakes.to_vec();
        Ok(())
    }

    fn advance_md(&mut self, steps: u64) -> Result<(), SimError> {
        if let Some(at) = self.fault_at
            && self.engine.step + steps >= at
        {
            return Err(SimError::Device(format!(
                "the GPU stopped answering (a fault injected at step {at} by ARGON_FAULT_GPU_AT_STEP)"
            )));
        }
        let dof = self.dof();
        let (engine, dev, params, fields) = (&mut self.engine, &self.dev, &self.params, &mut self.fields);
        let transport = &mut self.transport;
        super::timed_advance(steps, &mut self.telemetry, |out| {
            // Transport samples are nodes of the step graphs; with them on, calls to the
            // engine end on origin steps and where the device rings would fill
            // (`engine/transport.rs`).
            let mut left = steps;
            while left > 0 {
                let chunk = transport.as_ref().map_or(left, |t| t.steps_to_next(engine.step).min(left));
                let from = engine.step;
                advance_sampling_fields(engine, dev, params, dof, out, fields, chunk)?;
                left -= chunk;
                if let Some(t) = transport.as_mut() {
                    t.note_advanced(from, engine.step, engine.n);
                    t.drain_if_full(dev, engine)?;
                }
            }
            Ok(())
        })
    }

    fn drag_piston(&mut self, target: Option<f64>) -> Result<(), SimError> {
        super::check_piston_drag(&self.params, target)?;
        self.engine.drag_piston(&self.dev, target)
    }

    fn set_fields(&mut self, spec: Option<FieldSpec>) -> Result<(), SimError> {
        self.fields = match spec {
            None => None,
            Some(spec) => {
                let sampler = FieldSampler::new(spec, &self.engine.sim_box, self.params.dt)?;
                let sums = DeviceFields::new(&self.dev, &sampler.grid)?;
                Some((sampler, sums))
            }
        };
        Ok(())
    }

    fn take_fields(&mut self, close: bool) -> Result<Vec<Fields>, SimError> {
        let Some((sampler, sums)) = self.fields.as_mut() else { return Ok(Vec::new()) };
        if close {
            close_window(&self.dev, sampler, sums, self.engine.time)?;
        }
        sampler.take()
    }

    fn set_transport(&mut self, spec: Option<TransportSpec>) -> Result<(), SimError> {
        self.transport = None;
        self.engine.set_stress(&self.dev, 0)?;
        self.engine.set_transport_nodes(None);
        let Some(spec) = spec else { return Ok(()) };
        spec.validate(self.params.dt).map_err(SimError::Invalid)?;
        let n_species = self.params.species.len();
        if n_species > MAX_SPECIES {
            return Err(SimError::Invalid(format!(
                "the CUDA backend measures transport for up to {MAX_SPECIES} species; this system has {n_species}: \
                 measure it on the CPU backend (--backend cpu)"
            )));
        }
        self.transport = Some(self.engine.transport_start(&self.dev, spec, n_species)?);
        Ok(())
    }

    fn take_transport(&mut self) -> Result<TransportSamples, SimError> {
        match self.transport.as_mut() {
            Some(t) => t.take(&self.dev, &self.engine),
            None => Ok(TransportSamples::default()),
        }
    }

    fn hmc_parts(&mut self) -> (&mut crate::sim::hmc::HmcState, &mut Vec<Telemetry>) {
        (&mut self.hmc, &mut self.telemetry)
    }

    fn drain_telemetry(&mut self) -> Vec<Telemetry> {
        std::mem::take(&mut self.telemetry)
    }

    fn measure(&mut self) -> Result<Telemetry, SimError> {
        let dof = self.dof();
        self.engine.measure(&self.dev, dof)
    }

    fn forces(&mut self) -> Result<Vec<[f64; 3]>, SimError> {
        self.engine.forces(&self.dev)
    }

    fn set_obstacles(&mut self, field: Option<Arc<ObstacleField>>, caught: CaughtAtoms) -> Result<usize, SimError> {
        self.hmc.forget();
        let mut snap = self.engine.snapshot(&self.dev)?;
        let n_caught = match field.as_deref() {
            Some(f) => edit::resolve_caught(&mut snap.atoms, f, &self.params, caught),
            None => 0,
        };
        let old = std::mem::replace(&mut self.field, field);
        if let Err(e) = self.rebuild(&snap) {
            self.field = old;
            return Err(e);
        }
        Ok(n_caught)
    }

    fn add_atoms(&mut self, atoms: &AtomState) -> Result<(), SimError> {
        self.hmc.forget();
        check_atoms(atoms, &self.params)?;
        let mut snap = self.engine.snapshot(&self.dev)?;
        snap.atoms.extend(atoms);
        self.rebuild(&snap)?;
        self.restart_transport()
    }

    fn remove_atoms(&mut self, which: &AtomSelection) -> Result<usize, SimError> {
        self.hmc.forget();
        let mut snap = self.engine.snapshot(&self.dev)?;
        let removed = edit::remove(&mut snap.atoms, which);
        if removed > 0 {
            self.rebuild(&snap)?;
            self.restart_transport()?;
        }
        Ok(removed)
    }

    fn snapshot(&mut self) -> Result<Snapshot, SimError> {
        let snap = self.engine.snapshot(&self.dev)?;
        // Continue from the snapshot itself (canonical order, fresh lists), so that a backend
        // restored from it runs bit for bit like this one.
        self.rebuild(&snap)?;
        Ok(snap)
    }

    fn restore(&mut self, snapshot: &Snapshot) -> Result<(), SimError> {
        self.hmc.forget();
        self.params.validate(&snapshot.sim_box)?;
        check_atoms(&snapshot.atoms, &self.params)?;
        check_tunnel(&self.params, &snapshot.sim_box, &snapshot.atoms.types)?;
        self.rebuild(snapshot)?;
        self.restart_transport()
    }

    fn copy_state(&mut self) -> Result<Snapshot, SimError> {
        self.engine.snapshot(&self.dev)
    }

    fn checkpoint(&mut self) -> Result<(), SimError> {
        let reuse = if self.checkpoints.len() >= crate::sim::CHECKPOINTS { self.checkpoints.pop_front() } else { None };
        let cp = self.engine.checkpoint(&self.dev, reuse)?;
        self.checkpoints.push_back(cp);
        Ok(())
    }

    fn rollback(&mut self) -> Result<Option<u64>, SimError> {
        self.hmc.forget();
        let Some(cp) = self.checkpoints.back() else { return Ok(None) };
        // (a checkpoint's tags need the dye column here: rakes made since add one, never drop it)
        if cp.n == self.engine.n && cp.precision == self.engine.precision && (!cp.has_dye() || self.engine.has_dye()) {
            // The usual case: device to device.
            self.engine.roll_back_to(&self.dev, cp)?;
        } else {
            // Atoms were added or removed (or the precision changed) since: through the host.
            let snap = self.engine.checkpoint_state(&self.dev, cp)?;
            self.rebuild(&snap)?;
        }
        self.restart_transport()?;
        Ok(Some(self.engine.step))
    }

    fn rdf(&mut self, bins: usize, r_max: f64, region: Option<&RdfRegion>) -> Result<Histogram, SimError> {
        let b = self.engine.sim_box;
        let c = self.pair_counts(bins, r_max, region, PairSearch::Cells)?;
        let volume = if b.fully_periodic() {
            b.volume()
        } else {
            analysis::reachable_volume(&b, &self.params, self.field.as_deref())
        };
        analysis::rdf::rdf_from(&c, self.engine.n, volume, r_max, region).map_err(SimError::Invalid)
    }

    fn speed_histogram(&mut self, bins: usize, v_max: f64) -> Result<Histogram, SimError> {
        analysis::check_histogram_request("speed histogram", bins, v_max).map_err(SimError::Invalid)?;
        let counts = self.engine.speed_counts(&self.dev, bins, v_max)?;
        Ok(analysis::speed_from_counts(&counts, self.engine.n, v_max))
    }

    fn density_profile(&mut self, bins: usize) -> Result<Histogram, SimError> {
        analysis::check_histogram_request("density profile", bins, 1.0).map_err(SimError::Invalid)?;
        let counts = self.engine.height_counts(&self.dev, bins)?;
        Ok(analysis::density_from_counts(&counts, &self.engine.sim_box))
    }

    fn write_positions(&mut self, target: PositionTarget<'_>, colour: ColourScalar) -> Result<(), SimError> {
        let code = colour_code(colour);
        let n = self.engine.n;
        match target {
            PositionTarget::Host(out) => {
                if out.len() < n {
                    return Err(SimError::Invalid(format!("position buffer holds {} atoms, need {n}", out.len())));
                }
                self.engine.publish_to_host(&self.dev, out, code)
            }
            PositionTarget::Device { ptr, len } => {
                self.write_positions_async(ptr, len, colour)?;
                self.positions_written(true).map(|_| ())
            }
            PositionTarget::Buffer { .. } => Err(SimError::Invalid(
                "the CUDA backend writes into CUDA device memory (interop buffers), not a wgpu buffer".into(),
            )),
        }
    }

    fn write_positions_async(&mut self, ptr: u64, len: usize, colour: ColourScalar) -> Result<(), SimError> {
        let n = self.engine.n;
        if len < n {
            return Err(SimError::Invalid(format!("device position buffer holds {len} atoms, need {n}")));
        }
        self.engine.publish(&self.dev, ptr, colour_code(colour))?;
        let err = |e: cudarc::driver::DriverError| SimError::Device(format!("publishing positions: {e}"));
        match &self.published {
            Some(e) => e.record(&self.dev.stream).map_err(err)?,
            None => self.published = Some(self.dev.stream.record_event(None).map_err(err)?),
        }
        Ok(())
    }

    fn positions_written(&mut self, wait: bool) -> Result<bool, SimError> {
        let Some(e) = &self.published else { return Ok(true) };
        let err = |e: cudarc::driver::DriverError| SimError::Device(format!("publishing positions: {e}"));
        if wait {
            e.synchronize().map_err(err)?;
            return Ok(true);
        }
        e.try_is_complete().map_err(err)
    }
}
