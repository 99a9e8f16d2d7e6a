//! The wind tunnel in the Flow panel: the inflow zone on or off, the stream speed U and the
//! zone's width, the start spin of the obstacles (on or off, its speed over U and its
//! duration), live, with the Mach number and the warnings the parameters give (beyond
//! Mach 0.3, a thermostat that brakes the stream). The zone itself is drawn in the view.

use super::fields::number_field;
use crate::app::App;
use crate::physics::tunnel::{MAX_SPIN, MeanFluid, StartSpin, Tunnel};

pub fn tunnel_ui(app: &mut App, ui: &mut egui::Ui) {
    let b = app.sim_box();
    let mut on = app.params.tunnel.is_some();
    let periodic_x = b.periodic[0];
    let resp = ui.add_enabled(periodic_x, egui::Checkbox::new(&mut on, "Wind tunnel"));
    let resp = resp.on_hover_text(
        "An inflow zone at the upstream (low x) end gives its atoms fresh velocities around the stream speed U \
         at the set temperature, so the wake is erased before it comes round again",
    );
    if !periodic_x {
        resp.on_disabled_hover_text("needs a periodic x axis (the stream leaves at +x and re-enters at -x)");
    } else if resp.changed() {
        app.params.tunnel = on.then(Tunnel::default);
        app.apply_params();
    }
    let Some(t) = app.params.tunnel else { return };
    if let Some(v) = number_field(ui, "Stream speed U", t.speed, 0.0..=50.0, "σ/τ", 3) {
        app.params.tunnel = Some(Tunnel { speed: v, ..t });
        app.apply_params();
    }
    if let Some(v) = number_field(ui, "Inflow zone", t.zone, 0.1..=0.5 * b.length()[0], "σ", 2) {
        app.params.tunnel = Some(Tunnel { zone: v, ..t });
        app.apply_params();
    }
    start_spin_ui(app, ui, t);
    let n = app.status.as_ref().map_or(0, |s| s.n_atoms);
    let mass = app.params.species.first().map_or(1.0, |s| s.mass);
    let fluid = MeanFluid::new(&b, n, n as f64 * mass);
    if let Some((mach, c, _)) = app.params.tunnel_mach(&fluid) {
        ui.label(format!(
            "U = {:.0} m/s, Mach {mach:.2} (sound {:.0} m/s)",
            crate::units::reduced_speed_to_m_per_s(t.speed),
            crate::units::reduced_speed_to_m_per_s(c)
        ));
    }
    if let Some(w) = app.params.tunnel_warning(&fluid) {
        ui.colored_label(egui::Color32::from_rgb(240, 200, 90), w);
    }
}

/// The start spin: a checkbox (needs surface friction), the surface speed over U and the
/// duration, and whether the run is still inside it.
fn start_spin_ui(app: &mut App, ui: &mut egui::Ui, t: Tunnel) {
    let friction = app.params.surface_friction.is_some();
    let mut on = t.start_spin.is_some();
    let resp = ui.add_enabled(friction, egui::Checkbox::new(&mut on, "Start spin"));
    let resp = resp.on_hover_text(
        "Starts the wake's shedding instead of waiting for thermal noise: for the first moments of the run \
         (from step 0) the obstacles' surfaces move counter-clockwise at spin x U through the surface friction, \
         then the flow is the plain tunnel's",
    );
    if !friction {
        resp.on_disabled_hover_text("acts through the surface friction: switch it on in the Forces panel");
    } else if resp.changed() {
        app.params.tunnel = Some(Tunnel { start_spin: on.then(StartSpin::default), ..t });
        app.apply_params();
    }
    let Some(s) = t.start_spin else { return };
    if let Some(v) = number_field(ui, "Spin (surface speed / U)", s.spin, -MAX_SPIN..=MAX_SPIN, "", 2) {
        app.params.tunnel = Some(Tunnel { start_spin: Some(StartSpin { spin: v, ..s }), ..t });
        app.apply_params();
    }
    if let Some(v) = number_field(ui, "Spin time", s.time, 0.01..=1e6, "τ", 1) {
        app.params.tunnel = Some(Tunnel { start_spin: Some(StartSpin { time: v, ..s }), ..t });
        app.apply_params();
    }
    if friction && let Some(st) = &app.status {
        let end = s.end_step(app.params.dt);
        let text = if st.step < end {
            format!("spinning until t = {:.1} τ (step {end})", end as f64 * app.params.dt)
        } else {
            "spin over: the plain tunnel".to_string()
        };
        ui.label(text);
    }
}
