//! Compiled kernel modules (one per precision, block size and species count, cached) and one
//! launch function per kernel: the only place that calls `launch`. Every kernel takes the
//! [`Consts`] and [`Bufs`] structs by value, then its own scalars. The kernels of a time step
//! are described as [`Call`]s, which run at once or become nodes of a CUDA graph
//! (`graph.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg, sys};

use super::consts::{Bufs, Consts, FieldGridArgs};
use super::device::Device;
use super::source;
use crate::physics::real::Precision;
use crate::sim::SimError;

/// The kernels of one compiled variant.
pub struct Module {
    pub precision: Precision,
    pub block: u32,
    funcs: HashMap<&'static str, CudaFunction>,
}

impl Module {
    /// Compiles (NVRTC) and loads every kernel.
    pub fn load(dev: &Device, precision: Precision, block: u32, n_types: usize) -> Result<Module, SimError> {
        let ptx = source::compile(precision, block, n_types, dev.arch).map_err(SimError::Device)?;
        let module = dev
            .ctx
            .load_module(ptx)
            .map_err(|e| SimError::Device(format!("loading the compiled kernels ({}): {e}", precision.name())))?;
        let mut funcs = HashMap::new();
        for name in source::KERNELS.iter().chain(source::EXTRA_KERNELS.iter()).chain(source::RDF_KERNELS.iter()) {
            let f = module
                .load_function(name)
                .map_err(|e| SimError::Device(format!("kernel {name} is missing from the compiled module: {e}")))?;
            funcs.insert(*name, f);
        }
        Ok(Module { precision, block, funcs })
    }
}

/// The module for (precision, block size, species count) on `dev`, compiled on first use
/// and shared by every backend of the process.
pub fn module(dev: &Device, precision: Precision, block: u32, n_types: usize) -> Result<Arc<Module>, SimError> {
    type Key = (usize, Precision, u32, usize);
    static CACHE: std::sync::Mutex<Option<HashMap<Key, Arc<Module>>>> = std::sync::Mutex::new(None);
    let key = (dev.ordinal, precision, block, n_types);
    if let Some(m) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).get(&key) {
        return Ok(m.clone());
    }
    let m = Arc::new(Module::load(dev, precision, block, n_types)?);
    CACHE.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).insert(key, m.clone());
    Ok(m)
}

/// What a launch covers.
#[derive(Clone, Copy)]
pub enum Over {
    /// One thread per atom.
    Atoms,
    /// One thread per cell.
    Cells,
    /// One block.
    Single,
    /// `tpa` threads per atom (the neighbour-list force kernel).
    Lanes,
    /// One block of [`SCAN_THREADS`] (the cell prefix sum's top level).
    Scan,
    /// Blocks of [`SCAN_THREADS`] over the cells (the cell prefix sum's first pass).
    ScanBlocks,
    /// One warp per cell.
    CellWarps,
    /// One warp per cell in blocks of [`NB_BLOCK`] (the neighbour-list build).
    BuildWarps,
    /// One thread per bin of the flow grid of the thermostat and the thermal readout
    /// (`Consts::flow_bins`).
    FlowBins,
    /// One block of [`TOTAL_THREADS`] (the totals over per-block partials every step).
    Total,
}

/// Threads per block of the neighbour-list build (`NB_BLOCK` in kernels/cells.cu).
pub const NB_BLOCK: u32 = 128;

/// Threads of the one-block kernels that total per-block partials every step
/// (`TOTAL_THREADS` in kernels/reduce.cuh: finish_step, tunnel_latch).
pub const TOTAL_THREADS: u32 = 1024;

/// Threads of the one-block cell scan (`SCAN_THREADS` in kernels/cells.cu).
pub const SCAN_THREADS: u32 = 1024;

/// Cells per thread of the single-launch scan (`SCAN_ITEMS` in kernels/cells.cu), which
/// takes systems of up to `SCAN_THREADS * SCAN_ITEMS` cells.
pub const SCAN_ITEMS: u32 = 8;

/// Arguments of the g(r) kernels (`struct RdfArgs` in kernels/rdf.cu, field for field).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RdfArgs {
    pub r_max: f64,
    /// The centres' region `[lo, hi)` when `region` is 1.
    pub lo: [f64; 3],
    pub hi: [f64; 3],
    /// The analysis grid: cells per unit length and cells per axis.
    pub inv_cell: [f64; 3],
    pub dims: [i32; 3],
    pub n_cells: i32,
    pub bins: i32,
    pub region: i32,
}

const _: () = assert!(std::mem::size_of::<RdfArgs>() == 104);

// SAFETY: plain repr(C) data, mirrored by the kernel's struct.
unsafe impl cudarc::driver::DeviceRepr for RdfArgs {}

/// Arguments of the transport kernels (`struct TransportArgs` in kernels/transport.cu, field
/// for field): device addresses and the sampling constants; what changes from sample to
/// sample the kernels derive from the step.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransportArgs {
    pub u: u64,
    pub last: u64,
    pub origins: u64,
    pub partial: u64,
    pub records: u64,
    pub start: u64,
    pub every: u64,
    pub origin_every: u64,
    pub slots: i32,
    pub nsp: i32,
    pub msd: i32,
    pub blocks: i32,
    pub rows: i32,
    pub pad: i32,
}

const _: () = assert!(std::mem::size_of::<TransportArgs>() == 88);

// SAFETY: plain repr(C) data, mirrored by the kernel's struct.
unsafe impl cudarc::driver::DeviceRepr for TransportArgs {}

/// Launches kernels of one module on one stream with the current constants and buffers.
pub struct Launcher<'a> {
    pub stream: &'a Arc<CudaStream>,
    pub module: &'a Module,
    pub c: &'a Consts,
    pub b: &'a Bufs,
}

/// One kernel launch, described: function, shape and the bytes of each argument (kept in
/// 8-byte words), to launch now ([`Call::launch`]) or to add to a graph, which copies them.
pub struct Call {
    pub name: &'static str,
    pub func: sys::CUfunction,
    pub grid: u32,
    pub block: u32,
    args: Vec<Vec<u64>>,
}

impl Call {
    /// A launch of `func` (from any module) on `grid` blocks of `block` threads.
    pub fn of(name: &'static str, func: &CudaFunction, grid: u32, block: u32) -> Call {
        Call { name, func: func.cu_function(), grid, block, args: Vec::new() }
    }

    fn new(name: &'static str, func: &CudaFunction, cfg: LaunchConfig) -> Call {
        Call { name, func: func.cu_function(), grid: cfg.grid_dim.0, block: cfg.block_dim.0, args: Vec::new() }
    }

    /// Appends an argument by value (any plain-old-data the kernel declares at this place).
    pub fn arg<T: Copy>(mut self, v: &T) -> Call {
        let bytes = std::mem::size_of::<T>();
        let mut words = vec![0u64; bytes.div_ceil(8).max(1)];
        // SAFETY: `words` holds at least `bytes` bytes; T is Copy plain data read bytewise.
        unsafe { std::ptr::copy_nonoverlapping(v as *const T as *const u8, words.as_mut_ptr() as *mut u8, bytes) };
        self.args.push(words);
        self
    }

    /// Pointers to each argument's bytes, as cuLaunchKernel and kernel nodes take them.
    pub fn params(&mut self) -> Vec<*mut std::ffi::c_void> {
        self.args.iter_mut().map(|a| a.as_mut_ptr() as *mut std::ffi::c_void).collect()
    }

    /// Launches on `stream` (the context is current: the engine's stream calls bind it).
    pub fn launch(mut self, stream: &CudaStream) -> Result<(), SimError> {
        let mut params = self.params();
        // SAFETY: the argument bytes match the kernel's parameter list (built by the typed
        // methods of Launcher) and outlive the call, which copies them.
        unsafe {
            sys::cuLaunchKernel(
                self.func,
                self.grid,
                1,
                1,
                self.block,
                1,
                1,
                0,
                stream.cu_stream(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .map_err(err(self.name))
    }
}

/// `ARGON_CUDA_SKIP=name,name,...`: for measuring only, kernels left out of every step (those
/// launched over atoms, cells or one block: the passes and the rebuild's parts), so a bench
/// shows what each costs inside the step graphs. The physics is then wrong; the backend
/// warns when it opens.
fn skipped(name: &str) -> bool {
    static SKIP: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SKIP.get_or_init(|| {
        std::env::var("ARGON_CUDA_SKIP")
            .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect())
            .unwrap_or_default()
    })
    .iter()
    .any(|s| s == name)
}

fn err(name: &str) -> impl Fn(cudarc::driver::DriverError) -> SimError + '_ {
    move |e| SimError::Device(format!("kernel {name} failed to launch: {e}"))
}

impl Launcher<'_> {
    fn config(&self, over: Over, shared: u32) -> Option<LaunchConfig> {
        let block = match over {
            Over::Scan | Over::ScanBlocks => SCAN_THREADS,
            Over::Total => TOTAL_THREADS,
            Over::BuildWarps => NB_BLOCK,
            _ => self.module.block,
        };
        let items = match over {
            Over::Atoms => self.c.n.max(0) as u32,
            Over::Lanes => self.c.n.max(0) as u32 * self.c.tpa.max(1) as u32,
            Over::Cells | Over::ScanBlocks => self.c.n_cells.max(0) as u32,
            Over::CellWarps | Over::BuildWarps => self.c.n_cells.max(0) as u32 * 32,
            Over::FlowBins => self.c.flow_bins.max(0) as u32,
            Over::Single | Over::Scan | Over::Total => 1,
        };
        if items == 0 {
            return None;
        }
        let grid = match over {
            Over::Single | Over::Scan | Over::Total => 1,
            _ => items.div_ceil(block),
        };
        Some(LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: shared })
    }

    fn func(&self, name: &'static str) -> &CudaFunction {
        &self.module.funcs[name]
    }

    /// A described launch of `name` over `over` with (Consts, Bufs) as first arguments
    /// (none for a kernel `ARGON_CUDA_SKIP` leaves out).
    fn call(&self, name: &'static str, over: Over) -> Option<Call> {
        if skipped(name) {
            return None;
        }
        let cfg = self.config(over, 0)?;
        Some(Call::new(name, self.func(name), cfg).arg(self.c).arg(self.b))
    }

    /// `name` on `grid` blocks of the module's block size, with (Consts, Bufs) as first arguments.
    pub fn grid_call(&self, name: &'static str, grid: u32) -> Call {
        Call::of(name, self.func(name), grid, self.module.block).arg(self.c).arg(self.b)
    }

    /// A kernel taking only (Consts, Bufs).
    pub fn plain_call(&self, name: &'static str, over: Over) -> Option<Call> {
        self.call(name, over)
    }

    /// A kernel taking (Consts, Bufs, int gate): cell and list building, gated on a flag.
    pub fn gated_call(&self, name: &'static str, over: Over, gate: i32) -> Option<Call> {
        self.call(name, over).map(|c| c.arg(&gate))
    }

    /// One flow-field sample of every atom into the sums at `acc` (6 doubles for each of
    /// `grid`'s bins, then one per bin for the tagged atom-samples; the kernel's bins stay
    /// inside it), with the dye tags at `dye` (by canonical index; 0: none, nothing counted).
    pub fn fields_sample_call(&self, grid: &FieldGridArgs, acc: u64, dye: u64) -> Option<Call> {
        self.call("fields_sample", Over::Atoms).map(|c| c.arg(grid).arg(&acc).arg(&dye))
    }

    /// The flow bins' mass and momentum sums (`flow_bins_sum`).
    pub fn flow_bins_sum_call(&self) -> Option<Call> {
        self.call("flow_bins_sum", Over::Atoms)
    }

    /// Kick and drift of the step after the clock's (b.clock[0] + 1); `track` tests the skin.
    pub fn integrate_first_call(&self, track: i32, scale: bool) -> Option<Call> {
        self.call("integrate_first", Over::Atoms).map(|c| c.arg(&track).arg(&i32::from(scale)))
    }

    /// Second kick of the clock's step and first kick and drift of the next, in one pass.
    /// `kin_off` >= 0: the kinetic tensor's partials from there (a pressure-tensor step).
    pub fn integrate_fused_call(&self, track: i32, kin_off: i32) -> Option<Call> {
        self.call("integrate_fused", Over::Atoms).map(|c| c.arg(&track).arg(&kin_off))
    }

    /// Second kick of the clock's step (with `kick`; else only the kinetic sums).
    /// `kin_off` >= 0: the kinetic tensor's partials from there (a pressure-tensor step).
    pub fn integrate_second_call(&self, kick: i32, kin_off: i32) -> Option<Call> {
        self.call("integrate_second", Over::Atoms).map(|c| c.arg(&kick).arg(&kin_off))
    }

    /// Thermostat factor and (with `want`) the telemetry record of the clock's step.
    pub fn finish_step_call(&self, n_blocks: i32, n_ev_blocks: i32, want: i32, thermostat_on: i32) -> Call {
        let name = "finish_step";
        Call::of(name, self.func(name), 1, TOTAL_THREADS)
            .arg(self.c)
            .arg(self.b)
            .arg(&n_blocks)
            .arg(&n_ev_blocks)
            .arg(&want)
            .arg(&thermostat_on)
    }

    /// Launches a described call on this launcher's stream (nothing when there is no work).
    pub fn run(&self, call: Option<Call>) -> Result<(), SimError> {
        match call {
            Some(c) => c.launch(self.stream),
            None => Ok(()),
        }
    }

    /// All-pairs g(r) counts into b.hist (`a.bins` + 1 counters, the last for the centres).
    pub fn hist_pairs(&self, a: &RdfArgs) -> Result<(), SimError> {
        let name = "hist_pairs";
        let Some(cfg) = self.config(Over::Atoms, 4 * (a.bins as u32 + 1)) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(a);
        // SAFETY: (Consts, Bufs, RdfArgs); b.hist holds bins + 1 counters; shared memory sized.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    /// The analysis cell of every atom into `cell_of` (n ints) and the cells' counts into
    /// `count` (`a.n_cells` ints, zeroed).
    pub fn rdf_bin(&self, a: &RdfArgs, cell_of: u64, count: u64) -> Result<(), SimError> {
        let name = "rdf_bin";
        let Some(cfg) = self.config(Over::Atoms, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(a).arg(&cell_of).arg(&count);
        // SAFETY: (Consts, Bufs, RdfArgs, int*, int*); n and n_cells ints; cells < n_cells.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    /// Atoms into their cells' slots of `order` (n u32) from `cursor` (each cell's start).
    pub fn rdf_scatter(&self, cell_of: u64, cursor: u64, order: u64) -> Result<(), SimError> {
        let name = "rdf_scatter";
        let Some(cfg) = self.config(Over::Atoms, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&cell_of).arg(&cursor).arg(&order);
        // SAFETY: (Consts, Bufs, const int*, int*, unsigned*); the cursors start at the
        // exclusive prefix sums of the counts, so every slot stays below n.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    /// Cell-grid g(r) counts into b.hist (`a.bins` + 1 counters, the last for the centres).
    pub fn rdf_cells(&self, a: &RdfArgs, start: u64, order: u64, cell_of: u64) -> Result<(), SimError> {
        let name = "rdf_cells";
        let Some(cfg) = self.config(Over::Atoms, 4 * (a.bins as u32 + 1)) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(a).arg(&start).arg(&order).arg(&cell_of);
        // SAFETY: (Consts, Bufs, RdfArgs, const int*, const unsigned*, const int*): n_cells + 1
        // starts, n slots, n cells; b.hist holds bins + 1 counters; shared memory sized.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    pub fn hist_speed(&self, v_max: f64, bins: i32) -> Result<(), SimError> {
        let name = "hist_speed";
        let Some(cfg) = self.config(Over::Atoms, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&v_max).arg(&bins);
        // SAFETY: (Consts, Bufs, double, int); b.hist holds `bins` counters.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    /// One flow-field sample into the window's per-bin sums at device address `acc`.
    pub fn hist_height(&self, bins: i32) -> Result<(), SimError> {
        let name = "hist_height";
        let Some(cfg) = self.config(Over::Atoms, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&bins);
        // SAFETY: (Consts, Bufs, int); b.hist holds `bins` counters.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    /// A transport kernel's call (`kernels/transport.cu`): `transport_init` and
    /// `transport_sample` over the atoms, `transport_reduce` one block per origin slot. Its
    /// arrays hold n (origins: slots x n) entries by canonical index, `blocks` x slots x nsp
    /// partials (blocks: the atom launch's grid) and `rows` x slots x nsp records.
    pub fn transport_call(&self, name: &'static str, a: &TransportArgs) -> Option<Call> {
        if name == "transport_reduce" {
            return Some(self.grid_call(name, a.slots.max(1) as u32).arg(a));
        }
        self.call(name, Over::Atoms).map(|c| c.arg(a))
    }

    /// Blocks of an atom launch (`transport_sample`'s partial sums).
    pub fn atom_blocks(&self) -> u32 {
        self.config(Over::Atoms, 0).map_or(0, |c| c.grid_dim.0)
    }

    /// Positions and the colour scalar `colour` into `b.out`; `dye` the tags' device address
    /// (by canonical index; 0: none, all untagged).
    pub fn publish(&self, colour: i32, dye: u64) -> Result<(), SimError> {
        let name = "publish";
        let Some(cfg) = self.config(Over::Atoms, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&colour).arg(&dye);
        // SAFETY: (Consts, Bufs, int, pointer); b.out holds at least c.n float4s, `dye` (when
        // not 0) c.n u16 tags.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }
}
