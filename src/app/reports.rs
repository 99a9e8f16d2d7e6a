//! What the simulation thread's reports change in the app: status, telemetry, frames,
//! snapshots, flow windows, analysis results and errors ([`App::handle_report`]).

use super::*;

impl App {
    /// What one report of the simulation thread changes in the app.
    pub(super) fn handle_report(&mut self, report: SimReport) {
        match report {
            SimReport::Status(s) => {
                // The panels own the parameters once running (a status may be older than the
                // last change sent, e.g. mid-ramp); they start from the simulation's.
                if self.status.is_none() {
                    self.params = s.params.clone();
                }
                if self.drawn_box != Some(s.sim_box) {
                    // A box that breathes under constant-pressure Monte Carlo is redrawn; the
                    // camera is refitted only for a new box, not for those small changes.
                    self.drawn_box = Some(s.sim_box);
                    self.pending_scene = true;
                    if self.fitted_box.is_none_or(|f| !similar_box(&f, &s.sim_box)) {
                        self.fitted_box = Some(s.sim_box);
                        self.fit_camera();
                    }
                }
                if self.reinit_atoms == 0 {
                    self.reinit_atoms = s.n_atoms;
                }
                if self.verbose
                    && self.status.as_ref().is_none_or(|o| o.why != s.why || o.position_path != s.position_path)
                {
                    eprintln!("argon-sandbox: {}; positions: {} ({})", s.why, s.position_path, self.interop_note);
                }
                self.measure_status(&s);
                self.status = Some(*s);
            }
            SimReport::Telemetry(t) => {
                self.measure_telemetry(&t);
                self.plots.add_telemetry(&t);
                self.last_telemetry = t.last().cloned();
            }
            SimReport::Analysis(a) => {
                self.analysis_pending = false;
                // Keep analysis to about 1 % of the simulation thread's time (it waits while
                // g(r) and the histograms are computed: 15 ms at a million atoms on an H200).
                self.analysis_due = Instant::now() + ANALYSIS_PERIOD.max(a.cost * ANALYSIS_COST_FACTOR);
                self.plots.add_analysis(&a);
            }
            SimReport::Snapshot { purpose, snapshot, species } => self.snapshot_arrived(purpose, *snapshot, species),
            SimReport::Notice(text) => self.notify(text, false),
            SimReport::Error(text) => {
                self.analysis_pending = false;
                // A refused change leaves the simulation's parameters as they were.
                if let Some(s) = &self.status {
                    self.params = s.params.clone();
                }
                self.notify(text, true);
            }
            SimReport::Fields(f) => self.fields_arrived(*f),
            SimReport::FieldsOff => self.fields_off(),
            SimReport::TransportStarted { step, why } => self.transport_started(step, why),
            SimReport::Transport { since, samples } => self.transport_arrived(since, *samples),
            SimReport::TransportOff(why) => self.transport_off(why),
            SimReport::Replay(r) => self.replay_report(r),
            SimReport::NeedSlots(n) => {
                self.need_slots = n;
                self.interop_failed = false;
            }
            SimReport::Loaded(scene) => {
                self.replay_clear();
                self.shapes = scene.obstacles.clone();
                self.flow.wake.clear();
                let was_mixture = self.params.species.len() > 1;
                self.params = scene.sim_params();
                if !was_mixture {
                    self.colour_mixture();
                }
                self.reinit_composition = species::composition_text(&scene);
                self.dye_loaded(&scene);
                self.scene = *scene;
                self.pending_scene = true;
                self.fitted_box = None;
                self.drawn_box = None;
                self.plots.clear_series();
                self.plots.reset_rdf();
                self.probe.recent.clear();
                self.probe.line = None;
                self.grabbed = None;
                (self.rdf_region, self.rdf_use_region) = (None, false);
                self.reinit_atoms = 0;
            }
        }
    }
}
