//! The Flow panel's start spin, driven through the real UI with egui_kittest on the CPU
//! backend: in a small wind tunnel with surface friction, ticking "Start spin" reaches the
//! simulation with the defaults (1 U for 35 tau) and the panel says the run is spinning; a
//! typed spin and duration reach it; a spin beyond 3 is refused and the simulation keeps its
//! value; unticking removes it.

mod app_common;

use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::physics::tunnel::StartSpin;
use argon_sandbox::sim::BackendChoice;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use app_common::*;

const SCENE: &str = "(
    version: 1,
    box: (size: (37.6, 24.5, 5.6463), boundaries: (Periodic, Periodic, Periodic)),
    integrator: (dt: 0.004, skin: 0.3),
    temperature_k: 359.4,
    thermostat: Nve,
    atoms: [Lattice(kind: Fcc, density: 0.6)],
    obstacles: [Circle(centre: (12.0, 12.25), radius: 3.0)],
    surface_friction: (damp: 0.5, range: 1.5),
    tunnel: (speed: 2.19, zone: 4.0),
    seed: 7,
)";

/// The simulation's start spin (as the simulation thread reports its parameters).
fn running_spin(a: &App) -> Option<Option<StartSpin>> {
    a.status.as_ref().and_then(|s| s.params.tunnel).map(|t| t.start_spin)
}

#[test]
fn the_start_spin_is_set_in_the_flow_panel() {
    let dir = std::env::temp_dir().join(format!("argon-start-spin-ui-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tunnel.ron");
    std::fs::write(&path, SCENE).unwrap();
    let app = App::new(AppOptions {
        scene: Some(path),
        backend: Some(BackendChoice::Cpu),
        settings: Some(Settings::default()),
        paused: true,
        ..Default::default()
    });
    let mut h = Harness::builder().with_size(egui::vec2(420.0, 900.0)).build_ui_state(
        |ui, app: &mut App| {
            app.poll();
            argon_sandbox::ui::tunnel::tunnel_ui(app, ui);
        },
        app,
    );
    until(&mut h, 60.0, "the tunnel scene to load", |a| running_spin(a) == Some(None));
    assert!(h.query_by_label("Spin time").is_none(), "spin fields shown with the spin off");
    h.get_by_label("Start spin").click();
    h.step();
    until(&mut h, 30.0, "the default spin to reach the simulation", |a| {
        running_spin(a) == Some(Some(StartSpin { spin: 1.0, time: 35.0 }))
    });
    h.step();
    assert!(h.query_by_label_contains("spinning until t = 35.0").is_some(), "no spinning note");
    type_into(&mut h, "Spin (surface speed / U)", "2.5");
    type_into(&mut h, "Spin time", "12");
    until(&mut h, 30.0, "the typed spin to reach the simulation", |a| {
        running_spin(a) == Some(Some(StartSpin { spin: 2.5, time: 12.0 }))
    });
    type_into(&mut h, "Spin (surface speed / U)", "4");
    assert!(h.query_by_label_contains("is not allowed").is_some(), "a spin of 4 was not refused");
    for _ in 0..10 {
        h.step();
    }
    assert_eq!(running_spin(h.state()), Some(Some(StartSpin { spin: 2.5, time: 12.0 })));
    h.get_by_label("Start spin").click();
    h.step();
    until(&mut h, 30.0, "the spin to be removed", |a| running_spin(a) == Some(None));
    let _ = std::fs::remove_dir_all(&dir);
}
