//! Choosing a backend: `auto` takes CUDA when a device is usable and otherwise the CPU,
//! and says which and why, so the CLI and app make this choice in one place.

use std::sync::Arc;

use super::cpu::CpuBackend;
use super::{AtomState, Backend, SimError};
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimBox, SimParams};

/// The backend a person asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum BackendChoice {
    #[default]
    Auto,
    Cpu,
    Cuda,
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
        BackendChoice::Cuda => Err(SimError::Device("this build has no CUDA backend yet; use --backend cpu".into())),
        BackendChoice::Auto | BackendChoice::Cpu => {
            let b = CpuBackend::new(sim_box, params, atoms, field)?;
            let why = match choice {
                BackendChoice::Cpu => "CPU backend, as asked".to_string(),
                _ => "CPU backend: this build has no CUDA backend".to_string(),
            };
            Ok((Box::new(b), why))
        }
    }
}
