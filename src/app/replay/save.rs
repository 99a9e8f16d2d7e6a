//! "Save the last N seconds": the stored frames of that span, taken at the recording rate
//! ([`RECORD_FPS`], the newest frame at or before each instant), drawn offscreen on the
//! renderer's device with the view's camera and display settings on a thread of their own,
//! and written through the recording sinks (`record::encode`: MP4, GIF or a folder of PNGs).
//! The live simulation and the UI go on meanwhile.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use super::ring::{FrameRing, StoredFrame, StoredPositions};
use crate::app::capture::RECORD_FPS;
use crate::render::offscreen::{COLOUR_FORMAT, Offscreen};
use crate::render::view::SceneGeometry;
use crate::render::{Camera, Renderer, ViewSettings};

/// The frames to write for the last `seconds` of `ring`: one per 1/[`RECORD_FPS`] s from
/// the newest frame back, each the newest stored frame at or before that instant.
pub fn plan(ring: &FrameRing, seconds: f64) -> Vec<StoredFrame> {
    let Some(last) = ring.iter().next_back() else { return Vec::new() };
    let span = seconds.min(ring.seconds()).max(0.0);
    let count = (span * RECORD_FPS + 1e-9).floor() as usize + 1;
    let frames: Vec<&StoredFrame> = ring.iter().collect();
    let mut out = Vec::with_capacity(count);
    let mut j = 0;
    for k in (0..count).rev() {
        let back = std::time::Duration::from_secs_f64(k as f64 / RECORD_FPS);
        let t = last.at.checked_sub(back).unwrap_or(last.at);
        while j + 1 < frames.len() && frames[j + 1].at <= t {
            j += 1;
        }
        out.push(frames[j].clone());
    }
    out
}

/// What the drawing needs besides the frames.
pub struct SaveView {
    pub geometry: SceneGeometry,
    pub camera: Camera,
    pub settings: ViewSettings,
    pub size: [u32; 2],
}

/// A save in progress.
pub struct SaveJob {
    pub path: PathBuf,
    pub total: u64,
    pub done: Arc<AtomicU64>,
    join: Option<JoinHandle<Result<u64, String>>>,
}

impl SaveJob {
    /// Starts writing `frames` to `path` (its kind from the extension, a folder for PNGs).
    pub fn start(
        device: wgpu::Device,
        queue: wgpu::Queue,
        frames: Vec<StoredFrame>,
        view: SaveView,
        path: PathBuf,
    ) -> Result<SaveJob, String> {
        if frames.is_empty() {
            return Err("nothing is stored yet".into());
        }
        crate::record::encode::output_kind(&path)?;
        let done = Arc::new(AtomicU64::new(0));
        let total = frames.len() as u64;
        let (target, counter) = (path.clone(), done.clone());
        let join = std::thread::Builder::new()
            .name("replay save".into())
            .spawn(move || write(&device, &queue, &frames, &view, &target, &counter))
            .map_err(|e| format!("could not start the saving thread: {e}"))?;
        Ok(SaveJob { path, total, done, join: Some(join) })
    }

    /// The result once finished (frames written, or why not); None while it runs.
    pub fn finished(&mut self) -> Option<Result<u64, String>> {
        if !self.join.as_ref().is_some_and(|j| j.is_finished()) {
            return None;
        }
        let j = self.join.take()?;
        Some(j.join().unwrap_or_else(|_| Err("the saving thread failed".into())))
    }

    /// Waits for the end (closing the app, tests).
    pub fn wait(&mut self) -> Option<Result<u64, String>> {
        let j = self.join.take()?;
        Some(j.join().unwrap_or_else(|_| Err("the saving thread failed".into())))
    }
}

fn write(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    frames: &[StoredFrame],
    view: &SaveView,
    path: &std::path::Path,
    done: &AtomicU64,
) -> Result<u64, String> {
    let size = [view.size[0].max(16) & !1, view.size[1].max(16) & !1];
    let mut renderer = Renderer::new(device, COLOUR_FORMAT);
    let (b, shapes, piston) = &*view.geometry;
    renderer.set_scene(device, b, shapes);
    if piston.is_some() {
        renderer.set_piston(device, b, *piston);
    }
    let target = Offscreen::new(device, size).map_err(|e| e.to_string())?;
    let mut sink = crate::record::encode::open(path, size, RECORD_FPS)?;
    let mut last: Option<(u64, Vec<u8>)> = None;
    for f in frames {
        let rgba = match &last {
            Some((id, rgba)) if *id == f.id => rgba.clone(),
            _ => {
                match &f.positions {
                    StoredPositions::Host(p) => renderer.upload_atoms(device, queue, p),
                    StoredPositions::Gpu(buffer, n) => renderer.use_external_atoms(device, buffer, *n),
                }
                renderer.prepare(queue, &view.camera, size, &view.settings);
                let mut encoder =
                    device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("replay save") });
                target.encode(device, &mut encoder, &mut renderer, &view.settings);
                queue.submit(Some(encoder.finish()));
                target.read_rgba_on(device, queue).map_err(|e| e.to_string())?
            }
        };
        sink.push(&rgba)?;
        done.fetch_add(1, Ordering::Relaxed);
        last = Some((f.id, rgba));
    }
    sink.finish()
}
