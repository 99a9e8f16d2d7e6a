//! The equation-of-state sweep: for each density of a grid, an fcc lattice of about N atoms
//! melted at T, equilibrated and sampled with the truncated, unshifted LJ potential on the
//! chosen backend; pressure and energy per atom with the r_c tail corrections added (the
//! full-LJ values the JZG table gives) and block-average error bars. The CLI (`eos`) and the
//! app's worker both call [`run_sweep`] with a progress callback and a cancel flag.
//! `grid.rs` parses density grids; `table.rs` writes the CSV and prints the table.
//! Reduced LJ units throughout. Must not touch the UI or backend internals.

pub mod grid;
pub mod table;

use std::sync::atomic::{AtomicBool, Ordering};

use crate::analysis::blocks::block_mean_sem;
use crate::analysis::tail::{p_tail, u_tail};
use crate::physics::cutoff::Cutoff;
use crate::physics::init::{LatticeKind, lattice_box, maxwell_boltzmann};
use crate::physics::params::{SimParams, Thermostat};
use crate::sim::{AtomState, BackendChoice, SimError, hmc, open_backend};

/// How the state point is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum EosEnsemble {
    /// Canonical molecular dynamics with the CSVR (Bussi) thermostat.
    #[default]
    Nvt,
    /// Hybrid Monte Carlo at constant volume.
    Hmc,
}

impl EosEnsemble {
    pub fn name(self) -> &'static str {
        match self {
            EosEnsemble::Nvt => "NVT (CSVR)",
            EosEnsemble::Hmc => "HMC",
        }
    }
}

/// Coupling time of the CSVR thermostat of NVT sweeps (tau).
pub const CSVR_TAU: f64 = 0.2;
/// Temperatures accepted (reduced).
pub const T_RANGE: std::ops::RangeInclusive<f64> = 0.1..=10.0;
/// Atom counts accepted (before rounding to an fcc lattice).
pub const ATOMS_RANGE: std::ops::RangeInclusive<usize> = 32..=1_000_000;
/// Most equilibration or production steps per density.
pub const MAX_STEPS: u64 = 100_000_000;

/// One sweep's settings, reduced units.
#[derive(Clone, Debug, PartialEq)]
pub struct EosSpec {
    pub temperature: f64,
    pub densities: Vec<f64>,
    pub ensemble: EosEnsemble,
    /// Steps per HMC trajectory (`EosEnsemble::Hmc`).
    pub trajectory: u32,
    /// Requested atoms; rounded to the nearest fcc lattice of 4 k^3 (see [`fcc_cells`]).
    pub atoms: usize,
    pub equilibration: u64,
    pub production: u64,
    /// Blocks for the error bars.
    pub blocks: usize,
    /// Sample P and U every this many steps.
    pub sample_every: u64,
    pub seed: u64,
    /// Truncation radius (unshifted) in sigma.
    pub cutoff: f64,
    pub dt: f64,
    pub backend: BackendChoice,
}

impl Default for EosSpec {
    fn default() -> Self {
        EosSpec {
            temperature: 2.0,
            densities: vec![0.5, 0.7, 0.9],
            ensemble: EosEnsemble::Nvt,
            trajectory: hmc::DEFAULT_TRAJECTORY,
            atoms: 500,
            equilibration: 2_000,
            production: 20_000,
            blocks: 20,
            sample_every: 10,
            seed: 1,
            cutoff: 2.5,
            dt: 0.005,
            backend: BackendChoice::Auto,
        }
    }
}

/// A setting that cannot be used, or a failed or cancelled run.
#[derive(Debug, thiserror::Error)]
pub enum EosError {
    /// `field` is the setting's name (the CLI flag without `--`).
    #[error("{field}: {message}")]
    Invalid { field: &'static str, message: String },
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("cancelled")]
    Cancelled,
}

fn invalid(field: &'static str, message: String) -> EosError {
    EosError::Invalid { field, message }
}

/// The fcc lattice closest to `atoms`: k cells per edge, 4 k^3 atoms (k at least 2).
pub fn fcc_cells(atoms: usize) -> (usize, usize) {
    let k = ((atoms as f64 / 4.0).cbrt().round() as usize).max(2);
    (k, 4 * k * k * k)
}

/// One density's result: full-LJ pressure and energy per atom (tail corrections included)
/// with standard errors of the block means, and the mean temperature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EosPoint {
    pub rho: f64,
    pub p: f64,
    pub p_err: f64,
    pub u: f64,
    pub u_err: f64,
    pub t_mean: f64,
    pub t_err: f64,
    pub n_atoms: usize,
}

/// What a sweep reports while it runs.
#[derive(Clone, Debug, PartialEq)]
pub enum EosEvent {
    /// Steps done of the whole sweep; `point` is the index of the density running.
    Progress { point: usize, steps_done: u64, steps_total: u64 },
    /// A density finished.
    Point(EosPoint),
}

impl EosSpec {
    /// Checks every setting, naming it and the fix.
    pub fn validate(&self) -> Result<(), EosError> {
        let t = self.temperature;
        if !(t.is_finite() && T_RANGE.contains(&t)) {
            return Err(invalid(
                "temperature",
                format!("{t} is outside [0.1, 10] (reduced units; the JZG fit covers 0.7 to 6)"),
            ));
        }
        if self.densities.is_empty() {
            return Err(invalid("densities", "no densities: give a:b:step, e.g. 0.5:0.9:0.2".into()));
        }
        if self.densities.len() > grid::MAX_POINTS {
            return Err(invalid("densities", format!("{} points; at most {}", self.densities.len(), grid::MAX_POINTS)));
        }
        if let Some(r) = self.densities.iter().find(|r| !(r.is_finite() && **r > 0.0 && **r <= grid::MAX_DENSITY)) {
            return Err(invalid("densities", format!("density {r} is outside (0, {}]", grid::MAX_DENSITY)));
        }
        if !ATOMS_RANGE.contains(&self.atoms) {
            return Err(invalid(
                "atoms",
                format!("{} is outside {} to {}", self.atoms, ATOMS_RANGE.start(), ATOMS_RANGE.end()),
            ));
        }
        if !(self.cutoff.is_finite() && (1.0..=10.0).contains(&self.cutoff)) {
            return Err(invalid("cutoff", format!("{} is outside [1, 10] sigma; 2.5 is usual", self.cutoff)));
        }
        if !(self.dt.is_finite() && self.dt > 0.0 && self.dt <= 0.05) {
            return Err(invalid("dt", format!("{} is outside (0, 0.05] tau; 0.005 is usual", self.dt)));
        }
        if self.equilibration > MAX_STEPS {
            return Err(invalid("equilibration", format!("{} steps is more than {MAX_STEPS}", self.equilibration)));
        }
        if self.production == 0 || self.production > MAX_STEPS {
            return Err(invalid("production", format!("{} steps: use 1 to {MAX_STEPS}", self.production)));
        }
        if self.sample_every == 0 {
            return Err(invalid("sample-every", "must be at least 1".into()));
        }
        if !(2..=1000).contains(&self.blocks) {
            return Err(invalid("blocks", format!("{}: use 2 to 1000 blocks (20 is usual)", self.blocks)));
        }
        let samples = self.production / self.sample_every;
        if samples < self.blocks as u64 {
            return Err(invalid(
                "production",
                format!(
                    "{} steps sampled every {} give {samples} samples, fewer than the {} blocks: run at least {} steps",
                    self.production,
                    self.sample_every,
                    self.blocks,
                    self.blocks as u64 * self.sample_every
                ),
            ));
        }
        if self.ensemble == EosEnsemble::Hmc && !(1..=crate::physics::params::MAX_TRAJECTORY).contains(&self.trajectory)
        {
            return Err(invalid(
                "trajectory",
                format!(
                    "{}: use 1 to {} steps (10-50 is usual)",
                    self.trajectory,
                    crate::physics::params::MAX_TRAJECTORY
                ),
            ));
        }
        // The box must hold twice the cutoff at the highest density.
        let (_, n) = fcc_cells(self.atoms);
        let rho_max = self.densities.iter().cloned().fold(0.0, f64::max);
        let edge = (n as f64 / rho_max).cbrt();
        if edge < 2.0 * self.cutoff {
            let fits = n as f64 / (2.0 * self.cutoff).powi(3);
            let need = 4.0 * ((rho_max * (2.0 * self.cutoff).powi(3) / 4.0).cbrt().ceil()).powi(3);
            return Err(invalid(
                "densities",
                format!(
                    "density {rho_max} with {n} atoms makes a box of {edge:.3} sigma, less than twice the cutoff {}: \
                     use densities up to {fits:.3}, or at least {need} atoms",
                    self.cutoff
                ),
            ));
        }
        Ok(())
    }

    fn thermostat(&self) -> Thermostat {
        match self.ensemble {
            EosEnsemble::Nvt => Thermostat::Csvr { tau: CSVR_TAU, relative_to_flow: false },
            EosEnsemble::Hmc => Thermostat::Hmc { trajectory: self.trajectory },
        }
    }

    /// Steps of the whole sweep.
    pub fn total_steps(&self) -> u64 {
        self.densities.len() as u64 * (self.equilibration + self.production)
    }
}

/// Steps advanced between progress reports and cancel checks.
const CHUNK: u64 = 500;

/// Runs the sweep. `on_event` hears progress and each finished density; `cancel` stops it
/// between chunks of steps with [`EosError::Cancelled`]. Returns one point per density.
pub fn run_sweep(
    spec: &EosSpec,
    cancel: &AtomicBool,
    on_event: &mut dyn FnMut(EosEvent),
) -> Result<Vec<EosPoint>, EosError> {
    spec.validate()?;
    let (k, n) = fcc_cells(spec.atoms);
    let steps_total = spec.total_steps();
    let mut steps_done = 0;
    let mut points = Vec::with_capacity(spec.densities.len());
    for (i, &rho) in spec.densities.iter().enumerate() {
        let (sim_box, positions) = lattice_box(LatticeKind::Fcc, rho, [k; 3]);
        let seed = spec.seed.wrapping_add(i as u64);
        let velocities = maxwell_boltzmann(&vec![1.0; n], spec.temperature, 3.0 * n as f64 - 3.0, seed, 0);
        let atoms = AtomState { positions, velocities, types: vec![0; n], ..Default::default() };
        let params = SimParams {
            dt: spec.dt,
            cutoff: Cutoff::Absolute(spec.cutoff),
            shift: false,
            temperature: spec.temperature,
            // Melted by Bussi MD first: an fcc start has a shell of pairs just inside r_c, so
            // in the truncated, unshifted potential it lies far below the fluid and a hybrid
            // Monte Carlo chain started there would reject every trajectory.
            thermostat: Thermostat::Csvr { tau: CSVR_TAU, relative_to_flow: false },
            telemetry_every: spec.sample_every,
            seed,
            ..SimParams::default()
        };
        params.validate(&sim_box).map_err(|e| invalid("densities", format!("at density {rho}: {e}")))?;
        let (mut sim, _) = open_backend(spec.backend, sim_box, params, &atoms, None)?;
        let mut rows = Vec::new();
        let melt = spec.equilibration / 2;
        let own = SimParams { thermostat: spec.thermostat(), ..sim.params().clone() };
        for (phase, (steps, keep)) in
            [(melt, false), (spec.equilibration - melt, false), (spec.production, true)].into_iter().enumerate()
        {
            if phase == 1 {
                sim.set_params(own.clone())?;
            }
            let mut left = steps;
            while left > 0 {
                if cancel.load(Ordering::Relaxed) {
                    return Err(EosError::Cancelled);
                }
                let chunk = left.min(CHUNK);
                sim.advance(chunk)?;
                let t = sim.drain_telemetry();
                if keep {
                    rows.extend(t);
                }
                left -= chunk;
                steps_done += chunk;
                on_event(EosEvent::Progress { point: i, steps_done, steps_total });
            }
        }
        let (pt, ut) = (p_tail(rho, spec.cutoff), u_tail(rho, spec.cutoff));
        let p: Vec<f64> = rows.iter().map(|r| r.pressure + pt).collect();
        let u: Vec<f64> = rows.iter().map(|r| r.pair_energy / r.n_atoms as f64 + ut).collect();
        let temps: Vec<f64> = rows.iter().map(|r| r.temperature).collect();
        let too_few = || invalid("production", format!("only {} samples for {} blocks", rows.len(), spec.blocks));
        let (p_mean, p_err) = block_mean_sem(&p, spec.blocks).ok_or_else(too_few)?;
        let (u_mean, u_err) = block_mean_sem(&u, spec.blocks).ok_or_else(too_few)?;
        let (t_mean, t_err) = block_mean_sem(&temps, spec.blocks).ok_or_else(too_few)?;
        let point = EosPoint { rho, p: p_mean, p_err, u: u_mean, u_err, t_mean, t_err, n_atoms: n };
        on_event(EosEvent::Point(point));
        points.push(point);
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fcc_rounding() {
        assert_eq!(fcc_cells(500), (5, 500));
        assert_eq!(fcc_cells(1000), (6, 864));
        assert_eq!(fcc_cells(2048), (8, 2048));
        assert_eq!(fcc_cells(32), (2, 32));
        assert_eq!(fcc_cells(1), (2, 32));
    }

    #[test]
    fn validation_names_the_setting() {
        let field = |s: EosSpec| match s.validate() {
            Err(EosError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert!(EosSpec::default().validate().is_ok());
        assert_eq!(field(EosSpec { temperature: -1.0, ..Default::default() }), "temperature");
        assert_eq!(field(EosSpec { temperature: f64::NAN, ..Default::default() }), "temperature");
        assert_eq!(field(EosSpec { atoms: 10, ..Default::default() }), "atoms");
        assert_eq!(field(EosSpec { blocks: 1, ..Default::default() }), "blocks");
        assert_eq!(field(EosSpec { production: 50, ..Default::default() }), "production");
        assert_eq!(field(EosSpec { cutoff: 0.5, ..Default::default() }), "cutoff");
        // 108 atoms at density 1.2: a box of 4.48 sigma, under twice 2.5.
        let e = EosSpec { atoms: 108, densities: vec![1.2], ..Default::default() }.validate().unwrap_err().to_string();
        assert!(e.contains("less than twice the cutoff") && e.contains("at least 256 atoms"), "{e}");
    }

    /// A tiny sweep runs on the CPU, reports progress to the end and stops when cancelled.
    #[test]
    fn tiny_sweep_reports_progress_and_cancels() {
        let spec = EosSpec {
            densities: vec![0.3, 0.4],
            atoms: 108,
            equilibration: 100,
            production: 400,
            blocks: 4,
            backend: BackendChoice::Cpu,
            ..Default::default()
        };
        let mut last = 0;
        let mut seen = 0;
        let pts = run_sweep(&spec, &AtomicBool::new(false), &mut |e| match e {
            EosEvent::Progress { steps_done, .. } => last = steps_done,
            EosEvent::Point(_) => seen += 1,
        })
        .unwrap();
        assert_eq!((pts.len(), seen, last), (2, 2, spec.total_steps()));
        assert!(pts.iter().all(|p| p.n_atoms == 108 && p.p.is_finite() && p.u < 0.0 && p.p_err > 0.0));
        let cancel = AtomicBool::new(true);
        assert!(matches!(run_sweep(&spec, &cancel, &mut |_| {}), Err(EosError::Cancelled)));
    }
}
