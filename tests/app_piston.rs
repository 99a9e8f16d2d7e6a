//! The piston and the pressure gauge in the app, driven through the real UI with
//! egui_kittest (CPU backend on its own thread, as in the app): switching the piston on
//! reaches the simulation and its telemetry comes back; a typed pressure in MPa reaches it in
//! reduced units and a bad one is refused with a message; the gauge shows the telemetry's
//! pressure in MPa and bar; dragging the piston's rim in the view moves it down.

mod app_common;

use argon_sandbox::app::App;
use argon_sandbox::sim::BackendChoice;
use argon_sandbox::ui::piston::gauge_text;
use argon_sandbox::units;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use app_common::*;

fn harness() -> Harness<'static, App> {
    harness_of(app_on(BackendChoice::Cpu, false, 3000), [1400.0, 1000.0])
}

fn piston_height(app: &App) -> Option<f64> {
    app.last_telemetry.as_ref().and_then(|t| t.piston).map(|p| p.height)
}

#[test]
fn piston_switch_pressure_field_gauge_and_drag() {
    let mut h = harness();
    loaded(&mut h);
    let top = h.state().status.as_ref().unwrap().sim_box.hi[1];

    // On: the simulation runs with a piston and reports it.
    h.get_by_label("Piston (top wall)").click();
    h.step();
    until(&mut h, 20.0, "the piston in the simulation", |a| {
        a.status.as_ref().is_some_and(|s| s.params.piston.is_some()) && piston_height(a).is_some()
    });

    // A typed pressure in MPa reaches the simulation in reduced units.
    type_into(&mut h, "External pressure", "2");
    let want = 2.0 / units::reduced_pressure_to_mpa(1.0);
    until(&mut h, 20.0, "the new piston pressure", |a| {
        a.status.as_ref().and_then(|s| s.params.piston).is_some_and(|p| (p.pressure - want).abs() < 1e-9)
    });
    // A bad value is refused with a message naming the field and the range; nothing is sent.
    type_into(&mut h, "External pressure", "-5");
    h.get_by_label_contains("External pressure: \"-5\" is not allowed; enter a number from 0 to");
    type_into(&mut h, "Piston mass", "0");
    h.get_by_label_contains("Piston mass: \"0\" is not allowed");
    for _ in 0..20 {
        h.step();
    }
    let p = h.state().status.as_ref().unwrap().params.piston.unwrap();
    assert!((p.pressure - want).abs() < 1e-9 && p.mass == 200.0, "{p:?}");

    // Dragging the rim down: the piston follows the cursor below its height.
    let h0 = piston_height(h.state()).unwrap();
    let w = h.state().status.as_ref().unwrap().sim_box.hi[0];
    let from = argon_sandbox::ui::view::tank_to_point(h.state(), [0.5 * w, h0]);
    let target = h0 - 6.0;
    let to = argon_sandbox::ui::view::tank_to_point(h.state(), [0.5 * w, target]);
    h.hover_at(from);
    h.step();
    h.drag_at(from);
    h.step();
    for k in 1..=4 {
        h.hover_at(from + (to - from) * (k as f32 / 4.0));
        h.step();
    }
    assert!(h.state().piston_drag, "the rim was not grabbed");
    until(&mut h, 30.0, "the dragged piston to follow", |a| piston_height(a).is_some_and(|y| y < h0 - 3.0));
    h.drop_at(to);
    h.step();
    h.step();
    assert!(!h.state().piston_drag, "released");
    assert!(top >= h0);

    // The gauge shows the telemetry's pressure: pause, let the last telemetry settle, compare.
    h.state_mut().toggle_running();
    let mut last = None;
    let mut stable = 0;
    until(&mut h, 20.0, "the telemetry to settle after pausing", |a| {
        let t = a.last_telemetry.as_ref().map(|t| t.step);
        stable = if t == last { stable + 1 } else { 0 };
        last = t;
        stable > 20
    });
    h.step();
    let p = h.state().last_telemetry.as_ref().unwrap().pressure;
    h.get_by_label_contains(&gauge_text(p));
    let mpa = units::reduced_pressure_to_mpa(p);
    assert!(gauge_text(p).contains(&format!("{:.1} bar", 10.0 * mpa)));
}

/// On the GPU the CUDA backend runs the piston itself: switching it on keeps the run there.
#[test]
fn switching_the_piston_on_under_cuda_runs_it_on_the_gpu() {
    if let Err(why) = argon_sandbox::sim::cuda::device::open() {
        eprintln!("skipped: no CUDA device ({why})");
        return;
    }
    let mut h = harness_of(app_on(BackendChoice::Cuda, false, 3000), [1400.0, 1000.0]);
    loaded(&mut h);
    assert_eq!(h.state().status.as_ref().unwrap().info.kind, "cuda");
    let n = h.state().status.as_ref().unwrap().n_atoms;
    let top = h.state().status.as_ref().unwrap().sim_box.hi[1];
    h.get_by_label("Piston (top wall)").click();
    h.step();
    until(&mut h, 30.0, "the piston running on the GPU and moving", |a| {
        a.status.as_ref().is_some_and(|s| s.info.kind == "cuda" && s.params.piston.is_some())
            && piston_height(a).is_some_and(|y| y < top - 1e-3)
    });
    assert_eq!(h.state().status.as_ref().unwrap().n_atoms, n);
}
