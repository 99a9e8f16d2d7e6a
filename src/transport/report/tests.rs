//! Unit tests of `report.rs`: the JSON keys and text lines `measure` prints, live curves
//! before a result exists, and the Yeh-Hummer viscosity's sources.

use super::*;
use crate::physics::params::Species;
use crate::transport::{OriginRecord, StressRecord};

const DT: f64 = 0.005;

/// MSD records of one species of `atoms` atoms: ballistic below 1 tau, then 6 D t (D = 0.07),
/// origins every 200 steps with lags to 2000 steps every 20; and VACF records of
/// 3 T exp(-t / 0.2) every 2 steps to 200 steps.
fn samples(atoms: usize, origins: u64) -> TransportSamples {
    let d = 0.07;
    let msd = |t: f64| if t < 1.0 { 6.0 * d * t * t } else { 6.0 * d * (2.0 * t - 1.0) };
    let vacf = |t: f64| 3.0 * (-t / 0.2).exp();
    let mut s = TransportSamples { species_counts: vec![atoms], ..Default::default() };
    for o in 0..origins {
        let origin_step = 200 + o * 200;
        for l in 0..=100 {
            let step = origin_step + 20 * l;
            s.msd.push(OriginRecord { step, origin_step, sums: vec![msd((20 * l) as f64 * DT) * atoms as f64] });
        }
        for l in 0..=100 {
            let step = origin_step + 2 * l;
            s.vacf.push(OriginRecord { step, origin_step, sums: vec![vacf((2 * l) as f64 * DT) * atoms as f64] });
        }
    }
    s
}

fn request(quantity: Quantity) -> Request {
    Request { quantity, steps: 100_000, lag: 10.0, t_cut: 0.5, hold: None, viscosity: None }
}

fn inputs<'a>(req: &'a Request, params: &'a SimParams, samples: &'a TransportSamples) -> Inputs<'a> {
    Inputs {
        request: req,
        params,
        samples,
        stress_every: 2,
        temperature: 1.0,
        atoms: 100,
        density: 0.8,
        sim_box: SimBox::new([5.0f64.cbrt() * 5.0; 3], [true; 3]),
        run: Run { backend: "cpu", equilibrate: 4000, thermostat: "nve" },
        names: &CLI_NAMES,
    }
}

#[test]
fn diffusion_json_has_the_keys_and_the_lines_say_the_method() {
    let (req, params, s) = (request(Quantity::Diffusion), SimParams::default(), samples(100, 400));
    let r = report(&inputs(&req, &params, &s)).unwrap();
    assert!((r.value - 0.14).abs() < 1e-9, "{}", r.value);
    let j = r.to_json();
    for key in [
        "quantity",
        "units",
        "backend",
        "atoms",
        "steps",
        "equilibrate",
        "temperature",
        "density",
        "thermostat",
        "value",
        "stderr",
        "value_si",
        "stderr_si",
        "species",
        "method",
        "green_kubo",
        "green_kubo_stderr",
        "si_units",
        "value_corrected",
        "per_species",
    ] {
        assert!(j.get(key).is_some(), "missing {key}: {j}");
    }
    assert_eq!(
        (j["quantity"].as_str(), j["units"].as_str(), j["si_units"].as_str()),
        (Some("diffusion"), Some("lj"), Some("m^2/s"))
    );
    assert_eq!(j["per_species"][0]["species"], "Ar");
    assert_eq!(j["value_si"].as_f64(), Some(units::reduced_diffusion_to_m2_per_s(r.value)));
    // D = T tau_v = 0.2 from the VACF.
    assert!((j["green_kubo"].as_f64().unwrap() - 0.2).abs() < 2e-3, "{j}");
    let lines = r.lines();
    assert!(lines[0].starts_with("self-diffusion of Ar: D* = 0.14000 +- "), "{lines:?}");
    assert!(lines[1].starts_with("  method: Einstein, weighted line through the MSD over "), "{lines:?}");
    assert!(lines[2].starts_with("  check: Green-Kubo (1/3) integral of the VACF to 1.00 tau"), "{lines:?}");
    assert!(lines[3].starts_with("  Yeh-Hummer finite-size correction (eta* = "), "{lines:?}");
    assert_eq!(lines[4], "  100 atoms, rho* = 0.8000, mean T* = 1.0000, 100000 production steps on the cpu backend");
    // The plot's line is the fit's: slope 6 D over the fit range.
    let Curves::Diffusion(plots) = &r.curves else { panic!("{:?}", r.curves) };
    let fit = plots[0].fit.unwrap();
    assert!((fit.slope - 0.84).abs() < 1e-9 && (fit.intercept + 0.42).abs() < 1e-9, "{fit:?}");
    assert_eq!((fit.from, fit.to), (r.species[0].einstein.from_lag, r.species[0].einstein.to_lag));
}

#[test]
fn yeh_hummer_viscosity_comes_from_the_request_or_the_correlation_or_says_why_not() {
    let (mut req, s) = (request(Quantity::Diffusion), samples(100, 400));
    req.viscosity = Some(2.0);
    let params = SimParams::default();
    let j = report(&inputs(&req, &params, &s)).unwrap().to_json();
    assert_eq!(j["per_species"][0]["correction_viscosity_from"], "--viscosity");
    assert_eq!(j["per_species"][0]["correction_viscosity"].as_f64(), Some(2.0));
    // Two species: no correlation applies, and the note says how to give a viscosity.
    req.viscosity = None;
    let mut two = SimParams::default();
    two.species.push(Species { name: "Kr".into(), sigma: 1.1, epsilon: 1.4, mass: 2.1 });
    let r = report(&inputs(&req, &two, &s)).unwrap();
    let note = r.correction_note.clone().unwrap();
    assert!(note.ends_with("give --viscosity ETA"), "{note}");
    assert!(r.corrected.is_none() && r.to_json().get("value_corrected").is_none());
    assert!(r.lines()[3].starts_with("  no Yeh-Hummer correction: no viscosity for this system"), "{:?}", r.lines());
    let app = Names { viscosity_from: "the η entered", give_viscosity: "enter η" };
    let e = correction_viscosity(None, &two, 0.8, 1.0, &app).unwrap_err();
    assert!(e.ends_with(": enter η"), "{e}");
}

#[test]
fn short_runs_have_curves_but_no_result_yet() {
    let (req, params, s) = (request(Quantity::Diffusion), SimParams::default(), samples(100, 20));
    let i = inputs(&req, &params, &s);
    let e = report(&i).unwrap_err();
    assert!(e.starts_with("diffusion of Ar: ") && e.contains("too few for a standard error"), "{e}");
    let c = curves(&i);
    assert!(!c.is_empty());
    // The line through the linear regime already gives D, without an error.
    assert!((c.provisional().unwrap() - 0.14).abs() < 1e-9, "{c:?}");
}

#[test]
fn viscosity_json_and_lines() {
    // A constant-free signal: xy alternating, the others zero; enough for 5 blocks of 1.5 tau.
    let stress: Vec<StressRecord> = (0..2000)
        .map(|i| StressRecord {
            step: 2 * i as u64 + 2,
            p: [0.0, 0.0, 0.0, if i % 3 == 0 { 0.3 } else { -0.15 }, 0.0, 0.0],
        })
        .collect();
    let s = TransportSamples { stress, species_counts: vec![100], ..Default::default() };
    let (req, params) = (request(Quantity::Viscosity), SimParams::default());
    let i = inputs(&req, &params, &s);
    let r = report(&i).unwrap();
    let j = r.to_json();
    for key in
        ["value", "stderr", "method", "t_cut", "value_at_0.6_t_cut", "value_at_1.6_t_cut", "value_si", "stderr_si"]
    {
        assert!(j.get(key).is_some(), "missing {key}: {j}");
    }
    assert_eq!((j["quantity"].as_str(), j["si_units"].as_str()), (Some("viscosity"), Some("mPa s")));
    assert!(r.lines()[0].starts_with("shear viscosity eta* = "), "{:?}", r.lines());
    assert!(r.lines()[1].starts_with("  running integral at 0.3 / 0.5 / 0.8 tau: "), "{:?}", r.lines());
    assert_eq!(r.curves.provisional(), Some(r.value));
    let Curves::Viscosity { running, t_cut } = curves(&i) else { panic!() };
    assert_eq!((running.at(t_cut), t_cut), (Some(r.value), 0.5));
}
