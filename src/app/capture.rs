//! Screenshots and recordings made from the running app: the painter hands over each frame
//! it drew (the 3D view alone, or the whole window with the UI) while a capture is wanted;
//! screenshots are written as PNG and recordings streamed to MP4 / GIF on an encoder thread,
//! so the UI never waits on encoding (frames are dropped, and counted, if it falls behind).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::render::offscreen::save_png;

/// Frames per second of recordings.
pub const RECORD_FPS: f64 = 30.0;

/// A recording in progress.
pub struct Recording {
    pub path: PathBuf,
    pub with_ui: bool,
    /// Frame size fixed at the start (frames of another size are cropped or padded).
    pub size: [u32; 2],
    pub frames: u64,
    pub dropped: u64,
    pub started: Instant,
    next_due: Instant,
    tx: Option<SyncSender<Vec<u8>>>,
    join: Option<JoinHandle<Result<u64, String>>>,
}

/// What the app wants captured, and where it goes.
#[derive(Default)]
pub struct Capture {
    /// A screenshot is wanted of the next frame: (with the UI, file).
    pub screenshot: Option<(bool, PathBuf)>,
    pub recording: Option<Recording>,
    /// Results to show the person (drained by the app each frame).
    pub results: Vec<Result<String, String>>,
}

/// `dir/argon-<what>-<unix seconds>.<ext>`, numbered if that exists.
pub fn output_path(dir: &Path, what: &str, ext: &str) -> PathBuf {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut p = dir.join(format!("argon-{what}-{secs}.{ext}"));
    let mut k = 2;
    while p.exists() {
        p = dir.join(format!("argon-{what}-{secs}-{k}.{ext}"));
        k += 1;
    }
    p
}

/// Copies `rgba` (`from` pixels) into a frame of `to` pixels, cropping or padding with black.
pub fn fit_frame(rgba: &[u8], from: [u32; 2], to: [u32; 2]) -> Vec<u8> {
    if from == to {
        return rgba.to_vec();
    }
    let mut out = vec![0u8; to[0] as usize * to[1] as usize * 4];
    for a in out.chunks_exact_mut(4) {
        a[3] = 255;
    }
    let w = from[0].min(to[0]) as usize * 4;
    for y in 0..from[1].min(to[1]) as usize {
        let src = y * from[0] as usize * 4;
        let dst = y * to[0] as usize * 4;
        out[dst..dst + w].copy_from_slice(&rgba[src..src + w]);
    }
    out
}

impl Capture {
    /// Whether the painter should capture this frame, and with the UI or not.
    pub fn wanted(&self) -> Option<bool> {
        if let Some((with_ui, _)) = &self.screenshot {
            return Some(*with_ui);
        }
        self.recording.as_ref().filter(|r| Instant::now() >= r.next_due).map(|r| r.with_ui)
    }

    /// Takes a captured frame (`with_ui` says which kind it is).
    pub fn frame(&mut self, rgba: &[u8], size: [u32; 2], with_ui: bool) {
        if let Some((w, path)) = self.screenshot.take() {
            if w == with_ui {
                let (rgba, path) = (rgba.to_vec(), path.clone());
                let result = save_png(&path, &rgba, size)
                    .map(|()| format!("screenshot saved to {}", path.display()))
                    .map_err(|e| format!("screenshot {}: {e}", path.display()));
                self.results.push(result);
            } else {
                self.screenshot = Some((w, path));
            }
        }
        let Some(r) = &mut self.recording else { return };
        if r.with_ui != with_ui || Instant::now() < r.next_due {
            return;
        }
        let period = Duration::from_secs_f64(1.0 / RECORD_FPS);
        r.next_due = (r.next_due + period).max(Instant::now());
        let frame = fit_frame(rgba, size, r.size);
        let Some(tx) = &r.tx else { return };
        match tx.try_send(frame) {
            Ok(()) => r.frames += 1,
            Err(TrySendError::Full(_)) => r.dropped += 1,
            Err(TrySendError::Disconnected(_)) => {
                // The encoder ended early (an error): finish to collect and show it.
                self.stop_recording();
            }
        }
    }

    /// Starts recording frames of `size` pixels (MP4 sizes are made even) to `path`.
    pub fn start_recording(&mut self, path: PathBuf, size: [u32; 2], with_ui: bool) -> Result<(), String> {
        if self.recording.is_some() {
            return Err("a recording is already running".into());
        }
        let size = [size[0].max(16) & !1, size[1].max(16) & !1];
        let (tx, rx) = sync_channel::<Vec<u8>>(8);
        let (ready_tx, ready_rx) = sync_channel::<Result<(), String>>(1);
        let target = path.clone();
        let join = std::thread::Builder::new()
            .name("recording encoder".into())
            .spawn(move || encode(target, size, rx, ready_tx))
            .map_err(|e| format!("could not start the encoder thread: {e}"))?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = join.join();
                return Err(e);
            }
            Err(_) => return Err("the encoder thread ended before it started".into()),
        }
        let now = Instant::now();
        self.recording = Some(Recording {
            path,
            with_ui,
            size,
            frames: 0,
            dropped: 0,
            started: now,
            next_due: now,
            tx: Some(tx),
            join: Some(join),
        });
        Ok(())
    }

    /// Stops the recording (if any), waits for the encoder and keeps the result.
    pub fn stop_recording(&mut self) {
        let Some(mut r) = self.recording.take() else { return };
        drop(r.tx.take());
        let result = match r.join.take().map(|j| j.join()) {
            Some(Ok(Ok(n))) => {
                let dropped = if r.dropped > 0 {
                    format!(" ({} frames skipped: the encoder fell behind)", r.dropped)
                } else {
                    String::new()
                };
                Ok(format!("recorded {n} frames to {}{dropped}", r.path.display()))
            }
            Some(Ok(Err(e))) => Err(format!("recording {}: {e}", r.path.display())),
            _ => Err(format!("recording {}: the encoder failed", r.path.display())),
        };
        self.results.push(result);
    }
}

fn encode(
    path: PathBuf,
    size: [u32; 2],
    rx: Receiver<Vec<u8>>,
    ready: SyncSender<Result<(), String>>,
) -> Result<u64, String> {
    let mut sink = match crate::record::encode::open(&path, size, RECORD_FPS) {
        Ok(s) => {
            let _ = ready.send(Ok(()));
            s
        }
        Err(e) => {
            let _ = ready.send(Err(e.clone()));
            return Err(e);
        }
    };
    for frame in rx {
        sink.push(&frame)?;
    }
    sink.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_cropped_or_padded() {
        let src: Vec<u8> = (0..2 * 2 * 4).map(|i| i as u8).collect();
        assert_eq!(fit_frame(&src, [2, 2], [2, 2]), src);
        let big = fit_frame(&src, [2, 2], [3, 1]);
        assert_eq!(&big[..8], &src[..8]);
        assert_eq!(&big[8..], &[0, 0, 0, 255]);
    }
}
