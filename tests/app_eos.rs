//! The Equation of state panel driven through egui_kittest: a tiny sweep typed into the
//! panel runs on its own worker and fills the plot and table while the main simulation
//! stays untouched; a long sweep can be cancelled; bad values typed are refused with a
//! message naming the field; the points save as CSV (`rho,P,P_err,U,U_err`).

mod app_common;

use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::sim::BackendChoice;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use app_common::*;

fn harness() -> Harness<'static, App> {
    let app = App::new(AppOptions {
        backend: Some(BackendChoice::Cpu),
        settings: Some(Settings::default()),
        paused: true,
        ..Default::default()
    });
    Harness::builder().with_size(egui::vec2(420.0, 1200.0)).build_ui_state(
        |ui, app: &mut App| {
            app.poll();
            argon_sandbox::ui::eos::eos_ui(app, ui);
        },
        app,
    )
}

#[test]
fn tiny_sweep_fills_the_plot_without_touching_the_simulation_and_saves_csv() {
    let mut h = harness();
    until(&mut h, 60.0, "the main scene to load", |a| a.status.is_some());
    let main_before = h.state().status.clone().unwrap();
    type_into(&mut h, "Sweep atoms", "108");
    type_into(&mut h, "Steps per density", "200");
    type_into(&mut h, "ρ from", "0.3");
    type_into(&mut h, "ρ to", "0.5");
    assert_eq!((h.state().eos.spec.atoms, h.state().eos.spec.production), (108, 200));
    assert_eq!((h.state().eos.rho_from, h.state().eos.rho_to), (0.3, 0.5));
    h.get_by_label("Run sweep").click();
    h.step();
    assert!(h.state().eos.is_running() || !h.state().eos.points.is_empty(), "{:?}", h.state().eos.note);
    until(&mut h, 120.0, "the sweep to finish", |a| !a.eos.is_running());
    let e = &h.state().eos;
    assert_eq!(e.note.as_ref().map(|n| n.0.as_str()), Some("done: 3 densities"));
    assert_eq!(e.points.iter().map(|p| p.rho).collect::<Vec<_>>(), vec![0.3, 0.4, 0.5]);
    assert!(e.points.iter().all(|p| p.n_atoms == 108 && p.p.is_finite() && p.u < 0.0));
    h.step();
    // The table under the plots lists the points.
    h.get_by_label("0.4000");
    // The main simulation (paused) was not touched: same atoms, same step.
    h.state_mut().poll();
    let main_after = h.state().status.clone().unwrap();
    assert_eq!((main_after.n_atoms, main_after.step), (main_before.n_atoms, main_before.step));
    // Save CSV writes the points atomically.
    let path = std::env::temp_dir().join(format!("argon-app-eos-{}.csv", std::process::id()));
    h.state_mut().save_eos_csv(path.clone());
    h.state_mut().wait_for_tasks();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "rho,P,P_err,U,U_err");
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[2].starts_with("0.4,"), "{text}");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_long_sweep_can_be_cancelled() {
    let mut h = harness();
    until(&mut h, 60.0, "the main scene to load", |a| a.status.is_some());
    type_into(&mut h, "Sweep atoms", "108");
    type_into(&mut h, "Steps per density", "10000000");
    type_into(&mut h, "ρ to", "0.5");
    h.get_by_label("Run sweep").click();
    until(&mut h, 60.0, "progress", |a| a.eos.progress > 0.0);
    assert!(h.state().eos.is_running());
    h.get_by_label("Cancel").click();
    until(&mut h, 30.0, "the sweep to stop", |a| !a.eos.is_running());
    let note = h.state().eos.note.clone().unwrap();
    assert!(note.0.starts_with("cancelled") && !note.1, "{note:?}");
    assert!(h.state().eos.points.is_empty());
    // It can run again afterwards.
    h.step();
    h.get_by_label("Run sweep");
}

#[test]
fn bad_values_are_refused_with_a_message() {
    let mut h = harness();
    until(&mut h, 60.0, "the main scene to load", |a| a.status.is_some());
    let t0 = h.state().eos.spec.temperature;
    type_into(&mut h, "Sweep temperature", "-3");
    h.get_by_label_contains("Sweep temperature: \"-3\" is not allowed; enter a number from 0.1 to 10");
    assert_eq!(h.state().eos.spec.temperature, t0);
    type_into(&mut h, "Sweep atoms", "abc");
    h.get_by_label_contains("Sweep atoms: \"abc\" is not allowed");
    // Values fine alone but not together are refused when the sweep is asked for.
    type_into(&mut h, "ρ from", "0.8");
    type_into(&mut h, "ρ to", "0.3");
    h.get_by_label("Run sweep").click();
    h.step();
    assert!(!h.state().eos.is_running());
    h.get_by_label_contains("Densities: the first density 0.8 is above the last 0.3");
    type_into(&mut h, "ρ from", "0.3");
    type_into(&mut h, "ρ to", "1.2");
    type_into(&mut h, "Sweep atoms", "108");
    h.get_by_label("Run sweep").click();
    h.step();
    assert!(!h.state().eos.is_running());
    h.get_by_label_contains("less than twice the cutoff");
}
