//! `argon-sandbox measure diffusion|viscosity`: a transport measurement from a scene and/or an
//! extended XYZ state. Equilibrates (`--equilibrate` steps under stochastic velocity
//! rescaling, CSVR with tau = 0.5, at the scene's target temperature), then samples
//! `--steps` production steps under the scene's own thermostat (or a weak CSVR with
//! `--hold TAU`) through `Backend::set_transport`, and hands the records to
//! `transport::diffusion` / `transport::viscosity`. Prints the value, its standard error, the
//! method and, for diffusion in a cubic periodic box, the Yeh-Hummer corrected value; `--json`
//! prints one object. Reduced LJ units, with SI beside them (argon's sigma, epsilon, m).
//!
//! Glue only: the checks, the physics and the text and JSON of the result are in `transport`
//! (`request.rs`, `report.rs`, shared with the app's Measure panel), the sampling in the
//! backends.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use clap::{Args, ValueEnum};

use crate::analysis;
use crate::numfmt::short;
use crate::physics::init::maxwell_boltzmann;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::real::Precision;
use crate::scene::{self, SimSetup};
use crate::sim::{Backend, BackendChoice, SimError, open_backend, start_at};
use crate::transport::report::{self, CLI_NAMES, Inputs, Run};
use crate::transport::request::{self, Refusal, Request};
use crate::transport::{TransportSamples, TransportSpec, viscosity};

/// What to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Quantity {
    /// Self-diffusion coefficient (Einstein, from the mean-squared displacement).
    Diffusion,
    /// Shear viscosity (Green-Kubo, from the off-diagonal pressure tensor).
    Viscosity,
}

/// Coupling time (tau) of the equilibration thermostat.
pub const EQUILIBRATE_TAU: f64 = 0.5;

#[derive(Args, Debug, Clone)]
pub struct MeasureArgs {
    /// The quantity.
    #[arg(value_enum)]
    pub quantity: Quantity,
    /// Scene file (RON) or a built-in example's name (`argon-sandbox examples`). Without it:
    /// the built-in default scene, or only the --init state.
    pub scene: Option<PathBuf>,
    /// Production steps sampled (after --equilibrate).
    #[arg(long)]
    pub steps: u64,
    /// Equilibration steps before sampling, under CSVR (tau 0.5) at the target temperature.
    #[arg(long, default_value_t = 4000)]
    pub equilibrate: u64,
    /// Production under a weak CSVR thermostat with this coupling time (tau) instead of the
    /// scene's thermostat (e.g. 10, as the LAMMPS references).
    #[arg(long, value_name = "TAU")]
    pub hold: Option<f64>,
    /// Diffusion: the longest MSD lag (tau); the VACF reaches half of it.
    #[arg(long, value_name = "TAU", default_value_t = 20.0)]
    pub lag: f64,
    /// Viscosity: where the Green-Kubo integral is read (tau).
    #[arg(long, value_name = "TAU", default_value_t = viscosity::DEFAULT_T_CUT)]
    pub t_cut: f64,
    /// Diffusion: a measured shear viscosity (reduced) for the Yeh-Hummer correction; without
    /// it, the Lautenschlaeger-Hasse LJTS correlation where it applies.
    #[arg(long, value_name = "ETA")]
    pub viscosity: Option<f64>,
    /// One JSON object on stdout instead of the text summary.
    #[arg(long)]
    pub json: bool,
    /// Start from this extended XYZ state; its box replaces the scene's.
    #[arg(long)]
    pub init: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendChoice,
    #[arg(long, value_enum)]
    pub precision: Option<Precision>,
    /// Seed of the random streams (thermostats, generated velocities).
    #[arg(long)]
    pub seed: Option<u64>,
    /// No progress bar or notes.
    #[arg(long)]
    pub quiet: bool,
}

/// The system to measure: the scene and/or --init, with the flags applied.
fn setup(args: &MeasureArgs) -> Result<(SimSetup, bool)> {
    let (mut setup, generated) = match &args.init {
        Some(path) => {
            let base = args.scene.as_deref().map(|p| scene::load_setup(Some(p))).transpose()?;
            let init = scene::with_init(base, path)?;
            (init.setup, init.needs_velocities)
        }
        None => (scene::load_setup(args.scene.as_deref())?, false),
    };
    if let Some(p) = args.precision {
        setup.params.precision = p;
    }
    if let Some(s) = args.seed {
        setup.params.seed = s;
    }
    Ok((setup, generated))
}

impl From<Quantity> for request::Quantity {
    fn from(q: Quantity) -> Self {
        match q {
            Quantity::Diffusion => request::Quantity::Diffusion,
            Quantity::Viscosity => request::Quantity::Viscosity,
        }
    }
}

/// The measurement the flags ask for.
fn request(args: &MeasureArgs) -> Request {
    Request {
        quantity: args.quantity.into(),
        steps: args.steps,
        lag: args.lag,
        t_cut: args.t_cut,
        hold: args.hold,
        viscosity: args.viscosity,
    }
}

/// A refusal of the shared checks (`transport::request::check`) worded with the flags: what
/// is wrong, the flag, and the fix.
fn refusal_text(r: &Refusal, args: &MeasureArgs) -> String {
    match r {
        Refusal::TooFewAtoms(n) => {
            format!("the system has {n} atom(s): measuring transport needs at least 2 (check the scene or --init)")
        }
        Refusal::NoSteps => "--steps 0: give the number of production steps to sample".into(),
        Refusal::Thermostat(t) => format!(
            "the scene's thermostat ({}) changes the dynamics transport is measured from: use --hold TAU (a weak \
             CSVR, e.g. 10) or a scene with nve or csvr",
            t.name()
        ),
        Refusal::BadHold(h) => {
            format!("--hold {}: the coupling time must be a positive number of tau (e.g. 10)", short(*h))
        }
        Refusal::BadViscosity(v) => {
            format!("--viscosity {}: the shear viscosity must be a positive number (reduced units)", short(*v))
        }
        Refusal::BadSampling(e) => format!("invalid sampling for --lag {}: {e}", short(args.lag)),
        Refusal::LagTooShort { min } => {
            format!("--lag {}: the longest lag must be at least 10 time steps ({} tau)", short(args.lag), short(*min))
        }
        Refusal::BadTCut => {
            format!("--t-cut {}: the cut of the Green-Kubo integral must be a positive time (tau)", short(args.t_cut))
        }
        Refusal::TooShort { needed } => {
            let what = match args.quantity {
                Quantity::Diffusion => {
                    format!("lags to --lag {} tau and origins for a standard error", short(args.lag))
                }
                Quantity::Viscosity => format!(
                    "{} blocks of {} x --t-cut {} tau for a standard error",
                    viscosity::MIN_BLOCKS,
                    viscosity::BLOCK_CUTS,
                    short(args.t_cut)
                ),
            };
            format!("--steps {} is too short for {what}: at least {needed} steps are needed", args.steps)
        }
        Refusal::Walls => "viscosity by Green-Kubo needs a box periodic along every axis; this one has walls".into(),
    }
}

/// Opens the backend and checks it measures `spec` (the CUDA backend sums at most 8
/// species): `auto` falls back to the CPU backend (with a note) where the chosen one cannot,
/// `cuda` fails with the reason.
fn open(
    args: &MeasureArgs,
    setup: &SimSetup,
    field: Option<Arc<ObstacleField>>,
    spec: TransportSpec,
) -> Result<Box<dyn Backend>> {
    let (sb, params, atoms) = (setup.sim_box, setup.params.clone(), &setup.atoms);
    let asked = args.backend.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string());
    let (mut sim, why) = open_backend(args.backend, sb, params.clone(), atoms, field.clone())
        .map_err(|e| anyhow::anyhow!("--backend {asked}: {e}"))?;
    if let Err(e) = sim.set_transport(Some(spec)) {
        if args.backend != BackendChoice::Auto || sim.info().kind == "cpu" {
            bail!("--backend {}: {e}; use --backend cpu", sim.info().kind);
        }
        if !args.quiet {
            eprintln!(
                "note: the {} backend cannot measure transport ({e}); measuring on the CPU backend",
                sim.info().kind
            );
        }
        (sim, _) = open_backend(BackendChoice::Cpu, sb, params, atoms, field)?;
    } else if !args.quiet {
        eprintln!("backend: {why} ({})", sim.info().device);
    }
    sim.set_transport(None)?;
    start_at(sim.as_mut(), setup.step, setup.time, setup.piston)?;
    Ok(sim)
}

/// Advances `steps` steps in chunks with a progress bar; `each` sees every chunk's
/// telemetry temperatures and the backend.
fn advance(
    sim: &mut dyn Backend,
    steps: u64,
    label: &str,
    quiet: bool,
    mut each: impl FnMut(&mut dyn Backend, &[f64]) -> Result<(), SimError>,
) -> Result<()> {
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(steps);
        bar.set_style(
            indicatif::ProgressStyle::with_template(&format!(
                "{label:>12} {{bar:40}} {{pos}}/{{len}} steps  {{per_sec}}  eta {{eta}}"
            ))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let end = sim.step() + steps;
    while sim.step() < end {
        if crate::interrupt::interrupted() {
            bail!("interrupted at step {}", sim.step());
        }
        sim.advance((end - sim.step()).min(1000))?;
        // In a flow, the thermal temperature: the stream is not heat.
        let temps: Vec<f64> =
            sim.drain_telemetry().iter().map(|t| t.thermal_temperature().unwrap_or(t.temperature)).collect();
        each(sim, &temps)?;
        if let Some(b) = &bar {
            b.set_position(steps - (end - sim.step()));
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(())
}

/// Appends `more` to `all`.
fn collect(all: &mut TransportSamples, more: TransportSamples) {
    all.msd.extend(more.msd);
    all.vacf.extend(more.vacf);
    all.stress.extend(more.stress);
    all.species_counts = more.species_counts;
}

pub fn run(args: &MeasureArgs) -> Result<()> {
    let (mut setup, generated) = setup(args)?;
    let params = setup.params.clone();
    params.validate(&setup.sim_box).map_err(|e| anyhow!("invalid setting {e}"))?;
    let n = setup.atoms.len();
    let req = request(args);
    let spec = request::check(&req, &params, n, &setup.sim_box).map_err(|r| anyhow!(refusal_text(&r, args)))?;
    let field = ObstacleField::bake(&setup.shapes, &setup.sim_box, 0.1).map(Arc::new);
    if generated {
        let masses: Vec<f64> = setup.atoms.types.iter().map(|&t| params.species[t as usize].mass).collect();
        let dof = analysis::degrees_of_freedom(n, &setup.sim_box, &params, field.is_some());
        setup.atoms.velocities = maxwell_boltzmann(&masses, params.temperature, dof, params.seed, 0);
    }
    let mut sim = open(args, &setup, field, spec)?;
    let backend = sim.info().kind;

    // Equilibration under CSVR, then production under the scene's thermostat or --hold.
    let csvr = |tau| Thermostat::Csvr { tau, relative_to_flow: false };
    sim.set_params(SimParams { thermostat: csvr(EQUILIBRATE_TAU), ..params.clone() })?;
    advance(sim.as_mut(), args.equilibrate, "equilibrate", args.quiet, |_, _| Ok(()))?;
    let production = match args.hold {
        Some(tau) => SimParams { thermostat: csvr(tau), ..params.clone() },
        None => params.clone(),
    };
    sim.set_params(production.clone())?;
    sim.set_transport(Some(spec))?;
    let mut samples = TransportSamples::default();
    let mut temps = Vec::new();
    advance(sim.as_mut(), args.steps, "measure", args.quiet, |sim, t| {
        temps.extend_from_slice(t);
        collect(&mut samples, sim.take_transport()?);
        Ok(())
    })?;
    let temperature = match temps.len() {
        0 => sim.measure().map(|t| t.thermal_temperature().unwrap_or(t.temperature))?,
        k => temps.iter().sum::<f64>() / k as f64,
    };
    let b = sim.sim_box();
    let density = n as f64 / b.volume();
    let inputs = Inputs {
        request: &req,
        params: &production,
        samples: &samples,
        stress_every: spec.stress_every,
        temperature,
        atoms: n,
        density,
        sim_box: b,
        run: Run { backend, equilibrate: args.equilibrate, thermostat: production.thermostat.name() },
        names: &CLI_NAMES,
    };
    let report = report::report(&inputs).map_err(|e| anyhow!(e))?;
    if args.json {
        println!("{}", report.to_json());
    } else {
        for l in report.lines() {
            println!("{l}");
        }
    }
    Ok(())
}
