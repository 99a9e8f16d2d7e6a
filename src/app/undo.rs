//! Undo / redo of scene edits. Each entry holds the state before and after one edit: the
//! obstacle shapes, or (for atom edits) ids of snapshots the simulation thread took around
//! it. A drag is one edit (recorded when the button is released); a new edit clears redo;
//! the history is capped, oldest first out.

use crate::shapes::Shape;

/// One undoable edit.
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    Shapes {
        before: Vec<Shape>,
        after: Vec<Shape>,
    },
    /// Snapshot ids (see `SnapshotPurpose::Undo`) taken before and after an atom edit.
    Atoms {
        before: u64,
        after: u64,
    },
    /// The dye sources before and after (`app/dye.rs`).
    Dye {
        before: Vec<super::dye::DyeEntry>,
        after: Vec<super::dye::DyeEntry>,
    },
}

/// The undo and redo stacks.
#[derive(Debug, Default)]
pub struct History {
    undo: Vec<Edit>,
    redo: Vec<Edit>,
}

/// Edits kept.
pub const MAX_EDITS: usize = 200;

impl History {
    /// Records a finished edit. Returns edits that fell off either stack (their snapshots can
    /// be freed).
    pub fn record(&mut self, edit: Edit) -> Vec<Edit> {
        if let Edit::Shapes { before, after } = &edit
            && before == after
        {
            return Vec::new();
        }
        let mut dropped: Vec<Edit> = std::mem::take(&mut self.redo);
        self.undo.push(edit);
        if self.undo.len() > MAX_EDITS {
            dropped.push(self.undo.remove(0));
        }
        dropped
    }

    /// The edit to revert (apply its `before`); it moves to the redo stack.
    pub fn undo(&mut self) -> Option<Edit> {
        let e = self.undo.pop()?;
        self.redo.push(e.clone());
        Some(e)
    }

    /// The edit to re-apply (apply its `after`); it moves back to the undo stack.
    pub fn redo(&mut self) -> Option<Edit> {
        let e = self.redo.pop()?;
        self.undo.push(e.clone());
        Some(e)
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Forgets everything (a new scene was loaded); returns the dropped edits.
    pub fn clear(&mut self) -> Vec<Edit> {
        let mut all = std::mem::take(&mut self.undo);
        all.append(&mut self.redo);
        all
    }

    /// Snapshot ids still referenced.
    pub fn snapshot_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.undo.iter().chain(self.redo.iter()).flat_map(|e| match e {
            Edit::Atoms { before, after } => vec![*before, *after],
            Edit::Shapes { .. } | Edit::Dye { .. } => vec![],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circle(x: f64) -> Shape {
        Shape::Circle { centre: [x, 1.0], radius: 1.0 }
    }

    #[test]
    fn undo_redo_and_new_edit_clears_redo() {
        let mut h = History::default();
        h.record(Edit::Shapes { before: vec![], after: vec![circle(1.0)] });
        h.record(Edit::Shapes { before: vec![circle(1.0)], after: vec![circle(1.0), circle(2.0)] });
        assert_eq!(h.undo(), Some(Edit::Shapes { before: vec![circle(1.0)], after: vec![circle(1.0), circle(2.0)] }));
        assert!(h.can_redo());
        let dropped = h.record(Edit::Atoms { before: 1, after: 2 });
        assert_eq!(dropped.len(), 1);
        assert!(!h.can_redo());
        assert_eq!(h.snapshot_ids().collect::<Vec<_>>(), vec![1, 2]);
        // A no-op edit is not recorded.
        assert!(h.record(Edit::Shapes { before: vec![circle(3.0)], after: vec![circle(3.0)] }).is_empty());
        assert_eq!(h.undo(), Some(Edit::Atoms { before: 1, after: 2 }));
        assert_eq!(h.redo(), Some(Edit::Atoms { before: 1, after: 2 }));
    }

    #[test]
    fn history_is_capped() {
        let mut h = History::default();
        let mut dropped = 0;
        for i in 0..MAX_EDITS + 5 {
            dropped += h.record(Edit::Atoms { before: i as u64, after: i as u64 + 1 }).len();
        }
        assert_eq!(dropped, 5);
    }
}
