//! The flow layer in the app: turning field sampling on and off as the view asks, the newest
//! finished window from the simulation thread, and the layer's geometry, rebuilt only when a
//! window arrives or a display choice changes: at once on the UI thread for a choice (the
//! picture answers the click), on a worker thread for a new window (streamlines take ~10 ms,
//! a dropped frame every window), the previous window's geometry shown until it is done.

use std::sync::Arc;

use super::App;
use super::commands::SimCommand;
use crate::flow::{FieldSpec, Fields};
use crate::render::flow_layer::{self, FlowView};
use crate::render::view::FlowGeometry;

/// Sampling for the live view: bins of 2 sigma, every 10 steps, windows of 5 tau (short, so
/// the picture follows the flow, long enough that a flow of a few tenths of sigma/tau stands
/// out of the thermal noise; a file wants longer windows).
pub fn live_sampling() -> FieldSpec {
    FieldSpec { window_tau: 5.0, ..FieldSpec::default() }
}

/// The flow layer's state in the app.
#[derive(Default)]
pub struct FlowState {
    /// The newest finished window, and how many arrived since sampling started.
    pub fields: Option<Arc<Fields>>,
    pub windows: u64,
    /// The wake probe behind the first obstacle, one value per window (its Strouhal number).
    pub wake: crate::flow::wake::WakeSeries,
    /// Sampling settings last sent to the simulation (None: off).
    sent: Option<FieldSpec>,
    /// The geometry as built and its sequence number; what it was built from.
    mesh: (u64, FlowGeometry),
    built_from: Option<MeshKey>,
    /// A newer window's geometry being built on a worker thread, and what from.
    pending: Option<(MeshKey, std::sync::mpsc::Receiver<flow_layer::FlowMesh>)>,
}

/// What the flow geometry is built from: the window (by address), the view, the plane's
/// depth and the obstacles' geometry sequence number.
type MeshKey = (usize, FlowView, u32, u64);

impl FlowState {
    /// The settings sampling runs with now (None: off).
    pub fn sampling(&self) -> Option<&FieldSpec> {
        self.sent.as_ref()
    }

    /// Whether the geometry on screen was built from the newest window (false while a newer
    /// window's is still being built).
    pub fn shows_newest(&self) -> bool {
        let newest = self.fields.as_ref().map(|f| Arc::as_ptr(f) as usize);
        newest.is_some() && self.built_from.map(|k| k.0) == newest
    }
}

impl App {
    /// Starts, changes or stops field sampling to match the view; call after changing
    /// `settings.view.flow.on` or `settings.flow_sampling`.
    pub fn sync_flow_sampling(&mut self) {
        let want = self.settings.view.flow.on.then(|| self.settings.flow_sampling.clone());
        if want != self.flow.sent {
            if want.is_none() || self.flow.sent.is_none() {
                self.flow.fields = None;
                self.flow.windows = 0;
            }
            self.flow.wake.clear();
            // Other sampling: the windows kept for profiles are no longer comparable.
            self.probe.recent.clear();
            self.flow.sent = want.clone();
            self.sim.send(SimCommand::Fields(want));
        }
    }

    /// What a scene asks of the app when it is opened: a scene that names `fields` opens in
    /// the Flow view, sampled as it says (its bin, slab, interval and window), and one that
    /// names `steps_per_frame` runs at that fixed pace (slow motion): how a flow preset such as
    /// `vortex_street.ron` shows its flow from the start. Other scenes leave both as they were.
    pub(super) fn adopt_scene_view(&mut self, fields: Option<crate::flow::FieldSpec>, steps_per_frame: Option<u64>) {
        if let Some(spec) = fields {
            self.settings.flow_sampling = spec;
            self.flow_preset();
        }
        if let Some(n) = steps_per_frame {
            self.set_fixed_pace(n);
        }
    }

    /// Turns on the one-click Flow view (vorticity, streamlines, atoms dimmed).
    pub fn flow_preset(&mut self) {
        self.settings.view.flow = FlowView::flow_preset();
        self.sync_flow_sampling();
    }

    /// A finished window arrived.
    pub(super) fn fields_arrived(&mut self, fields: Fields) {
        if self.flow.sent.is_some() {
            let f = Arc::new(fields);
            if let Some(shape) = self.shapes.first() {
                let (centre, diameter) = shape.centre_and_height();
                self.flow.wake.push(&f, centre, diameter);
            }
            self.probe.push(f.clone());
            self.replay_flow(f.clone());
            self.flow.fields = Some(f);
            self.flow.windows += 1;
        }
    }

    /// Sampling was refused by the simulation: the view's flow layer goes off with it.
    pub(super) fn fields_off(&mut self) {
        self.settings.view.flow.on = false;
        self.flow.sent = None;
        self.flow.fields = None;
    }

    /// The flow geometry for the renderer (rebuilt when the window or a choice changed).
    pub fn flow_geometry(&mut self) -> (u64, FlowGeometry) {
        let view = self.settings.view.flow;
        let z = self.flow_plane_z();
        // While the timeline shows a stored frame, the window shown with it.
        let fields = self.replay_window().unwrap_or_else(|| self.flow.fields.clone());
        let key = fields.as_ref().map(|f| (Arc::as_ptr(f) as usize, view, z.to_bits(), self.geometry.0));
        if let Some((k, rx)) = &self.flow.pending {
            match rx.try_recv() {
                Ok(mesh) => {
                    let k = *k;
                    self.flow.pending = None;
                    self.install_mesh(Some(k), Some(Arc::new(mesh)));
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => self.flow.pending = None,
            }
        }
        if key == self.flow.built_from {
            return self.flow.mesh.clone();
        }
        // Only the window changed, and its predecessor is on screen: build in the background.
        let same_choices = |a: &MeshKey, b: &MeshKey| (a.1, a.2, a.3) == (b.1, b.2, b.3);
        if let (Some(k), Some(built), Some(f)) = (key, self.flow.built_from, fields.clone())
            && view.on
            && self.flow.mesh.1.is_some()
            && same_choices(&k, &built)
        {
            if self.flow.pending.as_ref().is_none_or(|(p, _)| !same_choices(p, &k)) {
                let (tx, rx) = std::sync::mpsc::channel();
                let shapes = self.shapes.clone();
                let spawned = std::thread::Builder::new().name("flow-mesh".into()).spawn(move || {
                    let _ = tx.send(flow_layer::build(&f, &view, z, &shapes));
                });
                if spawned.is_ok() {
                    self.flow.pending = Some((k, rx));
                    return self.flow.mesh.clone();
                }
            } else {
                // One is being built (perhaps for an older window): the next call takes it.
                return self.flow.mesh.clone();
            }
        }
        self.flow.pending = None;
        let mesh = match &fields {
            Some(f) if view.on => Some(Arc::new(flow_layer::build(f, &view, z, &self.shapes))),
            _ => None,
        };
        self.install_mesh(key, mesh);
        self.flow.mesh.clone()
    }

    fn install_mesh(&mut self, key: Option<MeshKey>, mesh: FlowGeometry) {
        self.flow.mesh = (self.flow.mesh.0 + 1, mesh);
        self.flow.built_from = key;
    }

    /// The depth of the flow plane: just in front of the atoms of the sampled slab (the front
    /// face of the tank without a slab), so it covers them in the front camera.
    fn flow_plane_z(&self) -> f32 {
        let b = self.sim_box();
        let front = self.settings.flow_sampling.slab.map(|s| s[1]).unwrap_or(b.hi[2]);
        front as f32 + self.settings.view.radius + 0.05
    }
}
