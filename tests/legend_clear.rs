//! The overlay never covers the tank in the app's own screenshots: the whole app, headless on
//! the CPU backend at its default window size, on the default tank (the atoms' speed colour
//! bar) and on twin_eddies.ron (which opens in the Flow view: the vorticity colour bar with its
//! window note, once a window is drawn). The tank's rectangle is measured apart from the
//! layout code, from the camera's projection of the box corners (grown by an atom's drawn
//! radius); the legends and the scale bar must lie outside it and inside the view, and the
//! screenshot must show them where the layout says (their pixels differ from the
//! background). Screenshots are kept in `target/legend-clear/` to look at.
//! Needs a wgpu adapter: without one it prints `skipped: no GPU adapter` (and fails when
//! ARGON_REQUIRE_RENDER=1, as CI sets).

use std::path::{Path, PathBuf};
use std::time::Duration;

use argon_sandbox::app::headless::Headless;
use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::render::offscreen::{Gpu, save_png};
use argon_sandbox::render::overlay_layout::{Legend, Strip};
use argon_sandbox::sim::BackendChoice;
use egui::{Rect, pos2};

fn gpu_ok() -> bool {
    match Gpu::headless() {
        Ok(_) => true,
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            println!("skipped: no GPU adapter ({e})");
            false
        }
    }
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/legend-clear");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn app(scene: Option<&str>) -> App {
    App::new(AppOptions {
        scene: scene.map(|s| Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes").join(s)),
        backend: Some(BackendChoice::Cpu),
        settings: Some(Settings { output_dir: Some(out_dir()), ..Settings::default() }),
        ..Default::default()
    })
}

/// The tank's rectangle in egui points, from the camera's projection of the box's x-y corners
/// (the front camera looks along -z), grown by the atoms' drawn radius.
fn tank_rect(h: &Headless) -> Rect {
    let a = &h.app;
    let b = a.sim_box();
    let r = a.settings.view.radius as f64;
    let (view, size) = (a.view_rect, a.view_size);
    let ppp = size[0] as f32 / view.width();
    let corner = |x: f64, y: f64| {
        let px = a.camera.tank_to_screen([x as f32, y as f32], size);
        pos2(view.left() + px[0] / ppp, view.top() + px[1] / ppp)
    };
    Rect::from_two_pos(corner(b.lo[0] - r, b.lo[1] - r), corner(b.hi[0] + r, b.hi[1] + r))
}

fn overlaps(a: Rect, b: Rect) -> bool {
    a.left() < b.right() && b.left() < a.right() && a.top() < b.bottom() && b.top() < a.bottom()
}

/// Checks the last frame: every block of the overlay outside the tank and inside the view,
/// and painted (a good share of its pixels unlike the background). Returns the strip used.
fn check_overlay(h: &mut Headless, name: &str, min_legends: usize) -> Strip {
    let (rgba, size) = h.screenshot().unwrap();
    save_png(&out_dir().join(format!("{name}.png")), &rgba, size).unwrap();
    let place = h.app.overlay.clone().expect("the view painted its overlay");
    let tank = tank_rect(h);
    let view = h.app.view_rect;
    assert!(view.contains_rect(tank), "{name}: the tank {tank:?} is not inside the view {view:?}");
    assert!(place.legends.len() >= min_legends, "{name}: {:?}", place.legends);
    assert_ne!(place.strip, Strip::Over, "{name}: the fitted view left no strip clear of the tank");
    let px = |p: egui::Pos2| {
        // One point is one pixel in the headless window.
        let (x, y) = (p.x.round() as usize, p.y.round() as usize);
        let i = 4 * (y * size[0] as usize + x);
        [rgba[i] as i32, rgba[i + 1] as i32, rgba[i + 2] as i32]
    };
    // The background: the commonest colour of the view outside the tank and the overlay.
    let mut counts = std::collections::HashMap::new();
    for y in (view.top() as i32 + 2..view.bottom() as i32 - 2).step_by(3) {
        for x in (view.left() as i32 + 2..view.right() as i32 - 2).step_by(3) {
            let p = pos2(x as f32, y as f32);
            if !tank.contains(p) && !place.area.contains(p) {
                *counts.entry(px(p)).or_insert(0usize) += 1;
            }
        }
    }
    let background = counts.into_iter().max_by_key(|(_, n)| *n).unwrap().0;
    let blocks: Vec<(String, Rect)> = place
        .legends
        .iter()
        .enumerate()
        .map(|(i, r)| (format!("legend {i}"), *r))
        .chain(place.scale.map(|r| ("scale bar".to_string(), r)))
        .collect();
    for (what, r) in blocks {
        assert!(!overlaps(r, tank), "{name}: the {what} {r:?} covers the tank {tank:?}");
        assert!(view.contains_rect(r), "{name}: the {what} {r:?} leaves the view {view:?}");
        let (mut painted, mut total) = (0, 0);
        for y in r.top() as i32..r.bottom() as i32 {
            for x in r.left() as i32..r.right() as i32 {
                let c = px(pos2(x as f32, y as f32));
                total += 1;
                if (0..3).map(|k| (c[k] - background[k]).abs()).sum::<i32>() > 60 {
                    painted += 1;
                }
            }
        }
        assert!(
            painted as f64 > 0.04 * total as f64,
            "{name}: the {what} at {r:?} is not painted there ({painted} of {total} pixels unlike the background {background:?})"
        );
    }
    place.strip
}

#[test]
fn the_default_tank_and_its_speed_legend_do_not_meet() {
    if !gpu_ok() {
        return;
    }
    let mut h = Headless::new(app(None), [1480, 900]).expect("a GPU adapter exists but the headless app failed");
    assert!(
        h.run_until(Duration::from_secs(60), |a| a.frame.is_some() && a.status.is_some()),
        "the scene did not load"
    );
    h.frame();
    h.frame();
    let content = h.app.overlay_content();
    assert!(matches!(content.legends[..], [Legend::Atoms { .. }]), "{:?}", content.legends);
    check_overlay(&mut h, "default_tank", 1);
    // The orbit camera's fit keeps a strip clear too.
    h.app.set_camera_mode(argon_sandbox::render::CameraMode::Orbit);
    h.frame();
    h.frame();
    let place = h.app.overlay.clone().unwrap();
    assert_ne!(place.strip, Strip::Over, "orbit: {place:?}");
}

#[test]
fn twin_eddies_flow_legend_stays_beside_the_tank() {
    if !gpu_ok() {
        return;
    }
    let mut h = Headless::new(app(Some("twin_eddies.ron")), [1480, 900])
        .expect("a GPU adapter exists but the headless app failed");
    // The scene opens in the Flow view; windows of 1 tau (250 steps) keep the test quick on
    // two busy cores.
    assert!(h.app.settings.view.flow.on, "twin_eddies opens in the Flow view");
    h.app.settings.flow_sampling.window_tau = 1.0;
    h.app.sync_flow_sampling();
    assert!(
        h.run_until(Duration::from_secs(120), |a| a.frame.is_some() && a.status.is_some()),
        "the scene did not load"
    );
    assert!(
        h.run_until(Duration::from_secs(400), |a| a.flow.windows >= 1 && a.flow.shows_newest()),
        "no flow-field window arrived: {:?}",
        h.app.messages
    );
    h.frame();
    h.frame();
    let content = h.app.overlay_content();
    assert!(matches!(&content.legends[..], [Legend::Flow { title: Some(t) }] if t.starts_with("vorticity")));
    let strip = check_overlay(&mut h, "twin_eddies_flow", 1);
    // The tank is twice as wide as high; the app's view is narrower than 2:1, so the row under
    // the tank costs nothing.
    assert_eq!(strip, Strip::Below);
}
