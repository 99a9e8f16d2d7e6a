//! The Forces panel: gravity (-y) and drive (+x) as accelerations in reduced units.

use super::fields::number_field;
use crate::app::App;

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
}
