//! Dye on the simulation thread (`SimCommand::Dye`): the rakes kept for every backend the
//! thread opens, and tags cleared or set now on a snapshot of the state restored into the
//! backend (the one path every backend has for an edit of `AtomState::dye`). A backend that
//! refuses dye (none of today's three; the trait's default for one that does not run rakes)
//! hands the system, state kept, to the backend Auto takes for dye, and says so.

use super::{Worker, bake};
use crate::app::commands::{DyeEdit, SimReport};
use crate::sim::{AtomState, Backend, SimError, fallback_for};

/// Applies `edit`'s tags to `atoms` (clear, then regions, then atoms); the dye column is made
/// only when something is tagged.
pub fn apply_tags(atoms: &mut AtomState, edit: &DyeEdit) {
    if !atoms.has_dye() && edit.regions.is_empty() && edit.atoms.is_empty() {
        return;
    }
    atoms.dye_mut();
    let AtomState { positions, dye, .. } = atoms;
    if !edit.clear.is_empty() {
        dye.iter_mut().filter(|d| edit.clear.contains(d)).for_each(|d| *d = 0);
    }
    for (region, tag) in &edit.regions {
        region.tag(positions, dye, *tag);
    }
    for &(i, tag) in &edit.atoms {
        if let Some(d) = dye.get_mut(i as usize) {
            *d = tag;
        }
    }
}

/// Whether `edit` changes any tag now (else only the rakes change).
fn tags_now(edit: &DyeEdit) -> bool {
    !(edit.clear.is_empty() && edit.regions.is_empty() && edit.atoms.is_empty())
}

/// The edit on `b`: tags through a snapshot restored, then the rakes.
fn apply(b: &mut dyn Backend, edit: &DyeEdit) -> Result<(), SimError> {
    if tags_now(edit) {
        let mut snap = b.snapshot()?;
        apply_tags(&mut snap.atoms, edit);
        b.restore(&snap)?;
    }
    b.set_dye_rakes(&edit.rakes)
}

impl Worker {
    /// Applies a change of the dye sources; a backend that refuses dye gives the system to the
    /// CPU backend first.
    pub(super) fn set_dye(&mut self, edit: DyeEdit) {
        self.rakes = edit.rakes.clone();
        let Some(b) = self.backend.as_mut() else { return };
        let result = match apply(b.as_mut(), &edit) {
            Err(SimError::Invalid(why)) if b.info().kind != "cpu" => self.dye_on_cpu(&edit, &why),
            other => other,
        };
        if let Err(e) = result {
            self.report(SimReport::Error(format!("the dye could not be applied: {e}")));
        } else if tags_now(&edit) {
            // The backend dropped its transport samples with the restore: say where they start.
            self.restart_transport("dye was tagged");
        }
        self.publish();
        self.maybe_status(true);
    }

    /// Moves the system (state kept, `edit`'s tags applied) to the backend Auto takes for dye.
    fn dye_on_cpu(&mut self, edit: &DyeEdit, why: &str) -> Result<(), SimError> {
        let Some(b) = self.backend.as_mut() else { return Ok(()) };
        let from = b.info().kind.to_uppercase();
        let mut snap = b.snapshot()?;
        apply_tags(&mut snap.atoms, edit);
        snap.atoms.dye_mut();
        let field = bake(&self.shapes, &snap.sim_box);
        let (mut nb, chosen) = fallback_for(snap.sim_box, b.params().clone(), &snap.atoms, field)?;
        nb.restore(&snap)?;
        let kind = nb.info().kind.to_uppercase();
        self.backend = Some(nb);
        self.fresh_backend();
        self.why = format!("{chosen}; switched from {from}, which does not run dye yet");
        self.report(SimReport::Notice(format!("Switched to the {kind} backend, state kept, for the dye: {why}")));
        Ok(())
    }

    /// Gives a newly opened backend the rakes (`fresh_backend`); a refusal is said once.
    pub(super) fn apply_rakes(&mut self) {
        let Some(b) = self.backend.as_mut() else { return };
        if let Err(e) = b.set_dye_rakes(&self.rakes) {
            self.report(SimReport::Error(format!("the dye rakes stopped: {e}")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::dye::DyeRegion;

    #[test]
    fn tags_clear_then_regions_then_atoms() {
        let mut atoms = AtomState {
            positions: vec![[1.0, 1.0, 0.0], [5.0, 1.0, 0.0], [9.0, 1.0, 0.0]],
            velocities: vec![[0.0; 3]; 3],
            types: vec![0; 3],
            dye: vec![2, 3, 2],
        };
        let edit = DyeEdit {
            rakes: vec![],
            clear: vec![2],
            regions: vec![(DyeRegion { min: [4.0, 0.0], max: [6.0, 2.0] }, 4)],
            atoms: vec![(2, 5), (99, 1)],
        };
        apply_tags(&mut atoms, &edit);
        assert_eq!(atoms.dye, vec![0, 4, 5]);
        // Nothing to tag and no column: none is made.
        let mut plain = AtomState { dye: vec![], ..atoms.clone() };
        apply_tags(&mut plain, &DyeEdit { clear: vec![1], ..DyeEdit::default() });
        assert!(!plain.has_dye());
    }
}
