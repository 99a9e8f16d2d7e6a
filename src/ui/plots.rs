//! The Plots panel (egui_plot, units on every axis): temperature (in a flow, the thermal
//! temperature relative to the local flow and the all-motion one, with a legend), energies
//! per atom and pressure against time; g(r) averaged over a window (with reset); the speed
//! histogram with the Maxwell-Boltzmann curve at the measured temperature; the density
//! profile along y.
//! The time series save as a thermo CSV, g(r) as a table. The Forces plot: drag and lift on
//! each obstacle (walls optional) with their time averages, saved as a CSV. g(r) over the
//! whole box or a region drawn with the g(r) region tool (outlined in the view).

use egui_plot::{Legend, Line, Plot};

use super::fields::count_field;
use super::temperature::{ALL_MOTION_LABEL, THERMAL_LABEL};
use crate::app::App;
use crate::app::force_plots::{BLOCKS, force_curves, force_means};

const HEIGHT: f32 = 150.0;

fn plot<'a>(id: &str, x: &str, y: &str) -> Plot<'a> {
    Plot::new(id).height(HEIGHT).x_axis_label(x.to_string()).y_axis_label(y.to_string()).allow_scroll(false)
}

pub fn plots_ui(app: &mut App, ui: &mut egui::Ui) {
    let p = &app.plots;
    egui::CollapsingHeader::new("Temperature").default_open(true).show(ui, |ui| {
        if p.thermal_k.points.is_empty() {
            plot("T(t)", "time (ps)", "T (K)").show(ui, |pu| {
                pu.line(Line::new("T", p.temperature_k.points.clone()));
            });
        } else {
            // A flow: the thermal temperature is the temperature; the all-motion one, which
            // counts the stream as heat, beside it.
            plot("T(t)", "time (ps)", "T (K)").legend(Legend::default()).show(ui, |pu| {
                pu.line(Line::new(THERMAL_LABEL, p.thermal_k.points.clone()));
                pu.line(Line::new(ALL_MOTION_LABEL, p.temperature_k.points.clone()));
            });
        }
    });
    egui::CollapsingHeader::new("Energy per atom").default_open(true).show(ui, |ui| {
        plot("E(t)", "time (ps)", "energy (kJ/mol)").legend(Legend::default()).show(ui, |pu| {
            pu.line(Line::new("kinetic", p.kinetic.points.clone()));
            pu.line(Line::new("potential", p.potential.points.clone()));
            pu.line(Line::new("total", p.total.points.clone()));
        });
    });
    egui::CollapsingHeader::new("Pressure").default_open(true).show(ui, |ui| {
        plot("P(t)", "time (ps)", "P (MPa)").show(ui, |pu| {
            pu.line(Line::new("P", p.pressure_mpa.points.clone()));
        });
    });
    if ui
        .button("Save thermo CSV…")
        .on_hover_text("the temperature, energies and pressure above, in argon units")
        .clicked()
    {
        app.save_thermo_dialog();
    }
    egui::CollapsingHeader::new("Forces on obstacles").default_open(false).show(ui, |ui| forces_ui(app, ui));
    egui::CollapsingHeader::new("Radial distribution g(r)").default_open(true).show(ui, |ui| {
        let rdf = app.plots.rdf();
        plot("g(r)", "r (nm)", "g(r)").show(ui, |pu| {
            pu.line(Line::new("g(r)", rdf));
        });
        ui.horizontal(|ui| {
            if let Some(w) = count_field(ui, "Average over", app.plots.rdf_window as u64, 1..=1000, "frames") {
                app.plots.set_rdf_window(w as usize);
            }
            if ui.button("Reset").clicked() {
                app.plots.reset_rdf();
            }
            if ui.button("Save table…").on_hover_text("r (sigma and Å) and g(r), as averaged here").clicked() {
                app.save_rdf_dialog();
            }
        });
        rdf_region_ui(app, ui);
        ui.small(format!("{} frames averaged", app.plots.rdf_frames()));
    });
    let p = &app.plots;
    egui::CollapsingHeader::new("Speed distribution").default_open(true).show(ui, |ui| {
        plot("speeds", "speed (m/s)", "probability density (s/m)").legend(Legend::default()).show(ui, |pu| {
            pu.line(Line::new("measured", p.speed.clone()));
            pu.line(Line::new("Maxwell-Boltzmann", p.maxwell.clone()));
        });
    });
    egui::CollapsingHeader::new("Density profile").default_open(true).show(ui, |ui| {
        plot("density(y)", "height y (nm)", "density (atoms/nm³)").show(ui, |pu| {
            pu.line(Line::new("density", p.density.clone()));
        });
    });
}

/// Drag (x) and lift (y) on each obstacle against time, the walls' normal forces when asked,
/// and each curve's mean with its standard error over the records shown.
fn forces_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.checkbox(&mut app.plots.show_wall_forces, "walls").on_hover_text("the normal force on each wall face too");
    let walls = app.plots.show_wall_forces;
    let curves = force_curves(&app.plots.records, walls);
    if curves.is_empty() {
        ui.small("no obstacles or walls: nothing for the fluid to push on");
        return;
    }
    plot("F(t)", "time (ps)", "force (ε/σ)").legend(Legend::default()).show(ui, |pu| {
        for c in curves {
            pu.line(Line::new(c.label, c.points));
        }
    });
    for (label, stats) in force_means(&app.plots.records, walls) {
        match stats {
            Some((m, sem)) => ui.small(format!("{label}: {m:.3} ± {sem:.3} ε/σ")),
            None => ui.small(format!("{label}: needs {BLOCKS} records for a mean")),
        };
    }
    ui.small("mean ± standard error over the records shown (block averages); 1 ε/σ = 4.86 pN for argon");
    if ui.button("Save forces CSV…").on_hover_text("time, then fx, fy, fz on every body in ε/σ").clicked() {
        app.save_forces_dialog();
    }
}

/// Whole box or the drawn region for g(r), the tool that draws it, and why a region g(r)
/// could not be computed.
fn rdf_region_ui(app: &mut App, ui: &mut egui::Ui) {
    use crate::app::tools::Tool;
    ui.horizontal(|ui| {
        ui.label("Region:");
        if ui.radio(!app.rdf_use_region, "whole box").on_hover_text("g(r) normalised by the box").clicked() {
            app.set_rdf_use_region(false);
        }
        let drawn = egui::RadioButton::new(app.rdf_use_region, "drawn region");
        if ui
            .add_enabled(app.rdf_region.is_some(), drawn)
            .on_hover_text("g(r) around the atoms inside the region, normalised by the density there")
            .on_disabled_hover_text("draw a region first")
            .clicked()
        {
            app.set_rdf_use_region(true);
        }
        if ui
            .selectable_label(app.tools.tool == Tool::RdfRegion, "Draw…")
            .on_hover_text(Tool::RdfRegion.hint())
            .clicked()
        {
            app.set_tool(Tool::RdfRegion);
        }
    });
    if let (true, Some(r)) = (app.rdf_use_region, app.rdf_region) {
        ui.small(format!("x {:.1}–{:.1} σ, y {:.1}–{:.1} σ, whole depth", r.lo[0], r.hi[0], r.lo[1], r.hi[1]));
    }
    if let (true, Some(why)) = (app.rdf_use_region, &app.plots.rdf_error) {
        ui.colored_label(ui.visuals().warn_fg_color, why);
    }
}
