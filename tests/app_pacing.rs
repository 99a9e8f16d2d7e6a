//! The app's default pace on a contended machine: the whole app loop headless (simulation
//! thread, renderer, egui) with a display that asks for 60 frames per second. The simulation
//! fills each frame (its step rate far above a fixed 10 steps a frame) while the display keeps
//! at least 55 frames per second: where the simulation's cores or GPU are the renderer's too
//! (here lavapipe draws on the same two cores the CPU backend steps on), the pace gives way.
//! Needs a wgpu adapter: without one it prints `skipped: no GPU adapter` (and fails when
//! ARGON_REQUIRE_RENDER=1, as CI sets).

use std::time::{Duration, Instant};

use argon_sandbox::app::commands::PaceMode;
use argon_sandbox::app::headless::Headless;
use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::sim::BackendChoice;

/// Frames drawn at most 60 a second for `secs`; the display's frame rate and the simulation's
/// steps per second over them.
fn display_at_60(h: &mut Headless, secs: f64) -> (f64, f64) {
    let period = Duration::from_secs_f64(1.0 / 60.0);
    let (t0, s0) = (Instant::now(), h.app.frame_step);
    let mut due = Instant::now();
    let mut frames = 0u32;
    while t0.elapsed().as_secs_f64() < secs {
        due += period;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        } else if due + period * 3 < Instant::now() {
            due = Instant::now();
        }
        h.frame();
        frames += 1;
    }
    let dt = t0.elapsed().as_secs_f64();
    (frames as f64 / dt, (h.app.frame_step - s0) as f64 / dt)
}

#[test]
fn the_default_pace_fills_frames_and_the_display_keeps_55_fps() {
    let settings = Settings { show_plots: false, show_controls: false, ..Settings::default() };
    let app = App::new(AppOptions {
        backend: Some(BackendChoice::Cpu),
        settings: Some(settings),
        atoms: Some(3000),
        ..Default::default()
    });
    let mut h = match Headless::new(app, [320, 200]) {
        Ok(h) => h,
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            println!("skipped: no GPU adapter ({e})");
            return;
        }
    };
    assert!(h.run_until(Duration::from_secs(60), |a| a.frame.is_some()), "the scene did not load");
    assert_eq!(h.app.pace.mode, PaceMode::Fill, "the default pace");
    // Settle: the pacer sizes its chunks and, if the display falls short, gives way.
    display_at_60(&mut h, 4.0);
    let (fps, steps_per_s) = display_at_60(&mut h, 4.0);
    // What a fixed pace of 10 steps a frame would give at this frame rate.
    let fixed = 10.0 * fps;
    println!("default pace: {fps:.1} frames/s, {steps_per_s:.0} steps/s ({:.1} a frame)", steps_per_s / fps);
    assert!(fps >= 55.0, "the display fell to {fps:.1} frames/s under the default pace");
    assert!(steps_per_s > 3.0 * fixed, "the simulation did not fill the frames: {steps_per_s:.0} steps/s");
}
