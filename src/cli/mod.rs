//! The command line: `run` (headless simulation with thermo and trajectory output),
//! `bench` (throughput table), `record`, `export-lammps`, `lammps-fields` (a LAMMPS run's fields as `run --fields` writes them), `eos` (equation-of-state sweep), `measure` (transport coefficients) and
//! `examples` (the built-in scenes, whose names work wherever a scene file does). Every error names the file, field or flag and the fix.

pub mod bench;
pub mod eos;
pub mod examples;
pub mod export;
pub mod field_flags;
pub mod lammps_fields;
pub mod measure;
pub mod run;
mod run_flags;
mod run_forces;
mod run_wake;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "argon-sandbox",
    version,
    about = "A real-time Lennard-Jones argon fluid sandbox",
    long_about = "A real-time Lennard-Jones argon fluid sandbox. Without a subcommand it opens the desktop app.",
    subcommand_negates_reqs = true,
    override_usage = "argon-sandbox [--threads T] [OPTIONS] [SCENE]\n       argon-sandbox [--threads T] <COMMAND> [ITS OPTIONS]"
)]
pub struct Cli {
    /// Use this many CPU threads (default: all cores).
    #[arg(long, global = true)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub app: AppArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options of the desktop app (no subcommand).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AppArgs {
    /// Scene file (RON) or a built-in example's name (`argon-sandbox examples` lists them) to
    /// open; default: the last one, else the built-in default scene.
    pub scene: Option<std::path::PathBuf>,
    /// Backend (default: the remembered choice, else CUDA if usable, else wgpu on a hardware GPU
    /// for what it runs, else CPU).
    #[arg(long, value_enum)]
    pub backend: Option<crate::sim::BackendChoice>,
    /// Start paused.
    #[arg(long)]
    pub paused: bool,
    /// Re-initialise the scene with about this many atoms.
    #[arg(long)]
    pub atoms: Option<usize>,
    /// Close the window after this many frames (for scripted runs and tests).
    #[arg(long)]
    pub exit_after_frames: Option<u64>,
    /// With --exit-after-frames: save the last frame, UI included, as this PNG.
    #[arg(long, requires = "exit_after_frames")]
    pub screenshot: Option<std::path::PathBuf>,
    /// Do not read or save settings (a clean start).
    #[arg(long)]
    pub no_settings: bool,
    /// Say on stderr which backend and position path (zero-copy or host staging) run, and why.
    #[arg(long)]
    pub verbose: bool,
}

/// Opens the desktop app.
fn run_app(a: &AppArgs) -> anyhow::Result<()> {
    if a.exit_after_frames == Some(0) {
        anyhow::bail!("--exit-after-frames must be at least 1");
    }
    if let Some(n) = a.atoms
        && !(crate::scene::reinit::MIN_ATOMS..=crate::scene::MAX_ATOMS).contains(&n)
    {
        anyhow::bail!("--atoms {n}: use {} to {} atoms", crate::scene::reinit::MIN_ATOMS, crate::scene::MAX_ATOMS);
    }
    if let Some(p) = &a.scene {
        // Refuse a bad scene here with its error, rather than open a window with the default.
        crate::scene::load(Some(p))?;
    }
    let settings_path =
        if a.no_settings { None } else { crate::app::settings::config_dir().map(|d| d.join("settings.ron")) };
    let options = crate::app::AppOptions {
        scene: a.scene.clone(),
        backend: a.backend,
        settings_path,
        paused: a.paused,
        atoms: a.atoms,
        settings: None,
        verbose: a.verbose,
        gpu: None,
    };
    let window =
        crate::app::window::WindowOptions { exit_after_frames: a.exit_after_frames, screenshot: a.screenshot.clone() };
    crate::app::window::run(options, window)
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a simulation headless, writing thermo and trajectory files.
    #[command(allow_negative_numbers = true)]
    Run(run::RunArgs),
    /// Record a demo (MP4, GIF or PNG frames) with the renderer, headless.
    Record(crate::record::RecordArgs),
    /// Measure throughput on the LAMMPS in.lj system.
    Bench(bench::BenchArgs),
    /// Write a LAMMPS input deck (in.argon + data.argon) that reproduces a scene.
    ExportLammps(export::ExportArgs),
    /// Turn an exported deck's LAMMPS output (fields.json, fields.chunks, forces.series) into the
    /// .vti/.pvd and CSV files `run --fields` writes.
    LammpsFields(lammps_fields::LammpsFieldsArgs),
    /// Equation of state: P(rho) and U/N(rho) at one temperature, in reduced LJ units.
    #[command(allow_negative_numbers = true)]
    Eos(eos::EosArgs),
    /// Measure a transport coefficient: self-diffusion (Einstein, with a Green-Kubo check and
    /// the Yeh-Hummer correction) or shear viscosity (Green-Kubo).
    #[command(allow_negative_numbers = true)]
    Measure(measure::MeasureArgs),
    /// List the built-in example scenes; each name works wherever a scene file does.
    Examples(examples::ExamplesArgs),
}

impl AppArgs {
    /// The first of the app's own options that was given, by its spelling (None: none).
    fn given(&self) -> Option<String> {
        let AppArgs { scene, backend, paused, atoms, exit_after_frames, screenshot, no_settings, verbose } = self;
        if let Some(s) = scene {
            return Some(format!("the scene {}", s.display()));
        }
        [
            (backend.is_some(), "--backend"),
            (*paused, "--paused"),
            (atoms.is_some(), "--atoms"),
            (exit_after_frames.is_some(), "--exit-after-frames"),
            (screenshot.is_some(), "--screenshot"),
            (*no_settings, "--no-settings"),
            (*verbose, "--verbose"),
        ]
        .into_iter()
        .find(|(on, _)| *on)
        .map(|(_, name)| name.to_string())
    }
}

/// Entry point of the binary.
pub fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if let (Some(_), Some(opt)) = (&cli.command, cli.app.given()) {
        eprintln!(
            "error: {opt} belongs to the desktop app, which runs without a subcommand; give a subcommand's own \
             options after its name (argon-sandbox run --help lists them)"
        );
        return std::process::ExitCode::from(2);
    }
    crate::interrupt::install();
    if let Some(t) = cli.threads {
        if t == 0 {
            eprintln!("error: --threads must be at least 1");
            return std::process::ExitCode::from(2);
        }
        let _ = rayon::ThreadPoolBuilder::new().num_threads(t).build_global();
    }
    let result = match &cli.command {
        Some(Command::Run(a)) => run::run(a),
        Some(Command::Record(a)) => crate::record::run(a),
        Some(Command::Bench(a)) => bench::run(a),
        Some(Command::ExportLammps(a)) => export::run(a),
        Some(Command::LammpsFields(a)) => lammps_fields::run(a),
        Some(Command::Eos(a)) => eos::run(a),
        Some(Command::Measure(a)) => measure::run(a),
        Some(Command::Examples(a)) => examples::run(a),
        None => run_app(&cli.app),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
