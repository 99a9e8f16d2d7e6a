//! `argon-sandbox examples`: the built-in preset scenes, one per line (name, atoms, what it is
//! made for, its title and one-line description), and how to open one. Every name works
//! wherever a scene file does.

use anyhow::Result;

use crate::scene::presets::{PRESETS, thousands};

#[derive(clap::Args, Debug, Clone)]
pub struct ExamplesArgs {
    /// Also print what each example shows.
    #[arg(long, short)]
    pub long: bool,
}

/// The listing, as printed.
pub fn listing(long: bool) -> Result<String> {
    let mut out = String::from("Built-in examples (a name works wherever a scene file does):\n\n");
    for p in PRESETS {
        let scene = crate::scene::preset_scene(p.name)?;
        out += &format!(
            "  {:<14} {:>9} atoms  {:<12} {}: {}\n",
            p.name,
            thousands(p.atoms),
            p.made_for.label(),
            scene.name,
            scene.description
        );
        if long {
            out += &format!("{:17}{}\n\n", "", p.shows);
        }
    }
    out += "\nOpen one in the app:   argon-sandbox twin_eddies\n";
    out += "Run one headless:      argon-sandbox run twin_eddies --steps 1000 --thermo thermo.csv\n";
    out += "Its file, to copy:     assets/scenes/<name>.ron in the source tree, or Save as… in the app\n";
    Ok(out)
}

pub fn run(args: &ExamplesArgs) -> Result<()> {
    print!("{}", listing(args.long)?);
    Ok(())
}
