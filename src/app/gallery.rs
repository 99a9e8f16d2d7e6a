//! The examples gallery's state and actions: whether it shows (it opens by itself on the first
//! launch), opening a built-in example by name, and the check before opening one that would run
//! far below interactive speed on the active backend (the 1.17M-atom vortex street on a CPU),
//! which asks first and offers what works there. The cards are drawn by `ui/gallery.rs`.

use std::path::Path;

use super::App;
use crate::scene::presets::{self, Preset, WATCHABLE_STEPS_PER_S, assumed_atom_steps_per_s, estimated_steps_per_s};
use crate::scene::reinit::{self, InitialState};

/// An example held back because it would run too slowly here, and what to offer instead.
#[derive(Clone, Debug, PartialEq)]
pub struct SlowExample {
    pub name: &'static str,
    pub atoms: usize,
    /// Estimated steps per second on the active backend.
    pub steps_per_s: f64,
    /// The backend it was estimated for ("CPU", "CUDA").
    pub backend: String,
    /// A built-in example that shows the same thing at a size that runs here.
    pub instead: Option<&'static str>,
    /// Fewer atoms that would run at a watchable speed (scenes that can be re-initialised).
    pub fewer_atoms: Option<usize>,
}

/// What a gallery card shows of its preset besides the preset's own fields.
#[derive(Clone)]
pub struct Card {
    pub thumbnail: egui::TextureHandle,
    pub title: String,
    pub description: String,
}

/// The gallery window and its pictures.
#[derive(Default)]
pub struct GalleryState {
    pub open: bool,
    /// Per preset, made the first time the gallery draws: its picture as a texture, and its
    /// scene's name and description (read from the RON text once, not every frame).
    pub cards: Vec<Card>,
    /// An example waiting for the person's answer to "this will be slow".
    pub confirm: Option<SlowExample>,
}

/// Examples to offer instead of one too big for the backend.
fn smaller_example(name: &str) -> Option<&'static str> {
    match name {
        "vortex_street" => Some("twin_eddies"),
        _ => None,
    }
}

/// Steps per second wanted of a smaller system offered instead (a few steps per frame).
const OFFERED_STEPS_PER_S: f64 = 300.0;

impl App {
    /// The backend's atom-steps per second: measured on the running system when it has run,
    /// else assumed for its kind; and the backend's name.
    pub fn backend_speed(&self) -> (f64, String) {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        match &self.status {
            Some(s) => {
                let gpu = s.info.kind != "cpu";
                let name = if gpu { s.info.kind.to_uppercase() } else { "CPU".to_string() };
                let measured = s.steps_per_s * s.n_atoms as f64;
                let rate = if s.running && measured > 0.0 { measured } else { assumed_atom_steps_per_s(gpu, cores) };
                (rate, name)
            }
            None => (assumed_atom_steps_per_s(false, cores), "CPU".to_string()),
        }
    }

    /// Whether opening `p` here would be far too slow to watch, and what to offer instead.
    pub fn too_slow(&self, p: &Preset) -> Option<SlowExample> {
        let (rate, backend) = self.backend_speed();
        let steps_per_s = estimated_steps_per_s(p.atoms, rate);
        if steps_per_s >= WATCHABLE_STEPS_PER_S {
            return None;
        }
        let scene = crate::scene::preset_scene(p.name).ok()?;
        // A tunnel's fluid is set by its density and stream, not its atom count: offer another
        // example rather than a thinned one.
        let fewer_atoms = (scene.tunnel.is_none()).then(|| {
            let n = (rate / OFFERED_STEPS_PER_S) as usize;
            n.clamp(reinit::MIN_ATOMS, p.atoms)
        });
        Some(SlowExample {
            name: p.name,
            atoms: p.atoms,
            steps_per_s,
            backend,
            instead: smaller_example(p.name),
            fewer_atoms: fewer_atoms.filter(|&n| n < p.atoms),
        })
    }

    /// Opens the built-in example `name`, unless it would be far too slow here: then the
    /// gallery asks first (see [`GalleryState::confirm`]).
    pub fn open_example(&mut self, name: &str) {
        let Some(p) = presets::find(name) else {
            self.notify(format!("no example is called `{name}`; the examples are {}", presets::names()), true);
            return;
        };
        if let Some(slow) = self.too_slow(p) {
            self.gallery.confirm = Some(slow);
            self.gallery.open = true;
            return;
        }
        self.open_example_anyway(p.name);
    }

    /// Opens the built-in example `name` whatever its speed here.
    pub fn open_example_anyway(&mut self, name: &str) {
        self.gallery.confirm = None;
        self.gallery.open = false;
        self.open_scene(Path::new(name));
    }

    /// Opens the built-in example `name` re-initialised with about `atoms` atoms.
    pub fn open_example_with_atoms(&mut self, name: &str, atoms: usize) {
        self.gallery.confirm = None;
        self.gallery.open = false;
        let opened = crate::scene::preset_scene(name)
            .map_err(|e| e.to_string())
            .and_then(|s| reinit::reinitialise(&s, atoms, InitialState::LiquidSlab));
        match opened {
            Ok(scene) => {
                self.scene_path = None;
                self.settings.last_scene = None;
                let (fields, pace) = (scene.fields.clone(), scene.steps_per_frame);
                self.load_scene(scene);
                self.adopt_scene_view(fields, pace);
                self.notify(format!("opened the example {name} with about {atoms} atoms"), false);
            }
            Err(e) => self.notify(e, true),
        }
    }
}
