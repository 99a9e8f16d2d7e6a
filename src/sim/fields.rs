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
    /// Samples in the open window.
    taken: u64,
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
        Ok(FieldSampler {
            acc: Accumulator::new(&grid),
            spec,
            grid,
            per_window,
            taken: 0,
            start: 0.0,
            finished: Vec::new(),
        })
    }

    /// Steps from `step` to the next sampling step (1 to `every`).
    pub fn steps_to_next(&self, step: u64) -> u64 {
        self.spec.every - step % self.spec.every
    }

    /// Whether a sample is due at `step`.
    pub fn due(&self, step: u64) -> bool {
        step.is_multiple_of(self.spec.every)
    }

    /// Counts a sample taken at `time` (wherever its sums went); true when it fills the
    /// window, which the caller then closes.
    pub fn count_sample(&mut self, time: f64) -> bool {
        self.taken += 1;
        if self.taken == 1 {
            self.start = time;
        }
        self.taken >= self.per_window
    }

    /// Samples in the open window.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Adds one CPU sample of `n` atoms (`atom(i)`: position, velocity, mass) taken at `time`
    /// into `acc`, closing the window when it is full.
    pub fn sample_cpu(&mut self, time: f64, n: usize, atom: impl Fn(usize) -> ([f64; 3], [f64; 3], f64) + Sync) {
        self.acc.sample_with(&self.grid, n, atom);
        if self.count_sample(time) {
            self.close(time);
        }
    }

    /// Closes the open window at `time` (if it holds any sample) with the sums in `acc`.
    pub fn close(&mut self, time: f64) {
        if self.taken > 0 {
            let fields = finish(&self.acc, &self.grid, [self.start, time]);
            self.push(fields);
            self.acc.reset();
        }
    }

    /// Closes the open window at `time` (if it holds any sample) with sums made elsewhere (a
    /// device's, copied back).
    pub fn close_with(&mut self, acc: &Accumulator, time: f64) {
        if self.taken > 0 {
            let fields = finish(acc, &self.grid, [self.start, time]);
            self.push(fields);
        }
    }

    fn push(&mut self, fields: Fields) {
        if self.finished.len() >= KEEP {
            self.finished.remove(0);
        }
        self.finished.push(fields);
        self.taken = 0;
    }

    /// The windows finished since the last call, oldest first.
    pub fn take(&mut self) -> Vec<Fields> {
        std::mem::take(&mut self.finished)
    }
}
