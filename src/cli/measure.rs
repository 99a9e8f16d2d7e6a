//! `argon-sandbox measure diffusion|viscosity`: a transport measurement from a scene and/or an
//! extended XYZ state. Equilibrates (`--equilibrate` steps under stochastic velocity
//! rescaling, CSVR with tau = 0.5, at the scene's target temperature), then samples
//! `--steps` production steps under the scene's own thermostat (or a weak CSVR with
//! `--hold TAU`) through `Backend::set_transport`, and hands the records to
//! `transport::diffusion` / `transport::viscosity`. Prints the value, its standard error, the
//! method and, for diffusion in a cubic periodic box, the Yeh-Hummer corrected value; `--json`
//! prints one object. Reduced LJ units, with SI beside them (argon's sigma, epsilon, m).
//!
//! Glue only: the physics is in `transport`, the sampling in the backends.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::analysis;
use crate::physics::init::maxwell_boltzmann;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::real::Precision;
use crate::scene::{self, SimSetup};
use crate::sim::{Backend, BackendChoice, SimError, open_backend, start_at};
use crate::transport::{TransportSamples, TransportSpec, diffusion, plan, viscosity};
use crate::units;

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
    /// Scene file (RON). Without it: the built-in default scene, or only the --init state.
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

/// Checks the flags against the system; errors name the flag and the fix.
fn check(args: &MeasureArgs, params: &SimParams, n: usize, spec: &TransportSpec) -> Result<()> {
    if n < 2 {
        bail!("the system has {n} atom(s): measuring transport needs at least 2 (check the scene or --init)");
    }
    if args.steps == 0 {
        bail!("--steps 0: give the number of production steps to sample");
    }
    if (params.thermostat.is_monte_carlo() || matches!(params.thermostat, Thermostat::Langevin { .. }))
        && args.hold.is_none()
    {
        bail!(
            "the scene's thermostat ({}) changes the dynamics transport is measured from: use --hold TAU (a weak \
             CSVR, e.g. 10) or a scene with nve or csvr",
            params.thermostat.name()
        );
    }
    if let Some(h) = args.hold
        && !(h.is_finite() && h > 0.0)
    {
        bail!("--hold {h}: the coupling time must be a positive number of tau (e.g. 10)");
    }
    if let Some(v) = args.viscosity
        && !(v.is_finite() && v > 0.0)
    {
        bail!("--viscosity {v}: the shear viscosity must be a positive number (reduced units)");
    }
    spec.validate(params.dt).map_err(|e| anyhow!("invalid sampling for --lag {}: {e}", args.lag))?;
    let needed = match args.quantity {
        Quantity::Diffusion => {
            if !(args.lag.is_finite() && args.lag >= 10.0 * params.dt) {
                bail!("--lag {}: the longest lag must be at least 10 time steps ({} tau)", args.lag, 10.0 * params.dt);
            }
            plan::diffusion_min_steps(params.dt, args.lag)
        }
        Quantity::Viscosity => {
            if !(args.t_cut.is_finite() && args.t_cut > 0.0) {
                bail!("--t-cut {}: the cut of the Green-Kubo integral must be a positive time (tau)", args.t_cut);
            }
            viscosity::min_steps(args.t_cut, params.dt)
        }
    };
    if args.steps < needed {
        let what = match args.quantity {
            Quantity::Diffusion => format!("lags to --lag {} tau and origins for a standard error", args.lag),
            Quantity::Viscosity => format!(
                "{} blocks of {} x --t-cut {} tau for a standard error",
                viscosity::MIN_BLOCKS,
                viscosity::BLOCK_CUTS,
                args.t_cut
            ),
        };
        bail!("--steps {} is too short for {what}: at least {needed} steps are needed", args.steps);
    }
    Ok(())
}

/// Opens the backend and checks it measures `spec` (the CUDA backend measures diffusion, not
/// yet viscosity): `auto` falls back to the CPU backend (with a note) where the chosen one
/// cannot, `cuda` fails with the reason.
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
        let temps: Vec<f64> = sim.drain_telemetry().iter().map(|t| t.temperature).collect();
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

/// The shear viscosity the Yeh-Hummer correction uses: `--viscosity`, else the
/// Lautenschlaeger-Hasse correlation for one LJ species cut and shifted at 2.5 sigma (the
/// potential it was fitted to) inside its domain; Err says why there is none.
fn correction_viscosity(args: &MeasureArgs, params: &SimParams, density: f64, t: f64) -> Result<(f64, String), String> {
    if let Some(v) = args.viscosity {
        return Ok((v, "--viscosity".into()));
    }
    let s = params.species.first().ok_or("no species")?;
    let ljts = params.species.len() == 1 && params.shift && (params.pair_cutoff(0, 0) - 2.5 * s.sigma).abs() < 1e-9;
    if !ljts {
        return Err("no viscosity for this system (the LJTS correlation is for one species cut and shifted at 2.5 \
                    sigma): give --viscosity ETA"
            .into());
    }
    // In the species' own reduced units.
    let (rho, temp) = (density * s.sigma.powi(3), t / s.epsilon);
    let eta = crate::flow::wake::lj_viscosity(rho, temp).ok_or_else(|| {
        format!("rho* {rho:.3}, T* {temp:.3} is outside the LJTS viscosity correlation's domain: give --viscosity ETA")
    })?;
    Ok((eta * (s.mass * s.epsilon).sqrt() / (s.sigma * s.sigma), "Lautenschlaeger-Hasse LJTS correlation".into()))
}

pub fn run(args: &MeasureArgs) -> Result<()> {
    let (mut setup, generated) = setup(args)?;
    let params = setup.params.clone();
    params.validate(&setup.sim_box).map_err(|e| anyhow!("invalid setting {e}"))?;
    let n = setup.atoms.len();
    let spec = match args.quantity {
        Quantity::Diffusion => plan::diffusion(params.dt, args.lag),
        Quantity::Viscosity => plan::viscosity(params.dt),
    };
    check(args, &params, n, &spec)?;
    if args.quantity == Quantity::Viscosity && !setup.sim_box.fully_periodic() {
        bail!("viscosity by Green-Kubo needs a box periodic along every axis; this one has walls");
    }
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
        0 => sim.measure()?.temperature,
        k => temps.iter().sum::<f64>() / k as f64,
    };
    let b = sim.sim_box();
    let volume = b.volume();
    let density = n as f64 / volume;
    let mut out = json!({
        "quantity": format!("{:?}", args.quantity).to_lowercase(),
        "units": "lj",
        "backend": backend,
        "atoms": n,
        "steps": args.steps,
        "equilibrate": args.equilibrate,
        "temperature": temperature,
        "density": density,
        "thermostat": production.thermostat.name(),
    });
    let mut lines = Vec::new();
    match args.quantity {
        Quantity::Diffusion => {
            diffusion_report(args, &production, &samples, temperature, density, &b, &mut out, &mut lines)?
        }
        Quantity::Viscosity => {
            let every = spec.stress_every;
            let v = viscosity::green_kubo(&samples.stress, every, params.dt, volume, temperature, args.t_cut)
                .map_err(|e| anyhow!("viscosity: {e}"))?;
            let method = format!(
                "Green-Kubo: V/(k_B T) integral of <P_ab(0) P_ab(t)> (xy, xz, yz averaged; multiple-tau correlator, \
                 samples every {every} steps) to t_cut = {} tau; error from {} blocks",
                v.t_cut, v.blocks
            );
            let obj = out.as_object_mut().ok_or_else(|| anyhow!("json"))?;
            obj.insert("value".into(), json!(v.value));
            obj.insert("stderr".into(), json!(v.stderr));
            obj.insert("method".into(), json!(method));
            obj.insert("t_cut".into(), json!(v.t_cut));
            obj.insert("value_at_0.6_t_cut".into(), json!(v.at_shorter));
            obj.insert("value_at_1.6_t_cut".into(), json!(v.at_longer));
            obj.insert("value_si".into(), json!(units::reduced_viscosity_to_mpa_s(v.value)));
            obj.insert("stderr_si".into(), json!(units::reduced_viscosity_to_mpa_s(v.stderr)));
            obj.insert("si_units".into(), json!("mPa s"));
            lines.push(format!(
                "shear viscosity eta* = {:.4} +- {:.4} ({:.4} +- {:.4} mPa s for argon)",
                v.value,
                v.stderr,
                units::reduced_viscosity_to_mpa_s(v.value),
                units::reduced_viscosity_to_mpa_s(v.stderr)
            ));
            let fmt = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.4}"));
            lines.push(format!(
                "  running integral at {:.1} / {:.1} / {:.1} tau: {} / {:.4} / {}",
                0.6 * v.t_cut,
                v.t_cut,
                1.6 * v.t_cut,
                fmt(v.at_shorter),
                v.value,
                fmt(v.at_longer)
            ));
            lines.push(format!("  method: {method}"));
        }
    }
    if args.json {
        println!("{out}");
    } else {
        lines.push(format!(
            "  {n} atoms, rho* = {density:.4}, mean T* = {temperature:.4}, {} production steps on the {backend} backend",
            args.steps
        ));
        for l in lines {
            println!("{l}");
        }
    }
    Ok(())
}

/// The diffusion numbers: per species Einstein D with the VACF check, the Yeh-Hummer
/// correction where it applies; into `out` (JSON) and `lines` (text).
#[allow(clippy::too_many_arguments)]
fn diffusion_report(
    args: &MeasureArgs,
    params: &SimParams,
    samples: &TransportSamples,
    temperature: f64,
    density: f64,
    b: &crate::physics::sim_box::SimBox,
    out: &mut Value,
    lines: &mut Vec<String>,
) -> Result<()> {
    let dt = params.dt;
    let correction = match diffusion::yeh_hummer_inapplicable(b) {
        Some(why) => Err(why),
        None => correction_viscosity(args, params, density, temperature)
            .map(|(eta, from)| (diffusion::yeh_hummer_correction(temperature, eta, b.length()[0]), eta, from)),
    };
    let mut species = Vec::new();
    for (k, &count) in samples.species_counts.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let name = params.species.get(k).map_or("?".to_string(), |s| s.name.clone());
        let (d, _) =
            diffusion::einstein(&samples.msd, k, count, dt).map_err(|e| anyhow!("diffusion of {name}: {e}"))?;
        let (gk, _) = diffusion::green_kubo(&samples.vacf, k, count, dt).map_err(|e| anyhow!("VACF of {name}: {e}"))?;
        let mut s = json!({
            "species": name,
            "atoms": count,
            "value": d.value,
            "stderr": d.stderr,
            "fit_from_tau": d.from_lag,
            "fit_to_tau": d.to_lag,
            "blocks": d.blocks,
            "value_si": units::reduced_diffusion_to_m2_per_s(d.value),
            "stderr_si": units::reduced_diffusion_to_m2_per_s(d.stderr),
            "green_kubo": gk.value,
            "green_kubo_stderr": gk.stderr,
            "green_kubo_to_tau": gk.to_lag,
        });
        lines.push(format!(
            "self-diffusion of {name}: D* = {:.5} +- {:.5} ({:.4e} +- {:.2e} m^2/s for argon units)",
            d.value,
            d.stderr,
            units::reduced_diffusion_to_m2_per_s(d.value),
            units::reduced_diffusion_to_m2_per_s(d.stderr)
        ));
        lines.push(format!(
            "  method: Einstein, weighted line through the MSD over {:.2}..{:.2} tau (log-log slope within {} of 1), \
             error from {} blocks of origins",
            d.from_lag,
            d.to_lag,
            diffusion::SLOPE_TOLERANCE,
            d.blocks
        ));
        lines.push(format!(
            "  check: Green-Kubo (1/3) integral of the VACF to {:.2} tau: D* = {:.5} +- {:.5}",
            gk.to_lag, gk.value, gk.stderr
        ));
        match &correction {
            Ok((c, eta, from)) => {
                s["value_corrected"] = json!(d.value + c);
                s["correction"] = json!(c);
                s["correction_viscosity"] = json!(eta);
                lines.push(format!(
                    "  Yeh-Hummer finite-size correction (eta* = {eta:.4} from {from}, L = {:.3}): D*_inf = {:.5} \
                     (+{c:.5})",
                    b.length()[0],
                    d.value + c
                ));
                s["correction_viscosity_from"] = json!(from);
            }
            Err(why) => lines.push(format!("  no Yeh-Hummer correction: {why}")),
        }
        species.push(s);
    }
    let first = species.first().cloned().ok_or_else(|| anyhow!("no atoms were sampled"))?;
    let obj = out.as_object_mut().ok_or_else(|| anyhow!("json"))?;
    for key in ["value", "stderr", "value_si", "stderr_si", "value_corrected", "species"] {
        if let Some(v) = first.get(key) {
            obj.insert(key.into(), v.clone());
        }
    }
    obj.insert(
        "method".into(),
        json!(format!(
            "Einstein: D = slope/6 of the mean-squared displacement over {:.2}..{:.2} tau (log-log slope within {} of \
             1), standard error from blocks of origins",
            first["fit_from_tau"].as_f64().unwrap_or(0.0),
            first["fit_to_tau"].as_f64().unwrap_or(0.0),
            diffusion::SLOPE_TOLERANCE
        )),
    );
    obj.insert("green_kubo".into(), first["green_kubo"].clone());
    obj.insert("green_kubo_stderr".into(), first["green_kubo_stderr"].clone());
    obj.insert("si_units".into(), json!("m^2/s"));
    if let Err(why) = &correction {
        obj.insert("correction_note".into(), json!(why));
    }
    obj.insert("per_species".into(), Value::Array(species));
    Ok(())
}
