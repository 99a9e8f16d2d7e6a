//! The Tools panel: the drawing and editing tools, their sizes, the add-atoms brush's species,
//! the dye tool's kind of source, trail length and its list of sources (clear one, clear all),
//! what happens to atoms caught by a new shape, and undo / redo.

use super::fields::number_field;
use crate::app::App;
use crate::app::tools::{DyeMode, Tool};
use crate::render::colour::dye_colour;
use crate::sim::CaughtAtoms;

/// The dye tool's settings and the list of sources, each in its colour.
fn dye_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        ui.label("Dye:");
        for m in DyeMode::ALL {
            ui.radio_value(&mut app.tools.dye_mode, m, m.label()).on_hover_text(m.hint());
        }
    });
    if app.tools.dye_mode == DyeMode::Atoms
        && let Some(v) = number_field(ui, "Pathline length", app.settings.dye_trail_tau, 0.1..=1e4, "τ", 1)
    {
        app.settings.dye_trail_tau = v;
    }
    let mut clear = None;
    for e in &app.dye.sources {
        ui.horizontal(|ui| {
            let c = dye_colour(e.number);
            let (r, _) = ui.allocate_exact_size(egui::vec2(14.0, 12.0), egui::Sense::hover());
            ui.painter().rect_filled(r, 2.0, egui::Color32::from(egui::Rgba::from_rgb(c[0], c[1], c[2])));
            ui.label(e.name());
            if ui.small_button("Clear").on_hover_text("remove this source and its dye").clicked() {
                clear = Some(Some(e.number));
            }
        });
    }
    if app.dye.sources.is_empty() {
        ui.small("no dye sources yet");
    } else if ui.button("Clear all dye").clicked() {
        clear = Some(None);
    }
    if let Some(which) = clear {
        app.clear_dye(which);
    }
}

pub fn tools_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        for t in Tool::ALL {
            if ui.selectable_label(app.tools.tool == t, t.label()).on_hover_text(t.hint()).clicked() {
                app.set_tool(t);
            }
        }
    });
    ui.small(app.tools.tool.hint());
    match app.tools.tool {
        Tool::Line => {
            if let Some(v) = number_field(ui, "Wall thickness", app.settings.line_thickness, 0.1..=50.0, "σ", 2) {
                app.settings.line_thickness = v;
            }
        }
        Tool::Brush => {
            if let Some(v) = number_field(ui, "Brush radius", app.settings.brush_radius, 0.1..=50.0, "σ", 2) {
                app.settings.brush_radius = v;
            }
        }
        Tool::AddAtoms | Tool::RemoveAtoms | Tool::Eraser => {
            if let Some(v) = number_field(ui, "Brush size", app.settings.atom_brush_radius, 0.5..=100.0, "σ", 1) {
                app.settings.atom_brush_radius = v;
            }
            if app.tools.tool == Tool::AddAtoms {
                let choices = crate::app::species::brush_choices(&app.params.species);
                egui::ComboBox::from_label("Add species")
                    .selected_text(app.settings.brush_species.clone())
                    .show_ui(ui, |ui| {
                        for name in choices {
                            let text = name.clone();
                            ui.selectable_value(&mut app.settings.brush_species, name, text);
                        }
                    })
                    .response
                    .on_hover_text("the species the brush adds (Ne, Ar, Kr, Xe or a species of the scene)");
            }
        }
        Tool::DragAtom => {
            if let Some(v) = number_field(ui, "Spring", app.settings.drag_stiffness, 0.1..=1000.0, "ε/σ²", 1) {
                app.settings.drag_stiffness = v;
            }
        }
        Tool::Dye => dye_ui(app, ui),
        _ => {}
    }
    ui.horizontal(|ui| {
        ui.label("Atoms inside a new shape:");
        ui.radio_value(&mut app.settings.caught, CaughtAtoms::Remove, "remove");
        ui.radio_value(&mut app.settings.caught, CaughtAtoms::PushOut, "push out");
    });
    ui.horizontal(|ui| {
        if ui.add_enabled(app.history.can_undo(), egui::Button::new("Undo")).on_hover_text("Ctrl+Z").clicked() {
            app.undo();
        }
        if ui.add_enabled(app.history.can_redo(), egui::Button::new("Redo")).on_hover_text("Ctrl+Y").clicked() {
            app.redo();
        }
        if ui.add_enabled(app.tools.selected.is_some(), egui::Button::new("Delete")).on_hover_text("Delete").clicked() {
            app.delete_selected();
        }
        if ui.add_enabled(!app.shapes.is_empty(), egui::Button::new("Clear all")).clicked() {
            let before = app.shapes.clone();
            app.tool_actions(vec![crate::app::tools::ToolAction::Commit { before, after: Vec::new() }]);
        }
    });
    ui.small(format!("{} obstacles", app.shapes.len()));
}
