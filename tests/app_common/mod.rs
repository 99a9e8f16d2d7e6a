//! Helpers shared by the egui_kittest tests of the app: a harness around the real `App`,
//! waiting on its state, typing into labelled fields.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::sim::BackendChoice;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

/// The app on `backend` with default settings and `atoms` atoms.
pub fn app_on(backend: BackendChoice, paused: bool, atoms: usize) -> App {
    App::new(AppOptions {
        backend: Some(backend),
        settings: Some(Settings::default()),
        atoms: Some(atoms),
        paused,
        ..Default::default()
    })
}

/// A harness of `size` (points) driving `app.ui`.
pub fn harness_of(app: App, size: [f32; 2]) -> Harness<'static, App> {
    Harness::builder().with_size(egui::vec2(size[0], size[1])).build_ui_state(|ui, app: &mut App| app.ui(ui), app)
}

/// Steps frames until `done` holds or `secs` pass.
pub fn until(h: &mut Harness<'_, App>, secs: f64, what: &str, mut done: impl FnMut(&App) -> bool) {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < end {
        h.step();
        if done(h.state()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let a = h.state();
    panic!("timed out waiting for {what}; last error: {:?}; eos note: {:?}", a.last_error(), a.eos.note);
}

/// Waits until the scene is loaded and drawn once.
pub fn loaded(h: &mut Harness<'_, App>) {
    until(h, 60.0, "the scene to load", |a| a.status.is_some() && a.frame.is_some() && a.view_size[0] > 1);
}

/// Types `text` into the text field labelled `label` (replacing its contents) and commits it.
pub fn type_into(h: &mut Harness<'_, App>, label: &str, text: &str) {
    h.get_by_role_and_label(Role::TextInput, label).click();
    h.step();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_role_and_label(Role::TextInput, label).type_text(text);
    h.step();
    h.key_press(egui::Key::Enter);
    h.step();
    h.step();
}

/// Opens the combo box labelled `combo` and picks `option`.
pub fn choose(h: &mut Harness<'_, App>, combo: &str, option: &str) {
    h.get_by_role_and_label(Role::ComboBox, combo).click();
    h.step();
    h.step();
    h.get_by_label(option).click();
    h.step();
    h.step();
}
