//! The renderer, headless: golden images of a small fixed scene (front and orbit views, two
//! colour maps) within a tolerance, picking round trips, an atom buffer filled from outside
//! (a compute shader, as CUDA interop will) rendering exactly like an uploaded one, and
//! `record` producing MP4, GIF and PNG output that decodes to the requested frames and size.
//! Without any GPU adapter (not even Mesa's lavapipe) the GPU tests print why and pass,
//! unless `ARGON_REQUIRE_RENDER` is set (CI sets it).
//!
//! Golden images live in `tests/golden/`; regenerate them on purpose with
//! `ARGON_UPDATE_GOLDEN=1 cargo test --release --test render`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use argon_sandbox::physics::init::{LatticeKind, lattice_sites, maxwell_boltzmann};
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::render::offscreen::{COLOUR_FORMAT, Gpu, Offscreen, png_bytes};
use argon_sandbox::render::splat::Splat;
use argon_sandbox::render::{Camera, CameraMode, ColourBy, Renderer, SplatMode, ViewSettings};
use argon_sandbox::rng::{Sequence, Stream};
use argon_sandbox::shapes::Shape;

fn gpu() -> Option<Gpu> {
    match Gpu::headless() {
        Ok(g) => Some(g),
        Err(e) => {
            // CI installs lavapipe and sets ARGON_REQUIRE_RENDER so a missing adapter fails there.
            assert!(
                std::env::var_os("ARGON_REQUIRE_RENDER").is_none(),
                "ARGON_REQUIRE_RENDER is set but no adapter: {e}"
            );
            eprintln!("skipped: no GPU adapter for rendering ({e})");
            None
        }
    }
}

/// A fixed small tank: 20 x 14 x 6 sigma, two obstacles, jiggled lattice atoms with speeds.
fn scene() -> (SimBox, Vec<Shape>, Vec<[f32; 4]>) {
    let b = SimBox::new([20.0, 14.0, 6.0], [false, false, true]);
    let shapes = vec![
        Shape::Circle { centre: [14.0, 9.5], radius: 2.0 },
        Shape::Rectangle { centre: [6.0, 10.0], half_size: [2.5, 0.6], angle_deg: 20.0 },
    ];
    let sites: Vec<[f64; 3]> = lattice_sites(LatticeKind::Fcc, 0.7, [0.8, 0.8, 0.0], [0.8, 0.8, 0.0], [19.2, 7.0, 6.0]);
    let n = sites.len();
    let v = maxwell_boltzmann(&vec![1.0; n], 1.0, 3.0 * n as f64, 5, 0);
    let mut rng = Sequence::new(3, Stream::GasPlacement, 1, 0);
    let atoms = sites
        .iter()
        .zip(&v)
        .map(|(p, v)| {
            let mut j = |x: f64| (x + 0.1 * (rng.uniform() - 0.5)) as f32;
            [j(p[0]), j(p[1]), j(p[2]), (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() as f32]
        })
        .collect();
    (b, shapes, atoms)
}

fn render(gpu: &Gpu, renderer: &mut Renderer, mode: CameraMode, colour_by: ColourBy, size: [u32; 2]) -> Vec<u8> {
    let (b, _, _) = scene();
    let target = Offscreen::new(&gpu.device, size).unwrap();
    let camera = Camera::fit(mode, &b, size[0] as f32 / size[1] as f32);
    let settings = ViewSettings {
        colour_by,
        range: if colour_by == ColourBy::Height { [0.0, 14.0] } else { [0.0, 3.0] },
        ..ViewSettings::default()
    };
    target.draw(gpu, renderer, &camera, &settings);
    target.read_rgba(gpu).unwrap()
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// (mean absolute channel difference, fraction of pixels with a channel off by more than 24).
fn compare(a: &[u8], b: &[u8]) -> (f64, f64) {
    assert_eq!(a.len(), b.len());
    let mut sum = 0u64;
    let mut bad = 0usize;
    for (p, q) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let d = (0..3).map(|k| (p[k] as i32 - q[k] as i32).unsigned_abs()).max().unwrap_or(0);
        sum += (0..3).map(|k| (p[k] as i32 - q[k] as i32).unsigned_abs() as u64).sum::<u64>();
        if d > 24 {
            bad += 1;
        }
    }
    (sum as f64 / (a.len() / 4 * 3) as f64, bad as f64 / (a.len() / 4) as f64)
}

fn decode_png(path: &Path) -> (Vec<u8>, [u32; 2]) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (buf, [info.width, info.height])
}

#[test]
fn golden_images() {
    let Some(gpu) = gpu() else { return };
    eprintln!("rendering on {}", gpu.describe());
    let (b, shapes, atoms) = scene();
    let mut renderer = Renderer::new(&gpu.device, COLOUR_FORMAT);
    renderer.set_scene(&gpu.device, &b, &shapes);
    renderer.upload_atoms(&gpu.device, &gpu.queue, &atoms);
    let size = [320, 200];
    let update = std::env::var_os("ARGON_UPDATE_GOLDEN").is_some();
    for (name, mode, colour) in [
        ("front_speed", CameraMode::Front, ColourBy::Speed),
        ("orbit_height", CameraMode::Orbit, ColourBy::Height),
        ("front_kinetic", CameraMode::Front, ColourBy::KineticEnergy),
    ] {
        let rgba = render(&gpu, &mut renderer, mode, colour, size);
        let lit = rgba.chunks_exact(4).filter(|p| p[0] as u32 + p[1] as u32 + p[2] as u32 > 200).count();
        assert!(lit > 2000, "{name}: the image is nearly empty ({lit} bright pixels)");
        let path = golden_dir().join(format!("{name}.png"));
        if update {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&path, png_bytes(&rgba, size).unwrap()).unwrap();
            eprintln!("updated {}", path.display());
            continue;
        }
        assert!(path.exists(), "{} is missing: run with ARGON_UPDATE_GOLDEN=1 to create it", path.display());
        let (want, want_size) = decode_png(&path);
        assert_eq!(want_size, size);
        let (mean, bad) = compare(&rgba, &want);
        eprintln!("{name}: mean channel difference {mean:.3}, {:.3}% pixels off by more than 24", bad * 100.0);
        if mean > 1.5 || bad > 0.005 {
            let out = std::env::temp_dir().join(format!("argon-{name}-actual.png"));
            std::fs::write(&out, png_bytes(&rgba, size).unwrap()).unwrap();
            panic!(
                "{name} differs from its golden image (mean {mean:.3}, {bad:.4} bad); this render is in {}",
                out.display()
            );
        }
    }
}

#[test]
fn picking_round_trips() {
    let (b, _, _) = scene();
    for (mode, size) in
        [(CameraMode::Front, [800, 500]), (CameraMode::Orbit, [640, 640]), (CameraMode::Front, [300, 900])]
    {
        let mut cam = Camera::fit(mode, &b, size[0] as f32 / size[1] as f32);
        if mode == CameraMode::Orbit {
            cam.orbit(-30.0, 20.0);
        }
        for p in [[0.5, 0.5], [19.5, 13.5], [7.25, 3.5], [10.0, 7.0]] {
            let s = cam.tank_to_screen(p, size);
            let q = cam.screen_to_tank(s, size).unwrap();
            assert!((q[0] - p[0]).abs() < 1e-3 && (q[1] - p[1]).abs() < 1e-3, "{mode:?} {p:?} -> {s:?} -> {q:?}");
        }
    }
}

/// Fills `buffer` with the scene's atoms using a compute shader: no host write touches it.
fn fill_from_outside(gpu: &Gpu, buffer: &wgpu::Buffer, atoms: &[[f32; 4]]) {
    use wgpu::util::DeviceExt;
    let source = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("source"),
        contents: bytemuck::cast_slice(atoms),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let module = gpu.device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("fill"),
        source: wgpu::ShaderSource::Wgsl(
            "@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
             @group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
                 if id.x < arrayLength(&src) { dst[id.x] = src[id.x]; }
             }"
            .into(),
        ),
    });
    let pipeline = gpu.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("fill"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("fill"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: source.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: buffer.as_entire_binding() },
        ],
    });
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups((atoms.len() as u32).div_ceil(64), 1, 1);
    }
    gpu.queue.submit(Some(enc.finish()));
}

/// A storage buffer of `atoms` filled by a compute shader, as CUDA interop fills one.
fn filled_outside(gpu: &Gpu, atoms: &[[f32; 4]]) -> wgpu::Buffer {
    let external = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("external atoms"),
        size: (atoms.len() * 16) as u64,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    fill_from_outside(gpu, &external, atoms);
    external
}

#[test]
fn a_buffer_filled_from_outside_renders_like_an_uploaded_one() {
    let Some(gpu) = gpu() else { return };
    let (b, shapes, atoms) = scene();
    let mut renderer = Renderer::new(&gpu.device, COLOUR_FORMAT);
    renderer.set_scene(&gpu.device, &b, &shapes);
    renderer.upload_atoms(&gpu.device, &gpu.queue, &atoms);
    let uploaded = render(&gpu, &mut renderer, CameraMode::Orbit, ColourBy::Speed, [256, 192]);
    let external = filled_outside(&gpu, &atoms);
    renderer.use_external_atoms(&gpu.device, &external, atoms.len() as u32);
    let outside = render(&gpu, &mut renderer, CameraMode::Orbit, ColourBy::Speed, [256, 192]);
    assert!(uploaded == outside, "the externally filled buffer renders differently");
}

fn bin() -> String {
    std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string())
}

fn record(out: &Path, frames: u32, size: &str) {
    let o = Command::new(bin())
        .args(["record", "--frames", &frames.to_string(), "--steps-per-frame", "5", "--size", size, "--quiet", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Decodes every H.264 sample of the MP4's video track; returns (frames, width, height).
fn decode_mp4(path: &Path) -> (u32, u32, u32) {
    let file = std::fs::File::open(path).unwrap();
    let len = file.metadata().unwrap().len();
    let mut mp4 = mp4::Mp4Reader::read_header(std::io::BufReader::new(file), len).unwrap();
    let (id, sps, pps, count) = {
        let (id, track) = mp4.tracks().iter().find(|(_, t)| t.sequence_parameter_set().is_ok()).expect("a video track");
        (
            *id,
            track.sequence_parameter_set().unwrap().to_vec(),
            track.picture_parameter_set().unwrap().to_vec(),
            track.sample_count(),
        )
    };
    let mut decoder = openh264::decoder::Decoder::new().unwrap();
    let start = [0u8, 0, 0, 1];
    let mut header = Vec::new();
    for nal in [&sps, &pps] {
        header.extend_from_slice(&start);
        header.extend_from_slice(nal);
    }
    let _ = decoder.decode(&header);
    let (mut frames, mut dims) = (0, (0, 0));
    for s in 1..=count {
        let sample = mp4.read_sample(id, s).unwrap().unwrap();
        let mut annexb = Vec::new();
        let data = &sample.bytes[..];
        let mut i = 0;
        while i + 4 <= data.len() {
            let n = u32::from_be_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]) as usize;
            annexb.extend_from_slice(&start);
            annexb.extend_from_slice(&data[i + 4..i + 4 + n]);
            i += 4 + n;
        }
        if let Some(yuv) = decoder.decode(&annexb).unwrap() {
            use openh264::formats::YUVSource;
            dims = yuv.dimensions();
            frames += 1;
        }
    }
    frames += decoder.flush_remaining().unwrap().len() as u32;
    (frames, dims.0 as u32, dims.1 as u32)
}

#[test]
fn record_writes_mp4_gif_and_png_frames() {
    if gpu().is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("argon-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let mp4 = dir.join("demo.mp4");
    record(&mp4, 12, "160x96");
    let (frames, w, h) = decode_mp4(&mp4);
    assert_eq!((frames, w, h), (12, 160, 96), "the MP4 decodes to 12 frames of 160x96");

    let gif = dir.join("demo.gif");
    record(&gif, 5, "120x80");
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::RGBA);
    let mut dec = opts.read_info(std::fs::File::open(&gif).unwrap()).unwrap();
    assert_eq!((dec.width(), dec.height()), (120, 80));
    let mut n = 0;
    while dec.read_next_frame().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 5);

    let pngs = dir.join("frames");
    record(&pngs, 4, "100x60");
    let mut files: Vec<_> = std::fs::read_dir(&pngs).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 4);
    for f in &files {
        let (pixels, size) = decode_png(f);
        assert_eq!(size, [100, 60]);
        assert!(pixels.chunks_exact(4).any(|p| p[0] > 120 || p[1] > 120), "{} is blank", f.display());
    }

    let bad = Command::new(bin())
        .args(["record", "--frames", "2", "--size", "161x96", "--quiet", "--out"])
        .arg(dir.join("odd.mp4"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("even width and height"));
    assert!(!dir.join("odd.mp4").exists(), "a refused recording leaves no file");
    std::fs::remove_dir_all(dir).ok();
}

/// The compute splat path (many small atoms) draws what the triangles draw: front and orbit
/// views, atoms from the renderer's own buffer and from an outside one, walls and obstacles
/// composed by depth; `Auto` keeps triangles for this small scene. Devices without 64-bit
/// atomics have only the triangles (said, and the rest checked).
#[test]
fn splatted_atoms_look_like_triangle_atoms() {
    let Some(gpu) = gpu() else { return };
    let (b, shapes, atoms) = scene();
    let mut renderer = Renderer::new(&gpu.device, COLOUR_FORMAT);
    renderer.set_scene(&gpu.device, &b, &shapes);
    renderer.upload_atoms(&gpu.device, &gpu.queue, &atoms);
    let size = [320, 200];
    let triangles = render(&gpu, &mut renderer, CameraMode::Front, ColourBy::Speed, size);
    assert!(!renderer.splats(), "a small scene is drawn with triangles in Auto");
    if !Splat::supported(&gpu.device) {
        eprintln!("skipped: {} has no 64-bit atomic min/max, so only triangles draw atoms", gpu.describe());
        return;
    }
    renderer.splat_mode = SplatMode::Always;
    for (mode, colour) in [(CameraMode::Front, ColourBy::Speed), (CameraMode::Orbit, ColourBy::Height)] {
        renderer.splat_mode = SplatMode::Never;
        let want = render(&gpu, &mut renderer, mode, colour, size);
        renderer.splat_mode = SplatMode::Always;
        let got = render(&gpu, &mut renderer, mode, colour, size);
        assert!(renderer.splats());
        let lit = got.chunks_exact(4).filter(|p| p[0] as u32 + p[1] as u32 + p[2] as u32 > 200).count();
        assert!(lit > 2000, "{mode:?}: the splatted image is nearly empty ({lit} bright pixels)");
        let (mean, bad) = compare(&got, &want);
        eprintln!(
            "{mode:?}: splat against triangles: mean channel difference {mean:.3}, {:.3}% pixels off",
            bad * 100.0
        );
        if mean > 1.0 || bad > 0.01 {
            let out = std::env::temp_dir().join(format!("argon-splat-{mode:?}.png"));
            std::fs::write(&out, png_bytes(&got, size).unwrap()).unwrap();
            panic!("{mode:?}: the splat differs from the triangles (mean {mean:.3}, {bad:.4} bad): {}", out.display());
        }
    }
    assert_ne!(triangles, vec![0u8; triangles.len()]);
    // From a buffer filled outside the renderer (the CUDA interop path), the same image.
    let own = render(&gpu, &mut renderer, CameraMode::Front, ColourBy::Speed, size);
    let external = filled_outside(&gpu, &atoms);
    renderer.use_external_atoms(&gpu.device, &external, atoms.len() as u32);
    let outside = render(&gpu, &mut renderer, CameraMode::Front, ColourBy::Speed, size);
    assert!(own == outside, "the splat of an externally filled buffer differs");
}
