//! The flow layer, drawn: the renderer paints a field's colour plane in the colour map's exact
//! colours over the atoms (hidden, dimmed or shown), in the front and orbit cameras; and the
//! whole app, headless on the CPU backend, turns the one-click Flow view on for the channel
//! flow preset, receives finished windows from the simulation thread, draws vorticity with
//! streamlines, and puts them in its screenshots (kept in `target/flow-view/` to look at).
//! Needs a wgpu adapter: without one it prints `skipped: no GPU adapter` (and fails when
//! ARGON_REQUIRE_RENDER=1, as CI sets).

use std::path::{Path, PathBuf};
use std::time::Duration;

use argon_sandbox::app::headless::Headless;
use argon_sandbox::app::settings::Settings;
use argon_sandbox::app::{App, AppOptions};
use argon_sandbox::flow::probe::ProbeLine;
use argon_sandbox::flow::{Accumulator, FieldKind, FieldSpec, Fields, Grid, finish};
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::render::colour::field_colour;
use argon_sandbox::render::flow_layer::{self, AtomsShown, FlowView};
use argon_sandbox::render::offscreen::{COLOUR_FORMAT, Gpu, Offscreen, save_png};
use argon_sandbox::render::{Camera, CameraMode, Renderer, ViewSettings};
use argon_sandbox::sim::BackendChoice;

fn gpu() -> Option<Gpu> {
    match Gpu::headless() {
        Ok(g) => Some(g),
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            println!("skipped: no GPU adapter ({e})");
            None
        }
    }
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/flow-view");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// sRGB encoding of a linear channel, as the render target stores it.
fn srgb(c: f32) -> f32 {
    let c = c.clamp(0.0, 1.0);
    255.0 * if c <= 0.0031308 { 12.92 * c } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 }
}

/// A field over box `b` with vorticity `w` and a uniform flow along x in every bin.
fn field(b: &SimBox, w: f64) -> Fields {
    let grid = Grid::new(&FieldSpec { bin: 2.0, ..FieldSpec::default() }, b).unwrap();
    let mut f = finish(&Accumulator::new(&grid), &grid, [0.0, 2.0]);
    for bin in 0..grid.len() {
        f.count[bin] = 10.0;
        (f.vx[bin], f.vy[bin], f.speed[bin], f.vorticity[bin]) = (1.0, 0.0, 1.0, w);
    }
    f
}

#[test]
fn the_colour_plane_has_the_colour_maps_colours_over_the_atoms() {
    let Some(gpu) = gpu() else { return };
    let b = SimBox::new([30.0, 20.0, 6.0], [true, false, true]);
    let mut renderer = Renderer::new(&gpu.device, COLOUR_FORMAT);
    renderer.set_scene(&gpu.device, &b, &[]);
    // A layer of bright atoms under the plane.
    let atoms: Vec<[f32; 4]> =
        (0..300).map(|i| [1.0 + (i % 30) as f32, 1.0 + (i / 30) as f32 * 2.0, 3.0, 2.5]).collect();
    renderer.upload_atoms(&gpu.device, &gpu.queue, &atoms);
    let f = field(&b, 0.5);
    let size = [300, 200];
    let target = Offscreen::new(&gpu.device, size).unwrap();
    for mode in [CameraMode::Front, CameraMode::Orbit] {
        let camera = Camera::fit(mode, &b, size[0] as f32 / size[1] as f32);
        let flow = FlowView {
            on: true,
            layer: Some(FieldKind::Vorticity),
            auto_range: false,
            range: [-1.0, 1.0],
            opacity: 1.0,
            streamlines: false,
            atoms: AtomsShown::Dimmed,
            ..FlowView::default()
        };
        let z = (b.hi[2] + 0.6) as f32;
        let mesh = flow_layer::build(&f, &flow, z, &[]);
        renderer.set_flow(&gpu.device, &gpu.queue, Some(&mesh));
        let settings = ViewSettings { flow, show_walls: false, ..ViewSettings::default() };
        target.draw(&gpu, &mut renderer, &camera, &settings);
        let rgba = target.read_rgba(&gpu).unwrap();
        save_png(&out_dir().join(format!("plane_{mode:?}.png")), &rgba, size).unwrap();
        // The centre of the tank shows the map's colour at 0.75 of the range, exactly (an
        // opaque plane in front of every atom).
        let centre = camera.tank_to_screen([15.0, 10.0], size);
        let (x, y) = (centre[0] as usize, centre[1] as usize);
        let px = &rgba[4 * (y * size[0] as usize + x)..][..4];
        let want = field_colour(FieldKind::Vorticity, 0.75).map(srgb);
        for k in 0..3 {
            assert!((px[k] as f32 - want[k]).abs() <= 2.5, "{mode:?}: pixel {px:?}, colour map {want:?}");
        }
        if mode == CameraMode::Front {
            // Opacity 0: the atoms show through, dimmed, and the map's colour is gone.
            let clear = FlowView { opacity: 0.0, ..flow };
            renderer.set_flow(&gpu.device, &gpu.queue, Some(&flow_layer::build(&f, &clear, z, &[])));
            let s = ViewSettings { flow: clear, show_walls: false, ..ViewSettings::default() };
            target.draw(&gpu, &mut renderer, &camera, &s);
            let dim = target.read_rgba(&gpu).unwrap();
            let bright = |img: &[u8]| img.chunks_exact(4).map(|p| p[0] as u64 + p[1] as u64 + p[2] as u64).sum::<u64>();
            let shown = ViewSettings { flow: FlowView { atoms: AtomsShown::Normal, ..clear }, ..s };
            target.draw(&gpu, &mut renderer, &camera, &shown);
            let full = target.read_rgba(&gpu).unwrap();
            let hidden = ViewSettings { flow: FlowView { atoms: AtomsShown::Hidden, ..clear }, ..s };
            target.draw(&gpu, &mut renderer, &camera, &hidden);
            let none = target.read_rgba(&gpu).unwrap();
            let (d, n, h) = (bright(&dim), bright(&full), bright(&none));
            assert!(h < d && d < n, "hidden {h} < dimmed {d} < shown {n} does not hold");
            assert!((d - h) as f64 <= 0.5 * (n - h) as f64, "dimmed atoms are not dim: {d} vs {n}");
        }
    }
}

fn channel_app() -> App {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/channel_flow.ron");
    App::new(AppOptions {
        scene: Some(scene),
        backend: Some(BackendChoice::Cpu),
        // Windows of 1 tau (200 steps) keep the test quick on 2 busy cores.
        settings: Some(Settings {
            output_dir: Some(out_dir()),
            flow_sampling: FieldSpec { window_tau: 1.0, ..FieldSpec::default() },
            ..Settings::default()
        }),
        ..Default::default()
    })
}

fn view_screenshot(h: &mut Headless, name: &str) -> Vec<u8> {
    let before: Vec<PathBuf> = std::fs::read_dir(out_dir()).unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
    h.frame_with(vec![
        egui::Event::Key {
            key: egui::Key::P,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers: Default::default(),
        },
        egui::Event::Key {
            key: egui::Key::P,
            physical_key: None,
            pressed: false,
            repeat: false,
            modifiers: Default::default(),
        },
    ]);
    h.frame();
    h.frame();
    let new = std::fs::read_dir(out_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        // The app's own file (`argon-screenshot-*.png`): the colour-plane test, running
        // alongside, writes its PNGs into the same folder.
        .find(|p| {
            !before.contains(p)
                && p.extension().is_some_and(|e| e == "png")
                && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("argon-"))
        })
        .expect("the screenshot was written");
    let kept = out_dir().join(format!("{name}.png"));
    std::fs::rename(&new, &kept).unwrap();
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&kept).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    buf
}

#[test]
fn the_flow_view_shows_the_channel_flow_in_the_app_and_its_screenshots() {
    let Some(_) = gpu() else { return };
    let mut h = match Headless::new(channel_app(), [1280, 720]) {
        Ok(h) => h,
        Err(e) => panic!("a GPU adapter exists but the headless app failed: {e}"),
    };
    assert!(h.run_until(Duration::from_secs(60), |a| a.frame.is_some()), "the scene did not load");
    let atoms_only = view_screenshot(&mut h, "channel_atoms");
    h.app.flow_preset();
    assert!(
        h.run_until(Duration::from_secs(400), |a| a.flow.windows >= 2),
        "no flow-field window arrived: {:?}",
        h.app.messages
    );
    let f = h.app.flow.fields.clone().unwrap();
    assert_eq!(f.grid.n[2], 1, "the live view samples the front grid");
    // The drive pushes the fluid along +x: the mean of the bins' x velocity is positive and
    // well above its noise.
    let vx: Vec<f64> = f.vx.iter().copied().filter(|v| v.is_finite()).collect();
    let mean = vx.iter().sum::<f64>() / vx.len() as f64;
    assert!(mean > 0.05, "mean flow {mean} sigma/tau");
    let (_, mesh) = h.app.flow_geometry();
    let mesh = mesh.expect("the flow layer has geometry");
    let plane = mesh.plane.as_ref().expect("the flow view has a colour plane");
    let covered = plane.texels.iter().filter(|t| t[3] > 0).count();
    assert!(covered >= f.grid.len() / 2, "the colour plane covers too few bins: {covered}");
    assert!(mesh.lines.len() > 100, "too few streamline segments: {}", mesh.lines.len() / 2);
    let flow = view_screenshot(&mut h, "channel_flow_view");
    // The flow view changes most of the tank's pixels.
    let changed = atoms_only
        .chunks_exact(4)
        .zip(flow.chunks_exact(4))
        .filter(|(a, b)| (0..3).any(|k| (a[k] as i32 - b[k] as i32).abs() > 24))
        .count();
    let total = flow.len() / 4;
    assert!(changed > total / 5, "the flow view changed only {changed} of {total} pixels");
    // A probe line across the channel downstream of the cylinder: the x velocity along it, with
    // standard errors once a few windows are kept, saved as CSV.
    h.app.probe.line = Some(ProbeLine { a: [45.0, 1.0], b: [45.0, 19.0] });
    h.app.probe.kind = FieldKind::Vx;
    let w0 = h.app.flow.windows;
    assert!(h.run_until(Duration::from_secs(400), |a| a.flow.windows >= w0 + 3), "no more windows");
    // Each new window's geometry is built off the UI thread and replaces the one on screen.
    let seq0 = h.app.flow_geometry().0;
    let w1 = h.app.flow.windows;
    assert!(h.run_until(Duration::from_secs(400), |a| a.flow.windows > w1), "no more windows");
    assert!(h.run_until(Duration::from_secs(60), |a| a.flow.shows_newest()), "the newest window is never drawn");
    assert!(h.app.flow_geometry().0 > seq0);
    let points = h.app.probe_profile().expect("a profile").expect("a valid line");
    assert_eq!(points.len(), 100);
    let inside = points.iter().filter(|p| p.mean.is_finite() && p.sem.is_finite() && p.sem > 0.0).count();
    assert!(inside >= 90, "only {inside} points with a mean and an error");
    let mean: f64 = points.iter().filter(|p| p.mean.is_finite()).map(|p| p.mean).sum::<f64>() / inside as f64;
    assert!(mean > 0.05, "the flow along the probe {mean}");
    let csv = out_dir().join("probe.csv");
    h.app.save_profile_csv(csv.clone());
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("# probe line from (45.0000, 1.0000) to (45.0000, 19.0000)"));
    assert_eq!(lines.next().unwrap(), "s_sigma,x_sigma,y_sigma,vx,vx_stderr");
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    assert_eq!(rows.len(), 100);
    assert!((rows[99][0] - 18.0).abs() < 1e-9 && (rows[50][2] - (1.0 + 18.0 * 50.0 / 99.0)).abs() < 1e-5);
    // The wake readout of the cylinder (radius 3): the drive pushes the fluid onto it along
    // +x, so the drag is positive; the stream is the fields' mean flow.
    let wake = h.app.wake_readout().expect("a wake readout");
    assert!((wake.stream.diameter - 6.0).abs() < 1e-9 && wake.stream.speed > 0.05, "{:?}", wake.stream);
    let c = wake.coefficients.as_ref().expect("drag and lift");
    assert!(c.drag > 0.0, "drag coefficient {}", c.drag);
    // Stream, Re, coefficients, St of the lift and of the wake probe, the probe's full
    // shedding periods (none in a few windows of this steady wake), the bubble.
    assert_eq!(wake.lines().len(), 7);
    assert!(wake.strouhal_wake.is_some(), "the app keeps the wake probe's series");
    let periods = wake.periods.as_ref().expect("the wake probe's periods").as_ref().expect("a valid series");
    assert_eq!(periods.count(), 0, "{periods:?}");
    assert!(wake.lines().iter().any(|l| l.starts_with("shedding (wake probe): 0 full periods yet")));
    // The driven channel offers the viscosity readout (its value needs no-slip walls; see
    // tests/poiseuille.rs).
    assert!(h.app.driven_channel());
    let _ = view_screenshot(&mut h, "channel_probe");
    // Orbit camera as well.
    h.app.set_camera_mode(CameraMode::Orbit);
    h.frame();
    let _ = view_screenshot(&mut h, "channel_flow_orbit");
    // Off again: sampling stops and the layer goes.
    h.app.settings.view.flow.on = false;
    h.app.sync_flow_sampling();
    h.frame();
    assert!(h.app.flow.fields.is_none() && h.app.flow.sampling().is_none());
}

/// `record --fields` refuses an unknown layer and flow flags without it, naming them.
#[test]
fn record_refuses_an_unknown_field_layer_by_name() {
    let bin = std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string());
    let out = std::env::temp_dir().join(format!("argon-flow-bad-{}.gif", std::process::id()));
    for (args, want) in [
        (vec!["--fields", "vortex"], "--fields vortex: no such field layer; the layers are density, vx"),
        (vec!["--arrows"], "--arrows and --no-streamlines need --fields LAYER"),
        (vec!["--fields", "none", "--no-streamlines"], "draws nothing"),
        (vec!["--fields", "speed", "--field-bin", "0"], "invalid --field-bin"),
    ] {
        let o = std::process::Command::new(&bin)
            .args(["record", "--frames", "1", "--backend", "cpu", "--out"])
            .arg(&out)
            .args(&args)
            .output()
            .expect("the binary runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} was accepted");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.exists(), "a refused recording left a file");
    }
}
