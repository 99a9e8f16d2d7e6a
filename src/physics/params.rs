//! The physical parameters every backend obeys: box and boundaries, pair potential, walls,
//! obstacles, body forces, the tether (a spring on one atom), thermostat, integrator, and the
//! numerical choices (algorithm, precision, block size). All values are in reduced LJ units.
//!
//! Plain data only: no backend state, no UI. Validation of user-facing values lives in
//! [`SimParams::validate`], so the CLI, scene loader and app share one set of rules.

use serde::{Deserialize, Serialize};

use crate::numfmt::{Shown, short};
use crate::physics::cutoff::Cutoff;
use crate::physics::friction::{self, SurfaceFriction};
use crate::physics::obstacles::ObstacleField;
use crate::physics::piston::PistonParams;
use crate::physics::real::Precision;
use crate::physics::sim_box::SimBox;
use crate::physics::tunnel::{self, MeanFluid, Tunnel};
use crate::physics::wall::WallParams;

/// Periodic or walled, per axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Boundary {
    Periodic,
    Wall,
}

/// How temperature is controlled. Target temperatures live in [`SimParams::temperature`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Thermostat {
    /// Plain velocity Verlet, constant energy.
    Nve,
    /// Berendsen weak coupling with time constant `tau` (reduced time). With
    /// `relative_to_flow`, it measures and rescales velocities relative to the local mean
    /// flow (see [`Thermostat::relative_to_flow`]).
    Berendsen {
        tau: f64,
        #[serde(default)]
        relative_to_flow: bool,
    },
    /// Bussi-Donadio-Parrinello stochastic velocity rescaling with time constant `tau`; with
    /// `relative_to_flow` as for Berendsen.
    Csvr {
        tau: f64,
        #[serde(default)]
        relative_to_flow: bool,
    },
    /// Langevin dynamics with damping time `damp` (friction 1/damp).
    Langevin { damp: f64 },
    /// Hybrid Monte Carlo (Duane, Kennedy, Pendleton & Roweth 1987) at the target
    /// temperature: each cycle draws fresh Maxwell-Boltzmann velocities, runs an NVE
    /// trajectory of `trajectory` steps and accepts it with min(1, exp(-dH / T)); a rejected
    /// trajectory restores the saved state (see `sim::hmc`).
    Hmc { trajectory: u32 },
    /// Hybrid Monte Carlo at constant `pressure` (reduced): after each trajectory, one move
    /// of ln V by up to `max_dlnv` either way with scaled coordinates, accepted with the NPT
    /// criterion. Needs a box periodic on every axis and no obstacles.
    HmcNpt { trajectory: u32, pressure: f64, max_dlnv: f64 },
}

impl Thermostat {
    pub fn name(&self) -> &'static str {
        match self {
            Thermostat::Nve => "nve",
            Thermostat::Berendsen { .. } => "berendsen",
            Thermostat::Csvr { .. } => "csvr",
            Thermostat::Langevin { .. } => "langevin",
            Thermostat::Hmc { .. } => "hmc",
            Thermostat::HmcNpt { .. } => "hmc-npt",
        }
    }

    /// Hybrid Monte Carlo (NVT or NPT): the backends then integrate plain NVE trajectories
    /// and `sim::hmc` accepts or rejects them.
    pub fn is_monte_carlo(&self) -> bool {
        matches!(self, Thermostat::Hmc { .. } | Thermostat::HmcNpt { .. })
    }

    /// A velocity-rescaling thermostat (Berendsen, CSVR): its coupling time `tau` and
    /// whether it works relative to the flow; None for the others.
    pub fn rescaling(&self) -> Option<(f64, bool)> {
        match *self {
            Thermostat::Berendsen { tau, relative_to_flow } | Thermostat::Csvr { tau, relative_to_flow } => {
                Some((tau, relative_to_flow))
            }
            _ => None,
        }
    }

    /// Whether a rescaling thermostat works on velocities relative to the local mean flow
    /// (a profile-unbiased thermostat, like LAMMPS's `compute temp/profile` under a
    /// thermostat fix): per bin of an x-y grid of about 2 sigma through the whole depth
    /// (`flow::Grid::for_thermostat`), the bin's mean velocity u_b = P_b / M_b is removed
    /// before the temperature is measured, and only v - u_b is rescaled, so a driven flow is
    /// not braked. False for every other thermostat.
    pub fn relative_to_flow(&self) -> bool {
        self.rescaling().is_some_and(|(_, r)| r)
    }

    /// The same kind of thermostat with coupling time `tau` (Berendsen, CSVR; Langevin's
    /// damping time); the others unchanged.
    pub fn with_tau(&self, tau: f64) -> Thermostat {
        match *self {
            Thermostat::Berendsen { relative_to_flow, .. } => Thermostat::Berendsen { tau, relative_to_flow },
            Thermostat::Csvr { relative_to_flow, .. } => Thermostat::Csvr { tau, relative_to_flow },
            Thermostat::Langevin { .. } => Thermostat::Langevin { damp: tau },
            other => other,
        }
    }

    /// The MD trajectory length of a hybrid Monte Carlo cycle.
    pub fn trajectory(&self) -> Option<u32> {
        match *self {
            Thermostat::Hmc { trajectory } | Thermostat::HmcNpt { trajectory, .. } => Some(trajectory),
            _ => None,
        }
    }
}

/// Longest hybrid Monte Carlo trajectory (steps) accepted.
pub const MAX_TRAJECTORY: u32 = 100_000;

/// The force algorithm. The CPU backend maps `AllPairsGlobal` to a plain O(N^2) loop and
/// `AllPairsTiled` to a cache-blocked one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
pub enum Algorithm {
    /// Pick the cheapest by a cost estimate (the neighbour list wherever lists fit and it wins).
    Auto,
    /// All pairs, every other atom read from (global) memory.
    #[value(name = "allpairs-global")]
    AllPairsGlobal,
    /// All pairs, positions staged in tiles (shared memory on the GPU, cache blocks on the CPU).
    #[value(name = "allpairs-tiled")]
    AllPairsTiled,
    /// Cell list, 27 neighbouring cells scanned every step.
    Cells,
    /// Verlet neighbour list with a skin, built from a cell list.
    Neighbors,
}

impl Algorithm {
    pub const CONCRETE: [Algorithm; 4] =
        [Algorithm::AllPairsGlobal, Algorithm::AllPairsTiled, Algorithm::Cells, Algorithm::Neighbors];

    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::AllPairsGlobal => "allpairs-global",
            Algorithm::AllPairsTiled => "allpairs-tiled",
            Algorithm::Cells => "cells",
            Algorithm::Neighbors => "neighbors",
        }
    }

    /// The algorithm `Auto` stands for at `n` atoms in `sim_box` with interaction range
    /// `range` (the largest cut-off `cutoff` plus the skin): the neighbour list wherever lists
    /// fit ([`Algorithm::lists_fit`]) and its
    /// estimated cost is below all pairs', else all pairs (tiled). The estimate counts pair
    /// visits per step: all pairs n^2 / 2; the list n times the neighbours in range at the
    /// box's mean density, at LIST_PAIR_COST each (an indexed load against a streamed tile),
    /// plus LIST_ATOM_COST per atom for the integrator, the skin test and the rebuilds. In a
    /// liquid the list wins above about 500 atoms, in a dilute gas above a few dozen, and
    /// never loses above a few thousand atoms at any density.
    pub fn resolve(self, n: usize, sim_box: &SimBox, range: f64, cutoff: f64) -> Algorithm {
        const LIST_PAIR_COST: f64 = 3.0;
        const LIST_ATOM_COST: f64 = 20.0;
        match self {
            Algorithm::Auto => {
                if !Algorithm::lists_fit(sim_box, range, cutoff) {
                    return Algorithm::AllPairsTiled;
                }
                let l = sim_box.length();
                let density = n as f64 / (l[0] * l[1] * l[2]).max(f64::MIN_POSITIVE);
                let in_range = 4.0 / 3.0 * std::f64::consts::PI * range.powi(3) * density;
                let list = n as f64 * (in_range * LIST_PAIR_COST + LIST_ATOM_COST);
                let all_pairs = 0.5 * n as f64 * n as f64;
                if all_pairs < list { Algorithm::AllPairsTiled } else { Algorithm::Neighbors }
            }
            other => other,
        }
    }

    /// Whether neighbour lists of interaction range `range` (cut-off `cutoff` plus the skin)
    /// work in `sim_box`: every periodic edge at least twice the range (so each pair has one
    /// image in range), or a column ([`Algorithm::column_axes`]); walled edges of any size.
    /// (The CPU's per-atom lists take no columns: it runs the cell list there.)
    pub fn lists_fit(sim_box: &SimBox, range: f64, cutoff: f64) -> bool {
        let (len, column) = (sim_box.length(), Algorithm::column_axes(sim_box, range, cutoff));
        (0..3).all(|k| !sim_box.periodic[k] || column[k] || len[k] >= 2.0 * range)
    }

    /// Whether cells at least `range` wide, each pair in its one image within `range`, fit
    /// `sim_box`: every periodic edge at least twice the range (the cell grids of the CPU and
    /// of CUDA's cell list; lists may also take columns, [`Algorithm::lists_fit`]).
    pub fn images_fit(sim_box: &SimBox, range: f64) -> bool {
        let len = sim_box.length();
        (0..3).all(|k| !sim_box.periodic[k] || len[k] >= 2.0 * range)
    }

    /// The periodic axes of `b` that lists of range `range` (cut-off `cutoff` plus the skin)
    /// take as one column of list cells (`sim::list_cells`, the CUDA and wgpu builds): shorter
    /// than three ranges (so no more than two range-wide cells), at least twice the cut-off.
    /// Each pair takes its minimum image along a column, so the list holds every pair within
    /// the range in the torus's distance, and each atom moving at most half the skin keeps
    /// every pair within the cut-off listed; the cut-off within half the length leaves one
    /// image in range of the forces. So the range may pass half the length there (a wider
    /// skin in the vortex street's slab, 5.65 sigma deep: rebuilds rarer in its hot, fast
    /// fluid).
    pub fn column_axes(b: &SimBox, range: f64, cutoff: f64) -> [bool; 3] {
        let len = b.length();
        std::array::from_fn(|k| b.periodic[k] && len[k] < 3.0 * range && len[k] >= 2.0 * cutoff)
    }
}

/// A harmonic spring pulling one atom toward a point in the x-y plane (dragging an atom with
/// the mouse). With d = (x - tx, y - ty), minimum image on periodic axes:
/// F = -k d on x and y only (none along z), E = k |d|^2 / 2, counted as external energy;
/// no virial (an external body force, like gravity and drive).
///
/// `atom` is a canonical index. An index at or past the atom count is not an error: the
/// tether is then simply inactive (atoms can be removed while a tether is set). Removing atoms
/// renumbers the canonical indices after them, so whoever set the tether should move or clear
/// it when atoms are removed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tether {
    /// Canonical index of the tethered atom.
    pub atom: u32,
    /// The point pulled toward, x and y (sigma).
    pub target: [f64; 2],
    /// Spring constant k (epsilon / sigma^2).
    pub stiffness: f64,
}

impl Tether {
    /// Whether the tether acts in a system of `n_atoms` atoms.
    pub fn is_active(&self, n_atoms: usize) -> bool {
        (self.atom as usize) < n_atoms
    }

    /// The target moved into the box on periodic x and y (an exact remainder, so a target
    /// any distance away keeps the minimum-image arithmetic in range); walled axes keep it.
    pub fn target_in_box(&self, sim_box: &SimBox) -> [f64; 2] {
        let l = sim_box.length();
        std::array::from_fn(|k| {
            let t = self.target[k];
            if sim_box.periodic[k] { sim_box.lo[k] + (t - sim_box.lo[k]).rem_euclid(l[k]) } else { t }
        })
    }

    /// Force (x, y) and energy of the spring on an atom at `p` in `sim_box`.
    #[inline]
    pub fn eval(&self, sim_box: &SimBox, p: [f64; 3]) -> ([f64; 2], f64) {
        let t = self.target_in_box(sim_box);
        let d = sim_box.min_image([p[0], p[1], 0.0], [t[0], t[1], 0.0]);
        let k = self.stiffness;
        ([-k * d[0], -k * d[1]], 0.5 * k * (d[0] * d[0] + d[1] * d[1]))
    }
}

/// One atom species: LJ sigma and epsilon (relative to argon) and mass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Species {
    pub name: String,
    pub sigma: f64,
    pub epsilon: f64,
    pub mass: f64,
}

impl Species {
    pub fn argon() -> Self {
        Species { name: "Ar".into(), sigma: 1.0, epsilon: 1.0, mass: 1.0 }
    }

    /// Lorentz-Berthelot mixing with `other`: (sigma_ij, epsilon_ij) = ((sigma_i + sigma_j) / 2,
    /// sqrt(epsilon_i epsilon_j)).
    pub fn mixed(&self, other: &Species) -> (f64, f64) {
        (0.5 * (self.sigma + other.sigma), (self.epsilon * other.epsilon).sqrt())
    }
}

/// Every live-changeable parameter of a simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimParams {
    /// Time step (tau).
    pub dt: f64,
    /// LJ cut-off: one distance (sigma) for every species pair, or k sigma_ij per pair (see
    /// [`Cutoff`]); [`SimParams::pair_cutoff`] gives a pair's radius.
    pub cutoff: Cutoff,
    /// Shift the pair energy to zero at the cutoff.
    pub shift: bool,
    /// Neighbour-list skin (sigma).
    pub skin: f64,
    /// Target temperature (reduced) for the thermostats.
    pub temperature: f64,
    pub thermostat: Thermostat,
    /// Gravitational acceleration along -y (sigma / tau^2).
    pub gravity: f64,
    /// Driving acceleration along +x (sigma / tau^2).
    pub drive: f64,
    /// A spring pulling one atom toward a point in the x-y plane (see [`Tether`]); inactive
    /// while its atom index is out of range.
    #[serde(default)]
    pub tether: Option<Tether>,
    /// The top wall as a piston under a set pressure (see [`PistonParams`]); needs a walled y.
    #[serde(default)]
    pub piston: Option<PistonParams>,
    pub wall: WallParams,
    /// Langevin friction on the velocity tangential to walls and obstacles near them, making
    /// them no-slip (see `physics::friction`); None: smooth, perfect-slip surfaces.
    #[serde(default)]
    pub surface_friction: Option<SurfaceFriction>,
    /// A wind tunnel along a periodic x: atoms in the inflow zone at the upstream end get
    /// fresh Maxwell-Boltzmann velocities around the stream velocity every step (see
    /// `physics::tunnel`); None: no tunnel.
    #[serde(default)]
    pub tunnel: Option<Tunnel>,
    /// The obstacles' repulsive 9-3 potential (its cutoff is always the repulsive one).
    pub obstacle: WallParams,
    pub species: Vec<Species>,
    pub algorithm: Algorithm,
    pub precision: Precision,
    /// CUDA threads per block (a multiple of 32, at most 1024). The CPU backend ignores it.
    pub block_size: u32,
    /// Telemetry (T, energies, pressure) is computed every this many steps.
    pub telemetry_every: u64,
    /// Seed of the counter-based random streams (thermostats, velocities).
    pub seed: u64,
}

impl Default for SimParams {
    fn default() -> Self {
        SimParams {
            dt: 0.005,
            cutoff: Cutoff::DEFAULT,
            shift: true,
            skin: 0.3,
            temperature: 1.0,
            thermostat: Thermostat::Nve,
            gravity: 0.0,
            drive: 0.0,
            tether: None,
            piston: None,
            wall: WallParams::default(),
            surface_friction: None,
            tunnel: None,
            obstacle: WallParams::default(),
            species: vec![Species::argon()],
            algorithm: Algorithm::Auto,
            precision: Precision::Double,
            block_size: 128,
            telemetry_every: 100,
            seed: 1,
        }
    }
}

/// A parameter value a person supplied that the physics cannot use.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field} = {value}: {reason}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: String,
    pub reason: String,
}

fn check_trajectory(trajectory: u32) -> Result<(), ParamError> {
    check(
        (1..=MAX_TRAJECTORY).contains(&trajectory),
        "thermostat.trajectory",
        trajectory,
        format!("the hybrid Monte Carlo trajectory must be 1 to {MAX_TRAJECTORY} steps (10-50 is usual)"),
    )
}

fn check(ok: bool, field: &'static str, value: impl Shown, reason: impl Into<String>) -> Result<(), ParamError> {
    if ok { Ok(()) } else { Err(ParamError { field, value: value.shown(), reason: reason.into() }) }
}

/// The piston's settings, and that the tank has a top wall for it.
fn validate_piston(p: &PistonParams, sim_box: &SimBox, thermostat: &Thermostat) -> Result<(), ParamError> {
    check(
        !thermostat.is_monte_carlo(),
        "piston",
        "on",
        "hybrid Monte Carlo accepts trajectories on the fluid's energy alone, without the piston's: \
         use Bussi or Langevin with the piston, or switch the piston off",
    )?;
    check(
        !sim_box.periodic[1],
        "piston",
        "on",
        "the piston is the top wall, but y is periodic: make the y boundary Wall, or remove the piston",
    )?;
    check(
        p.pressure.is_finite() && (0.0..=50.0).contains(&p.pressure),
        "piston.pressure",
        p.pressure,
        "allowed range is [0, 50] epsilon/sigma^3 (0 to 2,100 MPa for argon)",
    )?;
    check(
        p.mass.is_finite() && p.mass >= 1.0 && p.mass <= 1e6,
        "piston.mass",
        p.mass,
        "allowed range is [1, 1000000] argon masses; 200 is the usual choice",
    )?;
    check(
        p.damping.is_finite() && (0.0..=100.0).contains(&p.damping),
        "piston.damping",
        p.damping,
        "allowed range is [0, 100] 1/tau; 0 conserves energy, 0.2 settles in a few oscillations",
    )?;
    let l = sim_box.length();
    check(
        l[1] > crate::physics::piston::MIN_GAP,
        "piston",
        "on",
        format!(
            "the tank is only {} sigma high: the piston needs more than {} sigma",
            short(l[1]),
            short(crate::physics::piston::MIN_GAP)
        ),
    )
}

impl SimParams {
    /// The surface friction of the force pass of `step`, with the start spin's surface speed
    /// at that step (`friction::Spin`); None without surface friction.
    pub fn friction_at(&self, step: u64) -> Option<crate::physics::friction::Friction> {
        let s = self.surface_friction.as_ref()?;
        let f = crate::physics::friction::Friction::new(s, self.temperature, self.dt, self.seed, step);
        Some(crate::physics::friction::Friction { spin: self.start_spin().at(step), ..f })
    }

    /// The tunnel's start spin as the backends run it (its surface speed and end step with this
    /// time step); none without a tunnel spin, surface friction or with a zero speed.
    pub fn start_spin(&self) -> crate::physics::friction::Spin {
        use crate::physics::friction::Spin;
        let Some(t) = self.tunnel.filter(|_| self.surface_friction.is_some()) else { return Spin::default() };
        let Some(s) = t.start_spin else { return Spin::default() };
        let speed = s.spin * t.speed;
        if speed == 0.0 || !speed.is_finite() {
            return Spin::default();
        }
        Spin { speed, until: s.end_step(self.dt) }
    }

    /// The surface friction's damping time and range, and that the thermostat allows it.
    fn validate_friction(&self, s: &SurfaceFriction) -> Result<(), ParamError> {
        check(
            !self.thermostat.is_monte_carlo(),
            "surface_friction",
            "on",
            "hybrid Monte Carlo accepts trajectories on their energy, which friction does not conserve: \
             use CSVR, Berendsen or Langevin with surface friction, or switch it off",
        )?;
        check(
            s.damp.is_finite() && s.damp >= self.dt && s.damp <= 1e6,
            "surface_friction.damp",
            s.damp,
            format!(
                "must be at least one time step ({}) and at most 1000000 tau; 0.5 is the usual choice",
                short(self.dt)
            ),
        )?;
        check(
            s.range.is_finite() && s.range > 0.0 && s.range <= friction::MAX_RANGE,
            "surface_friction.range",
            s.range,
            format!("allowed range is (0, {}] sigma; 1.5 is the usual choice", short(friction::MAX_RANGE)),
        )
    }

    /// The tunnel's settings against the box and the thermostat (its speed against the speed
    /// of sound needs the atoms: [`SimParams::validate_tunnel_speed`]).
    fn validate_tunnel(&self, t: &Tunnel, sim_box: &SimBox) -> Result<(), ParamError> {
        check(
            !self.thermostat.is_monte_carlo(),
            "tunnel",
            "on",
            "hybrid Monte Carlo accepts trajectories on their energy, which the inflow zone does not conserve: \
             use Nve (the zone removes the heat) or a thermostat relative to the flow, or remove the tunnel",
        )?;
        check(
            sim_box.periodic[0],
            "tunnel",
            "on",
            "the flow leaves at the end of x and re-enters through the inflow zone, so x must be periodic: \
             make the x boundary Periodic, or remove the tunnel",
        )?;
        check(
            t.speed.is_finite() && t.speed >= 0.0,
            "tunnel.speed",
            t.speed,
            "must be a finite speed >= 0 sigma/tau, below the speed of sound (Mach 1); 0.5 is the usual choice",
        )?;
        let half = 0.5 * sim_box.length()[0];
        check(
            t.zone.is_finite() && t.zone > 0.0 && t.zone <= half,
            "tunnel.zone",
            t.zone,
            format!(
                "must be > 0 and at most half the box along x ({} sigma), so that a test section at least \
                 as long stays downstream: make the zone narrower or the box longer; 4 sigma is the usual choice",
                short(half)
            ),
        )?;
        let Some(spin) = &t.start_spin else { return Ok(()) };
        check(
            spin.spin.is_finite() && spin.spin.abs() <= tunnel::MAX_SPIN,
            "tunnel.start_spin.spin",
            spin.spin,
            format!(
                "the obstacles' surface speed over the stream speed must be a finite number in [-{m}, {m}] \
                 (negative: clockwise); 1.0 is the usual choice",
                m = short(tunnel::MAX_SPIN)
            ),
        )?;
        check(
            spin.time.is_finite() && spin.time > 0.0,
            "tunnel.start_spin.time",
            spin.time,
            "the spin's duration must be a finite time > 0 tau (from the run's start); a few D / U, \
             e.g. 35 tau for the vortex street",
        )
    }

    /// Whether the run reports a thermal temperature (`sim::Telemetry::thermal`, the motion
    /// relative to the local mean flow) beside the ordinary one: with a wind tunnel, whose
    /// stream the ordinary temperature counts as heat, or a thermostat relative to the flow.
    pub fn thermal_readout(&self) -> bool {
        self.tunnel.is_some() || self.thermostat.relative_to_flow()
    }

    /// The mean density and atomic mass of atoms of species `types` in `sim_box`, which the
    /// tunnel's Mach number is measured against.
    pub fn mean_fluid(&self, sim_box: &SimBox, types: &[u32]) -> MeanFluid {
        let total = types.iter().map(|&t| self.species.get(t as usize).map_or(1.0, |s| s.mass)).sum();
        MeanFluid::new(sim_box, types.len(), total)
    }

    /// The tunnel's Mach number U / c in `fluid` at the target temperature, the speed of
    /// sound c, and whether c is the equation of state's (else the ideal gas's; see
    /// [`tunnel::sound_speed`]); None without a tunnel.
    pub fn tunnel_mach(&self, fluid: &MeanFluid) -> Option<(f64, f64, bool)> {
        let t = self.tunnel.as_ref()?;
        let (c, eos) = tunnel::sound_speed(fluid, self.temperature);
        Some((t.speed / c, c, eos))
    }

    /// Refuses a tunnel speed at or beyond the speed of sound of `fluid` (Mach 1).
    pub fn validate_tunnel_speed(&self, fluid: &MeanFluid) -> Result<(), ParamError> {
        let (Some(t), Some((mach, c, eos))) = (&self.tunnel, self.tunnel_mach(fluid)) else { return Ok(()) };
        let source = if eos { "the JZG equation of state" } else { "the ideal gas; the JZG fit has none there" };
        check(
            mach < tunnel::MAX_MACH,
            "tunnel.speed",
            t.speed,
            format!(
                "is Mach {}: the speed of sound is {} sigma/tau ({source}, at T* = {} and the mean density {} \
                 sigma^-3), and the tunnel is for subsonic flow: set a speed below {}, ideally below Mach 0.3 ({})",
                short(mach),
                short(c),
                short(self.temperature),
                short(fluid.density),
                short(c),
                short(tunnel::WARN_MACH * c)
            ),
        )
    }

    /// What a person should know before running this tunnel in `fluid`: a stream beyond Mach
    /// 0.3 (compressibility matters), a thermostat that brakes the stream. None when all is
    /// well or there is no tunnel. Callers (`run`, the app) show it; nothing is refused.
    pub fn tunnel_warning(&self, fluid: &MeanFluid) -> Option<String> {
        let (t, (mach, c, _)) = (self.tunnel.as_ref()?, self.tunnel_mach(fluid)?);
        let mut out = Vec::new();
        if mach > tunnel::WARN_MACH {
            out.push(format!(
                "the tunnel's stream is Mach {} (U = {} sigma/tau, c = {} sigma/tau): above Mach 0.3 \
                 compressibility matters (the density changes along the flow); lower tunnel.speed below {} \
                 for nearly incompressible flow",
                short(mach),
                short(t.speed),
                short(c),
                short(tunnel::WARN_MACH * c)
            ));
        }
        match self.thermostat {
            Thermostat::Langevin { .. } => out.push(
                "the Langevin thermostat acts on every atom's whole velocity and brakes the stream: use Nve (the \
                 inflow zone removes the heat) or Berendsen/Csvr with relative_to_flow"
                    .into(),
            ),
            Thermostat::Berendsen { relative_to_flow: false, .. }
            | Thermostat::Csvr { relative_to_flow: false, .. } => out.push(
                "the thermostat counts the stream's kinetic energy as heat and brakes it: set relative_to_flow, \
                     or use Nve (the inflow zone removes the heat)"
                    .into(),
            ),
            _ => {}
        }
        if out.is_empty() { None } else { Some(out.join("; ")) }
    }

    /// Interaction range used for cells and lists: the largest pair cut-off + skin.
    pub fn list_range(&self) -> f64 {
        self.max_cutoff() + self.skin
    }

    /// r_c (sigma) of species pair (i, j): the absolute cut-off, or k sigma_ij.
    pub fn pair_cutoff(&self, i: usize, j: usize) -> f64 {
        self.cutoff.radius(self.species[i].mixed(&self.species[j]).0)
    }

    /// The largest pair cut-off (sigma): the range cells and lists need.
    pub fn max_cutoff(&self) -> f64 {
        self.cutoff.largest(self.species.iter().map(|s| s.sigma))
    }

    fn cutoff_error(&self, reason: String) -> ParamError {
        ParamError { field: "cutoff", value: self.cutoff.to_string(), reason }
    }

    /// Checks every value against its allowed range, and the cutoff against the box.
    pub fn validate(&self, sim_box: &SimBox) -> Result<(), ParamError> {
        check(
            self.dt.is_finite() && self.dt > 0.0 && self.dt <= 0.05,
            "dt",
            self.dt,
            "allowed range is (0, 0.05] tau; 0.005 is the usual choice",
        )?;
        self.cutoff.check_value().map_err(|reason| self.cutoff_error(reason))?;
        check(
            self.skin.is_finite() && (0.0..=2.0).contains(&self.skin),
            "skin",
            self.skin,
            "allowed range is [0, 2] sigma",
        )?;
        check(
            self.temperature.is_finite() && self.temperature > 0.0 && self.temperature <= 100.0,
            "temperature",
            self.temperature,
            "allowed range is (0, 100] in reduced units (0 to 11,980 K)",
        )?;
        match self.thermostat {
            Thermostat::Nve => {}
            Thermostat::Berendsen { tau, .. } | Thermostat::Csvr { tau, .. } => check(
                tau.is_finite() && tau >= self.dt,
                "thermostat.tau",
                tau,
                format!("must be at least one time step ({})", short(self.dt)),
            )?,
            Thermostat::Langevin { damp } => check(
                damp.is_finite() && damp >= self.dt,
                "thermostat.damp",
                damp,
                format!("must be at least one time step ({})", short(self.dt)),
            )?,
            Thermostat::Hmc { trajectory } => check_trajectory(trajectory)?,
            Thermostat::HmcNpt { trajectory, pressure, max_dlnv } => {
                check_trajectory(trajectory)?;
                check(
                    pressure.is_finite() && pressure > 0.0 && pressure <= 100.0,
                    "thermostat.pressure",
                    pressure,
                    "allowed range is (0, 100] in reduced units (0 to 4,200 MPa for argon)",
                )?;
                check(
                    max_dlnv.is_finite() && max_dlnv > 0.0 && max_dlnv <= 0.5,
                    "thermostat.max_dlnv",
                    max_dlnv,
                    "the largest ln V step must be in (0, 0.5]; 0.01-0.05 suits a few thousand atoms",
                )?;
                check(
                    sim_box.fully_periodic(),
                    "thermostat",
                    "HmcNpt",
                    "constant-pressure hybrid Monte Carlo scales the box, so every axis must be periodic; use the piston to squeeze a closed tank",
                )?;
            }
        }
        check(
            self.gravity.is_finite() && self.gravity.abs() <= 10.0,
            "gravity",
            self.gravity,
            "allowed range is [-10, 10] sigma/tau^2",
        )?;
        check(
            self.drive.is_finite() && self.drive.abs() <= 10.0,
            "drive",
            self.drive,
            "allowed range is [-10, 10] sigma/tau^2",
        )?;
        // The atom index is not checked: an index past the atom count leaves the tether inactive.
        if let Some(t) = &self.tether {
            check(
                t.target.iter().all(|x| x.is_finite()),
                "tether.target",
                format!("({}, {})", short(t.target[0]), short(t.target[1])),
                "both coordinates must be finite numbers (sigma)",
            )?;
            check(
                t.stiffness.is_finite() && t.stiffness > 0.0 && t.stiffness <= 1000.0,
                "tether.stiffness",
                t.stiffness,
                "allowed range is (0, 1000] epsilon/sigma^2",
            )?;
        }
        if let Some(p) = &self.piston {
            validate_piston(p, sim_box, &self.thermostat)?;
        }
        if let Some(s) = &self.surface_friction {
            self.validate_friction(s)?;
        }
        if let Some(t) = &self.tunnel {
            self.validate_tunnel(t, sim_box)?;
        }
        // Obstacles keep sigma <= 2 so their repulsive cutoff stays inside the baked field's range.
        let walls = [
            (["wall.epsilon", "wall.sigma", "wall.cutoff"], &self.wall, 5.0),
            (["obstacle.epsilon", "obstacle.sigma", "obstacle.cutoff"], &self.obstacle, 2.0),
        ];
        for (fields, w, sigma_max) in walls {
            check(
                w.epsilon.is_finite() && w.epsilon > 0.0 && w.epsilon <= 100.0,
                fields[0],
                w.epsilon,
                "allowed range is (0, 100] epsilon",
            )?;
            check(
                w.sigma.is_finite() && (0.1..=sigma_max).contains(&w.sigma),
                fields[1],
                w.sigma,
                format!("allowed range is [0.1, {sigma_max}] sigma"),
            )?;
            check(
                w.cutoff.is_finite() && w.cutoff >= 0.5 * w.sigma && w.cutoff <= 5.0 * w.sigma,
                fields[2],
                w.cutoff,
                "allowed range is [0.5, 5] wall sigma (0.858 wall sigma for a purely repulsive wall)",
            )?;
        }
        check(
            self.obstacle.cutoff < ObstacleField::FAR,
            "obstacle.cutoff",
            self.obstacle.cutoff,
            format!("must be below the obstacle field's range, {} sigma", short(ObstacleField::FAR)),
        )?;
        check(
            !self.species.is_empty() && self.species.len() <= 16,
            "species",
            self.species.len(),
            "between 1 and 16 species",
        )?;
        for s in &self.species {
            check(
                s.sigma.is_finite() && (0.2..=5.0).contains(&s.sigma),
                "species.sigma",
                s.sigma,
                "allowed range is [0.2, 5]",
            )?;
            check(
                s.epsilon.is_finite() && s.epsilon > 0.0 && s.epsilon <= 100.0,
                "species.epsilon",
                s.epsilon,
                "allowed range is (0, 100]",
            )?;
            check(
                s.mass.is_finite() && s.mass > 0.0 && s.mass <= 1e4,
                "species.mass",
                s.mass,
                "allowed range is (0, 10000]",
            )?;
        }
        check(
            self.block_size >= 32 && self.block_size <= 1024 && self.block_size.is_multiple_of(32),
            "block_size",
            self.block_size,
            "must be a multiple of 32 between 32 and 1024",
        )?;
        check(self.telemetry_every >= 1, "telemetry_every", self.telemetry_every, "must be at least 1")?;
        let l = sim_box.length();
        for k in 0..3 {
            check(l[k].is_finite() && l[k] > 0.0, "box", l[k], "every box length must be positive")?;
            if sim_box.periodic[k] {
                let widest = self.species.iter().max_by(|a, b| a.sigma.total_cmp(&b.sigma)).map_or("", |s| &s.name);
                self.cutoff
                    .check_box(self.max_cutoff(), &format!("{widest}-{widest}"), ["x", "y", "z"][k], 0.5 * l[k])
                    .map_err(|reason| self.cutoff_error(reason))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_and_min_image() {
        let b = SimBox::new([10.0, 10.0, 10.0], [true, true, false]);
        assert_eq!(b.wrap([-0.5, 10.5, 12.0]), [9.5, 0.5, 12.0]);
        let d = b.min_image([9.5, 0.5, 9.0], [0.5, 9.5, 1.0]);
        assert!((d[0] + 1.0).abs() < 1e-12 && (d[1] - 1.0).abs() < 1e-12 && (d[2] - 8.0).abs() < 1e-12);
    }

    #[test]
    fn cutoff_larger_than_half_box_is_refused() {
        let p = SimParams::default();
        let b = SimBox::new([4.0, 10.0, 10.0], [true; 3]);
        let e = p.validate(&b).unwrap_err();
        assert_eq!(e.field, "cutoff");
        assert!(e.reason.contains("half the periodic box along x"), "{e}");
    }

    #[test]
    fn block_size_must_be_a_warp_multiple() {
        let p = SimParams { block_size: 100, ..SimParams::default() };
        let e = p.validate(&SimBox::new([10.0; 3], [true; 3])).unwrap_err();
        assert_eq!(e.field, "block_size");
    }
}
