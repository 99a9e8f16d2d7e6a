//! `argon-sandbox export-lammps [SCENE] --out DIR`: writes a LAMMPS input deck that reproduces
//! the scene (see `export::lammps`), prints what did not map exactly as warnings.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::export::lammps::{ExportInput, LammpsUnits, build_deck, write_deck};

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// Scene file (RON) or a built-in example's name (`argon-sandbox examples`); without it,
    /// the built-in default scene.
    pub scene: Option<PathBuf>,
    /// Folder for `in.argon` and `data.argon` (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// LAMMPS unit style: lj (reduced), or real / metal for argon.
    #[arg(long, value_enum, default_value = "lj")]
    pub units: LammpsUnits,
    /// Steps in the deck's `run` command.
    #[arg(long, default_value_t = 10_000)]
    pub steps: u64,
    /// Thermo output interval of the deck.
    #[arg(long, default_value_t = 100)]
    pub thermo_every: u64,
    /// No summary on stderr (warnings are still printed).
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: &ExportArgs) -> Result<()> {
    if args.thermo_every == 0 {
        bail!("invalid --thermo-every 0: must be at least 1");
    }
    let setup = crate::scene::load_setup(args.scene.as_deref())?;
    let source = match &args.scene {
        Some(p) => p.display().to_string(),
        None => "the built-in default scene".to_string(),
    };
    let deck = build_deck(&ExportInput {
        sim_box: &setup.sim_box,
        params: &setup.params,
        atoms: &setup.atoms,
        shapes: &setup.shapes,
        source: &source,
        units: args.units,
        steps: args.steps,
        thermo_every: args.thermo_every,
    })
    .map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    let [input, data] =
        write_deck(&args.out, &deck).with_context(|| format!("writing the deck into {}", args.out.display()))?;
    for w in &deck.warnings {
        eprintln!("warning: {w}");
    }
    if !args.quiet {
        eprintln!(
            "wrote {} and {} ({} atoms, {} units); run with: lmp -in {}",
            input.display(),
            data.display(),
            setup.atoms.len(),
            args.units.name(),
            crate::export::lammps::INPUT_FILE
        );
    }
    Ok(())
}
