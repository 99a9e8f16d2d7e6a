//! Probes of a finished field: any layer's value at a point between bin centres
//! ([`layer_at`], bilinear, wrapping on periodic axes, undefined where no atom came), and a
//! profile along a straight probe line over consecutive windows ([`profile_along`]): per point
//! the mean over the windows and its standard error, each window one block of a block average.

use std::borrow::Borrow;

use super::finish::Fields;
use super::kind::FieldKind;
use super::spec::{FieldError, check};
use super::stats::windows_mean_sem;

/// A straight probe line in the tank's front plane, from `a` to `b` (sigma).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProbeLine {
    pub a: [f64; 2],
    pub b: [f64; 2],
}

/// Shortest probe line, sigma: shorter than this is a click, not a line.
pub const MIN_PROBE_LENGTH: f64 = 1e-3;

impl ProbeLine {
    pub fn length(&self) -> f64 {
        (self.b[0] - self.a[0]).hypot(self.b[1] - self.a[1])
    }

    /// Refuses a line of (nearly) zero length or with a coordinate that is not a number.
    pub fn validate(&self) -> Result<(), FieldError> {
        let finite = self.a.iter().chain(&self.b).all(|v| v.is_finite());
        check(finite, "probe line", format!("{:?} to {:?}", self.a, self.b), "the ends must be numbers")?;
        check(
            self.length() >= MIN_PROBE_LENGTH,
            "probe line",
            format!("{:?} to {:?}", self.a, self.b),
            "the line has zero length: drag from one end to the other",
        )
    }

    /// The point a fraction `t` of the way from `a` to `b`.
    pub fn at(&self, t: f64) -> [f64; 2] {
        [self.a[0] + t * (self.b[0] - self.a[0]), self.a[1] + t * (self.b[1] - self.a[1])]
    }
}

/// Whether bin `b` has data for `layer` (an atom came, the value is a number).
pub fn usable(f: &Fields, layer: &[f64], b: usize) -> bool {
    f.count[b] > 0.0 && layer[b].is_finite()
}

/// The bin index along axis `k` of integer cell coordinate `i` (wrapped on periodic axes,
/// clamped on the others).
fn wrap_index(f: &Fields, k: usize, i: i64) -> usize {
    let n = f.grid.n[k] as i64;
    if f.grid.periodic[k] { i.rem_euclid(n) as usize } else { i.clamp(0, n - 1) as usize }
}

/// The value of `layer` (a layer of `f`) at tank point `p` of the front grid, bilinear between
/// the centres of the four nearest bins, leaving out bins without data (their weight goes to
/// the others). None outside the grid on a non-periodic axis, in a bin without data, or for
/// a 3D grid.
pub fn layer_at(f: &Fields, layer: &[f64], p: [f64; 2]) -> Option<f64> {
    let g = &f.grid;
    if g.is_3d() {
        return None;
    }
    let mut frac = [0.0; 2];
    let mut home = [0usize; 2];
    for k in 0..2 {
        let x = (p[k] - g.origin[k]) / g.cell[k];
        let n = g.n[k] as f64;
        if !x.is_finite() || (!g.periodic[k] && !(0.0..=n).contains(&x)) {
            return None;
        }
        home[k] = wrap_index(f, k, x.floor() as i64);
        frac[k] = x - 0.5;
    }
    if !usable(f, layer, g.index([home[0], home[1], 0])) {
        return None;
    }
    let i0 = [frac[0].floor() as i64, frac[1].floor() as i64];
    let t = [frac[0] - i0[0] as f64, frac[1] - i0[1] as f64];
    let (mut w_sum, mut v) = (0.0, 0.0);
    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let b = g.index([wrap_index(f, 0, i0[0] + dx), wrap_index(f, 1, i0[1] + dy), 0]);
        if !usable(f, layer, b) {
            continue;
        }
        let w = (if dx == 0 { 1.0 - t[0] } else { t[0] }) * (if dy == 0 { 1.0 - t[1] } else { t[1] });
        w_sum += w;
        v += w * layer[b];
    }
    (w_sum > 1e-12).then(|| v / w_sum)
}

/// One point of a profile: its distance along the line (sigma), where it is, and the layer's
/// mean over the windows with its standard error (NaN where a window has no value there, or
/// with fewer than 2 windows for the error).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProfilePoint {
    pub s: f64,
    pub at: [f64; 2],
    pub mean: f64,
    pub sem: f64,
}

/// The profile of `kind` along `line` at `points` evenly spaced points (at least 2), over
/// consecutive `windows` of the same grid. A zero-length line is refused.
pub fn profile_along<F: Borrow<Fields>>(
    windows: &[F],
    kind: FieldKind,
    line: &ProbeLine,
    points: usize,
) -> Result<Vec<ProfilePoint>, FieldError> {
    line.validate()?;
    check(points >= 2, "points", points, "a profile needs at least 2 points")?;
    let at: Vec<[f64; 2]> = (0..points).map(|i| line.at(i as f64 / (points - 1) as f64)).collect();
    let per_window: Vec<Vec<f64>> = windows
        .iter()
        .map(|w| {
            let f = w.borrow();
            let layer = f.layer(kind);
            at.iter().map(|&p| layer_at(f, layer, p).unwrap_or(f64::NAN)).collect()
        })
        .collect();
    let stats = if windows.len() >= 2 { windows_mean_sem(&per_window) } else { Vec::new() };
    let length = line.length();
    Ok((0..points)
        .map(|i| {
            let (mean, sem) = match (stats.get(i), per_window.first()) {
                (Some(&(m, e)), _) => (m, e),
                (None, Some(one)) => (one[i], f64::NAN),
                (None, None) => (f64::NAN, f64::NAN),
            };
            ProfilePoint { s: length * i as f64 / (points - 1) as f64, at: at[i], mean, sem }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Accumulator, FieldSpec, Grid, finish};
    use crate::physics::sim_box::SimBox;

    fn field(shift: f64) -> Fields {
        let b = SimBox::new([10.0, 8.0, 2.0], [true, false, true]);
        let grid = Grid::new(&FieldSpec { bin: 1.0, ..FieldSpec::default() }, &b).unwrap();
        let mut f = finish(&Accumulator::new(&grid), &grid, [0.0, 1.0]);
        for bin in 0..grid.len() {
            let c = grid.centre(bin);
            f.count[bin] = 4.0;
            f.vx[bin] = 0.5 * c[1] + shift;
        }
        f
    }

    #[test]
    fn a_linear_layer_is_sampled_exactly_and_errors_come_from_windows() {
        let windows = [field(0.0), field(0.2), field(0.4)];
        let line = ProbeLine { a: [5.0, 1.0], b: [5.0, 7.0] };
        let p = profile_along(&windows, FieldKind::Vx, &line, 7).unwrap();
        assert_eq!(p.len(), 7);
        for q in &p {
            let want = 0.5 * q.at[1] + 0.2;
            assert!((q.mean - want).abs() < 1e-12, "{q:?}");
            // Three windows 0.2 apart: standard deviation 0.2, standard error 0.2 / sqrt(3).
            assert!((q.sem - 0.2 / 3f64.sqrt()).abs() < 1e-9, "{q:?}");
        }
        assert!((p[6].s - 6.0).abs() < 1e-12);
        let one = profile_along(&windows[..1], FieldKind::Vx, &line, 2).unwrap();
        assert!(one[0].sem.is_nan() && (one[0].mean - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_zero_length_line_is_refused_by_name() {
        let line = ProbeLine { a: [2.0, 2.0], b: [2.0, 2.0] };
        let e = profile_along(&[field(0.0)], FieldKind::Vx, &line, 10).unwrap_err();
        assert_eq!(e.field, "probe line");
        assert!(e.to_string().contains("zero length"), "{e}");
        let nan = ProbeLine { a: [f64::NAN, 0.0], b: [1.0, 1.0] };
        assert_eq!(nan.validate().unwrap_err().field, "probe line");
    }
}
