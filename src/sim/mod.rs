//! The backend-neutral simulation API: the [`Backend`] trait that the CPU and CUDA backends
//! implement, and the plain data that crosses it (atom state, snapshots, telemetry,
//! position targets); histograms are [`crate::analysis::Histogram`].
//!
//! The trait is shaped for a GPU that keeps all state on the device: one call advances many
//! steps, telemetry is produced every k steps and drained in batches, analysis is computed
//! where the atoms live, and positions are written into a buffer the caller owns.
//! This module must not know about any UI, renderer or file format.

use crate::analysis::{Histogram, RdfRegion};
use crate::flow::{FieldSpec, Fields};

pub mod bodies;
pub mod cpu;
pub mod cuda;
pub mod edit;
pub mod fields;
pub mod gpu;
pub mod hmc;
mod host_buf;
pub mod list_cells;
pub mod list_room;
mod select;

pub use host_buf::HostBuf;
pub use select::{BackendChoice, auto_prefers_wgpu, fallback_for, open_backend, open_backend_on, start_at};

use std::sync::Arc;

use crate::physics::dye::Dye;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{ParamError, SimParams};
use crate::physics::piston::{PistonState, PistonTelemetry};
use crate::physics::real::Precision;
use crate::physics::sim_box::SimBox;
use crate::transport::{TransportSamples, TransportSpec};

/// How a backend finds the pairs of a g(r): through a cell grid (what [`Backend::rdf`] uses)
/// or every pair (the reference the tests compare the grid with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairSearch {
    Cells,
    AllPairs,
}

/// Positions, velocities, species and dye tags of every atom, in canonical order, on the host
/// (f64).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AtomState {
    pub positions: Vec<[f64; 3]>,
    pub velocities: Vec<[f64; 3]>,
    /// Index into [`SimParams::species`].
    pub types: Vec<u32>,
    /// Dye tags ([`crate::physics::dye`]): empty when no atom has ever been tagged, else one
    /// per atom (0 untagged, else the source's number). Build with `..Default::default()`
    /// where there is no dye; [`AtomState::dye_mut`] fills in zeros when tagging starts.
    pub dye: Vec<Dye>,
}

impl AtomState {
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Appends all atoms of `other` (untagged where one side has no dye and the other has).
    pub fn extend(&mut self, other: &AtomState) {
        if self.has_dye() || other.has_dye() {
            self.dye_mut();
            match other.has_dye() {
                true => self.dye.extend_from_slice(&other.dye),
                false => self.dye.resize(self.dye.len() + other.len(), 0),
            }
        }
        self.positions.extend_from_slice(&other.positions);
        self.velocities.extend_from_slice(&other.velocities);
        self.types.extend_from_slice(&other.types);
    }

    /// Whether the dye column is present (it may still hold only zeros).
    pub fn has_dye(&self) -> bool {
        !self.dye.is_empty()
    }

    /// Whether any atom carries a tag.
    pub fn any_dyed(&self) -> bool {
        self.dye.iter().any(|&d| d != 0)
    }

    /// Atom `i`'s tag (0 when there is no dye column).
    pub fn dye_of(&self, i: usize) -> Dye {
        self.dye.get(i).copied().unwrap_or(0)
    }

    /// The dye column, one tag per atom, made (all zeros) when absent.
    pub fn dye_mut(&mut self) -> &mut Vec<Dye> {
        if self.dye.len() != self.len() {
            self.dye.resize(self.len(), 0);
        }
        &mut self.dye
    }
}

/// Everything needed to resume a trajectory exactly: state, clock and random-stream position.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub sim_box: SimBox,
    pub atoms: AtomState,
    pub step: u64,
    /// Simulated time (tau) since the start.
    pub time: f64,
    /// The piston's height and velocity, when the parameters have a piston.
    pub piston: Option<PistonState>,
}

/// Observables at one step. Energies are totals (not per atom); see the `_per_atom` helpers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Telemetry {
    pub step: u64,
    pub time: f64,
    pub n_atoms: usize,
    /// Degrees of freedom used for the temperature.
    pub dof: f64,
    pub temperature: f64,
    pub kinetic_energy: f64,
    /// Pair (LJ) energy.
    pub pair_energy: f64,
    /// Energy of walls, obstacles and gravity (drive too, along a walled x).
    pub external_energy: f64,
    /// Virial sum over pairs plus wall and obstacle terms, sum of r . f.
    pub virial: f64,
    pub pressure: f64,
    /// The volume the pressure is for (sigma^3): the box's (it changes under hybrid Monte
    /// Carlo NPT).
    pub volume: f64,
    pub momentum: [f64; 3],
    /// The piston (height, force per area, the volume under it), when there is one. The
    /// pressure above is then the virial pressure of the volume under the piston.
    pub piston: Option<PistonTelemetry>,
    /// Speed of the last `advance` call.
    pub steps_per_s: f64,
    /// Hybrid Monte Carlo acceptance counts (zero in molecular dynamics).
    pub mc: hmc::McStats,
    /// The force on each body (obstacle shapes, then wall faces; see [`bodies`]) in
    /// epsilon/sigma, averaged over the steps since the previous record: the force passes
    /// at the end of steps `previous + 1 ..= step` (this record's step included). Steps
    /// undone by a rollback, restore or parameter change are not counted; empty when the
    /// tank has no walls and no obstacles, when no step ran since the last record (a
    /// `measure`), and under hybrid Monte Carlo (chain records).
    pub body_forces: Vec<bodies::BodyForce>,
    /// The wind tunnel's inflow zone (`physics::tunnel`): the momentum it gave the atoms,
    /// sum of m (v_new - v_old) over the atoms it reset, summed over the steps since the
    /// previous record (this record's step included, as for `body_forces`). Zero without a
    /// tunnel and in records no step led to (a `measure`).
    pub tunnel_momentum: [f64; 3],
    /// The kinetic energy the inflow zone gave the atoms over the same steps (epsilon;
    /// negative when it removed heat).
    pub tunnel_heat: f64,
    /// The thermal motion alone, relative to the local mean flow, at the same state as
    /// `temperature` (the record's step, after the thermostat and the tunnel's zone): present
    /// whenever the parameters have a wind tunnel or a thermostat relative to the flow
    /// ([`SimParams::thermal_readout`]), None otherwise. `temperature` counts the stream's
    /// kinetic energy as heat; this does not.
    pub thermal: Option<ThermalTelemetry>,
}

/// The kinetic energy and temperature of the motion relative to the local mean flow: per bin
/// of the thermostat's grid ([`crate::flow::Grid::for_thermostat`], as
/// [`crate::flow::FlowProfile`] measures it), the bin's mean velocity removed. Both backends
/// fill it from the same two sums through [`ThermalTelemetry::from_sums`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThermalTelemetry {
    /// The thermal (kinetic) temperature, epsilon/k_B: twice `kinetic_energy` over `dof`.
    pub temperature: f64,
    /// 1/2 (sum m v^2 - sum_b |P_b|^2 / M_b), epsilon: sum over atoms of 1/2 m |v - u_b|^2.
    pub kinetic_energy: f64,
    /// Its degrees of freedom, 3 N - 3 N_occupied ([`crate::flow::relative_dof`]).
    pub dof: f64,
    /// Bins of the grid holding at least one atom.
    pub occupied_bins: usize,
}

impl ThermalTelemetry {
    /// From sum m v^2 over all the motion (`twice_ke`) and the mean flow's sum_b |P_b|^2 / M_b
    /// (`flow_twice_ke`) over `occupied` bins holding `n_atoms` atoms.
    pub fn from_sums(twice_ke: f64, flow_twice_ke: f64, n_atoms: usize, occupied: usize) -> ThermalTelemetry {
        let twice_thermal = twice_ke - flow_twice_ke;
        let dof = crate::flow::relative_dof(n_atoms, occupied);
        ThermalTelemetry {
            temperature: crate::analysis::temperature(twice_thermal, dof),
            kinetic_energy: 0.5 * twice_thermal,
            dof,
            occupied_bins: occupied,
        }
    }
}

impl Telemetry {
    /// A record from a device backend's sums at `step`, in the order both device record
    /// layouts keep them: 2 KE, pair energy, pair virial, external energy, external virial,
    /// momentum x, y, z; `volume` the box's (or the piston's) for the pressure.
    pub fn from_sums(step: u64, n_atoms: usize, dof: f64, volume: f64, sums: &[f64]) -> Telemetry {
        let virial = sums[2] + sums[4];
        Telemetry {
            step,
            n_atoms,
            dof,
            temperature: crate::analysis::temperature(sums[0], dof),
            kinetic_energy: 0.5 * sums[0],
            pair_energy: sums[1],
            external_energy: sums[3],
            virial,
            pressure: crate::analysis::pressure(sums[0], virial, volume),
            volume,
            momentum: [sums[5], sums[6], sums[7]],
            ..Default::default()
        }
    }

    pub fn potential_energy(&self) -> f64 {
        self.pair_energy + self.external_energy
    }

    pub fn total_energy(&self) -> f64 {
        self.kinetic_energy + self.potential_energy()
    }

    fn per_atom(&self, x: f64) -> f64 {
        if self.n_atoms == 0 { 0.0 } else { x / self.n_atoms as f64 }
    }

    pub fn ke_per_atom(&self) -> f64 {
        self.per_atom(self.kinetic_energy)
    }

    pub fn pe_per_atom(&self) -> f64 {
        self.per_atom(self.potential_energy())
    }

    pub fn etotal_per_atom(&self) -> f64 {
        self.per_atom(self.total_energy())
    }

    /// The thermal temperature relative to the local flow, when this record has one.
    pub fn thermal_temperature(&self) -> Option<f64> {
        self.thermal.map(|t| t.temperature)
    }
}

/// Which scalar goes into the fourth component of each published position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum ColourScalar {
    /// |v| in sigma/tau.
    #[default]
    Speed,
    /// m v^2 / 2 in epsilon.
    KineticEnergy,
    /// y in sigma.
    Height,
    /// The species index.
    Species,
    /// The dye tag (0 untagged, else the source's number; `AtomState::dye`).
    Dye,
}

/// Where [`Backend::write_positions`] puts the `[x, y, z, colour]` f32 quadruples.
pub enum PositionTarget<'a> {
    /// Host memory (the fallback path).
    Host(&'a mut [[f32; 4]]),
    /// A device pointer the backend's own device can write (zero-copy interop), with room
    /// for `len` quadruples.
    Device { ptr: u64, len: usize },
    /// A storage buffer of the wgpu device the backend runs on (zero-copy on a shared device:
    /// the renderer draws it), with room for `len` quadruples. Written by work submitted to
    /// that device's queue, not waited for; a buffer of another device is refused.
    Buffer { buffer: &'a wgpu::Buffer, len: usize },
}

/// What to do with atoms found inside a newly placed obstacle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum CaughtAtoms {
    /// Delete them.
    #[default]
    Remove,
    /// Move them out along the distance gradient to just outside the surface.
    PushOut,
}

/// Which atoms an edit applies to.
#[derive(Clone, Debug, PartialEq)]
pub enum AtomSelection {
    /// Canonical indices.
    Indices(Vec<usize>),
    /// Atoms whose (x, y) lies within `radius` of `centre` (a brush in the front view).
    Disc { centre: [f64; 2], radius: f64 },
}

/// Describes the backend and device for status lines.
#[derive(Clone, Debug, PartialEq)]
pub struct BackendInfo {
    /// "cpu", "cuda" or "wgpu".
    pub kind: &'static str,
    /// A human description: CPU model and threads, or GPU name.
    pub device: String,
    /// Every precision, with why this backend cannot run it here (None: it can): the app's
    /// precision menu greys those out with the reason.
    pub precisions: Vec<(Precision, Option<String>)>,
}

impl BackendInfo {
    /// Every precision, all run (the CPU and CUDA backends).
    pub fn all_precisions() -> Vec<(Precision, Option<String>)> {
        Precision::ALL.iter().map(|&p| (p, None)).collect()
    }

    /// Why this backend cannot run `precision` here; None when it can.
    pub fn refuses(&self, precision: Precision) -> Option<&str> {
        self.precisions.iter().find(|(p, _)| *p == precision).and_then(|(_, why)| why.as_deref())
    }
}

/// Largest distance an atom may move in one step before a run is declared blown up (sigma).
pub const RUNAWAY_STEP: f64 = 0.5;
/// An atom further than this (sigma) beyond a wall plane has left the closed tank: a blow-up.
pub const ESCAPE_MARGIN: f64 = 1.0;
/// Checkpoints a backend keeps for rolling back after a blow-up.
pub const CHECKPOINTS: usize = 3;

/// Checks atoms against the box and species before they enter a backend.
pub fn check_atoms(atoms: &AtomState, params: &SimParams) -> Result<(), SimError> {
    let n = atoms.len();
    if atoms.velocities.len() != n || atoms.types.len() != n {
        return Err(SimError::Invalid(format!(
            "atom arrays differ in length: {n} positions, {} velocities, {} types",
            atoms.velocities.len(),
            atoms.types.len()
        )));
    }
    if atoms.has_dye() && atoms.dye.len() != n {
        return Err(SimError::Invalid(format!(
            "atom arrays differ in length: {n} positions, {} dye tags",
            atoms.dye.len()
        )));
    }
    if n > u32::MAX as usize / 2 {
        return Err(SimError::Invalid(format!("{n} atoms is more than this program supports (2^31)")));
    }
    for i in 0..n {
        let (p, v) = (atoms.positions[i], atoms.velocities[i]);
        if !p.iter().chain(v.iter()).all(|x| x.is_finite()) {
            return Err(SimError::Invalid(format!("atom {i} has a non-finite position or velocity")));
        }
        if atoms.types[i] as usize >= params.species.len() {
            return Err(SimError::Invalid(format!(
                "atom {i} has species {} but only {} species are defined",
                atoms.types[i],
                params.species.len()
            )));
        }
    }
    Ok(())
}

/// Refuses a tunnel faster than sound in a system of atoms of species `types` in `sim_box`
/// (see [`SimParams::validate_tunnel_speed`]); nothing to check without a tunnel.
pub(crate) fn check_tunnel(params: &SimParams, sim_box: &SimBox, types: &[u32]) -> Result<(), SimError> {
    if params.tunnel.is_none() {
        return Ok(());
    }
    Ok(params.validate_tunnel_speed(&params.mean_fluid(sim_box, types))?)
}

/// Checks a piston drag request against `params`: there must be a piston and a finite target.
pub(crate) fn check_piston_drag(params: &SimParams, target: Option<f64>) -> Result<(), SimError> {
    if params.piston.is_none() {
        return Err(SimError::Invalid("there is no piston to move: switch the piston on first".into()));
    }
    if target.is_some_and(|y| !y.is_finite()) {
        return Err(SimError::Invalid("the piston's target height must be a finite number (sigma)".into()));
    }
    Ok(())
}

/// Runs `advance` (which appends the telemetry it produced), stamps the call's speed on the
/// new records and queues them: the bookkeeping every backend's `advance` shares.
pub(crate) fn timed_advance(
    steps: u64,
    queue: &mut Vec<Telemetry>,
    advance: impl FnOnce(&mut Vec<Telemetry>) -> Result<(), SimError>,
) -> Result<(), SimError> {
    let start = std::time::Instant::now();
    let mut out = Vec::new();
    let result = advance(&mut out);
    let rate = steps as f64 / start.elapsed().as_secs_f64().max(1e-9);
    for t in out.iter_mut() {
        t.steps_per_s = rate;
    }
    queue.extend(out);
    result
}

/// Everything that can go wrong inside a backend.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("invalid parameter {0}")]
    Param(#[from] ParamError),
    #[error("the simulation blew up at step {step}: {what}. {hint}")]
    BlowUp { step: u64, what: String, hint: String },
    #[error("{0}")]
    Invalid(String),
    #[error(
        "{what} needs {needed_mb:.0} MB but only {available_mb:.0} MB are available; the largest system that fits has about {max_atoms} atoms"
    )]
    OutOfMemory { what: String, needed_mb: f64, available_mb: f64, max_atoms: usize },
    #[error("CUDA device error: {0}")]
    Device(String),
}

/// The simulation engine interface shared by the CPU and CUDA backends.
pub trait Backend: Send {
    fn info(&self) -> BackendInfo;
    /// How the pair forces are found now, in words ("neighbour list", "cell list",
    /// "all pairs", ...): the parameters' algorithm resolved, after any fallback for a box
    /// its lists do not fit, as of the last force pass.
    fn pair_search(&self) -> &'static str;
    /// Calls to [`Backend::advance`] that end on a multiple of this step run fastest: the
    /// CUDA backend cuts its step graphs there, so such calls keep reusing a few cached
    /// graphs instead of building new ones. 1 (the default) where it does not matter.
    fn step_grain(&self) -> u64 {
        1
    }
    fn n_atoms(&self) -> usize;
    /// Bytes of device memory the backend's arrays, checkpoints and samplers hold now (None
    /// for a backend without a device).
    fn device_bytes(&self) -> Option<usize> {
        None
    }
    /// Steps taken since the start (continues across snapshots).
    fn step(&self) -> u64;
    fn sim_box(&self) -> SimBox;
    fn params(&self) -> &SimParams;
    /// Changes any parameter live: dt, cutoff, thermostat, target T, body forces, the tether,
    /// walls, algorithm, precision, block size. State is kept; invalid values are refused.
    fn set_params(&mut self, params: SimParams) -> Result<(), SimError>;
    /// Advances `steps` steps: velocity Verlet with the thermostat, producing telemetry every
    /// `params.telemetry_every` steps (step numbers divisible by it); under a hybrid Monte
    /// Carlo thermostat, trajectories of the chain in [`hmc`] (telemetry at cycle ends).
    fn advance(&mut self, steps: u64) -> Result<(), SimError> {
        hmc::advance(self, steps)
    }
    /// Advances `steps` velocity-Verlet steps of molecular dynamics (a hybrid Monte Carlo
    /// thermostat integrates plain NVE here), producing telemetry every
    /// `params.telemetry_every` steps (step numbers divisible by it).
    fn advance_md(&mut self, steps: u64) -> Result<(), SimError>;
    /// Tags atoms crossing `rakes` every step from now on (empty: none), on top of the tags
    /// the atoms carry ([`AtomState::dye`]). The CPU, CUDA and wgpu backends run rakes (on
    /// the device, no host traffic per step); the default refuses any, for a backend that
    /// does not.
    fn set_dye_rakes(&mut self, rakes: &[crate::physics::dye::DyeRake]) -> Result<(), SimError> {
        match rakes.is_empty() {
            true => Ok(()),
            false => Err(SimError::Invalid(format!(
                "the {} backend does not run dye rakes yet; use the CPU backend (--backend cpu)",
                self.info().kind
            ))),
        }
    }
    /// Starts sampling flow fields every `spec.every` steps in windows of `spec.window_tau`
    /// (`Some`, dropping any open window) or stops (`None`). The sums stay where the atoms
    /// live (on the device on CUDA); only finished windows cross to the caller.
    fn set_fields(&mut self, spec: Option<FieldSpec>) -> Result<(), SimError>;
    /// Flow-field windows finished since the last call, oldest first; with `close`, the open
    /// window is first ended early (the end of a run).
    fn take_fields(&mut self, close: bool) -> Result<Vec<Fields>, SimError>;
    /// Starts sampling for transport measurements (`Some`: every stored origin and record
    /// dropped, sampling from the next step on) or stops (`None`). What is sampled on which
    /// step, and what comes back, is the contract in [`crate::transport::spec`].
    fn set_transport(&mut self, spec: Option<TransportSpec>) -> Result<(), SimError> {
        match spec {
            None => Ok(()),
            Some(_) => {
                Err(SimError::Invalid(format!("the {} backend does not measure transport yet", self.info().kind)))
            }
        }
    }
    /// Transport records produced since the last call, oldest first.
    fn take_transport(&mut self) -> Result<TransportSamples, SimError> {
        Ok(TransportSamples::default())
    }
    /// The hybrid Monte Carlo chain's state and the telemetry queue, for [`hmc::advance`].
    fn hmc_parts(&mut self) -> (&mut hmc::HmcState, &mut Vec<Telemetry>);
    /// Telemetry produced since the last drain, oldest first.
    fn drain_telemetry(&mut self) -> Vec<Telemetry>;
    /// Telemetry of the current state, computed now.
    fn measure(&mut self) -> Result<Telemetry, SimError>;
    /// Total force on every atom at the current positions, in canonical order (for tests and
    /// cross-checks between backends; copies from the device).
    fn forces(&mut self) -> Result<Vec<[f64; 3]>, SimError>;
    /// Replaces the obstacle field (None: no obstacles). Returns how many atoms were caught
    /// inside and removed or pushed out.
    fn set_obstacles(&mut self, field: Option<Arc<ObstacleField>>, caught: CaughtAtoms) -> Result<usize, SimError>;
    /// Appends atoms (velocities included) after the existing ones.
    fn add_atoms(&mut self, atoms: &AtomState) -> Result<(), SimError>;
    /// Removes the selected atoms; returns how many were removed.
    fn remove_atoms(&mut self, which: &AtomSelection) -> Result<usize, SimError>;
    /// The current state in canonical order. The backend then continues from exactly this
    /// state (fresh lists, canonical order), so a backend restored from the snapshot and
    /// this one advance bit for bit alike.
    fn snapshot(&mut self) -> Result<Snapshot, SimError>;
    /// Continues from `snapshot` (state, step and time); parameters are kept.
    fn restore(&mut self, snapshot: &Snapshot) -> Result<(), SimError>;
    /// The current state in canonical order, read without disturbing the run (unlike
    /// [`Backend::snapshot`], the backend keeps its order and lists): for host copies kept
    /// just in case and trajectory frames.
    fn copy_state(&mut self) -> Result<Snapshot, SimError> {
        self.snapshot()
    }
    /// Keeps the current state (atoms, step, time) as the newest of [`CHECKPOINTS`]
    /// checkpoints, dropping the oldest. CUDA keeps them on the GPU: taking one is a device
    /// copy, not a download.
    fn checkpoint(&mut self) -> Result<(), SimError>;
    /// Returns to the newest checkpoint (kept, so a repeated blow-up returns there again),
    /// whatever was added or removed since, and gives its step; None when there is none.
    /// Parameters and obstacles stay as they are.
    fn rollback(&mut self) -> Result<Option<u64>, SimError>;
    /// Radial distribution function g(r) over `bins` bins up to `r_max`: over the whole box,
    /// or around the centres inside `region` (partners anywhere), normalised by the density
    /// in the region (`analysis::rdf`). Pairs are found through a cell grid.
    fn rdf(&mut self, bins: usize, r_max: f64, region: Option<&RdfRegion>) -> Result<Histogram, SimError>;
    /// Probability density of the speed over `bins` bins up to `v_max`.
    fn speed_histogram(&mut self, bins: usize, v_max: f64) -> Result<Histogram, SimError>;
    /// Number density along y over `bins` slabs spanning the box.
    fn density_profile(&mut self, bins: usize) -> Result<Histogram, SimError>;
    /// Writes `[x, y, z, colour]` for every atom in canonical order.
    fn write_positions(&mut self, target: PositionTarget<'_>, colour: ColourScalar) -> Result<(), SimError>;
    /// Like [`Backend::write_positions`] into device memory (`ptr`, room for `len` atoms), but
    /// may return before the write has finished: it has once [`Backend::positions_written`]
    /// says so. The zero-copy path uses this so the simulation never waits on the hand-over.
    fn write_positions_async(&mut self, ptr: u64, len: usize, colour: ColourScalar) -> Result<(), SimError> {
        self.write_positions(PositionTarget::Device { ptr, len }, colour)
    }
    /// Drags the piston toward height `target` (Some) or releases it (None). While dragged it
    /// ignores forces and moves toward the target at the speed [`PistonState::drag_velocity`]
    /// gives; released, it continues freely from that velocity. An error when the parameters
    /// have no piston or the backend cannot run one.
    fn drag_piston(&mut self, target: Option<f64>) -> Result<(), SimError> {
        let _ = target;
        Err(SimError::Invalid(format!("the {} backend does not run the piston", self.info().kind)))
    }
    /// Whether the last [`Backend::write_positions_async`] has finished; with `wait`, waits
    /// until it has (and returns true).
    fn positions_written(&mut self, wait: bool) -> Result<bool, SimError> {
        let _ = wait;
        Ok(true)
    }
}
