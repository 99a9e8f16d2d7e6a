//! File formats: extended XYZ trajectories and initial states, LAMMPS text dumps, thermo CSV
//! logs, and atomic (crash-safe) writes. Readers reject bad input with the file, line and
//! field; nothing here panics on input.
//!
//! Owns file layouts only: it converts between files and plain data (`SimBox`, slices of
//! positions, `Telemetry`) and may not touch simulation state, backends or UI.

pub mod atomic;
pub mod error;
pub mod extxyz;
pub mod lammps_dump;
pub mod thermo;

use std::path::{Path, PathBuf};

/// The folder holding the shared validation data (LAMMPS reference numbers, the FCC initial
/// state): `$ARGON_VALIDATION_DIR` when set, else `../shared/validation` next to the crate.
pub fn validation_dir() -> PathBuf {
    match std::env::var_os("ARGON_VALIDATION_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/validation"),
    }
}
