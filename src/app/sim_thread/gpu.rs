//! The wgpu backend and the renderer's device on the simulation thread: taking the device
//! the UI hands over (`SimCommand::UseDevice`; a running wgpu backend moves onto it, state
//! kept), whether the backend runs there (so the same-device slots can be written), and
//! leaving the wgpu backend, state kept, for the backend Auto would take otherwise when the
//! person asks for something it does not run yet (an obstacle, the tunnel, a piston...),
//! rather than refusing the edit.

use std::sync::Arc;

use super::{Worker, bake};
use crate::app::commands::{SimCommand, SimReport};
use crate::sim::gpu::device::SimDevice;
use crate::sim::{BackendChoice, SimError, fallback_for, open_backend_on};

impl Worker {
    /// Whether the backend runs on the renderer's device (a wgpu backend, with a device given:
    /// every wgpu backend the thread opens then runs there).
    pub(super) fn on_render_device(&self) -> bool {
        self.gpu.is_some() && self.backend.as_ref().is_some_and(|b| b.info().kind == "wgpu")
    }

    /// The renderer's device: from now on a wgpu backend runs there, and a running one moves.
    pub(super) fn use_device(&mut self, dev: Arc<SimDevice>) {
        if self.gpu.as_ref().is_some_and(|g| Arc::ptr_eq(g, &dev)) {
            return;
        }
        self.gpu = Some(dev);
        let Some(b) = self.backend.as_mut() else { return };
        if b.info().kind != "wgpu" {
            return;
        }
        let field = bake(&self.shapes, &b.sim_box());
        let gpu = self.gpu.clone();
        let moved = (|| {
            let snap = b.snapshot()?;
            let (mut nb, _) = open_backend_on(
                BackendChoice::Wgpu,
                snap.sim_box,
                b.params().clone(),
                &snap.atoms,
                field,
                gpu.as_ref(),
            )?;
            nb.restore(&snap)?;
            Ok::<_, SimError>(nb)
        })();
        match moved {
            Ok(nb) => {
                // The same system on the same kind of backend: the reason it runs still holds.
                self.backend = Some(nb);
                self.fresh_backend();
                self.publish();
                self.maybe_status(true);
            }
            Err(e) => {
                // It stays on its own device, drawn through host staging.
                self.gpu = None;
                self.report(SimReport::Error(format!(
                    "the wgpu backend could not move onto the renderer's device ({e}); positions go through host memory"
                )));
            }
        }
    }

    /// When the wgpu backend runs and `cmd` asks for what it does not run, moves the system
    /// (state kept) to the backend Auto takes otherwise, says so, and returns true; the
    /// command is then applied there.
    pub(super) fn leave_wgpu_for(&mut self, cmd: &SimCommand) -> bool {
        let Some(b) = self.backend.as_mut() else { return false };
        if b.info().kind != "wgpu" {
            return false;
        }
        let why = match cmd {
            SimCommand::SetParams(p) => crate::sim::gpu::unsupported_on(p, &b.info()),
            _ => None,
        };
        let Some(why) = why else { return false };
        let field = bake(&self.shapes, &b.sim_box());
        let result = (|| {
            let snap = b.snapshot()?;
            let (mut nb, chosen) = fallback_for(snap.sim_box, b.params().clone(), &snap.atoms, field)?;
            nb.restore(&snap)?;
            Ok::<_, SimError>((nb, chosen))
        })();
        match result {
            Ok((nb, chosen)) => {
                let kind = nb.info().kind.to_uppercase();
                self.backend = Some(nb);
                self.fresh_backend();
                self.why = format!("{chosen}; switched from wgpu, which does not run this yet ({why})");
                self.report(SimReport::Notice(format!(
                    "Switched to the {kind} backend, state kept: {why}. Choose the backend again to go back once \
                     this is undone."
                )));
                self.restart_transport("the backend switched");
                true
            }
            Err(e) => {
                self.report(SimReport::Error(format!("{why}; switching to another backend failed too: {e}")));
                false
            }
        }
    }
}
