//! Zero-copy streaming on the GPU machine: a pattern CUDA writes into a shared buffer reads
//! back through wgpu exactly; one frame drawn through interop and through the host path gives
//! the same image pixel for pixel; 10,000 app frames with live switches (algorithm,
//! precision, block size, atom count) never show a frame out of order or torn, and GPU
//! memory stays flat; a crystal drifting through a periodic box shows every frame whole while
//! it runs and across switches between the CUDA and CPU backends. Without CUDA every test
//! prints `skipped: no CUDA device` and passes (the app then runs on host staging, which the
//! other app tests cover).

mod common;

use std::time::Duration;

use argon_sandbox::app::headless::Headless;
use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::interop::{Interop, SLOTS};
use argon_sandbox::physics::params::Algorithm;
use argon_sandbox::physics::real::Precision;
use argon_sandbox::render::offscreen::{COLOUR_FORMAT, Gpu, Offscreen};
use argon_sandbox::render::{Camera, CameraMode, Renderer, ViewSettings};
use argon_sandbox::scene::{Scene, presets};
use argon_sandbox::sim::cuda::device;
use argon_sandbox::sim::{BackendChoice, ColourScalar, PositionTarget, open_backend};

/// The tests here run one at a time: one of them watches the device's free memory, which any
/// other test's backends would move.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A wgpu device and the lock that keeps the other tests off the GPU meanwhile; None (and
/// `skipped: no CUDA device`) without CUDA.
fn gpu_and_cuda() -> Option<(Gpu, std::sync::MutexGuard<'static, ()>)> {
    if let Err(why) = device::open() {
        eprintln!("skipped: no CUDA device ({why})");
        return None;
    }
    let lock = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    Some((Gpu::headless().expect("a CUDA machine must have a wgpu adapter"), lock))
}

#[test]
fn a_pattern_written_by_cuda_reads_back_through_wgpu_exactly() {
    let Some((gpu, _one)) = gpu_and_cuda() else { return };
    let interop = Interop::new(&gpu.device, 10_000).unwrap_or_else(|e| panic!("no zero-copy on the GPU machine: {e}"));
    assert_eq!((interop.buffers.len(), interop.mapped()), (SLOTS, SLOTS));
    let dev = device::open().unwrap();
    for (k, &ptr) in interop.slots.ptrs.iter().enumerate() {
        let pattern: Vec<f32> = (0..40_000).map(|i| (i as f32) * 0.25 + k as f32 * 1e5).collect();
        dev.ctx.bind_to_thread().unwrap();
        // SAFETY: ptr maps 10,000 x 16 bytes of the shared buffer.
        unsafe { cudarc::driver::result::memcpy_htod_sync(ptr, &pattern) }.unwrap();
        dev.stream.synchronize().unwrap();
        let back = common::read_gpu_buffer(&gpu, &interop.buffers[k], 160_000);
        let back: &[f32] = bytemuck::cast_slice(&back);
        assert!(back == pattern.as_slice(), "slot {k} differs");
    }
}

#[test]
fn interop_and_host_paths_draw_the_same_image() {
    let Some((gpu, _one)) = gpu_and_cuda() else { return };
    let scene = Scene::from_str(presets::preset("default").unwrap(), "default").unwrap();
    let setup = scene.build().unwrap();
    let (mut sim, _) =
        open_backend(BackendChoice::Cuda, setup.sim_box, setup.params.clone(), &setup.atoms, None).unwrap();
    sim.advance(50).unwrap();
    let n = sim.n_atoms();
    let interop = Interop::new(&gpu.device, n).unwrap();
    let mut host = vec![[0f32; 4]; n];
    sim.write_positions(PositionTarget::Host(&mut host), ColourScalar::Speed).unwrap();
    sim.write_positions(
        PositionTarget::Device { ptr: interop.slots.ptrs[1], len: interop.capacity() },
        ColourScalar::Speed,
    )
    .unwrap();
    let size = [960, 540];
    let camera = Camera::fit(CameraMode::Orbit, &setup.sim_box, 960.0 / 540.0);
    let settings = ViewSettings::default();
    let draw = |r: &mut Renderer| {
        let t = Offscreen::new(&gpu.device, size).unwrap();
        r.set_scene(&gpu.device, &setup.sim_box, &setup.shapes);
        t.draw(&gpu, r, &camera, &settings);
        t.read_rgba(&gpu).unwrap()
    };
    let mut a = Renderer::new(&gpu.device, COLOUR_FORMAT);
    a.upload_atoms(&gpu.device, &gpu.queue, &host);
    let mut b = Renderer::new(&gpu.device, COLOUR_FORMAT);
    b.use_external_atoms(&gpu.device, &interop.buffers[1], n as u32);
    let (ia, ib) = (draw(&mut a), draw(&mut b));
    let lit = ia.chunks_exact(4).filter(|p| p[0].max(p[1]).max(p[2]) > 120).count();
    assert!(lit > 5000, "nothing drawn ({lit} bright pixels)");
    let differ = ia.chunks_exact(4).zip(ib.chunks_exact(4)).filter(|(x, y)| x != y).count();
    assert_eq!(differ, 0, "{differ} pixels differ between the interop and host paths");
}

#[test]
fn ten_thousand_app_frames_with_live_switches_stay_ordered_whole_and_flat() {
    let Some((_gpu, _one)) = gpu_and_cuda() else { return };
    let app = App::new(AppOptions {
        backend: Some(BackendChoice::Cuda),
        settings: Some(Settings {
            steps_per_frame: 5,
            pace: argon_sandbox::app::commands::PaceMode::Unlimited,
            show_plots: false,
            ..Settings::default()
        }),
        atoms: Some(3000),
        ..Default::default()
    });
    let mut h = Headless::new(app, [640, 400]).unwrap();
    assert!(
        h.run_until(Duration::from_secs(120), |a| a.status.as_ref().is_some_and(|s| s.position_path == "zero-copy")),
        "zero-copy did not start: {}",
        h.app.interop_note
    );
    let dev = device::open().unwrap();
    let free_mb = || {
        dev.ctx.bind_to_thread().unwrap();
        dev.ctx.mem_get_info().unwrap().0 as f64 / 1048576.0
    };
    let algorithms = [Algorithm::Neighbors, Algorithm::Cells, Algorithm::AllPairsTiled, Algorithm::AllPairsGlobal];
    let blocks = [64, 128, 256];
    let (mut last_seq, mut allocation, mut checked, mut free_at_1000) = (0u64, 0usize, 0, 0.0);
    for frame in 1..=10_000u32 {
        h.frame();
        let i = h.app.interop.as_ref().expect("zero-copy stopped");
        let id = std::sync::Arc::as_ptr(&i.slots) as usize;
        if let Some(d) = i.slots.displayed() {
            if id != allocation {
                (allocation, last_seq) = (id, 0);
            }
            assert!(d.seq >= last_seq, "frame {frame}: sequence went back from {last_seq} to {}", d.seq);
            last_seq = d.seq;
        }
        if frame == 1000 {
            free_at_1000 = free_mb();
        }
        if frame % 100 != 0 {
            continue;
        }
        // Every 1000 frames, pause and check the frame on display holds every atom at one step.
        if frame % 1000 == 0 {
            check_whole_frame(&mut h);
            checked += 1;
        }
        let k = (frame / 100) as usize;
        let app = &mut h.app;
        match k % 4 {
            0 => app.params.algorithm = algorithms[(k / 4) % 4],
            1 => app.params.precision = Precision::ALL[(k / 4) % 3],
            2 => app.params.block_size = blocks[(k / 4) % 3],
            _ => {
                if k % 8 == 3 {
                    // A new atom count: the shared buffers grow when it does not fit.
                    app.reinit_atoms = if (k / 8).is_multiple_of(2) { 6000 } else { 2500 };
                    app.reinitialise();
                    continue;
                }
            }
        }
        assert!(app.apply_params(), "{:?}", app.last_error());
    }
    assert!(checked >= 9);
    assert!(h.app.last_error().is_none(), "{:?}", h.app.last_error());
    let drift = (free_mb() - free_at_1000).abs();
    assert!(drift < 64.0, "free GPU memory moved {drift:.0} MB over 9,000 frames");
}

/// Pauses, lets the last frame reach the display, and compares the shared buffer on display
/// with a snapshot of the paused state: every atom must come from that one step.
fn check_whole_frame(h: &mut Headless) {
    h.app.set_running(false);
    assert!(h.run_until(Duration::from_secs(30), |a| a.status.as_ref().is_some_and(|s| !s.running)));
    for _ in 0..5 {
        h.frame();
    }
    let id = 1_000_000 + h.app.frames_drawn;
    h.app.sim.send(argon_sandbox::app::commands::SimCommand::TakeSnapshot(
        argon_sandbox::app::commands::SnapshotPurpose::Undo(id),
    ));
    let snap = loop {
        match h.app.sim.wait(Duration::from_secs(30)).expect("no snapshot") {
            argon_sandbox::app::commands::SimReport::Snapshot { snapshot, .. } => break snapshot,
            _ => continue,
        }
    };
    for _ in 0..3 {
        h.frame();
    }
    let i = h.app.interop.as_ref().unwrap();
    let d = i.slots.displayed().unwrap();
    assert_eq!(d.step, snap.step, "the display shows step {} but the simulation paused at {}", d.step, snap.step);
    assert_eq!(d.n_atoms, snap.atoms.len());
    let bytes = common::read_gpu_buffer(&h.gpu, &i.buffers[d.slot], (d.n_atoms * 16) as u64);
    let shown: &[[f32; 4]] = bytemuck::cast_slice(&bytes);
    for (k, (s, p)) in shown.iter().zip(&snap.atoms.positions).enumerate() {
        let p = snap.sim_box.wrap(*p);
        let d2: f64 = (0..3).map(|q| (s[q] as f64 - p[q]).powi(2)).sum();
        assert!(d2 < 1e-6, "atom {k} shown at {:?}, state has {p:?}", &s[..3]);
    }
    h.app.set_running(true);
}

#[test]
fn the_cuda_device_matching_the_display_uuid_is_chosen() {
    let Some((gpu, _one)) = gpu_and_cuda() else { return };
    if std::env::var_os("ARGON_CUDA_DEVICE").is_some() {
        eprintln!("skipped: ARGON_CUDA_DEVICE is set, which overrides the choice");
        return;
    }
    // The drawing GPU's Vulkan UUID picks the CUDA device with the same UUID.
    let uuid = argon_sandbox::interop::vulkan_uuid(&gpu.device).expect("a Vulkan device on the GPU machine");
    device::prefer_uuid(uuid);
    let k = device::chosen_ordinal().unwrap();
    let cuda_uuid =
        cudarc::driver::result::device::get(k as i32).and_then(cudarc::driver::result::device::get_uuid).unwrap();
    assert!(
        cuda_uuid.bytes.iter().zip(uuid).all(|(a, b)| *a as u8 == b),
        "device {k} does not have the display's UUID"
    );
    // Every CUDA device is found by its own UUID.
    let count = cudarc::driver::CudaContext::device_count().unwrap();
    for d in 0..count {
        let u = cudarc::driver::result::device::get(d).and_then(cudarc::driver::result::device::get_uuid).unwrap();
        device::prefer_uuid(std::array::from_fn(|i| u.bytes[i] as u8));
        assert_eq!(device::chosen_ordinal().unwrap(), d as usize);
    }
}

/// Lattice constant, cells per edge and drift velocity of the moving crystal below.
const CRYSTAL_A: f64 = 1.6796;
const CRYSTAL_N: usize = 8;
const DRIFT: [f64; 3] = [0.9, 0.35, 0.2];
const CRYSTAL_DT: f64 = 0.005;

/// A perfect fcc crystal (2,048 atoms) drifting at DRIFT through a periodic box, at zero
/// temperature and without a thermostat: no site feels a net force, so at step S every atom
/// sits on a lattice site shifted by DRIFT * S * dt.
fn moving_crystal_scene() -> String {
    let (a, n) = (CRYSTAL_A, CRYSTAL_N);
    let basis = [[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]];
    let mut pos = Vec::new();
    for (i, j, k) in (0..n).flat_map(|i| (0..n).flat_map(move |j| (0..n).map(move |k| (i, j, k)))) {
        for b in basis {
            pos.push(format!(
                "({:.6}, {:.6}, {:.6})",
                (i as f64 + b[0]) * a,
                (j as f64 + b[1]) * a,
                (k as f64 + b[2]) * a
            ));
        }
    }
    let vel = vec![format!("({}, {}, {})", DRIFT[0], DRIFT[1], DRIFT[2]); pos.len()];
    let l = n as f64 * a;
    format!(
        "(version: 1, name: \"Moving crystal\", box: (size: ({l}, {l}, {l}), boundaries: (Periodic, Periodic, Periodic)), \
         potential: (cutoff: 2.5, shift: true), integrator: (dt: {CRYSTAL_DT}, skin: 0.3), temperature_k: 1.0, \
         thermostat: Nve, atoms: [Atoms(positions: [{}], velocities: [{}])], seed: 5)",
        pos.join(", "),
        vel.join(", ")
    )
}

/// The largest distance of a shown atom from the crystal's sites at `step` (sigma).
fn off_lattice(shown: &[[f32; 4]], step: u64) -> f64 {
    let (a, l) = (CRYSTAL_A, CRYSTAL_N as f64 * CRYSTAL_A);
    let mut worst = 0.0f64;
    for p in shown {
        let mut parity = 0i64;
        let mut d2 = 0.0;
        for q in 0..3 {
            let r = (p[q] as f64 - DRIFT[q] * step as f64 * CRYSTAL_DT).rem_euclid(l);
            let u = r / (0.5 * a);
            let site = u.round();
            parity += site as i64;
            d2 += ((u - site) * 0.5 * a).powi(2);
        }
        // fcc sites in units of a / 2 have an even coordinate sum; an odd one is a vacancy.
        worst = worst.max(if parity % 2 == 0 { d2.sqrt() } else { 0.5 * a });
    }
    worst
}

#[test]
fn running_frames_and_frames_across_backend_switches_are_whole() {
    let Some((_gpu, _one)) = gpu_and_cuda() else { return };
    let dir = std::env::temp_dir().join(format!("argon-crystal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("moving_crystal.ron");
    std::fs::write(&path, moving_crystal_scene()).unwrap();
    let app = App::new(AppOptions {
        scene: Some(path),
        backend: Some(BackendChoice::Cuda),
        settings: Some(Settings {
            steps_per_frame: 3,
            pace: argon_sandbox::app::commands::PaceMode::Unlimited,
            show_plots: false,
            ..Settings::default()
        }),
        ..Default::default()
    });
    let mut h = Headless::new(app, [480, 320]).unwrap();
    assert!(h.run_until(Duration::from_secs(120), |a| a.status.is_some()), "{:?}", h.app.last_error());
    // Double precision, so the drift adds up to the sites to far below the test's tolerance.
    h.app.params.precision = Precision::Double;
    assert!(h.app.apply_params(), "{:?}", h.app.last_error());
    let want = h.app.params.clone();
    assert!(h.run_until(Duration::from_secs(60), |a| a.status.as_ref().is_some_and(|s| s.params == want)));
    // One step moves every atom by |DRIFT| dt = 0.0049 sigma: a frame that mixes two steps
    // puts some atoms that far from the sites of the step it is labelled with.
    let tolerance = 1e-3;
    let (mut from_slots, mut from_host, mut last_step) = (0, 0, 0u64);
    for frame in 1..=3000u32 {
        if frame % 500 == 0 {
            let to = if frame % 1000 == 0 { BackendChoice::Cuda } else { BackendChoice::Cpu };
            h.app.switch_backend(to);
        }
        h.frame();
        let step = h.app.frame_step;
        let slot = h.app.interop.as_ref().and_then(|i| i.slots.displayed().map(|d| (i, d)));
        let (shown, path): (Vec<[f32; 4]>, &str) = match slot {
            Some((i, d)) if d.step == step && h.app.status.as_ref().is_some_and(|s| s.info.kind == "cuda") => {
                let bytes = common::read_gpu_buffer(&h.gpu, &i.buffers[d.slot], (d.n_atoms * 16) as u64);
                (bytemuck::cast_slice(&bytes).to_vec(), "zero-copy")
            }
            _ => match &h.app.frame {
                Some(f) => (f.to_vec(), "host"),
                None => continue,
            },
        };
        if shown.is_empty() {
            continue;
        }
        assert_eq!(shown.len(), 4 * CRYSTAL_N.pow(3), "frame {frame} ({path}) shows {} atoms", shown.len());
        let off = off_lattice(&shown, step);
        assert!(
            off < tolerance,
            "frame {frame} ({path}, step {step}) is torn: an atom sits {off:.2e} sigma off the crystal"
        );
        if from_host + from_slots == 0 {
            // The check tells neighbouring steps apart.
            assert!(off_lattice(&shown, step + 1) > 4.0 * tolerance);
        }
        assert!(step >= last_step, "frame {frame}: the step went back from {last_step} to {step}");
        last_step = step;
        if path == "host" { from_host += 1 } else { from_slots += 1 }
    }
    assert!(h.app.last_error().is_none(), "{:?}", h.app.last_error());
    // Both paths were watched while the crystal moved (and it did move: a crystal at rest
    // would fail the drift check above at every step but 0).
    assert!(from_slots > 500 && from_host > 300, "checked {from_slots} zero-copy frames and {from_host} host frames");
    assert!(last_step > 3000, "the crystal only reached step {last_step}");
}
