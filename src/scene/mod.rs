//! Scene files: the versioned RON description of a system (box, potential, walls,
//! thermostat, forces, how atoms are placed, obstacles) that people write, save and share.
//!
//! Owns the file schema, strict parsing and validation (every error with line/column and
//! the allowed range), and turning a scene into a [`SimSetup`] for a backend. It must not
//! touch backends or the UI.
//!
//! - `mod.rs`: the schema (what a file may contain). The presets in `assets/scenes/` document it.
//! - `parse.rs`: [`Scene::load`], [`Scene::from_str`], [`Scene::to_ron`], [`Scene::save`].
//! - `validate.rs`, `validate_shapes.rs`, `validate_species.rs`: ranges and consistency, reusing [`SimParams::validate`].
//! - `locate.rs`: finds a field's line and column in the text, for errors found after parsing.
//! - `build.rs`: [`Scene::build`], fills in order, then Maxwell-Boltzmann velocities.
//! - `load.rs`: [`load`], [`load_setup`], [`with_init`]: the one way every command and the app
//!   start a system (a scene file or the built-in default, optionally an `--init` state).
//! - `reinit.rs`: a new scene from the current one with another atom count or initial state
//!   (the app's Re-initialise, `--atoms`, `bench --scene --n`).
//! - `grid.rs`: the cell grid behind overlap checks. `error.rs`: [`SceneError`].

mod build;
pub mod dye;
mod error;
mod grid;
mod load;
mod locate;
mod parse;
pub mod presets;
pub mod reinit;
mod validate;
mod validate_shapes;
mod validate_species;

pub use build::{EXPLICIT_SEPARATION, GAS_SEPARATION, LATTICE_SEPARATION, SURFACE_CLEARANCE};
pub use dye::DyeSource;
pub use error::{Location, SceneError};
pub use grid::find_close_pair;
pub use load::{InitSetup, default_scene, load, load_setup, preset_named, preset_scene, with_init};
pub use parse::MAX_FILE_BYTES;
pub use validate::{
    MAX_ATOMS, MAX_BOX_LENGTH, MAX_BOX_VOLUME, MAX_DENSITY, MAX_OBSTACLES, MAX_POLYGON_POINTS, MAX_SHAPE_COORDINATE,
    MAX_STROKE_POINTS, MIN_EXPLICIT_SEPARATION,
};

use serde::{Deserialize, Serialize};

use crate::physics::friction::SurfaceFriction;
use crate::physics::tunnel::Tunnel;

use crate::flow::FieldSpec;
use crate::physics::cutoff::Cutoff;
use crate::physics::init::LatticeKind;
use crate::physics::params::{Boundary, SimParams, Species, Thermostat};
use crate::physics::piston::{PistonParams, PistonState};
use crate::physics::real::Precision;
use crate::physics::sim_box::SimBox;
use crate::physics::species;
use crate::shapes::Shape;
use crate::sim::AtomState;
use crate::units;

/// The scene format version this build reads and writes.
pub const SCENE_VERSION: u32 = 1;

/// A whole scene. Lengths are in sigma, times in tau, accelerations in sigma/tau^2,
/// temperatures in kelvin (argon's epsilon/k_B = 119.8 K).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    pub version: u32,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "box")]
    pub tank: TankSpec,
    #[serde(default)]
    pub potential: PotentialSpec,
    #[serde(default)]
    pub walls: WallSpec,
    #[serde(default)]
    pub integrator: IntegratorSpec,
    /// Floating-point precision the scene runs in: `Single` (f32 throughout), `Mixed` (f32
    /// forces, f64 state) or `Double`; absent, the app starts in mixed and `run` in double.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// Target temperature of the thermostat and temperature of generated velocities.
    pub temperature_k: f64,
    #[serde(default = "default_thermostat")]
    pub thermostat: Thermostat,
    #[serde(default)]
    pub forces: ForcesSpec,
    /// The atom species, by catalogue symbol (`Ne`, `Ar`, `Kr`, `Xe`) or with custom
    /// parameters; atoms refer to them by index (default: argon alone).
    #[serde(default = "default_species", skip_serializing_if = "is_argon_only")]
    pub species: Vec<SpeciesSpec>,
    /// Fraction of the generated atoms (lattice, gas, slab fills) of each species, in the order
    /// of `species`; needed with two or more species. Assigned from the seed, so repeatable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition: Option<Vec<f64>>,
    /// How atoms are placed, applied in order.
    pub atoms: Vec<Fill>,
    #[serde(default)]
    pub obstacles: Vec<Shape>,
    #[serde(default)]
    pub obstacle_wall: ObstacleSpec,
    /// No-slip walls and obstacles: Langevin friction on the velocity tangential to a surface
    /// within `range` of it (see `physics::friction`); absent, the surfaces are smooth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface_friction: Option<SurfaceFriction>,
    /// A wind tunnel along a periodic x (see `physics::tunnel`): stream speed (sigma/tau) and
    /// the width of the inflow zone at the upstream end (sigma); absent, no tunnel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tunnel: Option<Tunnel>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The top wall as a piston under a set pressure (needs a `Wall` y boundary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub piston: Option<PistonSpec>,
    /// Flow fields sampled while the scene runs (see `flow::FieldSpec`): bin edge (sigma),
    /// an optional z slab, sampling interval (steps) and averaging window (tau).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<FieldSpec>,
    /// Simulation steps per displayed frame the app starts this scene at (the Simulation
    /// panel changes it); absent, the app keeps its own setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_frame: Option<u64>,
    /// Where a saved running state continues (written by "save with current atoms").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
    /// Dye sources (`dye.rs`), numbered from 1 in order: regions tag at step 0, rakes every step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dye: Vec<DyeSource>,
}

/// The step and simulated time a saved running state continues from, so thermostat noise
/// (drawn per step) and the clock carry on exactly as if the run had not stopped.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    pub step: u64,
    /// Simulated time (tau).
    pub time: f64,
    /// The piston's height and velocity when the run was saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub piston: Option<PistonState>,
}

/// The piston (see `physics/piston.rs`): external pressure in reduced units (epsilon/sigma^3;
/// 1 is 41.9 MPa for argon), mass in argon masses, friction in 1/tau.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PistonSpec {
    pub pressure: f64,
    #[serde(default = "default_piston_mass")]
    pub mass: f64,
    #[serde(default = "default_piston_damping")]
    pub damping: f64,
}

fn default_piston_mass() -> f64 {
    PistonParams::DEFAULT_MASS
}

fn default_piston_damping() -> f64 {
    PistonParams::DEFAULT_DAMPING
}

impl PistonSpec {
    pub fn params(&self) -> PistonParams {
        PistonParams { pressure: self.pressure, mass: self.mass, damping: self.damping }
    }

    pub fn from_params(p: &PistonParams) -> Self {
        PistonSpec { pressure: p.pressure, mass: p.mass, damping: p.damping }
    }
}

fn default_species() -> Vec<SpeciesSpec> {
    vec![SpeciesSpec::catalogue("Ar")]
}

fn is_argon_only(species: &[SpeciesSpec]) -> bool {
    species == default_species().as_slice()
}

/// One species: a catalogue symbol alone (`(name: "Kr")`), or a name of your own with all
/// three parameters in physical units (`(name: "X", sigma_angstrom: 3.8, epsilon_k: 150,
/// mass_g_per_mol: 60)`). Pairs mix by the Lorentz-Berthelot rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpeciesSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma_angstrom: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon_k: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass_g_per_mol: Option<f64>,
}

impl SpeciesSpec {
    /// The catalogue species `symbol` (no custom parameters).
    pub fn catalogue(symbol: &str) -> Self {
        SpeciesSpec { name: symbol.into(), sigma_angstrom: None, epsilon_k: None, mass_g_per_mol: None }
    }

    /// The spec that stands for a reduced species: its catalogue symbol when its parameters are
    /// the catalogue's, else custom parameters in physical units.
    pub fn of(s: &Species) -> Self {
        if species::catalogue_species(&s.name).as_ref() == Some(s) {
            return SpeciesSpec::catalogue(&s.name);
        }
        SpeciesSpec {
            name: s.name.clone(),
            sigma_angstrom: Some(s.sigma * units::ARGON_SIGMA_ANGSTROM),
            epsilon_k: Some(s.epsilon * units::ARGON_EPSILON_K),
            mass_g_per_mol: Some(s.mass * units::ARGON_MASS_U),
        }
    }

    /// The reduced species; a spec that is neither complete nor in the catalogue (refused by
    /// validation) reads as argon under its name.
    pub fn species(&self) -> Species {
        match (self.sigma_angstrom, self.epsilon_k, self.mass_g_per_mol) {
            (Some(s), Some(e), Some(m)) => species::reduced(&self.name, s, e, m),
            _ => species::catalogue_species(&self.name)
                .unwrap_or(Species { name: self.name.clone(), ..Species::argon() }),
        }
    }
}

fn default_thermostat() -> Thermostat {
    Thermostat::Nve
}

fn default_seed() -> u64 {
    12345
}

/// The box: edge lengths from the origin, and per-axis boundaries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TankSpec {
    pub size: [f64; 3],
    pub boundaries: [Boundary; 3],
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PotentialSpec {
    /// `2.5`: one distance (sigma) for every species pair; `PerPair(2.5)` (the default): 2.5
    /// sigma_ij for each pair (see [`Cutoff`]).
    pub cutoff: Cutoff,
    /// Shift the LJ energy to zero at the cutoff.
    pub shift: bool,
}

impl Default for PotentialSpec {
    fn default() -> Self {
        PotentialSpec { cutoff: Cutoff::DEFAULT, shift: true }
    }
}

/// The 9-3 wall on walled axes. The default cutoff, 0.858 sigma, makes it purely repulsive;
/// a larger cutoff makes it attractive (wetting).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WallSpec {
    pub epsilon: f64,
    pub sigma: f64,
    pub cutoff: f64,
}

impl Default for WallSpec {
    fn default() -> Self {
        let w = crate::physics::wall::WallParams::default();
        WallSpec { epsilon: w.epsilon, sigma: w.sigma, cutoff: w.cutoff }
    }
}

/// The obstacles' purely repulsive 9-3 surface potential.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ObstacleSpec {
    pub epsilon: f64,
    pub sigma: f64,
}

impl Default for ObstacleSpec {
    fn default() -> Self {
        ObstacleSpec { epsilon: 1.0, sigma: 1.0 }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IntegratorSpec {
    pub dt: f64,
    pub skin: f64,
}

impl Default for IntegratorSpec {
    fn default() -> Self {
        IntegratorSpec { dt: 0.005, skin: 0.3 }
    }
}

/// Body forces, as accelerations: gravity along -y, drive along +x.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ForcesSpec {
    pub gravity: f64,
    pub drive: f64,
}

/// An axis-aligned region `[lo, hi)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Region {
    pub lo: [f64; 3],
    pub hi: [f64; 3],
}

/// One way of placing atoms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Fill {
    /// Lattice sites at reduced `density` inside `region` (default: the whole box), anchored
    /// at the box origin. Sites too close to a wall or obstacle are skipped.
    Lattice {
        kind: LatticeKind,
        density: f64,
        #[serde(default)]
        region: Option<Region>,
    },
    /// Random non-overlapping positions at reduced `density` inside `region`.
    Gas {
        density: f64,
        #[serde(default)]
        region: Option<Region>,
    },
    /// An FCC liquid between heights `from` and `to` (y), vapour at `vapour_density` elsewhere.
    LiquidSlab { liquid_density: f64, vapour_density: f64, from: f64, to: f64 },
    /// Explicit atoms (a saved state). Velocities default to Maxwell-Boltzmann; `types` (the
    /// index into `species` of each atom) defaults to the first species; `dye` (each atom's
    /// dye tag, 0 untagged) to none.
    Atoms {
        positions: Vec<[f64; 3]>,
        #[serde(default)]
        velocities: Option<Vec<[f64; 3]>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        types: Option<Vec<u32>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dye: Option<Vec<crate::physics::dye::Dye>>,
    },
}

/// What a backend needs to start: box, parameters, atoms and the obstacle shapes.
#[derive(Clone, Debug, PartialEq)]
pub struct SimSetup {
    pub sim_box: SimBox,
    pub params: SimParams,
    pub atoms: AtomState,
    pub shapes: Vec<Shape>,
    /// Step and simulated time (tau) to start from (0 unless the scene resumes a run).
    pub step: u64,
    pub time: f64,
    /// The piston's state to start from (a resumed run); None starts it at the top.
    pub piston: Option<PistonState>,
    /// Flow fields to sample (the scene's `fields`), if any.
    pub fields: Option<FieldSpec>,
    /// The scene's dye sources (its regions already tagged in `atoms.dye` at step 0; its rakes,
    /// [`dye::rakes`], for [`crate::sim::Backend::set_dye_rakes`]).
    pub dye: Vec<DyeSource>,
}
