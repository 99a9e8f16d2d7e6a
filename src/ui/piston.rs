//! The Piston panel: the top wall as a piston (on/off, external pressure in MPa with the
//! reduced value beside it, mass, friction), its height and push from the telemetry, and the
//! pressure gauge: a bar with the fluid's pressure (telemetry) in MPa and bar and the piston's
//! set pressure marked on it.

use egui::{Color32, Stroke};

use super::fields::number_field;
use crate::app::App;
use crate::physics::piston::PistonParams;
use crate::units;

/// The highest pressure the piston may be set to (reduced; `SimParams::validate`'s limit).
const MAX_PRESSURE: f64 = 50.0;

pub fn piston_ui(app: &mut App, ui: &mut egui::Ui) {
    let sim_box = app.sim_box();
    let mut on = app.params.piston.is_some();
    let walled_y = !sim_box.periodic[1];
    let toggle = ui.add_enabled(walled_y, egui::Checkbox::new(&mut on, "Piston (top wall)"));
    let toggle = if walled_y {
        toggle.on_hover_text("The top wall moves under the set pressure; drag its rim in the view to move it by hand.")
    } else {
        toggle.on_disabled_hover_text("The piston is the top wall: the y boundary must be a wall, not periodic.")
    };
    if toggle.changed() {
        app.set_piston(on);
    }
    if let Some(p) = app.params.piston {
        let max_mpa = units::reduced_pressure_to_mpa(MAX_PRESSURE);
        let mpa = units::reduced_pressure_to_mpa(p.pressure);
        if let Some(v) = number_field(ui, "External pressure", mpa, 0.0..=max_mpa, "MPa", 2) {
            set(app, PistonParams { pressure: v / units::reduced_pressure_to_mpa(1.0), ..p });
        }
        ui.small(format!("= {:.4} ε/σ³ (reduced)", p.pressure));
        if let Some(v) = number_field(ui, "Piston mass", p.mass, 1.0..=1e6, "argon masses", 1) {
            set(app, PistonParams { mass: v, ..p });
        }
        if let Some(v) = number_field(ui, "Friction", p.damping, 0.0..=100.0, "1/τ", 3) {
            set(app, PistonParams { damping: v, ..p });
        }
        if let Some(t) = app.last_telemetry.as_ref().and_then(|t| t.piston) {
            ui.label(format!(
                "Height {:.2} nm ({:.2} σ), push {:.2} MPa",
                units::reduced_length_to_nm(t.height),
                t.height,
                units::reduced_pressure_to_mpa(t.force_per_area)
            ));
        }
    }
    let pressure = app.last_telemetry.as_ref().map(|t| t.pressure);
    pressure_gauge_ui(ui, pressure, app.params.piston.map(|p| p.pressure));
}

fn set(app: &mut App, p: PistonParams) {
    app.params.piston = Some(p);
    app.apply_params();
}

/// The gauge's text: the pressure in MPa and bar (reduced `pressure`).
pub fn gauge_text(pressure: f64) -> String {
    let mpa = units::reduced_pressure_to_mpa(pressure);
    format!("Pressure {mpa:.2} MPa ({:.1} bar)", mpa * 10.0)
}

/// A horizontal bar from 0 to a full scale that fits both values, filled to the pressure (red
/// when negative, i.e. the fluid pulls on the walls), with the set pressure as a tick.
pub fn pressure_gauge_ui(ui: &mut egui::Ui, pressure: Option<f64>, set: Option<f64>) {
    ui.label(pressure.map_or_else(|| "Pressure: no telemetry yet".to_string(), gauge_text));
    let p = pressure.unwrap_or(0.0);
    let full = [p.abs(), set.unwrap_or(0.0), 0.1].into_iter().fold(0.0, f64::max) * 1.25;
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(ui.available_width().min(260.0), 16.0), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 3.0, Color32::from_gray(40));
    let frac = |x: f64| (x.abs() / full).clamp(0.0, 1.0) as f32;
    let mut fill = rect;
    fill.set_width(rect.width() * frac(p));
    let colour = if p < 0.0 { Color32::from_rgb(220, 90, 80) } else { Color32::from_rgb(90, 170, 230) };
    painter.rect_filled(fill, 3.0, colour);
    if let Some(s) = set {
        let x = rect.left() + rect.width() * frac(s);
        painter.line_segment(
            [egui::pos2(x, rect.top() - 2.0), egui::pos2(x, rect.bottom() + 2.0)],
            Stroke::new(2.5, Color32::from_rgb(255, 190, 90)),
        );
    }
    let full_mpa = units::reduced_pressure_to_mpa(full);
    let tip = match set {
        Some(s) => format!(
            "Full scale {full_mpa:.1} MPa; the orange tick is the piston's set pressure, {:.2} MPa",
            units::reduced_pressure_to_mpa(s)
        ),
        None => format!("Full scale {full_mpa:.1} MPa"),
    };
    resp.on_hover_text(tip);
}
