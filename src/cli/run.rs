//! `argon-sandbox run`: a headless simulation from a scene file and/or an extended XYZ
//! state, with flags that override the scene, a thermo CSV, an extended XYZ trajectory and a
//! progress bar. Flag values are read in the `--units` system (argon: K, fs, ps, Å; lj: reduced).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};

use super::field_flags::{FieldFlags, flag_of};
use crate::analysis;
use crate::cli::run_flags::{apply_flags, param_flag};
use crate::cli::run_forces::ForceFiles;
use crate::cli::run_wake::WakeLog;
use crate::flow::{FieldSpec, Fields};
use crate::io::thermo::ThermoWriter;
use crate::io::trajectory::{TrajectoryFormat, TrajectoryWriter};
use crate::io::vtk::VtkSeries;
use crate::physics::init::maxwell_boltzmann;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{Algorithm, SimParams};
use crate::physics::real::Precision;
use crate::physics::sim_box::SimBox;
use crate::scene::{self, SimSetup};
use crate::sim::bodies::BodyLayout;
use crate::sim::{BackendChoice, SimError, Telemetry, open_backend, start_at};
use crate::units::{self, UnitSystem};

/// The ensemble flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Ensemble {
    Nve,
    Berendsen,
    Csvr,
    Langevin,
    /// Hybrid Monte Carlo at constant volume (trajectories of --trajectory steps).
    Hmc,
    /// Hybrid Monte Carlo at constant pressure (--pressure), with ln V moves.
    HmcNpt,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Scene file (RON) or a built-in example's name (`argon-sandbox examples`). Without it:
    /// the built-in default scene, or only the --init state.
    pub scene: Option<PathBuf>,
    /// Number of steps to run.
    #[arg(long)]
    pub steps: u64,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendChoice,
    #[arg(long, value_enum)]
    pub algorithm: Option<Algorithm>,
    #[arg(long, value_enum)]
    pub precision: Option<Precision>,
    /// Start from this extended XYZ state (Lattice, Origin, pbc, pos, optional vel); its box
    /// replaces the scene's.
    #[arg(long)]
    pub init: Option<PathBuf>,
    /// Time step (fs with --units argon, tau with --units lj).
    #[arg(long)]
    pub dt: Option<f64>,
    /// LJ cutoff, one distance for every species pair (Å with --units argon, sigma with
    /// --units lj); without it the scene's (by default 2.5 sigma_ij per pair).
    #[arg(long)]
    pub cutoff: Option<f64>,
    /// Do not shift the LJ energy to zero at the cutoff (LAMMPS `lj/cut` default).
    #[arg(long)]
    pub no_shift: bool,
    #[arg(long, value_enum)]
    pub ensemble: Option<Ensemble>,
    /// Target temperature (K with --units argon, reduced with --units lj).
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Thermostat coupling time (ps with --units argon, tau with --units lj).
    #[arg(long)]
    pub tau: Option<f64>,
    /// Steps per hybrid Monte Carlo trajectory (--ensemble hmc or hmc-npt).
    #[arg(long)]
    pub trajectory: Option<u32>,
    /// Pressure of --ensemble hmc-npt (MPa with --units argon, reduced with --units lj).
    #[arg(long)]
    pub pressure: Option<f64>,
    /// Largest ln V step of the hmc-npt volume moves.
    #[arg(long)]
    pub max_dlnv: Option<f64>,
    /// Units of flags, thermo columns and trajectories.
    #[arg(long, value_enum, default_value = "argon")]
    pub units: UnitSystem,
    /// Thermo CSV: a header, then a row at step 0 and every --thermo-every steps.
    #[arg(long)]
    pub thermo: Option<PathBuf>,
    #[arg(long, default_value_t = 100)]
    pub thermo_every: u64,
    /// Extended XYZ trajectory, a frame at step 0 and every --xyz-every steps.
    #[arg(long)]
    pub xyz: Option<PathBuf>,
    #[arg(long, default_value_t = 1000)]
    pub xyz_every: u64,
    /// Tag the atoms inside this box with dye at step 0 (Å with --units argon, sigma with
    /// --units lj; z through the depth): X0:X1,Y0:Y1. Repeatable: each box is a source of its
    /// own, numbered after the scene's `dye` sources. Trajectories then carry a `dye` column.
    /// CPU backend only.
    #[arg(long, value_name = "X0:X1,Y0:Y1")]
    pub dye_box: Vec<String>,
    /// LAMMPS dump trajectory (id type x y z vx vy vz), a frame at step 0 and every --dump-every steps.
    #[arg(long)]
    pub dump: Option<PathBuf>,
    #[arg(long, default_value_t = 1000)]
    pub dump_every: u64,
    /// Seed of the random streams (thermostats, generated velocities).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Sample flow fields and write them into this folder: VTK image data, one `fields_NNNN.vti`
    /// per finished window and at the end of the run, listed in `fields.pvd` (ParaView).
    #[arg(long, value_name = "DIR")]
    pub fields: Option<PathBuf>,
    #[command(flatten)]
    pub field_flags: FieldFlags,
    /// Write the force of the fluid on each obstacle and wall face (epsilon/sigma), averaged
    /// over each telemetry interval, to this CSV (with --fields, `forces.csv` per field window
    /// and `forces_series.csv` per telemetry record are written into the fields folder too).
    #[arg(long, value_name = "FILE")]
    pub forces: Option<PathBuf>,
    /// No progress bar or summary.
    #[arg(long)]
    pub quiet: bool,
}

/// The field settings of the run: the scene's (or the defaults) with the flags applied; None
/// without `--fields`. Errors name the flag.
fn field_spec(args: &RunArgs, scene: Option<FieldSpec>, sim_box: &SimBox, dt: f64) -> Result<Option<FieldSpec>> {
    if args.fields.is_none() {
        if let Some(f) = args.field_flags.first_given() {
            bail!("{f} needs --fields DIR (the folder the field files go into)");
        }
        return Ok(None);
    }
    let spec = args.field_flags.apply(scene.unwrap_or_default());
    spec.validate(sim_box, dt).map_err(|e| {
        let flag = flag_of(e.field).unwrap_or("the scene's fields");
        anyhow!("invalid {flag}: {e}")
    })?;
    Ok(Some(spec))
}

/// Writes finished field windows into the series.
fn forces_err(e: std::io::Error) -> SimError {
    SimError::Invalid(format!("writing the forces file: {e}"))
}

fn write_fields(series: &mut VtkSeries, windows: Vec<Fields>) -> Result<(), SimError> {
    for f in &windows {
        series.write(f).map_err(|e| SimError::Invalid(format!("writing the fields: {e}")))?;
    }
    Ok(())
}

/// The summary line of a record: in a flow (`Telemetry::thermal`) the thermal temperature
/// relative to the flow first, then the all-motion one, which counts the stream as heat.
fn describe(t: &Telemetry, u: UnitSystem) -> String {
    let temperature = match (u, t.thermal_temperature()) {
        (UnitSystem::Lj, None) => format!("T* = {:.5}", t.temperature),
        (UnitSystem::Lj, Some(th)) => {
            format!("thermal T* = {th:.5} (relative to the flow; all motion {:.5})", t.temperature)
        }
        (UnitSystem::Argon, None) => format!("T = {:.2} K", units::reduced_to_kelvin(t.temperature)),
        (UnitSystem::Argon, Some(th)) => format!(
            "thermal T = {:.2} K (relative to the flow; all motion {:.2} K)",
            units::reduced_to_kelvin(th),
            units::reduced_to_kelvin(t.temperature)
        ),
    };
    match u {
        UnitSystem::Lj => format!(
            "{temperature}, PE/N = {:.6}, E/N = {:.6}, P* = {:.5}",
            t.pe_per_atom(),
            t.etotal_per_atom(),
            t.pressure
        ),
        UnitSystem::Argon => format!(
            "{temperature}, PE = {:.4} kJ/mol, E = {:.4} kJ/mol, P = {:.2} MPa",
            units::reduced_energy_to_kj_per_mol(t.pe_per_atom()),
            units::reduced_energy_to_kj_per_mol(t.etotal_per_atom()),
            units::reduced_pressure_to_mpa(t.pressure)
        ),
    }
}

/// The start-up lines of a wind tunnel: its stream, zone and Mach number, and the warning
/// `SimParams::tunnel_warning` gives (beyond Mach 0.3, a thermostat that brakes the stream).
fn tunnel_note(params: &SimParams, sim_box: &SimBox, types: &[u32]) -> Option<(String, Option<String>)> {
    let t = params.tunnel.as_ref()?;
    let fluid = params.mean_fluid(sim_box, types);
    let (mach, c, eos) = params.tunnel_mach(&fluid)?;
    let (lo, hi) = t.bounds(sim_box);
    let source = if eos { "JZG" } else { "ideal gas" };
    let line = format!(
        "tunnel: stream {} sigma/tau along +x (Mach {mach:.3}, sound speed {c:.3} sigma/tau, {source}), inflow zone \
         {lo} <= x < {hi} sigma",
        t.speed
    );
    Some((line, params.tunnel_warning(&fluid)))
}

pub fn run(args: &RunArgs) -> Result<()> {
    let (setup, generated_velocities) = match &args.init {
        Some(path) => {
            let base = args.scene.as_deref().map(|p| scene::load_setup(Some(p))).transpose()?;
            let init = scene::with_init(base, path)?;
            if init.assumed_lj && !args.quiet {
                eprintln!("note: {} has no units= key; reading it as reduced LJ units", path.display());
            }
            (init.setup, init.needs_velocities)
        }
        None => (scene::load_setup(args.scene.as_deref())?, false),
    };
    let SimSetup { sim_box, mut params, mut atoms, shapes, step, time, piston, fields, mut dye } = setup;
    let start = (step, time, piston);
    apply_flags(args, &mut params)?;
    params.validate(&sim_box).map_err(param_flag)?;
    let field_spec = field_spec(args, fields, &sim_box, params.dt)?;
    let field = ObstacleField::bake(&shapes, &sim_box, 0.1).map(Arc::new);
    let bodies = BodyLayout::new(&sim_box, field.as_deref()).bodies;
    if generated_velocities {
        let masses: Vec<f64> = atoms.types.iter().map(|&t| params.species[t as usize].mass).collect();
        let dof = analysis::degrees_of_freedom(atoms.len(), &sim_box, &params, field.is_some());
        atoms.velocities = maxwell_boltzmann(&masses, params.temperature, dof, params.seed, 0);
    }
    let boxes = super::run_flags::dye_boxes(args, &sim_box, dye.len())?;
    scene::dye::tag_regions(&boxes, dye.len(), &mut atoms);
    dye.extend(boxes);
    let dye_note = (!dye.is_empty()).then(|| {
        let tagged = atoms.dye.iter().filter(|&&d| d != 0).count();
        format!("dye: {} sources, {tagged} atoms tagged at the start", dye.len())
    });

    let tunnel_note = tunnel_note(&params, &sim_box, &atoms.types);
    let (mut sim, why) = open_backend(args.backend, sim_box, params.clone(), &atoms, field)?;
    start_at(sim.as_mut(), start.0, start.1, start.2)?;
    sim.set_dye_rakes(&scene::dye::rakes(&dye))?;
    drop(atoms);
    let mut field_files = match (&field_spec, &args.fields) {
        (Some(spec), Some(dir)) => {
            sim.set_fields(Some(spec.clone()))?;
            Some(VtkSeries::create(dir).with_context(|| format!("creating the fields folder {}", dir.display()))?)
        }
        _ => None,
    };
    // Force files beside the fields only when something is pushed on (walls or obstacles).
    let fields_dir = field_files.as_ref().and(args.fields.as_deref()).filter(|_| !bodies.is_empty());
    let mut force_files = ForceFiles::create(args.forces.as_deref(), fields_dir, &bodies, sim.step())?;
    let mass = params.species.first().map_or(1.0, |s| s.mass);
    let mut wake = WakeLog::new(&shapes, fields_dir, sim_box.length()[2], mass, params.tunnel.map(|t| t.speed));
    let n = sim.n_atoms();
    if !args.quiet {
        let algorithm = params.algorithm.resolve(n, &sim_box, params.list_range(), params.max_cutoff());
        let l = sim_box.length();
        let bounds: String = sim_box.periodic.iter().map(|&p| if p { 'p' } else { 'w' }).collect();
        eprintln!("backend: {why} ({})", sim.info().device);
        eprintln!(
            "system: {n} atoms, box {:.3} x {:.3} x {:.3} sigma ({bounds}), {} / {} precision, {}, dt {} tau",
            l[0],
            l[1],
            l[2],
            algorithm.name(),
            params.precision.name(),
            params.thermostat.name(),
            params.dt
        );
        if let Some(line) = &dye_note {
            eprintln!("{line}");
        }
        if let Some((line, warning)) = &tunnel_note {
            eprintln!("{line}");
            if let Some(w) = warning {
                eprintln!("warning: {w}");
            }
        }
    }

    let mut thermo = match &args.thermo {
        // In a flow, the thermal temperature relative to the flow beside the ordinary one.
        Some(p) => Some(
            ThermoWriter::create_with(p, args.units, params.thermal_readout())
                .with_context(|| format!("creating {}", p.display()))?,
        ),
        None => None,
    };
    let names: Vec<String> = params.species.iter().map(|s| s.name.clone()).collect();
    // (writer, every K steps) for --xyz and --dump.
    let mut trajectories: Vec<(TrajectoryWriter, u64)> = Vec::new();
    for (path, format, every) in [
        (&args.xyz, TrajectoryFormat::ExtXyz, args.xyz_every),
        (&args.dump, TrajectoryFormat::LammpsDump, args.dump_every),
    ] {
        if let Some(p) = path {
            let masses = params.species.iter().map(|s| s.mass).collect();
            let w = TrajectoryWriter::create(p, format, args.units, names.clone(), masses)
                .with_context(|| format!("creating {}", p.display()))?;
            trajectories.push((w, every));
        }
    }
    let first = sim.measure()?;
    if let Some(w) = thermo.as_mut() {
        w.write_row(&first)?;
    }
    if !trajectories.is_empty() {
        let snap = sim.copy_state()?;
        for (w, _) in trajectories.iter_mut() {
            w.write(&snap)?;
        }
    }

    let progress = (!args.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(args.steps);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} steps  {per_sec}  eta {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let start = Instant::now();
    let start_step = sim.step();
    let end = start_step + args.steps;
    let every_t = args.thermo.as_ref().map(|_| args.thermo_every);
    let everies: Vec<u64> = trajectories.iter().map(|(_, k)| *k).collect();
    let mut last = first;
    let outcome: Result<(), SimError> = (|| {
        while sim.step() < end {
            if crate::interrupt::interrupted() {
                break;
            }
            let now = sim.step();
            let next_of = |k: Option<u64>| k.map(|k| (now / k + 1) * k).unwrap_or(u64::MAX);
            let next_frame = everies.iter().map(|&k| next_of(Some(k))).min().unwrap_or(u64::MAX);
            let chunk_end = end.min(next_of(every_t)).min(next_frame).min(now + 1000);
            sim.advance(chunk_end - now)?;
            for t in sim.drain_telemetry() {
                // Hybrid Monte Carlo reports chain states at cycle ends, already thinned.
                let due = t.step.is_multiple_of(args.thermo_every) || params.thermostat.is_monte_carlo();
                if let Some(w) = thermo.as_mut().filter(|_| due) {
                    w.write_row(&t).map_err(|e| SimError::Invalid(format!("writing the thermo file: {e}")))?;
                }
                if let Some(f) = force_files.as_mut() {
                    f.record(&t).map_err(forces_err)?;
                }
                if let Some(w) = wake.as_mut() {
                    w.record(&t);
                }
                last = t;
            }
            if let Some(series) = field_files.as_mut() {
                let windows = sim.take_fields(false)?;
                if let Some(f) = force_files.as_mut() {
                    f.windows(&windows).map_err(forces_err)?;
                }
                if let Some(w) = wake.as_mut() {
                    w.windows(&windows).map_err(forces_err)?;
                }
                write_fields(series, windows)?;
            }
            let due: Vec<usize> = (0..trajectories.len()).filter(|&i| sim.step().is_multiple_of(everies[i])).collect();
            if !due.is_empty() {
                let snap = sim.copy_state()?;
                for i in due {
                    trajectories[i]
                        .0
                        .write(&snap)
                        .map_err(|e| SimError::Invalid(format!("writing the trajectory: {e}")))?;
                }
            }
            if let Some(bar) = &progress {
                bar.set_position(sim.step() - start_step);
            }
        }
        Ok(())
    })();
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    // Whatever happened, keep what was written so far (the open field window too).
    if let Some(series) = field_files.as_mut() {
        let written = sim.take_fields(true).map_err(anyhow::Error::from).and_then(|f| {
            if let Some(ff) = force_files.as_mut() {
                ff.windows(&f).map_err(forces_err)?;
            }
            if let Some(w) = wake.as_mut() {
                w.windows(&f).map_err(forces_err)?;
            }
            Ok(write_fields(series, f)?)
        });
        if outcome.is_ok() {
            written?;
        }
        if !args.quiet {
            eprintln!(
                "fields: {} window(s) in {}",
                series.len(),
                args.fields.as_deref().unwrap_or(Path::new("")).display()
            );
        }
    }
    if let Some(w) = thermo {
        w.finish()?;
    }
    if let Some(f) = force_files {
        if !args.quiet {
            let (series, windows) = f.rows();
            eprintln!("forces: {} bodies, {series} record row(s), {windows} window row(s)", bodies.len());
        }
        f.finish()?;
    }
    for (w, _) in trajectories {
        w.finish()?;
    }
    outcome?;
    let elapsed = start.elapsed().as_secs_f64();
    if !args.quiet {
        let final_t = sim.measure().unwrap_or_else(|_| last.clone());
        let rate = args.steps as f64 / elapsed.max(1e-9);
        eprintln!("step {}: {}", final_t.step, describe(&final_t, args.units));
        eprintln!("{:.0} steps/s, {:.3e} atom-steps/s over {:.2} s", rate, rate * n as f64, elapsed);
        if params.thermostat.is_monte_carlo() {
            eprintln!("hybrid Monte Carlo: {}", last.mc.describe());
        }
        if let Some(r) = wake.as_ref().and_then(WakeLog::readout) {
            eprintln!("wake of obstacle 1 (over the whole run; also {}):", crate::cli::run_wake::WAKE_CSV);
            for l in r.lines() {
                eprintln!("  {l}");
            }
        }
    }
    Ok(())
}
