//! The app's default pace, the whole app loop headless (simulation thread, renderer, egui),
//! with lavapipe drawing on the same two cores the CPU backend steps on:
//! - **it fills the frames:** with a display the machine keeps (30 frames/s), the default
//!   pace steps as fast as the same simulation flat out in chunks of the same size, and the
//!   display keeps its rate;
//! - **it gives way:** with a display short of its target (a 240 Hz monitor drawn at 60), it
//!   rests part of each frame, stepping well below the same simulation flat out.
//!
//! Both are measured against the machine itself, in turns, not against a fixed rate: the
//! rates of a shared 2-core runner drift by a quarter from second to second.
//! Needs a wgpu adapter: without one it prints `skipped: no GPU adapter` (and fails when
//! ARGON_REQUIRE_RENDER=1, as CI sets).

use std::time::{Duration, Instant};

use argon_sandbox::app::commands::PaceMode;
use argon_sandbox::app::headless::Headless;
use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::sim::BackendChoice;

/// Frames drawn at most `hz` a second for `secs`; the display's frame rate and the
/// simulation's steps per second over them.
fn display_at(h: &mut Headless, hz: f64, secs: f64) -> (f64, f64) {
    let period = Duration::from_secs_f64(1.0 / hz);
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

/// The default pace against flat out in chunks of `chunk`, in turns of `secs` (two each,
/// after a second to settle), drawing at `hz`: (display rate under the default pace, its
/// steps/s, steps/s flat out).
fn fill_against_flat(h: &mut Headless, hz: f64, chunk: u64, secs: f64) -> (f64, f64, f64) {
    let (mut fps, mut fill, mut flat) = (f64::INFINITY, 0.0, 0.0);
    for _ in 0..2 {
        h.app.set_pace_mode(PaceMode::Unlimited);
        h.app.set_steps_per_frame(chunk);
        display_at(h, hz, 1.0);
        flat += display_at(h, hz, secs).1 / 2.0;
        h.app.set_pace_mode(PaceMode::Fill);
        display_at(h, hz, 1.0);
        let (f, s) = display_at(h, hz, secs);
        fps = fps.min(f);
        fill += s / 2.0;
    }
    (fps, fill, flat)
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

    // A display the machine keeps: the default pace takes all the time drawing leaves.
    h.app.set_display_target(30.0);
    display_at(&mut h, 30.0, 4.0);
    let (fps, settled) = display_at(&mut h, 30.0, 2.0);
    // Flat out in chunks as long as the pace's (two display frames).
    let chunk = (2.0 * settled / fps).round().max(1.0) as u64;
    let (fps, fill, flat) = fill_against_flat(&mut h, 30.0, chunk, 2.5);
    println!(
        "display at 30: {fps:.1} frames/s, default pace {fill:.0} steps/s, flat out {flat:.0} ({:.2})",
        fill / flat
    );
    assert!(fps >= 0.92 * 30.0, "the display fell to {fps:.1} of 30 frames/s under the default pace");
    // A fixed 10 steps a frame would be 300 steps/s here; resting 15 % of each frame fails.
    assert!(fill >= 0.9 * flat, "the default pace left time unused: {fill:.0} steps/s against {flat:.0} flat out");

    // A display short of its target: the pace rests part of each frame (down to half).
    h.app.set_display_target(240.0);
    display_at(&mut h, 60.0, 8.0);
    let (_, rested) = display_at(&mut h, 60.0, 3.0);
    h.app.set_pace_mode(PaceMode::Unlimited);
    display_at(&mut h, 60.0, 1.0);
    let (_, flat_60) = display_at(&mut h, 60.0, 3.0);
    println!("display at 60 of 240: default pace {rested:.0} steps/s, flat out {flat_60:.0} ({:.2})", rested / flat_60);
    assert!(
        rested <= 0.75 * flat_60,
        "the default pace did not give way: {rested:.0} steps/s against {flat_60:.0} flat out"
    );
}
