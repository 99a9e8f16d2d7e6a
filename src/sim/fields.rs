//! Flow-field sampling as a backend runs: the windows of [`crate::flow`] over simulated time.
//! A [`FieldSampler`] knows when a sample is due (every `every` steps), how many samples make
//! a window (`window_tau`), and keeps the windows finished since the caller last took them.
//! Backends own one while fields are on: the CPU backend adds samples from its arrays, the
//! CUDA backend keeps its sums on the device and hands them over at a window's end.

use crate::flow::{Accumulator, FieldSpec, Fields, Grid, finish};
use crate::physics::sim_box::SimBox;
use crate::sim::SimError;

/// Windows kept for the caller at most; older ones are dropped (a caller that never takes
/// them must not grow memory without bound).
const KEEP: usize = 64;

/// The sampling state of one run: the grid, the open window's sums, the finished windows.
#[derive(Clone, Debug)]
pub struct FieldSampler {
    pub spec: FieldSpec,
    pub grid: Grid,
    /// The open window's sums.
    pub acc: Accumulator,
    /// Samples that close a window.
    pub per_window: u64,
    /// Simulated time of the open window's first sample (tau).
    start: f64,
    finished: Vec<Fields>,
}

impl FieldSampler {
    /// A sampler for `spec` in box `b` at time step `dt`; a bad spec is refused with the field
    /// named.
    pub fn new(spec: FieldSpec, b: &SimBox, dt: f64) -> Result<FieldSampler, SimError> {
        spec.validate(b, dt).map_err(|e| SimError::Invalid(format!("fields: {e}")))?;
        let grid = Grid::new(&spec, b).map_err(|e| SimError::Invalid(format!("fields: {e}")))?;
        let per_window = spec.samples_per_window(dt).max(1);
        Ok(FieldSampler { acc: Accumulator::new(&grid), spec, grid, per_window, start: 0.0, finished: Vec::new() })
    }

    /// Steps from `step` to the next sampling step (1 to `every`).
    pub fn steps_to_next(&self, step: u64) -> u64 {
        self.spec.every - step % self.spec.every
    }

    /// Whether a sample is due at `step`.
    pub fn due(&self, step: u64) -> bool {
        step.is_multiple_of(self.spec.every)
    }

    /// Records that a sample taken at `time` went into `acc`; closes the window when full.
    pub fn sampled(&mut self, time: f64) {
        if self.acc.samples() == 1 {
            self.start = time;
        }
        if self.acc.samples() >= self.per_window {
            self.close(time);
        }
    }

    /// Adds one CPU sample of `n` atoms (`atom(i)`: position, velocity, mass) taken at `time`.
    pub fn sample_cpu(&mut self, time: f64, n: usize, atom: impl Fn(usize) -> ([f64; 3], [f64; 3], f64) + Sync) {
        self.acc.sample_with(&self.grid, n, atom);
        self.sampled(time);
    }

    /// Closes the open window at `time` (if it holds any sample) into a finished one.
    pub fn close(&mut self, time: f64) {
        if self.acc.samples() == 0 {
            return;
        }
        if self.finished.len() >= KEEP {
            self.finished.remove(0);
        }
        self.finished.push(finish(&self.acc, &self.grid, [self.start, time]));
        self.acc.reset();
    }

    /// The windows finished since the last call, oldest first.
    pub fn take(&mut self) -> Vec<Fields> {
        std::mem::take(&mut self.finished)
    }
}
