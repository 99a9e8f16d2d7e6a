//! `argon-sandbox export-lammps [SCENE] --out DIR`: writes a LAMMPS input deck that reproduces
//! the scene (see `export::lammps`), with the flow fields and obstacle forces on argon-sandbox's
//! grid when the scene has `fields` or `--fields` asks (`export::lammps_fields`), prints what
//! did not map exactly as warnings and how to run the deck on one core, many MPI ranks or GPUs.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use super::field_flags::{FieldFlags, flag_of};
use crate::export::lammps::{ExportInput, LammpsUnits, build_deck_with_fields, write_deck};
use crate::flow::FieldSpec;

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
    /// Write flow fields on argon-sandbox's grid and the obstacles' forces from LAMMPS (for
    /// `argon-sandbox lammps-fields`), with the scene's field settings or the defaults; on by
    /// default when the scene has `fields`.
    #[arg(long)]
    pub fields: bool,
    /// No field or force output in the deck, even when the scene has `fields`.
    #[arg(long, conflicts_with = "fields")]
    pub no_fields: bool,
    #[command(flatten)]
    pub field_flags: FieldFlags,
    /// No summary on stderr (warnings are still printed).
    #[arg(long)]
    pub quiet: bool,
}

/// The deck's field settings: None with --no-fields or when neither the scene nor --fields
/// asks for them; the flags override the scene's. A bad setting names its flag.
fn field_spec(args: &ExportArgs, scene: Option<FieldSpec>) -> Result<Option<FieldSpec>> {
    let flags = args.field_flags.first_given().is_some();
    if args.no_fields {
        if flags {
            bail!("--no-fields leaves the fields out; drop --field-bin, --field-every, --field-window and --field-3d");
        }
        return Ok(None);
    }
    if !(args.fields || flags || scene.is_some()) {
        return Ok(None);
    }
    Ok(Some(args.field_flags.apply(scene.unwrap_or_default())))
}

/// A field-setting error from the deck builder with the flag that sets it.
fn field_flag(e: String) -> String {
    for field in ["bin", "every", "window_tau"] {
        if let (true, Some(flag)) = (e.starts_with(&format!("fields: {field} = ")), flag_of(field)) {
            return format!("invalid {flag}: {}", &e["fields: ".len()..]);
        }
    }
    e
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
    let spec = field_spec(args, setup.fields.clone())?;
    let deck = build_deck_with_fields(
        &ExportInput {
            sim_box: &setup.sim_box,
            params: &setup.params,
            atoms: &setup.atoms,
            shapes: &setup.shapes,
            source: &source,
            units: args.units,
            rakes: crate::scene::dye::rakes(&setup.dye).len(),
            steps: args.steps,
            thermo_every: args.thermo_every,
        },
        spec.as_ref(),
    )
    .map_err(|e| anyhow::anyhow!("{source}: {}", field_flag(e)))?;
    let [input, data] =
        write_deck(&args.out, &deck).with_context(|| format!("writing the deck into {}", args.out.display()))?;
    for w in &deck.warnings {
        eprintln!("warning: {w}");
    }
    if !args.quiet {
        eprintln!(
            "wrote {} and {} ({} atoms, {} units)",
            input.display(),
            data.display(),
            setup.atoms.len(),
            args.units.name(),
        );
        eprintln!("run it in {} (the deck runs unchanged on any number of MPI ranks):", args.out.display());
        for line in crate::export::lammps::how_to_run(deck.fields.is_some()) {
            eprintln!("  {line}");
        }
    }
    Ok(())
}
