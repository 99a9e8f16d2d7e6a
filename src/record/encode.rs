//! Frame sinks for recordings, chosen by the output path: MP4 (H.264 from the bundled
//! OpenH264 encoder, muxed by muxide into a fast-start MP4 that browsers and VLC play), GIF
//! (per-frame NeuQuant palettes), or a folder of PNGs. No external program is run. Files are
//! written through a temporary and renamed into place by `finish`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::io::atomic::AtomicFile;
use crate::render::offscreen::save_png;

/// Something frames (tightly packed RGBA8, top row first) can be pushed into.
pub trait FrameSink {
    fn push(&mut self, rgba: &[u8]) -> Result<(), String>;
    /// Completes the file(s) and returns how many frames were written.
    fn finish(self: Box<Self>) -> Result<u64, String>;
}

/// The kind of output a path asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    Mp4,
    Gif,
    PngFolder,
}

/// MP4 for `.mp4`, GIF for `.gif`, a PNG folder for an existing folder, a path ending in
/// `/`, or a path without an extension; anything else is refused.
pub fn output_kind(path: &Path) -> Result<OutputKind, String> {
    let text = path.to_string_lossy();
    if path.is_dir() || text.ends_with('/') {
        return Ok(OutputKind::PngFolder);
    }
    match path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()) {
        Some(e) if e == "mp4" => Ok(OutputKind::Mp4),
        Some(e) if e == "gif" => Ok(OutputKind::Gif),
        None => Ok(OutputKind::PngFolder),
        Some(e) => Err(format!(
            "--out {}: unknown format `.{e}`; use a .mp4 or .gif file, or a folder for PNG frames",
            path.display()
        )),
    }
}

/// Opens the sink for `path` at `size` pixels and `fps` frames per second.
pub fn open(path: &Path, size: [u32; 2], fps: f64) -> Result<Box<dyn FrameSink>, String> {
    match output_kind(path)? {
        OutputKind::Mp4 => Ok(Box::new(Mp4Sink::new(path, size, fps)?)),
        OutputKind::Gif => Ok(Box::new(GifSink::new(path, size, fps)?)),
        OutputKind::PngFolder => Ok(Box::new(PngFolder::new(path, size)?)),
    }
}

struct Mp4Sink {
    encoder: openh264::encoder::Encoder,
    muxer: muxide::api::Muxer<AtomicFile>,
    size: [u32; 2],
    fps: f64,
    frames: u64,
    path: PathBuf,
}

impl Mp4Sink {
    fn new(path: &Path, size: [u32; 2], fps: f64) -> Result<Mp4Sink, String> {
        if !size[0].is_multiple_of(2) || !size[1].is_multiple_of(2) || size[0] < 16 || size[1] < 16 {
            return Err(format!(
                "--size {}x{}: MP4 (H.264, 4:2:0) needs an even width and height of at least 16 pixels",
                size[0], size[1]
            ));
        }
        use openh264::encoder::{BitRate, EncoderConfig, FrameRate, UsageType};
        let pixels = size[0] as f64 * size[1] as f64;
        let bps = (pixels * fps * 0.15).clamp(500_000.0, 40_000_000.0) as u32;
        let config = EncoderConfig::new()
            .bitrate(BitRate::from_bps(bps))
            .max_frame_rate(FrameRate::from_hz(fps as f32))
            .usage_type(UsageType::CameraVideoRealTime)
            // Every rendered frame must reach the file: rate control may lower quality instead.
            .skip_frames(false);
        let encoder = openh264::encoder::Encoder::with_api_config(openh264::OpenH264API::from_source(), config)
            .map_err(|e| format!("the H.264 encoder did not start: {e}"))?;
        let file = AtomicFile::create(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        let muxer = muxide::api::MuxerBuilder::new(file)
            .video(muxide::api::VideoCodec::H264, size[0], size[1], fps)
            .build()
            .map_err(|e| format!("starting the MP4 file: {e}"))?;
        Ok(Mp4Sink { encoder, muxer, size, fps, frames: 0, path: path.to_path_buf() })
    }
}

impl FrameSink for Mp4Sink {
    fn push(&mut self, rgba: &[u8]) -> Result<(), String> {
        use openh264::formats::{RgbaSliceU8, YUVBuffer};
        let (w, h) = (self.size[0] as usize, self.size[1] as usize);
        let yuv = YUVBuffer::from_rgba8_source(RgbaSliceU8::new(rgba, (w, h)));
        let stream = self.encoder.encode(&yuv).map_err(|e| format!("H.264 encoding failed: {e}"))?;
        let keyframe =
            matches!(stream.frame_type(), openh264::encoder::FrameType::IDR | openh264::encoder::FrameType::I);
        let data = stream.to_vec();
        if data.is_empty() {
            return Ok(());
        }
        let pts = self.frames as f64 / self.fps;
        self.muxer.write_video(pts, &data, keyframe).map_err(|e| format!("writing an MP4 frame: {e}"))?;
        self.frames += 1;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<u64, String> {
        let Mp4Sink { mut muxer, frames, path, .. } = *self;
        muxer.finish_in_place().map_err(|e| format!("finishing {}: {e}", path.display()))?;
        let mut file = muxer.into_writer();
        file.flush().map_err(|e| format!("writing {}: {e}", path.display()))?;
        file.commit().map_err(|e| format!("writing {}: {e}", path.display()))?;
        Ok(frames)
    }
}

struct GifSink {
    encoder: gif::Encoder<AtomicFile>,
    size: [u32; 2],
    delay: u16,
    frames: u64,
    path: PathBuf,
}

impl GifSink {
    fn new(path: &Path, size: [u32; 2], fps: f64) -> Result<GifSink, String> {
        if size[0] > u16::MAX as u32 || size[1] > u16::MAX as u32 {
            return Err(format!("--size {}x{}: GIF images are at most 65535 pixels a side", size[0], size[1]));
        }
        let file = AtomicFile::create(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        let mut encoder = gif::Encoder::new(file, size[0] as u16, size[1] as u16, &[])
            .map_err(|e| format!("starting the GIF: {e}"))?;
        encoder.set_repeat(gif::Repeat::Infinite).map_err(|e| format!("starting the GIF: {e}"))?;
        let delay = (100.0 / fps).round().clamp(2.0, 65535.0) as u16;
        Ok(GifSink { encoder, size, delay, frames: 0, path: path.to_path_buf() })
    }
}

impl FrameSink for GifSink {
    fn push(&mut self, rgba: &[u8]) -> Result<(), String> {
        let mut pixels = rgba.to_vec();
        let mut frame = gif::Frame::from_rgba_speed(self.size[0] as u16, self.size[1] as u16, &mut pixels, 10);
        frame.delay = self.delay;
        self.encoder.write_frame(&frame).map_err(|e| format!("writing a GIF frame: {e}"))?;
        self.frames += 1;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<u64, String> {
        let GifSink { encoder, frames, path, .. } = *self;
        let file = encoder.into_inner().map_err(|e| format!("finishing {}: {e}", path.display()))?;
        file.commit().map_err(|e| format!("writing {}: {e}", path.display()))?;
        Ok(frames)
    }
}

struct PngFolder {
    dir: PathBuf,
    size: [u32; 2],
    frames: u64,
}

impl PngFolder {
    fn new(dir: &Path, size: [u32; 2]) -> Result<PngFolder, String> {
        fs::create_dir_all(dir).map_err(|e| format!("creating the folder {}: {e}", dir.display()))?;
        Ok(PngFolder { dir: dir.to_path_buf(), size, frames: 0 })
    }
}

impl FrameSink for PngFolder {
    fn push(&mut self, rgba: &[u8]) -> Result<(), String> {
        let path = self.dir.join(format!("frame_{:05}.png", self.frames));
        save_png(&path, rgba, self.size).map_err(|e| e.to_string())?;
        self.frames += 1;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<u64, String> {
        Ok(self.frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_kinds() {
        assert_eq!(output_kind(Path::new("demo.mp4")).unwrap(), OutputKind::Mp4);
        assert_eq!(output_kind(Path::new("demo.GIF")).unwrap(), OutputKind::Gif);
        assert_eq!(output_kind(Path::new("frames/")).unwrap(), OutputKind::PngFolder);
        assert_eq!(output_kind(Path::new("frames")).unwrap(), OutputKind::PngFolder);
        assert!(output_kind(Path::new("demo.avi")).unwrap_err().contains(".mp4 or .gif"));
    }
}
