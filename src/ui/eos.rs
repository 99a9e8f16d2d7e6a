//! The Equation of state panel: temperature, density range, ensemble, atoms and steps of a
//! sweep; run / cancel with a progress bar; P(rho) and U/N(rho) with error bars against the
//! JZG (1993) equation of state at the same temperature; the points as a table and
//! "Save CSV…". Reduced LJ units (as the `eos` command). The sweep itself runs on its own
//! worker (`app/eos.rs`); this file only reads its state and calls its actions.

use egui_plot::{Legend, Line, MarkerShape, Plot, PlotPoints, Points};

use super::fields::{count_field, number_field};
use crate::app::App;
use crate::app::eos::ENSEMBLES;
use crate::eos::{EosEnsemble, EosPoint};
use crate::physics::jzg;

const HEIGHT: f32 = 150.0;
const MEASURED: egui::Color32 = egui::Color32::from_rgb(255, 170, 60);
const FIT: egui::Color32 = egui::Color32::from_rgb(110, 170, 255);

pub fn eos_ui(app: &mut App, ui: &mut egui::Ui) {
    let running = app.eos.is_running();
    let e = &mut app.eos;
    ui.add_enabled_ui(!running, |ui| {
        if let Some(t) = number_field(ui, "Sweep temperature", e.spec.temperature, 0.1..=10.0, "ε/k_B", 3) {
            e.spec.temperature = t;
        }
        ui.label("Densities (1/σ³)");
        ui.horizontal(|ui| {
            if let Some(v) = number_field(ui, "ρ from", e.rho_from, 0.001..=1.5, "", 3) {
                e.rho_from = v;
            }
            if let Some(v) = number_field(ui, "ρ to", e.rho_to, 0.001..=1.5, "", 3) {
                e.rho_to = v;
            }
        });
        if let Some(v) = number_field(ui, "ρ step", e.rho_step, 0.001..=1.5, "", 3) {
            e.rho_step = v;
        }
        egui::ComboBox::from_label("Sweep ensemble")
            .selected_text(ENSEMBLES.iter().find(|(k, _)| *k == e.spec.ensemble).map_or("", |(_, n)| *n))
            .show_ui(ui, |ui| {
                for (k, name) in ENSEMBLES {
                    ui.selectable_value(&mut e.spec.ensemble, k, name);
                }
            });
        if e.spec.ensemble == EosEnsemble::Hmc
            && let Some(v) = count_field(ui, "HMC trajectory", e.spec.trajectory as u64, 1..=100_000, "steps")
        {
            e.spec.trajectory = v as u32;
        }
        if let Some(n) = count_field(ui, "Sweep atoms", e.spec.atoms as u64, 32..=1_000_000, "") {
            e.spec.atoms = n as usize;
        }
        let (_, fcc) = crate::eos::fcc_cells(e.spec.atoms);
        if fcc != e.spec.atoms {
            ui.small(format!("runs {fcc} atoms (an fcc lattice has 4k³)"));
        }
        if let Some(n) = count_field(ui, "Steps per density", e.spec.production, 100..=10_000_000, "") {
            e.spec.production = n;
            e.spec.equilibration = n / 10;
        }
        ui.small(format!(
            "plus {} equilibration steps; r_c = {} truncated, tail corrections added",
            e.spec.equilibration, e.spec.cutoff
        ));
    });
    ui.horizontal(|ui| {
        if running {
            if ui.button("Cancel").clicked() {
                app.eos.cancel();
            }
        } else if ui.button("Run sweep").clicked() {
            app.eos.start();
        }
        if ui.add_enabled(!app.eos.points.is_empty(), egui::Button::new("Save CSV…")).clicked() {
            app.save_eos_dialog();
        }
    });
    if running {
        ui.add(egui::ProgressBar::new(app.eos.progress as f32).show_percentage());
    }
    if let Some((text, error)) = &app.eos.note {
        if *error {
            ui.colored_label(egui::Color32::from_rgb(255, 120, 110), text);
        } else {
            ui.small(text);
        }
    }
    let e = &app.eos;
    let t = e.points_temperature;
    let (lo, hi) = (e.rho_from.min(e.rho_to).max(0.0), e.rho_from.max(e.rho_to).min(1.5));
    curve_plot(ui, "P(rho)", "P (ε/σ³)", t, lo, hi, &e.points, |p| (p.p, p.p_err), jzg::pressure);
    curve_plot(ui, "U(rho)", "U/N (ε)", t, lo, hi, &e.points, |p| (p.u, p.u_err), jzg::energy_per_atom);
    if !e.points.is_empty() {
        egui::Grid::new("eos points").striped(true).show(ui, |ui| {
            ui.label("ρ");
            ui.label("P");
            ui.label("U/N");
            ui.end_row();
            for p in &e.points {
                ui.label(format!("{:.4}", p.rho));
                ui.label(format!("{:.4} ± {:.4}", p.p, p.p_err));
                ui.label(format!("{:.4} ± {:.4}", p.u, p.u_err));
                ui.end_row();
            }
        });
    }
}

/// Measured points with error bars and the JZG curve at temperature `t` over [lo, hi].
#[allow(clippy::too_many_arguments)]
fn curve_plot(
    ui: &mut egui::Ui,
    id: &str,
    y: &str,
    t: f64,
    lo: f64,
    hi: f64,
    points: &[EosPoint],
    value: impl Fn(&EosPoint) -> (f64, f64),
    fit: fn(f64, f64) -> f64,
) {
    Plot::new(id)
        .height(HEIGHT)
        .x_axis_label("ρ (1/σ³)")
        .y_axis_label(y.to_string())
        .allow_scroll(false)
        .legend(Legend::default())
        .show(ui, |pu| {
            if hi > lo {
                let curve: Vec<[f64; 2]> =
                    (0..=100).map(|i| lo + (hi - lo) * i as f64 / 100.0).map(|r| [r, fit(r, t)]).collect();
                pu.line(Line::new(format!("JZG, T = {t}"), PlotPoints::from(curve)).color(FIT));
            }
            for p in points {
                let (v, err) = value(p);
                pu.line(
                    Line::new("error bars", PlotPoints::from(vec![[p.rho, v - err], [p.rho, v + err]])).color(MEASURED),
                );
            }
            let measured: Vec<[f64; 2]> = points.iter().map(|p| [p.rho, value(p).0]).collect();
            pu.points(Points::new("simulation", measured).shape(MarkerShape::Circle).radius(3.0).color(MEASURED));
        });
}
