//! The Measure panel: a transport measurement of the running simulation (as `measure` does
//! from the command line, without disturbing the run). The quantity (self-diffusion or shear
//! viscosity), the longest lag or t_cut, the production steps (the fewest that give a standard
//! error unless typed; too few is said at once), a viscosity for the Yeh-Hummer correction;
//! Start / Stop, a progress bar with the time left; the result with its standard error in
//! reduced and SI units, the Green-Kubo check and the corrected D; live plots (the MSD of each
//! species with the line fitted over its linear regime, or the stress autocorrelation and its
//! running integral with t_cut marked); "Copy as text" and "Export CSV…". The state and the
//! worker are `app/measure.rs`; this file only reads them and calls their actions.

use egui_plot::{Corner, HLine, Legend, Line, LineStyle, Plot, VLine};

use super::fields::{count_field, number_field};
use crate::app::App;
use crate::app::measure::{Live, Phase};
use crate::transport::Quantity;
use crate::transport::report::{Curves, Report};
use crate::units;

const HEIGHT: f32 = 170.0;
const ERROR: egui::Color32 = egui::Color32::from_rgb(255, 120, 110);
const NOTICE: egui::Color32 = egui::Color32::from_rgb(255, 200, 110);
const FIT: egui::Color32 = egui::Color32::from_rgb(255, 170, 60);
/// The MSD of each species, in order (the first species' line is drawn in `FIT`, the others'
/// dashed in their own colour).
const SPECIES: [egui::Color32; 4] = [
    egui::Color32::from_rgb(230, 100, 90),
    egui::Color32::from_rgb(110, 170, 255),
    egui::Color32::from_rgb(140, 210, 120),
    egui::Color32::from_rgb(200, 140, 230),
];

pub fn measure_ui(app: &mut App, ui: &mut egui::Ui) {
    let running = app.measure.is_running();
    ui.add_enabled_ui(!running, |ui| settings_ui(app, ui));
    // What Start would refuse, said before it is pressed.
    let refusal = if running { None } else { app.measure_check().err() };
    if let Some(e) = &refusal {
        ui.colored_label(ERROR, e);
    }
    ui.horizontal(|ui| {
        if running {
            if ui.button("Stop").on_hover_text("Stop sampling and keep the result so far").clicked() {
                app.stop_measurement();
            }
        } else if ui.button("Start").on_hover_text("Sample the running simulation from its current step").clicked() {
            app.start_measurement();
        }
        let text = app.measurement_text();
        if ui
            .add_enabled(text.is_some(), egui::Button::new("Copy as text"))
            .on_hover_text("The result as `argon-sandbox measure` prints it")
            .clicked()
            && let Some(t) = text
        {
            ui.ctx().copy_text(t);
        }
        let has_curves = app.measure.run.as_ref().is_some_and(|m| m.live.is_some());
        if ui
            .add_enabled(has_curves, egui::Button::new("Export CSV…"))
            .on_hover_text("The curves, with the result in the header")
            .clicked()
        {
            app.save_measurement_dialog();
        }
    });
    progress_ui(app, ui);
    if let Some((text, error)) = app.measure.note.as_ref().filter(|(t, _)| refusal.as_ref() != Some(t)) {
        ui.colored_label(if *error { ERROR } else { NOTICE }, text);
    }
    let Some(live) = app.measure.run.as_ref().and_then(|m| m.live.clone()) else { return };
    let running = app.measure.is_running();
    result_ui(&live, running, ui);
    plots_ui(&live, ui);
}

fn settings_ui(app: &mut App, ui: &mut egui::Ui) {
    let m = &mut app.measure;
    let viscosity = m.viscosity;
    ui.horizontal(|ui| {
        ui.radio_value(&mut m.quantity, Quantity::Diffusion, "Self-diffusion D")
            .on_hover_text("Einstein: the slope of the mean-squared displacement, as LAMMPS's compute msd");
        ui.radio_value(&mut m.quantity, Quantity::Viscosity, "Shear viscosity η").on_hover_text(
            "Green-Kubo: the integral of the off-diagonal pressure autocorrelation, as LAMMPS's fix ave/correlate/long",
        );
    });
    match m.quantity {
        Quantity::Diffusion => {
            if let Some(v) = number_field(ui, "Longest lag", m.lag, 0.01..=10_000.0, "τ", 2) {
                m.lag = v;
            }
            let mut given = m.viscosity.is_some();
            ui.horizontal(|ui| {
                if ui
                    .checkbox(&mut given, "Yeh-Hummer with η*")
                    .on_hover_text(
                        "The finite-size correction of D needs the shear viscosity: without one, the \
                         Lautenschlaeger-Hasse correlation for LJ cut and shifted at 2.5 σ where it applies",
                    )
                    .changed()
                {
                    m.viscosity = given.then(|| m.last_viscosity.map_or(2.0, |g| g.value));
                }
                if let Some(eta) = m.last_viscosity.map(|g| g.value)
                    && ui.small_button(format!("use the {eta:.3} measured")).clicked()
                {
                    m.viscosity = Some(eta);
                }
            });
            if let Some(eta) = m.viscosity
                && let Some(v) = number_field(ui, "η*", eta, 1e-6..=1e6, "ε τ/σ³", 4)
            {
                m.viscosity = Some(v);
            }
        }
        Quantity::Viscosity => {
            if let Some(v) = number_field(ui, "t_cut", m.t_cut, 0.01..=10_000.0, "τ", 2) {
                m.t_cut = v;
            }
        }
    }
    if app.measure.viscosity != viscosity {
        // The corrected D of a finished measurement follows.
        app.measure.reanalyse();
    }
    let dt = app.params.dt;
    let req = app.measure.request(dt);
    let fewest = req.min_steps(dt);
    if let Some(v) = count_field(ui, "Production", req.steps, 1..=1_000_000_000_000, "steps") {
        app.measure.steps = Some(v);
    }
    ui.horizontal(|ui| {
        let tau = req.steps as f64 * dt;
        ui.small(format!(
            "{tau:.1} τ = {:.0} ps; at least {fewest} for a standard error",
            units::reduced_time_to_ps(tau)
        ));
        if app.measure.steps.is_some() && ui.small_button("fewest").on_hover_text("Follow the fewest steps").clicked() {
            app.measure.steps = None;
        }
    });
}

/// The progress bar with the steps and the time left.
fn progress_ui(app: &App, ui: &mut egui::Ui) {
    let Some(m) = &app.measure.run else { return };
    let (done, asked) = (m.done(), m.request.steps);
    let text = match m.phase {
        Phase::Starting => "starting…".to_string(),
        Phase::Sampling => match app.measure_time_left() {
            Some(left) => format!("{done} / {asked} steps · about {} left", duration(left.as_secs_f64())),
            None => format!("{done} / {asked} steps · paused"),
        },
        Phase::Finished => format!("{asked} steps · done"),
        Phase::Stopped => format!("{done} / {asked} steps · stopped"),
    };
    ui.add(egui::ProgressBar::new(done as f32 / asked.max(1) as f32).text(text));
    if m.restarts > 0 && m.is_running() {
        ui.small(format!("restarted {}× by edits (the records before a restart are dropped)", m.restarts));
    }
}

/// "1 h 2 min", "3 min 20 s", "12 s".
fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// The result, or (while it samples, or when it ended too early) the value so far and why
/// there is no standard error.
fn result_ui(live: &Live, running: bool, ui: &mut egui::Ui) {
    match &live.result {
        Ok(r) => report_ui(r, ui),
        Err(why) => {
            if let Some(v) = live.curves.provisional() {
                let (symbol, unit) = match live.curves {
                    Curves::Diffusion(_) => ("D*", "σ²/τ"),
                    Curves::Viscosity { .. } => ("η*", "ε τ/σ³"),
                };
                ui.label(format!("{symbol} = {v:.4} {unit} so far (no standard error yet)"));
            }
            ui.small(format!("No result{}: {why}", if running { " yet" } else { "" }));
        }
    }
}

fn report_ui(r: &Report, ui: &mut egui::Ui) {
    let strong = |ui: &mut egui::Ui, text: String| ui.label(egui::RichText::new(text).strong());
    match r.quantity {
        Quantity::Diffusion => {
            for s in &r.species {
                let (d, gk) = (&s.einstein, &s.green_kubo);
                strong(ui, format!("D*({}) = {:.5} ± {:.5} σ²/τ", s.species, d.value, d.stderr));
                ui.label(format!(
                    "= {:.4e} ± {:.2e} m²/s",
                    units::reduced_diffusion_to_m2_per_s(d.value),
                    units::reduced_diffusion_to_m2_per_s(d.stderr)
                ));
                ui.small(format!(
                    "fit over {:.2}–{:.2} τ, {} blocks; Green-Kubo check (VACF to {:.2} τ): {:.5} ± {:.5}",
                    d.from_lag, d.to_lag, d.blocks, gk.to_lag, gk.value, gk.stderr
                ));
                if let Some(c) = s.corrected {
                    ui.label(format!("Yeh-Hummer corrected (infinite box): D* = {c:.5} σ²/τ"));
                }
            }
            if let Some(why) = &r.correction_note {
                ui.small(format!("no Yeh-Hummer correction: {why}"));
            }
        }
        Quantity::Viscosity => {
            strong(ui, format!("η* = {:.4} ± {:.4} ε τ/σ³", r.value, r.stderr));
            ui.label(format!("= {:.4} ± {:.4} mPa s", r.value_si, r.stderr_si));
            if let Some(v) = &r.viscosity {
                let fmt = |x: Option<f64>| x.map_or("–".to_string(), |x| format!("{x:.4}"));
                ui.small(format!(
                    "running integral at 0.6 / 1 / 1.6 t_cut: {} / {:.4} / {}; {} blocks",
                    fmt(v.at_shorter),
                    v.value,
                    fmt(v.at_longer),
                    v.blocks
                ));
            }
        }
    }
    ui.small(&r.method);
}

fn plot<'a>(id: &str, x: &str, y: &str) -> Plot<'a> {
    Plot::new(id).height(HEIGHT).x_axis_label(x.to_string()).y_axis_label(y.to_string()).allow_scroll(false)
}

fn plots_ui(live: &Live, ui: &mut egui::Ui) {
    match &live.curves {
        Curves::Diffusion(plots) => {
            ui.small("Mean-squared displacement per species; the fitted lines over their fit ranges");
            let legend = Legend::default().position(Corner::LeftTop);
            plot("measure msd", "t (τ)", "MSD (σ²)").legend(legend).show(ui, |pu| {
                for (k, p) in plots.iter().enumerate() {
                    let c = &p.curve;
                    let colour = SPECIES[k % SPECIES.len()];
                    let points: Vec<[f64; 2]> = c.lag.iter().zip(&c.mean).map(|(t, m)| [*t, *m]).collect();
                    pu.line(Line::new(format!("MSD {}", p.species), points).color(colour));
                    if let Some(f) = p.fit {
                        let line = vec![[f.from, f.intercept + f.slope * f.from], [f.to, f.intercept + f.slope * f.to]];
                        let fit = Line::new(format!("fit {}", p.species), line).color(FIT).width(2.5);
                        pu.line(if k == 0 { fit } else { fit.color(colour).style(LineStyle::dashed_dense()) });
                    }
                }
            });
        }
        Curves::Viscosity { running, t_cut } => {
            let points = |y: &[f64]| -> Vec<[f64; 2]> { running.lag.iter().zip(y).map(|(t, v)| [*t, *v]).collect() };
            ui.small("Stress autocorrelation C(t) = <P_ab(0) P_ab(t)>, xy, xz, yz averaged");
            plot("measure acf", "t (τ)", "C(t) ((ε/σ³)²)").show(ui, |pu| {
                pu.line(Line::new("autocorrelation", points(&running.acf)));
                pu.hline(HLine::new("zero", 0.0).color(egui::Color32::from_gray(110)));
            });
            ui.small("Running integral η*(t) = (V/T) × integral of C to t; t_cut and η* there in orange");
            plot("measure eta", "t (τ)", "η*(t) (ε τ/σ³)").show(ui, |pu| {
                pu.line(Line::new("running integral", points(&running.eta)));
                pu.vline(VLine::new("t_cut", *t_cut).color(FIT));
                if let Some(v) = running.at(*t_cut) {
                    pu.hline(HLine::new("η* at t_cut", v).color(FIT));
                }
            });
        }
    }
}
