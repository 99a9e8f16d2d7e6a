//! The whole app loop headless (simulation thread, renderer, egui into an offscreen target):
//! the P and R keys make a screenshot and a recording of the view, with or without the UI;
//! scenes and extended XYZ frames are written (atomically) and read back. Needs a wgpu
//! adapter: without one it prints `skipped: no GPU adapter` (and fails when
//! ARGON_REQUIRE_RENDER=1, as CI sets).

use std::path::{Path, PathBuf};
use std::time::Duration;

use argon_sandbox::app::commands::PaceMode;
use argon_sandbox::app::headless::Headless;
use argon_sandbox::app::settings::{Settings, VideoFormat};
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::scene::Scene;
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::BackendChoice;

fn headless(out: &Path, with_ui: bool) -> Option<Headless> {
    let settings = Settings {
        output_dir: Some(out.to_path_buf()),
        record_with_ui: with_ui,
        video_format: VideoFormat::Mp4,
        ..Settings::default()
    };
    let app = App::new(AppOptions {
        backend: Some(BackendChoice::Cpu),
        settings: Some(settings),
        atoms: Some(2000),
        ..Default::default()
    });
    match Headless::new(app, [960, 600]) {
        Ok(mut h) => {
            assert!(h.run_until(Duration::from_secs(60), |a| a.frame.is_some()), "the scene did not load");
            Some(h)
        }
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            println!("skipped: no GPU adapter ({e})");
            None
        }
    }
}

fn key(k: egui::Key) -> Vec<egui::Event> {
    vec![
        egui::Event::Key { key: k, physical_key: None, pressed: true, repeat: false, modifiers: Default::default() },
        egui::Event::Key { key: k, physical_key: None, pressed: false, repeat: false, modifiers: Default::default() },
    ]
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("argon-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn png_size(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn p_takes_a_screenshot_and_r_records_the_view_or_the_window() {
    let dir = temp_dir("capture");
    let Some(mut h) = headless(&dir, false) else { return };
    // P: the view alone.
    h.frame_with(key(egui::Key::P));
    h.frame();
    h.frame();
    let shots = files(&dir, "png");
    assert_eq!(shots.len(), 1, "{shots:?}");
    let (w, hgt, rgba) = png_size(&shots[0]);
    assert_eq!([w, hgt], h.app.view_size, "the screenshot is not the view's size");
    let lit = rgba.chunks_exact(4).filter(|p| p[0].max(p[1]).max(p[2]) > 120).count();
    assert!(lit > 2000, "the screenshot shows no atoms ({lit} bright pixels)");
    // R: record the view for a second of frames, R again stops and the file is complete.
    h.frame_with(key(egui::Key::R));
    assert!(h.app.capture.recording.is_some(), "{:?}", h.app.last_error());
    // At least a second, and at least 12 frames however slow the machine is (30 fps sampling).
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_millis(1200)
        || h.app.capture.recording.as_ref().is_some_and(|r| r.frames < 12) && start.elapsed() < Duration::from_secs(60)
    {
        h.frame();
    }
    h.frame_with(key(egui::Key::R));
    h.frame();
    assert!(h.app.capture.recording.is_none());
    let videos = files(&dir, "mp4");
    assert_eq!(videos.len(), 1, "{videos:?}: {:?}", h.app.messages);
    let file = std::fs::File::open(&videos[0]).unwrap();
    let len = file.metadata().unwrap().len();
    let mp4 = mp4::Mp4Reader::read_header(std::io::BufReader::new(file), len).unwrap();
    let track = mp4.tracks().values().next().unwrap();
    assert!(track.sample_count() >= 10, "only {} frames recorded", track.sample_count());
    let size = h.app.view_size;
    assert_eq!([track.width() as u32, track.height() as u32], [size[0] & !1, size[1] & !1]);
    // With the UI: the screenshot is the whole window.
    h.app.settings.record_with_ui = true;
    h.frame_with(key(egui::Key::P));
    h.frame();
    let shots = files(&dir, "png");
    assert_eq!(shots.len(), 2, "{shots:?}");
    let (w, hgt, _) = png_size(shots.iter().find(|p| **p != shots[0]).unwrap());
    assert_eq!([w, hgt], [960, 600]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scenes_and_xyz_frames_are_saved_and_read_back() {
    let dir = temp_dir("files");
    let Some(mut h) = headless(&dir, false) else { return };
    let b = h.app.status.as_ref().unwrap().sim_box;
    let circle = Shape::Circle { centre: [0.5 * b.hi[0], 0.75 * b.hi[1]], radius: 2.0 };
    let before = h.app.shapes.clone();
    let mut after = before.clone();
    after.push(circle.clone());
    h.app.tool_actions(vec![argon_sandbox::app::tools::ToolAction::Commit { before, after }]);
    assert!(h.app.set_target_kelvin(120.0));
    let scene_path = dir.join("saved.ron");
    h.app.save_scene(scene_path.clone());
    let xyz = dir.join("frame.xyz");
    h.app.request_export_xyz(xyz.clone());
    let n = h.app.status.as_ref().unwrap().n_atoms;
    assert!(h.run_until(Duration::from_secs(30), |a| xyz.exists() && a.tasks.is_empty()), "{:?}", h.app.messages);
    h.app.wait_for_tasks();
    let scene = Scene::load(&scene_path).unwrap();
    assert!(scene.obstacles.contains(&circle));
    assert!((scene.temperature_k - 120.0).abs() < 1e-9);
    let frame = argon_sandbox::io::extxyz::read_extxyz(&xyz).unwrap();
    assert!(frame.positions.len().abs_diff(n) < 50, "{} atoms written, {n} running", frame.positions.len());
    // No temporary files are left beside the saved ones.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // Opening the saved scene starts over from it (same obstacles).
    h.app.open_scene(&scene_path);
    assert!(h.run_until(Duration::from_secs(30), |a| a.scene_path.as_deref() == Some(scene_path.as_path())
        && a.status.as_ref().is_some_and(|s| s.n_obstacles == scene.obstacles.len())));
    let _ = std::fs::remove_dir_all(&dir);
}

/// From the running app: a trajectory (LAMMPS dump, a frame every 5 steps) written while it
/// runs and finished on stop; a LAMMPS deck of the current state; the thermo CSV of what the
/// plots show; the g(r) table. All read back.
#[test]
fn trajectories_thermo_gr_and_lammps_decks_leave_the_app() {
    use argon_sandbox::io::trajectory::TrajectoryFormat;
    let dir = temp_dir("exports");
    let Some(mut h) = headless(&dir, false) else { return };
    h.app.settings.trajectory_format = TrajectoryFormat::LammpsDump;
    h.app.settings.trajectory_every = 5;
    let dump = dir.join("run.dump");
    h.app.start_trajectory(dump.clone());
    assert!(
        h.run_until(Duration::from_secs(60), |a| a
            .status
            .as_ref()
            .and_then(|s| s.trajectory.as_ref())
            .is_some_and(|t| t.frames >= 6)),
        "{:?}",
        h.app.messages
    );
    assert!(!dump.exists(), "the dump appeared before it was finished");
    h.app.stop_trajectory();
    assert!(h.run_until(Duration::from_secs(30), |_| dump.exists()), "{:?}", h.app.messages);
    let text = std::fs::read_to_string(&dump).unwrap();
    let steps: Vec<u64> = text
        .lines()
        .zip(text.lines().skip(1))
        .filter(|(a, _)| *a == "ITEM: TIMESTEP")
        .map(|(_, b)| b.parse().unwrap())
        .collect();
    assert!(steps.len() >= 6, "{steps:?}");
    assert!(steps.windows(2).all(|w| w[1] - w[0] == 5 && w[1] % 5 == 0), "frames every 5 steps: {steps:?}");

    let deck = dir.join("deck");
    h.app.request_export_lammps(deck.clone());
    // At least two telemetry records before the thermo CSV is saved (its check wants two rows).
    assert!(h.run_until(Duration::from_secs(30), |a| a.plots.rdf_frames() > 0 && a.plots.records.len() >= 2));
    let (thermo, gr) = (dir.join("thermo.csv"), dir.join("gr.csv"));
    h.app.save_thermo(thermo.clone());
    h.app.save_rdf(gr.clone());
    assert!(h.run_until(Duration::from_secs(30), |a| deck.join("in.argon").exists() && a.tasks.is_empty()));
    h.app.wait_for_tasks();
    let input = std::fs::read_to_string(deck.join("in.argon")).unwrap();
    assert!(input.contains("read_data       data.argon") && input.contains("fix             walls all wall/lj93"));
    let data = std::fs::read_to_string(deck.join("data.argon")).unwrap();
    let n = h.app.status.as_ref().unwrap().n_atoms;
    assert!(data.contains(" atoms\n"), "{}", &data[..200]);
    let atoms: usize = data.lines().nth(2).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(atoms.abs_diff(n) < 50, "{atoms} atoms in the deck, {n} running");
    let rows = argon_sandbox::io::thermo::read_thermo_csv(&thermo).unwrap();
    assert!(rows.len() <= h.app.plots.records.len(), "more rows than the plots hold");
    assert!(rows.len() >= 2 && rows[0].get("temperature_K").is_some_and(|t| t > 1.0 && t < 1000.0), "{rows:?}");
    let gr_text = std::fs::read_to_string(&gr).unwrap();
    assert!(gr_text.starts_with("r_sigma,r_angstrom,g\n"));
    let peak = gr_text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect::<Vec<_>>())
        .max_by(|a, b| a[2].total_cmp(&b[2]))
        .unwrap();
    assert!(peak[0] > 0.95 && peak[0] < 1.3, "the g(r) peak sits at {} sigma", peak[0]);
    assert!((peak[1] / peak[0] - 3.405).abs() < 1e-9);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The wind tunnel set in the app (Flow panel) runs in the simulation and is kept when the
/// scene is saved.
#[test]
fn a_wind_tunnel_set_live_is_saved_with_the_scene() {
    let dir = temp_dir("tunnel");
    let Some(mut h) = headless(&dir, false) else { return };
    let scene_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/channel_flow.ron");
    h.app.open_scene(&scene_path);
    assert!(h.run_until(Duration::from_secs(60), |a| a.scene_path.as_deref() == Some(scene_path.as_path())
        && a.status.as_ref().is_some_and(|s| s.sim_box.periodic[0] && s.n_obstacles == 1)));
    let tunnel = argon_sandbox::physics::tunnel::Tunnel { speed: 0.3, zone: 3.0, start_spin: None };
    h.app.params.tunnel = Some(tunnel);
    assert!(h.app.apply_params(), "{:?}", h.app.messages);
    assert!(
        h.run_until(Duration::from_secs(30), |a| a.status.as_ref().is_some_and(|s| s.params.tunnel == Some(tunnel))),
        "{:?}",
        h.app.messages
    );
    let saved = dir.join("tunnel.ron");
    h.app.save_scene(saved.clone());
    h.app.wait_for_tasks();
    assert_eq!(Scene::load(&saved).unwrap().tunnel, Some(tunnel));
    // Its LAMMPS deck writes the flow fields on the app's grid, with the Flow view off too.
    assert!(!h.app.settings.view.flow.on);
    let deck = dir.join("deck");
    h.app.request_export_lammps(deck.clone());
    assert!(h.run_until(Duration::from_secs(30), |a| deck.join("in.argon").exists() && a.tasks.is_empty()));
    h.app.wait_for_tasks();
    let input = std::fs::read_to_string(deck.join("in.argon")).unwrap();
    assert!(input.contains("ave/chunk") && deck.join("fields.json").exists(), "no fields in the deck:\n{input}");
    assert!(h.app.messages.iter().any(|m| m.text.contains("lammps-fields")), "{:?}", h.app.messages);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scene that names `fields` opens in the Flow view with that sampling, one that names
/// `steps_per_frame` at that pace; a scene without them leaves both as they were.
#[test]
fn a_flow_preset_opens_in_the_flow_view_at_its_pace() {
    let dir = temp_dir("flow-preset");
    let Some(mut h) = headless(&dir, false) else { return };
    assert!(!h.app.settings.view.flow.on, "the Flow view starts off");
    let pace = h.app.pace.steps_per_frame;
    let preset = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/twin_eddies.ron");
    let text = std::fs::read_to_string(&preset)
        .unwrap()
        .replace("    seed: 2025,", "    steps_per_frame: 7,\n    seed: 2025,")
        .replace("window_tau: 10.0", "window_tau: 0.5");
    let paced = dir.join("paced.ron");
    std::fs::write(&paced, text).unwrap();
    h.app.open_scene(&preset);
    assert!(h.app.settings.view.flow.on, "{:?}", h.app.messages);
    assert_eq!(h.app.settings.flow_sampling.window_tau, 10.0);
    assert_eq!(h.app.pace.steps_per_frame, pace, "twin_eddies.ron names no pace");
    assert_eq!(h.app.pace.mode, PaceMode::Fill, "the default pace: the simulation fills each frame");
    h.app.open_scene(&paced);
    assert_eq!((h.app.pace.steps_per_frame, h.app.settings.flow_sampling.window_tau), (7, 0.5));
    assert_eq!(h.app.pace.mode, PaceMode::Fixed, "a scene's steps_per_frame is a fixed pace");
    assert!(
        h.run_until(Duration::from_secs(120), |a| a.scene_path.as_deref() == Some(paced.as_path())
            && a.status.as_ref().is_some_and(|s| s.params.tunnel.is_some())
            && a.flow.fields.is_some()),
        "no flow window arrived: {:?}",
        h.app.messages
    );
    // A scene without `fields` keeps the view as the person left it.
    h.app.settings.view.flow.on = false;
    h.app.open_scene(&Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/channel_flow.ron"));
    assert!(!h.app.settings.view.flow.on);
    assert_eq!(h.app.pace.steps_per_frame, 7);
    let _ = std::fs::remove_dir_all(&dir);
}
