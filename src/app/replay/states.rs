//! Full states for "resume from here": the keyframes the simulation thread takes at intervals
//! and after every edit that the parameters alone do not describe (atoms, obstacles, a
//! restore, a load, a switch), and the parameter changes between them with their steps.
//! A keyframe is a `Backend::snapshot` (the live run continues from exactly that state), so
//! a backend restored from it and given the same parameter changes at the same steps runs bit
//! for bit like the live run did: the backends are deterministic.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use crate::physics::params::SimParams;
use crate::shapes::Shape;
use crate::sim::{CaughtAtoms, Snapshot};

/// A full state and everything a resume needs with it.
#[derive(Clone, Debug)]
pub struct Keyframe {
    pub snapshot: Snapshot,
    pub params: SimParams,
    pub shapes: Vec<Shape>,
    pub caught: CaughtAtoms,
    /// The backend that took it (resuming on another is not bit for bit).
    pub backend: &'static str,
    /// What taking it cost the simulation thread.
    pub took: Duration,
}

impl Keyframe {
    pub fn step(&self) -> u64 {
        self.snapshot.step
    }

    /// Host bytes it holds (positions and velocities in f64, types, dye).
    pub fn bytes(&self) -> usize {
        let a = &self.snapshot.atoms;
        a.len() * 52 + a.dye.len() * std::mem::size_of::<crate::physics::dye::Dye>()
    }
}

/// What the simulation thread reports for the replay, in the order it happened.
#[derive(Clone, Debug)]
pub enum ReplayReport {
    Keyframe(Arc<Keyframe>),
    /// The parameters changed to these at `step` (applied after that step's frame).
    Params {
        step: u64,
        params: Box<SimParams>,
    },
    /// A resume reached `step`: the live run continues from there with `params`.
    Resumed {
        step: u64,
        params: Box<SimParams>,
    },
    /// A resume failed (the live run is as it was).
    ResumeFailed(String),
}

/// What the UI asks of the simulation thread for the replay.
#[derive(Clone, Debug)]
pub enum ReplayCommand {
    /// Keep keyframes (true) or not.
    Keep(bool),
    Resume(Box<ResumePlan>),
}

/// Restore `from`, apply each parameter change at its step, advance to `to_step`.
#[derive(Clone, Debug)]
pub struct ResumePlan {
    pub from: Arc<Keyframe>,
    pub edits: Vec<(u64, SimParams)>,
    pub to_step: u64,
}

/// One entry of the state log.
#[derive(Clone, Debug)]
enum Entry {
    Key(Arc<Keyframe>),
    Params(u64, Box<SimParams>),
}

/// The keyframes and parameter changes, oldest first.
#[derive(Debug, Default)]
pub struct StateLog {
    entries: VecDeque<Entry>,
    bytes: usize,
}

impl StateLog {
    pub fn push_key(&mut self, k: Arc<Keyframe>) {
        self.bytes += k.bytes();
        self.entries.push_back(Entry::Key(k));
    }

    pub fn push_params(&mut self, step: u64, params: SimParams) {
        self.entries.push_back(Entry::Params(step, Box::new(params)));
    }

    /// Bytes the keyframes hold.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn keyframes(&self) -> usize {
        self.entries.iter().filter(|e| matches!(e, Entry::Key(_))).count()
    }

    /// The steps of the keyframes held, oldest first.
    pub fn key_steps(&self) -> Vec<u64> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Key(k) => Some(k.step()),
                _ => None,
            })
            .collect()
    }

    /// The newest keyframe's cost, if any.
    pub fn last_took(&self) -> Option<Duration> {
        self.entries.iter().rev().find_map(|e| match e {
            Entry::Key(k) => Some(k.took),
            _ => None,
        })
    }

    /// How to get back to `step`: the newest keyframe at or before it and the parameter
    /// changes after that keyframe and before `step`. None when no keyframe is that old.
    pub fn plan(&self, step: u64) -> Option<ResumePlan> {
        let at = self.entries.iter().rposition(|e| matches!(e, Entry::Key(k) if k.step() <= step))?;
        let Entry::Key(from) = &self.entries[at] else { unreachable!("found a key") };
        let edits = self
            .entries
            .iter()
            .skip(at + 1)
            .filter_map(|e| match e {
                Entry::Params(s, p) if *s < step => Some((*s, (**p).clone())),
                _ => None,
            })
            .collect();
        Some(ResumePlan { from: from.clone(), edits, to_step: step })
    }

    /// Drops what is no longer needed to reach steps from `oldest` on: every entry before
    /// the newest keyframe at or before it.
    pub fn forget_before(&mut self, oldest: u64) {
        let Some(keep) = self.entries.iter().rposition(|e| matches!(e, Entry::Key(k) if k.step() <= oldest)) else {
            return;
        };
        for e in self.entries.drain(..keep) {
            if let Entry::Key(k) = e {
                self.bytes -= k.bytes();
            }
        }
    }

    /// Drops the oldest keyframes (with the changes after them) until the rest hold at most
    /// `bytes`, keeping the newest keyframe whatever its size.
    pub fn shrink_to(&mut self, bytes: usize) {
        while self.bytes > bytes && self.keyframes() > 1 {
            let next = self.entries.iter().skip(1).position(|e| matches!(e, Entry::Key(_))).map_or(0, |i| i + 1);
            for e in self.entries.drain(..next) {
                if let Entry::Key(k) = e {
                    self.bytes -= k.bytes();
                }
            }
        }
    }

    /// Drops keyframes and changes after `step` (a resume from there replaces them).
    pub fn truncate_after(&mut self, step: u64) {
        while let Some(e) = self.entries.back() {
            let drop = match e {
                Entry::Key(k) => k.step() > step,
                Entry::Params(s, _) => *s >= step,
            };
            if !drop {
                break;
            }
            if let Some(Entry::Key(k)) = self.entries.pop_back() {
                self.bytes -= k.bytes();
            }
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::sim_box::SimBox;

    fn key(step: u64) -> Arc<Keyframe> {
        let sim_box = SimBox::new([10.0; 3], [true; 3]);
        let snapshot = Snapshot {
            sim_box,
            atoms: crate::sim::AtomState {
                positions: vec![[0.0; 3]; 10],
                velocities: vec![[0.0; 3]; 10],
                types: vec![0; 10],
                ..Default::default()
            },
            step,
            time: 0.0,
            piston: None,
        };
        Arc::new(Keyframe {
            snapshot,
            params: SimParams::default(),
            shapes: Vec::new(),
            caught: CaughtAtoms::Remove,
            backend: "cpu",
            took: Duration::ZERO,
        })
    }

    #[test]
    fn a_plan_starts_at_the_newest_keyframe_before_the_step() {
        let mut log = StateLog::default();
        log.push_key(key(0));
        let hot = SimParams { temperature: 2.0, ..SimParams::default() };
        log.push_params(50, hot.clone());
        log.push_key(key(100));
        log.push_params(150, hot.clone());
        log.push_params(200, hot.clone());
        let p = log.plan(120).unwrap();
        assert_eq!((p.from.step(), p.edits.len(), p.to_step), (100, 0, 120));
        let p = log.plan(200).unwrap();
        // The change at 200 came after the frame at 200.
        assert_eq!(p.edits.iter().map(|e| e.0).collect::<Vec<_>>(), vec![150]);
        let p = log.plan(99).unwrap();
        assert_eq!((p.from.step(), p.edits.len()), (0, 1));
        assert_eq!(log.keyframes(), 2);
        log.forget_before(120);
        assert!(log.plan(99).is_none());
        assert_eq!(log.keyframes(), 1);
        log.push_key(key(300));
        log.push_key(key(400));
        log.shrink_to(key(0).bytes());
        assert_eq!(log.key_steps(), vec![400]);
        log.truncate_after(120);
        assert!(log.plan(300).is_none());
        assert_eq!(log.bytes(), 0);
    }
}
