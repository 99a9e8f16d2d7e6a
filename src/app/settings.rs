//! What the app remembers between runs (window, panels, last scene, display and tool
//! choices), saved as RON in the config folder with an atomic write. Runtime resources (GPU,
//! threads, buffers) never live here. A missing file gives the defaults; an unreadable one is
//! kept aside as `settings.ron.bad` (nothing the person made is lost) and the defaults are used.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::export::lammps::LammpsUnits;
use crate::io::trajectory::TrajectoryFormat;
use crate::render::{CameraMode, ViewSettings};
use crate::sim::{BackendChoice, CaughtAtoms};
use crate::units::UnitSystem;

/// Video container of recordings made in the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum VideoFormat {
    #[default]
    Mp4,
    Gif,
}

impl VideoFormat {
    pub fn extension(self) -> &'static str {
        match self {
            VideoFormat::Mp4 => "mp4",
            VideoFormat::Gif => "gif",
        }
    }
}

/// Persisted choices. Every field has a default, so older or partial files still load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Inner window size in logical points.
    pub window_size: [f32; 2],
    pub maximized: bool,
    pub show_controls: bool,
    pub show_plots: bool,
    pub last_scene: Option<PathBuf>,
    pub view: ViewSettings,
    pub camera_mode: CameraMode,
    pub backend: BackendChoice,
    /// Steps per displayed frame under the `Fixed` pace.
    pub steps_per_frame: u64,
    /// How the simulation is paced (default: fill each display frame).
    pub pace: crate::app::commands::PaceMode,
    pub caught: CaughtAtoms,
    /// Line (wall) tool thickness and free-hand brush radius, sigma.
    pub line_thickness: f64,
    pub brush_radius: f64,
    /// Radius of the add / remove atoms brush and the eraser, sigma.
    pub atom_brush_radius: f64,
    /// Spring constant of the drag-an-atom tool, epsilon/sigma^2.
    pub drag_stiffness: f64,
    /// Species the add-atoms brush pours (a catalogue symbol or a species of the scene).
    pub brush_species: String,
    pub record_with_ui: bool,
    pub video_format: VideoFormat,
    /// Frames averaged in the g(r) plot.
    pub rdf_window: usize,
    /// Folder where screenshots and recordings go.
    pub output_dir: Option<PathBuf>,
    /// Trajectories written while the app runs: format, units, a frame every this many steps.
    pub trajectory_format: TrajectoryFormat,
    pub trajectory_units: UnitSystem,
    pub trajectory_every: u64,
    /// Unit style of LAMMPS decks exported from the app.
    pub lammps_units: LammpsUnits,
    /// How the flow layer samples fields: bin, z slab, every k steps, window in tau.
    pub flow_sampling: crate::flow::FieldSpec,
    /// The examples gallery was offered once (it opens by itself only on the first launch).
    pub examples_offered: bool,
    /// Memory instant replay may keep, MiB (capped by half the memory available; 0: off).
    pub replay_budget_mb: u64,
    /// How long a picked atom's pathline reaches back, tau.
    pub dye_trail_tau: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            window_size: [1480.0, 900.0],
            maximized: false,
            show_controls: true,
            show_plots: true,
            last_scene: None,
            view: ViewSettings::default(),
            camera_mode: CameraMode::Front,
            backend: BackendChoice::Auto,
            steps_per_frame: 10,
            pace: crate::app::commands::PaceMode::Fill,
            caught: CaughtAtoms::Remove,
            line_thickness: 1.0,
            brush_radius: 0.6,
            atom_brush_radius: 3.0,
            drag_stiffness: 20.0,
            brush_species: "Ar".into(),
            record_with_ui: false,
            video_format: VideoFormat::Mp4,
            rdf_window: 20,
            output_dir: None,
            trajectory_format: TrajectoryFormat::ExtXyz,
            trajectory_units: UnitSystem::Lj,
            trajectory_every: 100,
            lammps_units: LammpsUnits::Lj,
            flow_sampling: crate::app::flow::live_sampling(),
            examples_offered: false,
            replay_budget_mb: crate::app::replay::DEFAULT_BUDGET_MB,
            dye_trail_tau: 20.0,
        }
    }
}

/// Settings files are small; anything bigger than this is not one (and is not read whole).
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// Reads a settings file of at most [`MAX_SETTINGS_BYTES`] of UTF-8 text.
fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_SETTINGS_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SETTINGS_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} KB, so not a settings file", MAX_SETTINGS_BYTES / 1024),
        ));
    }
    String::from_utf8(bytes).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// The config folder: `$ARGON_CONFIG_DIR`, else `$XDG_CONFIG_HOME/argon-sandbox`, else
/// `~/.config/argon-sandbox`.
pub fn config_dir() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    env("ARGON_CONFIG_DIR")
        .or_else(|| env("XDG_CONFIG_HOME").map(|d| d.join("argon-sandbox")))
        .or_else(|| env("HOME").map(|d| d.join(".config/argon-sandbox")))
}

impl Settings {
    /// Reads `path`; returns the settings and, when the file was unusable, a sentence saying so.
    pub fn load(path: &Path) -> (Settings, Option<String>) {
        let parsed = match read_bounded(path) {
            Ok(text) => ron::from_str::<Settings>(&text).map_err(|e| e.to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Settings::default(), None),
            // Too big or not text: set aside like a corrupt file.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(e.to_string()),
            Err(e) => return (Settings::default(), Some(format!("{}: {e}; using default settings", path.display()))),
        };
        match parsed {
            Ok(s) => (s.sanitised(), None),
            Err(e) => {
                let bad = path.with_extension("ron.bad");
                let kept = std::fs::rename(path, &bad).is_ok();
                let note = if kept { format!(" (kept as {})", bad.display()) } else { String::new() };
                (Settings::default(), Some(format!("{}: {e}; using default settings{note}", path.display())))
            }
        }
    }

    /// Reads `path` without side effects (a bad file gives the defaults and stays in place).
    pub fn peek(path: &Path) -> Settings {
        read_bounded(path)
            .ok()
            .and_then(|t| ron::from_str::<Settings>(&t).ok())
            .map(Settings::sanitised)
            .unwrap_or_default()
    }

    /// Writes `path` atomically, creating its folder.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default())
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        crate::io::atomic::write_atomic(path, text.as_bytes())
    }

    /// Values a hand-edited file may have put out of range, brought back in.
    fn sanitised(mut self) -> Settings {
        let d = Settings::default();
        let ok = |x: f64, lo: f64, hi: f64| x.is_finite() && (lo..=hi).contains(&x);
        if !(self.window_size.iter().all(|v| v.is_finite() && (200.0..=16384.0).contains(v))) {
            self.window_size = d.window_size;
        }
        self.steps_per_frame = self.steps_per_frame.clamp(1, 10_000);
        if !ok(self.line_thickness, 0.1, 50.0) {
            self.line_thickness = d.line_thickness;
        }
        if !ok(self.brush_radius, 0.1, 50.0) {
            self.brush_radius = d.brush_radius;
        }
        if !ok(self.atom_brush_radius, 0.5, 100.0) {
            self.atom_brush_radius = d.atom_brush_radius;
        }
        if !ok(self.drag_stiffness, 0.1, 1000.0) {
            self.drag_stiffness = d.drag_stiffness;
        }
        if !(self.view.radius.is_finite() && (0.05..=5.0).contains(&self.view.radius)) {
            self.view.radius = d.view.radius;
        }
        self.rdf_window = self.rdf_window.clamp(1, 1000);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_partial_and_corrupt_files() {
        let dir = std::env::temp_dir().join(format!("argon-settings-{}", std::process::id()));
        let path = dir.join("settings.ron");
        let mut s = Settings { steps_per_frame: 33, show_plots: false, ..Settings::default() };
        s.view.radius = 0.7;
        s.save(&path).unwrap();
        assert_eq!(Settings::load(&path), (s, None));
        // A partial file keeps the defaults for what it leaves out; out-of-range values are reset.
        std::fs::write(&path, "(steps_per_frame: 7, line_thickness: -3.0)").unwrap();
        let (p, note) = Settings::load(&path);
        assert_eq!((p.steps_per_frame, p.line_thickness, note), (7, 1.0, None));
        // A corrupt file is kept aside, not overwritten, and the defaults are used.
        std::fs::write(&path, "(steps_per_frame: ").unwrap();
        let (c, note) = Settings::load(&path);
        assert_eq!(c, Settings::default());
        assert!(note.unwrap().contains("settings.ron.bad"));
        assert!(dir.join("settings.ron.bad").exists());
        // Hostile files: huge, binary, wrong types, non-finite numbers, deep nesting. None
        // panics; each gives the defaults (sanitised where it parses) and a note naming the file.
        let huge = vec![b'('; (MAX_SETTINGS_BYTES + 10) as usize];
        let hostile: Vec<Vec<u8>> = vec![
            huge,
            vec![0xff, 0xfe, 0x00, 0x80],
            b"(steps_per_frame: \"many\")".to_vec(),
            b"(window_size: (NaN, inf), line_thickness: NaN)".to_vec(),
            "[".repeat(100_000).into_bytes(),
            b"(unknown_field: 3)".to_vec(),
        ];
        for (k, bytes) in hostile.iter().enumerate() {
            std::fs::write(&path, bytes).unwrap();
            let (s, note) = Settings::load(&path);
            assert!(s.window_size.iter().all(|x| x.is_finite()) && s.line_thickness.is_finite(), "{k}: {s:?}");
            if let Some(n) = note {
                assert!(n.contains("settings.ron"), "{k}: {n}");
            }
            let _ = std::fs::remove_file(dir.join("settings.ron.bad"));
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
