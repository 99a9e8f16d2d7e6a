//! The Forces panel: gravity (-y) and drive (+x) as accelerations in reduced units, and
//! surface friction (no-slip walls and obstacles) with its damping time and range.

use super::fields::number_field;
use crate::app::App;
use crate::physics::friction::{MAX_RANGE, SurfaceFriction};

pub fn forces_ui(app: &mut App, ui: &mut egui::Ui) {
    if let Some(v) = number_field(ui, "Gravity", app.params.gravity, -10.0..=10.0, "σ/τ²", 4) {
        app.params.gravity = v;
        app.apply_params();
    }
    if let Some(v) = number_field(ui, "Drive", app.params.drive, -10.0..=10.0, "σ/τ²", 4) {
        app.params.drive = v;
        app.apply_params();
    }
    ui.small("Gravity pulls along -y; drive pushes along +x (a flow through a periodic channel).");
    surface_friction_ui(app, ui);
}

/// The surface friction switch and, while it is on, its damping time and range.
fn surface_friction_ui(app: &mut App, ui: &mut egui::Ui) {
    let mut on = app.params.surface_friction.is_some();
    if ui
        .checkbox(&mut on, "Surface friction")
        .on_hover_text("no-slip: the fluid sticks to walls and obstacles")
        .changed()
    {
        app.params.surface_friction = on.then(SurfaceFriction::default);
        app.apply_params();
    }
    let Some(f) = app.params.surface_friction else { return };
    if let Some(v) = number_field(ui, "Friction damp", f.damp, app.params.dt..=1000.0, "τ", 3) {
        app.params.surface_friction = Some(SurfaceFriction { damp: v, ..f });
        app.apply_params();
    }
    if let Some(v) = number_field(ui, "Friction range", f.range, 0.1..=MAX_RANGE, "σ", 2) {
        app.params.surface_friction = Some(SurfaceFriction { range: v, ..f });
        app.apply_params();
    }
}
