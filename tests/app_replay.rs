//! Instant replay in the running app: the stored frames are bit for bit the frames the view
//! drew; "resume from here" re-runs the original trajectory bit for bit past three or more of
//! its keyframes, each re-taken at its step (the CPU backend, with a parameter change, a dye
//! rake and a piston drag on the way re-applied at their steps, the rake and the drag still in
//! force at the frame though ended before the resume); the budget holds what was stored,
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
use argon_sandbox::app::dye::DyeKind;
use argon_sandbox::app::replay::ring::StoredPositions;
use argon_sandbox::app::replay::states::ReplayCommand;
use argon_sandbox::render::ColourBy;
use argon_sandbox::sim::BackendChoice;
use egui_kittest::Harness;

type Frames = HashMap<u64, Vec<[f32; 4]>>;
/// Every distinct frame drawn at each step, in order (an edit publishes its step again).
type Drawn = HashMap<u64, Vec<Vec<[f32; 4]>>>;

/// What the view drew and the telemetry said, by step.
#[derive(Default)]
struct Seen {
    drawn: Drawn,
    /// The last frame copied (its address).
    last: usize,
    /// The piston's height in the telemetry.
    piston: HashMap<u64, f64>,
}

/// Steps the harness, copying every new frame the view drew (by step) and the piston's height.
fn step_recording(h: &mut Harness<'_, App>, seen: &mut Seen) {
    h.step();
    let a = h.state();
    if let Some(f) = &a.frame
        && Arc::as_ptr(f) as *const u8 as usize != seen.last
    {
        seen.last = Arc::as_ptr(f) as *const u8 as usize;
        let at = seen.drawn.entry(a.frame_step).or_default();
        if at.last().is_none_or(|l| !bit_equal(l, f)) {
            at.push(f.to_vec());
        }
    }
    if let Some(t) = &a.last_telemetry
        && let Some(p) = &t.piston
    {
        seen.piston.insert(t.step, p.height);
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

/// Keyframes every this many steps in the resume test: not a multiple of the 10 steps a frame,
/// so most fall inside a chunk, which the simulation thread must split there.
const EVERY: u64 = 37;

#[test]
fn stored_frames_are_the_drawn_ones_and_resuming_reruns_the_trajectory_bit_for_bit() {
    let mut app = app_on(BackendChoice::Cpu, false, 2000);
    app.set_fixed_pace(10);
    let mut h = harness_of(app, [1200.0, 800.0]);
    app_common::loaded(&mut h);
    let app = h.state_mut();
    app.sim.send(SimCommand::Replay(ReplayCommand::Every(Some(EVERY))));
    // The frames' fourth value is each atom's tag: the rake's work is compared too.
    app.set_colour_by(ColourBy::Dye);
    app.set_piston(true);
    let mut seen = Seen::default();
    // Frames stored before the copying started are not compared.
    let first = h.state().replay.ring.iter().next_back().map_or(0, |f| f.id + 1);
    let end = Instant::now() + Duration::from_secs(120);
    while h.state().replay.ring.len() < 30 {
        assert!(Instant::now() < end, "frames were not stored");
        step_recording(&mut h, &mut seen);
    }
    // Controls changed on the way, each logged with its step, none taking a keyframe: the
    // temperature, a dye rake through the middle of the fluid, the piston dragged down. A
    // resume after them must re-apply them at their steps.
    let app = h.state_mut();
    assert!(app.params.piston.is_some(), "the piston is on: {:?}", app.last_error());
    assert!(app.set_target_kelvin(180.0));
    let b = app.sim_box();
    let mid = [0.5 * (b.lo[0] + b.hi[0]) + 0.0123, 0.5 * (b.lo[1] + b.hi[1])];
    app.add_dye(DyeKind::Rake { a: [mid[0], mid[1] - 4.0], b: [mid[0], mid[1] + 4.0] });
    // Straight to the simulation: the view releases a drag the pointer does not hold.
    app.sim.send(SimCommand::DragPiston(Some(b.hi[1] - 3.0)));
    let changed_from = app.frame_step;
    while h.state().replay.ring.len() < 130 {
        assert!(Instant::now() < end, "frames were not stored");
        step_recording(&mut h, &mut seen);
    }
    // The rake and the drag end: a resume from before must restore both as they were.
    let app = h.state_mut();
    app.sim.send(SimCommand::DragPiston(None));
    app.clear_dye(None);
    let ended_at = app.frame_step;
    for _ in 0..10 {
        step_recording(&mut h, &mut seen);
    }
    h.state_mut().set_running(false);
    until(&mut h, 30.0, "the simulation to pause", |a| a.status.as_ref().is_some_and(|s| !s.running));
    for _ in 0..10 {
        step_recording(&mut h, &mut seen);
    }
    let app = h.state_mut();
    assert!(app.last_error().is_none(), "{:?}", app.last_error());
    assert_eq!(app.replay.ring.every, 1, "2000 atoms are never thinned");
    let (drawn, original_piston) = (std::mem::take(&mut seen.drawn), std::mem::take(&mut seen.piston));

    // Every stored frame is bit for bit a frame drawn at its step.
    let n = app.replay.ring.len();
    let mut checked = 0;
    for i in 0..n {
        app.replay_seek(i);
        if app.replay.shown().unwrap().id < first {
            continue;
        }
        let (step, q) = shown(app);
        let original = drawn.get(&step).unwrap_or_else(|| panic!("step {step} was stored but never drawn"));
        assert!(original.iter().any(|o| bit_equal(&q, o)), "the stored frame at step {step} differs from those drawn");
        checked += 1;
    }
    assert!(checked >= 125, "{checked} frames compared");

    // Resume from a frame after the changes, well inside the history, with at least three
    // keyframes of the original between it and the end of the rake and drag.
    let keys = app.replay.states.key_steps();
    let steps: Vec<u64> = app.replay.ring.iter().map(|f| f.step).collect();
    let i = steps.iter().position(|&s| s > changed_from + 50).expect("frames after the changes");
    let target = steps[i];
    let later: Vec<u64> = steps[i..].iter().copied().filter(|&s| s < ended_at).collect();
    let passed: Vec<u64> = keys.iter().copied().filter(|&k| k > target && k < ended_at).collect();
    assert!(passed.len() >= 3, "keyframes after step {target} before {ended_at}: {passed:?}");
    // Periodic keyframes fall on the schedule: EVERY steps apart.
    assert!(passed.windows(2).all(|w| w[1] - w[0] == EVERY), "keyframes at {passed:?}");
    // Tags are compared: the rake tagged atoms before the frame and after it.
    // Before the end of the rake and drag, one frame was drawn at each step.
    assert!(later.iter().all(|s| drawn[s].len() == 1), "frames drawn twice at a step before {ended_at}");
    let tagged = |s: u64| drawn[&s][0].iter().filter(|q| q[3] != 0.0).count();
    assert!(tagged(target) > 0 && tagged(*later.last().unwrap()) > tagged(target), "the rake tagged no atoms");
    app.replay_seek(i);
    app.replay_resume();
    until(&mut h, 60.0, "the resume", |a| a.replay.resuming.is_none() && a.frame_step == target);
    let app = h.state();
    assert!(app.last_error().is_none(), "{:?}", app.last_error());
    assert!(app.replay.cursor.is_none(), "the view is live after a resume");
    assert!(app.replay.ring.iter().all(|f| f.step <= target), "the history after the frame was dropped");
    let t180 = argon_sandbox::units::kelvin_to_reduced(180.0);
    assert!((app.params.temperature - t180).abs() < 1e-12, "the parameters are those of the frame");
    // Every original frame from there to the end of the rake and drag, past three or more of
    // the original's keyframes, each one re-taken by the resumed run at its step.
    let mut at = target;
    for &s in &later {
        if s > at {
            h.state_mut().sim.send(SimCommand::Step(s - at));
            until(&mut h, 60.0, "the step", |a| a.frame_step == s);
            step_recording(&mut h, &mut seen);
            at = s;
        }
        let a = h.state();
        let now = a.frame.as_ref().expect("a frame").to_vec();
        assert!(
            bit_equal(&now, &drawn[&s][0]),
            "the resumed run differs from the original at step {s} (resumed at {target}, keyframes at {passed:?})"
        );
    }
    assert!(at >= passed[2] + 10, "the comparison covered steps {target}..{at} only");
    // The piston went where the original's did: the drag in force at the frame was restored.
    let mut heights = 0;
    for (s, y) in &seen.piston {
        if *s > target && *s < ended_at {
            let want = original_piston.get(s).unwrap_or_else(|| panic!("no telemetry at step {s} in the original"));
            assert_eq!(y.to_bits(), want.to_bits(), "the piston at step {s}: {y} resumed, {want} originally");
            heights += 1;
        }
    }
    assert!(heights >= 3, "{heights} piston heights compared");
    // A keyframe reaches the app in a report of its own, which can come after the frame of
    // its step: wait for those of the steps run.
    let due: Vec<u64> = passed.iter().copied().filter(|&k| k <= at).collect();
    let all_kept = |a: &App| {
        let kept = a.replay.states.key_steps();
        due.iter().all(|k| kept.contains(k))
    };
    if !all_kept(h.state()) {
        until(&mut h, 30.0, "the resumed run's keyframes", all_kept);
    }
    let retaken = h.state().replay.states.key_steps();
    assert!(due.iter().all(|k| retaken.contains(k)), "the resumed run kept states at {retaken:?}, not at {passed:?}");
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

/// `bench --interactive --replay scrub` (the H200's measurement of scrubbing at 60 FPS, run
/// briefly here): once the replay holds frames, every timed display frame seeks another stored
/// frame as the timeline's slider does, and the view is drawn from the very frame sought
/// (checked through the sequence number the view's image was drawn from, not the cursor); the
/// FPS, the frame-time percentiles and the live run's steps per frame are printed. With the
/// Flow view's dye-fraction layer and the bench's dye drawn (`--layer dye --dye`) too.
#[test]
fn bench_scrubs_the_replay_and_shows_stored_frames() {
    if let Err(e) = argon_sandbox::render::offscreen::Gpu::headless() {
        assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
        println!("skipped: no GPU adapter ({e})");
        return;
    }
    let bench = |extra: &[&str]| {
        // ARGON_BIN where set: the binary staged on the GPU machine.
        let bin = std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string());
        let out = std::process::Command::new(bin)
            .args(["bench", "--interactive", "--n", "500", "--backend", "wgpu", "--precision", "single"])
            .args(["--replay", "scrub", "--frames", "24", "--repeats", "1", "--size", "800x500"])
            .args(extra)
            .output()
            .expect("the binary runs");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{text}");
        text
    };
    let text = bench(&["--json"]);
    let line = text.lines().find(|l| l.starts_with('{')).unwrap_or_else(|| panic!("no JSON line: {text}"));
    let r: serde_json::Value = serde_json::from_str(line).unwrap();
    let s = &r["scrub"];
    let (stored, frames) = (s["stored"].as_u64().unwrap(), s["frames"].as_u64().unwrap());
    assert!(stored >= 2 && frames == 24, "{text}");
    assert_eq!(s["shown"].as_u64(), Some(frames), "a frame's view was not drawn from the stored frame sought: {text}");
    assert!(s["distinct"].as_u64().unwrap() >= frames.min(stored) / 2, "the scrub hardly moved: {text}");
    let ms: Vec<f64> =
        ["p50", "p95", "p99", "max"].iter().map(|p| r[format!("frame_ms_{p}")].as_f64().unwrap()).collect();
    assert!(ms[0] > 0.0 && ms.windows(2).all(|w| w[0] <= w[1]), "percentiles {ms:?}: {text}");
    assert!(r["fps"].as_f64() > Some(0.0) && r["steps_per_frame"].as_f64() > Some(0.0), "{text}");
    // The table line, with the Flow view's dye layer over drawn dye.
    let text = bench(&["--flow-view", "--layer", "dye", "--dye"]);
    let row = text.lines().find(|l| l.contains("scrubbing")).unwrap_or_else(|| panic!("no scrub line: {text}"));
    assert!(row.contains("flow view (dye)") && row.contains(" / dye / "), "{row}");
    assert!(row.contains("of 24 frames showed the one sought") && row.contains("p99"), "{row}");
}
