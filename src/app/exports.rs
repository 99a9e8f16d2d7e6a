//! What leaves the app as files for other tools: the current frame as extended XYZ, a LAMMPS
//! input deck of the current state, trajectories written while it runs (extended XYZ or
//! LAMMPS dump), the thermo CSV of what the plots show, the force history of the bodies and
//! the g(r) table. Every write is
//! atomic and off the UI thread; every failure is a message naming the file.

use std::path::PathBuf;

use super::App;
use super::commands::{SimCommand, SnapshotPurpose, TrajectorySpec};
use super::force_plots::force_history_csv;
use crate::export::lammps::{ExportInput, build_deck_with_fields, write_deck};
use crate::io::atomic::write_atomic;
use crate::io::extxyz::{FrameRef, write_extxyz};
use crate::io::thermo::thermo_csv;
use crate::sim::Snapshot;
use crate::units;

impl App {
    pub fn export_xyz_dialog(&mut self) {
        let dialog = rfd::FileDialog::new().add_filter("extended XYZ", &["xyz", "extxyz"]).set_file_name("frame.xyz");
        if let Some(path) = dialog.save_file() {
            self.request_export_xyz(path);
        }
    }

    /// Writes the current frame as extended XYZ (reduced units) to `path`, in the background.
    pub fn request_export_xyz(&mut self, path: PathBuf) {
        self.sim.send(SimCommand::TakeSnapshot(SnapshotPurpose::ExportXyz(path)));
    }

    pub(super) fn export_xyz(&mut self, path: PathBuf, snapshot: Snapshot, species: Vec<String>) {
        // Reduced masses for ASE's momenta, by species name (none if a name is unknown here).
        let masses: Option<Vec<f64>> =
            species.iter().map(|n| self.params.species.iter().find(|s| &s.name == n).map(|s| s.mass)).collect();
        self.spawn_task("exporting extended XYZ", move || {
            let s = &snapshot;
            let frame = FrameRef {
                sim_box: &s.sim_box,
                species_names: &species,
                types: &s.atoms.types,
                positions: &s.atoms.positions,
                velocities: Some(&s.atoms.velocities),
                step: s.step,
                time: s.time,
                units: "lj",
                masses: masses.as_deref(),
                dye: s.atoms.has_dye().then_some(&s.atoms.dye[..]),
            };
            write_extxyz(&path, &frame).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(format!("wrote {} atoms to {}", s.atoms.len(), path.display()))
        });
    }

    pub fn export_lammps_dialog(&mut self) {
        let dialog = rfd::FileDialog::new().set_title("Folder for the LAMMPS input deck (in.argon, data.argon)");
        if let Some(dir) = dialog.pick_folder() {
            self.request_export_lammps(dir);
        }
    }

    /// Writes `in.argon` and `data.argon` for the current state into `dir`, in the background.
    pub fn request_export_lammps(&mut self, dir: PathBuf) {
        self.sim.send(SimCommand::TakeSnapshot(SnapshotPurpose::ExportLammps(dir)));
    }

    pub(super) fn export_lammps(&mut self, dir: PathBuf, snapshot: Snapshot) {
        let params = self.status.as_ref().map_or_else(|| self.params.clone(), |s| s.params.clone());
        let shapes = self.shapes.clone();
        let units = self.settings.lammps_units;
        let rakes = self.dye.sources.iter().filter(|e| matches!(e.kind, super::dye::DyeKind::Rake { .. })).count();
        // The deck writes the flow fields on the app's grid (for `argon-sandbox lammps-fields`)
        // with the sampling the Flow view runs, or, for a flow scene (a tunnel or obstacles)
        // with the view off, with the sampling the view would run.
        let fields =
            self.flow.sampling().cloned().or_else(|| {
                (params.tunnel.is_some() || !shapes.is_empty()).then(|| self.settings.flow_sampling.clone())
            });
        let source = match &self.scene_path {
            Some(p) => format!("the app (scene {}, step {})", p.display(), snapshot.step),
            None => format!("the app (step {})", snapshot.step),
        };
        self.spawn_task("exporting the LAMMPS deck", move || {
            let deck = build_deck_with_fields(&ExportInput {
                sim_box: &snapshot.sim_box,
                params: &params,
                atoms: &snapshot.atoms,
                shapes: &shapes,
                source: &source,
                units,
                rakes,
                steps: 10_000,
                thermo_every: 100,
            }, fields.as_ref())?;
            write_deck(&dir, &deck).map_err(|e| format!("{}: {e}", dir.display()))?;
            let mut msg = format!("wrote in.argon and data.argon ({} units) to {}", units.name(), dir.display());
            if deck.fields.is_some() {
                msg.push_str(&format!(
                    ", with the flow fields and obstacle forces (after the LAMMPS run: argon-sandbox lammps-fields {} --out fields)",
                    dir.display()
                ));
            }
            for w in &deck.warnings {
                msg.push_str(&format!("; warning: {w}"));
            }
            Ok(msg)
        });
    }

    pub fn start_trajectory_dialog(&mut self) {
        let ext = self.settings.trajectory_format.extension();
        let dialog = rfd::FileDialog::new()
            .add_filter(self.settings.trajectory_format.label(), &[ext])
            .set_title("Write a trajectory")
            .set_file_name(format!("trajectory.{ext}"));
        if let Some(path) = dialog.save_file() {
            self.start_trajectory(path);
        }
    }

    /// Starts writing a trajectory to `path` with the format, units and interval in the settings.
    pub fn start_trajectory(&mut self, path: PathBuf) {
        let every = self.settings.trajectory_every;
        if every == 0 {
            self.notify("trajectory: the interval must be at least 1 step", true);
            return;
        }
        self.sim.send(SimCommand::Trajectory(Some(TrajectorySpec {
            path,
            format: self.settings.trajectory_format,
            units: self.settings.trajectory_units,
            every,
        })));
    }

    /// Stops the trajectory; the file is complete when the simulation thread reports it.
    pub fn stop_trajectory(&mut self) {
        self.sim.send(SimCommand::Trajectory(None));
    }

    pub fn save_thermo_dialog(&mut self) {
        let dialog = rfd::FileDialog::new().add_filter("CSV", &["csv"]).set_file_name("thermo.csv");
        if let Some(path) = dialog.save_file() {
            self.save_thermo(path);
        }
    }

    /// Writes the records behind the plots (argon units, the plots' columns) to `path`.
    pub fn save_thermo(&mut self, path: PathBuf) {
        if self.plots.records.is_empty() {
            self.notify("no thermo data yet: let the simulation run first", true);
            return;
        }
        let text = thermo_csv(&self.plots.records, units::UnitSystem::Argon);
        let rows = self.plots.records.len();
        self.spawn_task("saving the thermo CSV", move || {
            write_atomic(&path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(format!("wrote {rows} thermo rows to {}", path.display()))
        });
    }

    pub fn save_forces_dialog(&mut self) {
        let dialog = rfd::FileDialog::new().add_filter("CSV", &["csv"]).set_file_name("forces.csv");
        if let Some(path) = dialog.save_file() {
            self.save_forces(path);
        }
    }

    /// Writes the force on each body behind the plots (time tau, step, fx fy fz per body in
    /// epsilon/sigma) to `path`.
    pub fn save_forces(&mut self, path: PathBuf) {
        let Some(text) = force_history_csv(&self.plots.records) else {
            self.notify("no body forces yet: draw an obstacle or close a wall and let the simulation run", true);
            return;
        };
        let rows = text.lines().count() - 1;
        self.spawn_task("saving the forces CSV", move || {
            write_atomic(&path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(format!("wrote {rows} force rows to {}", path.display()))
        });
    }

    pub fn save_rdf_dialog(&mut self) {
        let dialog = rfd::FileDialog::new().add_filter("CSV", &["csv"]).set_file_name("gr.csv");
        if let Some(path) = dialog.save_file() {
            self.save_rdf(path);
        }
    }

    /// Writes the g(r) the plot shows (averaged over its window) as r in sigma and Å, and g.
    pub fn save_rdf(&mut self, path: PathBuf) {
        let curve = self.plots.rdf();
        if curve.is_empty() {
            self.notify("no g(r) yet: open the g(r) plot and let it collect a frame", true);
            return;
        }
        let nm_per_sigma = units::reduced_length_to_nm(1.0);
        let mut text = String::from("r_sigma,r_angstrom,g\n");
        for [r_nm, g] in &curve {
            text.push_str(&format!("{:?},{:?},{:?}\n", r_nm / nm_per_sigma, r_nm * 10.0, g));
        }
        let frames = self.plots.rdf_frames();
        self.spawn_task("saving the g(r) table", move || {
            write_atomic(&path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(format!("wrote g(r) ({} bins, {frames} frames averaged) to {}", curve.len(), path.display()))
        });
    }
}
