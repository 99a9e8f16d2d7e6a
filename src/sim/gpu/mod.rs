//! The wgpu compute backend (`GpuBackend`, kind "wgpu"): the simulation as WGSL compute
//! shaders on any GPU wgpu drives (Vulkan, Metal, DX12) or a software adapter (lavapipe),
//! meeting the same physics contract as the CPU and CUDA backends.
//!
//! `device.rs` opens the adapter (or takes the renderer's device, `GpuBackend::on_device`);
//! `layout.rs` the constants the shaders read (written by `block.rs` in the precision's
//! widths); `flow.rs` the wind tunnel's constants and the packed obstacle field; `shaders.rs`
//! assembles `shaders/sim/*.wgsl`; `engine.rs` the device arrays and the step loop
//! (`engine/flow.rs` the wind tunnel's arrays); `publish.rs` positions for the renderer (into
//! a buffer on the same device with no host traffic, or for the host); `histograms.rs` g(r)
//! and the histograms counted on the device; `refuse.rs` what it does not run. Pairs are
//! found by a neighbour list, by the cell list (`Algorithm::Cells`: the atoms binned and
//! sorted by cell every step, each scanning its 27 neighbour cells,
//! `shaders/sim/cellforces.wgsl`), or over all pairs (`search_for`). It runs the wind tunnel
//! scenes: obstacles, the forces on them and on the walls, surface friction, the tunnel's
//! inflow zone, thermostats relative to the flow with the thermal readout of telemetry
//! records, and flow-field sampling. It runs the three precisions (`shaders.rs`: one source,
//! f32 or f64 types): single everywhere, mixed and double where the adapter has 64-bit floats
//! in shaders (`SHADER_F64`: Vulkan on NVIDIA and AMD, lavapipe; not Metal), saying which it
//! runs in `BackendInfo::precisions`. What it does not run is refused by [`unsupported`] with
//! the backends that do, never run differently: the piston, the tether, hybrid Monte Carlo,
//! transport sampling, and mixed or double precision without f64. Edits (atoms, parameters)
//! go through a host copy of the state.

mod block;
pub mod device;
pub mod engine;
pub mod flow;
pub mod histograms;
pub mod layout;
mod pipelines;
mod profile;
pub mod publish;
mod refuse;
pub mod shaders;

pub use refuse::{unsupported, unsupported_on, unsupported_precision};

use std::collections::VecDeque;
use std::sync::Arc;

use self::device::SimDevice;
use self::engine::{DeviceCheckpoint, DeviceObstacles, DyeKernels, Engine, Pipelines, Record, Search};
use super::{
    AtomSelection, AtomState, Backend, BackendInfo, CaughtAtoms, ColourScalar, PositionTarget, SimError, Snapshot,
    Telemetry, check_atoms, edit,
};
use crate::analysis::rdf::RdfCounts;
use crate::analysis::{self, Histogram, RdfRegion};
use crate::flow::{Accumulator, FieldSpec, Fields};
use crate::physics::dye::DyeRake;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{Algorithm, SimParams};
use crate::physics::sim_box::SimBox;
use crate::sim::check_tunnel;
use crate::sim::fields::FieldSampler;

pub struct GpuBackend {
    dev: Arc<SimDevice>,
    pipes: Arc<Pipelines>,
    engine: Engine,
    params: SimParams,
    telemetry: Vec<Telemetry>,
    hmc: crate::sim::hmc::HmcState,
    checkpoints: VecDeque<DeviceCheckpoint>,
    /// Keep wgpu's runtime bounds checks in the shaders (tests compare both).
    checked: bool,
    /// The species count the kernels were compiled for.
    ntypes: usize,
    /// The obstacles, on the device too (kept across rebuilds).
    obstacles: Option<DeviceObstacles>,
    /// Flow-field sampling while on: the windows on the host, the sums on the device.
    fields: Option<(FieldSampler, wgpu::Buffer)>,
    /// The publish kernel, built at the first publish (and again for new kernels).
    publisher: Option<publish::Publisher>,
    /// The histogram kernels, built at the first histogram (and again for new kernels).
    analyser: Option<histograms::Analyser>,
    /// Dye rakes run every step (`Backend::set_dye_rakes`; kept across rebuilds).
    rakes: Vec<DyeRake>,
    /// The dye step's kernel, built when first needed (and again for new kernels).
    dye_kernels: Option<Arc<DyeKernels>>,
}

/// The search the algorithm asks for in `b` (cells and lists fall back to all pairs in a box
/// too small for them: lists where a periodic axis is shorter than twice the cut-off and
/// skin without being a column, `Algorithm::lists_fit`; the cell list where one is shorter
/// than twice the cut-off, a box `SimParams::validate` refuses already).
fn search_for(params: &SimParams, b: &SimBox) -> Search {
    match params.algorithm {
        Algorithm::AllPairsGlobal | Algorithm::AllPairsTiled => Search::AllPairs,
        Algorithm::Cells if layout::cell_dims(b, params.max_cutoff()).is_none() => Search::AllPairs,
        Algorithm::Cells => Search::Cells,
        _ if !Algorithm::lists_fit(b, params.list_range(), params.max_cutoff()) => Search::AllPairs,
        _ => Search::List,
    }
}

impl GpuBackend {
    /// Opens the best wgpu adapter and puts the system on it.
    pub fn new(
        sim_box: SimBox,
        params: SimParams,
        atoms: &AtomState,
        field: Option<Arc<ObstacleField>>,
    ) -> Result<GpuBackend, SimError> {
        Self::with_checks(sim_box, params, atoms, field, false)
    }

    /// As [`GpuBackend::new`], with wgpu's runtime checks kept in the shaders when `checked`.
    pub fn with_checks(
        sim_box: SimBox,
        params: SimParams,
        atoms: &AtomState,
        field: Option<Arc<ObstacleField>>,
        checked: bool,
    ) -> Result<GpuBackend, SimError> {
        Self::build(None, sim_box, params, atoms, field, checked)
    }

    /// As [`GpuBackend::new`], on a device someone else opened (the renderer's, so positions
    /// are published into buffers it draws: [`PositionTarget::Buffer`]).
    pub fn on_device(
        dev: Arc<SimDevice>,
        sim_box: SimBox,
        params: SimParams,
        atoms: &AtomState,
        field: Option<Arc<ObstacleField>>,
    ) -> Result<GpuBackend, SimError> {
        Self::build(Some(dev), sim_box, params, atoms, field, false)
    }

    fn build(
        dev: Option<Arc<SimDevice>>,
        sim_box: SimBox,
        params: SimParams,
        atoms: &AtomState,
        field: Option<Arc<ObstacleField>>,
        checked: bool,
    ) -> Result<GpuBackend, SimError> {
        params.validate(&sim_box)?;
        check_atoms(atoms, &params)?;
        check_tunnel(&params, &sim_box, &atoms.types)?;
        // What no device runs before opening one; the precision once it is open.
        if let Some(why) = unsupported(&params, None) {
            return Err(SimError::Invalid(why));
        }
        let params_species = params.species.len();
        let dev = match dev {
            Some(d) => d,
            None => Arc::new(device::open()?),
        };
        if let Some(why) = unsupported(&params, dev.f64_missing()) {
            return Err(SimError::Invalid(why));
        }
        dev.watch_errors();
        let pipes = Arc::new(Pipelines::new(&dev, params.species.len(), params.precision, checked)?);
        let obstacles = field.map(|f| DeviceObstacles::new(&dev, f)).transpose()?;
        let dof = analysis::degrees_of_freedom(atoms.len(), &sim_box, &params, obstacles.is_some());
        let mut engine =
            Engine::new(dev.clone(), pipes.clone(), sim_box, &params, atoms, dof, search_for(&params, &sim_box))?;
        engine.configure_flow(&params, obstacles.as_ref(), None)?;
        let dye_kernels = Self::configure_dye(&mut engine, &params, &[], None, &pipes, params_species)?;
        Ok(GpuBackend {
            dev,
            pipes,
            engine,
            params,
            telemetry: Vec::new(),
            hmc: Default::default(),
            checkpoints: VecDeque::new(),
            checked,
            ntypes: params_species,
            obstacles,
            fields: None,
            publisher: None,
            analyser: None,
            rakes: Vec::new(),
            dye_kernels,
        })
    }

    /// The device the system runs on.
    pub fn device(&self) -> &Arc<SimDevice> {
        &self.dev
    }

    /// The publish kernel in `slot` for the current kernels `pipes`, made when missing or stale
    /// (a function of the fields it needs, so the engine stays free to borrow).
    fn publisher<'a>(
        slot: &'a mut Option<publish::Publisher>,
        dev: &SimDevice,
        pipes: &Arc<Pipelines>,
        ntypes: usize,
    ) -> Result<&'a mut publish::Publisher, SimError> {
        match slot.take() {
            Some(p) if p.fits(pipes) => Ok(slot.insert(p)),
            _ => Ok(slot.insert(publish::Publisher::new(dev, pipes, ntypes)?)),
        }
    }

    /// The histogram kernels in `slot` for the current kernels `pipes`, made when missing or
    /// stale.
    fn analyser<'a>(
        slot: &'a mut Option<histograms::Analyser>,
        dev: &SimDevice,
        pipes: &Arc<Pipelines>,
        ntypes: usize,
    ) -> Result<&'a mut histograms::Analyser, SimError> {
        match slot.take() {
            Some(a) if a.fits(pipes) => Ok(slot.insert(a)),
            _ => Ok(slot.insert(histograms::Analyser::new(dev, pipes, ntypes)?)),
        }
    }

    /// Raw g(r) counts (see [`RdfCounts`]) counted on the device; [`Backend::rdf`]
    /// normalises them.
    pub fn pair_counts(&mut self, bins: usize, r_max: f64, region: Option<&RdfRegion>) -> Result<RdfCounts, SimError> {
        let b = self.engine.sim_box;
        analysis::check_rdf_request(&b, bins, r_max).map_err(SimError::Invalid)?;
        if let Some(r) = region {
            analysis::rdf::check_rdf_region(&b, r).map_err(SimError::Invalid)?;
        }
        let an = Self::analyser(&mut self.analyser, &self.dev, &self.pipes, self.ntypes)?;
        let (counts, centres) = an.rdf_counts(&mut self.engine, bins, r_max, region, self.params.skin)?;
        Ok(RdfCounts { counts, centres })
    }

    /// Neighbour-list builds (under the cell list, binnings: one a step) since the system was
    /// (re)built on the device.
    pub fn list_builds(&self) -> u64 {
        self.engine.builds
    }

    /// Whether the adapter is a software one (lavapipe, WARP).
    pub fn software(&self) -> bool {
        self.dev.software
    }

    fn dof(&self, n: usize, b: &SimBox) -> f64 {
        analysis::degrees_of_freedom(n, b, &self.params, self.obstacles.is_some())
    }

    /// The flow parts of the engine for the parameters, obstacles and fields now.
    fn configure_flow(
        engine: &mut Engine,
        params: &SimParams,
        obs: Option<&DeviceObstacles>,
        fields: &Option<(FieldSampler, wgpu::Buffer)>,
    ) -> Result<(), SimError> {
        let f = fields.as_ref().map(|(s, buf)| (&s.grid, buf, s.spec.every));
        engine.configure_flow(params, obs, f)
    }

    /// The dye step of `engine` for `rakes` and `params` (`Engine::configure_dye`), with the
    /// kernel from `kernels` when it was built for `pipes`, else built now, only when the step
    /// needs it; returns the kernel kept.
    fn configure_dye(
        engine: &mut Engine,
        params: &SimParams,
        rakes: &[DyeRake],
        kernels: Option<Arc<DyeKernels>>,
        pipes: &Arc<Pipelines>,
        ntypes: usize,
    ) -> Result<Option<Arc<DyeKernels>>, SimError> {
        let kernels = match kernels {
            Some(k) if k.fits(pipes) => Some(k),
            _ if engine.dye_step_needed(rakes, params) => {
                Some(Arc::new(DyeKernels::new(engine.device(), pipes, ntypes)?))
            }
            _ => None,
        };
        let step = kernels.clone().filter(|_| engine.dye_step_needed(rakes, params));
        engine.configure_dye(rakes, params, step);
        Ok(kernels)
    }

    /// A new engine for `snap` (other atoms, box, species or precision), on the same device
    /// (kernels compiled anew for another species count or precision); on failure nothing
    /// changes.
    fn rebuild(&mut self, snap: &Snapshot) -> Result<(), SimError> {
        let (ntypes, precision) = (self.params.species.len(), self.params.precision);
        let pipes = if self.ntypes != ntypes || self.pipes.precision != precision {
            Arc::new(Pipelines::new(&self.dev, ntypes, precision, self.checked)?)
        } else {
            self.pipes.clone()
        };
        let dof = self.dof(snap.atoms.len(), &snap.sim_box);
        let search = search_for(&self.params, &snap.sim_box);
        let mut e = Engine::new(self.dev.clone(), pipes.clone(), snap.sim_box, &self.params, &snap.atoms, dof, search)?;
        e.step = snap.step;
        e.time = snap.time;
        Self::configure_flow(&mut e, &self.params, self.obstacles.as_ref(), &self.fields)?;
        let kept = self.dye_kernels.take();
        self.dye_kernels = Self::configure_dye(&mut e, &self.params, &self.rakes, kept, &pipes, ntypes)?;
        self.engine = e;
        self.pipes = pipes;
        self.ntypes = ntypes;
        Ok(())
    }

    fn snapshot_now(&mut self) -> Result<Snapshot, SimError> {
        let state = self.engine.read_state(false)?;
        Ok(Snapshot {
            sim_box: self.engine.sim_box,
            atoms: state.atoms(),
            step: self.engine.step,
            time: self.engine.time,
            piston: None,
        })
    }
}

/// Telemetry of a record of `engine` with `dof` degrees of freedom (with its body forces and
/// the tunnel zone's sums).
fn telemetry_of(engine: &Engine, dof: f64, r: &Record) -> Telemetry {
    let mut t = Telemetry::from_sums(r.step, engine.n, dof, engine.sim_box.volume(), &r.sums);
    engine.flow_telemetry(r, &mut t);
    t
}

/// Advances `steps` steps; with flow fields on, a call to the engine ends where a window
/// fills, whose sums then come back (as the CUDA backend's `advance_sampling_fields`).
fn advance_sampling_fields(
    engine: &mut Engine,
    params: &SimParams,
    dof: f64,
    out: &mut Vec<Telemetry>,
    fields: &mut Option<(FieldSampler, wgpu::Buffer)>,
    steps: u64,
) -> Result<(), SimError> {
    let run = |engine: &mut Engine, steps: u64, out: &mut Vec<Telemetry>| {
        let (s0, t0) = (engine.step, engine.time);
        let mut records = Vec::new();
        let result = engine.advance(steps, params, &mut records);
        out.extend(
            records
                .iter()
                .map(|r| Telemetry { time: t0 + (r.step - s0) as f64 * params.dt, ..telemetry_of(engine, dof, r) }),
        );
        result
    };
    let Some((sampler, _)) = fields.as_mut() else { return run(engine, steps, out) };
    let every = sampler.spec.every;
    let mut left = steps;
    while left > 0 {
        let step0 = engine.step;
        let first = step0 + sampler.steps_to_next(step0);
        let closing = first + (sampler.per_window - sampler.taken() - 1) * every;
        let chunk = (closing - step0).min(left);
        run(engine, chunk, out)?;
        left -= chunk;
        let mut s = first;
        while s <= engine.step {
            let time = engine.time - (engine.step - s) as f64 * params.dt;
            if sampler.count_sample(time) {
                close_window(engine, sampler, time)?;
            }
            s += every;
        }
    }
    Ok(())
}

/// Closes the open window at `time` with the device's sums (read back and zeroed).
fn close_window(engine: &Engine, sampler: &mut FieldSampler, time: f64) -> Result<(), SimError> {
    if sampler.taken() == 0 {
        return Ok(());
    }
    let (data, tagged) = engine.take_field_sums(sampler.grid.len())?;
    let taken = sampler.taken();
    sampler.acc =
        Accumulator::from_raw_dye(&sampler.grid, data, tagged, taken).map_err(|e| SimError::Device(e.to_string()))?;
    sampler.close(time);
    Ok(())
}

impl Backend for GpuBackend {
    fn info(&self) -> BackendInfo {
        BackendInfo { kind: "wgpu", device: self.dev.describe(), precisions: self.dev.precisions() }
    }

    fn pair_search(&self) -> &'static str {
        match self.engine.search {
            Search::List => "neighbour list",
            Search::Cells => "cell list",
            Search::AllPairs => "all pairs (tiled)",
        }
    }

    fn n_atoms(&self) -> usize {
        self.engine.n
    }

    fn device_bytes(&self) -> Option<usize> {
        let checkpoints: usize = self.checkpoints.iter().map(|c| c.bytes()).sum();
        let publish = self.publisher.as_ref().map_or(0, |p| p.bytes());
        Some(self.engine.bytes() + self.engine.flow_bytes() + checkpoints + publish)
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
        if let Some(why) = unsupported(&params, self.dev.f64_missing()) {
            return Err(SimError::Invalid(why));
        }
        let snap = self.snapshot_now()?;
        check_atoms(&snap.atoms, &params)?;
        check_tunnel(&params, &snap.sim_box, &snap.atoms.types)?;
        let old = std::mem::replace(&mut self.params, params);
        let result = self.rebuild(&snap);
        if result.is_err() {
            self.params = old;
        }
        result
    }

    fn set_dye_rakes(&mut self, rakes: &[DyeRake]) -> Result<(), SimError> {
        let kept = self.dye_kernels.take();
        self.dye_kernels = Self::configure_dye(&mut self.engine, &self.params, rakes, kept, &self.pipes, self.ntypes)?;
        self.rakes = rakes.to_vec();
        Ok(())
    }

    fn advance_md(&mut self, steps: u64) -> Result<(), SimError> {
        let dof = self.dof(self.engine.n, &self.engine.sim_box);
        let (engine, params, fields) = (&mut self.engine, &self.params, &mut self.fields);
        super::timed_advance(steps, &mut self.telemetry, |out| {
            advance_sampling_fields(engine, params, dof, out, fields, steps)
        })
    }

    fn set_fields(&mut self, spec: Option<FieldSpec>) -> Result<(), SimError> {
        let fields = match spec {
            None => None,
            Some(spec) => {
                let sampler = FieldSampler::new(spec, &self.engine.sim_box, self.params.dt)?;
                let sums = engine::field_sums(&self.dev, &sampler.grid)?;
                Some((sampler, sums))
            }
        };
        Self::configure_flow(&mut self.engine, &self.params, self.obstacles.as_ref(), &fields)?;
        self.fields = fields;
        Ok(())
    }

    fn take_fields(&mut self, close: bool) -> Result<Vec<Fields>, SimError> {
        let Some((sampler, _)) = self.fields.as_mut() else { return Ok(Vec::new()) };
        if close {
            close_window(&self.engine, sampler, self.engine.time)?;
        }
        sampler.take()
    }

    fn set_transport(&mut self, spec: Option<crate::transport::TransportSpec>) -> Result<(), SimError> {
        match spec {
            None => Ok(()),
            Some(_) => Err(SimError::Invalid(
                "the wgpu backend does not measure transport yet: choose --backend cpu or cuda".into(),
            )),
        }
    }

    fn hmc_parts(&mut self) -> (&mut crate::sim::hmc::HmcState, &mut Vec<Telemetry>) {
        (&mut self.hmc, &mut self.telemetry)
    }

    fn drain_telemetry(&mut self) -> Vec<Telemetry> {
        std::mem::take(&mut self.telemetry)
    }

    fn measure(&mut self) -> Result<Telemetry, SimError> {
        let r = self.engine.measure()?;
        let dof = self.dof(self.engine.n, &self.engine.sim_box);
        Ok(Telemetry { time: self.engine.time, ..telemetry_of(&self.engine, dof, &r) })
    }

    fn forces(&mut self) -> Result<Vec<[f64; 3]>, SimError> {
        Ok(self.engine.read_state(true)?.forces())
    }

    fn set_obstacles(&mut self, field: Option<Arc<ObstacleField>>, caught: CaughtAtoms) -> Result<usize, SimError> {
        self.hmc.forget();
        let mut snap = self.snapshot_now()?;
        let n_caught = match field.as_deref() {
            Some(f) => edit::resolve_caught(&mut snap.atoms, f, &self.params, caught),
            None => 0,
        };
        let obstacles = field.map(|f| DeviceObstacles::new(&self.dev, f)).transpose()?;
        let old = std::mem::replace(&mut self.obstacles, obstacles);
        if let Err(e) = self.rebuild(&snap) {
            self.obstacles = old;
            return Err(e);
        }
        Ok(n_caught)
    }

    fn add_atoms(&mut self, atoms: &AtomState) -> Result<(), SimError> {
        self.hmc.forget();
        check_atoms(atoms, &self.params)?;
        let mut snap = self.snapshot_now()?;
        snap.atoms.extend(atoms);
        self.rebuild(&snap)
    }

    fn remove_atoms(&mut self, which: &AtomSelection) -> Result<usize, SimError> {
        self.hmc.forget();
        let mut snap = self.snapshot_now()?;
        let removed = edit::remove(&mut snap.atoms, which);
        if removed > 0 {
            self.rebuild(&snap)?;
        }
        Ok(removed)
    }

    fn snapshot(&mut self) -> Result<Snapshot, SimError> {
        let snap = self.snapshot_now()?;
        // Continue from the snapshot itself (canonical order, fresh lists), so a backend
        // restored from it runs bit for bit like this one.
        self.rebuild(&snap)?;
        Ok(snap)
    }

    fn restore(&mut self, snapshot: &Snapshot) -> Result<(), SimError> {
        self.hmc.forget();
        self.params.validate(&snapshot.sim_box)?;
        check_atoms(&snapshot.atoms, &self.params)?;
        if snapshot.piston.is_some() {
            return Err(SimError::Invalid(unsupported(&self.params, self.dev.f64_missing()).unwrap_or_else(|| {
                "the wgpu backend does not run the piston yet: choose --backend cpu or cuda".into()
            })));
        }
        self.rebuild(snapshot)
    }

    fn copy_state(&mut self) -> Result<Snapshot, SimError> {
        self.snapshot_now()
    }

    fn checkpoint(&mut self) -> Result<(), SimError> {
        if self.checkpoints.len() >= crate::sim::CHECKPOINTS {
            self.checkpoints.pop_front();
        }
        self.checkpoints.push_back(self.engine.checkpoint());
        Ok(())
    }

    fn rollback(&mut self) -> Result<Option<u64>, SimError> {
        self.hmc.forget();
        let Some(cp) = self.checkpoints.back() else { return Ok(None) };
        if !self.engine.restore_checkpoint(cp) {
            // Atoms were added or removed since: through the host.
            let state = self.engine.read_checkpoint(cp)?;
            let snap = Snapshot {
                sim_box: self.engine.sim_box,
                atoms: state.atoms(),
                step: cp.step,
                time: cp.time,
                piston: None,
            };
            self.rebuild(&snap)?;
        }
        Ok(Some(self.engine.step))
    }

    fn rdf(&mut self, bins: usize, r_max: f64, region: Option<&RdfRegion>) -> Result<Histogram, SimError> {
        let b = self.engine.sim_box;
        let c = self.pair_counts(bins, r_max, region)?;
        let volume = if b.fully_periodic() {
            b.volume()
        } else {
            analysis::reachable_volume(&b, &self.params, self.obstacles.as_ref().map(|o| &*o.field))
        };
        analysis::rdf::rdf_from(&c, self.engine.n, volume, r_max, region).map_err(SimError::Invalid)
    }

    fn speed_histogram(&mut self, bins: usize, v_max: f64) -> Result<Histogram, SimError> {
        analysis::check_histogram_request("speed histogram", bins, v_max).map_err(SimError::Invalid)?;
        let an = Self::analyser(&mut self.analyser, &self.dev, &self.pipes, self.ntypes)?;
        let counts = an.speed_counts(&self.engine, bins, v_max)?;
        Ok(analysis::speed_from_counts(&counts, self.engine.n, v_max))
    }

    fn density_profile(&mut self, bins: usize) -> Result<Histogram, SimError> {
        analysis::check_histogram_request("density profile", bins, 1.0).map_err(SimError::Invalid)?;
        let an = Self::analyser(&mut self.analyser, &self.dev, &self.pipes, self.ntypes)?;
        let counts = an.height_counts(&self.engine, bins)?;
        Ok(analysis::density_from_counts(&counts, &self.engine.sim_box))
    }

    fn write_positions(&mut self, target: PositionTarget<'_>, colour: ColourScalar) -> Result<(), SimError> {
        let n = self.engine.n;
        // The publish kernel on the device either way, so the host and the zero-copy buffer
        // hold the same bits.
        let publisher = Self::publisher(&mut self.publisher, &self.dev, &self.pipes, self.ntypes)?;
        let system = (self.engine.system_bind_group(), self.engine.dye_words());
        match target {
            PositionTarget::Host(out) => publisher.to_host(&self.dev, system, n, colour, out),
            PositionTarget::Buffer { buffer, len } => publisher.to_buffer(&self.dev, system, buffer, len, n, colour),
            PositionTarget::Device { .. } => Err(SimError::Invalid(
                "the wgpu backend cannot write into CUDA device memory; use a host buffer".into(),
            )),
        }
    }
}
