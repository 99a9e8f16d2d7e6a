//! The Recording and files panel: screenshot, start / stop recording (MP4 or GIF, with or
//! without the UI), extended XYZ export, and opening and saving scenes.

use std::path::PathBuf;

use crate::app::App;
use crate::app::capture::output_path;
use crate::app::settings::VideoFormat;

fn output_dir(app: &App) -> PathBuf {
    app.settings.output_dir.clone().unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
}

/// P: a PNG of the next frame (with the UI if "Include the UI" is on) in the output folder.
pub fn screenshot(app: &mut App) {
    let path = output_path(&output_dir(app), "screenshot", "png");
    app.capture.screenshot = Some((app.settings.record_with_ui, path));
}

/// R: starts or stops a recording in the output folder.
pub fn toggle_recording(app: &mut App) {
    if app.capture.recording.is_some() {
        app.capture.stop_recording();
        return;
    }
    let ext = app.settings.video_format.extension();
    let path = output_path(&output_dir(app), "recording", ext);
    let size = if app.settings.record_with_ui { app.window_size_px } else { app.view_size };
    if let Err(e) = app.capture.start_recording(path.clone(), size, app.settings.record_with_ui) {
        app.notify(format!("recording {}: {e}", path.display()), true);
    } else {
        app.notify(format!("recording to {} (R stops)", path.display()), false);
    }
}

pub fn recording_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.checkbox(&mut app.settings.record_with_ui, "Include the UI in screenshots and recordings");
    ui.horizontal(|ui| {
        if ui.button("Screenshot").on_hover_text("P").clicked() {
            screenshot(app);
        }
        let recording = app.capture.recording.is_some();
        if ui.button(if recording { "Stop recording" } else { "Record" }).on_hover_text("R").clicked() {
            toggle_recording(app);
        }
    });
    ui.horizontal(|ui| {
        ui.label("Video format");
        ui.radio_value(&mut app.settings.video_format, VideoFormat::Mp4, "MP4");
        ui.radio_value(&mut app.settings.video_format, VideoFormat::Gif, "GIF");
    });
    if let Some(r) = &app.capture.recording {
        ui.colored_label(
            egui::Color32::from_rgb(255, 120, 110),
            format!("Recording: {} frames, {:.0} s", r.frames, r.started.elapsed().as_secs_f64()),
        );
    }
    ui.horizontal(|ui| {
        ui.label(format!("Saving to {}", output_dir(app).display()));
        if ui.small_button("Change…").clicked()
            && let Some(dir) = rfd::FileDialog::new().set_title("Folder for screenshots and recordings").pick_folder()
        {
            app.settings.output_dir = Some(dir);
        }
    });
    ui.separator();
    ui.horizontal_wrapped(|ui| {
        if ui.button("Open scene…").on_hover_text("Ctrl+O, or drop a .ron file on the window").clicked() {
            app.open_scene_dialog();
        }
        if ui.button("Save scene").on_hover_text("Ctrl+S").clicked() {
            app.save();
        }
        if ui.button("Save as…").clicked() {
            app.save_scene_dialog(false);
        }
        if ui.button("Save with current atoms…").clicked() {
            app.save_scene_dialog(true);
        }
        if ui.button("Export extended XYZ…").on_hover_text("the current frame, for OVITO, ASE or VMD").clicked() {
            app.export_xyz_dialog();
        }
    });
    if let Some(p) = &app.scene_path {
        ui.small(format!("Scene file: {}", p.display()));
    }
}
