//! The Display panel: colour map (speed, kinetic energy, height, species, dye, one colour) and its range (for dye: how untagged atoms show), atom radius, camera, what is drawn, and
//! hiding the UI for clean recordings.

use super::fields::number_field;
use crate::app::App;
use crate::render::{CameraMode, ColourBy, Untagged};

fn colour_label(c: ColourBy) -> &'static str {
    match c {
        ColourBy::Speed => "Speed",
        ColourBy::KineticEnergy => "Kinetic energy",
        ColourBy::Height => "Height",
        ColourBy::Species => "Species",
        ColourBy::Single => "One colour",
        ColourBy::Dye => "Dye",
    }
}

pub fn display_ui(app: &mut App, ui: &mut egui::Ui) {
    let v = &mut app.settings.view;
    let mut colour = v.colour_by;
    egui::ComboBox::from_label("Colour by").selected_text(colour_label(colour)).show_ui(ui, |ui| {
        for c in [
            ColourBy::Speed,
            ColourBy::KineticEnergy,
            ColourBy::Height,
            ColourBy::Species,
            ColourBy::Dye,
            ColourBy::Single,
        ] {
            ui.selectable_value(&mut colour, c, colour_label(c));
        }
    });
    if colour != v.colour_by {
        app.set_colour_by(colour);
    }
    let v = &mut app.settings.view;
    if v.colour_by == ColourBy::Dye {
        ui.horizontal(|ui| {
            ui.label("Untagged atoms:");
            for u in [Untagged::Dimmed, Untagged::Hidden, Untagged::Normal] {
                ui.radio_value(&mut v.untagged, u, u.label());
            }
        });
    }
    if !matches!(v.colour_by, ColourBy::Single | ColourBy::Species | ColourBy::Dye) {
        ui.label(format!("Range ({})", v.colour_by.legend_title()));
        if let Some(x) = number_field(ui, "from", v.range[0] as f64, -1e6..=1e6, "reduced", 3) {
            v.range[0] = x as f32;
        }
        if let Some(x) = number_field(ui, "to", v.range[1] as f64, -1e6..=1e6, "reduced", 3) {
            v.range[1] = x as f32;
        }
    }
    ui.add(egui::Slider::new(&mut v.radius, 0.1..=1.5).text("Atom radius (σ)"));
    ui.horizontal(|ui| {
        let mode = app.settings.camera_mode;
        if ui.selectable_label(mode == CameraMode::Front, "Front").clicked() {
            app.set_camera_mode(CameraMode::Front);
        }
        if ui.selectable_label(mode == CameraMode::Orbit, "Orbit").clicked() {
            app.set_camera_mode(CameraMode::Orbit);
        }
        if ui.button("Fit (F)").clicked() {
            app.fit_camera();
        }
    });
    let v = &mut app.settings.view;
    let before = (v.show_walls, v.show_obstacles);
    ui.checkbox(&mut v.show_walls, "Walls");
    ui.checkbox(&mut v.show_obstacles, "Obstacles");
    ui.checkbox(&mut v.show_scale_bar, "Scale bar");
    ui.checkbox(&mut v.show_legend, "Legend");
    if before != (v.show_walls, v.show_obstacles) {
        app.geometry_changed();
    }
    ui.checkbox(&mut app.settings.show_plots, "Plots panel");
    if ui.button("Hide the UI (H)").clicked() {
        app.ui_hidden = true;
    }
}
