//! Choosing a backend: `auto` takes CUDA when a device is usable, else the wgpu backend on
//! a hardware GPU (never a software adapter such as lavapipe, slower than the CPU) when it
//! runs what is asked (mixed and double precision only where the adapter has 64-bit floats),
//! else the CPU; and says which and why the others were not taken, so
//! the CLI and app make this choice in one place. The app hands its renderer's device in
//! (`open_backend_on`), so a wgpu backend runs where its positions are drawn.

use std::sync::Arc;

use super::cpu::CpuBackend;
use super::cuda::CudaBackend;
use super::gpu::GpuBackend;
use super::gpu::device::SimDevice;
use super::{AtomState, Backend, SimError};
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::SimParams;
use crate::physics::piston::PistonState;
use crate::physics::sim_box::SimBox;

/// The backend a person asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum BackendChoice {
    #[default]
    Auto,
    Cpu,
    Cuda,
    /// WGSL compute shaders on any GPU wgpu drives (Vulkan, Metal, DX12), software ones
    /// included (lavapipe, with a warning).
    Wgpu,
}

/// Opens the chosen backend; returns it with a sentence saying which one runs and why.
pub fn open_backend(
    choice: BackendChoice,
    sim_box: SimBox,
    params: SimParams,
    atoms: &AtomState,
    field: Option<Arc<ObstacleField>>,
) -> Result<(Box<dyn Backend>, String), SimError> {
    open_backend_on(choice, sim_box, params, atoms, field, None)
}

/// As [`open_backend`], with the wgpu backend on `gpu` (a device someone else opened, the
/// renderer's) when given, else on a device of its own.
pub fn open_backend_on(
    choice: BackendChoice,
    sim_box: SimBox,
    params: SimParams,
    atoms: &AtomState,
    field: Option<Arc<ObstacleField>>,
    gpu: Option<&Arc<SimDevice>>,
) -> Result<(Box<dyn Backend>, String), SimError> {
    match choice {
        BackendChoice::Cuda => {
            let b = CudaBackend::new(sim_box, params, atoms, field)?;
            let why = format!("CUDA backend, as asked: {}", b.info().device);
            Ok((Box::new(b), why))
        }
        BackendChoice::Wgpu => {
            let b = open_wgpu(gpu, sim_box, params, atoms, field)?;
            let why = if b.software() {
                format!(
                    "wgpu backend, as asked: {} (a software adapter: slower than the CPU backend; \
                     choose --backend cpu unless you are testing)",
                    b.info().device
                )
            } else {
                format!("wgpu backend, as asked: {}", b.info().device)
            };
            Ok((Box::new(b), why))
        }
        BackendChoice::Cpu => {
            Ok((Box::new(CpuBackend::new(sim_box, params, atoms, field)?), "CPU backend, as asked".into()))
        }
        BackendChoice::Auto => {
            let cuda = match CudaBackend::new(sim_box, params.clone(), atoms, field.clone()) {
                Ok(b) => {
                    let why = format!("CUDA backend: {} is usable", b.info().device);
                    return Ok((Box::new(b), why));
                }
                // Bad input is the same on every backend: report it rather than fall back.
                Err(e @ (SimError::Param(_) | SimError::Invalid(_))) => return Err(e),
                Err(e) => format!("CUDA: no usable device ({e})"),
            };
            let wgpu = match auto_wgpu(gpu, sim_box, &params, atoms, &field) {
                Ok(b) => {
                    let why = format!("wgpu backend: {} ({cuda})", b.info().device);
                    return Ok((Box::new(b), why));
                }
                Err(WgpuNot::BadInput(e)) => return Err(e),
                Err(WgpuNot::Because(why)) => why,
            };
            let b = CpuBackend::new(sim_box, params, atoms, field)?;
            Ok((Box::new(b), format!("CPU backend: {cuda}; wgpu: {wgpu}")))
        }
    }
}

/// Whether Auto takes the wgpu backend on `gpu` for what it runs: no usable CUDA device and
/// `gpu` a hardware adapter (false without a device given: nothing is probed). The app asks,
/// to run a scene naming no precision in single there (the wgpu backend's) rather than its
/// mixed default, which the wgpu backend does not run.
pub fn auto_prefers_wgpu(gpu: Option<&Arc<SimDevice>>) -> bool {
    gpu.is_some_and(|d| !d.software) && super::cuda::device::open().is_err()
}

/// The backend Auto takes when the running one cannot do what is asked (`params`, with
/// obstacles when `obstacles`): CUDA where usable, else the CPU; and the sentence saying
/// so. For a wgpu backend refusing an edit the app would otherwise have to drop.
pub fn fallback_for(
    sim_box: SimBox,
    params: SimParams,
    atoms: &AtomState,
    field: Option<Arc<ObstacleField>>,
) -> Result<(Box<dyn Backend>, String), SimError> {
    match CudaBackend::new(sim_box, params.clone(), atoms, field.clone()) {
        Ok(b) => {
            let why = format!("CUDA backend: {} is usable", b.info().device);
            Ok((Box::new(b), why))
        }
        Err(e @ (SimError::Param(_) | SimError::Invalid(_))) => Err(e),
        Err(e) => {
            let b = CpuBackend::new(sim_box, params, atoms, field)?;
            Ok((Box::new(b), format!("CPU backend: CUDA: no usable device ({e})")))
        }
    }
}

/// Why Auto did not take the wgpu backend.
enum WgpuNot {
    /// Input no backend accepts: reported, not fallen back from.
    BadInput(SimError),
    /// A reason to go on to the CPU ("<adapter> is a software adapter").
    Because(String),
}

/// The wgpu backend as Auto takes it: on a hardware adapter, for what it runs.
fn auto_wgpu(
    gpu: Option<&Arc<SimDevice>>,
    sim_box: SimBox,
    params: &SimParams,
    atoms: &AtomState,
    field: &Option<Arc<ObstacleField>>,
) -> Result<GpuBackend, WgpuNot> {
    if let Some(why) = super::gpu::unsupported(params, None) {
        return Err(WgpuNot::Because(why));
    }
    let (name, software, f64_missing) = match gpu {
        Some(d) => (d.info.name.clone(), d.software, d.f64_missing().map(String::from)),
        None => match super::gpu::device::probe() {
            Ok(p) => (p.info.name, p.software, p.f64_missing),
            Err(e) => return Err(WgpuNot::Because(e.to_string())),
        },
    };
    if let Some(why) = super::gpu::unsupported(params, f64_missing.as_deref()) {
        return Err(WgpuNot::Because(why));
    }
    if software {
        return Err(WgpuNot::Because(format!("{name} is a software adapter")));
    }
    match open_wgpu(gpu, sim_box, params.clone(), atoms, field.clone()) {
        Ok(b) => Ok(b),
        Err(e @ SimError::Param(_)) => Err(WgpuNot::BadInput(e)),
        Err(e) => Err(WgpuNot::Because(e.to_string())),
    }
}

fn open_wgpu(
    gpu: Option<&Arc<SimDevice>>,
    sim_box: SimBox,
    params: SimParams,
    atoms: &AtomState,
    field: Option<Arc<ObstacleField>>,
) -> Result<GpuBackend, SimError> {
    match gpu {
        Some(d) => GpuBackend::on_device(d.clone(), sim_box, params, atoms, field),
        None => GpuBackend::new(sim_box, params, atoms, field),
    }
}

/// Moves a freshly opened backend's clock to `step` and `time` (a scene that resumes a run),
/// so per-step thermostat noise continues as in the run that was saved, and puts its piston
/// where the run left it (`piston`, when the saved run had one).
pub fn start_at(b: &mut dyn Backend, step: u64, time: f64, piston: Option<PistonState>) -> Result<(), SimError> {
    if step == 0 && time == 0.0 && piston.is_none() {
        return Ok(());
    }
    let mut snap = b.snapshot()?;
    snap.step = step;
    snap.time = time;
    if piston.is_some() {
        snap.piston = piston;
    }
    b.restore(&snap)
}
