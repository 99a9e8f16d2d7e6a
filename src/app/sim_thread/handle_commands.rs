//! Applying [`SimCommand`]s on the simulation thread: the dispatch (`apply`), edits of the
//! loaded system, loading a scene, switching backends, and the helpers they use (clearance of
//! added atoms, analysis). The command and report types themselves live in `app/commands.rs`.

use std::sync::mpsc::Sender;
use std::time::Instant;

use super::pacing::FillPacer;
use super::{Flow, Worker, bake};
use crate::app::actions::ADD_CLEARANCE;
use crate::app::commands::{Analysis, AnalysisRequest, PaceMode, SimCommand, SimReport};
use crate::scene::Scene;
use crate::shapes::Shape;
use crate::sim::{AtomState, Backend, BackendChoice, CaughtAtoms, SimError, fallback_for, open_backend_on, start_at};

impl Worker {
    pub(super) fn apply(&mut self, cmd: SimCommand) -> Flow {
        self.replay_before(&cmd);
        match cmd {
            SimCommand::Shutdown => return Flow::Stop,
            SimCommand::Run(on) => {
                if !on && self.running {
                    // The last chunk's frame may have been skipped: show where it stopped.
                    self.publish();
                }
                self.running = on && self.backend.is_some();
                self.due = Instant::now();
                self.rate_since = Instant::now();
                self.rate_steps = 0;
                self.maybe_status(true);
            }
            SimCommand::Step(n) => {
                self.running = false;
                self.chunk(n.max(1));
                self.maybe_status(true);
            }
            SimCommand::SetPace(p) => {
                if p.mode == PaceMode::Fill && self.pace.mode != PaceMode::Fill {
                    // Back to the default pace: it starts afresh, as when the app opens.
                    self.fill = FillPacer::default();
                }
                self.pace = p;
            }
            // The display's rate says how much of each frame the `Fill` pace may take; while
            // paused or under another pace it says nothing about that share.
            SimCommand::DisplayRate { fps } => {
                if self.running && self.pace.mode == PaceMode::Fill {
                    self.fill.display(fps, self.pace.target_hz);
                }
            }
            SimCommand::UseSlots(s) => {
                if self.pending.is_some() {
                    self.hand_over(true);
                }
                self.slots = s;
                self.asked_slots_for = 0;
                self.publish();
                self.maybe_status(true);
            }
            SimCommand::SetColour(c) => {
                self.colour = c;
                self.publish();
            }
            SimCommand::Load { scene, backend } => {
                // A new system ends the old one's trajectory, and restarts a measurement (after
                // `Loaded`, so the UI checks it against the new system).
                self.set_trajectory(None);
                self.load(&scene, backend);
                self.restart_transport("a scene was loaded");
            }
            SimCommand::Trajectory(spec) => {
                self.set_trajectory(spec);
                self.maybe_status(true);
            }
            SimCommand::SwitchBackend(choice) => {
                // A failed switch keeps the old backend, and its measurement runs on.
                if self.switch_backend(choice) {
                    self.restart_transport("the backend switched");
                }
            }
            SimCommand::UseDevice(dev) => self.use_device(dev),
            SimCommand::Fields(spec) => self.set_fields(spec),
            SimCommand::Dye(edit) => self.set_dye(edit),
            SimCommand::Transport(spec) => self.set_transport(spec),
            SimCommand::Replay(c) => self.replay_command(c),
            other => {
                // Something the wgpu backend does not run yet moves the system to one that does.
                self.leave_wgpu_for(&other);
                let Some(b) = self.backend.as_mut() else {
                    self.report(SimReport::Error("no simulation is loaded".into()));
                    return Flow::Continue;
                };
                let restart = super::transport::restarts(&other, b.params());
                match Self::edit(b.as_mut(), other, &mut self.shapes, &mut self.caught, &self.tx) {
                    Ok(changed) => {
                        if let Some(why) = restart.filter(|_| changed) {
                            self.restart_transport(why);
                        }
                    }
                    Err(e) => self.report(SimReport::Error(e.to_string())),
                }
                self.replay_after();
                self.publish();
                self.maybe_status(true);
            }
        }
        Flow::Continue
    }

    /// Commands that change the loaded system. Ok(false): an atom edit that found no atoms
    /// to add or remove (the system is as it was).
    fn edit(
        b: &mut dyn Backend,
        cmd: SimCommand,
        shapes: &mut Vec<Shape>,
        caught_policy: &mut CaughtAtoms,
        tx: &Sender<SimReport>,
    ) -> Result<bool, SimError> {
        match cmd {
            SimCommand::SetParams(p) => b.set_params(*p)?,
            SimCommand::DragPiston(target) => b.drag_piston(target)?,
            SimCommand::SetObstacles { shapes: new, caught } => {
                *caught_policy = caught;
                let field = bake(&new, &b.sim_box());
                let n = b.set_obstacles(field, caught)?;
                *shapes = new;
                if n > 0 {
                    let what = match caught {
                        CaughtAtoms::Remove => "removed",
                        CaughtAtoms::PushOut => "pushed out",
                    };
                    let _ = tx.send(SimReport::Notice(format!("{n} atoms inside the shape were {what}")));
                }
            }
            SimCommand::RemoveAtoms(sel) => return Ok(b.remove_atoms(&sel)? > 0),
            SimCommand::AddAtoms(atoms) => {
                // The brush checked clearance against the last frame it saw; atoms have moved
                // since, so the current state decides (an overlap would blow the run up).
                let atoms = clear_of_current(b, atoms)?;
                if atoms.is_empty() {
                    return Ok(false);
                }
                b.add_atoms(&atoms)?;
            }
            SimCommand::Analyse(req) => {
                let a = analyse(b, &req)?;
                let _ = tx.send(SimReport::Analysis(Box::new(a)));
            }
            SimCommand::TakeSnapshot(purpose) => {
                let snapshot = Box::new(b.snapshot()?);
                let species = b.params().species.iter().map(|s| s.name.clone()).collect();
                let _ = tx.send(SimReport::Snapshot { purpose, snapshot, species });
            }
            SimCommand::Restore(s) => b.restore(&s)?,
            _ => {}
        }
        Ok(true)
    }

    fn load(&mut self, scene: &Scene, choice: BackendChoice) {
        let mut setup = match scene.build() {
            Ok(s) => s,
            Err(e) => {
                self.report(SimReport::Error(format!("the scene could not be built: {e}")));
                return;
            }
        };
        let field = bake(&setup.shapes, &setup.sim_box);
        // The scene's dye: its regions are tagged; its rakes run from the start (`fresh_backend`),
        // and the dye column makes Auto take a backend that carries dye.
        self.rakes = crate::scene::dye::rakes(&setup.dye);
        if !setup.dye.is_empty() {
            setup.atoms.dye_mut();
        }
        // Free the old system first: two large systems may not fit side by side.
        self.backend = None;
        // A scene the wgpu backend does not run yet (obstacles, a tunnel...) opens on the
        // backend Auto takes otherwise, saying why, rather than not at all.
        let refused = match choice {
            BackendChoice::Wgpu => crate::sim::gpu::unsupported(&setup.params, None).or_else(|| {
                // The precision: on the renderer's device, or the adapter it would open.
                let f64_missing = (setup.params.precision != crate::physics::real::Precision::Single)
                    .then(|| crate::sim::gpu::device::f64_missing_on(self.gpu.as_ref()))
                    .flatten();
                crate::sim::gpu::unsupported(&setup.params, f64_missing.as_deref())
            }),
            _ => None,
        };
        let opened = match &refused {
            Some(not) => fallback_for(setup.sim_box, setup.params.clone(), &setup.atoms, field)
                .map(|(b, why)| (b, format!("{why}; not wgpu, which does not run this scene yet ({not})"))),
            None => {
                open_backend_on(choice, setup.sim_box, setup.params.clone(), &setup.atoms, field, self.gpu.as_ref())
            }
        }
        .and_then(|(mut b, why)| start_at(b.as_mut(), setup.step, setup.time, setup.piston).map(|()| (b, why)));
        match opened {
            Ok((b, why)) => {
                if let Some(not) = refused {
                    let kind = b.info().kind.to_uppercase();
                    self.report(SimReport::Notice(format!("Opened on the {kind} backend: {not}")));
                }
                self.backend = Some(b);
                self.fresh_backend();
                self.why = why;
                self.shapes = setup.shapes;
                self.report(SimReport::Loaded(Box::new(scene.clone())));
                self.publish();
                self.maybe_status(true);
            }
            Err(e) => {
                self.running = false;
                self.report(SimReport::Error(format!("the simulation could not start: {e}")));
            }
        }
    }

    /// Moves the system to the `choice` backend; false when it stayed where it was.
    fn switch_backend(&mut self, choice: BackendChoice) -> bool {
        let Some(old) = self.backend.as_mut() else { return false };
        let field = bake(&self.shapes, &old.sim_box());
        let gpu = self.gpu.clone();
        let result = (|| {
            let snap = old.snapshot()?;
            let params = old.params().clone();
            let (mut b, why) = open_backend_on(choice, snap.sim_box, params, &snap.atoms, field, gpu.as_ref())?;
            b.restore(&snap)?;
            Ok::<_, SimError>((b, why))
        })();
        let switched = match result {
            Ok((b, why)) => {
                self.report(SimReport::Notice(why.clone()));
                self.backend = Some(b);
                self.fresh_backend();
                self.why = why;
                self.publish();
                true
            }
            Err(e) => {
                self.report(SimReport::Error(format!("switching backend failed, staying on the old one: {e}")));
                false
            }
        };
        self.maybe_status(true);
        switched
    }
}

/// The atoms of `new` at least [`ADD_CLEARANCE`] from every current atom.
fn clear_of_current(b: &mut dyn Backend, new: AtomState) -> Result<AtomState, SimError> {
    let Some(first) = new.positions.first() else { return Ok(new) };
    let snap = b.copy_state()?;
    let sb = snap.sim_box;
    let min_sq = ADD_CLEARANCE * ADD_CLEARANCE;
    let dist_sq = |a: [f64; 3], c: [f64; 3]| {
        let d = sb.min_image(a, c);
        d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    };
    // Only current atoms near the new ones matter: those within reach of their bounding sphere.
    let reach = new.positions.iter().map(|&p| dist_sq(p, *first)).fold(0.0, f64::max).sqrt() + ADD_CLEARANCE;
    let near: Vec<[f64; 3]> =
        snap.atoms.positions.into_iter().filter(|&q| dist_sq(q, *first) <= reach * reach).collect();
    let mut kept = AtomState::default();
    for i in 0..new.len() {
        let p = new.positions[i];
        if near.iter().all(|&q| dist_sq(p, q) >= min_sq) {
            kept.positions.push(p);
            kept.velocities.push(new.velocities[i]);
            kept.types.push(new.types[i]);
        }
    }
    Ok(kept)
}

fn analyse(b: &mut dyn Backend, req: &AnalysisRequest) -> Result<Analysis, SimError> {
    let started = std::time::Instant::now();
    let temperature = b.measure()?.temperature;
    let len = b.sim_box().length();
    // g(r) beyond half the shortest periodic edge would count images twice.
    let half = (0..3).filter(|&k| b.sim_box().periodic[k]).map(|k| 0.5 * len[k]).fold(f64::INFINITY, f64::min);
    let r_max = req.rdf_r_max.min(half * 0.999);
    // A region the atoms have left (or a box that changed under it) is reported beside the
    // other histograms rather than failing them.
    let (rdf, rdf_error) = match (req.rdf_bins > 0 && r_max > 0.5, req.rdf_region) {
        (false, _) => (None, None),
        (true, None) => (Some(b.rdf(req.rdf_bins, r_max, None)?), None),
        (true, Some(r)) => match b.rdf(req.rdf_bins, r_max, Some(&r)) {
            Ok(g) => (Some(g), None),
            Err(SimError::Invalid(why)) => (None, Some(why)),
            Err(e) => return Err(e),
        },
    };
    let speed = if req.speed_bins > 0 { Some(b.speed_histogram(req.speed_bins, req.speed_v_max)?) } else { None };
    let density = if req.density_bins > 0 { Some(b.density_profile(req.density_bins)?) } else { None };
    let masses = mass_fractions(b)?;
    let cost = started.elapsed();
    Ok(Analysis {
        step: b.step(),
        temperature,
        rdf,
        rdf_region: req.rdf_region,
        rdf_error,
        speed,
        density,
        masses,
        cost,
    })
}

/// (mass, fraction of the atoms) of every species present: one argon-mass entry without a
/// copy of the state when there is one species.
fn mass_fractions(b: &mut dyn Backend) -> Result<Vec<(f64, f64)>, SimError> {
    let species = b.params().species.clone();
    if species.len() == 1 {
        return Ok(vec![(species[0].mass, 1.0)]);
    }
    let types = b.copy_state()?.atoms.types;
    let mut counts = vec![0usize; species.len()];
    for &t in &types {
        if let Some(c) = counts.get_mut(t as usize) {
            *c += 1;
        }
    }
    let n = types.len().max(1) as f64;
    Ok(species.iter().zip(counts).filter(|(_, c)| *c > 0).map(|(s, c)| (s.mass, c as f64 / n)).collect())
}
