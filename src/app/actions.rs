//! What the person's gestures do: parameter changes (checked before they are sent), play /
//! pause / step / reset / re-initialise, backend switches, tool actions (shapes, atom brushes,
//! dragging an atom) and undo / redo (opening and saving scenes: `files.rs`). Every failure
//! becomes a message naming the field or file and the fix; nothing here blocks on the
//! simulation.

use std::time::Instant;

use super::commands::{SimCommand, SnapshotPurpose};
use super::tools::{Tool, ToolAction, ToolSizes};
use super::undo::Edit;
use super::{App, Ramp};
use crate::analysis::RdfRegion;
use crate::physics::params::Tether;
use crate::rng::{Sequence, Stream};
use crate::scene::reinit;
use crate::scene::{ForcesSpec, IntegratorSpec, PotentialSpec, Scene, SpeciesSpec};
use crate::sim::{AtomSelection, AtomState, BackendChoice, CaughtAtoms};
use crate::units;

/// Atoms added per brush event at most (the brush pours, it does not flood).
const ADD_PER_EVENT: usize = 200;
/// Closest approach (sigma) of an added atom to any other atom, wall or obstacle surface.
pub(crate) const ADD_CLEARANCE: f64 = 0.95;

impl App {
    /// Sends `self.params` after checking it; on a bad value shows why and keeps the old one.
    pub fn apply_params(&mut self) -> bool {
        let sim_box = self.sim_box();
        match self.params.validate(&sim_box) {
            Ok(()) => {
                self.sim.send(SimCommand::SetParams(Box::new(self.params.clone())));
                true
            }
            Err(e) => {
                self.notify(format!("{e}"), true);
                if let Some(s) = &self.status {
                    self.params = s.params.clone();
                }
                false
            }
        }
    }

    /// Changes the target temperature (kelvin), refusing values out of range.
    pub fn set_target_kelvin(&mut self, kelvin: f64) -> bool {
        self.params.temperature = units::kelvin_to_reduced(kelvin);
        self.apply_params()
    }

    pub fn set_running(&mut self, on: bool) {
        self.sim.send(SimCommand::Run(on));
        if let Some(s) = &mut self.status {
            s.running = on;
        }
    }

    pub fn toggle_running(&mut self) {
        let on = !self.running();
        self.set_running(on);
    }

    /// Advances one frame's worth of steps (at least one) and pauses.
    pub fn single_step(&mut self) {
        self.sim.send(SimCommand::Step(self.pace.steps_per_frame.max(1)));
        if let Some(s) = &mut self.status {
            s.running = false;
        }
    }

    pub fn set_steps_per_frame(&mut self, n: u64) {
        self.pace.steps_per_frame = n.clamp(1, 10_000);
        self.sim.send(SimCommand::SetPace(self.pace));
    }

    /// A fixed pace of `n` steps per displayed frame (slow motion; a scene's `steps_per_frame`).
    pub fn set_fixed_pace(&mut self, n: u64) {
        self.pace.mode = super::commands::PaceMode::Fixed;
        self.set_steps_per_frame(n);
    }

    /// The display's target frame rate (the monitor's refresh rate), which the `Fill` pace
    /// gives way to.
    pub fn set_display_target(&mut self, hz: f64) {
        if hz.is_finite() && hz >= 1.0 && (hz - self.pace.target_hz).abs() > 0.5 {
            self.pace.target_hz = hz.min(1000.0);
            self.sim.send(SimCommand::SetPace(self.pace));
        }
    }

    /// `Fill` (the default: as fast as the display allows) or `Fixed` (steps per frame).
    pub fn set_pace_mode(&mut self, mode: super::commands::PaceMode) {
        self.pace.mode = mode;
        self.sim.send(SimCommand::SetPace(self.pace));
    }

    /// The scene document with the current parameters and obstacles written in.
    pub fn document(&self) -> Scene {
        let p = &self.params;
        let mut s = self.scene.clone();
        if self.scene.species.iter().map(SpeciesSpec::species).ne(p.species.iter().cloned()) {
            s = s.with_species(&p.species);
        }
        s.temperature_k = units::reduced_to_kelvin(p.temperature);
        s.thermostat = p.thermostat;
        s.forces = ForcesSpec { gravity: p.gravity, drive: p.drive };
        s.integrator = IntegratorSpec { dt: p.dt, skin: p.skin };
        s.potential = PotentialSpec { cutoff: p.cutoff, shift: p.shift };
        s.obstacles = self.shapes.clone();
        s.piston = p.piston.as_ref().map(crate::scene::PistonSpec::from_params);
        s.surface_friction = p.surface_friction;
        s.tunnel = p.tunnel;
        s.precision = Some(p.precision);
        s.dye = self.dye.scene_sources();
        s
    }

    /// Switches the piston on (at the default pressure, or the last one set) or off.
    pub fn set_piston(&mut self, on: bool) {
        let last = self.scene.piston.as_ref().map(|p| p.params()).unwrap_or_default();
        self.params.piston = on.then(|| self.params.piston.unwrap_or(last));
        self.apply_params();
    }

    /// Drags the piston toward height `target` (sigma), or releases it (None).
    pub fn drag_piston(&mut self, target: Option<f64>) {
        self.piston_drag = target.is_some();
        self.sim.send(SimCommand::DragPiston(target));
    }

    /// Starts over from the scene's fills, keeping the current parameters and obstacles.
    pub fn reset(&mut self) {
        let doc = self.document();
        self.load_scene(doc);
    }

    /// Rebuilds with `reinit_atoms` atoms placed as `reinit_state`, of the species and
    /// fractions typed in `reinit_composition` (refused with a message when they do not parse).
    pub fn reinitialise(&mut self) {
        let (species, fractions) =
            match super::species::parse_composition(&self.reinit_composition, &self.params.species) {
                Ok(c) => c,
                Err(e) => return self.notify(e, true),
            };
        let doc = super::species::with_composition(&self.document(), &species, fractions);
        match reinit::reinitialise(&doc, self.reinit_atoms, self.reinit_state) {
            Ok(doc) => self.load_scene(doc),
            Err(e) => self.notify(e, true),
        }
    }

    pub(super) fn load_scene(&mut self, doc: Scene) {
        let backend = self.settings.backend;
        let doc = with_app_defaults_on(doc, backend, self.auto_wgpu);
        for e in self.history.clear() {
            self.forget(&e);
        }
        self.tools.selected = None;
        self.sim.send(SimCommand::Load { scene: Box::new(doc), backend });
    }

    pub fn switch_backend(&mut self, choice: BackendChoice) {
        self.settings.backend = choice;
        self.sim.send(SimCommand::SwitchBackend(choice));
    }

    /// Starts (or reverses) a temperature ramp of `k_per_s` kelvin per second.
    pub fn start_ramp(&mut self, k_per_s: f64) {
        let now = Instant::now();
        self.ramp = Some(Ramp { k_per_s, last: now, sent: now });
    }

    pub(super) fn update_ramp(&mut self) {
        let Some(mut r) = self.ramp else { return };
        let now = Instant::now();
        let dt = now.duration_since(r.last).as_secs_f64();
        r.last = now;
        let kelvin = units::reduced_to_kelvin(self.params.temperature) + r.k_per_s * dt;
        let clamped = kelvin.clamp(1.0, 5000.0);
        self.params.temperature = units::kelvin_to_reduced(clamped);
        if now.duration_since(r.sent).as_secs_f64() >= 0.1 {
            r.sent = now;
            self.apply_params();
        }
        self.ramp = if clamped != kelvin { None } else { Some(r) };
    }

    pub fn stop_ramp(&mut self) {
        self.ramp = None;
        self.apply_params();
    }

    pub fn tool_sizes(&self) -> ToolSizes {
        ToolSizes {
            line_thickness: self.settings.line_thickness,
            brush_radius: self.settings.brush_radius,
            atom_brush_radius: self.settings.atom_brush_radius,
        }
    }

    pub fn set_tool(&mut self, tool: Tool) {
        let actions = self.tools.key_escape();
        self.tool_actions(actions);
        self.tools.set_tool(tool);
        if tool == Tool::Dye {
            self.dye_tool_chosen();
        }
    }

    fn send_shapes(&mut self, caught: CaughtAtoms) {
        self.sim.send(SimCommand::SetObstacles { shapes: self.shapes.clone(), caught });
        self.geometry_changed();
    }

    fn new_snapshot_id(&mut self) -> u64 {
        let id = self.next_snapshot_id;
        self.next_snapshot_id += 1;
        self.sim.send(SimCommand::TakeSnapshot(SnapshotPurpose::Undo(id)));
        id
    }

    pub(super) fn forget(&mut self, e: &Edit) {
        if let Edit::Atoms { before, after } = e {
            self.snapshots.remove(before);
            self.snapshots.remove(after);
        }
    }

    /// Carries out what a tool asked for.
    pub fn tool_actions(&mut self, actions: Vec<ToolAction>) {
        for a in actions {
            match a {
                ToolAction::Commit { before, after } => {
                    let b = self.sim_box();
                    if let Some(s) = after.iter().find(|s| {
                        let (lo, hi) = s.bounds();
                        hi[0] < b.lo[0] || lo[0] > b.hi[0] || hi[1] < b.lo[1] || lo[1] > b.hi[1]
                    }) {
                        self.notify(format!("the {} lies entirely outside the tank: draw it inside", s.kind()), true);
                        continue;
                    }
                    self.shapes = after.clone();
                    self.send_shapes(self.settings.caught);
                    for e in self.history.record(Edit::Shapes { before, after }) {
                        self.forget(&e);
                    }
                }
                ToolAction::Live(now) => {
                    self.shapes = now;
                    self.send_shapes(CaughtAtoms::PushOut);
                }
                ToolAction::AtomEditStart => self.atom_edit_before = Some(self.new_snapshot_id()),
                ToolAction::AtomEditEnd => {
                    if let Some(before) = self.atom_edit_before.take() {
                        let after = self.new_snapshot_id();
                        for e in self.history.record(Edit::Atoms { before, after }) {
                            self.forget(&e);
                        }
                    }
                }
                ToolAction::RemoveAtoms { centre, radius } => {
                    // Removing atoms renumbers them: let go of a held atom first.
                    if self.params.tether.take().is_some() {
                        self.grabbed = None;
                        self.apply_params();
                    }
                    self.sim.send(SimCommand::RemoveAtoms(AtomSelection::Disc { centre, radius }));
                }
                ToolAction::AddAtoms { centre, radius } => {
                    let Some(species) = self.brush_type() else { continue };
                    let atoms = self.atoms_to_add(centre, radius, species);
                    if !atoms.is_empty() {
                        self.sim.send(SimCommand::AddAtoms(atoms));
                    }
                }
                ToolAction::Grab(p) => match self.atom_near(p, 1.5) {
                    Some(atom) => {
                        self.grabbed = Some(atom);
                        self.params.tether = Some(Tether { atom, target: p, stiffness: self.settings.drag_stiffness });
                        self.apply_params();
                    }
                    None => self.grabbed = None,
                },
                ToolAction::MoveGrab(p) => {
                    if let Some(t) = &mut self.params.tether {
                        t.target = p;
                        self.apply_params();
                    }
                }
                ToolAction::Release => {
                    self.grabbed = None;
                    if self.params.tether.take().is_some() {
                        self.apply_params();
                    }
                }
                ToolAction::Refused(why) => self.notify(why, true),
                ToolAction::RdfRegion(a, b) => self.set_rdf_region(a, b),
                ToolAction::DyeRake(a, b) => self.add_dye(super::dye::DyeKind::Rake { a, b }),
                ToolAction::DyeRegion(min, max) => self.add_dye(super::dye::DyeKind::Region { min, max }),
                ToolAction::DyePick(p) => match self.atom_near(p, 1.5) {
                    Some(atom) => self.add_dye(super::dye::DyeKind::Atom(atom)),
                    None => self.notify("dye: no atom there; click on an atom", true),
                },
            }
        }
    }

    /// The g(r) region between two corners on the front face (through the whole depth),
    /// clipped to the tank; g(r) then uses it.
    pub fn set_rdf_region(&mut self, a: [f64; 2], b: [f64; 2]) {
        let bx = self.sim_box();
        let clip = |v: f64, k: usize| v.clamp(bx.lo[k], bx.hi[k]);
        let r = RdfRegion::front(&bx, [clip(a[0], 0), clip(b[0], 0)], [clip(a[1], 1), clip(b[1], 1)]);
        if let Err(why) = crate::analysis::rdf::check_rdf_region(&bx, &r) {
            self.notify(format!("{why}: draw the region inside the tank"), true);
            return;
        }
        self.rdf_region = Some(r);
        self.set_rdf_use_region(true);
    }

    /// g(r) over the drawn region (when there is one) or the whole box; restarts its average.
    pub fn set_rdf_use_region(&mut self, on: bool) {
        self.rdf_use_region = on && self.rdf_region.is_some();
        self.plots.reset_rdf();
    }

    /// The atom (canonical index) whose centre is nearest to `p` in the front plane, within `reach`.
    pub fn atom_near(&self, p: [f64; 2], reach: f64) -> Option<u32> {
        let frame = self.frame.as_ref()?;
        let mut best = (reach * reach, None);
        for (i, a) in frame.iter().enumerate() {
            let d2 = (a[0] as f64 - p[0]).powi(2) + (a[1] as f64 - p[1]).powi(2);
            if d2 < best.0 {
                best = (d2, Some(i as u32));
            }
        }
        best.1
    }

    /// New atoms of type `species` in the brush disc (all through the tank's depth), clear of
    /// the atoms in the newest frame, the walls and the obstacles, with Maxwell-Boltzmann
    /// velocities for their mass.
    pub fn atoms_to_add(&self, centre: [f64; 2], radius: f64, species: u32) -> AtomState {
        let Some(s) = &self.status else { return AtomState::default() };
        let b = s.sim_box;
        let len = b.length();
        let near: Vec<[f64; 3]> = self
            .frame
            .as_ref()
            .map(|f| {
                f.iter()
                    .filter(|a| {
                        let (dx, dy) = (a[0] as f64 - centre[0], a[1] as f64 - centre[1]);
                        (dx * dx + dy * dy).sqrt() < radius + ADD_CLEARANCE
                    })
                    .map(|a| [a[0] as f64, a[1] as f64, a[2] as f64])
                    .collect()
            })
            .unwrap_or_default();
        let mut placed: Vec<[f64; 3]> = Vec::new();
        let mut rng = Sequence::new(self.params.seed, Stream::AddAtoms, self.frames_drawn as u32, s.step);
        let clear = |p: [f64; 3], others: &[[f64; 3]]| {
            let walls =
                (0..3).all(|k| b.periodic[k] || (p[k] - b.lo[k] >= ADD_CLEARANCE && b.hi[k] - p[k] >= ADD_CLEARANCE));
            let shapes = self.shapes.iter().all(|sh| sh.signed_distance([p[0], p[1]]) >= ADD_CLEARANCE);
            walls
                && shapes
                && others.iter().all(|q| {
                    let d = b.min_image(p, *q);
                    d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= ADD_CLEARANCE * ADD_CLEARANCE
                })
        };
        for _ in 0..ADD_PER_EVENT * 4 {
            if placed.len() >= ADD_PER_EVENT {
                break;
            }
            let (r, phi) = (radius * rng.uniform().sqrt(), std::f64::consts::TAU * rng.uniform());
            let p = [centre[0] + r * phi.cos(), centre[1] + r * phi.sin(), b.lo[2] + len[2] * rng.uniform()];
            if (0..2).any(|k| !b.periodic[k] && (p[k] < b.lo[k] || p[k] > b.hi[k])) {
                continue;
            }
            let p = b.wrap(p);
            if clear(p, &near) && clear(p, &placed) {
                placed.push(p);
            }
        }
        let mass = self.params.species.get(species as usize).map_or(1.0, |s| s.mass);
        let sd = (self.params.temperature.max(0.0) / mass).sqrt();
        let velocities = placed.iter().map(|_| [sd * rng.normal(), sd * rng.normal(), sd * rng.normal()]).collect();
        AtomState { types: vec![species; placed.len()], positions: placed, velocities, ..Default::default() }
    }

    pub fn undo(&mut self) {
        if self.tools.busy() {
            return;
        }
        let Some(edit) = self.history.undo() else { return };
        self.apply_edit_side(edit, true);
    }

    pub fn redo(&mut self) {
        if self.tools.busy() {
            return;
        }
        let Some(edit) = self.history.redo() else { return };
        self.apply_edit_side(edit, false);
    }

    fn apply_edit_side(&mut self, edit: Edit, before: bool) {
        match edit {
            Edit::Shapes { before: b, after: a } => {
                self.shapes = if before { b } else { a };
                self.tools.selected = None;
                self.send_shapes(self.settings.caught);
            }
            Edit::Atoms { before: b, after: a } => {
                let id = if before { b } else { a };
                match self.snapshots.get(&id) {
                    Some(s) => self.sim.send(SimCommand::Restore(Box::new(s.clone()))),
                    None => self.notify("that atom edit can no longer be undone (its saved state is gone)", true),
                }
            }
            Edit::Dye { before: b, after: a } => self.set_dye_sources(if before { b } else { a }),
        }
    }

    pub fn delete_selected(&mut self) {
        let actions = self.tools.delete_selected(&self.shapes);
        self.tool_actions(actions);
    }
}

/// The precision the app runs a scene in when the scene names none: mixed (f64 state, f32
/// forces), within 1.5e-6 of LAMMPS over 200 steps of the 32,000-atom reference trajectory and
/// 0.915 of single's speed at a million atoms (H200); `run` keeps double, the reference.
pub const APP_PRECISION: crate::physics::real::Precision = crate::physics::real::Precision::Mixed;

/// `scene` as the app runs it: in [`APP_PRECISION`] unless it names its own precision.
pub fn with_app_defaults(mut scene: Scene) -> Scene {
    scene.precision.get_or_insert(APP_PRECISION);
    scene
}

/// `scene` as the app runs it on `backend`: as [`with_app_defaults`], but in single
/// precision unless the scene names its own where the wgpu backend (which runs single) will
/// run it: chosen, or taken by Auto (`auto_wgpu`: a hardware GPU, no CUDA) for a scene it runs.
pub fn with_app_defaults_on(mut scene: Scene, backend: crate::sim::BackendChoice, auto_wgpu: bool) -> Scene {
    use crate::physics::real::Precision;
    use crate::sim::BackendChoice;
    let on_wgpu = match backend {
        BackendChoice::Wgpu => true,
        BackendChoice::Auto if auto_wgpu => {
            let mut single = scene.sim_params();
            single.precision = Precision::Single;
            crate::sim::gpu::unsupported(&single, None).is_none()
        }
        _ => false,
    };
    if on_wgpu {
        scene.precision.get_or_insert(Precision::Single);
    }
    with_app_defaults(scene)
}
