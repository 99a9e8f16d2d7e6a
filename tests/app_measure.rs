//! The Measure panel driven through egui_kittest on the CPU backend, on 256 atoms in a
//! periodic box: a short diffusion measurement typed into the panel finishes by itself with
//! a result and its standard error, copies as `measure`'s text and saves as CSV; a parameter
//! change restarts a running one (its records dropped, the panel says so with the step), a
//! failed backend switch does not; bad
//! settings are refused with a message naming the field and the fix.

mod app_common;

use std::path::PathBuf;

use argon_sandbox::app::measure::Phase;
use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::physics::params::Thermostat;
use argon_sandbox::sim::BackendChoice;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use app_common::*;

/// 256 atoms of liquid argon (fcc at rho* 0.8442, melting at T* 1.44) in a periodic box, CSVR.
fn scene(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("argon-app-measure-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("small.ron");
    let edge = 4.0 * (4.0f64 / 0.8442).cbrt();
    std::fs::write(
        &path,
        format!(
            "(version: 1, name: \"small periodic\", box: (size: ({edge}, {edge}, {edge}), boundaries: (Periodic, \
             Periodic, Periodic)), integrator: (dt: 0.005, skin: 0.3), temperature_k: 172.5, thermostat: \
             Csvr(tau: 1.0), atoms: [Lattice(kind: Fcc, density: 0.8442)], seed: 7)"
        ),
    )
    .unwrap();
    path
}

fn harness(name: &str, paused: bool) -> Harness<'static, App> {
    let app = App::new(AppOptions {
        scene: Some(scene(name)),
        backend: Some(BackendChoice::Cpu),
        settings: Some(Settings { pace: argon_sandbox::app::commands::PaceMode::Unlimited, ..Settings::default() }),
        paused,
        ..Default::default()
    });
    let mut h = Harness::builder().with_size(egui::vec2(420.0, 1400.0)).build_ui_state(
        |ui, app: &mut App| {
            app.poll();
            argon_sandbox::ui::measure::measure_ui(app, ui);
        },
        app,
    );
    until(&mut h, 60.0, "the scene to load", |a| a.status.as_ref().is_some_and(|s| s.n_atoms == 256));
    h
}

fn phase(a: &App) -> Option<Phase> {
    a.measure.run.as_ref().map(|m| m.phase)
}

#[test]
fn a_short_diffusion_measurement_finishes_with_a_result_copies_and_saves() {
    let mut h = harness("finish", false);
    // The lattice melts first (the CLI equilibrates the same way).
    until(&mut h, 60.0, "the lattice to melt", |a| a.status.as_ref().is_some_and(|s| s.step >= 2000));
    type_into(&mut h, "Longest lag", "2");
    type_into(&mut h, "Production", "4000");
    h.get_by_label("Start").click();
    h.step();
    assert_eq!(phase(h.state()), Some(Phase::Starting), "{:?}", h.state().measure.note);
    until(&mut h, 120.0, "the measurement to finish with a result", |a| {
        a.measure.run.as_ref().is_some_and(|m| {
            m.phase == Phase::Finished && !m.analysing() && m.live.as_ref().is_some_and(|l| l.result.is_ok())
        })
    });
    let m = h.state().measure.run.as_ref().unwrap();
    let r = m.live.as_ref().unwrap().result.as_ref().unwrap();
    assert_eq!(m.done(), 4000);
    // A liquid's D* near 0.03 at T* ~ 1; a standard error from 4 or more blocks.
    assert!(r.value > 0.005 && r.value < 0.2, "D* = {}", r.value);
    assert!(r.stderr > 0.0 && r.stderr < r.value, "{} +- {}", r.value, r.stderr);
    assert!(r.species[0].einstein.blocks >= 4 && r.value_si > 0.0);
    h.step();
    h.get_by_label_contains("D*(Ar) = ");
    h.get_by_label_contains("m²/s");
    h.get_by_label_contains("finished: steps ");
    h.get_by_label("Start");
    // "Copy as text" is what `measure` prints.
    let text = h.state().measurement_text().unwrap();
    assert!(text.starts_with("self-diffusion of Ar: D* = "), "{text}");
    assert!(
        text.contains("  check: Green-Kubo (1/3) integral of the VACF")
            && text.contains("4000 production steps on the cpu backend"),
        "{text}"
    );
    // The CSV: the result in the header, one row per lag, the fitted line over its range.
    let path = std::env::temp_dir().join(format!("argon-app-measure-{}.csv", std::process::id()));
    h.state_mut().save_measurement_csv(path.clone());
    h.state_mut().wait_for_tasks();
    let csv = std::fs::read_to_string(&path).unwrap();
    assert!(csv.starts_with("# argon-sandbox measurement: self-diffusion"), "{csv}");
    assert!(csv.contains("\n# self-diffusion of Ar: D* = "), "{csv}");
    let header = csv.lines().find(|l| !l.starts_with('#')).unwrap();
    assert_eq!(header, "species,t_tau,msd_sigma2,msd_stderr_sigma2,origins,fit_sigma2");
    let rows: Vec<&str> = csv.lines().filter(|l| l.starts_with("Ar,")).collect();
    assert!(rows.len() >= 10 && rows.iter().any(|r| !r.ends_with(',')), "{csv}");
    let _ = std::fs::remove_file(&path);
    // Then the shear viscosity, offered afterwards for the Yeh-Hummer correction of D.
    h.get_by_label("Shear viscosity η").click();
    h.step();
    type_into(&mut h, "t_cut", "0.5");
    h.get_by_label("Start").click();
    until(&mut h, 120.0, "the viscosity", |a| {
        a.measure.run.as_ref().is_some_and(|m| {
            m.phase == Phase::Finished && !m.analysing() && m.live.as_ref().is_some_and(|l| l.result.is_ok())
        })
    });
    let m = h.state().measure.run.as_ref().unwrap();
    let r = m.live.as_ref().unwrap().result.as_ref().unwrap();
    assert!(r.value > 0.0 && r.stderr > 0.0 && r.value_si > 0.0, "{} +- {}", r.value, r.stderr);
    let gk = h.state().measure.last_viscosity.expect("the viscosity is kept");
    assert_eq!((gk.value, gk.stderr), (r.value, r.stderr));
    // With the state it was measured at (256 atoms in the harness's periodic box).
    let status = h.state().status.clone().unwrap();
    assert!((gk.density - 256.0 / status.sim_box.volume()).abs() < 1e-12 && gk.temperature > 0.0, "{gk:?}");
    h.step();
    h.get_by_label_contains("mPa s");
    h.get_by_label("Self-diffusion D").click();
    h.step();
    h.get_by_label("Yeh-Hummer with η*").click();
    h.step();
    assert_eq!(h.state().measure.viscosity, h.state().measure.last_viscosity.map(|g| g.value));
}

#[test]
fn a_parameter_change_restarts_a_running_measurement() {
    let mut h = harness("restart", false);
    type_into(&mut h, "Longest lag", "2");
    h.get_by_label("Start").click();
    until(&mut h, 60.0, "records", |a| a.measure.run.as_ref().is_some_and(|m| m.records() > 0));
    // Paused, so no records follow the restart.
    h.state_mut().set_running(false);
    until(&mut h, 30.0, "the pause", |a| a.status.as_ref().is_some_and(|s| !s.running));
    let before = h.state().measure.run.as_ref().unwrap().since.unwrap();
    let app = h.state_mut();
    app.params.thermostat = Thermostat::Csvr { tau: 2.0, relative_to_flow: false };
    assert!(app.apply_params());
    until(&mut h, 30.0, "the restart", |a| a.measure.run.as_ref().is_some_and(|m| m.restarts == 1));
    let a = h.state();
    let m = a.measure.run.as_ref().unwrap();
    let since = m.since.unwrap();
    assert!(since > before && m.phase == Phase::Sampling, "{before} -> {since} {:?}", m.phase);
    assert_eq!((m.records(), m.done()), (0, 0), "the records before the change are dropped");
    let note = a.measure.note.clone().unwrap();
    assert_eq!(note, (format!("parameters changed at step {since}: measurement restarted"), false));
    h.step();
    h.get_by_label(&note.0);
    // A switch to CUDA restarts it where it succeeds; where it fails (no device), the old
    // backend and its measurement run on.
    h.state_mut().switch_backend(BackendChoice::Cuda);
    if argon_sandbox::sim::cuda::device::open().is_ok() {
        until(&mut h, 60.0, "the switch's restart", |a| a.measure.run.as_ref().is_some_and(|m| m.restarts == 2));
        let a = h.state();
        let since = a.measure.run.as_ref().unwrap().since.unwrap();
        let note = a.measure.note.clone().unwrap().0;
        assert_eq!(note, format!("the backend switched at step {since}: measurement restarted"));
        h.state_mut().switch_backend(BackendChoice::Cpu);
        until(&mut h, 60.0, "the switch back", |a| a.measure.run.as_ref().is_some_and(|m| m.restarts == 3));
    } else {
        until(&mut h, 30.0, "the refusal", |a| a.last_error().is_some_and(|e| e.contains("switching backend failed")));
        for _ in 0..10 {
            h.step();
        }
        let m = h.state().measure.run.as_ref().unwrap();
        assert_eq!((m.restarts, m.since.unwrap()), (1, since), "a failed switch restarted the measurement");
    }
    let restarts = h.state().measure.run.as_ref().unwrap().restarts;
    // An unchanged parameter set does not restart it; Stop ends it.
    assert!(h.state_mut().apply_params());
    h.state_mut().set_running(true);
    until(&mut h, 30.0, "new records", |a| a.measure.run.as_ref().is_some_and(|m| m.records() > 0));
    assert_eq!(h.state().measure.run.as_ref().unwrap().restarts, restarts);
    h.get_by_label("Stop").click();
    h.step();
    assert_eq!(phase(h.state()), Some(Phase::Stopped));
    h.get_by_label_contains("stopped after ");
}

#[test]
fn bad_settings_are_refused_with_the_field_and_the_fix() {
    let mut h = harness("bad", true);
    type_into(&mut h, "Longest lag", "2");
    type_into(&mut h, "Production", "100");
    let too_short = "Production: 100 steps are too few for lags to 2 τ and enough time origins for a standard error: \
                     at least 3680 steps are needed";
    h.get_by_label(too_short);
    h.get_by_label("Start").click();
    h.step();
    assert!(h.state().measure.run.is_none());
    assert_eq!(h.state().measure.note, Some((too_short.to_string(), true)));
    // The fewest steps again; a lag under ten time steps.
    h.get_by_label("fewest").click();
    h.step();
    type_into(&mut h, "Longest lag", "0.02");
    h.get_by_label_contains("Longest lag 0.02 τ: it must be at least 10 time steps (0.05 τ)");
    type_into(&mut h, "Longest lag", "2");
    // A thermostat that changes the dynamics names itself and the fix.
    let app = h.state_mut();
    app.params.thermostat = Thermostat::Langevin { damp: 1.0 };
    assert!(app.apply_params());
    h.step();
    h.get_by_label_contains("the langevin thermostat changes the dynamics transport is measured from: choose Bussi");
    h.get_by_label("Start").click();
    h.step();
    assert!(h.state().measure.run.is_none());
    // Viscosity: t_cut must be positive.
    h.get_by_label("Shear viscosity η").click();
    h.step();
    type_into(&mut h, "t_cut", "-1");
    h.get_by_label_contains("t_cut: \"-1\" is not allowed");
}
