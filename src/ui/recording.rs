//! The Recording and files panel: screenshot, start / stop recording (MP4 or GIF, with or
//! without the UI), trajectories written while the simulation runs (extended XYZ or LAMMPS
//! dump, every K steps), extended XYZ and LAMMPS deck exports, and opening and saving scenes.

use std::path::PathBuf;

use crate::app::App;
use crate::app::capture::output_path;
use crate::app::settings::VideoFormat;
use crate::export::lammps::LammpsUnits;
use crate::io::trajectory::TrajectoryFormat;
use crate::units::UnitSystem;

use super::fields::count_field;

pub(crate) fn output_dir(app: &App) -> PathBuf {
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
    trajectory_ui(app, ui);
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
    ui.horizontal(|ui| {
        if ui
            .button("Export LAMMPS input…")
            .on_hover_text("in.argon + data.argon reproducing the current state, walls, obstacles and ensemble")
            .clicked()
        {
            app.export_lammps_dialog();
        }
        egui::ComboBox::from_label("units").selected_text(app.settings.lammps_units.name()).show_ui(ui, |ui| {
            ui.selectable_value(&mut app.settings.lammps_units, LammpsUnits::Lj, "lj (reduced)");
            ui.selectable_value(&mut app.settings.lammps_units, LammpsUnits::Real, "real (argon: Å, fs, kcal/mol)");
            ui.selectable_value(&mut app.settings.lammps_units, LammpsUnits::Metal, "metal (argon: Å, ps, eV)");
        });
    });
    if let Some(p) = &app.scene_path {
        ui.small(format!("Scene file: {}", p.display()));
    }
}

/// Trajectory: format, units, interval, start / stop and progress.
fn trajectory_ui(app: &mut App, ui: &mut egui::Ui) {
    let running = app.status.as_ref().and_then(|s| s.trajectory.clone());
    ui.add_enabled_ui(running.is_none(), |ui| {
        ui.horizontal(|ui| {
            ui.label("Trajectory");
            for f in [TrajectoryFormat::ExtXyz, TrajectoryFormat::LammpsDump] {
                ui.radio_value(&mut app.settings.trajectory_format, f, f.label());
            }
        });
        ui.horizontal(|ui| {
            ui.radio_value(&mut app.settings.trajectory_units, UnitSystem::Lj, "reduced LJ units");
            ui.radio_value(&mut app.settings.trajectory_units, UnitSystem::Argon, "argon (Å, ps)");
        });
        if let Some(k) = count_field(ui, "A frame every", app.settings.trajectory_every, 1..=100_000_000, "steps") {
            app.settings.trajectory_every = k;
        }
    });
    match running {
        None => {
            if ui
                .button("Write trajectory…")
                .on_hover_text("frames of positions and velocities while it runs")
                .clicked()
            {
                app.start_trajectory_dialog();
            }
        }
        Some(t) => {
            ui.horizontal(|ui| {
                if ui.button("Stop trajectory").clicked() {
                    app.stop_trajectory();
                }
                ui.colored_label(
                    egui::Color32::from_rgb(255, 120, 110),
                    format!("{} frames (every {} steps)", t.frames, t.every),
                );
            });
            ui.small(format!("Writing {}", t.path.display()));
        }
    }
}
