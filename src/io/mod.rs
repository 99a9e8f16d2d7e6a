//! File formats: extended XYZ trajectories and initial states, LAMMPS text dumps (both behind
//! `trajectory.rs`), LAMMPS `fix ave/chunk` and `fix ave/time` output (`lammps_ave.rs`), thermo CSV logs, VTK image data of flow fields (`vtk.rs`), and atomic (crash-safe) writes. Readers reject bad input with the file, line and
//! field; nothing here panics on input.
//!
//! Owns file layouts only: it converts between files and plain data (`SimBox`, slices of
//! positions, `Telemetry`) and may not touch simulation state, backends or UI.

pub mod atomic;
pub mod error;
pub mod extxyz;
pub mod forces;
pub mod lammps_ave;
pub mod lammps_dump;
pub mod thermo;
pub mod trajectory;
pub mod vtk;

use std::path::{Path, PathBuf};

/// The folder holding the validation data (LAMMPS reference numbers, the FCC initial state,
/// the JZG equation of state): `$ARGON_VALIDATION_DIR` when set, else the project's shared
/// `../shared/validation` when it exists, else the copy kept in `tests/data/validation`.
pub fn validation_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ARGON_VALIDATION_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/validation");
    if shared.is_dir() { shared } else { Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/validation") }
}
