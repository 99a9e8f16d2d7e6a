//! Compiled kernel modules (one per precision, block size and species count, cached) and one
//! launch function per kernel: the only place that calls `launch`. Every kernel takes the
//! [`Consts`] and [`Bufs`] structs by value, then its own scalars.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use super::consts::{Bufs, Consts};
use super::device::Device;
use super::source;
use crate::physics::params::Precision;
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
        for name in source::KERNELS.iter().chain(source::EXTRA_KERNELS.iter()) {
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
}

/// Launches kernels of one module on one stream with the current constants and buffers.
pub struct Launcher<'a> {
    pub stream: &'a Arc<CudaStream>,
    pub module: &'a Module,
    pub c: &'a Consts,
    pub b: &'a Bufs,
}

fn err(name: &str) -> impl Fn(cudarc::driver::DriverError) -> SimError + '_ {
    move |e| SimError::Device(format!("kernel {name} failed to launch: {e}"))
}

impl Launcher<'_> {
    fn config(&self, over: Over, shared: u32) -> Option<LaunchConfig> {
        let block = self.module.block;
        let items = match over {
            Over::Atoms => self.c.n.max(0) as u32,
            Over::Cells => self.c.n_cells.max(0) as u32,
            Over::Single => 1,
        };
        if items == 0 {
            return None;
        }
        let grid = match over {
            Over::Single => 1,
            _ => items.div_ceil(block),
        };
        Some(LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: shared })
    }

    fn func(&self, name: &'static str) -> &CudaFunction {
        &self.module.funcs[name]
    }

    /// A kernel taking only (Consts, Bufs).
    pub fn plain(&self, name: &'static str, over: Over) -> Result<(), SimError> {
        let Some(cfg) = self.config(over, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b);
        // SAFETY: the kernel's parameters are exactly (Consts, Bufs) and every pointer in
        // Bufs points at an allocation sized for c.n atoms and c.n_cells cells.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    /// A kernel taking (Consts, Bufs, int gate): cell and list building, gated on a flag.
    pub fn gated(&self, name: &'static str, over: Over, gate: i32) -> Result<(), SimError> {
        let Some(cfg) = self.config(over, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&gate);
        // SAFETY: as in `plain`, plus an int.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    pub fn integrate_first(&self, step: u64, track: i32) -> Result<(), SimError> {
        let name = "integrate_first";
        let Some(cfg) = self.config(Over::Atoms, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&step).arg(&track);
        // SAFETY: (Consts, Bufs, unsigned long long step, int track).
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    pub fn integrate_second(&self, step: u64, kick: i32) -> Result<(), SimError> {
        let name = "integrate_second";
        let Some(cfg) = self.config(Over::Atoms, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&step).arg(&kick);
        // SAFETY: (Consts, Bufs, unsigned long long step, int kick).
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    pub fn finish_step(
        &self,
        n_blocks: i32,
        record: i32,
        step: u64,
        want: i32,
        thermostat_on: i32,
    ) -> Result<(), SimError> {
        let name = "finish_step";
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (self.module.block, 1, 1), shared_mem_bytes: 0 };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&n_blocks).arg(&record).arg(&step).arg(&want).arg(&thermostat_on);
        // SAFETY: (Consts, Bufs, int, int, unsigned long long, int, int); partials hold n_blocks entries.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    /// Pair-distance histogram over `bins` bins to `r_max` into b.hist.
    pub fn hist_pairs(&self, r_max: f64, bins: i32) -> Result<(), SimError> {
        let name = "hist_pairs";
        let Some(cfg) = self.config(Over::Atoms, 4 * bins as u32) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&r_max).arg(&bins);
        // SAFETY: (Consts, Bufs, double, int); b.hist holds `bins` counters; shared memory sized.
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

    pub fn hist_height(&self, bins: i32) -> Result<(), SimError> {
        let name = "hist_height";
        let Some(cfg) = self.config(Over::Atoms, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&bins);
        // SAFETY: (Consts, Bufs, int); b.hist holds `bins` counters.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }

    pub fn publish(&self, colour: i32) -> Result<(), SimError> {
        let name = "publish";
        let Some(cfg) = self.config(Over::Atoms, 0) else { return Ok(()) };
        let mut l = self.stream.launch_builder(self.func(name));
        l.arg(self.c).arg(self.b).arg(&colour);
        // SAFETY: (Consts, Bufs, int); b.out holds at least c.n float4s.
        unsafe { l.launch(cfg) }.map(|_| ()).map_err(err(name))
    }
}
