//! Scene files from the app: open (a path or a built-in example by name), save (atomically,
//! in the background, with or without the current atoms) and their dialogs; and the
//! background tasks that writes like these run on, each ending in a message.

use std::path::{Path, PathBuf};

use super::App;
use super::commands::{SimCommand, SnapshotPurpose};
use crate::sim::Snapshot;

impl App {
    /// Opens a scene file, or a built-in example by name: on success the simulation starts over
    /// from it. An example has no file to save into (Save asks where).
    pub fn open_scene(&mut self, path: &Path) {
        match crate::scene::load(Some(path)) {
            Ok(scene) => {
                let preset = crate::scene::preset_named(path).is_some();
                self.scene_path = (!preset).then(|| path.to_path_buf());
                self.settings.last_scene = Some(path.to_path_buf());
                let (fields, pace) = (scene.fields.clone(), scene.steps_per_frame);
                self.load_scene(scene);
                self.adopt_scene_view(fields, pace);
                self.notify(format!("opened {}", path.display()), false);
            }
            Err(e) => self.notify(format!("{e}"), true),
        }
    }

    pub fn open_scene_dialog(&mut self) {
        let dialog = rfd::FileDialog::new().add_filter("argon-sandbox scene", &["ron"]).set_title("Open scene");
        if let Some(path) = dialog.pick_file() {
            self.open_scene(&path);
        }
    }

    /// Saves the scene (fills, parameters, obstacles) to `path` in the background, atomically.
    pub fn save_scene(&mut self, path: PathBuf) {
        let doc = self.document();
        if let Err(e) = doc.validate() {
            self.notify(format!("not saved: {e}"), true);
            return;
        }
        self.scene_path = Some(path.clone());
        self.spawn_task("saving the scene", move || {
            doc.save(&path).map_err(|e| e.to_string())?;
            Ok(format!("saved {}", path.display()))
        });
    }

    /// Ctrl+S: saves where the scene came from, else asks where.
    pub fn save(&mut self) {
        match self.scene_path.clone() {
            Some(p) => self.save_scene(p),
            None => self.save_scene_dialog(false),
        }
    }

    pub fn save_scene_dialog(&mut self, with_atoms: bool) {
        let dialog = rfd::FileDialog::new()
            .add_filter("argon-sandbox scene", &["ron"])
            .set_title(if with_atoms { "Save scene with the current atoms" } else { "Save scene" })
            .set_file_name("scene.ron");
        if let Some(path) = dialog.save_file() {
            if with_atoms {
                self.sim.send(SimCommand::TakeSnapshot(SnapshotPurpose::SaveScene(path)));
            } else {
                self.save_scene(path);
            }
        }
    }

    pub(super) fn save_scene_with_atoms(&mut self, path: PathBuf, snapshot: Snapshot) {
        let doc = self.document().with_state(&snapshot);
        self.scene_path = Some(path.clone());
        // Checking a million explicit atoms takes a moment: do it with the save, off the UI thread.
        self.spawn_task("saving the scene", move || {
            doc.validate().map_err(|e| format!("not saved: {e}"))?;
            doc.save(&path).map_err(|e| e.to_string())?;
            Ok(format!("saved {} with {} atoms", path.display(), snapshot.atoms.len()))
        });
    }

    /// Runs `job` on a background thread; its result becomes a message when it ends. A job of
    /// the same name still running is not started twice.
    pub fn spawn_task(&mut self, name: &str, job: impl FnOnce() -> Result<String, String> + Send + 'static) {
        if self.tasks.iter().any(|(n, _)| n == name) {
            self.notify(format!("{name} is still in progress; try again when it ends"), true);
            return;
        }
        match std::thread::Builder::new().name(name.into()).spawn(job) {
            Ok(h) => self.tasks.push((name.to_string(), h)),
            Err(e) => self.notify(format!("{name}: could not start a thread: {e}"), true),
        }
    }

    /// Waits for background jobs (tests, exit).
    pub fn wait_for_tasks(&mut self) {
        while !self.tasks.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(10));
            self.finish_tasks();
        }
    }
}
