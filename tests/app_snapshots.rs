//! Snapshot images of the app and its panels, rendered by egui_kittest through egui-wgpu with
//! the 3D view's paint callback (lavapipe in CI): the whole window on the paused default
//! scene and on the Ar-Kr mixture (coloured by species, with its legend), and every control
//! panel opened, also for the mixture with the add-atoms brush chosen. Regenerate with `UPDATE_SNAPSHOTS=1` after an
//! intended change and look at the images before committing them.
//!
//! Rendering needs a wgpu adapter: without one the test prints `skipped: no GPU adapter`
//! (and fails when ARGON_REQUIRE_RENDER=1, as CI sets).

use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::render::view::ViewResources;
use argon_sandbox::sim::BackendChoice;
use egui_kittest::kittest::Queryable;
use egui_kittest::{Harness, SnapshotOptions};

fn renderer() -> Option<egui_kittest::wgpu::WgpuTestRenderer> {
    let made = std::panic::catch_unwind(|| {
        egui_kittest::wgpu::create_render_state(
            egui_kittest::wgpu::default_wgpu_setup(),
            egui_wgpu::RendererOptions::PREDICTABLE,
        )
    });
    match made {
        Ok(rs) => {
            let view = ViewResources::new(&rs.device, rs.target_format);
            rs.renderer.write().callback_resources.insert(view);
            Some(egui_kittest::wgpu::WgpuTestRenderer::from_render_state(rs))
        }
        Err(_) => {
            assert!(
                std::env::var_os("ARGON_REQUIRE_RENDER").is_none(),
                "ARGON_REQUIRE_RENDER is set but no GPU adapter"
            );
            println!("skipped: no GPU adapter (install mesa-vulkan-drivers)");
            None
        }
    }
}

fn paused_default_app() -> App {
    App::new(AppOptions {
        backend: Some(BackendChoice::Cpu),
        settings: Some(Settings::default()),
        paused: true,
        ..Default::default()
    })
}

/// Lenient enough for another GPU's rasteriser, strict enough to catch a missing panel,
/// blank view or broken layout.
fn options() -> SnapshotOptions {
    SnapshotOptions::new().threshold(2.0).max_failed_pixels(4000)
}

#[test]
fn whole_window_paused_default_scene() {
    let Some(r) = renderer() else { return };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 860.0))
        .renderer(r)
        .build_ui_state(|ui, app: &mut App| app.ui(ui), paused_default_app());
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(h.state().frame.is_some() && h.state().plots.rdf_frames() >= 1) {
        assert!(std::time::Instant::now() < end, "the scene did not load: {:?}", h.state().last_error());
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for _ in 0..5 {
        h.step();
    }
    // The status bar shows a measured frame rate: mask it.
    let bar = h.get_by_label_contains("positions: host staging").rect();
    h.mask(egui::Rect::from_min_max(egui::pos2(0.0, bar.top() - 4.0), egui::pos2(1400.0, 860.0)));
    h.snapshot_options("app_paused_default_scene", &options());
}

#[test]
fn every_control_panel() {
    let Some(r) = renderer() else { return };
    let mut h = Harness::builder().with_size(egui::vec2(340.0, 2500.0)).renderer(r).build_ui_state(
        |ui, app: &mut App| {
            app.poll();
            for (title, _, panel) in argon_sandbox::ui::CONTROL_PANELS {
                ui.heading(title);
                panel(app, ui);
            }
        },
        paused_default_app(),
    );
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while h.state().status.is_none() {
        assert!(std::time::Instant::now() < end, "the scene did not load");
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for _ in 0..3 {
        h.step();
    }
    // The output folder is this machine's working directory: mask its line.
    let line = h.get_by_label_contains("Saving to").rect();
    h.mask(line);
    h.snapshot_options("control_panels", &options());
}

fn paused_mixture_app() -> App {
    App::new(AppOptions {
        scene: Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/ar_kr_mixture.ron")),
        backend: Some(BackendChoice::Cpu),
        settings: Some(Settings::default()),
        paused: true,
        ..Default::default()
    })
}

/// The Ar-Kr preset: atoms coloured by species (the default for a mixture) and the legend
/// naming each species with its colour.
#[test]
fn whole_window_paused_mixture_by_species() {
    let Some(r) = renderer() else { return };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 860.0))
        .renderer(r)
        .build_ui_state(|ui, app: &mut App| app.ui(ui), paused_mixture_app());
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(h.state().frame.is_some() && h.state().plots.rdf_frames() >= 1) {
        assert!(std::time::Instant::now() < end, "the scene did not load: {:?}", h.state().last_error());
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for _ in 0..5 {
        h.step();
    }
    assert_eq!(h.state().settings.view.colour_by, argon_sandbox::render::ColourBy::Species);
    let bar = h.get_by_label_contains("positions: host staging").rect();
    h.mask(egui::Rect::from_min_max(egui::pos2(0.0, bar.top() - 4.0), egui::pos2(1400.0, 860.0)));
    h.snapshot_options("app_paused_mixture_by_species", &options());
}

/// The species controls: the composition for re-initialising, the add-atoms brush's species,
/// and "Species" in the Display panel's colour map.
#[test]
fn control_panels_for_a_mixture() {
    let Some(r) = renderer() else { return };
    let mut h = Harness::builder().with_size(egui::vec2(340.0, 1500.0)).renderer(r).build_ui_state(
        |ui, app: &mut App| {
            app.poll();
            for (title, _, panel) in argon_sandbox::ui::CONTROL_PANELS {
                ui.heading(title);
                panel(app, ui);
            }
        },
        paused_mixture_app(),
    );
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while h.state().status.is_none() {
        assert!(std::time::Instant::now() < end, "the scene did not load");
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    h.state_mut().set_tool(argon_sandbox::app::tools::Tool::AddAtoms);
    h.state_mut().settings.brush_species = "Kr".into();
    for _ in 0..3 {
        h.step();
    }
    assert_eq!(h.state().reinit_composition, "Ar 0.7, Kr 0.3");
    let line = h.get_by_label_contains("Saving to").rect();
    h.mask(line);
    // The scene file's path depends on where the repository is checked out.
    let line = h.get_by_label_contains("Scene file:").rect();
    h.mask(line);
    h.snapshot_options("control_panels_mixture", &options());
}
