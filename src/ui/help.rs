//! The help overlay (F1): keyboard shortcuts and the mouse in the view.

use super::SHORTCUTS;
use crate::app::App;

pub fn help_ui(app: &mut App, ctx: &egui::Context) {
    let mut open = app.help_open;
    egui::Window::new("Keyboard and mouse").open(&mut open).collapsible(false).resizable(false).show(ctx, |ui| {
        egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
            for (key, what) in SHORTCUTS {
                ui.strong(key);
                ui.label(what);
                ui.end_row();
            }
            for (key, what) in [
                ("Left drag", "use the current tool"),
                ("Right drag", "rotate (orbit camera) or pan (front camera)"),
                ("Wheel", "zoom"),
            ] {
                ui.strong(key);
                ui.label(what);
                ui.end_row();
            }
        });
    });
    app.help_open = open;
}
