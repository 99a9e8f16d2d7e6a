//! Where every system starts: a scene file or the built-in default scene, built into a
//! [`SimSetup`], optionally replaced by an extended XYZ state (`--init`). The one entry point
//! that `cli` (`run`, `bench`, `export-lammps`), `record` and the app use, so a scene loads
//! the same way everywhere.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

use super::{Scene, SceneError, SimSetup, presets};
use crate::io::extxyz::{XyzFrame, read_extxyz};
use crate::physics::params::{SimParams, Species};
use crate::physics::piston::PistonState;
use crate::physics::sim_box::SimBox;
use crate::physics::species::{catalogue_names, catalogue_species};
use crate::sim::AtomState;
use crate::units;

/// The built-in default scene (`assets/scenes/default.ron`, compiled in and tested valid).
pub fn default_scene() -> Scene {
    preset_scene("default").expect("the default scene is built in and valid")
}

/// The built-in preset called `name` (a file stem of `assets/scenes/`, `.ron` optional).
pub fn preset_scene(name: &str) -> Result<Scene, SceneError> {
    let p = presets::find(name).ok_or_else(|| SceneError::Unreadable {
        path: name.to_string(),
        reason: format!("no preset has this name; the presets are {}", presets::names()),
    })?;
    Scene::from_str(p.text, &format!("{}.ron (built-in preset)", p.name))
}

/// The preset a command-line or settings path names: a bare name (no folder) that is no file
/// here but is a preset's name, with or without `.ron`. A file of that name wins.
pub fn preset_named(path: &Path) -> Option<&'static presets::Preset> {
    let bare = path.parent().is_none_or(|p| p.as_os_str().is_empty());
    if !bare || path.exists() {
        return None;
    }
    presets::find(path.to_str()?)
}

/// The scene at `path` (a file, or a preset's name: `twin_eddies`), or the built-in default
/// scene. A path that is neither says so and lists the presets.
pub fn load(path: Option<&Path>) -> Result<Scene, SceneError> {
    let Some(path) = path else { return Ok(default_scene()) };
    if let Some(p) = preset_named(path) {
        return preset_scene(p.name);
    }
    Scene::load(path).map_err(|e| match e {
        SceneError::Unreadable { path: shown, reason } if !path.exists() => SceneError::Unreadable {
            path: shown,
            reason: format!(
                "{reason}; it is no file here nor the name of a built-in example ({}; `argon-sandbox examples` describes them)",
                presets::names()
            ),
        },
        e => e,
    })
}

/// Builds the scene at `path`, or the built-in default scene; errors name the file.
pub fn load_setup(path: Option<&Path>) -> Result<SimSetup> {
    let scene = load(path)?;
    scene.build().map_err(|e| match path {
        Some(p) => anyhow!("{}: {e}", p.display()),
        None => anyhow!("{e}"),
    })
}

/// A system started from an extended XYZ state (`--init`).
pub struct InitSetup {
    pub setup: SimSetup,
    /// The file had no velocities: they are zero, to be drawn from Maxwell-Boltzmann once the
    /// final temperature is known.
    pub needs_velocities: bool,
    /// The file had no `units=` key and was read as reduced LJ units.
    pub assumed_lj: bool,
}

/// Replaces the atoms and box of `base` (a scene's setup; None: no scene) with the state in
/// `path`. Without a scene the species come from the file alone (catalogue names) and the
/// temperature is 1 (reduced) unless set later. The run starts at step 0.
pub fn with_init(base: Option<SimSetup>, path: &Path) -> Result<InitSetup> {
    let scene_given = base.is_some();
    let mut setup = base.unwrap_or_else(|| SimSetup {
        sim_box: SimBox::new([1.0; 3], [true; 3]),
        params: SimParams::default(),
        atoms: AtomState::default(),
        shapes: Vec::new(),
        step: 0,
        time: 0.0,
        piston: None::<PistonState>,
        fields: None,
        dye: Vec::new(),
    });
    let (frame, assumed_lj) = read_init(path)?;
    setup.sim_box = frame.sim_box;
    (setup.step, setup.time, setup.piston) = (0, 0.0, None);
    if !scene_given {
        setup.params.species.clear();
        setup.params.temperature = 1.0;
    }
    let types = init_types(&frame.species, &mut setup.params.species).with_context(|| path.display().to_string())?;
    let n = frame.positions.len();
    let needs_velocities = frame.velocities.is_none();
    setup.atoms = AtomState {
        positions: frame.positions,
        velocities: frame.velocities.unwrap_or_else(|| vec![[0.0; 3]; n]),
        types,
        dye: frame.dye.unwrap_or_default(),
    };
    Ok(InitSetup { setup, needs_velocities, assumed_lj })
}

/// Reads an `--init` file: box and atoms in reduced units.
fn read_init(path: &Path) -> Result<(XyzFrame, bool)> {
    let mut frame = read_extxyz(path)?;
    let scale = match frame.units.as_deref() {
        None | Some("lj") => None,
        Some("metal") => Some((units::ARGON_SIGMA_ANGSTROM, units::ARGON_SIGMA_ANGSTROM / units::argon_tau_ps())),
        Some(other) => bail!(
            "{}: units={other} is not supported: write the state in reduced LJ units (units=lj) or in Å and Å/ps (units=metal)",
            path.display()
        ),
    };
    if let Some((length, speed)) = scale {
        for p in frame.positions.iter_mut() {
            p.iter_mut().for_each(|x| *x /= length);
        }
        if let Some(v) = frame.velocities.as_mut() {
            v.iter_mut().for_each(|v| v.iter_mut().for_each(|x| *x /= speed));
        }
        let b = &mut frame.sim_box;
        b.lo.iter_mut().chain(b.hi.iter_mut()).for_each(|x| *x /= length);
    }
    let assumed_lj = frame.units.is_none();
    Ok((frame, assumed_lj))
}

/// The type of every atom of an `--init` file, by species name: a species of the scene, else
/// a catalogue species appended to `species`.
fn init_types(names: &[String], species: &mut Vec<Species>) -> Result<Vec<u32>> {
    let mut types = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let t = match species.iter().position(|s| &s.name == name) {
            Some(t) => t,
            None => {
                let Some(s) = catalogue_species(name) else {
                    bail!(
                        "atom {} is `{name}`, which is neither a species of the scene nor in the catalogue ({}): \
                         rename it, or list it in the scene's `species` with its parameters",
                        i + 1,
                        catalogue_names()
                    );
                };
                if species.len() >= 16 {
                    bail!("atom {} is `{name}`, a 17th species: at most 16 species are supported", i + 1);
                }
                species.push(s);
                species.len() - 1
            }
        };
        types.push(t as u32);
    }
    Ok(types)
}
