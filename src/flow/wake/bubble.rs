//! The recirculation bubble behind a cylinder (the "twin eddies" of steady flow at Re of
//! about 5 to 45): where the mean stream-wise velocity on the wake's centre line turns
//! negative behind the body, and where it turns back (the closure point). Its length L,
//! from the body's rear to the closure point, over the diameter D is the classic measure of
//! the steady wake (Dennis & Chang 1970, Coutanceau & Bouard 1977). Measured on the mean of
//! the newest few windows (a steady bubble's reverse flow is a few per cent of U, well inside
//! one window's thermal noise), with a jackknife error over those windows. Pure: finished
//! front (x-y) fields in, numbers out.

use std::borrow::Borrow;

use crate::flow::Fields;
use crate::flow::probe::layer_at;

/// The newest windows the bubble is measured over.
pub const BUBBLE_WINDOWS: usize = 5;

/// Steps along the centre line per bin width.
const STEPS_PER_BIN: usize = 4;
/// The reverse flow must start within this many diameters of the body's rear.
const START_WITHIN_D: f64 = 0.5;
/// The line is followed at most this many diameters behind the body.
const MAX_LENGTH_D: f64 = 20.0;

/// The bubble on the centre line of one window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recirculation {
    /// From the body's rear (x_c + D/2) to the closure point, sigma.
    pub length: f64,
    /// `length` / D.
    pub length_over_d: f64,
    /// The most negative centre-line x velocity in the bubble, sigma / tau.
    pub min_vx: f64,
    /// Where that is, sigma behind the rear.
    pub min_at: f64,
    /// Windows averaged.
    pub windows: usize,
    /// Jackknife standard errors of `length_over_d` and `min_vx` over the windows (NaN with
    /// fewer than 3, or where leaving a window out loses the bubble).
    pub length_over_d_sem: f64,
    pub min_vx_sem: f64,
}

/// The bubble behind a body of diameter `diameter` centred at `centre` (x, y), on the mean x
/// velocity of `windows` (count-weighted per bin, the last [`BUBBLE_WINDOWS`] of them;
/// windows on another grid than the newest are left out): see [`recirculation_in`]. With 3
/// or more windows, the standard error of L/D by the jackknife (each window left out in turn).
pub fn recirculation<F: Borrow<Fields>>(windows: &[F], centre: [f64; 2], diameter: f64) -> Option<Recirculation> {
    let newest = windows.last()?.borrow();
    let used: Vec<&Fields> =
        windows.iter().rev().map(|w| w.borrow()).filter(|w| w.grid == newest.grid).take(BUBBLE_WINDOWS).collect();
    // One scratch field, refilled for each mean: the centre line reads only its grid, count
    // and vx, so the other layers stay empty (no copy of a whole window per estimate).
    let n = newest.grid.len();
    let mut scratch = Fields {
        grid: newest.grid.clone(),
        samples: newest.samples,
        time: newest.time,
        density: Vec::new(),
        vx: vec![f64::NAN; n],
        vy: Vec::new(),
        vz: Vec::new(),
        speed: Vec::new(),
        temperature: Vec::new(),
        vorticity: Vec::new(),
        mach: Vec::new(),
        count: vec![0.0; n],
        dye: Vec::new(),
        dye_sampled: false,
    };
    let mut estimate = |skip: Option<usize>| {
        for b in 0..n {
            let (mut c, mut v) = (0.0, 0.0);
            for (k, w) in used.iter().enumerate() {
                if Some(k) != skip && w.count[b] > 0.0 && w.vx[b].is_finite() {
                    c += w.count[b];
                    v += w.count[b] * w.vx[b];
                }
            }
            (scratch.count[b], scratch.vx[b]) = if c > 0.0 { (c, v / c) } else { (0.0, f64::NAN) };
        }
        recirculation_in(&scratch, centre, diameter)
    };
    let mut bubble = estimate(None)?;
    bubble.windows = used.len();
    let k = used.len();
    if k >= 3 {
        let leave_out: Option<Vec<Recirculation>> = (0..k).map(|i| estimate(Some(i))).collect();
        if let Some(l) = leave_out {
            bubble.length_over_d_sem = jackknife(l.iter().map(|b| b.length_over_d));
            bubble.min_vx_sem = jackknife(l.iter().map(|b| b.min_vx));
        }
    }
    Some(bubble)
}

/// The jackknife standard error from the leave-one-out estimates `x`.
fn jackknife(x: impl ExactSizeIterator<Item = f64> + Clone) -> f64 {
    let k = x.len() as f64;
    let m = x.clone().sum::<f64>() / k;
    (x.map(|v| (v - m).powi(2)).sum::<f64>() * (k - 1.0) / k).sqrt()
}

/// The bubble behind a body of diameter `diameter` centred at `centre` (x, y) in one front
/// field `f`, the stream along +x: the centre-line x velocity (the mean of three lines a
/// half bin apart across the stream, each bilinear in the bins, then a running mean over one
/// bin along it) is followed from the rear; the bubble is the stretch of negative velocity
/// that begins within half a diameter of the rear, and it closes where the velocity first
/// turns positive again (linear between the points either side). None when there is no
/// reverse flow there, when the flow does not turn back within 20 diameters or before the
/// grid ends, when the grid is 3D, or for a diameter that is not positive.
pub fn recirculation_in(f: &Fields, centre: [f64; 2], diameter: f64) -> Option<Recirculation> {
    if f.grid.is_3d() || !(diameter.is_finite() && diameter > 0.0) {
        return None;
    }
    let g = &f.grid;
    let rear = centre[0] + 0.5 * diameter;
    let end = (rear + MAX_LENGTH_D * diameter).min(g.origin[0] + g.n[0] as f64 * g.cell[0]);
    let ds = g.cell[0] / STEPS_PER_BIN as f64;
    let dy = 0.5 * g.cell[1];
    // The three-line mean at each step; None where no line has data (inside the body).
    let raw: Vec<(f64, Option<f64>)> = (0..)
        .map(|i| i as f64 * ds)
        .take_while(|s| rear + s <= end)
        .map(|s| {
            let vals: Vec<f64> =
                [-dy, 0.0, dy].iter().filter_map(|o| layer_at(f, &f.vx, [rear + s, centre[1] + o])).collect();
            (s, (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64))
        })
        .collect();
    // Running mean over one bin width (STEPS_PER_BIN + 1 points centred) of the points with data.
    let half = STEPS_PER_BIN as isize / 2;
    let line: Vec<(f64, f64)> = (0..raw.len())
        .filter(|&i| raw[i].1.is_some())
        .map(|i| {
            let near: Vec<f64> =
                (-half..=half).filter_map(|o| raw.get(i.checked_add_signed(o)?).and_then(|p| p.1)).collect();
            (raw[i].0, near.iter().sum::<f64>() / near.len() as f64)
        })
        .collect();
    let start = line.iter().position(|&(_, v)| v < 0.0)?;
    if line[start].0 > START_WITHIN_D * diameter {
        return None;
    }
    let close = start + line[start..].iter().position(|&(_, v)| v > 0.0)?;
    let ((s0, v0), (s1, v1)) = (line[close - 1], line[close]);
    let length = s0 + (s1 - s0) * (-v0) / (v1 - v0);
    let (min_at, min_vx) =
        line[start..close].iter().copied().fold((0.0, f64::INFINITY), |m, p| if p.1 < m.1 { p } else { m });
    Some(Recirculation {
        length,
        length_over_d: length / diameter,
        min_vx,
        min_at,
        windows: 1,
        length_over_d_sem: f64::NAN,
        min_vx_sem: f64::NAN,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Accumulator, FieldSpec, Grid, finish};
    use crate::physics::sim_box::SimBox;

    /// A front field 60 x 20 sigma in 1-sigma bins whose x velocity is `vx(x, y)` at each
    /// bin centre; bins inside the disc of radius `r` at (10, 10) are empty.
    fn field(vx: impl Fn(f64, f64) -> f64, r: f64) -> Fields {
        let b = SimBox::new([60.0, 20.0, 5.0], [true, true, true]);
        let spec = FieldSpec { bin: 1.0, ..FieldSpec::default() };
        let grid = Grid::new(&spec, &b).unwrap();
        let n = grid.len();
        let mut f = finish(&Accumulator::new(&grid), &grid, [0.0, 1.0]);
        for i in 0..n {
            let c = grid.centre(i);
            let inside = (c[0] - 10.0).hypot(c[1] - 10.0) < r;
            f.count[i] = if inside { 0.0 } else { 10.0 };
            f.vx[i] = if inside { f64::NAN } else { vx(c[0], c[1]) };
        }
        f
    }

    #[test]
    fn a_linear_recovery_closes_where_it_crosses_zero() {
        // Behind the rear at x = 12: vx = -1 + 0.25 (x - 12), zero at x = 16: L = 4 = 1 D.
        let f = field(|x, _| if x > 12.0 { -1.0 + 0.25 * (x - 12.0) } else { 1.0 }, 2.0);
        let r = recirculation_in(&f, [10.0, 10.0], 4.0).unwrap();
        assert!((r.length - 4.0).abs() < 0.05, "{r:?}");
        assert!((r.length_over_d - 1.0).abs() < 0.0125, "{r:?}");
        assert!(r.min_vx < -0.8 && r.min_at < 1.0, "{r:?}");
    }

    #[test]
    fn no_reverse_flow_is_no_bubble() {
        let f = field(|x, _| 0.2 + 0.01 * x, 2.0);
        assert_eq!(recirculation_in(&f, [10.0, 10.0], 4.0), None);
        // Reverse flow far downstream (not attached to the body) is not a bubble either.
        let f = field(|x, _| if (30.0..34.0).contains(&x) { -0.5 } else { 0.5 }, 2.0);
        assert_eq!(recirculation_in(&f, [10.0, 10.0], 4.0), None);
        assert_eq!(recirculation_in(&f, [10.0, 10.0], 0.0), None);
    }

    #[test]
    fn a_bubble_that_never_closes_has_no_length() {
        let f = field(|x, _| if x > 12.0 { -0.5 } else { 1.0 }, 2.0);
        assert_eq!(recirculation_in(&f, [10.0, 10.0], 4.0), None);
    }

    #[test]
    fn windows_are_averaged_and_their_spread_is_the_error() {
        // Closure at x = 12 + 4 c for windows closing at c = 0.8, 1.0, 1.2 diameters: the
        // mean field closes at 1.0 D; the jackknife error of three windows with L/D 0.8,
        // 1.0, 1.2 is their standard error, 0.2 / sqrt(3) (nearly, the mean of three linear
        // profiles is linear).
        let windows: Vec<Fields> = [0.8, 1.0, 1.2]
            .iter()
            .map(|c| field(|x, _| if x > 12.0 { -1.0 + (x - 12.0) / (4.0 * c) } else { 1.0 }, 2.0))
            .collect();
        let r = recirculation(&windows, [10.0, 10.0], 4.0).unwrap();
        assert_eq!(r.windows, 3);
        assert!((r.length_over_d - 0.973).abs() < 0.03, "{r:?}");
        assert!((r.length_over_d_sem - 0.2 / 3f64.sqrt()).abs() < 0.02, "{r:?}");
        // Only the newest BUBBLE_WINDOWS count.
        let many: Vec<Fields> = (0..9).map(|_| windows[1].clone()).collect();
        let r = recirculation(&many, [10.0, 10.0], 4.0).unwrap();
        assert_eq!(r.windows, BUBBLE_WINDOWS);
        assert!(r.length_over_d_sem.abs() < 1e-9, "{r:?}");
        assert_eq!(recirculation::<Fields>(&[], [10.0, 10.0], 4.0), None);
    }
}
