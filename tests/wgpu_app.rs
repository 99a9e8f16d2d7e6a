//! The wgpu backend in the app: on the renderer's device, drawn zero-copy; Auto's choice
//! and the sentence saying why; live switches between backends through the simulation
//! thread keeping the state; an edit the wgpu backend does not run moving the system to one
//! that does. On whatever adapter wgpu finds (CI: lavapipe, a software adapter; nothing here
//! needs a hardware GPU). Without an adapter each test prints `skipped: no wgpu adapter` and
//! passes, unless ARGON_REQUIRE_RENDER=1 makes that a failure; CUDA parts print
//! `skipped: no CUDA device` without one.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use argon_sandbox::app::commands::{Pace, SimCommand, SimReport, SimStatus, SnapshotPurpose};
use argon_sandbox::app::headless::Headless;
use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::sim_thread::SimHandle;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::physics::params::Thermostat;
use argon_sandbox::physics::real::Precision;
use argon_sandbox::render::offscreen::Gpu;
use argon_sandbox::scene::Scene;
use argon_sandbox::scene::reinit::{InitialState, reinitialise};
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::gpu::GpuBackend;
use argon_sandbox::sim::gpu::device::SimDevice;
use argon_sandbox::sim::{Backend, BackendChoice, CaughtAtoms, ColourScalar, PositionTarget, Snapshot};

/// The headless renderer's device, also as the simulation sees it; None (skipped) without an
/// adapter.
fn gpu() -> Option<(Gpu, Arc<SimDevice>)> {
    match Gpu::headless_with(argon_sandbox::sim::gpu::device::wanted_features) {
        Ok(g) => {
            let d = SimDevice::shared(g.device.clone(), g.queue.clone(), g.adapter.get_info()).unwrap();
            Some((g, Arc::new(d)))
        }
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            eprintln!("skipped: no wgpu adapter ({e})");
            None
        }
    }
}

fn cuda() -> bool {
    match argon_sandbox::sim::cuda::device::open() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped: no CUDA device ({e})");
            false
        }
    }
}

/// The default tank re-initialised to `n` atoms, in single precision (the wgpu backend's),
/// without its obstacle.
fn small_scene(n: usize) -> Scene {
    let mut s = tank_with_obstacle(n);
    s.obstacles.clear();
    s
}

/// The default tank re-initialised to `n` atoms, in single precision, with its obstacle.
fn tank_with_obstacle(n: usize) -> Scene {
    let mut s = reinitialise(&argon_sandbox::scene::default_scene(), n, InitialState::LiquidSlab).unwrap();
    s.precision = Some(Precision::Single);
    s
}

fn read_buffer(gpu: &Gpu, buffer: &wgpu::Buffer, bytes: u64) -> Vec<[f32; 4]> {
    bytemuck::pod_collect_to_vec(&common::read_gpu_buffer(gpu, buffer, bytes))
}

/// |a - b| within f32 round-off of the larger magnitude.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 2.0 * f32::EPSILON as f64 * a.abs().max(b.abs()).max(1e-30)
}

#[test]
fn publish_on_the_renderers_device_equals_the_host_copy_bit_for_bit() {
    let Some((g, dev)) = gpu() else { return };
    let setup = small_scene(800).build().unwrap();
    let mut b = GpuBackend::on_device(dev, setup.sim_box, setup.params.clone(), &setup.atoms, None).unwrap();
    b.advance(30).unwrap();
    let n = b.n_atoms();
    let state = b.copy_state().unwrap();
    let buffer = argon_sandbox::interop::Interop::same_device(&g.device, n + 5).buffers[1].clone();
    for colour in [
        ColourScalar::Speed,
        ColourScalar::KineticEnergy,
        ColourScalar::Height,
        ColourScalar::Species,
        ColourScalar::Dye,
    ] {
        b.write_positions(PositionTarget::Buffer { buffer: &buffer, len: n + 5 }, colour).unwrap();
        let shown = read_buffer(&g, &buffer, (n * 16) as u64);
        let mut host = vec![[f32::NAN; 4]; n];
        b.write_positions(PositionTarget::Host(&mut host), colour).unwrap();
        for (k, (s, h)) in shown.iter().zip(&host).enumerate() {
            assert_eq!(s.map(f32::to_bits), h.map(f32::to_bits), "{colour:?}: atom {k}: buffer {s:?}, host {h:?}");
        }
        // At each atom's canonical index, with CUDA's and the CPU's colour scalars.
        for (k, s) in shown.iter().enumerate() {
            let (p, v, t) = (state.atoms.positions[k], state.atoms.velocities[k], state.atoms.types[k]);
            for q in 0..3 {
                assert_eq!(s[q], p[q] as f32, "{colour:?}: atom {k} is not at its canonical index");
            }
            let v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            let want = match colour {
                ColourScalar::Speed => v2.sqrt(),
                ColourScalar::KineticEnergy => 0.5 * setup.params.species[t as usize].mass * v2,
                ColourScalar::Height => p[1],
                ColourScalar::Species => t as f64,
                ColourScalar::Dye => 0.0,
            };
            assert!(close(s[3] as f64, want), "{colour:?}: atom {k}: {} against {want}", s[3]);
        }
    }
    // Too small a buffer, or one of another device, is refused with a reason.
    let other = Gpu::headless().unwrap();
    let foreign = argon_sandbox::interop::Interop::same_device(&other.device, n).buffers[0].clone();
    let e = b.write_positions(PositionTarget::Buffer { buffer: &foreign, len: n }, ColourScalar::Speed).unwrap_err();
    assert!(e.to_string().contains("cannot write that position buffer"), "{e}");
    let e = b.write_positions(PositionTarget::Buffer { buffer: &buffer, len: n - 1 }, ColourScalar::Speed).unwrap_err();
    assert!(e.to_string().contains("holds"), "{e}");
}

#[test]
fn the_app_draws_the_wgpu_backend_zero_copy_from_the_same_device() {
    let Some(_) = gpu() else { return };
    let settings = Settings { show_plots: false, ..Settings::default() };
    let mut opts = AppOptions { backend: Some(BackendChoice::Wgpu), settings: Some(settings), ..Default::default() };
    let dir = std::env::temp_dir().join(format!("argon-wgpu-app-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("small.ron");
    std::fs::write(&path, small_scene(1000).to_ron()).unwrap();
    opts.scene = Some(path);
    let mut h = Headless::start(opts, [480, 320]).unwrap();
    let zero = |a: &App| a.status.as_ref().is_some_and(|s| s.position_path == "zero-copy (same device)");
    assert!(
        h.run_until(Duration::from_secs(60), |a| zero(a) && a.status.as_ref().is_some_and(|s| s.step > 20)),
        "zero-copy did not start: {:?} / {} / {:?}",
        h.app.status.as_ref().map(|s| (s.info.kind, s.position_path, s.why.clone())),
        h.app.interop_note,
        h.app.last_error()
    );
    let s = h.app.status.clone().unwrap();
    assert_eq!(s.info.kind, "wgpu");
    assert!(s.why.starts_with("wgpu backend, as asked"), "{}", s.why);
    assert!(h.app.interop.as_ref().is_some_and(|i| i.is_same_device()));
    // The status bar names the adapter and API; its hover text says why this backend runs.
    let text = argon_sandbox::ui::status::status_text(&h.app);
    assert!(text.contains(&s.info.device) && s.info.device.contains("Vulkan"), "{text}");
    assert!(text.contains("positions: zero-copy (same device)"), "{text}");
    assert!(s.device_bytes.is_some_and(|b| b > 16 * s.n_atoms), "{:?}", s.device_bytes);
    // Paused, the slot on display and the host copy published at the same step hold the same
    // bits, and the simulation's state.
    h.app.set_running(false);
    assert!(h.run_until(Duration::from_secs(30), |a| a.status.as_ref().is_some_and(|s| !s.running)));
    std::thread::sleep(Duration::from_millis(300));
    h.app.sim.send(SimCommand::SetColour(ColourScalar::Speed));
    for _ in 0..5 {
        h.frame();
    }
    h.app.sim.send(SimCommand::TakeSnapshot(SnapshotPurpose::Undo(9999)));
    let snap = snapshot_of(&h.app.sim);
    for _ in 0..3 {
        h.frame();
    }
    let i = h.app.interop.as_ref().unwrap();
    let d = i.slots.displayed().unwrap();
    assert_eq!((d.step, d.n_atoms), (snap.step, snap.atoms.len()), "the display is not the paused state");
    let shown = read_buffer(&h.gpu, &i.buffers[d.slot], (d.n_atoms * 16) as u64);
    let host = h.app.frame.clone().expect("a host copy");
    assert_eq!(host.len(), shown.len());
    for (k, (s, c)) in shown.iter().zip(host.iter()).enumerate() {
        assert_eq!(s.map(f32::to_bits), c.map(f32::to_bits), "atom {k}: slot {s:?}, host copy {c:?}");
        for q in 0..3 {
            assert_eq!(s[q], snap.atoms.positions[k][q] as f32, "atom {k}");
        }
    }
    assert!(h.app.last_error().is_none(), "{:?}", h.app.last_error());
}

/// An app started before the renderer's device exists (its wgpu backend on a device of its
/// own) moves the backend onto that device when it is handed over, state kept, and draws it
/// zero-copy from then on.
#[test]
fn a_running_wgpu_backend_moves_onto_the_renderers_device() {
    let Some(_) = gpu() else { return };
    let dir = std::env::temp_dir().join(format!("argon-wgpu-move-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("small.ron");
    std::fs::write(&path, small_scene(500).to_ron()).unwrap();
    let settings = Settings { show_plots: false, ..Settings::default() };
    let app = App::new(AppOptions {
        backend: Some(BackendChoice::Wgpu),
        settings: Some(settings),
        scene: Some(path),
        paused: true,
        ..Default::default()
    });
    // Headless::new hands its device over to an app already running.
    let mut h = Headless::new(app, [320, 200]).unwrap();
    let zero = |a: &App| a.status.as_ref().is_some_and(|s| s.position_path == "zero-copy (same device)");
    assert!(
        h.run_until(Duration::from_secs(60), zero),
        "{:?} / {}",
        h.app.status.as_ref().map(|s| (s.info.kind, s.position_path)),
        h.app.interop_note
    );
    let s = h.app.status.clone().unwrap();
    assert!(s.on_render_device && s.step == 0 && !s.running, "{s:?}");
    assert!(h.app.last_error().is_none(), "{:?}", h.app.last_error());
}

fn snapshot_of(h: &SimHandle) -> Box<Snapshot> {
    wait_for(h, "a snapshot", |r| match r {
        SimReport::Snapshot { snapshot, .. } => Some(snapshot),
        _ => None,
    })
}

fn wait_for<T>(h: &SimHandle, what: &str, mut pick: impl FnMut(SimReport) -> Option<T>) -> T {
    let end = Instant::now() + Duration::from_secs(60);
    while Instant::now() < end {
        if let Some(r) = h.wait(Duration::from_millis(200)) {
            if let SimReport::Error(e) = &r {
                panic!("waiting for {what}: {e}");
            }
            if let Some(t) = pick(r) {
                return t;
            }
        }
    }
    panic!("no {what} within a minute");
}

fn status_on(h: &SimHandle, kind: &str) -> Box<SimStatus> {
    wait_for(h, kind, |r| match r {
        SimReport::Status(s) if s.info.kind == kind => Some(s),
        _ => None,
    })
}

fn snapshot(h: &SimHandle) -> Box<Snapshot> {
    h.send(SimCommand::TakeSnapshot(SnapshotPurpose::Undo(1)));
    snapshot_of(h)
}

/// Same step, time, box and atoms (to f32 round-off: the wgpu backend holds f32).
fn assert_same(a: &Snapshot, b: &Snapshot, what: &str) {
    assert_eq!((a.step, a.time, a.atoms.len()), (b.step, b.time, b.atoms.len()), "{what}");
    assert_eq!(a.atoms.types, b.atoms.types, "{what}");
    for k in 0..a.atoms.len() {
        for q in 0..3 {
            let (p, r) = (a.atoms.positions[k][q], b.atoms.positions[k][q]);
            let (v, w) = (a.atoms.velocities[k][q], b.atoms.velocities[k][q]);
            assert!(close(p, r) && close(v, w), "{what}: atom {k}: x {p} / {r}, v {v} / {w}");
        }
    }
}

#[test]
fn live_switches_between_the_backends_keep_the_state() {
    let Some(_) = gpu() else { return };
    let h = SimHandle::spawn(small_scene(600), BackendChoice::Cpu, Pace::unlimited(10), ColourScalar::Speed, false);
    status_on(&h, "cpu");
    h.send(SimCommand::Step(15));
    let mut before = snapshot(&h);
    let mut route = vec![(BackendChoice::Wgpu, "wgpu"), (BackendChoice::Cpu, "cpu")];
    if cuda() {
        route.extend([(BackendChoice::Cuda, "cuda"), (BackendChoice::Wgpu, "wgpu"), (BackendChoice::Cuda, "cuda")]);
    }
    for (choice, kind) in route {
        h.send(SimCommand::SwitchBackend(choice));
        status_on(&h, kind);
        let after = snapshot(&h);
        assert_same(&before, &after, &format!("switching to {kind}"));
        assert!(after.step > 0);
        // It runs on from there.
        h.send(SimCommand::Step(10));
        before = snapshot(&h);
        assert_eq!(before.step, after.step + 10, "{kind} did not step");
    }
}

/// The default tank with hybrid Monte Carlo, which the wgpu backend does not run yet.
fn scene_wgpu_does_not_run(n: usize) -> Scene {
    let mut s = small_scene(n);
    s.thermostat = Thermostat::Hmc { trajectory: 10 };
    s
}

/// An obstacle drawn while the wgpu backend runs stays on it (obstacles run there); a
/// parameter change it does not run (hybrid Monte Carlo) moves the system, state kept, to the
/// backend Auto takes otherwise, and says so.
#[test]
fn an_edit_the_wgpu_backend_does_not_run_moves_the_system_to_a_backend_that_runs_it() {
    let Some(_) = gpu() else { return };
    let h = SimHandle::spawn(small_scene(600), BackendChoice::Wgpu, Pace::unlimited(10), ColourScalar::Speed, false);
    status_on(&h, "wgpu");
    h.send(SimCommand::Step(10));
    let before = snapshot(&h);
    let shape = Shape::Circle { centre: [before.sim_box.lo[0] + 3.0, before.sim_box.lo[1] + 3.0], radius: 1.0 };
    h.send(SimCommand::SetObstacles { shapes: vec![shape], caught: CaughtAtoms::PushOut });
    let s = wait_for(&h, "the status with the obstacle", |r| match r {
        SimReport::Status(s) if s.n_obstacles == 1 => Some(s),
        _ => None,
    });
    assert_eq!(s.info.kind, "wgpu", "obstacles run on wgpu: {}", s.why);
    let mut params = s.params.clone();
    params.thermostat = Thermostat::Hmc { trajectory: 10 };
    h.send(SimCommand::SetParams(Box::new(params)));
    let notice = wait_for(&h, "the switch notice", |r| match r {
        SimReport::Notice(m) if m.contains("Switched") => Some(m),
        _ => None,
    });
    assert!(notice.contains("hybrid Monte Carlo") && notice.contains("state kept"), "{notice}");
    let want = if cuda() { "cuda" } else { "cpu" };
    let s = status_on(&h, want);
    assert!(s.why.contains("switched from wgpu") && s.n_obstacles == 1, "{}", s.why);
    // Every atom kept (pushed out of the circle, not removed), at the same step.
    let after = snapshot(&h);
    assert_eq!((after.step, after.atoms.len()), (before.step, before.atoms.len()));
}

/// A scene the wgpu backend does not run (hybrid Monte Carlo), opened on it, runs on the
/// backend Auto takes otherwise, saying why, rather than not at all; one with an obstacle
/// runs on wgpu.
#[test]
fn a_scene_the_wgpu_backend_does_not_run_opens_elsewhere_and_says_why() {
    let Some(_) = gpu() else { return };
    let h = SimHandle::spawn(
        scene_wgpu_does_not_run(600),
        BackendChoice::Wgpu,
        Pace::unlimited(10),
        ColourScalar::Speed,
        false,
    );
    let notice = wait_for(&h, "the notice", |r| match r {
        SimReport::Notice(m) if m.starts_with("Opened on the") => Some(m),
        _ => None,
    });
    assert!(notice.contains("does not run hybrid Monte Carlo"), "{notice}");
    let s = status_on(&h, if cuda() { "cuda" } else { "cpu" });
    assert!(s.why.contains("not wgpu, which does not run this scene yet"), "{}", s.why);
    let scene = tank_with_obstacle(600);
    let shapes = scene.obstacles.len();
    assert!(shapes > 0);
    let h = SimHandle::spawn(scene, BackendChoice::Wgpu, Pace::unlimited(10), ColourScalar::Speed, false);
    let s = status_on(&h, "wgpu");
    assert_eq!(s.n_obstacles, shapes);
}

#[test]
fn auto_takes_the_wgpu_backend_only_on_a_hardware_adapter_and_says_why_not() {
    let Some((_, dev)) = gpu() else { return };
    let setup = small_scene(300).build().unwrap();
    let open = |gpu: Option<&Arc<SimDevice>>| {
        argon_sandbox::sim::open_backend_on(
            BackendChoice::Auto,
            setup.sim_box,
            setup.params.clone(),
            &setup.atoms,
            None,
            gpu,
        )
        .unwrap()
    };
    for gpu in [None, Some(&dev)] {
        let (b, why) = open(gpu);
        if cuda() {
            assert_eq!(b.info().kind, "cuda", "{why}");
            continue;
        }
        assert!(why.contains("CUDA: no usable device"), "{why}");
        if dev.software {
            assert_eq!(b.info().kind, "cpu", "{why}");
            assert!(why.contains("wgpu: ") && why.contains("is a software adapter"), "{why}");
        } else {
            assert_eq!(b.info().kind, "wgpu", "{why}");
        }
    }
    // What the wgpu backend does not run is named as the reason, on any adapter.
    let mut params = setup.params.clone();
    params.thermostat = Thermostat::Hmc { trajectory: 10 };
    let (b, why) =
        argon_sandbox::sim::open_backend_on(BackendChoice::Auto, setup.sim_box, params, &setup.atoms, None, Some(&dev))
            .unwrap();
    if b.info().kind == "cpu" {
        assert!(why.contains("wgpu: the wgpu backend does not run hybrid Monte Carlo"), "{why}");
    }
    // Forced, it runs on a software adapter too, with the warning.
    let (b, why) = argon_sandbox::sim::open_backend_on(
        BackendChoice::Wgpu,
        setup.sim_box,
        setup.params.clone(),
        &setup.atoms,
        None,
        Some(&dev),
    )
    .unwrap();
    assert_eq!(b.info().kind, "wgpu");
    assert_eq!(dev.software, why.contains("a software adapter"), "{why}");
    // Bad input is reported, not fallen back from.
    let mut bad = setup.params.clone();
    bad.dt = -1.0;
    let e =
        argon_sandbox::sim::open_backend_on(BackendChoice::Auto, setup.sim_box, bad, &setup.atoms, None, Some(&dev))
            .err()
            .expect("a negative time step is refused");
    assert!(e.to_string().contains("dt"), "{e}");
}

/// The app's binary: `ARGON_BIN` where set (the GPU machine), else the one cargo built.
fn binary() -> String {
    std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string())
}

fn bench(args: &[&str]) -> (bool, String) {
    bench_with(args, &[])
}

/// `bench` with environment variables set.
fn bench_with(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = std::process::Command::new(binary())
        .args(["bench", "--backend", "wgpu"])
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("the binary runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `bench --backend wgpu` in every mode: steps (what it does not run, double precision in
/// the default list on an adapter without 64-bit floats, as `ARGON_WGPU_NO_F64=1` makes it
/// look, skipped with the reason; measured where it has them), `--scene`, `--interactive`
/// (drawn zero-copy from the same device) and `--render`, with the backend's device memory
/// per atom.
#[test]
fn bench_runs_the_wgpu_backend_in_every_mode() {
    let Some((_, dev)) = gpu() else { return };
    let quick = ["--n", "500", "--steps", "5", "--warmup", "2", "--repeats", "1"];
    let (ok, text) = bench(&[&quick[..], &["--precision", "double", "--json"]].concat());
    assert!(ok, "{text}");
    let double = &json_lines(&text)[0];
    match dev.f64_missing() {
        None => assert_eq!(double["precision"].as_str(), Some("double"), "{text}"),
        Some(why) => assert!(double["skipped"].as_str().is_some_and(|s| s.contains(why)), "{text}"),
    }
    let (ok, text) = bench_with(&[&quick[..], &["--json"]].concat(), &[("ARGON_WGPU_NO_F64", "1")]);
    assert!(ok, "{text}");
    let lines = json_lines(&text);
    let ran: Vec<_> = lines.iter().filter(|l| l.get("skipped").is_none()).collect();
    assert_eq!(ran.len(), 1, "{text}");
    assert_eq!((ran[0]["backend"].as_str(), ran[0]["precision"].as_str()), (Some("wgpu"), Some("single")), "{text}");
    assert!(ran[0]["device_bytes_per_atom"].as_f64().is_some_and(|b| b > 16.0), "{text}");
    let skipped = |l: &serde_json::Value| {
        l["skipped"].as_str().is_some_and(|s| s.contains("double precision") && s.contains("SHADER_F64"))
    };
    assert!(lines.iter().any(skipped), "{text}");
    // The table names the column and gives the number.
    let (ok, table) = bench(&[&quick[..], &["--precision", "single"]].concat());
    assert!(ok && table.contains("dev B/at"), "{table}");
    let row = table.lines().find(|l| l.starts_with("wgpu ")).unwrap_or_else(|| panic!("no wgpu row: {table}"));
    let bytes: f64 = row.split_whitespace().nth(11).and_then(|c| c.parse().ok()).unwrap_or(0.0);
    assert!(bytes > 16.0, "{row}");

    let dir = std::env::temp_dir().join(format!("argon-wgpu-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("tank.ron");
    std::fs::write(&scene, small_scene(500).to_ron()).unwrap();
    let scene = scene.to_str().unwrap();
    let (ok, text) = bench(&[&quick[..], &["--precision", "single", "--scene", scene, "--json"]].concat());
    assert!(ok, "{text}");
    let r = &json_lines(&text)[0];
    assert!(r["device_bytes_per_atom"].as_f64().is_some_and(|b| b > 16.0) && r["n"].as_u64() > Some(300), "{text}");
    // A scene it does not run: nothing to measure, and the reason.
    let hmc = dir.join("hmc.ron");
    std::fs::write(&hmc, scene_wgpu_does_not_run(500).to_ron()).unwrap();
    let (ok, text) = bench(&[&quick[..], &["--precision", "single", "--scene", hmc.to_str().unwrap()]].concat());
    assert!(!ok && text.contains("no case could run") && text.contains("hybrid Monte Carlo"), "{text}");

    let frames = ["--frames", "5", "--repeats", "1", "--size", "320x200", "--json"];
    let (ok, text) = bench(&[&["--interactive", "--n", "500", "--scene", scene][..], &frames].concat());
    assert!(ok, "{text}");
    let r = &json_lines(&text)[0];
    assert_eq!((r["backend"].as_str(), r["position_path"].as_str()), (Some("wgpu"), Some("zero-copy (same device)")));
    assert!(r["device_bytes_per_atom"].as_f64().is_some_and(|b| b > 16.0) && r["fps"].as_f64() > Some(0.0), "{text}");

    let (ok, text) = bench(&["--render", "--n", "500", "--frames", "3", "--size", "160x100", "--json"]);
    assert!(ok && json_lines(&text)[0]["ms_per_frame"].as_f64() > Some(0.0), "{text}");
}

/// The first frame of a PNG folder as RGBA8.
fn first_png(dir: &std::path::Path) -> Vec<u8> {
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&files[0]).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    buf
}

/// `record --backend wgpu` draws from the renderer's own device (no host copy), and its
/// first frame is the CPU backend's picture of the same state.
#[test]
fn record_draws_the_wgpu_backend_from_the_renderers_device() {
    let Some(_) = gpu() else { return };
    let dir = std::env::temp_dir().join(format!("argon-wgpu-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("tank.ron");
    std::fs::write(&scene, small_scene(700).to_ron()).unwrap();
    let mut frames = Vec::new();
    for backend in ["wgpu", "cpu"] {
        let out = dir.join(backend);
        std::fs::create_dir_all(&out).unwrap();
        let o = std::process::Command::new(binary())
            .args(["record", scene.to_str().unwrap(), "--backend", backend, "--frames", "2", "--size", "240x160"])
            .args(["--no-overlay", "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success(), "{text}");
        let want = if backend == "wgpu" { "positions: zero-copy (same device)" } else { "positions: host staging" };
        assert!(text.contains(want), "{text}");
        frames.push(first_png(&out));
    }
    let (a, b) = (&frames[0], &frames[1]);
    assert_eq!(a.len(), b.len());
    let lit = a.chunks_exact(4).filter(|p| p[0].max(p[1]).max(p[2]) > 120).count();
    assert!(lit > 500, "nothing drawn ({lit} bright pixels)");
    // The colour scalars agree to f32 round-off: at most a level apart where they round apart.
    let worst = a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).max().unwrap();
    let differ = a.chunks_exact(4).zip(b.chunks_exact(4)).filter(|(x, y)| x != y).count();
    assert!(worst <= 2 && differ * 100 < a.len() / 4, "{differ} pixels differ, by up to {worst}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A scene naming no precision runs in the app's mixed precision, but in single where the
/// wgpu backend runs it (chosen, or taken by Auto on a hardware GPU without CUDA for a scene
/// it runs); a scene's own precision is kept.
#[test]
fn scenes_naming_no_precision_run_single_where_the_wgpu_backend_runs_them() {
    use argon_sandbox::app::actions::with_app_defaults_on;
    let mut plain = small_scene(300);
    plain.precision = None;
    let mut obstacle = tank_with_obstacle(300);
    obstacle.precision = None;
    let mut hmc = scene_wgpu_does_not_run(300);
    hmc.precision = None;
    let p = |s: &Scene, b, auto| with_app_defaults_on(s.clone(), b, auto).precision;
    assert_eq!(p(&plain, BackendChoice::Wgpu, false), Some(Precision::Single));
    assert_eq!(p(&plain, BackendChoice::Auto, true), Some(Precision::Single));
    assert_eq!(p(&plain, BackendChoice::Auto, false), Some(Precision::Mixed));
    assert_eq!(p(&plain, BackendChoice::Cpu, true), Some(Precision::Mixed));
    assert_eq!(p(&obstacle, BackendChoice::Auto, true), Some(Precision::Single), "wgpu runs obstacles");
    assert_eq!(p(&hmc, BackendChoice::Auto, true), Some(Precision::Mixed), "Auto takes the CPU for it");
    let mut double = plain.clone();
    double.precision = Some(Precision::Double);
    assert_eq!(p(&double, BackendChoice::Wgpu, false), Some(Precision::Double));
}

/// The real binary in a window under Xvfb with `--backend wgpu`: the simulation runs on the
/// window's own device and is drawn zero-copy (`--verbose` says which path runs).
#[test]
fn the_window_runs_the_wgpu_backend_on_its_own_device() {
    if std::process::Command::new("xvfb-run").arg("--help").output().is_err() {
        assert!(
            std::env::var_os("ARGON_REQUIRE_RENDER").is_none(),
            "ARGON_REQUIRE_RENDER is set but xvfb-run is missing"
        );
        println!("skipped: no xvfb-run (apt-get install xvfb)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("argon-wgpu-window-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let runtime = dir.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    let scene = dir.join("tank.ron");
    std::fs::write(&scene, small_scene(800).to_ron()).unwrap();
    let out = std::process::Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x800x24"])
        .arg(binary())
        .arg(&scene)
        .args(["--backend", "wgpu", "--verbose", "--no-settings", "--exit-after-frames", "90"])
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the app failed: {stderr}");
    assert!(stderr.contains("wgpu backend, as asked"), "{stderr}");
    assert!(stderr.contains("positions: zero-copy (same device)"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
