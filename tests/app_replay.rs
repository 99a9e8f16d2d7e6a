//! Instant replay in the running app: the stored frames are bit for bit the frames the view
//! drew; "resume from here" re-runs the original trajectory bit for bit (the CPU backend, with
//! a parameter change on the way re-applied at its step); the budget holds what was stored,
//! thinned when frames are large; "save the last N seconds" writes one PNG per 1/30 s; with
//! the wgpu backend on the renderer's device (lavapipe here) the frames are device copies of
//! the slots drawn, bit for bit. The first two run without a GPU (the egui_kittest harness);
//! the others need a wgpu adapter (`skipped: no GPU adapter` without one, a failure when
//! ARGON_REQUIRE_RENDER=1).

mod app_common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use app_common::{app_on, harness_of, until};
use argon_sandbox::app::App;
use argon_sandbox::app::commands::SimCommand;
use argon_sandbox::app::replay::ring::StoredPositions;
use argon_sandbox::sim::BackendChoice;
use egui_kittest::Harness;

type Frames = HashMap<u64, Vec<[f32; 4]>>;

/// Steps the harness, copying every new frame the view drew (by step).
fn step_recording(h: &mut Harness<'_, App>, drawn: &mut Frames, last: &mut usize) {
    h.step();
    let a = h.state();
    if let Some(f) = &a.frame
        && Arc::as_ptr(f) as *const u8 as usize != *last
    {
        *last = Arc::as_ptr(f) as *const u8 as usize;
        drawn.insert(a.frame_step, f.to_vec());
    }
    std::thread::sleep(Duration::from_millis(2));
}

/// The quadruples of the stored frame on display (host frames: the CPU backend).
fn shown(app: &mut App) -> (u64, Vec<[f32; 4]>) {
    let step = app.replay.shown().expect("a stored frame shows").step;
    let (positions, _, external) = app.view_data();
    assert!(external.is_none(), "the CPU backend's frames are host frames");
    (step, positions.expect("the view gets the stored frame").1.to_vec())
}

fn bit_equal(a: &[[f32; 4]], b: &[[f32; 4]]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| (0..4).all(|k| p[k].to_bits() == q[k].to_bits()))
}

#[test]
fn stored_frames_are_the_drawn_ones_and_resuming_reruns_the_trajectory_bit_for_bit() {
    let mut app = app_on(BackendChoice::Cpu, false, 2000);
    app.set_fixed_pace(10);
    let mut h = harness_of(app, [1200.0, 800.0]);
    app_common::loaded(&mut h);
    let (mut drawn, mut last) = (Frames::new(), 0usize);
    // Frames stored before the copying started are not compared.
    let first = h.state().replay.ring.iter().next_back().map_or(0, |f| f.id + 1);
    let end = Instant::now() + Duration::from_secs(120);
    while h.state().replay.ring.len() < 40 {
        assert!(Instant::now() < end, "frames were not stored");
        step_recording(&mut h, &mut drawn, &mut last);
    }
    // A parameter change on the way: a resume after it must re-apply it at its step.
    assert!(h.state_mut().set_target_kelvin(180.0));
    let changed_from = h.state().frame_step;
    while h.state().replay.ring.len() < 90 {
        assert!(Instant::now() < end, "frames were not stored");
        step_recording(&mut h, &mut drawn, &mut last);
    }
    h.state_mut().set_running(false);
    until(&mut h, 30.0, "the simulation to pause", |a| a.status.as_ref().is_some_and(|s| !s.running));
    for _ in 0..10 {
        step_recording(&mut h, &mut drawn, &mut last);
    }
    let app = h.state_mut();
    assert!(app.last_error().is_none(), "{:?}", app.last_error());
    assert_eq!(app.replay.ring.every, 1, "2000 atoms are never thinned");

    // Every stored frame is bit for bit the frame drawn at its step.
    let n = app.replay.ring.len();
    let mut checked = 0;
    for i in 0..n {
        app.replay_seek(i);
        if app.replay.shown().unwrap().id < first {
            continue;
        }
        let (step, q) = shown(app);
        let original = drawn.get(&step).unwrap_or_else(|| panic!("step {step} was stored but never drawn"));
        assert!(bit_equal(&q, original), "the stored frame at step {step} differs from the one drawn");
        checked += 1;
    }
    assert!(checked >= 85, "{checked} frames compared");

    // Resume from a frame after the temperature change, well inside the history.
    let keys = app.replay.states.key_steps();
    assert!(!keys.is_empty(), "no full state was kept");
    let steps: Vec<u64> = app.replay.ring.iter().map(|f| f.step).collect();
    let i = steps.iter().position(|&s| s > changed_from + 50).expect("frames after the change");
    let target = steps[i];
    // The original frames from there to the next keyframe (the run relisted its atoms there).
    let next_key = keys.iter().copied().find(|&k| k > target).unwrap_or(u64::MAX);
    let later: Vec<u64> = steps[i..].iter().copied().filter(|&s| s <= next_key).take(8).collect();
    assert!(later.len() >= 3, "too few frames after step {target} to compare");
    app.replay_seek(i);
    app.replay_resume();
    until(&mut h, 60.0, "the resume", |a| a.replay.resuming.is_none() && a.frame_step == target);
    let app = h.state();
    assert!(app.last_error().is_none(), "{:?}", app.last_error());
    assert!(app.replay.cursor.is_none(), "the view is live after a resume");
    assert!(app.replay.ring.iter().all(|f| f.step <= target), "the history after the frame was dropped");
    let t180 = argon_sandbox::units::kelvin_to_reduced(180.0);
    assert!((app.params.temperature - t180).abs() < 1e-12, "the parameters are those of the frame");
    let mut at = target;
    for &s in &later {
        if s > at {
            h.state_mut().sim.send(SimCommand::Step(s - at));
            until(&mut h, 60.0, "the step", |a| a.frame_step == s);
            at = s;
        }
        let a = h.state();
        let now = a.frame.as_ref().expect("a frame").to_vec();
        assert!(
            bit_equal(&now, &drawn[&s]),
            "the resumed run differs from the original at step {s} (resumed at {target})"
        );
    }
    assert!(at > target + 20, "the comparison covered steps {target}..{at} only");
}

#[test]
fn the_budget_holds_frames_and_states_and_thins_large_frames() {
    let mut app = app_on(BackendChoice::Cpu, false, 2000);
    // 1 MiB: 32 kB frames at 60 FPS would need 58 MB for 30 s, so about every 60th is kept
    // (a quarter of the budget goes to full states), and the oldest go after about 30 s.
    app.settings.replay_budget_mb = 1;
    let mut h = harness_of(app, [1000.0, 700.0]);
    app_common::loaded(&mut h);
    let budget = h.state().replay_budget();
    assert_eq!(budget, 1 << 20);
    let end = Instant::now() + Duration::from_secs(150);
    let mut evicted_seen = false;
    let mut first_id = None;
    while !evicted_seen {
        assert!(Instant::now() < end, "the ring never filled its budget");
        h.step();
        std::thread::sleep(Duration::from_millis(5));
        let a = h.state();
        let r = &a.replay;
        assert!(r.ring.bytes() + r.states.bytes() <= budget, "frames and states exceed the budget");
        if first_id.is_none() {
            first_id = r.ring.get(0).map(|f| f.id);
        }
        evicted_seen = first_id.is_some() && r.ring.get(0).map(|f| f.id) != first_id;
    }
    let r = &h.state().replay;
    assert!(r.ring.every >= 2, "frames of 32 kB in 1 MiB are thinned (every {})", r.ring.every);
    assert!(
        r.ring.len() >= 10 && r.ring.len() <= 32,
        "{} frames, {} states of {} bytes",
        r.ring.len(),
        r.states.keyframes(),
        r.states.bytes()
    );
    // Budget 0 turns the replay off and frees what it held.
    h.state_mut().settings.replay_budget_mb = 0;
    h.step();
    h.step();
    assert!(h.state().replay.ring.is_empty() && h.state().replay.states.bytes() == 0);
}

#[test]
fn saving_the_last_second_writes_thirty_one_png_frames() {
    use argon_sandbox::app::AppOptions;
    use argon_sandbox::app::headless::Headless;
    use argon_sandbox::app::settings::Settings;
    let app = App::new(AppOptions {
        backend: Some(BackendChoice::Cpu),
        settings: Some(Settings::default()),
        atoms: Some(1000),
        ..Default::default()
    });
    let mut h = match Headless::new(app, [640, 400]) {
        Ok(h) => h,
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            println!("skipped: no GPU adapter ({e})");
            return;
        }
    };
    assert!(h.run_until(Duration::from_secs(120), |a| a.replay.seconds() >= 1.5), "1.5 s were not stored");
    let plan = argon_sandbox::app::replay::save::plan(&h.app.replay.ring, 1.0);
    assert_eq!(plan.len(), 31, "one frame per 1/30 s from the newest back over 1 s");
    assert!(plan.windows(2).all(|w| w[0].at <= w[1].at));
    assert!(matches!(plan[0].positions, StoredPositions::Host(_)));
    let dir = std::env::temp_dir().join(format!("argon-replay-save-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    h.app.replay_save(dir.clone(), 1.0);
    assert!(h.app.replay.save.is_some(), "{:?}", h.app.last_error());
    // The live run goes on while the frames are written.
    let step = h.app.frame_step;
    assert!(h.run_until(Duration::from_secs(120), |a| a.replay.save.is_none()), "the save did not finish");
    assert!(h.app.last_error().is_none(), "{:?}", h.app.last_error());
    assert!(h.app.frame_step > step, "the simulation ran on while saving");
    let pngs = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "png"))
        .count();
    assert_eq!(pngs, 31);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gpu_frames_are_copied_on_the_device_and_equal_the_drawn_slots() {
    use argon_sandbox::app::AppOptions;
    use argon_sandbox::app::headless::Headless;
    use argon_sandbox::app::replay::gpu::read_back;
    use argon_sandbox::app::settings::Settings;
    let settings = Settings { show_plots: false, ..Settings::default() };
    let opts = AppOptions {
        backend: Some(BackendChoice::Wgpu),
        settings: Some(settings),
        atoms: Some(1000),
        ..Default::default()
    };
    let mut h = match Headless::start(opts, [480, 320]) {
        Ok(h) => h,
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            println!("skipped: no GPU adapter ({e})");
            return;
        }
    };
    let zero = |a: &App| a.status.as_ref().is_some_and(|s| s.position_path == "zero-copy (same device)");
    if !h.run_until(Duration::from_secs(60), zero) {
        println!(
            "skipped: the wgpu backend does not run zero-copy here ({:?})",
            h.app.status.as_ref().map(|s| s.why.clone())
        );
        return;
    }
    let (device, queue) = (h.gpu.device.clone(), h.gpu.queue.clone());
    let mut drawn = Frames::new();
    let end = Instant::now() + Duration::from_secs(120);
    let gpu_frames = |a: &App| a.replay.ring.iter().filter(|f| matches!(f.positions, StoredPositions::Gpu(..))).count();
    while gpu_frames(&h.app) < 30 {
        assert!(Instant::now() < end, "GPU frames were not stored: {:?}", h.app.last_error());
        h.frame();
        let i = h.app.interop.as_ref().expect("zero-copy buffers");
        if let Some(f) = i.slots.displayed() {
            drawn
                .entry(f.step)
                .or_insert_with(|| read_back(&device, &queue, &i.buffers[f.slot], f.n_atoms as u32).unwrap());
        }
    }
    let mut compared = 0;
    for f in h.app.replay.ring.iter() {
        // Frames drawn by host staging before zero-copy started are host frames.
        let StoredPositions::Gpu(buffer, n) = &f.positions else { continue };
        let stored = read_back(&device, &queue, buffer, *n).unwrap();
        if let Some(original) = drawn.get(&f.step) {
            assert!(bit_equal(&stored, original), "the stored frame at step {} differs from the slot drawn", f.step);
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} stored frames were compared");
    // Scrubbing points the view at the ring's buffer.
    let last = h.app.replay.ring.len() - 1;
    h.app.replay_seek(last);
    let atoms = h.app.status.as_ref().unwrap().n_atoms as u32;
    let (_, _, external) = h.app.view_data();
    assert!(external.is_some_and(|(seq, _, n)| seq >= argon_sandbox::app::replay::REPLAY_SEQ && n == atoms));
}
