//! The wake probe: the cross-stream velocity in the near wake of a body, one value per
//! finished field window, whose dominant frequency gives the Strouhal number where thermal
//! noise drowns the lift (MD studies of nano-cylinder wakes read the shedding frequency
//! there). The probe is a disc of bins on the centre line [`PROBE_BEHIND_D`] diameters behind
//! the body's centre, where the alternating vortices swing the flow across the line most.

use crate::flow::Fields;

/// How far behind the body's centre the probe sits, in diameters.
pub const PROBE_BEHIND_D: f64 = 2.5;
/// The probe's radius, in diameters.
pub const PROBE_RADIUS_D: f64 = 0.25;

/// Where the probe of a body of `diameter` centred at `centre` (x, y) sits.
pub fn probe_point(centre: [f64; 2], diameter: f64) -> [f64; 2] {
    [centre[0] + PROBE_BEHIND_D * diameter, centre[1]]
}

/// The count-weighted mean y velocity of the bins of the front field `f` whose centres lie
/// within [`PROBE_RADIUS_D`] diameters of the probe point (at least the bin holding it).
/// None for a 3D grid, a probe outside the grid, or no atoms there.
pub fn wake_vy(f: &Fields, centre: [f64; 2], diameter: f64) -> Option<f64> {
    let g = &f.grid;
    if g.is_3d() || !(diameter.is_finite() && diameter > 0.0) {
        return None;
    }
    let p = probe_point(centre, diameter);
    let inside = |k: usize| p[k] >= g.origin[k] && p[k] <= g.origin[k] + g.n[k] as f64 * g.cell[k];
    if !(inside(0) && inside(1)) {
        return None;
    }
    let home = g.bin_of([p[0], p[1], g.origin[2]])?;
    let r2 = (PROBE_RADIUS_D * diameter).powi(2);
    let (mut c, mut v) = (0.0, 0.0);
    for b in 0..g.len() {
        let q = g.centre(b);
        let near = b == home || (q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2) <= r2;
        if near && f.count[b] > 0.0 && f.vy[b].is_finite() {
            c += f.count[b];
            v += f.count[b] * f.vy[b];
        }
    }
    (c > 0.0).then(|| v / c)
}

/// The probe's signal over a run: one value per window at the window's middle time. A
/// window on another grid, or a body moved, starts the series over.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WakeSeries {
    key: Option<([f64; 2], f64, [usize; 3])>,
    pub times: Vec<f64>,
    pub vy: Vec<f64>,
}

impl WakeSeries {
    /// Adds window `f`'s probe value for the body at `centre` of `diameter` and returns it
    /// (nothing, and None, when the probe has no value in it).
    pub fn push(&mut self, f: &Fields, centre: [f64; 2], diameter: f64) -> Option<f64> {
        let key = Some((centre, diameter, f.grid.n));
        if self.key != key {
            *self = WakeSeries { key, ..WakeSeries::default() };
        }
        let v = wake_vy(f, centre, diameter)?;
        self.times.push(0.5 * (f.time[0] + f.time[1]));
        self.vy.push(v);
        Some(v)
    }

    pub fn clear(&mut self) {
        *self = WakeSeries::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Accumulator, FieldSpec, Grid, finish};
    use crate::physics::sim_box::SimBox;

    fn window(t0: f64, vy: impl Fn(f64, f64) -> f64) -> Fields {
        let b = SimBox::new([80.0, 40.0, 5.0], [true, true, true]);
        let grid = Grid::new(&FieldSpec { bin: 2.0, ..FieldSpec::default() }, &b).unwrap();
        let mut f = finish(&Accumulator::new(&grid), &grid, [t0, t0 + 5.0]);
        for bin in 0..grid.len() {
            let c = grid.centre(bin);
            f.count[bin] = 10.0;
            f.vy[bin] = vy(c[0], c[1]);
        }
        f
    }

    #[test]
    fn the_probe_reads_the_wake_behind_the_body() {
        // vy = 1 only within 3 sigma of (10 + 2.5 * 8, 20) = (30, 20); the probe (radius 2)
        // sees only that.
        let f = window(0.0, |x, y| if (x - 30.0).hypot(y - 20.0) < 3.0 { 1.0 } else { -5.0 });
        assert_eq!(probe_point([10.0, 20.0], 8.0), [30.0, 20.0]);
        assert_eq!(wake_vy(&f, [10.0, 20.0], 8.0), Some(1.0));
        assert_eq!(wake_vy(&f, [10.0, 20.0], 0.0), None);
        assert_eq!(wake_vy(&f, [70.0, 20.0], 8.0), None, "the probe at x = 90 lies outside the grid");
    }

    #[test]
    fn a_series_holds_one_value_per_window_and_restarts_when_the_body_moves() {
        let mut s = WakeSeries::default();
        for k in 0..4 {
            s.push(&window(5.0 * k as f64, |_, _| k as f64), [10.0, 20.0], 8.0);
        }
        assert_eq!(s.times, vec![2.5, 7.5, 12.5, 17.5]);
        assert_eq!(s.vy, vec![0.0, 1.0, 2.0, 3.0]);
        s.push(&window(20.0, |_, _| 7.0), [12.0, 20.0], 8.0);
        assert_eq!((s.times.clone(), s.vy.clone()), (vec![22.5], vec![7.0]));
        s.clear();
        assert!(s.times.is_empty());
    }
}
