//! Flow-field sampling as a backend runs: the windows of [`crate::flow`] over simulated time.
//! A [`FieldSampler`] knows when a sample is due (every `every` steps), how many samples make
//! a window (`window_tau`), and keeps the windows finished since the caller last took them.
//! Backends own one while fields are on: the CPU backend adds samples from its arrays, the
//! CUDA backend keeps its sums on the device and hands them over at a window's end. A window
//! may be finished later, on a thread of its own ([`FieldSampler::close_later`]: the CUDA
//! backend's sums still on their way to the host), so the simulation goes on meanwhile;
//! [`FieldSampler::take`] waits for those and returns every window in order.

use crate::flow::{Accumulator, FieldSpec, Fields, Grid, finish};
use crate::physics::sim_box::SimBox;
use crate::sim::SimError;

/// Windows kept for the caller at most; older ones are dropped (a caller that never takes
/// them must not grow memory without bound).
const KEEP: usize = 64;

/// A window being finished on a thread of its own.
type Pending = std::thread::JoinHandle<Result<Fields, String>>;

/// The sampling state of one run: the grid, the open window's sums, the finished windows.
#[derive(Debug)]
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
    /// Windows closed but still being finished, oldest first.
    pending: std::collections::VecDeque<Pending>,
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
            pending: std::collections::VecDeque::new(),
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

    /// Adds one CPU sample of `n` atoms (`atom(i)`: position, velocity, mass; `dye[i]` its tag,
    /// `dye` empty without dye) taken at `time` into `acc`, closing the window when it is full.
    pub fn sample_cpu(
        &mut self,
        time: f64,
        n: usize,
        dye: &[crate::physics::dye::Dye],
        atom: impl Fn(usize) -> ([f64; 3], [f64; 3], f64) + Sync,
    ) {
        self.acc.sample_with(&self.grid, n, &atom);
        self.acc.sample_dye(&self.grid, dye, |i| atom(i).0);
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
            self.taken = 0;
        }
    }

    /// Closes the open window at `time` (if it holds any sample) with sums that `sums` will
    /// deliver (a device's, still being copied back), finishing it on a thread of its own:
    /// the caller goes on at once and the next window opens now.
    pub fn close_later(&mut self, time: f64, sums: impl FnOnce() -> Result<Accumulator, String> + Send + 'static) {
        if self.taken == 0 {
            return;
        }
        let (grid, start) = (self.grid.clone(), self.start);
        self.pending.push_back(std::thread::spawn(move || Ok(finish(&sums()?, &grid, [start, time]))));
        self.taken = 0;
    }

    /// Keeps a finished window (the oldest dropped past [`KEEP`]).
    fn push(&mut self, fields: Fields) {
        if self.finished.len() >= KEEP {
            self.finished.remove(0);
        }
        self.finished.push(fields);
    }

    /// The windows finished since the last call, oldest first, after waiting for those still
    /// being finished.
    pub fn take(&mut self) -> Result<Vec<Fields>, SimError> {
        while let Some(job) = self.pending.pop_front() {
            let fields = job
                .join()
                .map_err(|_| SimError::Device("finishing a flow-field window failed".into()))?
                .map_err(|e| SimError::Device(format!("flow-field sums: {e}")))?;
            self.push(fields);
        }
        Ok(std::mem::take(&mut self.finished))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampler() -> FieldSampler {
        let b = SimBox::new([20.0; 3], [true; 3]);
        FieldSampler::new(FieldSpec { every: 1, window_tau: 0.01, ..FieldSpec::default() }, &b, 0.005).unwrap()
    }

    /// Windows finished on their own threads come back in the order they were closed, even
    /// when a later one is done first, and a failed one is an error, not a lost window.
    #[test]
    fn windows_finished_later_come_back_in_order() {
        let mut s = sampler();
        for (k, delay_ms) in [(1u64, 80u64), (2, 0)] {
            s.count_sample(k as f64 - 0.5);
            s.count_sample(k as f64);
            let grid = s.grid.clone();
            s.close_later(k as f64, move || {
                std::thread::sleep(std::time::Duration::from_millis(delay_ms));
                let mut acc = Accumulator::new(&grid);
                acc.sample_with(&grid, 1, |_| ([1.0, 1.0, 1.0], [k as f64, 0.0, 0.0], 1.0));
                Ok(acc)
            });
            assert_eq!(s.taken(), 0, "a new window opens at once");
        }
        let w = s.take().unwrap();
        assert_eq!(w.iter().map(|f| f.time).collect::<Vec<_>>(), vec![[0.5, 1.0], [1.5, 2.0]]);
        let vx: Vec<f64> = w.iter().map(|f| f.vx.iter().copied().fold(0.0, f64::max)).collect();
        assert_eq!(vx, vec![1.0, 2.0]);
        assert!(s.take().unwrap().is_empty());
        s.count_sample(3.0);
        s.close_later(3.0, || Err("the copy failed".into()));
        let e = s.take().unwrap_err().to_string();
        assert!(e.contains("the copy failed"), "{e}");
    }
}
