//! Flow: continuum fields averaged from atoms over the bins of a grid. Owns what a field is
//! (`FieldSpec`, read from scenes), the grid of bins (`Grid`), the per-bin sums a window of
//! samples adds into (`Accumulator`, a flat layout a CUDA kernel mirrors with atomics), the
//! parallel CPU sampler, finishing a window into named layers (`Fields`: density, velocity,
//! speed, temperature, vorticity, Mach number, count), what each layer means and its units
//! (`FieldKind`), standard errors across windows, the per-bin mean flow a thermostat
//! relative to the flow removes (`FlowProfile`, `profile.rs`), and streamlines through a
//! finished field (`streamlines.rs`), probes of any layer at a point or along a line with
//! standard errors over windows (`probe.rs`), the shear viscosity from a driven channel's
//! velocity profile (`viscosity.rs`), and the wind tunnel's wake numbers (`wake.rs`: drag and
//! lift coefficients, Strouhal, Reynolds and Mach numbers, an LJTS viscosity correlation).
//!
//! Pure functions over plain data (positions, velocities, masses, the box), in reduced LJ
//! units: must not touch backends, the UI, files or the GPU. Backends sample into an
//! `Accumulator` (or copy their device sums into one); `io::vtk` writes `Fields`.

pub mod finish;
pub mod grid;
pub mod kind;
pub mod probe;
pub mod profile;
pub mod sample;
pub mod spec;
pub mod stats;
pub mod streamlines;
pub mod viscosity;
/// Wake numbers of flow past a cylinder: C_d, C_L, Strouhal, Re, Ma, LJTS viscosity.
pub mod wake;

#[cfg(test)]
mod tests;

pub use finish::{Fields, derivative, finish};
pub use grid::Grid;
pub use kind::FieldKind;
pub use profile::{FlowProfile, relative_dof};
pub use sample::{Accumulator, STRIDE};
pub use spec::{FieldError, FieldSpec, MAX_BINS};
pub use stats::{profile_mean_sem, windows_mean_sem};
