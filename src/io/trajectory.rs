//! Multi-frame trajectories of a running system: extended XYZ (OVITO, ASE, VMD) or a LAMMPS
//! text dump (`id type x y z vx vy vz`; LAMMPS `read_dump`/`rerun`, OVITO, VMD), in reduced LJ
//! units or argon units (Å, Å/ps, ps; tagged `units=metal` in extended XYZ), positions as the
//! backend holds them (inside the box on periodic axes). One writer serves
//! `run --xyz/--dump` and the app's trajectory recording. The file appears at its path when
//! finished (atomically); until then it grows as a hidden temporary beside it.

use std::io;
use std::path::Path;

use crate::io::extxyz::{ExtXyzWriter, FrameRef};
use crate::io::lammps_dump::LammpsDumpWriter;
use crate::physics::sim_box::SimBox;
use crate::sim::Snapshot;
use crate::units::{self, UnitSystem};

/// A trajectory file format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
pub enum TrajectoryFormat {
    /// Extended XYZ: species, positions, velocities, Lattice, Origin, pbc, Step, Time.
    #[default]
    ExtXyz,
    /// LAMMPS text dump: id type x y z vx vy vz, box bounds pp/ff.
    LammpsDump,
}

impl TrajectoryFormat {
    pub fn extension(self) -> &'static str {
        match self {
            TrajectoryFormat::ExtXyz => "xyz",
            TrajectoryFormat::LammpsDump => "dump",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            TrajectoryFormat::ExtXyz => "Extended XYZ",
            TrajectoryFormat::LammpsDump => "LAMMPS dump",
        }
    }
}

enum Sink {
    Xyz(ExtXyzWriter),
    Dump(LammpsDumpWriter),
}

/// A trajectory being written.
pub struct TrajectoryWriter {
    sink: Sink,
    units: UnitSystem,
    names: Vec<String>,
    /// Each species' mass in the file's mass unit (u for argon units, reduced for LJ).
    masses: Vec<f64>,
    frames: u64,
}

impl TrajectoryWriter {
    /// Starts a trajectory that appears at `path` on [`TrajectoryWriter::finish`], for atoms
    /// of the species named `species` with reduced masses `masses` (argon = 1).
    pub fn create(
        path: &Path,
        format: TrajectoryFormat,
        units: UnitSystem,
        species: Vec<String>,
        masses: Vec<f64>,
    ) -> io::Result<Self> {
        let sink = match format {
            TrajectoryFormat::ExtXyz => Sink::Xyz(ExtXyzWriter::create(path)?),
            TrajectoryFormat::LammpsDump => Sink::Dump(LammpsDumpWriter::create(path)?),
        };
        let scale = match units {
            UnitSystem::Lj => 1.0,
            UnitSystem::Argon => units::ARGON_MASS_U,
        };
        let masses = masses.iter().map(|m| m * scale).collect();
        Ok(TrajectoryWriter { sink, units, names: species, masses, frames: 0 })
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Appends the state in `snap`, converted to the writer's units.
    pub fn write(&mut self, snap: &Snapshot) -> io::Result<()> {
        let (length, speed, time, tag) = match self.units {
            UnitSystem::Lj => (1.0, 1.0, 1.0, "lj"),
            UnitSystem::Argon => (
                units::ARGON_SIGMA_ANGSTROM,
                units::ARGON_SIGMA_ANGSTROM / units::argon_tau_ps(),
                units::argon_tau_ps(),
                "metal",
            ),
        };
        let scaled = |v: &[[f64; 3]], s: f64| -> Vec<[f64; 3]> {
            if s == 1.0 { v.to_vec() } else { v.iter().map(|p| p.map(|x| x * s)).collect() }
        };
        let b = snap.sim_box;
        let sim_box = SimBox { lo: b.lo.map(|x| x * length), hi: b.hi.map(|x| x * length), periodic: b.periodic };
        let positions = scaled(&snap.atoms.positions, length);
        let velocities = scaled(&snap.atoms.velocities, speed);
        let frame = FrameRef {
            sim_box: &sim_box,
            species_names: &self.names,
            types: &snap.atoms.types,
            positions: &positions,
            velocities: Some(&velocities),
            step: snap.step,
            time: snap.time * time,
            units: tag,
            masses: Some(&self.masses),
            dye: snap.atoms.has_dye().then_some(&snap.atoms.dye[..]),
        };
        match &mut self.sink {
            Sink::Xyz(w) => w.write_frame(&frame)?,
            Sink::Dump(w) => w.write_frame(&frame)?,
        }
        self.frames += 1;
        Ok(())
    }

    /// Flushes, syncs and renames the file into place.
    pub fn finish(self) -> io::Result<()> {
        match self.sink {
            Sink::Xyz(w) => w.finish(),
            Sink::Dump(w) => w.finish(),
        }
    }
}
