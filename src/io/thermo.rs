//! Thermo logs: one CSV row of temperature, per-atom energies and pressure per telemetry
//! sample, in reduced LJ units (LAMMPS `units lj`, `thermo_modify norm yes` column meanings) or
//! in argon units. Numbers are in shortest round-trip form. Runs in a flow (a wind tunnel, a
//! thermostat relative to the flow) add the thermal temperature relative to the local flow
//! after the temperature (`temp_thermal`, `thermal_temperature_K`); other logs keep exactly
//! the columns above.
//!
//! Unlike trajectories, the log is written straight to its final path and flushed after every
//! row, so it can be read (plotted, tailed) while a long run is going and a crash keeps every
//! row written before it; a temporary-and-rename file would hide it until the run ends.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use crate::io::error::FileError;
use crate::sim::Telemetry;
use crate::units::{
    UnitSystem, reduced_energy_to_kj_per_mol, reduced_pressure_to_mpa, reduced_time_to_ps, reduced_to_kelvin,
};

/// Column names for reduced units, as LAMMPS names its thermo keywords.
pub const LJ_COLUMNS: [&str; 6] = ["step", "temp", "pe", "ke", "etotal", "press"];
/// Column names for argon units.
pub const ARGON_COLUMNS: [&str; 7] =
    ["step", "time_ps", "temperature_K", "pe_kJ_per_mol", "ke_kJ_per_mol", "etotal_kJ_per_mol", "pressure_MPa"];
/// The thermal temperature's column (relative to the local flow, `Telemetry::thermal`) in
/// reduced and in argon units; a log that has it carries it right after the temperature.
pub const LJ_THERMAL: &str = "temp_thermal";
pub const ARGON_THERMAL: &str = "thermal_temperature_K";

/// The header of a thermo log in `units` without the thermal temperature.
pub fn thermo_columns(units: UnitSystem) -> &'static [&'static str] {
    match units {
        UnitSystem::Lj => &LJ_COLUMNS,
        UnitSystem::Argon => &ARGON_COLUMNS,
    }
}

/// Where the thermal temperature's column goes (right after the temperature), and its name.
fn thermal_column(units: UnitSystem) -> (usize, &'static str) {
    match units {
        UnitSystem::Lj => (2, LJ_THERMAL),
        UnitSystem::Argon => (3, ARGON_THERMAL),
    }
}

/// The header of a thermo log in `units`, with the thermal temperature's column when `thermal`
/// (a run with a wind tunnel or a thermostat relative to the flow:
/// `SimParams::thermal_readout`).
pub fn thermo_header(units: UnitSystem, thermal: bool) -> Vec<&'static str> {
    let mut names = thermo_columns(units).to_vec();
    if thermal {
        let (at, name) = thermal_column(units);
        names.insert(at, name);
    }
    names
}

/// One CSV row (no newline) of `t` in `units`, matching [`thermo_header`] with `thermal` (a
/// record without a thermal temperature writes NaN there).
pub fn thermo_row(t: &Telemetry, units: UnitSystem, thermal: bool) -> String {
    let num = |x: f64| format!("{x:?}");
    let mut cells = match units {
        UnitSystem::Lj => vec![
            t.step.to_string(),
            num(t.temperature),
            num(t.pe_per_atom()),
            num(t.ke_per_atom()),
            num(t.etotal_per_atom()),
            num(t.pressure),
        ],
        UnitSystem::Argon => vec![
            t.step.to_string(),
            num(reduced_time_to_ps(t.time)),
            num(reduced_to_kelvin(t.temperature)),
            num(reduced_energy_to_kj_per_mol(t.pe_per_atom())),
            num(reduced_energy_to_kj_per_mol(t.ke_per_atom())),
            num(reduced_energy_to_kj_per_mol(t.etotal_per_atom())),
            num(reduced_pressure_to_mpa(t.pressure)),
        ],
    };
    if thermal {
        let value = t.thermal_temperature().unwrap_or(f64::NAN);
        let value = match units {
            UnitSystem::Lj => value,
            UnitSystem::Argon => reduced_to_kelvin(value),
        };
        cells.insert(thermal_column(units).0, num(value));
    }
    cells.join(",")
}

/// A whole thermo CSV (header and one row per record), for writing at once; with the thermal
/// temperature's column when any record has one.
pub fn thermo_csv(records: &[Telemetry], units: UnitSystem) -> String {
    let thermal = records.iter().any(|t| t.thermal.is_some());
    let mut out = thermo_header(units, thermal).join(",");
    out.push('\n');
    for t in records {
        out.push_str(&thermo_row(t, units, thermal));
        out.push('\n');
    }
    out
}

/// A thermo CSV log being written; every row is on disk when `write_row` returns.
pub struct ThermoWriter {
    out: BufWriter<File>,
    units: UnitSystem,
    thermal: bool,
}

impl ThermoWriter {
    /// Creates (or truncates) `path` and writes the header for `units`.
    pub fn create(path: &Path, units: UnitSystem) -> io::Result<Self> {
        Self::create_with(path, units, false)
    }

    /// Like [`ThermoWriter::create`], with the thermal temperature's column when `thermal`.
    pub fn create_with(path: &Path, units: UnitSystem, thermal: bool) -> io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(out, "{}", thermo_header(units, thermal).join(","))?;
        out.flush()?;
        Ok(ThermoWriter { out, units, thermal })
    }

    /// Appends the row of `t` and flushes it to the file.
    pub fn write_row(&mut self, t: &Telemetry) -> io::Result<()> {
        writeln!(self.out, "{}", thermo_row(t, self.units, self.thermal))?;
        self.out.flush()
    }

    /// Flushes and syncs the log.
    pub fn finish(self) -> io::Result<()> {
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()
    }
}

/// One row of a thermo log: the step and every other column by its header name.
#[derive(Clone, Debug, PartialEq)]
pub struct ThermoRow {
    pub step: u64,
    pub values: Vec<(String, f64)>,
}

impl ThermoRow {
    /// The value of column `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }
}

/// Reads a thermo CSV log: a header naming the columns (one of them `step`), then rows of numbers.
pub fn read_thermo_csv(path: &Path) -> Result<Vec<ThermoRow>, FileError> {
    let src = path.display().to_string();
    let file = File::open(path).map_err(|e| FileError::io(&src, e))?;
    let mut lines = BufReader::new(file).lines();
    let header = match lines.next() {
        Some(line) => line.map_err(|e| FileError::io(&src, e))?,
        None => return Err(FileError::parse(&src, 1, "header", "the file is empty")),
    };
    let names: Vec<String> = header.trim_end().split(',').map(|s| s.trim().to_owned()).collect();
    for (i, n) in names.iter().enumerate() {
        if n.is_empty() || names[..i].contains(n) {
            return Err(FileError::parse(
                &src,
                1,
                "header",
                format!("column {} name {n:?} is empty or repeated", i + 1),
            ));
        }
    }
    let Some(step_col) = names.iter().position(|n| n == "step") else {
        return Err(FileError::parse(&src, 1, "header", "no step column"));
    };
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let no = i as u64 + 2;
        let line = line.map_err(|e| FileError::io(&src, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.trim_end().split(',').map(str::trim).collect();
        if cells.len() != names.len() {
            return Err(FileError::parse(
                &src,
                no,
                "row",
                format!("{} cells, header has {}", cells.len(), names.len()),
            ));
        }
        let mut row = ThermoRow { step: 0, values: Vec::with_capacity(names.len() - 1) };
        for (k, (cell, name)) in cells.iter().zip(&names).enumerate() {
            let field = || format!("column {} ({name})", k + 1);
            if k == step_col {
                row.step = cell
                    .parse()
                    .map_err(|_| FileError::parse(&src, no, field(), format!("{cell:?} is not a step number")))?;
            } else {
                let v = cell
                    .parse()
                    .map_err(|_| FileError::parse(&src, no, field(), format!("{cell:?} is not a number")))?;
                row.values.push((name.clone(), v));
            }
        }
        rows.push(row);
    }
    Ok(rows)
}
