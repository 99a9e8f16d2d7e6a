//! The result of a transport measurement, from its records to what people read: shared by
//! `argon-sandbox measure` (its text and its JSON object) and the app's Measure panel (the
//! same text for "Copy as text", the numbers and the curves it plots), and the viscosity the
//! Yeh-Hummer correction uses. What a measurement asks for, and the checks it must pass
//! first, are in `request.rs`.
//!
//! Pure functions of records (no backend, no clap, no UI); reduced LJ units with SI beside
//! them (argon's sigma, epsilon and mass, the units every species is given in).

use serde_json::{Value, json};

use super::OriginRecord;
use super::diffusion::{self, Curve, Estimate};
use super::request::{Quantity, Request};
use super::spec::TransportSamples;
use super::viscosity::{self, Running, Viscosity};
use crate::physics::params::SimParams;
use crate::physics::sim_box::SimBox;
use crate::units;

/// How the texts name where a Yeh-Hummer viscosity came from and how to give one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Names {
    /// The source of a given viscosity ("--viscosity").
    pub viscosity_from: &'static str,
    /// How to give one ("give --viscosity ETA").
    pub give_viscosity: &'static str,
}

/// `measure`'s names.
pub const CLI_NAMES: Names = Names { viscosity_from: "--viscosity", give_viscosity: "give --viscosity ETA" };

/// What a measurement ran on, for the JSON object and the summary line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Run<'a> {
    /// The backend's kind ("cpu", "cuda").
    pub backend: &'a str,
    /// Equilibration steps before production.
    pub equilibrate: u64,
    /// The production thermostat's name.
    pub thermostat: &'a str,
}

/// Everything a result is computed from.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    pub request: &'a Request,
    /// The production parameters: time step, species (names, and for the LJTS correlation
    /// their sigma, epsilon, mass), cut-off and shift.
    pub params: &'a SimParams,
    pub samples: &'a TransportSamples,
    /// Steps between stress records (the spec's `stress_every`).
    pub stress_every: u64,
    /// Mean temperature of the production run (epsilon / k_B).
    pub temperature: f64,
    /// Atoms and number density (1/sigma^3).
    pub atoms: usize,
    pub density: f64,
    pub sim_box: SimBox,
    pub run: Run<'a>,
    pub names: &'a Names,
}

/// The line through one species' MSD over its fit range: MSD = intercept + slope t.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    pub from: f64,
    pub to: f64,
    pub intercept: f64,
    pub slope: f64,
}

/// One species' mean-squared displacement and, once it has a linear regime, its line.
#[derive(Clone, Debug, PartialEq)]
pub struct MsdPlot {
    pub species: String,
    pub curve: Curve,
    pub fit: Option<Fit>,
}

/// What a measurement's plots show.
#[derive(Clone, Debug, PartialEq)]
pub enum Curves {
    /// The MSD of each species present.
    Diffusion(Vec<MsdPlot>),
    /// The stress autocorrelation and its running integral, read at `t_cut`.
    Viscosity { running: Running, t_cut: f64 },
}

impl Curves {
    /// A value without a standard error from the curves so far: D = slope / 6 of the first
    /// species' line, or the running integral at t_cut.
    pub fn provisional(&self) -> Option<f64> {
        match self {
            Curves::Diffusion(plots) => plots.first()?.fit.map(|f| f.slope / 6.0),
            Curves::Viscosity { running, t_cut } => running.at(*t_cut),
        }
    }

    /// Whether there is nothing to plot.
    pub fn is_empty(&self) -> bool {
        match self {
            Curves::Diffusion(plots) => plots.iter().all(|p| p.curve.lag.is_empty()),
            Curves::Viscosity { running, .. } => running.lag.is_empty(),
        }
    }
}

/// One species' self-diffusion.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeciesResult {
    pub species: String,
    pub atoms: usize,
    /// Einstein D over the fit range, with its block error.
    pub einstein: Estimate,
    /// The Green-Kubo check from the VACF.
    pub green_kubo: Estimate,
    /// D with the Yeh-Hummer correction, where it applies.
    pub corrected: Option<f64>,
}

/// A measurement's result: the value with its standard error in reduced and SI units, how it
/// was found, and the text and JSON `measure` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub quantity: Quantity,
    /// The first species' D (diffusion) or eta, reduced.
    pub value: f64,
    pub stderr: f64,
    /// The same in SI ([`Quantity::si_units`]).
    pub value_si: f64,
    pub stderr_si: f64,
    pub method: String,
    /// Diffusion: every species present.
    pub species: Vec<SpeciesResult>,
    /// Diffusion: the first species' Yeh-Hummer corrected D.
    pub corrected: Option<f64>,
    /// Diffusion: why there is no Yeh-Hummer correction.
    pub correction_note: Option<String>,
    /// Viscosity: the full result (running integral, values at 0.6 and 1.6 t_cut).
    pub viscosity: Option<Viscosity>,
    pub curves: Curves,
    lines: Vec<String>,
    json: Value,
}

impl Report {
    /// The text `measure` prints, one line each.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The JSON object `measure --json` prints.
    pub fn to_json(&self) -> Value {
        self.json.clone()
    }
}

/// The result of `inputs`, or why there is none yet (the text says what to change).
pub fn report(inputs: &Inputs) -> Result<Report, String> {
    let (req, r) = (inputs.request, inputs.run);
    let mut out = json!({
        "quantity": req.quantity.name(),
        "units": "lj",
        "backend": r.backend,
        "atoms": inputs.atoms,
        "steps": req.steps,
        "equilibrate": r.equilibrate,
        "temperature": inputs.temperature,
        "density": inputs.density,
        "thermostat": r.thermostat,
    });
    let mut report = match req.quantity {
        Quantity::Diffusion => diffusion_report(inputs, &mut out)?,
        Quantity::Viscosity => viscosity_report(inputs, &mut out)?,
    };
    report.lines.push(format!(
        "  {} atoms, rho* = {:.4}, mean T* = {:.4}, {} production steps on the {} backend",
        inputs.atoms, inputs.density, inputs.temperature, req.steps, r.backend
    ));
    report.json = out;
    Ok(report)
}

/// The curves so far, whatever their length: what a live plot shows before (and while) a
/// result exists.
pub fn curves(inputs: &Inputs) -> Curves {
    let (dt, s) = (inputs.params.dt, inputs.samples);
    match inputs.request.quantity {
        Quantity::Diffusion => Curves::Diffusion(
            present(inputs)
                .map(|(k, count, name)| {
                    let curve = diffusion::average(&s.msd, k, count, dt, |_| true);
                    let fit = diffusion::linear_regime(&curve)
                        .ok()
                        .and_then(|r| line(&curve, curve.lag[*r.start()], curve.lag[*r.end()]));
                    MsdPlot { species: name, curve, fit }
                })
                .collect(),
        ),
        Quantity::Viscosity => {
            let t_cut = inputs.request.t_cut;
            let interval = inputs.stress_every as f64 * dt;
            let running =
                viscosity::running(&s.stress, interval, inputs.sim_box.volume(), inputs.temperature, 1.6 * t_cut);
            Curves::Viscosity { running, t_cut }
        }
    }
}

/// The species with atoms: (index, atoms, name).
fn present<'a>(inputs: &'a Inputs) -> impl Iterator<Item = (usize, usize, String)> + 'a {
    inputs
        .samples
        .species_counts
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(k, &c)| (k, c, inputs.params.species.get(k).map_or("?".to_string(), |s| s.name.clone())))
}

fn line(c: &Curve, from: f64, to: f64) -> Option<Fit> {
    diffusion::fit_line(c, from, to).map(|(intercept, slope)| Fit { from, to, intercept, slope })
}

/// The shear viscosity the Yeh-Hummer correction uses: `given`, else the Lautenschlaeger-Hasse
/// correlation for one LJ species cut and shifted at 2.5 sigma (the potential it was fitted
/// to) inside its domain; Err says why there is none.
pub fn correction_viscosity(
    given: Option<f64>,
    params: &SimParams,
    density: f64,
    t: f64,
    names: &Names,
) -> Result<(f64, String), String> {
    if let Some(v) = given {
        return Ok((v, names.viscosity_from.into()));
    }
    let s = params.species.first().ok_or("no species")?;
    let ljts = params.species.len() == 1 && params.shift && (params.pair_cutoff(0, 0) - 2.5 * s.sigma).abs() < 1e-9;
    if !ljts {
        return Err(format!(
            "no viscosity for this system (the LJTS correlation is for one species cut and shifted at 2.5 sigma): {}",
            names.give_viscosity
        ));
    }
    // In the species' own reduced units.
    let (rho, temp) = (density * s.sigma.powi(3), t / s.epsilon);
    let eta = crate::flow::wake::lj_viscosity(rho, temp).ok_or_else(|| {
        format!(
            "rho* {rho:.3}, T* {temp:.3} is outside the LJTS viscosity correlation's domain: {}",
            names.give_viscosity
        )
    })?;
    Ok((eta * (s.mass * s.epsilon).sqrt() / (s.sigma * s.sigma), "Lautenschlaeger-Hasse LJTS correlation".into()))
}

fn viscosity_report(inputs: &Inputs, out: &mut Value) -> Result<Report, String> {
    let every = inputs.stress_every;
    let (dt, t_cut) = (inputs.params.dt, inputs.request.t_cut);
    let v =
        viscosity::green_kubo(&inputs.samples.stress, every, dt, inputs.sim_box.volume(), inputs.temperature, t_cut)
            .map_err(|e| format!("viscosity: {e}"))?;
    let method = format!(
        "Green-Kubo: V/(k_B T) integral of <P_ab(0) P_ab(t)> (xy, xz, yz averaged; multiple-tau correlator, \
         samples every {every} steps) to t_cut = {} tau; error from {} blocks",
        v.t_cut, v.blocks
    );
    let (value_si, stderr_si) =
        (units::reduced_viscosity_to_mpa_s(v.value), units::reduced_viscosity_to_mpa_s(v.stderr));
    let obj = out.as_object_mut().ok_or("json")?;
    obj.insert("value".into(), json!(v.value));
    obj.insert("stderr".into(), json!(v.stderr));
    obj.insert("method".into(), json!(method));
    obj.insert("t_cut".into(), json!(v.t_cut));
    obj.insert("value_at_0.6_t_cut".into(), json!(v.at_shorter));
    obj.insert("value_at_1.6_t_cut".into(), json!(v.at_longer));
    obj.insert("value_si".into(), json!(value_si));
    obj.insert("stderr_si".into(), json!(stderr_si));
    obj.insert("si_units".into(), json!("mPa s"));
    let fmt = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.4}"));
    let lines = vec![
        format!(
            "shear viscosity eta* = {:.4} +- {:.4} ({value_si:.4} +- {stderr_si:.4} mPa s for argon)",
            v.value, v.stderr
        ),
        format!(
            "  running integral at {:.1} / {:.1} / {:.1} tau: {} / {:.4} / {}",
            0.6 * v.t_cut,
            v.t_cut,
            1.6 * v.t_cut,
            fmt(v.at_shorter),
            v.value,
            fmt(v.at_longer)
        ),
        format!("  method: {method}"),
    ];
    Ok(Report {
        quantity: Quantity::Viscosity,
        value: v.value,
        stderr: v.stderr,
        value_si,
        stderr_si,
        method,
        species: Vec::new(),
        corrected: None,
        correction_note: None,
        curves: Curves::Viscosity { running: v.running.clone(), t_cut: v.t_cut },
        viscosity: Some(v),
        lines,
        json: Value::Null,
    })
}

/// Per species Einstein D with the VACF check, the Yeh-Hummer correction where it applies.
fn diffusion_report(inputs: &Inputs, out: &mut Value) -> Result<Report, String> {
    let (dt, b, temperature) = (inputs.params.dt, &inputs.sim_box, inputs.temperature);
    let correction = match diffusion::yeh_hummer_inapplicable(b) {
        Some(why) => Err(why),
        None => {
            correction_viscosity(inputs.request.viscosity, inputs.params, inputs.density, temperature, inputs.names)
                .map(|(eta, from)| (diffusion::yeh_hummer_correction(temperature, eta, b.length()[0]), eta, from))
        }
    };
    let (mut lines, mut species, mut rows, mut plots) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (k, count, name) in present(inputs) {
        let msd: &[OriginRecord] = &inputs.samples.msd;
        let (d, curve) = diffusion::einstein(msd, k, count, dt).map_err(|e| format!("diffusion of {name}: {e}"))?;
        let (gk, _) =
            diffusion::green_kubo(&inputs.samples.vacf, k, count, dt).map_err(|e| format!("VACF of {name}: {e}"))?;
        plots.push(MsdPlot { species: name.clone(), fit: line(&curve, d.from_lag, d.to_lag), curve });
        let mut s = json!({
            "species": name,
            "atoms": count,
            "value": d.value,
            "stderr": d.stderr,
            "fit_from_tau": d.from_lag,
            "fit_to_tau": d.to_lag,
            "blocks": d.blocks,
            "value_si": units::reduced_diffusion_to_m2_per_s(d.value),
            "stderr_si": units::reduced_diffusion_to_m2_per_s(d.stderr),
            "green_kubo": gk.value,
            "green_kubo_stderr": gk.stderr,
            "green_kubo_to_tau": gk.to_lag,
        });
        lines.push(format!(
            "self-diffusion of {name}: D* = {:.5} +- {:.5} ({:.4e} +- {:.2e} m^2/s for argon units)",
            d.value,
            d.stderr,
            units::reduced_diffusion_to_m2_per_s(d.value),
            units::reduced_diffusion_to_m2_per_s(d.stderr)
        ));
        lines.push(format!(
            "  method: Einstein, weighted line through the MSD over {:.2}..{:.2} tau (log-log slope within {} of 1), \
             error from {} blocks of origins",
            d.from_lag,
            d.to_lag,
            diffusion::SLOPE_TOLERANCE,
            d.blocks
        ));
        lines.push(format!(
            "  check: Green-Kubo (1/3) integral of the VACF to {:.2} tau: D* = {:.5} +- {:.5}",
            gk.to_lag, gk.value, gk.stderr
        ));
        let mut corrected = None;
        match &correction {
            Ok((c, eta, from)) => {
                corrected = Some(d.value + c);
                s["value_corrected"] = json!(d.value + c);
                s["correction"] = json!(c);
                s["correction_viscosity"] = json!(eta);
                lines.push(format!(
                    "  Yeh-Hummer finite-size correction (eta* = {eta:.4} from {from}, L = {:.3}): D*_inf = {:.5} \
                     (+{c:.5})",
                    b.length()[0],
                    d.value + c
                ));
                s["correction_viscosity_from"] = json!(from);
            }
            Err(why) => lines.push(format!("  no Yeh-Hummer correction: {why}")),
        }
        species.push(s);
        rows.push(SpeciesResult { species: name, atoms: count, einstein: d, green_kubo: gk, corrected });
    }
    let first = species.first().cloned().ok_or("no atoms were sampled")?;
    let obj = out.as_object_mut().ok_or("json")?;
    for key in ["value", "stderr", "value_si", "stderr_si", "value_corrected", "species"] {
        if let Some(v) = first.get(key) {
            obj.insert(key.into(), v.clone());
        }
    }
    let method = format!(
        "Einstein: D = slope/6 of the mean-squared displacement over {:.2}..{:.2} tau (log-log slope within {} of \
         1), standard error from blocks of origins",
        first["fit_from_tau"].as_f64().unwrap_or(0.0),
        first["fit_to_tau"].as_f64().unwrap_or(0.0),
        diffusion::SLOPE_TOLERANCE
    );
    obj.insert("method".into(), json!(method));
    obj.insert("green_kubo".into(), first["green_kubo"].clone());
    obj.insert("green_kubo_stderr".into(), first["green_kubo_stderr"].clone());
    obj.insert("si_units".into(), json!("m^2/s"));
    let correction_note = correction.err();
    if let Some(why) = &correction_note {
        obj.insert("correction_note".into(), json!(why));
    }
    obj.insert("per_species".into(), Value::Array(species));
    let d = &rows[0];
    Ok(Report {
        quantity: Quantity::Diffusion,
        value: d.einstein.value,
        stderr: d.einstein.stderr,
        value_si: units::reduced_diffusion_to_m2_per_s(d.einstein.value),
        stderr_si: units::reduced_diffusion_to_m2_per_s(d.einstein.stderr),
        method,
        corrected: d.corrected,
        correction_note,
        species: rows,
        viscosity: None,
        curves: Curves::Diffusion(plots),
        lines,
        json: Value::Null,
    })
}

#[cfg(test)]
mod tests;
