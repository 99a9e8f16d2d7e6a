//! Full states for "resume from here": the keyframes the simulation thread takes on a
//! [`Schedule`] of steps and after every edit that the controls alone do not describe (atoms,
//! obstacles, dye tags, a restore, a load, a switch), and the control changes between them
//! (parameters, dye rakes, the piston's drag target) with their steps.
//! A keyframe is a `Backend::snapshot` (the live run continues from exactly that state, its
//! atoms re-listed), so a backend restored from it and given the same control changes at the
//! same steps, and re-listed at the same steps (the schedule's), runs bit for bit like the
//! live run did for all time: the backends are deterministic.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use crate::physics::dye::DyeRake;
use crate::physics::params::SimParams;
use crate::shapes::Shape;
use crate::sim::{CaughtAtoms, Snapshot};

/// When keyframes are taken: at `origin + n * every` (n >= 1), `origin` being the step of the
/// keyframe that started the schedule (an edit, a load, a switch, the replay turned on). The
/// step count `every` is unset until the first periodic keyframe fixes it (the steps the run
/// took in its first [`crate::app::sim_thread`] keyframe period); from then on it stays until
/// a new schedule starts. A run resumed from a keyframe takes its own at the same steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub origin: u64,
    pub every: Option<u64>,
}

impl Schedule {
    /// Whether a periodic keyframe falls on `step`.
    pub fn due_at(&self, step: u64) -> bool {
        self.every.is_some_and(|k| step > self.origin && (step - self.origin).is_multiple_of(k))
    }

    /// The first keyframe step after `step` (None while `every` is unset).
    pub fn next_after(&self, step: u64) -> Option<u64> {
        let k = self.every?.max(1);
        let n = step.saturating_sub(self.origin) / k + 1;
        Some(self.origin + n * k)
    }
}

/// What the user controls besides the atoms and shapes, in force at a step: the parameters,
/// the dye rakes and the piston's drag target.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Controls {
    pub params: SimParams,
    pub rakes: Vec<DyeRake>,
    pub drag: Option<f64>,
}

/// One control change, as the backend was given it (`set_params`, `set_dye_rakes`,
/// `drag_piston`).
#[derive(Clone, Debug, PartialEq)]
pub enum Control {
    Params(Box<SimParams>),
    Rakes(Vec<DyeRake>),
    Drag(Option<f64>),
}

impl Controls {
    pub fn apply(&mut self, c: &Control) {
        match c {
            Control::Params(p) => self.params = (**p).clone(),
            Control::Rakes(r) => self.rakes = r.clone(),
            Control::Drag(d) => self.drag = *d,
        }
    }
}

/// A full state and everything a resume needs with it.
#[derive(Clone, Debug)]
pub struct Keyframe {
    pub snapshot: Snapshot,
    pub controls: Controls,
    pub shapes: Vec<Shape>,
    pub caught: CaughtAtoms,
    /// The backend that took it (resuming on another is not bit for bit).
    pub backend: &'static str,
    /// What taking it cost the simulation thread.
    pub took: Duration,
    /// The schedule it belongs to (as known when it was taken).
    pub schedule: Schedule,
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
    /// The backend was given this control at `step` (after that step's frame).
    Control {
        step: u64,
        control: Box<Control>,
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
    /// Schedules from now on take a keyframe every this many steps (None: as the measured
    /// rate and cost say); starts a new schedule. For tests and the bench.
    Every(Option<u64>),
    Resume(Box<ResumePlan>),
}

/// Restore `from`, apply each control change at its step, advance to `to_step` (re-listing
/// at the schedule's steps on the way), and go on with `schedule`.
#[derive(Clone, Debug)]
pub struct ResumePlan {
    pub from: Arc<Keyframe>,
    pub edits: Vec<(u64, Control)>,
    pub to_step: u64,
    pub schedule: Schedule,
}

/// One entry of the state log.
#[derive(Clone, Debug)]
enum Entry {
    Key(Arc<Keyframe>),
    Control(u64, Box<Control>),
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

    pub fn push_control(&mut self, step: u64, control: Control) {
        self.entries.push_back(Entry::Control(step, Box::new(control)));
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

    /// How to get back to `step`: the newest keyframe at or before it, the control changes
    /// after that keyframe and before `step`, and the schedule the run went on with (the
    /// keyframe's, or, when its step count was not fixed yet, that of a later keyframe of the
    /// same schedule). None when no keyframe is that old.
    pub fn plan(&self, step: u64) -> Option<ResumePlan> {
        let at = self.entries.iter().rposition(|e| matches!(e, Entry::Key(k) if k.step() <= step))?;
        let Entry::Key(from) = &self.entries[at] else { unreachable!("found a key") };
        let edits = self
            .entries
            .iter()
            .skip(at + 1)
            .filter_map(|e| match e {
                Entry::Control(s, c) if *s < step => Some((*s, (**c).clone())),
                _ => None,
            })
            .collect();
        let mut schedule = from.schedule;
        if schedule.every.is_none() {
            let later = self.entries.iter().skip(at + 1).filter_map(|e| match e {
                Entry::Key(k) => Some(k.schedule),
                _ => None,
            });
            // Keyframes of the same schedule until the next one starts a new schedule.
            if let Some(s) = later.take_while(|s| s.origin == schedule.origin).find(|s| s.every.is_some()) {
                schedule = s;
            }
        }
        Some(ResumePlan { from: from.clone(), edits, to_step: step, schedule })
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
                Entry::Control(s, _) => *s >= step,
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

    fn key_on(step: u64, schedule: Schedule) -> Arc<Keyframe> {
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
            controls: Controls::default(),
            shapes: Vec::new(),
            caught: CaughtAtoms::Remove,
            backend: "cpu",
            took: Duration::ZERO,
            schedule,
        })
    }

    fn key(step: u64) -> Arc<Keyframe> {
        key_on(step, Schedule { origin: step, every: None })
    }

    #[test]
    fn a_plan_starts_at_the_newest_keyframe_before_the_step() {
        let mut log = StateLog::default();
        log.push_key(key(0));
        let hot = Control::Params(Box::new(SimParams { temperature: 2.0, ..SimParams::default() }));
        log.push_control(50, hot.clone());
        log.push_key(key(100));
        log.push_control(150, hot.clone());
        log.push_control(200, Control::Drag(Some(3.0)));
        let p = log.plan(120).unwrap();
        assert_eq!((p.from.step(), p.edits.len(), p.to_step), (100, 0, 120));
        let p = log.plan(200).unwrap();
        // The change at 200 came after the frame at 200.
        assert_eq!(p.edits.iter().map(|e| e.0).collect::<Vec<_>>(), vec![150]);
        let p = log.plan(201).unwrap();
        assert_eq!(p.edits[1], (200, Control::Drag(Some(3.0))));
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

    #[test]
    fn schedules_fall_on_multiples_of_their_step_count_from_their_origin() {
        let s = Schedule { origin: 7, every: Some(10) };
        assert!(!s.due_at(7) && s.due_at(17) && s.due_at(37) && !s.due_at(36) && !s.due_at(3));
        assert_eq!((s.next_after(7), s.next_after(16), s.next_after(17)), (Some(17), Some(17), Some(27)));
        let unset = Schedule { origin: 7, every: None };
        assert!(!unset.due_at(17) && unset.next_after(7).is_none());
    }

    #[test]
    fn a_plan_from_a_schedules_origin_takes_the_step_count_a_later_keyframe_fixed() {
        let mut log = StateLog::default();
        let first = Schedule { origin: 0, every: None };
        let fixed = Schedule { origin: 0, every: Some(40) };
        log.push_key(key_on(0, first));
        log.push_key(key_on(40, fixed));
        // An edit at 90 started a new schedule, fixed later.
        log.push_key(key_on(90, Schedule { origin: 90, every: None }));
        log.push_key(key_on(150, Schedule { origin: 90, every: Some(60) }));
        assert_eq!(log.plan(20).unwrap().schedule, fixed);
        assert_eq!(log.plan(50).unwrap().schedule, fixed);
        assert_eq!(log.plan(100).unwrap().schedule, Schedule { origin: 90, every: Some(60) });
        // Not fixed yet anywhere: the keyframe's own.
        log.truncate_after(120);
        assert_eq!(log.plan(100).unwrap().schedule, Schedule { origin: 90, every: None });
    }
}
