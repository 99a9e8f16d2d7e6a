//! The egui panels, one file per panel (`..._ui` functions), and the keyboard shortcuts. They
//! read the [`App`] and call its actions; they never reach into a backend or the GPU.
//!
//! Layout: controls on the left (Simulation, Temperature, Forces, Piston and pressure, Tools,
//! Flow, Display, Recording, Equation of state, Measure), plots on the right, the status bar at the bottom,
//! the 3D view in the middle with the replay timeline along its bottom edge (`timeline.rs`),
//! the help overlay on F1. H hides everything but the view.

pub mod display;
pub mod eos;
pub mod fields;
pub mod flow;
pub mod forces;
pub mod gallery;
pub mod help;
pub mod measure;
pub mod piston;
pub mod plots;
pub mod recording;
pub mod simulation;
pub mod status;
pub mod temperature;
pub mod timeline;
pub mod tools;
pub mod tunnel;
pub mod view;

use std::time::{Duration, Instant};

use egui::{Key, KeyboardShortcut, Modifiers};

use crate::app::App;

/// The keys and what they do (shown in the help overlay).
pub const SHORTCUTS: [(&str, &str); 16] = [
    ("Space", "play / pause"),
    (".", "single step"),
    ("P", "screenshot"),
    ("R", "start / stop recording"),
    ("H", "hide / show the UI"),
    ("F", "fit the camera to the tank"),
    ("Ctrl+S", "save the scene"),
    ("Ctrl+O", "open a scene"),
    ("Ctrl+Z", "undo"),
    ("Ctrl+Y", "redo (also Ctrl+Shift+Z)"),
    ("Delete", "remove the selected shape"),
    ("Enter / Esc", "close / cancel a polygon"),
    ("F1", "this help"),
    ("Left / Right", "replay: a frame back / forward"),
    ("K", "replay: play / pause (the simulation runs on)"),
    ("Home / End", "replay: the oldest frame / live"),
];

/// Applies keyboard shortcuts (not while typing in a field) and dropped files.
pub fn shortcuts(app: &mut App, ctx: &egui::Context) {
    let dropped: Vec<std::path::PathBuf> = ctx.input(|i| {
        i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).filter(|p| !p.as_os_str().is_empty()).collect()
    });
    if let Some(path) = dropped.first() {
        app.open_scene(path);
    }
    let command = |k| KeyboardShortcut::new(Modifiers::COMMAND, k);
    if ctx.input_mut(|i| i.consume_shortcut(&command(Key::S))) {
        app.save();
    }
    if ctx.input_mut(|i| i.consume_shortcut(&command(Key::O))) {
        app.open_scene_dialog();
    }
    if ctx.input_mut(|i| {
        i.consume_shortcut(&command(Key::Y))
            || i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z))
    }) {
        app.redo();
    }
    if ctx.input_mut(|i| i.consume_shortcut(&command(Key::Z))) {
        app.undo();
    }
    if ctx.text_edit_focused() {
        return;
    }
    let pressed = |k: Key| ctx.input(|i| i.key_pressed(k) && i.modifiers.is_none());
    if pressed(Key::Space) {
        app.toggle_running();
    }
    if pressed(Key::Period) {
        app.single_step();
    }
    if pressed(Key::P) {
        recording::screenshot(app);
    }
    if pressed(Key::R) {
        recording::toggle_recording(app);
    }
    if pressed(Key::H) {
        app.ui_hidden = !app.ui_hidden;
    }
    if pressed(Key::F) {
        app.fit_camera();
    }
    if pressed(Key::F1) {
        app.help_open = !app.help_open;
    }
    if pressed(Key::Delete) || pressed(Key::Backspace) {
        app.delete_selected();
    }
    if pressed(Key::Enter) {
        let a = app.tools.key_enter(&app.shapes);
        app.tool_actions(a);
    }
    if pressed(Key::Escape) {
        let a = app.tools.key_escape();
        app.tool_actions(a);
    }
    timeline::keys(app, ctx);
}

/// Lays out one frame: panels (unless hidden), the view, the help overlay and messages.
pub fn app_ui(app: &mut App, ui: &mut egui::Ui) {
    for r in std::mem::take(&mut app.capture.results) {
        match r {
            Ok(text) => app.notify(text, false),
            Err(text) => app.notify(text, true),
        }
    }
    if !app.ui_hidden {
        egui::Panel::top("top bar").show(ui, |ui| top_bar_ui(app, ui));
        egui::Panel::bottom("status").show(ui, |ui| status::status_ui(app, ui));
        if app.settings.show_controls {
            egui::Panel::left("controls").default_size(300.0).resizable(true).show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| controls_ui(app, ui));
            });
        }
        if app.settings.show_plots {
            egui::Panel::right("plots").default_size(380.0).resizable(true).show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| plots::plots_ui(app, ui));
            });
        }
    }
    egui::CentralPanel::default().frame(egui::Frame::NONE).show(ui, |ui| view::view_ui(app, ui));
    timeline::timeline_ui(app, ui.ctx());
    if app.help_open {
        help::help_ui(app, ui.ctx());
    }
    gallery::gallery_ui(app, ui.ctx());
    if !app.ui_hidden {
        messages_ui(app, ui.ctx());
    }
}

/// The bar at the top of the window: the examples, opening and saving scenes, help, and the
/// open scene's name.
fn top_bar_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        if ui.button("Examples").on_hover_text("The built-in scenes, with pictures: one click opens one").clicked() {
            app.gallery.open = !app.gallery.open;
        }
        if ui.button("Open…").on_hover_text("Open a scene file (Ctrl+O)").clicked() {
            app.open_scene_dialog();
        }
        if ui.button("Save…").on_hover_text("Save the scene with its parameters and obstacles (Ctrl+S)").clicked() {
            app.save();
        }
        if ui.button("Help").on_hover_text("Keyboard shortcuts (F1)").clicked() {
            app.help_open = !app.help_open;
        }
        ui.separator();
        let name = if app.scene.name.is_empty() { "untitled scene".to_string() } else { app.scene.name.clone() };
        ui.label(egui::RichText::new(name).strong()).on_hover_text(app.scene.description.clone());
    });
}

/// A control panel: its title, whether it starts open, and the function that draws it.
pub type PanelUi = fn(&mut App, &mut egui::Ui);

/// The control panels, top to bottom (the snapshot test draws the same list).
pub const CONTROL_PANELS: [(&str, bool, PanelUi); 10] = [
    ("Simulation", true, simulation::simulation_ui),
    ("Temperature", true, temperature::temperature_ui),
    ("Forces", true, forces::forces_ui),
    ("Piston and pressure", true, piston::piston_ui),
    ("Tools", true, tools::tools_ui),
    ("Flow", false, flow::flow_ui),
    ("Display", false, display::display_ui),
    ("Recording and files", false, recording::recording_ui),
    ("Equation of state", false, eos::eos_ui),
    ("Measure", false, measure::measure_ui),
];

fn controls_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        ui.heading("argon-sandbox");
        if ui.small_button("?").on_hover_text("Keyboard shortcuts (F1)").clicked() {
            app.help_open = !app.help_open;
        }
    });
    for (title, open, panel) in CONTROL_PANELS {
        egui::CollapsingHeader::new(title).default_open(open).show(ui, |ui| panel(app, ui));
    }
}

/// How long a message stays on screen.
const MESSAGE_TIME: Duration = Duration::from_secs(6);

fn messages_ui(app: &App, ctx: &egui::Context) {
    let now = Instant::now();
    let recent: Vec<_> =
        app.messages.iter().filter(|m| now.duration_since(m.at) < MESSAGE_TIME).rev().take(4).collect();
    if recent.is_empty() {
        return;
    }
    egui::Area::new(egui::Id::unique("messages"))
        .anchor(egui::Align2::CENTER_TOP, egui::vec2(0.0, 12.0))
        .interactable(false)
        .show(ctx, |ui| {
            for m in recent {
                let colour = if m.error {
                    egui::Color32::from_rgb(255, 120, 110)
                } else {
                    egui::Color32::from_rgb(200, 230, 255)
                };
                egui::Frame::popup(ui.style()).show(ui, |ui| {
                    ui.colored_label(colour, &m.text);
                });
            }
        });
}
