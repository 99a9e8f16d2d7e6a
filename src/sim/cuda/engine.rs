//! One simulation resident on the GPU at one precision: device arrays, the step sequence
//! (kick-drift, gated cell/list rebuild, forces, kick, thermostat), telemetry records, and
//! the copies to and from the host that snapshots and analysis need. Mirrors
//! `sim/cpu/state.rs`; only telemetry and requested data cross PCIe.
//!
//! Its parts, one concern each (all add methods to [`Engine`]):
//! - this file: the `Engine` struct, its construction and configuration (constants, species
//!   tables, cell grid, list sizes, piston, module switch) and `advance`, which runs the
//!   steps and answers blow-ups and list overflows;
//! - `arrays`: the device arrays (allocation, the memory check, the pointer table the
//!   kernels read) and the alloc/upload/download helpers every part uses;
//! - `transfer`: state, forces, histograms and positions read back to the host;
//! - `rdf`: g(r) pair counts through an analysis cell grid in scratch arrays (or all pairs);
//! - `checkpoint`: the backup an advance is redone from after a list overflow, and the
//!   rollback checkpoints;
//! - `telemetry`: telemetry records and the status flags the kernels raise;
//! - `steps`: the kernel sequence of a time step and its launch (graphs or one by one);
//! - `tunnel`: the wind tunnel's inflow zone at the end of a step and its bookkeeping;
//! - `dye`: the dye tags by canonical index and the step's rakes (`kernels/dye.cu`).

use std::sync::Arc;

use cudarc::driver::CudaSlice;

use super::consts::{Bufs, Consts, flag};
use super::device::Device;
use super::graph::GraphCache;
use super::launch::{Launcher, Module, Over};

mod arrays;
mod bodies;
pub(super) mod checkpoint;
mod dye;
pub(super) mod fields;
mod rdf;
mod steps;
pub use steps::step_grain;
pub(super) mod stress;
mod telemetry;
mod transfer;
pub(super) mod transport;
mod tunnel;
use crate::physics::lj::{LjPair, PairCoeffs, Table};
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{Algorithm, SimParams, Thermostat};
use crate::physics::piston::{PistonParams, PistonState};
use crate::physics::real::Precision;
use crate::physics::sim_box::SimBox;
use crate::sim::list_room::list_room;
use crate::sim::{SimError, Snapshot, Telemetry};
use arrays::{Arrays, alloc, dev_err, download, unpack, upload};
use fields::DeviceFields;
use steps::segments;
use telemetry::RECORD_BYTES;

/// The piston's device words for state `s`: height, velocity, no push yet, not dragged.
fn piston_bytes(s: PistonState) -> Vec<u8> {
    [s.height, s.velocity, 0.0, s.height, 0.0].iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The cell grid of the cell and neighbour algorithms.
#[derive(Clone, Debug)]
pub struct CellSetup {
    pub dims: [usize; 3],
    pub inv: [f64; 3],
    /// Linear cell index (x fastest) to storage rank along a Morton curve.
    pub rank: Vec<i32>,
}

impl CellSetup {
    /// The list build's cells for `n` atoms and list range `range`, as wide as
    /// [`crate::sim::list_cells::list_cell_widths`] makes them (about 24 atoms a cell, thin
    /// periodic depths one column deep: the vortex street 307 x 144 columns of about 27 atoms),
    /// else range-wide.
    pub fn for_lists(b: &SimBox, range: f64, cutoff: f64, n: usize) -> Option<CellSetup> {
        CellSetup::with_widths(b, crate::sim::list_cells::list_cell_widths(b, range, cutoff, n), range)
            .or_else(|| CellSetup::new(b, range))
    }

    /// Cells at least `range` wide; None when a periodic axis would have fewer than two
    /// (shorter than twice the range: `Algorithm::images_fit`). Along a periodic axis of
    /// two cells the 27-cell stencil reaches the other cell both ways: the cell-list forces
    /// visit it once.
    pub fn new(b: &SimBox, range: f64) -> Option<CellSetup> {
        if !Algorithm::images_fit(b, range) {
            return None;
        }
        CellSetup::with_widths(b, [range; 3], range)
    }

    /// Cells at least `widths[k]` wide along axis k (all widened alike past 2^24 cells); None
    /// when a periodic axis that is not one cell wide on purpose (`widths[k]` its length: a
    /// column, whose pairs take their minimum image) is shorter than twice `range` (its
    /// minimum image is ambiguous) or would have fewer than two cells.
    fn with_widths(b: &SimBox, widths: [f64; 3], range: f64) -> Option<CellSetup> {
        let len = b.length();
        let mut scale = 1.0;
        loop {
            let dims: [usize; 3] = std::array::from_fn(|k| ((len[k] / (widths[k] * scale)).floor() as usize).max(1));
            if (0..3).any(|k| b.periodic[k] && widths[k] < len[k] && (len[k] < 2.0 * range || dims[k] < 2)) {
                return None;
            }
            let total = dims[0] * dims[1] * dims[2];
            if total <= (1 << 24) {
                let morton = |x: usize, y: usize, z: usize| -> u64 {
                    let mut m = 0u64;
                    for bit in 0..21 {
                        m |= ((x as u64 >> bit) & 1) << (3 * bit);
                        m |= ((y as u64 >> bit) & 1) << (3 * bit + 1);
                        m |= ((z as u64 >> bit) & 1) << (3 * bit + 2);
                    }
                    m
                };
                let mut cells: Vec<(u64, usize)> = (0..total)
                    .map(|i| (morton(i % dims[0], (i / dims[0]) % dims[1], i / (dims[0] * dims[1])), i))
                    .collect();
                cells.sort_unstable();
                let mut rank = vec![0i32; total];
                for (r, &(_, i)) in cells.iter().enumerate() {
                    rank[i] = r as i32;
                }
                return Some(CellSetup { dims, inv: std::array::from_fn(|k| dims[k] as f64 / len[k]), rank });
            }
            scale *= 1.26;
        }
    }
}

/// A simulation on the device.
pub struct Engine {
    pub precision: Precision,
    pub n: usize,
    pub sim_box: SimBox,
    pub step: u64,
    pub time: f64,
    /// The algorithm that runs (Auto resolved; cells and lists fall back to all pairs in
    /// boxes with a periodic edge shorter than twice their range).
    pub algorithm: Algorithm,
    module: Arc<Module>,
    a: Arrays,
    bufs: Bufs,
    /// `bufs` with the positions in their other array, for fused steps (`steps::Fused`); None
    /// where there is none (mixed precision without neighbour lists).
    other_bufs: Option<Bufs>,
    consts: Consts,
    /// Device buffer positions are published into before they are copied to the host
    /// (kept between calls: allocating 16 MB per frame at a million atoms costs milliseconds).
    staging: Option<CudaSlice<u8>>,
    cells: Option<CellSetup>,
    forces_valid: bool,
    records_cap: usize,
    n_blocks: usize,
    /// Instantiated step graphs by shape (`steps::Shape`: steps, telemetry on the last,
    /// thermostat and tunnel on, samples); emptied
    /// whenever constants or buffers change, since graphs hold them by value.
    graphs: GraphCache<steps::Shape>,
    /// The flow-field grid and sums the cached graphs sample into (held by value).
    graph_sample: Option<(crate::sim::cuda::consts::FieldGridArgs, u64)>,
    /// False when turned off (`CudaBackend::set_step_graphs`) or after a graph could not be
    /// built: steps are launched one kernel at a time.
    pub use_graphs: bool,
    /// Fused steps (the integrator in the force kernel's epilogue, `steps::Fused`) where they
    /// apply: on by default; `ARGON_FUSED_STEPS=0` or `CudaBackend::set_fused_steps` turn
    /// them off (the same numbers either way).
    pub fuse_steps: bool,
    /// Steps run fused so far (counted as they are launched).
    pub fused_count: u64,
    /// The piston's settings while there is one (its state lives in `a.piston`).
    piston: Option<PistonParams>,
    /// The piston state to start from at the next `configure` (from a snapshot).
    piston_seed: Option<PistonState>,
    /// The bodies whose forces are summed (`engine/bodies.rs`); empty: none.
    bodies: crate::sim::bodies::BodyLayout,
    /// Pressure-tensor samples every this many steps (`engine/stress.rs`); 0: none.
    stress_every: u64,
    /// The MSD and VACF sampling nodes the step graphs add (`engine/transport.rs`).
    transport_nodes: Option<transport::TransportNodes>,
    /// The dye tags and rakes, while the state has a dye column (`engine/dye.rs`).
    dye: Option<dye::DeviceDye>,
}

impl Engine {
    /// Uploads `snap` and prepares everything for `params`.
    pub fn new(
        dev: &Device,
        module: Arc<Module>,
        params: &SimParams,
        snap: &Snapshot,
        field: Option<&ObstacleField>,
        dof: f64,
    ) -> Result<Engine, SimError> {
        let n = snap.atoms.len();
        let precision = module.precision;
        let mut e = Engine {
            precision,
            n,
            sim_box: snap.sim_box,
            step: snap.step,
            time: snap.time,
            algorithm: Algorithm::AllPairsTiled,
            module,
            a: Arrays::default(),
            bufs: Bufs::default(),
            other_bufs: None,
            consts: Consts::default(),
            staging: None,
            cells: None,
            forces_valid: false,
            records_cap: 0,
            n_blocks: 0,
            graphs: GraphCache::new(steps::MAX_GRAPHS),
            graph_sample: None,
            use_graphs: true,
            fuse_steps: true,
            fused_count: 0,
            piston: None,
            piston_seed: snap.piston,
            bodies: Default::default(),
            stress_every: 0,
            transport_nodes: None,
            dye: None,
        };
        e.check_memory(dev, params)?;
        e.upload_state(dev, &snap.atoms)?;
        e.upload_dye(dev, &snap.atoms.dye)?;
        e.configure(dev, params, field, dof)?;
        Ok(e)
    }

    /// Applies `params` (and the obstacle field): constants, species tables, cell grid,
    /// list sizes. State is kept; lists are rebuilt at the next step.
    pub fn configure(
        &mut self,
        dev: &Device,
        params: &SimParams,
        field: Option<&ObstacleField>,
        dof: f64,
    ) -> Result<(), SimError> {
        let n = self.n;
        let mut c = Consts::new(&self.sim_box, params, n, dof, field);
        let masses: Vec<u8> = params.species.iter().flat_map(|s| s.mass.to_le_bytes()).collect();
        self.a.masses = Some(upload(dev, &masses, "uploading masses")?);
        let table = Table::<f64>::from_params(params);
        let tb: Vec<u8> = table
            .pairs
            .iter()
            .flat_map(|p: &LjPair<f64>| [p.lj1, p.lj2, p.lj3, p.lj4, p.offset, p.rcut_sq])
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let _ = table.get(0, 0);
        self.a.table = Some(upload(dev, &tb, "uploading LJ coefficients")?);
        let mut obstacles = [None, None, None, None];
        if let Some(f) = field {
            let verts: &[u8] = if f.verts.is_empty() { &[0; 16] } else { bytemuck::cast_slice(&f.verts) };
            let cand: &[u8] = if f.cand.is_empty() { &[0; 4] } else { bytemuck::cast_slice(&f.cand) };
            let parts = [bytemuck::cast_slice(&f.start), cand, bytemuck::cast_slice(&f.prims), verts];
            for (slot, bytes) in obstacles.iter_mut().zip(parts) {
                *slot = Some(upload(dev, bytes, "uploading the obstacle cells")?);
            }
        }
        [self.a.obs_start, self.a.obs_cand, self.a.obs_prims, self.a.obs_verts] = obstacles;
        self.a.obs_force = match field {
            Some(_) => Some(alloc(dev, self.n.max(1) * 32, "allocating obstacle forces")?),
            None => None,
        };
        self.a.fric_force = match params.surface_friction {
            Some(_) => Some(alloc(dev, self.n.max(1) * 32, "allocating surface friction forces")?),
            None => None,
        };
        self.a.near = if field.is_some() || params.surface_friction.is_some() {
            Some(alloc(dev, self.n.max(1), "allocating the atoms' surface flags")?)
        } else {
            None
        };

        let wanted = params.algorithm.resolve(n, &self.sim_box, params.list_range(), params.max_cutoff());
        let range = match wanted {
            Algorithm::Cells => params.max_cutoff(),
            _ => params.list_range(),
        };
        self.cells = match wanted {
            Algorithm::Neighbors => CellSetup::for_lists(&self.sim_box, range, params.max_cutoff(), n),
            Algorithm::Cells => CellSetup::new(&self.sim_box, range),
            _ => None,
        };
        self.algorithm = if matches!(wanted, Algorithm::Cells | Algorithm::Neighbors) && self.cells.is_none() {
            Algorithm::AllPairsTiled
        } else {
            wanted
        };
        if let Some(cs) = &self.cells {
            c.cell_dims = cs.dims.map(|d| d as i32);
            c.n_cells = cs.rank.len() as i32;
            c.cell_inv = cs.inv;
            let rb: Vec<u8> = cs.rank.iter().flat_map(|x| x.to_le_bytes()).collect();
            self.a.cell_rank = Some(upload(dev, &rb, "uploading the cell order")?);
            self.a.cell_count = Some(alloc(dev, cs.rank.len() * 4, "allocating cells")?);
            self.a.cell_start = Some(alloc(dev, (cs.rank.len() + 1) * 4, "allocating cells")?);
            let scan_blocks = cs.rank.len().div_ceil(super::launch::SCAN_THREADS as usize) + 1;
            self.a.scan_sums = Some(alloc(dev, scan_blocks * 4, "allocating cells")?);
        }
        self.a.pair_acc = if self.algorithm == Algorithm::AllPairsTiled && self.precision != Precision::Double {
            Some(alloc(dev, n.max(1) * 32, "allocating pair force sums")?)
        } else {
            None
        };
        // The list is sized by a counting build at the end (size_list); until then it has no room.
        c.max_nbrs = 0;
        self.a.nlist = None;
        self.a.nb_first = match (&self.cells, self.algorithm) {
            (Some(cs), Algorithm::Neighbors) => Some(alloc(dev, cs.rank.len() * 27 * 4, "allocating cell neighbours")?),
            _ => None,
        };
        // Fused steps' second f32 position array in mixed (single and double use the sort's
        // scratch positions, see `Engine::other_positions`).
        self.a.posf_alt = if self.algorithm == Algorithm::Neighbors && self.precision == Precision::Mixed {
            Some(alloc(dev, n.max(1) * 16, "allocating positions")?)
        } else {
            None
        };
        self.configure_piston(dev, params)?;
        self.set_flow_arrays(dev, c.flow_bins.max(0) as usize)?;
        self.consts = c;
        self.configure_bodies(dev, field)?;
        self.configure_tunnel(dev, params)?;
        self.set_block_arrays(dev)?;
        self.request_rebuild(dev)?;
        self.forces_valid = false;
        self.refresh_bufs(dev);
        if self.algorithm == Algorithm::Neighbors {
            self.size_list(dev)?;
        }
        Ok(())
    }

    /// Sizes the neighbour list by need, at the end of `configure` (which left it without room
    /// and requested a rebuild): a rebuild with no room counts every atom's neighbours (and
    /// sorts the atoms, as any rebuild does), the list gets `list_room` of the largest count
    /// (entries of 16 bits unless some cell is too full for them), and the first step builds it.
    fn size_list(&mut self, dev: &Device) -> Result<(), SimError> {
        self.write_flag(dev, flag::MAX_NBRS_SEEN, 0)?;
        self.write_flag(dev, flag::CELL_FULL, 0)?;
        self.queue_lists(dev)?;
        let (flags, _) = self.read_flags(dev)?;
        self.write_flag(dev, flag::OVERFLOW, 0)?;
        self.resize_list(dev, flags[flag::MAX_NBRS_SEEN].max(0) as usize, flags[flag::CELL_FULL] != 0, "allocating")
    }

    /// A list with `list_room(seen)` entries per atom, 32-bit ones from now on when `wide`,
    /// built at the next step.
    fn resize_list(&mut self, dev: &Device, seen: usize, wide: bool, verb: &str) -> Result<(), SimError> {
        let max_nbrs = list_room(seen);
        if wide {
            self.consts.list_wide = 1;
        }
        let bytes = if self.consts.list_wide != 0 { 4 } else { 2 };
        self.consts.max_nbrs = max_nbrs as i32;
        // The old list goes first, so the two never hold device memory at once.
        self.a.nlist = None;
        self.a.nlist = Some(alloc(dev, self.n * max_nbrs * bytes, &format!("{verb} the neighbour list"))?);
        self.request_rebuild(dev)?;
        self.refresh_bufs(dev);
        Ok(())
    }

    /// The piston's device state for `params`: the current one (or the snapshot's) brought in
    /// line with the settings, none without a piston.
    fn configure_piston(&mut self, dev: &Device, params: &SimParams) -> Result<(), SimError> {
        let current = match self.piston_seed.take() {
            Some(s) => Some(s),
            None => self.piston_state(dev)?,
        };
        let state = PistonState::reconcile(params.piston.as_ref(), current, &self.sim_box);
        self.piston = params.piston;
        match state {
            Some(s) => {
                self.a.piston = Some(upload(dev, &piston_bytes(s), "uploading the piston")?);
                self.a.piston_part = Some(alloc(dev, self.n.max(1) * 8, "allocating piston forces")?);
            }
            None => {
                self.a.piston = None;
                self.a.piston_part = None;
            }
        }
        Ok(())
    }

    /// The piston's words on the device: height, velocity, push, drag target, dragged.
    fn piston_words(&self, dev: &Device) -> Result<Option<[f64; 5]>, SimError> {
        if self.a.piston.is_none() {
            return Ok(None);
        }
        let raw = unpack(&download(dev, &self.a.piston, 40, "reading the piston")?, 8);
        Ok(Some([raw[0], raw[1], raw[2], raw[3], raw[4]]))
    }

    /// The piston's state (height, velocity), if there is one.
    pub fn piston_state(&self, dev: &Device) -> Result<Option<PistonState>, SimError> {
        Ok(self.piston_words(dev)?.map(|w| PistonState { height: w[0], velocity: w[1] }))
    }

    /// Drags the piston toward `target` (Some) or releases it.
    pub fn drag_piston(&mut self, dev: &Device, target: Option<f64>) -> Result<(), SimError> {
        if let Some(p) = self.a.piston.as_mut() {
            let words = [target.unwrap_or(0.0), if target.is_some() { 1.0 } else { 0.0 }];
            let bytes: Vec<u8> = words.iter().flat_map(|x| x.to_le_bytes()).collect();
            let mut v = p.slice_mut(24..40);
            dev.stream.memcpy_htod(&bytes[..], &mut v).map_err(dev_err("dragging the piston"))?;
        }
        Ok(())
    }

    /// Partial-sum arrays sized for the module's block size.
    fn set_block_arrays(&mut self, dev: &Device) -> Result<(), SimError> {
        let blocks = self.n.div_ceil(self.module.block as usize).max(1);
        if blocks != self.n_blocks || self.a.partials_ev.is_none() {
            self.a.partials_ev = Some(alloc(dev, self.force_partials_cap() * 32, "allocating partial sums")?);
            self.a.partials_kin = Some(alloc(dev, blocks * 32, "allocating partial sums")?);
            self.n_blocks = blocks;
        }
        self.alloc_stress_partials(dev)
    }

    /// Switches to another compiled module (block size); state is untouched.
    pub fn set_module(&mut self, dev: &Device, module: Arc<Module>) -> Result<(), SimError> {
        self.module = module;
        self.set_block_arrays(dev)?;
        self.refresh_bufs(dev);
        Ok(())
    }

    fn launcher<'a>(&'a self, dev: &'a Device) -> Launcher<'a> {
        Launcher { stream: &dev.stream, module: &self.module, c: &self.consts, b: &self.bufs }
    }

    /// Step graphs built so far.
    pub fn graphs_built(&self) -> u64 {
        self.graphs.built
    }

    /// Fused steps on or off (`fuse_steps`); cached graphs are dropped.
    pub fn set_fused(&mut self, on: bool) {
        self.fuse_steps = on;
        self.graphs.clear();
    }

    /// Advances `steps` steps, appending telemetry for steps divisible by `every`; with
    /// `fields` (sums, sampling interval), a flow-field sample is added on the device after
    /// every step divisible by the interval, as a node of the step graphs (no synchronisation).
    pub fn advance(
        &mut self,
        dev: &Device,
        steps: u64,
        params: &SimParams,
        dof: f64,
        out: &mut Vec<Telemetry>,
        mut fields: Option<(&mut DeviceFields, u64)>,
    ) -> Result<(), SimError> {
        if self.n == 0 || steps == 0 {
            self.step += steps;
            self.time += steps as f64 * params.dt;
            return Ok(());
        }
        let every = params.telemetry_every.max(1);
        let records = ((self.step + steps) / every - self.step / every) as usize;
        self.ensure_records(dev, records.max(1))?;
        let with_list = self.algorithm == Algorithm::Neighbors;
        if with_list {
            self.backup(dev)?;
            self.save_bodies(dev)?;
            self.save_tunnel(dev)?;
            self.backup_dye(dev, false)?;
            if let Some((f, _)) = fields.as_mut() {
                f.save(dev)?;
            }
        }
        let (step0, time0, valid0) = (self.step, self.time, self.forces_valid);
        // The clock first: the surface friction's noise is keyed by it.
        self.set_clock(dev, step0)?;
        if !self.forces_valid {
            self.queue_lists(dev)?;
            let l = self.launcher(dev);
            self.launch_forces(&l, steps::Mode::NoEv)?;
        }
        let thermostat_on = matches!(params.thermostat, Thermostat::Berendsen { .. } | Thermostat::Csvr { .. });
        let mut record = 0i32;
        // Flow-field samples are nodes of the step graphs, after the steps they follow.
        let sample = fields.as_ref().map(|(f, e)| (f.grid_args(), f.sums_ptr(dev), *e));
        let sample_every = sample.map_or(0, |s| s.2);
        let mut at = step0;
        for (k, ev_last, samples) in segments(step0, steps, every, sample_every) {
            let stress = steps::mask_every(at, k, self.stress_every);
            let (msd_every, vacf_every) = self.transport_every();
            let (msd, vacf) = (steps::mask_every(at, k, msd_every), steps::mask_every(at, k, vacf_every));
            let tunnel_on = self.tunnel_on();
            let shape = steps::Shape { steps: k, ev_last, thermostat_on, tunnel_on, samples, stress, msd, vacf };
            self.launch_steps(dev, shape, sample.as_ref().map(|(g, acc, _)| (g, *acc)))?;
            record += i32::from(ev_last);
            at += k;
        }
        dev.stream.synchronize().map_err(|e| {
            SimError::Device(format!(
                "running the step kernels (integrate_first, {}{}, integrate_second, finish_step) failed: {e}. \
                 Run with CUDA_LAUNCH_BLOCKING=1 to have the failing kernel named",
                self.surface_kernel().map(|k| format!("{k}, ")).unwrap_or_default(),
                self.force_kernel(steps::Mode::NoEv).trim_end_matches("_noev"),
            ))
        })?;
        let (flags, blowup) = self.read_flags(dev)?;
        if flags[flag::BLOWUP] != 0 {
            self.forces_valid = false;
            self.step = step0 + steps;
            let what = if flags[flag::ESCAPE] != 0 {
                format!("an atom left the closed tank (more than {} sigma through a wall)", crate::sim::ESCAPE_MARGIN)
            } else {
                format!("an atom moved more than {} sigma in one step, or became NaN", crate::sim::RUNAWAY_STEP)
            };
            return Err(SimError::BlowUp {
                step: blowup,
                what,
                hint: "Use a smaller time step (dt, e.g. 0.002), a lower temperature, or remove overlapping atoms."
                    .into(),
            });
        }
        if flags[flag::OVERFLOW] != 0 {
            // Some list was cut short, or a cell grew too full for 16-bit entries: redo the
            // whole call with room for the largest count seen (in 32-bit entries for the latter).
            let seen = flags[flag::MAX_NBRS_SEEN].max(self.consts.max_nbrs) as usize;
            self.restore_backup(dev)?;
            self.restore_bodies(dev)?;
            self.restore_tunnel(dev)?;
            self.backup_dye(dev, true)?;
            if let Some((f, _)) = fields.as_mut() {
                f.restore(dev)?;
            }
            self.sync_posf(dev)?;
            self.write_flag(dev, flag::OVERFLOW, 0)?;
            self.resize_list(dev, seen, flags[flag::CELL_FULL] != 0, "growing")?;
            self.step = step0;
            self.time = time0;
            self.forces_valid = valid0;
            return self.advance(dev, steps, params, dof, out, fields);
        }
        let raw = download(dev, &self.a.records, record as usize * RECORD_BYTES, "reading telemetry")?;
        let mut tele = self.records_to_telemetry(&unpack(&raw, 8), record as usize, dof);
        let body_forces = self.body_records(dev, record as usize)?;
        let zone = self.tunnel_records(dev, record as usize)?;
        for ((t, b), z) in tele.iter_mut().zip(body_forces).zip(zone) {
            t.time = time0 + (t.step - step0) as f64 * params.dt;
            t.body_forces = b;
            (t.tunnel_momentum, t.tunnel_heat) = (z.momentum, z.heat);
        }
        out.extend(tele);
        self.step = step0 + steps;
        self.time = time0 + steps as f64 * params.dt;
        self.forces_valid = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_cells_hold_about_24_atoms() {
        // in.lj at a million atoms: 38 cells of 2.83 sigma (19 atoms) at the list range, 35 of
        // 3.07 (24.5 atoms) for the build.
        let edge = (1_048_576.0f64 / 0.8442).cbrt();
        let b = SimBox::new([edge; 3], [true; 3]);
        assert_eq!(CellSetup::new(&b, 2.8).unwrap().dims, [38; 3]);
        assert_eq!(CellSetup::for_lists(&b, 2.8, 2.5, 1_048_576).unwrap().dims, [35; 3]);
        // A dilute gas: at most 10% wider than the range; a dense liquid: the range.
        assert_eq!(CellSetup::for_lists(&b, 2.8, 2.5, 10_000).unwrap().dims, [34; 3]);
        assert_eq!(CellSetup::for_lists(&b, 2.8, 2.5, 4_000_000).unwrap().dims, [38; 3]);
        // A periodic depth of two range-wide cells but not three is one column deep, and the
        // width across gives about 24 atoms a column (at least the range).
        let slab = SimBox::new([40.0, 40.0, 5.9], [true; 3]);
        assert_eq!(CellSetup::for_lists(&slab, 2.8, 2.5, 8_000).unwrap().dims, [14, 14, 1]);
        let dilute = SimBox::new([40.0, 40.0, 5.9], [true; 3]);
        assert_eq!(CellSetup::for_lists(&dilute, 2.8, 2.5, 3_000).unwrap().dims, [12, 12, 1]);
        // The vortex street's slab (862 x 404 x 5.6463 at density 0.6): 307 x 144 columns of
        // 27 atoms at the range's width.
        let street = SimBox::new([862.0, 404.0, 5.6463], [true; 3]);
        assert_eq!(CellSetup::for_lists(&street, 2.8, 2.5, 1_174_416).unwrap().dims, [307, 144, 1]);
        // Three cells deep: no column.
        assert_eq!(
            CellSetup::for_lists(&SimBox::new([40.0, 40.0, 8.5], [true; 3]), 2.8, 2.5, 11_000).unwrap().dims[2],
            3
        );
        // A wider skin in the street: the range (3.0) past half the depth, still one column.
        assert_eq!(CellSetup::for_lists(&street, 3.0, 2.5, 1_174_416).unwrap().dims, [287, 134, 1]);
        // The cell-list forces keep two cells.
        assert_eq!(CellSetup::new(&street, 2.8).unwrap().dims[2], 2);
        // Shorter than twice the range but not than twice the cut-off: a column; shorter than
        // twice the cut-off: no lists.
        assert_eq!(CellSetup::for_lists(&SimBox::new([5.5, 20.0, 20.0], [true; 3]), 2.8, 2.5, 500).unwrap().dims[0], 1);
        assert!(CellSetup::for_lists(&SimBox::new([4.9, 20.0, 20.0], [true; 3]), 2.8, 2.5, 500).is_none());
    }

    #[test]
    fn morton_ranks_are_a_permutation() {
        let b = SimBox::new([20.0, 15.0, 9.0], [true, false, true]);
        let cs = CellSetup::new(&b, 2.8).unwrap();
        let mut r = cs.rank.clone();
        r.sort();
        assert_eq!(r, (0..cs.rank.len() as i32).collect::<Vec<_>>());
        // Two cells along a periodic axis (a thin slab) work; fewer do not.
        assert_eq!(CellSetup::new(&SimBox::new([20.0, 15.0, 6.84], [true; 3]), 2.8).unwrap().dims[2], 2);
        assert!(CellSetup::new(&SimBox::new([5.5, 20.0, 20.0], [true; 3]), 2.8).is_none());
        // Walled axes take a single cell.
        assert_eq!(CellSetup::new(&SimBox::new([20.0, 15.0, 2.0], [true, true, false]), 2.8).unwrap().dims[2], 1);
    }
}
