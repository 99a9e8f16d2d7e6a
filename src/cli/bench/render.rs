//! `bench --render`: frame time of the renderer alone (no simulation, no readback) for each
//! `--n` at `--size`, drawn as `--draw` says.

use std::time::Instant;

use anyhow::Result;

use super::common::{BenchArgs, DrawPath, in_lj_system, median};

/// Frame time of the renderer alone (no simulation, no readback) for each size.
pub fn run(args: &BenchArgs) -> Result<()> {
    use crate::render::offscreen::{COLOUR_FORMAT, Gpu, Offscreen};
    use crate::render::{Camera, CameraMode, ColourBy, Renderer, ViewSettings};
    let size = crate::record::parse_size(&args.size)?;
    if args.frames == 0 {
        anyhow::bail!("--frames must be at least 1");
    }
    let gpu = Gpu::headless()?;
    let device = gpu.describe();
    let target = Offscreen::new(&gpu.device, size)?;
    let mut renderer = Renderer::new(&gpu.device, COLOUR_FORMAT);
    renderer.splat_mode = match args.draw {
        DrawPath::Auto => crate::render::SplatMode::Auto,
        DrawPath::Splat => crate::render::SplatMode::Always,
        DrawPath::Triangles => crate::render::SplatMode::Never,
    };
    if args.draw == DrawPath::Splat && !crate::render::splat::Splat::supported(&gpu.device) {
        anyhow::bail!("--draw splat: {device} has no 64-bit atomic min/max in shaders; use --draw triangles");
    }
    if !args.json {
        let early = gpu.device.features().contains(wgpu::Features::SHADER_EARLY_DEPTH_TEST);
        println!(
            "rendering on {device}; early depth test with conservative depth: {}",
            if early { "yes" } else { "no" }
        );
        println!(
            "{:>9} {:>11} {:>10} {:>10} {:>8} {:>11}  draw",
            "atoms", "size", "ms/frame", "min ms", "fps", "latency ms"
        );
    }
    for &n_req in &args.sizes {
        let (b, atoms) = in_lj_system(n_req);
        let data: Vec<[f32; 4]> = atoms
            .positions
            .iter()
            .zip(&atoms.velocities)
            .map(|(p, v)| {
                [p[0] as f32, p[1] as f32, p[2] as f32, (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() as f32]
            })
            .collect();
        renderer.set_scene(&gpu.device, &b, &[]);
        renderer.upload_atoms(&gpu.device, &gpu.queue, &data);
        let camera = Camera::fit(CameraMode::Front, &b, size[0] as f32 / size[1] as f32);
        let settings = ViewSettings { colour_by: ColourBy::Speed, range: [0.0, 3.6], ..ViewSettings::default() };
        // Latency: each frame waited for. Throughput: frames queued back to back, as an app
        // draws them, one wait at the end (reported as the frame time, median of 3 runs).
        let wait = || {
            gpu.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| anyhow::anyhow!("waiting for the GPU: {e}"))
        };
        let mut latency = Vec::with_capacity(args.frames as usize);
        for frame in 0..args.frames.min(10) + 3 {
            let t0 = Instant::now();
            target.draw(&gpu, &mut renderer, &camera, &settings);
            wait()?;
            if frame >= 3 {
                latency.push(t0.elapsed().as_secs_f64());
            }
        }
        let mut times = Vec::with_capacity(3);
        for _ in 0..3 {
            let t0 = Instant::now();
            for _ in 0..args.frames {
                target.draw(&gpu, &mut renderer, &camera, &settings);
            }
            wait()?;
            times.push(t0.elapsed().as_secs_f64() / args.frames as f64);
        }
        let path = if renderer.splats() { "splat" } else { "triangles" };
        let latency = median(latency);
        let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
        let per = median(times);
        if args.json {
            let obj = serde_json::json!({
                "render": true, "device": device, "n": data.len(), "width": size[0], "height": size[1],
                "frames": args.frames, "ms_per_frame": per * 1e3, "min_ms_per_frame": fastest * 1e3, "fps": 1.0 / per,
                "latency_ms": latency * 1e3, "draw": path,
            });
            println!("{obj}");
        } else {
            println!(
                "{:>9} {:>11} {:>10.3} {:>10.3} {:>8.1} {:>11.3}  {path}",
                data.len(),
                format!("{}x{}", size[0], size[1]),
                per * 1e3,
                fastest * 1e3,
                1.0 / per,
                latency * 1e3
            );
        }
    }
    Ok(())
}
