//! Choosing a backend: `auto` takes CUDA when a device is usable and otherwise the CPU,
//! and says which and why, so the CLI and app make this choice in one place.

use std::sync::Arc;

use super::cpu::CpuBackend;
use super::cuda::CudaBackend;
use super::gpu::GpuBackend;
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
    match choice {
        BackendChoice::Cuda => {
            let b = CudaBackend::new(sim_box, params, atoms, field)?;
            let why = format!("CUDA backend, as asked: {}", b.info().device);
            Ok((Box::new(b), why))
        }
        BackendChoice::Wgpu => {
            let b = GpuBackend::new(sim_box, params, atoms, field)?;
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
        BackendChoice::Auto => match CudaBackend::new(sim_box, params.clone(), atoms, field.clone()) {
            Ok(b) => {
                let why = format!("CUDA backend: {} is usable", b.info().device);
                Ok((Box::new(b), why))
            }
            // Bad input is the same on every backend: report it rather than fall back.
            Err(e @ (SimError::Param(_) | SimError::Invalid(_))) => Err(e),
            Err(e) => {
                let b = CpuBackend::new(sim_box, params, atoms, field)?;
                Ok((Box::new(b), format!("CPU backend: no usable CUDA device ({e})")))
            }
        },
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
