//! `argon-sandbox eos`: an equation-of-state sweep P(rho), U(rho) at one temperature in
//! reduced LJ units, with block-average error bars, written as CSV (`rho,P,P_err,U,U_err`)
//! and printed as a table beside the JZG (1993) equation of state. The work is `crate::eos`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, anyhow};
use clap::Args;

use crate::eos::{self, EosEnsemble, EosError, EosEvent, EosSpec};
use crate::sim::{BackendChoice, hmc};

#[derive(Args, Debug, Clone)]
#[command(
    about = "Equation of state: P(rho) and U/N(rho) at one temperature (reduced LJ units)",
    long_about = "Equation-of-state sweep in reduced LJ units (sigma = epsilon = m = k_B = 1). For each density an fcc \
                  lattice of about --atoms atoms is melted at --temperature, equilibrated and sampled with the LJ \
                  potential truncated (not shifted) at --cutoff. P and U/N are full-LJ values: the tail corrections \
                  beyond the cutoff are added, as in the Johnson-Zollweg-Gubbins (1993) table. Error bars are \
                  standard errors of --blocks block averages. Writes rho,P,P_err,U,U_err to --out and prints the \
                  table with the JZG values where T and rho are inside the fit's range (T 0.7 to 6, rho up to 1.2)."
)]
pub struct EosArgs {
    /// Temperature (reduced, k_B T / epsilon).
    #[arg(long)]
    pub temperature: f64,
    /// Densities as a:b:step, inclusive (reduced, N sigma^3 / V), or one density.
    #[arg(long)]
    pub densities: String,
    /// nvt: molecular dynamics with the CSVR thermostat; hmc: hybrid Monte Carlo.
    #[arg(long, value_enum, default_value = "nvt")]
    pub ensemble: EosEnsemble,
    /// Steps per HMC trajectory (--ensemble hmc).
    #[arg(long, default_value_t = hmc::DEFAULT_TRAJECTORY)]
    pub trajectory: u32,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendChoice,
    /// Atoms per density, rounded to the nearest fcc lattice of 4 k^3 (500 = 5^3 cells).
    #[arg(long, default_value_t = 500)]
    pub atoms: usize,
    /// Equilibration steps per density (not sampled).
    #[arg(long, default_value_t = 2_000)]
    pub equilibration: u64,
    /// Production steps per density (sampled every 10 steps).
    #[arg(long, default_value_t = 20_000)]
    pub production: u64,
    /// Blocks for the error bars.
    #[arg(long, default_value_t = 20)]
    pub blocks: usize,
    /// Seed of the velocities and thermostat noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// LJ truncation radius in sigma (the potential is not shifted).
    #[arg(long, default_value_t = 2.5)]
    pub cutoff: f64,
    /// CSV to write (atomically): rho,P,P_err,U,U_err.
    #[arg(long)]
    pub out: PathBuf,
    /// No progress bar or table.
    #[arg(long)]
    pub quiet: bool,
}

/// Builds the sweep's settings from the flags.
pub fn spec(args: &EosArgs) -> Result<EosSpec> {
    let densities = eos::grid::parse_densities(&args.densities).map_err(flag_error)?;
    let spec = EosSpec {
        temperature: args.temperature,
        densities,
        ensemble: args.ensemble,
        trajectory: args.trajectory,
        atoms: args.atoms,
        equilibration: args.equilibration,
        production: args.production,
        blocks: args.blocks,
        seed: args.seed,
        cutoff: args.cutoff,
        backend: args.backend,
        ..EosSpec::default()
    };
    spec.validate().map_err(flag_error)?;
    Ok(spec)
}

fn flag_error(e: EosError) -> anyhow::Error {
    match e {
        EosError::Invalid { field, message } => anyhow!("invalid --{field}: {message}"),
        other => anyhow!(other),
    }
}

pub fn run(args: &EosArgs) -> Result<()> {
    let spec = spec(args)?;
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        anyhow::bail!("invalid --out {}: the folder {} does not exist", args.out.display(), dir.display());
    }
    let (k, n) = eos::fcc_cells(spec.atoms);
    if !args.quiet {
        if n != spec.atoms {
            eprintln!("note: --atoms {} rounded to {n} (an fcc lattice has 4 k^3 atoms; k = {k})", spec.atoms);
        }
        eprintln!(
            "eos: T = {}, {} densities, {n} atoms, {}, r_c = {} (truncated, unshifted, tail corrections added), \
             {} + {} steps per density",
            spec.temperature,
            spec.densities.len(),
            spec.ensemble.name(),
            spec.cutoff,
            spec.equilibration,
            spec.production
        );
    }
    let bar = (!args.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(spec.total_steps());
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} steps  {msg}  eta {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    // Ctrl+C stops the sweep between chunks of steps (the CSV is then not written).
    let cancel = AtomicBool::new(false);
    let mut on_event = |e: EosEvent| {
        if crate::interrupt::interrupted() {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if let (Some(bar), EosEvent::Progress { point, steps_done, .. }) = (&bar, &e) {
            bar.set_position(*steps_done);
            bar.set_message(format!("rho = {}", spec.densities[*point]));
        }
    };
    let result = eos::run_sweep(&spec, &cancel, &mut on_event);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let points = match result {
        Ok(p) => p,
        Err(EosError::Cancelled) => anyhow::bail!("interrupted: {} not written", args.out.display()),
        Err(e) => return Err(flag_error(e)),
    };
    eos::table::write_csv(&args.out, &points).with_context(|| format!("writing {}", args.out.display()))?;
    if !args.quiet {
        print!("{}", eos::table::format_table(&points, spec.temperature));
        eprintln!("wrote {}", args.out.display());
    }
    Ok(())
}
