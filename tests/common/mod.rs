//! Helpers shared by the integration tests: building small systems and reading validation data.
#![allow(dead_code)]

use argon_sandbox::physics::init::{LatticeKind, lattice_box, maxwell_boltzmann};
use argon_sandbox::physics::params::{Algorithm, Precision, SimBox, SimParams};
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomState, Backend};

pub use argon_sandbox::io::validation_dir;

pub fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(validation_dir().join("lammps_reference.json")).expect("validation data");
    serde_json::from_str(&text).expect("json")
}

pub fn at_rest(positions: Vec<[f64; 3]>) -> AtomState {
    let n = positions.len();
    AtomState { positions, velocities: vec![[0.0; 3]; n], types: vec![0; n] }
}

/// A lattice with Maxwell-Boltzmann velocities at `t`.
pub fn lattice_system(kind: LatticeKind, density: f64, cells: [usize; 3], t: f64, seed: u64) -> (SimBox, AtomState) {
    let (b, pos) = lattice_box(kind, density, cells);
    let n = pos.len();
    let v = maxwell_boltzmann(&vec![1.0; n], t, 3.0 * n as f64 - 3.0, seed, 0);
    (b, AtomState { positions: pos, velocities: v, types: vec![0; n] })
}

pub fn cpu(b: SimBox, params: SimParams, atoms: &AtomState) -> CpuBackend {
    CpuBackend::new(b, params, atoms, None).expect("backend")
}

pub fn params(algorithm: Algorithm, precision: Precision, shift: bool) -> SimParams {
    SimParams { algorithm, precision, shift, ..SimParams::default() }
}

pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

pub fn measure(b: &mut dyn Backend) -> argon_sandbox::sim::Telemetry {
    b.measure().expect("measure")
}
