//! The simulation thread's safety net: rollback checkpoints after clean chunks, host copies
//! of a GPU run's state, rolling back after a blow-up, and continuing on the CPU backend when
//! the GPU fails.

use std::time::{Duration, Instant};

use super::{Worker, bake};
use crate::app::commands::SimReport;
use crate::sim::{BackendChoice, SimError, open_backend};

/// Wall time between rollback checkpoints (device copies on CUDA).
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);
/// Least wall time between host copies of a GPU run's state (a download each).
const HOST_STATE_EVERY: Duration = Duration::from_secs(5);
/// A host copy is next due after this many times what the last one took, when that is longer
/// than [`HOST_STATE_EVERY`]: the simulation waits while its state is copied (60 to 140 ms at a
/// million atoms on an H200, 1 to 3 % of the time at one every 5 s), so copies take at most
/// about 0.3 % of it, at the price of continuing on the CPU from further back after a GPU
/// failure (30 s at a million atoms).
const HOST_STATE_COST_RATIO: u32 = 300;

impl Worker {
    /// A new backend (load, switch): its state is good, so it is the first checkpoint.
    pub(super) fn fresh_backend(&mut self) {
        self.host_state = None;
        self.host_state_due = Instant::now();
        self.take_checkpoint();
        self.apply_fields();
        self.apply_rakes();
    }

    /// Keeps a rollback checkpoint now; the next one is due after [`CHECKPOINT_EVERY`].
    fn take_checkpoint(&mut self) {
        self.checkpoint_due = Instant::now() + CHECKPOINT_EVERY;
        if let Some(b) = self.backend.as_mut()
            && let Err(e) = b.checkpoint()
        {
            let _ = self.tx.send(SimReport::Error(format!("keeping a rollback checkpoint failed: {e}")));
        }
    }

    /// After a chunk that ran clean: a rollback checkpoint now and then, and for a GPU run a
    /// host copy now and then.
    pub(super) fn keep_good_state(&mut self) {
        let now = Instant::now();
        if now >= self.checkpoint_due {
            self.take_checkpoint();
        }
        let Some(b) = self.backend.as_mut() else { return };
        if b.info().kind != "cpu" && now >= self.host_state_due {
            let copied = b.copy_state();
            let took = now.elapsed();
            self.host_state_due = Instant::now() + HOST_STATE_EVERY.max(took * HOST_STATE_COST_RATIO);
            match copied {
                Ok(s) => self.host_state = Some(s),
                Err(e) => {
                    let _ = self.tx.send(SimReport::Error(format!("keeping a host copy of the state failed: {e}")));
                }
            }
        }
    }

    /// A blow-up: back to the newest checkpoint (obstacles re-applied to its atoms), paused,
    /// with what happened and what to change.
    pub(super) fn roll_back(&mut self, e: &SimError) {
        let Some(b) = self.backend.as_mut() else { return };
        let outcome = b.rollback().and_then(|step| {
            if let Some(step) = step
                && !self.shapes.is_empty()
            {
                // The checkpoint may predate a shape drawn since: its atoms need the same care.
                b.set_obstacles(bake(&self.shapes, &b.sim_box()), self.caught)?;
                return Ok(Some(step));
            }
            Ok(step)
        });
        let msg = match outcome {
            Ok(Some(step)) => format!(
                "{e} Rolled back to step {step} and paused; your settings, shapes and atoms edits are kept. \
                 Change what the hint says, then press Play."
            ),
            Ok(None) => format!("{e} There is no checkpoint to roll back to; the simulation is paused. Reset it."),
            Err(r) => format!("{e} Rolling back failed too ({r}); the simulation is paused. Reset it."),
        };
        self.report(SimReport::Error(msg));
    }

    /// The GPU failed: continue on the CPU backend from the last good host copy.
    pub(super) fn continue_on_cpu(&mut self, e: &SimError) {
        let Some(b) = self.backend.as_mut() else { return };
        let Some(snap) = self.host_state.take() else {
            self.report(SimReport::Error(format!(
                "{e}. The simulation is paused (no copy of its state to continue from)."
            )));
            return;
        };
        let params = b.params().clone();
        let field = bake(&self.shapes, &snap.sim_box);
        let opened = open_backend(BackendChoice::Cpu, snap.sim_box, params, &snap.atoms, field)
            .and_then(|(mut c, why)| c.restore(&snap).map(|()| (c, why)));
        match opened {
            Ok((c, why)) => {
                self.backend = Some(c);
                self.why = format!("{why}: the GPU failed");
                self.slots = None;
                self.pending = None;
                self.apply_fields();
                self.apply_rakes();
                self.report(SimReport::Error(format!(
                    "The GPU failed ({e}). Continuing on the CPU backend from step {}; the simulation is paused.",
                    snap.step
                )));
            }
            Err(c) => self.report(SimReport::Error(format!(
                "The GPU failed ({e}) and the CPU backend could not take over ({c}). The simulation is paused."
            ))),
        }
    }
}
