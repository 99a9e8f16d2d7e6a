//! The replay timeline under the view: a bar along the view's bottom edge, shown while the
//! pointer is near it, while a stored frame shows, or when pinned. Scrub (the slider), back to
//! the oldest, a frame back, play / pause, a frame forward, live; speed (1, 1/2, 1/4);
//! "Resume from here"; "Save the last N seconds" (MP4, GIF or PNG frames); the budget and how
//! many seconds it holds. Keys: Left / Right a frame back / forward, K play / pause the replay,
//! Home the oldest frame, End live.

use egui::{Key, Pos2};

use crate::app::App;
use crate::app::replay::{SPEEDS, SaveFormat};

/// The bar's height in points, and the band above the view's bottom edge that shows it.
const BAR: f32 = 34.0;
const HOVER_BAND: f32 = 90.0;

/// The timeline's keys (not while typing in a field).
pub fn keys(app: &mut App, ctx: &egui::Context) {
    if ctx.text_edit_focused() {
        return;
    }
    let pressed = |k: Key| ctx.input(|i| i.key_pressed(k) && i.modifiers.is_none());
    if pressed(Key::ArrowLeft) {
        app.replay_back();
    }
    if pressed(Key::ArrowRight) {
        app.replay_forward();
    }
    if pressed(Key::K) {
        app.replay_play_pause();
    }
    if pressed(Key::Home) {
        app.replay_oldest();
    }
    if pressed(Key::End) {
        app.replay_live();
    }
}

/// Draws the bar over the bottom of the view (at `app.view_rect`) when it should show.
pub fn timeline_ui(app: &mut App, ctx: &egui::Context) {
    let view = app.view_rect;
    if !view.is_positive() {
        return;
    }
    let near = ctx
        .input(|i| i.pointer.hover_pos())
        .is_some_and(|p: Pos2| view.contains(p) && p.y >= view.bottom() - HOVER_BAND);
    if !(near || app.replay.pinned || app.replay.cursor.is_some() || app.replay.save.is_some()) {
        return;
    }
    let width = (view.width() - 16.0).max(200.0);
    egui::Area::new(egui::Id::unique("replay timeline"))
        .fixed_pos(egui::pos2(view.left() + 8.0, view.bottom() - BAR - 8.0))
        .order(egui::Order::Foreground)
        .show(ctx, |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_width(width);
                ui.horizontal(|ui| bar_ui(app, ui));
            });
        });
}

fn bar_ui(app: &mut App, ui: &mut egui::Ui) {
    let n = app.replay.ring.len();
    let live = app.replay.cursor.is_none();
    if ui.small_button("|<").on_hover_text("The oldest stored frame (Home)").clicked() {
        app.replay_oldest();
    }
    if ui.small_button("<").on_hover_text("A frame back (Left)").clicked() {
        app.replay_back();
    }
    let play = if app.replay.playing { "Pause" } else { "Play" };
    if ui.small_button(play).on_hover_text("Play / pause the replay (K); the simulation runs on").clicked() {
        app.replay_play_pause();
    }
    if ui.small_button(">").on_hover_text("A frame forward (Right)").clicked() {
        app.replay_forward();
    }
    if ui.add_enabled(!live, egui::Button::new("Live").small()).on_hover_text("Back to the live view (End)").clicked() {
        app.replay_live();
    }
    egui::ComboBox::from_id_salt("replay speed").width(48.0).selected_text(speed_name(app.replay.speed)).show_ui(
        ui,
        |ui| {
            for s in SPEEDS {
                if ui.selectable_label(app.replay.speed == s, speed_name(s)).clicked() {
                    app.replay_set_speed(s);
                }
            }
        },
    );
    let mut i = app.replay.index().unwrap_or(0);
    let slider_width = (ui.available_width() - 430.0).max(80.0);
    ui.spacing_mut().slider_width = slider_width;
    let resp = ui.add_enabled(n > 1, egui::Slider::new(&mut i, 0..=n.saturating_sub(1)).show_value(false));
    if resp.changed() {
        app.replay_seek(i);
    }
    ui.label(position_text(app)).on_hover_text(budget_text(app));
    let can_resume = !live && app.replay.resuming.is_none();
    if ui
        .add_enabled(can_resume, egui::Button::new("Resume from here").small())
        .on_hover_text("Restart the simulation from this frame; the history after it is dropped")
        .clicked()
    {
        app.replay_resume();
    }
    save_ui(app, ui);
    ui.menu_button("Options…", |ui| settings_ui(app, ui));
}

fn speed_name(s: f64) -> &'static str {
    match s {
        x if x >= 1.0 => "1×",
        x if x >= 0.5 => "½×",
        _ => "¼×",
    }
}

/// "-3.2 s · step 12400" for a stored frame, "live · 28 s kept" while live.
pub fn position_text(app: &App) -> String {
    let held = app.replay.seconds();
    match (app.replay.shown(), app.replay.ring.iter().next_back()) {
        (Some(f), Some(last)) => {
            format!("-{:.1} s · step {}", last.at.duration_since(f.at).as_secs_f64(), f.step)
        }
        _ => format!("live · {held:.0} s kept"),
    }
}

/// The budget, what it holds, and what keeping it costs (the hover text).
pub fn budget_text(app: &App) -> String {
    let r = &app.replay;
    let mb = |b: usize| b as f64 / (1 << 20) as f64;
    let cost = r.states.last_took().map_or_else(String::new, |t| {
        format!("\nA full state takes the simulation {:.1} ms to keep", t.as_secs_f64() * 1e3)
    });
    let capped = if r.capped(app.settings.replay_budget_mb) { " (capped to half the free memory)" } else { "" };
    format!(
        "Replay keeps {:.1} s: {} frames ({:.0} MiB, every {} drawn), {} full states ({:.0} MiB), of a {:.0} MiB \
         budget{capped}{cost}",
        r.seconds(),
        r.ring.len(),
        mb(r.ring.bytes()),
        r.ring.every.max(1),
        r.states.keyframes(),
        mb(r.states.bytes()),
        mb(app.replay_budget()),
    )
}

fn save_ui(app: &mut App, ui: &mut egui::Ui) {
    if let Some(job) = &app.replay.save {
        let done = job.done.load(std::sync::atomic::Ordering::Relaxed);
        ui.label(format!("saving {done}/{}", job.total));
        return;
    }
    let label = format!("Save last {:.0} s", app.replay.save_seconds);
    if ui
        .button(label)
        .on_hover_text("Write the stored frames of the last N seconds (Options… sets N and the format)")
        .clicked()
    {
        save_last(app);
    }
}

/// Saves the last N seconds into the output folder in the chosen format.
pub fn save_last(app: &mut App) {
    let dir = super::recording::output_dir(app);
    let path = match app.replay.save_format {
        SaveFormat::Mp4 => crate::app::capture::output_path(&dir, "replay", "mp4"),
        SaveFormat::Gif => crate::app::capture::output_path(&dir, "replay", "gif"),
        SaveFormat::Png => crate::app::capture::output_path(&dir, "replay", "frames"),
    };
    let path = if app.replay.save_format == SaveFormat::Png { path.with_extension("") } else { path };
    let seconds = app.replay.save_seconds;
    app.replay_save(path, seconds);
}

fn settings_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        ui.label("Save the last");
        ui.add(egui::DragValue::new(&mut app.replay.save_seconds).range(1.0..=600.0).suffix(" s"));
    });
    ui.horizontal(|ui| {
        ui.label("as");
        for f in [SaveFormat::Mp4, SaveFormat::Gif, SaveFormat::Png] {
            ui.radio_value(&mut app.replay.save_format, f, f.name());
        }
    });
    ui.horizontal(|ui| {
        ui.label("Replay budget");
        ui.add(egui::DragValue::new(&mut app.settings.replay_budget_mb).range(0..=1 << 20).speed(64).suffix(" MiB"))
            .on_hover_text("Memory the replay may keep (0 turns it off); capped by half the free memory");
    });
    ui.checkbox(&mut app.replay.pinned, "Always show the timeline");
    ui.label(budget_text(app));
}
