//! One simulation resident on the GPU at one precision: device arrays, the step sequence
//! (kick-drift, gated cell/list rebuild, forces, kick, thermostat), telemetry records, and
//! the copies to and from the host that snapshots and analysis need. Mirrors
//! `sim/cpu/state.rs`; only telemetry and requested data cross PCIe.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DevicePtr};

use super::consts::{Bufs, Consts, flag};
use super::device::Device;
use super::graph::StepGraph;
use super::launch::{Launcher, Module, Over};

mod steps;
use crate::analysis;
use crate::physics::lj::{LjPair, PairCoeffs, Table};
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{Algorithm, SimParams, Thermostat};
use crate::physics::piston::{PistonParams, PistonState, PistonTelemetry};
use crate::physics::real::Precision;
use crate::physics::sim_box::SimBox;
use crate::sim::{AtomState, SimError, Snapshot, Telemetry};
use steps::segments;

/// The piston's device words for state `s`: height, velocity, no push yet, not dragged.
fn piston_bytes(s: PistonState) -> Vec<u8> {
    [s.height, s.velocity, 0.0, s.height, 0.0].iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Bytes of one telemetry record (12 doubles, written by `finish_step`).
const RECORD_BYTES: usize = 96;

/// Bytes of one real of the state and of the force arithmetic.
pub fn real_sizes(p: Precision) -> (usize, usize) {
    match p {
        Precision::Single => (4, 4),
        Precision::Mixed => (8, 4),
        Precision::Double => (8, 8),
    }
}

fn pack(values: impl Iterator<Item = f64>, size: usize) -> Vec<u8> {
    if size == 4 {
        values.flat_map(|x| (x as f32).to_le_bytes()).collect()
    } else {
        values.flat_map(|x| x.to_le_bytes()).collect()
    }
}

fn unpack(bytes: &[u8], size: usize) -> Vec<f64> {
    if size == 4 {
        bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64).collect()
    } else {
        bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect()
    }
}

fn dev_err(what: &str) -> impl Fn(cudarc::driver::DriverError) -> SimError + '_ {
    move |e| SimError::Device(format!("{what}: {e}"))
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
    /// Cells at least `range` wide; None when a periodic axis would have fewer than three.
    pub fn new(b: &SimBox, range: f64) -> Option<CellSetup> {
        let len = b.length();
        let mut cell = range;
        loop {
            let dims: [usize; 3] = std::array::from_fn(|k| ((len[k] / cell).floor() as usize).max(1));
            if (0..3).any(|k| b.periodic[k] && dims[k] < 3) {
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
            cell *= 1.26;
        }
    }
}

/// Room per atom in the neighbour list: generous for any liquid (density 1.3), grown on overflow.
pub fn initial_max_neighbours(range: f64) -> usize {
    let estimate = 4.0 / 3.0 * std::f64::consts::PI * range.powi(3) * 1.3 + 32.0;
    (estimate as usize).div_ceil(32) * 32
}

/// A device array that may not be allocated yet.
type Slot = Option<CudaSlice<u8>>;

/// Atoms in canonical order from raw device arrays: `n` positions and velocities of `s`-byte
/// reals (x, y, z, type / 0) and their u32 canonical ids.
fn canonical(n: usize, s: usize, pos: &[u8], vel: &[u8], ids: &[u8]) -> AtomState {
    let (pos, vel) = (unpack(pos, s), unpack(vel, s));
    let mut atoms = AtomState { positions: vec![[0.0; 3]; n], velocities: vec![[0.0; 3]; n], types: vec![0; n] };
    for (k, id) in ids.chunks_exact(4).enumerate().take(n) {
        let i = u32::from_le_bytes([id[0], id[1], id[2], id[3]]) as usize;
        atoms.positions[i] = [pos[4 * k], pos[4 * k + 1], pos[4 * k + 2]];
        atoms.velocities[i] = [vel[4 * k], vel[4 * k + 1], vel[4 * k + 2]];
        atoms.types[i] = pos[4 * k + 3] as u32;
    }
    atoms
}

/// Device copies of positions, velocities and ids at one step (a rollback point).
pub struct DeviceCheckpoint {
    pos: CudaSlice<u8>,
    vel: CudaSlice<u8>,
    ids: CudaSlice<u8>,
    pub n: usize,
    pub precision: Precision,
    pub step: u64,
    pub time: f64,
    /// The piston's height and velocity then.
    piston: Option<PistonState>,
}

#[derive(Default)]
struct Arrays {
    pos: Option<CudaSlice<u8>>,
    vel: Option<CudaSlice<u8>>,
    force: Option<CudaSlice<u8>>,
    posf: Option<CudaSlice<u8>>,
    pos_build: Option<CudaSlice<u8>>,
    ids: Option<CudaSlice<u8>>,
    pos2: Option<CudaSlice<u8>>,
    vel2: Option<CudaSlice<u8>>,
    ids2: Option<CudaSlice<u8>>,
    masses: Option<CudaSlice<u8>>,
    table: Option<CudaSlice<u8>>,
    obs_start: Option<CudaSlice<u8>>,
    obs_cand: Option<CudaSlice<u8>>,
    obs_prims: Option<CudaSlice<u8>>,
    obs_verts: Option<CudaSlice<u8>>,
    obs_force: Option<CudaSlice<u8>>,
    cell_count: Option<CudaSlice<u8>>,
    cell_start: Option<CudaSlice<u8>>,
    cell_rank: Option<CudaSlice<u8>>,
    cell_of: Option<CudaSlice<u8>>,
    slot: Option<CudaSlice<u8>>,
    order: Option<CudaSlice<u8>>,
    nlist: Option<CudaSlice<u8>>,
    ncount: Option<CudaSlice<u8>>,
    partials_ev: Option<CudaSlice<u8>>,
    partials_kin: Option<CudaSlice<u8>>,
    lambda: Option<CudaSlice<u8>>,
    records: Option<CudaSlice<u8>>,
    flags: Option<CudaSlice<u8>>,
    blowup_step: Option<CudaSlice<u8>>,
    clock: Option<CudaSlice<u8>>,
    scan_sums: Option<CudaSlice<u8>>,
    pair_acc: Option<CudaSlice<u8>>,
    piston: Option<CudaSlice<u8>>,
    piston_part: Option<CudaSlice<u8>>,
    // Copies taken at the start of an advance, to redo it after a list overflow.
    pos_bak: Option<CudaSlice<u8>>,
    vel_bak: Option<CudaSlice<u8>>,
    ids_bak: Option<CudaSlice<u8>>,
    force_bak: Option<CudaSlice<u8>>,
    piston_bak: Option<CudaSlice<u8>>,
}

/// A simulation on the device.
pub struct Engine {
    pub precision: Precision,
    pub n: usize,
    pub sim_box: SimBox,
    pub step: u64,
    pub time: f64,
    /// The algorithm that runs (Auto resolved; cells and lists fall back to all pairs in
    /// boxes too small for three cells).
    pub algorithm: Algorithm,
    module: Arc<Module>,
    a: Arrays,
    bufs: Bufs,
    consts: Consts,
    /// Device buffer positions are published into before they are copied to the host
    /// (kept between calls: allocating 16 MB per frame at a million atoms costs milliseconds).
    staging: Option<CudaSlice<u8>>,
    cells: Option<CellSetup>,
    forces_valid: bool,
    records_cap: usize,
    n_blocks: usize,
    /// Instantiated step graphs by (steps, telemetry on the last, thermostat on); emptied
    /// whenever constants or buffers change, since graphs hold them by value.
    graphs: std::collections::HashMap<(u64, bool, bool), StepGraph>,
    /// False when turned off (`CudaBackend::set_step_graphs`) or after a graph could not be
    /// built: steps are launched one kernel at a time.
    pub use_graphs: bool,
    /// The piston's settings while there is one (its state lives in `a.piston`).
    piston: Option<PistonParams>,
    /// The piston state to start from at the next `configure` (from a snapshot).
    piston_seed: Option<PistonState>,
}

fn alloc(dev: &Device, bytes: usize, what: &str) -> Result<CudaSlice<u8>, SimError> {
    dev.stream.alloc_zeros::<u8>(bytes.max(16)).map_err(dev_err(what))
}

fn upload(dev: &Device, data: &[u8], what: &str) -> Result<CudaSlice<u8>, SimError> {
    let mut s = alloc(dev, data.len(), what)?;
    if !data.is_empty() {
        dev.stream.memcpy_htod(data, &mut s).map_err(dev_err(what))?;
    }
    Ok(s)
}

fn ptr(dev: &Device, s: &Option<CudaSlice<u8>>) -> u64 {
    match s {
        Some(s) => s.device_ptr(&dev.stream).0,
        None => 0,
    }
}

fn download(dev: &Device, s: &Option<CudaSlice<u8>>, bytes: usize, what: &str) -> Result<Vec<u8>, SimError> {
    let s = s.as_ref().ok_or_else(|| SimError::Device(format!("{what}: not allocated")))?;
    let mut out = vec![0u8; bytes];
    if bytes > 0 {
        dev.stream.memcpy_dtoh(&s.slice(0..bytes), &mut out).map_err(dev_err(what))?;
    }
    dev.stream.synchronize().map_err(dev_err(what))?;
    Ok(out)
}

/// Bytes the device arrays of `n` atoms need (for the memory check before allocating).
pub fn bytes_needed(n: usize, precision: Precision, max_nbrs: usize, with_list: bool) -> usize {
    let (s, f) = real_sizes(precision);
    // The last 32: per-atom obstacle forces, when there are obstacles.
    let per_atom = 7 * 4 * s + 2 * 4 * f + if precision == Precision::Mixed { 16 } else { 0 } + 7 * 4 + 16 + 32;
    n * per_atom + if with_list { n * max_nbrs * 4 } else { 0 } + (1 << 20)
}

/// Refuses `n` atoms when their arrays would not fit in 90% of `free_bytes`, naming the
/// largest system that would.
pub fn memory_check(
    n: usize,
    precision: Precision,
    list_range: f64,
    free_bytes: usize,
    device: &str,
) -> Result<(), SimError> {
    let max_nbrs = initial_max_neighbours(list_range);
    let needed = bytes_needed(n, precision, max_nbrs, true);
    let usable = free_bytes as f64 * 0.9;
    if needed as f64 > usable {
        let per_atom = (bytes_needed(1_000_000, precision, max_nbrs, true) - bytes_needed(0, precision, max_nbrs, true))
            as f64
            / 1e6;
        return Err(SimError::OutOfMemory {
            what: format!("{n} atoms in {} precision on {device}", precision.name()),
            needed_mb: needed as f64 / 1e6,
            available_mb: usable / 1e6,
            max_atoms: ((usable - (1 << 20) as f64).max(0.0) / per_atom) as usize,
        });
    }
    Ok(())
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
            consts: Consts::default(),
            staging: None,
            cells: None,
            forces_valid: false,
            records_cap: 0,
            n_blocks: 0,
            graphs: std::collections::HashMap::new(),
            use_graphs: true,
            piston: None,
            piston_seed: snap.piston,
        };
        e.check_memory(dev, params)?;
        e.upload_state(dev, &snap.atoms)?;
        e.configure(dev, params, field, dof)?;
        Ok(e)
    }

    fn check_memory(&self, dev: &Device, params: &SimParams) -> Result<(), SimError> {
        let (free, _total) = dev.ctx.mem_get_info().map_err(dev_err("reading free GPU memory"))?;
        memory_check(self.n, self.precision, params.list_range(), free, &dev.name)
    }

    fn upload_state(&mut self, dev: &Device, atoms: &AtomState) -> Result<(), SimError> {
        let (s, f) = real_sizes(self.precision);
        let n = self.n;
        let pos = pack(atoms.positions.iter().zip(&atoms.types).flat_map(|(p, &t)| [p[0], p[1], p[2], t as f64]), s);
        let vel = pack(atoms.velocities.iter().flat_map(|v| [v[0], v[1], v[2], 0.0]), s);
        let ids: Vec<u8> = (0..n as u32).flat_map(|i| i.to_le_bytes()).collect();
        self.a.pos = Some(upload(dev, &pos, "uploading positions")?);
        self.a.vel = Some(upload(dev, &vel, "uploading velocities")?);
        self.a.ids = Some(upload(dev, &ids, "uploading atom ids")?);
        self.a.pos_build = Some(upload(dev, &pos, "uploading positions")?);
        self.a.posf = if self.precision == Precision::Mixed {
            let posf =
                pack(atoms.positions.iter().zip(&atoms.types).flat_map(|(p, &t)| [p[0], p[1], p[2], t as f64]), 4);
            Some(upload(dev, &posf, "uploading positions")?)
        } else {
            None
        };
        self.a.force = Some(alloc(dev, n * 4 * f, "allocating forces")?);
        self.a.pos2 = Some(alloc(dev, n * 4 * s, "allocating scratch")?);
        self.a.vel2 = Some(alloc(dev, n * 4 * s, "allocating scratch")?);
        self.a.ids2 = Some(alloc(dev, n * 4, "allocating scratch")?);
        self.a.cell_of = Some(alloc(dev, n * 4, "allocating cell indices")?);
        self.a.slot = Some(alloc(dev, n * 4, "allocating cell slots")?);
        self.a.order = Some(alloc(dev, n * 4, "allocating the sort order")?);
        self.a.ncount = Some(alloc(dev, n * 4, "allocating neighbour counts")?);
        self.a.lambda = Some(alloc(dev, 8, "allocating the thermostat factor")?);
        let mut flags = [0i32; flag::COUNT];
        flags[flag::REBUILD as usize] = 1;
        flags[flag::ALWAYS as usize] = 1;
        let fb: Vec<u8> = flags.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.a.flags = Some(upload(dev, &fb, "uploading flags")?);
        self.a.blowup_step = Some(upload(dev, &u64::MAX.to_le_bytes(), "uploading flags")?);
        self.a.clock = Some(alloc(dev, 16, "allocating the step clock")?);
        self.forces_valid = false;
        Ok(())
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

        let wanted = params.algorithm.resolve(n, &self.sim_box, params.list_range());
        let range = match wanted {
            Algorithm::Cells => params.cutoff,
            _ => params.list_range(),
        };
        self.cells = match wanted {
            Algorithm::Cells | Algorithm::Neighbors => CellSetup::new(&self.sim_box, range),
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
        if self.algorithm == Algorithm::Neighbors {
            let max_nbrs = initial_max_neighbours(params.list_range());
            c.max_nbrs = max_nbrs as i32;
            self.a.nlist = Some(alloc(dev, n * max_nbrs * 4, "allocating the neighbour list")?);
        } else {
            self.a.nlist = None;
        }
        self.configure_piston(dev, params)?;
        self.consts = c;
        self.set_block_arrays(dev)?;
        self.request_rebuild(dev)?;
        self.forces_valid = false;
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
            // Up to 8 threads per atom in the neighbour-list force kernel; up to 8 blocks per
            // tile and one per tile more in the symmetric all-pairs kernels.
            let ev_blocks = self.n.div_ceil(self.module.block as usize) * 9 + 16;
            self.a.partials_ev = Some(alloc(dev, ev_blocks * 32, "allocating partial sums")?);
            self.a.partials_kin = Some(alloc(dev, blocks * 32, "allocating partial sums")?);
            self.n_blocks = blocks;
        }
        Ok(())
    }

    /// Switches to another compiled module (block size); state is untouched.
    pub fn set_module(&mut self, dev: &Device, module: Arc<Module>) -> Result<(), SimError> {
        self.module = module;
        self.set_block_arrays(dev)?;
        self.refresh_bufs(dev);
        Ok(())
    }

    fn request_rebuild(&mut self, dev: &Device) -> Result<(), SimError> {
        if let Some(f) = self.a.flags.as_mut() {
            let one = 1i32.to_le_bytes();
            let mut v = f.slice_mut(0..4);
            dev.stream.memcpy_htod(&one[..], &mut v).map_err(dev_err("requesting a list rebuild"))?;
        }
        Ok(())
    }

    fn refresh_bufs(&mut self, dev: &Device) {
        self.graphs.clear();
        let a = &self.a;
        let posf = if self.precision == Precision::Mixed { ptr(dev, &a.posf) } else { ptr(dev, &a.pos) };
        self.bufs = Bufs {
            pos: ptr(dev, &a.pos),
            vel: ptr(dev, &a.vel),
            force: ptr(dev, &a.force),
            posf,
            pos_build: ptr(dev, &a.pos_build),
            ids: ptr(dev, &a.ids),
            pos2: ptr(dev, &a.pos2),
            vel2: ptr(dev, &a.vel2),
            ids2: ptr(dev, &a.ids2),
            masses: ptr(dev, &a.masses),
            table: ptr(dev, &a.table),
            obs_start: ptr(dev, &a.obs_start),
            obs_cand: ptr(dev, &a.obs_cand),
            obs_prims: ptr(dev, &a.obs_prims),
            obs_verts: ptr(dev, &a.obs_verts),
            obs_force: ptr(dev, &a.obs_force),
            cell_count: ptr(dev, &a.cell_count),
            cell_start: ptr(dev, &a.cell_start),
            cell_rank: ptr(dev, &a.cell_rank),
            cell_of: ptr(dev, &a.cell_of),
            slot: ptr(dev, &a.slot),
            order: ptr(dev, &a.order),
            nlist: ptr(dev, &a.nlist),
            ncount: ptr(dev, &a.ncount),
            partials_ev: ptr(dev, &a.partials_ev),
            partials_kin: ptr(dev, &a.partials_kin),
            lambda: ptr(dev, &a.lambda),
            records: ptr(dev, &a.records),
            flags: ptr(dev, &a.flags),
            blowup_step: ptr(dev, &a.blowup_step),
            hist: 0,
            out: 0,
            clock: ptr(dev, &a.clock),
            scan_sums: ptr(dev, &a.scan_sums),
            pair_acc: ptr(dev, &a.pair_acc),
            piston: ptr(dev, &a.piston),
            piston_part: ptr(dev, &a.piston_part),
        };
    }

    fn launcher<'a>(&'a self, dev: &'a Device) -> Launcher<'a> {
        Launcher { stream: &dev.stream, module: &self.module, c: &self.consts, b: &self.bufs }
    }

    fn ensure_records(&mut self, dev: &Device, count: usize) -> Result<(), SimError> {
        if count > self.records_cap || self.a.records.is_none() {
            let cap = count.max(16);
            self.a.records = Some(alloc(dev, cap * RECORD_BYTES, "allocating telemetry records")?);
            self.records_cap = cap;
            self.refresh_bufs(dev);
        }
        Ok(())
    }

    fn read_flags(&self, dev: &Device) -> Result<([i32; flag::COUNT], u64), SimError> {
        let f = download(dev, &self.a.flags, flag::COUNT * 4, "reading flags")?;
        let mut flags = [0i32; flag::COUNT];
        for (k, c) in f.chunks_exact(4).enumerate() {
            flags[k] = i32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let s = download(dev, &self.a.blowup_step, 8, "reading flags")?;
        Ok((flags, u64::from_le_bytes(s.try_into().expect("8 bytes"))))
    }

    fn write_flag(&mut self, dev: &Device, index: usize, value: i32) -> Result<(), SimError> {
        if let Some(f) = self.a.flags.as_mut() {
            let mut v = f.slice_mut(index * 4..index * 4 + 4);
            dev.stream.memcpy_htod(&value.to_le_bytes()[..], &mut v).map_err(dev_err("writing a flag"))?;
        }
        Ok(())
    }

    fn records_to_telemetry(&self, raw: &[f64], count: usize, dof: f64) -> Vec<Telemetry> {
        (0..count)
            .map(|k| {
                let r = &raw[12 * k..12 * k + 12];
                let virial = r[3] + r[5];
                // With a piston: its height and push at the record's step (integrate.cu).
                let piston = self.piston.as_ref().map(|p| {
                    let s = PistonState { height: r[10], velocity: r[9] };
                    PistonTelemetry::new(&s, p, &self.sim_box, r[11])
                });
                let volume = piston.map_or(self.sim_box.volume(), |p| p.volume);
                Telemetry {
                    step: r[0] as u64,
                    time: 0.0,
                    n_atoms: self.n,
                    dof,
                    temperature: analysis::temperature(r[1], dof),
                    kinetic_energy: 0.5 * r[1],
                    pair_energy: r[2],
                    external_energy: r[4],
                    virial,
                    pressure: analysis::pressure(r[1], virial, volume),
                    volume,
                    momentum: [r[6], r[7], r[8]],
                    piston,
                    steps_per_s: 0.0,
                    mc: Default::default(),
                }
            })
            .collect()
    }

    fn backup(&mut self, dev: &Device) -> Result<(), SimError> {
        let pairs: [(&Slot, &mut Slot); 5] = [
            (&self.a.pos, &mut self.a.pos_bak),
            (&self.a.vel, &mut self.a.vel_bak),
            (&self.a.ids, &mut self.a.ids_bak),
            (&self.a.force, &mut self.a.force_bak),
            (&self.a.piston, &mut self.a.piston_bak),
        ];
        for (src, dst) in pairs {
            if let Some(src) = src {
                if dst.as_ref().map(|d| d.len()) != Some(src.len()) {
                    *dst = Some(alloc(dev, src.len(), "allocating a backup")?);
                }
                if let Some(d) = dst.as_mut() {
                    dev.stream.memcpy_dtod(src, d).map_err(dev_err("taking a backup"))?;
                }
            }
        }
        Ok(())
    }

    fn restore_backup(&mut self, dev: &Device) -> Result<(), SimError> {
        let pairs: [(&Slot, &mut Slot); 5] = [
            (&self.a.pos_bak, &mut self.a.pos),
            (&self.a.vel_bak, &mut self.a.vel),
            (&self.a.ids_bak, &mut self.a.ids),
            (&self.a.force_bak, &mut self.a.force),
            (&self.a.piston_bak, &mut self.a.piston),
        ];
        for (src, dst) in pairs {
            if let (Some(s), Some(d)) = (src, dst.as_mut()) {
                dev.stream.memcpy_dtod(s, d).map_err(dev_err("restoring a backup"))?;
            }
        }
        Ok(())
    }

    /// Device copies of the state for rolling back after a blow-up (reusing `reuse`'s buffers
    /// when they fit).
    pub fn checkpoint(&self, dev: &Device, reuse: Option<DeviceCheckpoint>) -> Result<DeviceCheckpoint, SimError> {
        let copy = |src: &Slot, old: Option<CudaSlice<u8>>| -> Result<CudaSlice<u8>, SimError> {
            let src = src.as_ref().ok_or_else(|| SimError::Device("there is no state to checkpoint".into()))?;
            let mut dst = match old {
                Some(d) if d.len() == src.len() => d,
                _ => alloc(dev, src.len(), "allocating a checkpoint")?,
            };
            dev.stream.memcpy_dtod(src, &mut dst).map_err(dev_err("taking a checkpoint"))?;
            Ok(dst)
        };
        let (pos, vel, ids) = match reuse {
            Some(c) => (Some(c.pos), Some(c.vel), Some(c.ids)),
            None => (None, None, None),
        };
        Ok(DeviceCheckpoint {
            pos: copy(&self.a.pos, pos)?,
            vel: copy(&self.a.vel, vel)?,
            ids: copy(&self.a.ids, ids)?,
            n: self.n,
            precision: self.precision,
            step: self.step,
            time: self.time,
            piston: self.piston_state(dev)?,
        })
    }

    /// Returns to `cp` (same atom count and precision): state, step and time; the blow-up
    /// flags are cleared and the lists rebuilt.
    pub fn roll_back_to(&mut self, dev: &Device, cp: &DeviceCheckpoint) -> Result<(), SimError> {
        for (src, dst) in [(&cp.pos, &mut self.a.pos), (&cp.vel, &mut self.a.vel), (&cp.ids, &mut self.a.ids)] {
            if let Some(d) = dst.as_mut() {
                dev.stream.memcpy_dtod(src, d).map_err(dev_err("rolling back"))?;
            }
        }
        self.sync_posf(dev)?;
        for (f, v) in [(flag::BLOWUP, 0), (flag::ESCAPE, 0), (flag::OVERFLOW, 0), (flag::REBUILD as usize, 1)] {
            self.write_flag(dev, f, v)?;
        }
        self.a.blowup_step = Some(upload(dev, &u64::MAX.to_le_bytes(), "resetting flags")?);
        self.refresh_bufs(dev);
        self.step = cp.step;
        self.time = cp.time;
        if let (Some(p), Some(s)) = (self.a.piston.as_mut(), cp.piston) {
            let bytes = piston_bytes(s);
            dev.stream.memcpy_htod(&bytes[..], p).map_err(dev_err("rolling back the piston"))?;
        }
        self.forces_valid = false;
        Ok(())
    }

    /// Mixed precision keeps an f32 copy of the positions: refresh it from the state.
    fn sync_posf(&mut self, dev: &Device) -> Result<(), SimError> {
        if self.precision == Precision::Mixed {
            let raw = download(dev, &self.a.pos, self.n * 32, "reading positions")?;
            let posf = pack(unpack(&raw, 8).into_iter(), 4);
            if let Some(p) = self.a.posf.as_mut() {
                dev.stream.memcpy_htod(&posf[..], p).map_err(dev_err("refreshing f32 positions"))?;
            }
        }
        Ok(())
    }

    /// Advances `steps` steps, appending telemetry for steps divisible by `every`.
    pub fn advance(
        &mut self,
        dev: &Device,
        steps: u64,
        params: &SimParams,
        dof: f64,
        out: &mut Vec<Telemetry>,
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
        }
        let (step0, time0, valid0) = (self.step, self.time, self.forces_valid);
        if !self.forces_valid {
            self.queue_lists(dev)?;
            let l = self.launcher(dev);
            self.launch_forces(&l, false)?;
        }
        let thermostat_on = matches!(params.thermostat, Thermostat::Berendsen { .. } | Thermostat::Csvr { .. });
        let mut record = 0i32;
        self.set_clock(dev, step0)?;
        for (k, ev_last) in segments(step0, steps, every) {
            self.launch_steps(dev, k, ev_last, thermostat_on)?;
            record += i32::from(ev_last);
        }
        dev.stream.synchronize().map_err(|e| {
            SimError::Device(format!(
                "running the step kernels (integrate_first, {}{}, integrate_second, finish_step) failed: {e}. \
                 Run with CUDA_LAUNCH_BLOCKING=1 to have the failing kernel named",
                if self.consts.has_obstacles != 0 { "obstacle_pass, " } else { "" },
                self.force_kernel(false).trim_end_matches("_noev"),
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
            // Some list was cut short: redo the whole call with room for the largest seen.
            let seen = flags[flag::MAX_NBRS_SEEN].max(self.consts.max_nbrs) as usize;
            let max_nbrs = (seen + seen / 4 + 32).div_ceil(32) * 32;
            self.restore_backup(dev)?;
            self.sync_posf(dev)?;
            self.consts.max_nbrs = max_nbrs as i32;
            self.a.nlist = Some(alloc(dev, self.n * max_nbrs * 4, "growing the neighbour list")?);
            self.write_flag(dev, flag::OVERFLOW, 0)?;
            self.write_flag(dev, flag::REBUILD as usize, 1)?;
            self.refresh_bufs(dev);
            self.step = step0;
            self.time = time0;
            self.forces_valid = valid0;
            return self.advance(dev, steps, params, dof, out);
        }
        let raw = download(dev, &self.a.records, record as usize * RECORD_BYTES, "reading telemetry")?;
        let mut tele = self.records_to_telemetry(&unpack(&raw, 8), record as usize, dof);
        for t in tele.iter_mut() {
            t.time = time0 + (t.step - step0) as f64 * params.dt;
        }
        out.extend(tele);
        self.step = step0 + steps;
        self.time = time0 + steps as f64 * params.dt;
        self.forces_valid = true;
        Ok(())
    }

    /// Telemetry of the current state (forces recomputed with energies).
    pub fn measure(&mut self, dev: &Device, dof: f64) -> Result<Telemetry, SimError> {
        self.ensure_records(dev, 1)?;
        self.set_clock(dev, self.step)?;
        self.queue_lists(dev)?;
        let l = self.launcher(dev);
        self.launch_forces(&l, true)?;
        l.run(l.integrate_second_call(0))?;
        l.run(Some(l.finish_step_call(self.n_blocks as i32, self.ev_blocks(), 1, 0)))?;
        let raw = download(dev, &self.a.records, RECORD_BYTES, "reading telemetry")?;
        self.forces_valid = true;
        let mut t = self.records_to_telemetry(&unpack(&raw, 8), 1, dof).remove(0);
        t.time = self.time;
        if self.n == 0 {
            t = Telemetry { step: self.step, time: self.time, dof, ..Telemetry::default() };
        }
        Ok(t)
    }

    fn ids(&self, dev: &Device) -> Result<Vec<usize>, SimError> {
        let raw = download(dev, &self.a.ids, self.n * 4, "reading atom ids")?;
        Ok(raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize).collect())
    }

    /// Forces at the current positions, canonical order.
    pub fn forces(&mut self, dev: &Device) -> Result<Vec<[f64; 3]>, SimError> {
        self.queue_lists(dev)?;
        self.launch_forces(&self.launcher(dev), false)?;
        self.forces_valid = true;
        let (_, f) = real_sizes(self.precision);
        let raw = unpack(&download(dev, &self.a.force, self.n * 4 * f, "reading forces")?, f);
        let ids = self.ids(dev)?;
        let mut out = vec![[0.0; 3]; self.n];
        for (s, &i) in ids.iter().enumerate() {
            out[i] = [raw[4 * s], raw[4 * s + 1], raw[4 * s + 2]];
        }
        Ok(out)
    }

    pub fn snapshot(&self, dev: &Device) -> Result<Snapshot, SimError> {
        let (s, _) = real_sizes(self.precision);
        let pos = download(dev, &self.a.pos, self.n * 4 * s, "reading positions")?;
        let vel = download(dev, &self.a.vel, self.n * 4 * s, "reading velocities")?;
        let ids = download(dev, &self.a.ids, self.n * 4, "reading atom ids")?;
        let atoms = canonical(self.n, s, &pos, &vel, &ids);
        let piston = self.piston_state(dev)?;
        Ok(Snapshot { sim_box: self.sim_box, atoms, step: self.step, time: self.time, piston })
    }

    /// The state held by checkpoint `cp` (of any atom count or precision), read back.
    pub fn checkpoint_state(&self, dev: &Device, cp: &DeviceCheckpoint) -> Result<Snapshot, SimError> {
        let (s, _) = real_sizes(cp.precision);
        let read = |c: &CudaSlice<u8>| dev.stream.clone_dtoh(c).map_err(dev_err("reading a checkpoint"));
        let atoms = canonical(cp.n, s, &read(&cp.pos)?, &read(&cp.vel)?, &read(&cp.ids)?);
        Ok(Snapshot { sim_box: self.sim_box, atoms, step: cp.step, time: cp.time, piston: cp.piston })
    }

    /// Runs a histogram kernel into a fresh counter array and returns the counts.
    fn histogram(
        &mut self,
        dev: &Device,
        bins: usize,
        run: impl Fn(&Launcher) -> Result<(), SimError>,
    ) -> Result<Vec<u64>, SimError> {
        let hist = alloc(dev, bins * 8, "allocating a histogram")?;
        let mut b = self.bufs;
        b.hist = hist.device_ptr(&dev.stream).0;
        run(&Launcher { stream: &dev.stream, module: &self.module, c: &self.consts, b: &b })?;
        let raw = download(dev, &Some(hist), bins * 8, "reading a histogram")?;
        Ok(raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
    }

    pub fn pair_counts(&mut self, dev: &Device, bins: usize, r_max: f64) -> Result<Vec<u64>, SimError> {
        if bins > 4096 {
            return Err(SimError::Invalid(format!("g(r) on the GPU takes at most 4096 bins (got {bins})")));
        }
        self.histogram(dev, bins, |l| l.hist_pairs(r_max, bins as i32))
    }

    pub fn speed_counts(&mut self, dev: &Device, bins: usize, v_max: f64) -> Result<Vec<u64>, SimError> {
        self.histogram(dev, bins, |l| l.hist_speed(v_max, bins as i32))
    }

    pub fn height_counts(&mut self, dev: &Device, bins: usize) -> Result<Vec<u64>, SimError> {
        self.histogram(dev, bins, |l| l.hist_height(bins as i32))
    }

    /// Writes float4 (x, y, z, colour) per atom in canonical order to the device address `out`.
    pub fn publish(&self, dev: &Device, out: u64, colour: i32) -> Result<(), SimError> {
        let mut b = self.bufs;
        b.out = out;
        Launcher { stream: &dev.stream, module: &self.module, c: &self.consts, b: &b }.publish(colour)
    }

    /// Publishes into host memory through a temporary device buffer.
    pub fn publish_to_host(&mut self, dev: &Device, out: &mut [[f32; 4]], colour: i32) -> Result<(), SimError> {
        let bytes = self.n * 16;
        if bytes == 0 {
            return Ok(());
        }
        if self.staging.as_ref().is_none_or(|s| s.len() < bytes) {
            self.staging = None;
            self.staging = Some(alloc(dev, bytes, "allocating the position buffer")?);
        }
        let staging = self.staging.as_ref().expect("allocated above");
        self.publish(dev, staging.device_ptr(&dev.stream).0, colour)?;
        let host: &mut [u8] = bytemuck::cast_slice_mut(&mut out[..self.n]);
        dev.stream.memcpy_dtoh(&staging.slice(0..bytes), host).map_err(dev_err("reading positions"))?;
        dev.stream.synchronize().map_err(dev_err("reading positions"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_atoms_are_refused_before_allocating_with_the_largest_that_fits() {
        let free = 8usize << 30;
        let e = memory_check(50_000_000, Precision::Double, 2.8, free, "test GPU").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("50000000 atoms") && msg.contains("largest system that fits"), "{msg}");
        let SimError::OutOfMemory { max_atoms, .. } = e else { panic!("{msg}") };
        assert!(memory_check(max_atoms, Precision::Double, 2.8, free, "test GPU").is_ok());
        assert!(memory_check(max_atoms + max_atoms / 50, Precision::Double, 2.8, free, "test GPU").is_err());
        // Single precision needs less memory per atom.
        assert!(memory_check(max_atoms + max_atoms / 50, Precision::Single, 2.8, free, "test GPU").is_ok());
    }

    #[test]
    fn morton_ranks_are_a_permutation() {
        let b = SimBox::new([20.0, 15.0, 9.0], [true, false, true]);
        let cs = CellSetup::new(&b, 2.8).unwrap();
        let mut r = cs.rank.clone();
        r.sort();
        assert_eq!(r, (0..cs.rank.len() as i32).collect::<Vec<_>>());
        assert!(CellSetup::new(&SimBox::new([8.0, 20.0, 20.0], [true; 3]), 2.8).is_none());
    }
}
