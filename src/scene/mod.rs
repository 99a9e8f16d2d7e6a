//! Scene files: the versioned RON description of a system (box, potential, walls,
//! thermostat, forces, how atoms are placed, obstacles) that people write, save and share.
//!
//! Owns the file schema, strict parsing and validation (every error with line/column and
//! the allowed range), and turning a scene into a [`SimSetup`] for a backend. It must not
//! touch backends or the UI.
//!
//! - `mod.rs`: the schema (what a file may contain). The presets in `assets/scenes/` document it.
//! - `parse.rs`: [`Scene::load`], [`Scene::from_str`], [`Scene::to_ron`], [`Scene::save`].
//! - `validate.rs`, `validate_shapes.rs`: ranges and consistency, reusing [`SimParams::validate`].
//! - `locate.rs`: finds a field's line and column in the text, for errors found after parsing.
//! - `build.rs`: [`Scene::build`], fills in order, then Maxwell-Boltzmann velocities.
//! - `grid.rs`: the cell grid behind overlap checks. `error.rs`: [`SceneError`].

mod build;
mod error;
mod grid;
mod locate;
mod parse;
pub mod presets;
mod validate;
mod validate_shapes;

pub use build::{EXPLICIT_SEPARATION, GAS_SEPARATION, LATTICE_SEPARATION, SURFACE_CLEARANCE};
pub use error::{Location, SceneError};
pub use grid::find_close_pair;
pub use parse::MAX_FILE_BYTES;
pub use validate::{
    MAX_ATOMS, MAX_BOX_LENGTH, MAX_BOX_VOLUME, MAX_DENSITY, MAX_OBSTACLES, MAX_POLYGON_POINTS, MAX_SHAPE_COORDINATE,
    MAX_STROKE_POINTS, MIN_EXPLICIT_SEPARATION,
};

use serde::{Deserialize, Serialize};

use crate::physics::init::LatticeKind;
use crate::physics::params::{Boundary, SimBox, SimParams, Thermostat};
use crate::physics::piston::{PistonParams, PistonState};
use crate::shapes::Shape;
use crate::sim::AtomState;

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
    /// Target temperature of the thermostat and temperature of generated velocities.
    pub temperature_k: f64,
    #[serde(default = "default_thermostat")]
    pub thermostat: Thermostat,
    #[serde(default)]
    pub forces: ForcesSpec,
    /// How atoms are placed, applied in order.
    pub atoms: Vec<Fill>,
    #[serde(default)]
    pub obstacles: Vec<Shape>,
    #[serde(default)]
    pub obstacle_wall: ObstacleSpec,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The top wall as a piston under a set pressure (needs a `Wall` y boundary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub piston: Option<PistonSpec>,
    /// Where a saved running state continues (written by "save with current atoms").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
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
    pub cutoff: f64,
    /// Shift the LJ energy to zero at the cutoff.
    pub shift: bool,
}

impl Default for PotentialSpec {
    fn default() -> Self {
        PotentialSpec { cutoff: 2.5, shift: true }
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
        let w = crate::physics::params::WallParams::default();
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
    /// Explicit atoms (a saved state). Velocities default to Maxwell-Boltzmann.
    Atoms {
        positions: Vec<[f64; 3]>,
        #[serde(default)]
        velocities: Option<Vec<[f64; 3]>>,
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
}
