//! The app's histograms on the wgpu backend's device (`Analyser`): g(r) pair counts, the
//! speed histogram and the density profile along y, counted by `shaders/sim/analysis.wgsl`
//! where the atoms are, so only the bins cross to the host (a million atoms' state read back
//! and binned on the host took seconds and stalled the simulation thread of the app).
//!
//! g(r) walks the neighbour list's own cell grid as the last build left it (atoms sorted by
//! cell, each within half the skin of where it was binned), scanning the cells within
//! r_max + skin; systems without a grid count all pairs. Bins are the CPU's computed in f32
//! (see the shader's header for how close).

use std::sync::Arc;

use wgpu::util::DeviceExt;

use super::device::SimDevice;
use super::engine::{Engine, Pipelines, Search, WG};
use super::pipelines::SideKernels;
use crate::analysis::RdfRegion;
use crate::sim::SimError;

/// The kernels' arguments (analysis.wgsl `AnalysisArgs`).
#[repr(C)]
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Args {
    region_lo: [f32; 4],
    region_hi: [f32; 4],
    len_hi: [f32; 4],
    len_lo: [f32; 4],
    reach: [u32; 4],
    bins: u32,
    region: u32,
    n: u32,
    pad0: u32,
    scale: f32,
    r2max: f32,
    origin: f32,
    pad1: f32,
}

/// The kernels' entry points.
const KERNELS: [&str; 4] = ["rdf_cells", "rdf_all", "speed_hist", "height_hist"];

/// The histogram kernels built against one `Pipelines` (its group-0 layout).
pub struct Analyser {
    built_for: Arc<Pipelines>,
    out_layout: wgpu::BindGroupLayout,
    kernels: Vec<(&'static str, wgpu::ComputePipeline)>,
}

/// The smallest f32 at or above `x`: for an f32 `p`, `p >= x` and `p >= up(x)` agree, and
/// so do `p < x` and `p < up(x)`.
fn f32_up(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) >= x { f } else { f.next_up() }
}

/// `x` as an f32 pair whose sum is `x` to about 1e-14.
fn split(x: f64) -> (f32, f32) {
    let hi = x as f32;
    (hi, (x - hi as f64) as f32)
}

impl Analyser {
    /// Compiles the kernels for `ntypes` species against `pipes`' group-0 layout.
    pub fn new(dev: &SimDevice, pipes: &Arc<Pipelines>, ntypes: usize) -> Result<Analyser, SimError> {
        let source = super::shaders::analysis_module(ntypes, pipes.precision);
        let k = SideKernels::new(dev, pipes, "the histogram kernels (analysis.wgsl)", source, (0, 1), &KERNELS)?;
        let kernels = KERNELS.into_iter().zip(k.pipelines).collect();
        let out_layout = k.out_layout;
        Ok(Analyser { built_for: pipes.clone(), out_layout, kernels })
    }

    /// Whether these kernels were built for `pipes` (a rebuilt module needs new ones).
    pub fn fits(&self, pipes: &Arc<Pipelines>) -> bool {
        Arc::ptr_eq(&self.built_for, pipes)
    }

    /// Runs `kernel` over the engine's atoms into `slots` 64-bit counts and reads them back.
    fn count(&self, engine: &Engine, kernel: &str, args: Args, slots: usize) -> Result<Vec<u64>, SimError> {
        let dev = engine.device();
        let pipeline = &self.kernels.iter().find(|(k, _)| *k == kernel).expect("an analysis kernel").1;
        let bytes = (slots * 8) as u64;
        let hist = dev.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("analysis counts"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let args = dev.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("analysis args"),
            contents: bytemuck::bytes_of(&args),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let bind = dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("analysis"),
            layout: &self.out_layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: hist.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: args.as_entire_binding() },
            ],
        });
        let mut enc = dev.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("analysis") });
        {
            let mut pass = enc
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("analysis"), timestamp_writes: None });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, engine.system_bind_group(), &[0]);
            pass.set_bind_group(1, &bind, &[]);
            pass.dispatch_workgroups((engine.n as u32).div_ceil(WG).max(1), 1, 1);
        }
        let raw = dev.read_back(enc, &[(&hist, bytes)])?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&raw[0]);
        Ok(words.chunks_exact(2).map(|w| w[0] as u64 | (w[1] as u64) << 32).collect())
    }

    /// g(r) pair counts in `bins` bins to `r_max` (checked by the caller), over the whole box
    /// (each pair once) or from the centres in `region` (ordered pairs): (counts, centres).
    /// `skin` is the list's: how far atoms may have moved from their cells.
    pub fn rdf_counts(
        &self,
        engine: &mut Engine,
        bins: usize,
        r_max: f64,
        region: Option<&RdfRegion>,
        skin: f64,
    ) -> Result<(Vec<u64>, usize), SimError> {
        let b = engine.sim_box;
        let len = b.length();
        let mut args = Args {
            bins: bins as u32,
            n: engine.n as u32,
            scale: (bins as f64 / r_max) as f32,
            r2max: (r_max * r_max) as f32,
            ..Args::default()
        };
        for k in 0..3 {
            (args.len_hi[k], args.len_lo[k]) = split(len[k]);
        }
        if let Some(r) = region {
            args.region = 1;
            for k in 0..3 {
                args.region_lo[k] = f32_up(r.lo[k]);
                args.region_hi[k] = f32_up(r.hi[k]);
            }
        }
        let kernel = match engine.search {
            Search::List | Search::Cells => {
                // The grid and the atoms' order are the last build's (the cell list's: the
                // last step's): make sure there is one.
                engine.ensure_built()?;
                let dims = engine.consts.dims;
                // Partners within r_max sit within r_max + skin of the atom where both were
                // binned (each moved at most half the skin since; the cell list bins the
                // positions as they are).
                let moved = if engine.search == Search::List { skin } else { 0.0 };
                let reach = r_max + moved + 1e-3;
                for k in 0..3 {
                    let d = dims[k];
                    let r = (reach * d as f64 / len[k]).ceil() as u32;
                    args.reach[k] = if 2 * r + 1 >= d { d } else { r };
                }
                "rdf_cells"
            }
            Search::AllPairs => "rdf_all",
        };
        let mut counts = self.count(engine, kernel, args, bins + 1)?;
        let centres = counts.pop().unwrap_or(0) as usize;
        Ok((counts, if region.is_some() { centres } else { engine.n }))
    }

    /// Atoms per speed bin of width `v_max / bins` (beyond v_max: not counted).
    pub fn speed_counts(&self, engine: &Engine, bins: usize, v_max: f64) -> Result<Vec<u64>, SimError> {
        let args =
            Args { bins: bins as u32, n: engine.n as u32, scale: (bins as f64 / v_max) as f32, ..Args::default() };
        let mut c = self.count(engine, "speed_hist", args, bins + 1)?;
        c.truncate(bins);
        Ok(c)
    }

    /// Atoms per slab of the box along y (clamped into it).
    pub fn height_counts(&self, engine: &Engine, bins: usize) -> Result<Vec<u64>, SimError> {
        let b = engine.sim_box;
        let args = Args {
            bins: bins as u32,
            n: engine.n as u32,
            scale: (bins as f64 / b.length()[1]) as f32,
            origin: b.lo[1] as f32,
            ..Args::default()
        };
        let mut c = self.count(engine, "height_hist", args, bins + 1)?;
        c.truncate(bins);
        Ok(c)
    }
}
