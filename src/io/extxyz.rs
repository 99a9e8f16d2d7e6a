//! Extended XYZ, the text format OVITO, ASE and VMD read: the reader behind `--init` (first
//! frame only) and the multi-frame trajectory writer behind `--xyz`.
//!
//! A frame is a count line, a comment line of `key=value` pairs and one line per atom:
//! ```text
//! 2
//! Lattice="10.0 0.0 0.0 0.0 10.0 0.0 0.0 0.0 10.0" Origin="0.0 0.0 0.0" Properties=species:S:1:pos:R:3:velo:R:3 pbc="T T T" Time=0.5 Step=100 units=lj
//! Ar 1.0 2.0 3.0 0.1 0.2 0.3
//! Ar 4.0 5.0 6.0 0.4 0.5 0.6
//! ```
//! Only orthogonal boxes are supported. Numbers are written in Rust's shortest round-trip
//! form, so reading a written frame gives back bit-identical `f64`s.
//!
//! Velocity columns, for both OVITO and ASE: the writer puts velocities in `velo`, the
//! libAtoms/QUIP convention that OVITO maps to its standard `Velocity` property (OVITO maps
//! `vel` only to a custom property of that name). ASE (checked with 3.29) maps neither `velo`
//! nor `vel` to `Atoms.get_velocities()` (it keeps them as `atoms.arrays["velo"]`): it takes
//! its velocities from a `momenta` column divided by the masses, from a `masses` column where
//! there is one. So when the frame gives the species' masses ([`FrameRef::masses`]) the
//! writer adds `masses:R:1:momenta:R:3` (what ASE's own writer writes for atoms with
//! velocities), and ASE's `get_velocities()` is the velocity in ASE's units: for `units=metal`
//! (Å, Å/ps, u) the momenta are m v in u Å per ASE time unit (1 ASE time unit =
//! [`ASE_TIME_PS`] ps), so `get_velocities()` is in Å per ASE time unit, as ASE expects; for
//! `units=lj` they are m v in reduced units and `get_velocities()` is the reduced velocity.
//! OVITO keeps `masses` and `momenta` as custom properties. ASE ignores `Origin` (kept in
//! `atoms.info`), so its cell starts at 0. The reader accepts `velo`, `vel`, `velocity` and
//! `velocities` and skips other columns (`masses`, `momenta` among them).
//!
//! Dye tags (`physics::dye`) travel as a last integer column, `dye:I:1`, when the frame has
//! them; the reader gives them back ([`XyzFrame::dye`]), and files without one read as before.

mod comment;
mod read;
mod write;

pub use read::{MAX_ATOMS, parse_extxyz, read_extxyz};
pub use write::{ExtXyzWriter, write_extxyz};

use crate::physics::sim_box::SimBox;

/// The error type of the extended XYZ reader (see [`crate::io::error::FileError`]).
pub type XyzError = crate::io::error::FileError;

/// One frame read from an extended XYZ file.
#[derive(Clone, Debug, PartialEq)]
pub struct XyzFrame {
    /// `Origin` to `Origin + Lattice diagonal`, periodic where `pbc` says `T`.
    pub sim_box: SimBox,
    /// The species name of every atom.
    pub species: Vec<String>,
    pub positions: Vec<[f64; 3]>,
    /// Present when the file has a velocity property.
    pub velocities: Option<Vec<[f64; 3]>>,
    /// The `units=` key, e.g. `lj`.
    pub units: Option<String>,
    /// The `Step=` key.
    pub step: Option<u64>,
    /// The `Time=` key.
    pub time: Option<f64>,
    /// Present when the file has a `dye:I:1` column (tags 0..=65535, see `physics::dye`).
    pub dye: Option<Vec<crate::physics::dye::Dye>>,
}

/// One frame to write, borrowed from the caller's state.
#[derive(Clone, Copy, Debug)]
pub struct FrameRef<'a> {
    pub sim_box: &'a SimBox,
    /// Name of each species, indexed by type.
    pub species_names: &'a [String],
    /// Type of every atom (index into `species_names`).
    pub types: &'a [u32],
    pub positions: &'a [[f64; 3]],
    pub velocities: Option<&'a [[f64; 3]]>,
    pub step: u64,
    /// Simulated time in `units`.
    pub time: f64,
    /// Written as `units=`; `lj` for reduced units, `metal` for Å, Å/ps and u.
    pub units: &'a str,
    /// Mass of each species (indexed by type) in the frame's mass unit (u for `metal`,
    /// reduced for `lj`): with velocities, adds ASE's `masses` and `momenta` columns.
    pub masses: Option<&'a [f64]>,
    /// Each atom's dye tag: written as a last `dye:I:1` column (0 untagged, else the source's
    /// number), which OVITO and ASE read as an integer property.
    pub dye: Option<&'a [crate::physics::dye::Dye]>,
}

/// ASE's unit of time in picoseconds: Å sqrt(u / eV) = 10.1805 fs (`1 / ase.units.fs / 1000`).
pub const ASE_TIME_PS: f64 = 0.010180505671156725;
