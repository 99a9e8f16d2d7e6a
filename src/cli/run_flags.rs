//! `run`'s flags applied to the scene's parameters: values in the flags' unit system
//! (`--units`) converted to reduced units, the ensemble and its coupling time, the output
//! intervals checked, and parameter errors reported under the flag that set them.

use anyhow::{Result, anyhow, bail};

use super::run::{Ensemble, RunArgs};
use crate::physics::cutoff::Cutoff;
use crate::physics::dye::{DyeRegion, check_number};
use crate::physics::params::{ParamError, SimParams, Thermostat};
use crate::physics::sim_box::SimBox;
use crate::scene::DyeSource;
use crate::sim::hmc;
use crate::units::{self, UnitSystem};

/// Converts flag values of one unit system to reduced units.
struct FlagUnits(UnitSystem);

impl FlagUnits {
    fn temperature(&self, x: f64) -> f64 {
        match self.0 {
            UnitSystem::Argon => units::kelvin_to_reduced(x),
            UnitSystem::Lj => x,
        }
    }
    fn time_fs(&self, x: f64) -> f64 {
        match self.0 {
            UnitSystem::Argon => x / (units::argon_tau_ps() * 1000.0),
            UnitSystem::Lj => x,
        }
    }
    fn time_ps(&self, x: f64) -> f64 {
        match self.0 {
            UnitSystem::Argon => x / units::argon_tau_ps(),
            UnitSystem::Lj => x,
        }
    }
    fn pressure(&self, x: f64) -> f64 {
        match self.0 {
            UnitSystem::Argon => x / units::reduced_pressure_to_mpa(1.0),
            UnitSystem::Lj => x,
        }
    }
    fn length(&self, x: f64) -> f64 {
        match self.0 {
            UnitSystem::Argon => x / units::ARGON_SIGMA_ANGSTROM,
            UnitSystem::Lj => x,
        }
    }
}

pub(super) fn param_flag(e: ParamError) -> anyhow::Error {
    let flag = match e.field {
        "dt" => "--dt",
        "cutoff" => "--cutoff",
        "temperature" => "--temperature",
        "thermostat.tau" | "thermostat.damp" => "--tau",
        _ => "",
    };
    if flag.is_empty() { anyhow!("invalid setting {e}") } else { anyhow!("invalid {flag}: {e}") }
}

/// Applies the flags to the setup.
pub(super) fn apply_flags(args: &RunArgs, params: &mut SimParams) -> Result<()> {
    let u = FlagUnits(args.units);
    if let Some(dt) = args.dt {
        params.dt = u.time_fs(dt);
    }
    if let Some(c) = args.cutoff {
        params.cutoff = Cutoff::Absolute(u.length(c));
    }
    if args.no_shift {
        params.shift = false;
    }
    if let Some(t) = args.temperature {
        params.temperature = u.temperature(t);
    }
    if let Some(a) = args.algorithm {
        params.algorithm = a;
    }
    if let Some(p) = args.precision {
        params.precision = p;
    }
    if let Some(s) = args.seed {
        params.seed = s;
    }
    let current_tau = match params.thermostat {
        Thermostat::Berendsen { tau, .. } | Thermostat::Csvr { tau, .. } => Some(tau),
        Thermostat::Langevin { damp } => Some(damp),
        Thermostat::Nve | Thermostat::Hmc { .. } | Thermostat::HmcNpt { .. } => None,
    };
    let (trajectory, pressure, max_dlnv) = match params.thermostat {
        Thermostat::HmcNpt { trajectory, pressure, max_dlnv } => (trajectory, pressure, max_dlnv),
        Thermostat::Hmc { trajectory } => (trajectory, 1.0, hmc::DEFAULT_MAX_DLNV),
        _ => (hmc::DEFAULT_TRAJECTORY, 1.0, hmc::DEFAULT_MAX_DLNV),
    };
    let trajectory = args.trajectory.unwrap_or(trajectory);
    let pressure = args.pressure.map(|p| u.pressure(p)).unwrap_or(pressure);
    let max_dlnv = args.max_dlnv.unwrap_or(max_dlnv);
    let tau = args.tau.map(|t| u.time_ps(t)).or(current_tau).unwrap_or(100.0 * params.dt);
    // A scene's relative_to_flow carries over to another rescaling ensemble.
    let relative_to_flow = params.thermostat.relative_to_flow();
    params.thermostat = match args.ensemble {
        Some(Ensemble::Nve) => Thermostat::Nve,
        Some(Ensemble::Berendsen) => Thermostat::Berendsen { tau, relative_to_flow },
        Some(Ensemble::Csvr) => Thermostat::Csvr { tau, relative_to_flow },
        Some(Ensemble::Langevin) => Thermostat::Langevin { damp: tau },
        Some(Ensemble::Hmc) => Thermostat::Hmc { trajectory },
        Some(Ensemble::HmcNpt) => Thermostat::HmcNpt { trajectory, pressure, max_dlnv },
        None => match params.thermostat {
            Thermostat::Nve => Thermostat::Nve,
            t @ (Thermostat::Berendsen { .. } | Thermostat::Csvr { .. } | Thermostat::Langevin { .. }) => {
                t.with_tau(tau)
            }
            Thermostat::Hmc { .. } => Thermostat::Hmc { trajectory },
            Thermostat::HmcNpt { .. } => Thermostat::HmcNpt { trajectory, pressure, max_dlnv },
        },
    };
    if args.thermo_every == 0 {
        bail!("invalid --thermo-every 0: must be at least 1");
    }
    if args.xyz_every == 0 {
        bail!("invalid --xyz-every 0: must be at least 1");
    }
    if args.dump_every == 0 {
        bail!("invalid --dump-every 0: must be at least 1");
    }
    if let (Some(a), Some(b)) = (&args.xyz, &args.dump)
        && a == b
    {
        bail!("--xyz and --dump name the same file {}: give each its own", a.display());
    }
    params.telemetry_every = if args.thermo.is_some() { args.thermo_every } else { args.thermo_every.max(100) };
    Ok(())
}

/// The `--dye-box X0:X1,Y0:Y1` flags as region sources (lengths in the flags' unit), each
/// checked against the tank and numbered after the scene's `scene_sources`.
pub(super) fn dye_boxes(args: &RunArgs, sim_box: &SimBox, scene_sources: usize) -> Result<Vec<DyeSource>> {
    if args.dye_box.is_empty() {
        return Ok(Vec::new());
    }
    let u = FlagUnits(args.units);
    let unit = match args.units {
        UnitSystem::Argon => "Å with --units argon",
        UnitSystem::Lj => "sigma with --units lj",
    };
    let mut out = Vec::new();
    for (k, text) in args.dye_box.iter().enumerate() {
        let bad = |why: String| anyhow!("invalid --dye-box {text:?}: {why}");
        let ranges: Vec<&str> = text.split(',').collect();
        let parse = |r: &str| -> Option<[f64; 2]> {
            let (a, b) = r.split_once(':')?;
            Some([u.length(a.trim().parse().ok()?), u.length(b.trim().parse().ok()?)])
        };
        let (Some(x), Some(y), 2) = (parse(ranges[0]), ranges.get(1).and_then(|r| parse(r)), ranges.len()) else {
            return Err(bad(format!("write X0:X1,Y0:Y1, four numbers ({unit}), e.g. --dye-box 10:20,5:15")));
        };
        check_number(scene_sources + k + 1).map_err(bad)?;
        let region = DyeRegion { min: [x[0], y[0]], max: [x[1], y[1]] };
        region.validate(sim_box).map_err(|e| bad(format!("{e} (lengths in sigma here; the flag takes {unit})")))?;
        out.push(DyeSource::Region { min: region.min, max: region.max });
    }
    Ok(out)
}
