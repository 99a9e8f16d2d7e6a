//! Dye in the app (issue 47): the sources drawn with the Dye tool or opened with a scene
//! (rakes, regions, picked atoms), each numbered with its own colour (`render::colour::
//! dye_colour`); the list the Tools panel shows (clear one, clear all), each change one undo
//! step; what a change asks of the simulation thread ([`edit_between`]: `SimCommand::Dye`);
//! the dye legend's entries; and the picked atoms' pathlines, each atom's trail over the last
//! `Settings::dye_trail_tau` from the published positions (by canonical index).

use std::collections::VecDeque;

use super::App;
use super::commands::{DyeEdit, SimCommand};
use super::undo::Edit;
use crate::physics::dye::{Dye, DyeRake, DyeRegion, MAX_SOURCES};
use crate::render::ColourBy;
use crate::scene::{DyeSource, Scene};

/// What a dye source is (points in sigma, x-y, through the depth).
#[derive(Clone, Debug, PartialEq)]
pub enum DyeKind {
    Rake {
        a: [f64; 2],
        b: [f64; 2],
    },
    Region {
        min: [f64; 2],
        max: [f64; 2],
    },
    /// One picked atom (canonical index): tagged once, its pathline drawn.
    Atom(u32),
}

/// One source with its number (its tag and colour).
#[derive(Clone, Debug, PartialEq)]
pub struct DyeEntry {
    pub number: Dye,
    pub kind: DyeKind,
}

impl DyeEntry {
    /// The name in the list and the legend.
    pub fn name(&self) -> String {
        match self.kind {
            DyeKind::Rake { .. } => format!("{}: rake", self.number),
            DyeKind::Region { .. } => format!("{}: region", self.number),
            DyeKind::Atom(i) => format!("{}: atom {i}", self.number),
        }
    }
}

/// A picked atom's recent path: (time in tau, x, y), oldest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trail {
    pub points: VecDeque<(f64, [f64; 2])>,
}

/// The app's dye: the sources and the pathlines.
#[derive(Clone, Debug, Default)]
pub struct DyeState {
    pub sources: Vec<DyeEntry>,
    /// One per `DyeKind::Atom` source, by its number.
    pub trails: Vec<(Dye, Trail)>,
    /// The step of the last frame added to the trails.
    last_step: Option<u64>,
}

/// The smallest source number not in use (None: every tag is taken).
pub fn next_number(sources: &[DyeEntry]) -> Option<Dye> {
    (1..=MAX_SOURCES as Dye).find(|n| sources.iter().all(|e| e.number != *n))
}

/// What moving from the sources `old` to `new` asks of the simulation: tags of the sources
/// gone cleared, regions and atoms new to the list tagged now, and every rake of `new`.
pub fn edit_between(old: &[DyeEntry], new: &[DyeEntry]) -> DyeEdit {
    let mut edit =
        DyeEdit { clear: old.iter().filter(|e| !new.contains(e)).map(|e| e.number).collect(), ..DyeEdit::default() };
    for e in new {
        match e.kind {
            DyeKind::Rake { a, b } => edit.rakes.push(DyeRake { a, b, tag: e.number }),
            _ if old.contains(e) => {}
            DyeKind::Region { min, max } => edit.regions.push((DyeRegion { min, max }, e.number)),
            DyeKind::Atom(i) => edit.atoms.push((i, e.number)),
        }
    }
    edit
}

/// A scene's sources as the app lists them (numbered from 1 in order, as the scene tags).
pub fn from_scene(sources: &[DyeSource]) -> Vec<DyeEntry> {
    let entry = |(i, s): (usize, &DyeSource)| DyeEntry {
        number: (i + 1).min(MAX_SOURCES) as Dye,
        kind: match *s {
            DyeSource::Rake { a, b } => DyeKind::Rake { a, b },
            DyeSource::Region { min, max } => DyeKind::Region { min, max },
        },
    };
    sources.iter().enumerate().map(entry).collect()
}

impl DyeState {
    /// The rakes and regions as a scene holds them (in number order; picked atoms have no
    /// place in a scene). A saved scene numbers them afresh from 1.
    pub fn scene_sources(&self) -> Vec<DyeSource> {
        let mut sorted: Vec<&DyeEntry> = self.sources.iter().collect();
        sorted.sort_by_key(|e| e.number);
        let source = |e: &&DyeEntry| match e.kind {
            DyeKind::Rake { a, b } => Some(DyeSource::Rake { a, b }),
            DyeKind::Region { min, max } => Some(DyeSource::Region { min, max }),
            DyeKind::Atom(_) => None,
        };
        sorted.iter().filter_map(source).collect()
    }

    /// The legend's entries: number and name per source, in number order.
    pub fn legend(&self) -> Vec<(u16, String)> {
        let mut l: Vec<(u16, String)> = self.sources.iter().map(|e| (e.number, e.name())).collect();
        l.sort_by_key(|e| e.0);
        l
    }

    /// Trails for the picked atoms of the list (kept where they were, new ones empty).
    fn follow(&mut self) {
        let old = std::mem::take(&mut self.trails);
        for e in &self.sources {
            if let DyeKind::Atom(_) = e.kind {
                let t = old.iter().find(|(n, _)| *n == e.number).map(|(_, t)| t.clone()).unwrap_or_default();
                self.trails.push((e.number, t));
            }
        }
    }

    /// Adds the positions of `frame` at `time` (tau) to the trails and drops points older than
    /// `keep` tau.
    pub fn add_frame(&mut self, frame: &[[f32; 4]], time: f64, keep: f64) {
        for (number, trail) in &mut self.trails {
            let atom = self.sources.iter().find(|e| e.number == *number).and_then(|e| match e.kind {
                DyeKind::Atom(i) => Some(i),
                _ => None,
            });
            if let Some(p) = atom.and_then(|i| frame.get(i as usize)) {
                trail.points.push_back((time, [p[0] as f64, p[1] as f64]));
            }
            while trail.points.front().is_some_and(|(t, _)| *t < time - keep) {
                trail.points.pop_front();
            }
        }
    }
}

impl App {
    /// Adds a source of `kind`: checked against the tank (a region or rake reaching outside it
    /// is clipped to it first), numbered with the smallest free number, one undo step.
    pub fn add_dye(&mut self, kind: DyeKind) {
        let b = self.sim_box();
        let clip = |p: [f64; 2]| [p[0].clamp(b.lo[0], b.hi[0]), p[1].clamp(b.lo[1], b.hi[1])];
        let kind = match kind {
            DyeKind::Rake { a, b } => DyeKind::Rake { a: clip(a), b: clip(b) },
            DyeKind::Region { min, max } => {
                let (lo, hi) = (clip(min), clip(max));
                DyeKind::Region { min: [lo[0].min(hi[0]), lo[1].min(hi[1])], max: [lo[0].max(hi[0]), lo[1].max(hi[1])] }
            }
            DyeKind::Atom(i) if self.dye.sources.iter().any(|e| e.kind == DyeKind::Atom(i)) => return,
            k => k,
        };
        let checked = match kind {
            DyeKind::Rake { a, b: e } => DyeRake { a, b: e, tag: 1 }.validate(&b),
            DyeKind::Region { min, max } => DyeRegion { min, max }.validate(&b),
            DyeKind::Atom(_) => Ok(()),
        };
        if let Err(why) = checked {
            return self.notify(format!("dye: {why}"), true);
        }
        let Some(number) = next_number(&self.dye.sources) else {
            return self.notify(format!("dye: all {MAX_SOURCES} source numbers are in use; clear some first"), true);
        };
        let mut after = self.dye.sources.clone();
        after.push(DyeEntry { number, kind });
        self.change_dye(after);
    }

    /// Clears source `number` (its tags too), or every source (None); one undo step.
    pub fn clear_dye(&mut self, number: Option<Dye>) {
        let after = match number {
            Some(n) => self.dye.sources.iter().filter(|e| e.number != n).cloned().collect(),
            None => Vec::new(),
        };
        self.change_dye(after);
    }

    /// Moves to the sources `after`, recording one undo step.
    fn change_dye(&mut self, after: Vec<DyeEntry>) {
        let before = self.dye.sources.clone();
        if before == after {
            return;
        }
        self.set_dye_sources(after.clone());
        for e in self.history.record(Edit::Dye { before, after }) {
            self.forget(&e);
        }
    }

    /// Makes `sources` the list, asking the simulation for the difference (undo and redo too).
    pub(super) fn set_dye_sources(&mut self, sources: Vec<DyeEntry>) {
        self.sim.send(SimCommand::Dye(edit_between(&self.dye.sources, &sources)));
        self.dye.sources = sources;
        self.dye.follow();
    }

    /// The dye tool was chosen: atoms are coloured by dye from now on.
    pub(super) fn dye_tool_chosen(&mut self) {
        if self.settings.view.colour_by != ColourBy::Dye {
            self.set_colour_by(ColourBy::Dye);
        }
    }

    /// A scene was loaded: its sources are the list (the simulation thread applied them), and
    /// a scene with dye opens coloured by it.
    pub(super) fn dye_loaded(&mut self, scene: &Scene) {
        self.dye = DyeState { sources: from_scene(&scene.dye), ..DyeState::default() };
        if !scene.dye.is_empty() {
            self.set_colour_by(ColourBy::Dye);
        }
    }

    /// A new frame of positions arrived: the pathlines grow.
    pub(super) fn dye_frame(&mut self) {
        if self.dye.trails.is_empty() || self.dye.last_step == Some(self.frame_step) {
            return;
        }
        let Some(frame) = self.frame.clone() else { return };
        self.dye.last_step = Some(self.frame_step);
        let time = self.frame_step as f64 * self.params.dt;
        self.dye.add_frame(&frame, time, self.settings.dye_trail_tau);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rake(n: Dye) -> DyeEntry {
        DyeEntry { number: n, kind: DyeKind::Rake { a: [1.0, 1.0], b: [1.0, 5.0] } }
    }

    fn region(n: Dye) -> DyeEntry {
        DyeEntry { number: n, kind: DyeKind::Region { min: [0.0, 0.0], max: [2.0, 2.0] } }
    }

    #[test]
    fn edits_clear_what_went_and_tag_what_came() {
        let old = vec![rake(1), region(2)];
        let new = vec![rake(1), DyeEntry { number: 3, kind: DyeKind::Atom(7) }, region(4)];
        let e = edit_between(&old, &new);
        assert_eq!(e.clear, vec![2]);
        assert_eq!(e.rakes, vec![DyeRake { a: [1.0, 1.0], b: [1.0, 5.0], tag: 1 }]);
        assert_eq!(e.atoms, vec![(7, 3)]);
        assert_eq!(e.regions, vec![(DyeRegion { min: [0.0, 0.0], max: [2.0, 2.0] }, 4)]);
        // Back again (an undo): the region tags anew, the atom's tag is cleared.
        let back = edit_between(&new, &old);
        assert_eq!(back.clear, vec![3, 4]);
        assert_eq!(back.regions.len(), 1);
        assert!(back.atoms.is_empty());
        assert_eq!(next_number(&new), Some(2));
    }

    #[test]
    fn trails_keep_the_last_t_tau_of_their_atom() {
        let mut d = DyeState { sources: vec![DyeEntry { number: 1, kind: DyeKind::Atom(1) }], ..Default::default() };
        d.follow();
        for k in 0..10 {
            let frame = [[0.0, 0.0, 0.0, 0.0], [k as f32, 2.0, 0.0, 0.0]];
            d.add_frame(&frame, k as f64, 3.0);
        }
        let pts: Vec<f64> = d.trails[0].1.points.iter().map(|p| p.1[0]).collect();
        assert_eq!(pts, vec![6.0, 7.0, 8.0, 9.0]);
    }
}
