//! Transport sampling on the simulation thread, for the app's Measure panel: turning it on or
//! off (`set_transport`), restarting it where an edit changed the dynamics or the backend
//! (`restart_transport`: the backend drops its origins and records, the UI is told the step
//! and why) and sending the records after each chunk (`send_transport`), each batch tagged with
//! the step its sampling started at so the UI can drop batches of a sampling it restarted.

use super::Worker;
use crate::app::commands::{SimCommand, SimReport};
use crate::transport::TransportSpec;

impl Worker {
    /// Samples with `spec` from the current step on (None: stops).
    pub(super) fn set_transport(&mut self, spec: Option<TransportSpec>) {
        self.transport = spec;
        self.apply_transport(None);
    }

    /// Starts the current sampling afresh at the current step, saying `why`, if it is on.
    pub(super) fn restart_transport(&mut self, why: &str) {
        if self.transport.is_some() {
            self.apply_transport(Some(why.to_string()));
        }
    }

    /// Gives the backend the current sampling (every origin and record dropped) and tells the
    /// UI where it starts; a backend that refuses it leaves sampling off and says why.
    fn apply_transport(&mut self, why: Option<String>) {
        let Some(b) = self.backend.as_mut() else {
            if self.transport.take().is_some() {
                self.report(SimReport::TransportOff("no simulation is loaded".into()));
            }
            return;
        };
        let Some(spec) = self.transport else {
            let _ = b.set_transport(None);
            return;
        };
        match b.set_transport(Some(spec)) {
            Ok(()) => {
                self.transport_since = b.step();
                self.report(SimReport::TransportStarted { step: self.transport_since, why });
            }
            Err(e) => {
                let _ = b.set_transport(None);
                self.transport = None;
                self.report(SimReport::TransportOff(e.to_string()));
            }
        }
    }

    /// Sends the records taken since the last call, if any.
    pub(super) fn send_transport(&mut self) {
        if self.transport.is_none() {
            return;
        }
        let Some(b) = self.backend.as_mut() else { return };
        match b.take_transport() {
            Ok(s) if s.msd.is_empty() && s.vacf.is_empty() && s.stress.is_empty() => {}
            Ok(s) => self.report(SimReport::Transport { since: self.transport_since, samples: Box::new(s) }),
            Err(e) => {
                let _ = b.set_transport(None);
                self.transport = None;
                self.report(SimReport::TransportOff(format!("reading the transport records failed: {e}")));
            }
        }
    }
}

/// What restarts a running measurement when `cmd` is applied to a backend with `params`:
/// anything that changes the dynamics or the atoms (an unchanged parameter set does not).
pub(super) fn restarts(cmd: &SimCommand, params: &crate::physics::params::SimParams) -> Option<&'static str> {
    match cmd {
        SimCommand::SetParams(p) if **p != *params => Some("parameters changed"),
        SimCommand::SetObstacles { .. } => Some("obstacles changed"),
        SimCommand::AddAtoms(_) => Some("atoms added"),
        SimCommand::RemoveAtoms(_) => Some("atoms removed"),
        SimCommand::Restore(_) => Some("a saved state restored"),
        _ => None,
    }
}
