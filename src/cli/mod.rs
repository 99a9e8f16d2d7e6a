//! The command line: `run` (headless simulation with thermo and trajectory output) and
//! `bench` (throughput table). Every error names the file, field or flag and the fix.

pub mod bench;
pub mod run;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "argon-sandbox", version, about = "A real-time Lennard-Jones argon fluid sandbox")]
pub struct Cli {
    /// Use this many CPU threads (default: all cores).
    #[arg(long, global = true)]
    pub threads: Option<usize>,
    #[command(subcommand)]
    pub command: Option<Command>,
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
}

/// Entry point of the binary.
pub fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
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
        None => {
            eprintln!("the desktop app is not built yet; try `argon-sandbox run` or `argon-sandbox bench`");
            Ok(())
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
