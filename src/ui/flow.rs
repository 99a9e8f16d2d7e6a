//! The Flow panel: seeing the fluid rather than the atoms. The one-click Flow view, the colour
//! layer (any field, its range and opacity), velocity arrows and streamlines, how the atoms
//! show beneath, and the sampling behind it all (bin size, z slab, every k steps, window in
//! tau), with what the newest window holds; profiles along a probe line with standard errors
//! and the viscosity from a driven channel's flow profile (with the Measure panel's last
//! Green-Kubo value beside it).

use super::fields::{count_field, number_field};
use crate::app::App;
use crate::flow::{FieldKind, FieldSpec};
use crate::render::flow_layer::AtomsShown;

/// Applies new sampling settings if the box and time step allow them, else says why.
fn set_sampling(app: &mut App, spec: FieldSpec) {
    let b = app.sim_box();
    match spec.validate(&b, app.params.dt) {
        Ok(()) => {
            app.settings.flow_sampling = spec;
            app.sync_flow_sampling();
        }
        Err(e) => app.notify(format!("flow fields: {e}"), true),
    }
}

pub fn flow_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let mut on = app.settings.view.flow.on;
        if ui
            .checkbox(&mut on, "Show the flow")
            .on_hover_text(
                "Average velocity, density and temperature over bins of the tank and draw them over the atoms",
            )
            .changed()
        {
            app.settings.view.flow.on = on;
            app.sync_flow_sampling();
        }
        if ui.button("Flow view").on_hover_text("Vorticity in colour with streamlines over dimmed atoms").clicked() {
            app.flow_preset();
        }
    });
    super::tunnel::tunnel_ui(app, ui);
    ui.separator();
    let v = &mut app.settings.view.flow;
    let mut layer = v.layer;
    let name = |k: Option<FieldKind>| k.map_or("none", FieldKind::label);
    egui::ComboBox::from_label("Colour").selected_text(name(layer)).show_ui(ui, |ui| {
        ui.selectable_value(&mut layer, None, "none");
        for k in FieldKind::every() {
            ui.selectable_value(&mut layer, Some(k), k.label());
        }
    });
    if layer != v.layer {
        v.layer = layer;
        v.auto_range = true;
    }
    if let Some(kind) = v.layer {
        ui.checkbox(&mut v.auto_range, "Fit the range to each window");
        if !v.auto_range {
            let unit = kind.unit_lj();
            if let Some(x) = number_field(ui, "from", v.range[0] as f64, -1e6..=1e6, unit, 3) {
                v.range[0] = x as f32;
            }
            if let Some(x) = number_field(ui, "to", v.range[1] as f64, -1e6..=1e6, unit, 3) {
                v.range[1] = x as f32;
            }
        }
        ui.add(egui::Slider::new(&mut v.opacity, 0.0..=1.0).text("Opacity"));
        ui.checkbox(&mut v.smooth, "Smooth between bins");
    }
    ui.horizontal(|ui| {
        ui.checkbox(&mut v.streamlines, "Streamlines");
        ui.add_enabled(v.streamlines, egui::Slider::new(&mut v.streamline_spacing, 1.0..=12.0).text("σ apart"))
            .on_hover_text("spread further in a large tank: at most 100 lines across its longer side");
    });
    ui.horizontal(|ui| {
        ui.checkbox(&mut v.arrows, "Arrows");
        ui.add_enabled(v.arrows, egui::Slider::new(&mut v.arrow_every, 1..=8).text("bins each"));
    });
    ui.horizontal(|ui| {
        ui.label("Atoms");
        for (a, label) in
            [(AtomsShown::Normal, "shown"), (AtomsShown::Dimmed, "dimmed"), (AtomsShown::Hidden, "hidden")]
        {
            ui.radio_value(&mut v.atoms, a, label);
        }
    });

    ui.separator();
    ui.label("Sampling");
    let spec = app.settings.flow_sampling.clone();
    if let Some(bin) = number_field(ui, "Bin", spec.bin, 0.1..=1000.0, "σ", 2) {
        set_sampling(app, FieldSpec { bin, ..spec.clone() });
    }
    if let Some(every) = count_field(ui, "Every", spec.every, 1..=100_000, "steps") {
        set_sampling(app, FieldSpec { every, ..spec.clone() });
    }
    if let Some(window_tau) = number_field(ui, "Window", spec.window_tau, 1e-3..=1e6, "τ", 2) {
        set_sampling(app, FieldSpec { window_tau, ..spec.clone() });
    }
    let b = app.sim_box();
    let mut slab = spec.slab.is_some();
    if ui
        .checkbox(&mut slab, "Only a z slab")
        .on_hover_text("Average over a slice of the depth instead of all of it")
        .changed()
    {
        let s = slab.then(|| [b.lo[2] + 0.25 * (b.hi[2] - b.lo[2]), b.lo[2] + 0.75 * (b.hi[2] - b.lo[2])]);
        set_sampling(app, FieldSpec { slab: s, ..spec.clone() });
    }
    if let Some([z0, z1]) = spec.slab {
        if let Some(z) = number_field(ui, "z from", z0, b.lo[2]..=b.hi[2], "σ", 2) {
            set_sampling(app, FieldSpec { slab: Some([z, z1]), ..spec.clone() });
        }
        if let Some(z) = number_field(ui, "z to", z1, b.lo[2]..=b.hi[2], "σ", 2) {
            set_sampling(app, FieldSpec { slab: Some([z0, z]), ..spec.clone() });
        }
    }
    match (&app.flow.fields, app.flow.sampling()) {
        (Some(f), Some(_)) => {
            ui.label(format!(
                "{} × {} bins; window {:.1}–{:.1} τ, {} samples ({} windows so far)",
                f.grid.n[0], f.grid.n[1], f.time[0], f.time[1], f.samples, app.flow.windows
            ));
        }
        (None, Some(s)) => {
            ui.label(format!("Sampling: the first window ends after {:.1} τ of simulated time.", s.window_tau));
        }
        _ => {}
    }
    if app.flow.sampling().is_some() {
        profiles_ui(app, ui);
    }
}

/// The probe line's profile (with standard-error bars) and the viscosity readout of a driven
/// channel.
pub fn profiles_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.separator();
    ui.label("Profile along a line");
    ui.horizontal(|ui| {
        let label = if app.probe.drawing { "Drag in the tank…" } else { "Draw a probe line" };
        if ui
            .selectable_label(app.probe.drawing, label)
            .on_hover_text("Drag from one end to the other in the view")
            .clicked()
        {
            app.probe.drawing = !app.probe.drawing;
        }
        if app.probe.line.is_some() && ui.button("Clear").clicked() {
            app.probe.line = None;
        }
        if ui.button("Restart averages").on_hover_text("Forget the windows kept so far (after a change, say)").clicked()
        {
            app.probe.recent.clear();
        }
    });
    let mut kind = app.probe.kind;
    egui::ComboBox::from_label("Profile of").selected_text(kind.label()).show_ui(ui, |ui| {
        for k in FieldKind::ALL {
            ui.selectable_value(&mut kind, k, k.label());
        }
    });
    app.probe.kind = kind;
    match app.probe_profile() {
        Some(Ok(points)) => {
            let si = kind.to_si();
            let line: Vec<[f64; 2]> = points
                .iter()
                .filter(|p| p.mean.is_finite())
                .map(|p| [crate::units::reduced_length_to_nm(p.s), p.mean * si])
                .collect();
            let bars: Vec<egui_plot::Line<'_>> = points
                .iter()
                .filter(|p| p.mean.is_finite() && p.sem.is_finite())
                .step_by(4)
                .map(|p| {
                    let x = crate::units::reduced_length_to_nm(p.s);
                    egui_plot::Line::new(
                        "±1 standard error",
                        vec![[x, (p.mean - p.sem) * si], [x, (p.mean + p.sem) * si]],
                    )
                    .color(egui::Color32::from_gray(150))
                })
                .collect();
            egui_plot::Plot::new("probe profile")
                .height(160.0)
                .x_axis_label("distance along the line (nm)")
                .y_axis_label(format!("{} ({})", kind.label(), kind.unit_si()))
                .allow_scroll(false)
                .show(ui, |pu| {
                    for b in bars {
                        pu.line(b);
                    }
                    pu.line(egui_plot::Line::new(kind.label(), line));
                });
            ui.label(format!("{} windows averaged; bars: standard errors between windows", app.probe.recent.len()));
            if ui.button("Save profile CSV…").clicked() {
                app.save_profile_dialog();
            }
        }
        Some(Err(e)) => {
            ui.colored_label(egui::Color32::from_rgb(255, 120, 110), e);
        }
        None if app.probe.line.is_some() => {
            ui.label("Waiting for the first window…");
        }
        None => {}
    }
    if app.driven_channel() {
        ui.separator();
        ui.label("Viscosity from the flow profile");
        match app.viscosity_readout() {
            Ok(r) => {
                let mpa = crate::units::reduced_viscosity_to_mpa_s(1.0);
                ui.label(format!(
                    "η = {:.3} ± {:.3} ε τ/σ³ = {:.4} ± {:.4} mPa s",
                    r.fit.viscosity,
                    r.fit.sem,
                    r.fit.viscosity * mpa,
                    r.fit.sem * mpa
                ))
                .on_hover_text(format!(
                    "A parabola fitted to the x velocity across the central {:.0} % of the channel ({} points, χ²/dof {:.2}) over {} windows; number density {:.3} σ⁻³ there",
                    crate::app::probe::CENTRAL * 100.0,
                    r.fit.points,
                    r.fit.chi2_dof,
                    r.windows,
                    r.density
                ));
                if let Some(gk) = app.measure.last_viscosity {
                    ui.label(gk.beside((r.fit.viscosity, r.fit.sem))).on_hover_text(
                        "The last shear viscosity the Measure panel found (Green-Kubo, on a periodic \
                         system): the two agree where both were measured at the same density and \
                         temperature",
                    );
                }
            }
            Err(e) => {
                ui.label(e);
            }
        }
    }
    if !app.shapes.is_empty() {
        ui.separator();
        ui.label("Wake of obstacle 1");
        match app.wake_readout() {
            Ok(r) => {
                let lines = r.lines();
                for l in &lines {
                    ui.label(l);
                }
                if ui.button("Copy as text").clicked() {
                    ui.ctx().copy_text(lines.join("\n"));
                }
            }
            Err(e) => {
                ui.label(e);
            }
        }
    }
}
