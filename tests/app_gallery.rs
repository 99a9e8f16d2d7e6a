//! The examples gallery, driven through the real UI with egui_kittest: the top bar's
//! "Examples" opens it; it shows every preset of `assets/scenes/` (name, description, what it
//! is made for); one click opens each in the app (the simulation loads it); an example far too
//! big for the backend (the vortex street on the CPU) asks first, with the estimated speed and
//! what works instead, and builds nothing until answered. The gallery opens by itself on the
//! first launch only. The simulation runs on the CPU backend on its own thread, as in the app.

mod app_common;

use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::scene::presets::{PRESETS, WATCHABLE_STEPS_PER_S, thousands};
use argon_sandbox::sim::BackendChoice;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use app_common::*;

/// Tall and wide enough for every card to be on screen (a click must reach each button).
fn harness(app: App) -> Harness<'static, App> {
    harness_of(app, [1500.0, 2200.0])
}

fn title(name: &str) -> String {
    argon_sandbox::scene::preset_scene(name).unwrap().name
}

#[test]
fn the_gallery_shows_every_preset_and_one_click_opens_each() {
    let mut h = harness(app_on(BackendChoice::Cpu, true, 2000));
    loaded(&mut h);
    assert!(!h.state().gallery.open, "not offered without a settings file of its own");
    h.get_by_label("Examples").click();
    h.step();
    h.step();
    assert!(h.state().gallery.open);
    for p in PRESETS {
        // The open scene's name is in the top bar too.
        assert!(h.query_all_by_label(&title(p.name)).count() >= 1, "{} has no card", p.name);
        h.get_by_label_contains(&format!("Made for: {} · {} atoms", p.made_for.label(), thousands(p.atoms)));
    }
    // The vortex street last: once its 1.17 million atoms are open, every frame lavapipe draws
    // takes seconds.
    let mut order: Vec<usize> = (0..PRESETS.len()).collect();
    order.sort_by_key(|&i| PRESETS[i].name == "vortex_street");
    for i in order {
        let p = &PRESETS[i];
        if !h.state().gallery.open {
            h.get_by_label("Examples").click();
            h.step();
            h.step();
        }
        let buttons: Vec<_> = h.get_all_by_label("Open").collect();
        assert_eq!(buttons.len(), PRESETS.len(), "one Open button a card");
        buttons[i].click();
        for _ in 0..3 {
            h.step();
        }
        if p.name == "vortex_street" {
            // 1.17 million atoms on the CPU: asked first, nothing built.
            let slow = h.state().gallery.confirm.clone().expect("the vortex street on a CPU is asked about first");
            assert!(slow.steps_per_s < WATCHABLE_STEPS_PER_S, "{slow:?}");
            assert_eq!(slow.instead, Some("twin_eddies"));
            h.get_by_label_contains("steps per second, far below");
            h.get_by_label("Open twin_eddies instead");
            h.get_by_label("Open it anyway").click();
            h.step();
            // Built and loaded on the CPU backend, paused; frames of 1.17 million atoms drawn by
            // lavapipe take seconds each, so wait on the app's reports without drawing.
            let app = h.state_mut();
            let t0 = std::time::Instant::now();
            while !(app.scene.name == title(p.name) && app.status.as_ref().is_some_and(|s| s.n_atoms == p.atoms)) {
                assert!(t0.elapsed().as_secs() < 180, "the vortex street did not open: {:?}", app.last_error());
                std::thread::sleep(std::time::Duration::from_millis(50));
                app.poll();
            }
            assert!(!app.gallery.open && app.scene_path.is_none());
            break;
        }
        let want = title(p.name);
        until(&mut h, 120.0, &format!("{} to open", p.name), |a| {
            a.scene.name == want && a.status.as_ref().is_some_and(|s| s.n_atoms == p.atoms)
        });
        assert!(!h.state().gallery.open, "the gallery closes once an example opens");
        assert_eq!(h.state().scene_path, None, "an example has no file to save into");
    }
}

#[test]
fn an_example_too_big_for_the_backend_asks_first_and_builds_nothing() {
    let mut h = harness(app_on(BackendChoice::Cpu, false, 2000));
    loaded(&mut h);
    until(&mut h, 60.0, "a measured step rate", |a| a.status.as_ref().is_some_and(|s| s.steps_per_s > 0.0));
    let n0 = h.state().status.as_ref().unwrap().n_atoms;
    h.state_mut().open_example("vortex_street");
    for _ in 0..3 {
        h.step();
    }
    let slow = h.state().gallery.confirm.clone().expect("asked first");
    // The estimate is the running system's atom-steps per second over the example's atoms.
    let s = h.state().status.clone().unwrap();
    let rate = s.steps_per_s * s.n_atoms as f64;
    assert!((slow.steps_per_s - rate / 1_174_416.0).abs() <= 0.5 * slow.steps_per_s, "{slow:?} vs {rate}");
    assert_eq!(slow.backend, "CPU");
    h.get_by_label_contains("1,174,416 atoms");
    h.get_by_label("Open twin_eddies instead").click();
    h.step();
    h.step();
    // Opened: the scene's name at once, its atoms once the simulation thread has built them.
    let eddies = argon_sandbox::scene::presets::find("twin_eddies").unwrap().atoms;
    assert_ne!(eddies, n0);
    until(&mut h, 120.0, "the twin eddies to open", |a| {
        a.scene.name == title("twin_eddies") && a.status.as_ref().is_some_and(|s| s.n_atoms == eddies)
    });
    // A small example opens at once, without a question.
    h.state_mut().open_example("droplet");
    assert!(h.state().gallery.confirm.is_none());
    until(&mut h, 60.0, "the droplet to open", |a| a.scene.name == title("droplet"));
    // A scene that can be thinned is offered with fewer atoms.
    let big = argon_sandbox::scene::presets::find("in_lj").unwrap();
    let slow = h.state().too_slow(&argon_sandbox::scene::presets::Preset { atoms: 50_000_000, ..*big });
    let slow = slow.expect("50 million atoms are too many for a CPU");
    let fewer = slow.fewer_atoms.expect("fewer atoms are offered for a scene that is no tunnel");
    assert!((argon_sandbox::scene::reinit::MIN_ATOMS..50_000_000).contains(&fewer));
}

#[test]
fn the_gallery_opens_by_itself_on_the_first_launch_only() {
    let dir = std::env::temp_dir().join(format!("argon-gallery-first-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("settings.ron");
    let open = |scene: Option<&str>| {
        let mut app = App::new(AppOptions {
            backend: Some(BackendChoice::Cpu),
            settings_path: Some(path.clone()),
            scene: scene.map(Into::into),
            paused: true,
            atoms: Some(500),
            ..Default::default()
        });
        let shown = app.gallery.open;
        app.save_settings();
        shown
    };
    assert!(open(None), "first launch: the examples are offered");
    assert!(!open(None), "second launch: not again");
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(saved.contains("examples_offered: true"), "{saved}");
    std::fs::remove_file(&path).unwrap();
    assert!(!open(Some("droplet")), "a scene named on the command line is opened instead");
    let (s, _) = Settings::load(&path);
    assert!(s.examples_offered);
    std::fs::remove_dir_all(&dir).ok();
}
