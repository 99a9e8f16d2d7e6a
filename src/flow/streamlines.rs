//! Streamlines of a finished 2D field: the mean velocity (u_x, u_y) sampled between bin centres
//! ([`velocity_at`], bilinear, wrapping on periodic axes, undefined where no atom came), and
//! evenly spaced streamlines through it ([`trace`]) after B. Jobard and W. Lefer, "Creating
//! evenly-spaced streamlines of arbitrary density" (1997): seeds on a lattice of spacing
//! `d_sep`, each line integrated forward and backward (second-order Runge-Kutta, steps of
//! fixed length along the direction of flow) until it comes within `d_sep / 2` of another
//! line, closes on itself, leaves the data or the box, or reaches slow fluid.
//!
//! Pure geometry over [`Fields`]: the renderer turns the polylines into lines.

use super::finish::Fields;
use super::kind::FieldKind;
use super::probe::layer_at;

/// A streamline as polylines in box coordinates (sigma), in the direction of flow; a line that
/// crosses a periodic face is split there into pieces, each inside the box.
pub type Streamline = Vec<Vec<[f64; 2]>>;

/// The mean velocity (x, y) at tank point `p` of the front grid, interpolated as
/// [`layer_at`] does each component. None outside the grid on a non-periodic axis, in a bin
/// without data, or for a 3D grid.
pub fn velocity_at(f: &Fields, p: [f64; 2]) -> Option<[f64; 2]> {
    Some([layer_at(f, &f.vx, p)?, layer_at(f, &f.vy, p)?])
}

/// Points already on streamlines, bucketed for "is any within r?" queries.
struct Occupancy {
    cell: f64,
    n: [usize; 2],
    origin: [f64; 2],
    length: [f64; 2],
    periodic: [bool; 2],
    /// (x, y, line, arc length along the line) per bucket.
    buckets: Vec<Vec<(f64, f64, usize, f64)>>,
}

impl Occupancy {
    fn new(f: &Fields, cell: f64) -> Occupancy {
        let g = &f.grid;
        let length = [g.cell[0] * g.n[0] as f64, g.cell[1] * g.n[1] as f64];
        let n = [((length[0] / cell).ceil() as usize).max(1), ((length[1] / cell).ceil() as usize).max(1)];
        Occupancy {
            cell,
            n,
            origin: [g.origin[0], g.origin[1]],
            length,
            periodic: [g.periodic[0], g.periodic[1]],
            buckets: vec![Vec::new(); n[0] * n[1]],
        }
    }

    fn bucket(&self, p: [f64; 2]) -> [i64; 2] {
        std::array::from_fn(|k| ((p[k] - self.origin[k]) / self.cell).floor() as i64)
    }

    fn insert(&mut self, p: [f64; 2], line: usize, arc: f64) {
        let b = self.bucket(p);
        let ix = b[0].clamp(0, self.n[0] as i64 - 1) as usize;
        let iy = b[1].clamp(0, self.n[1] as i64 - 1) as usize;
        self.buckets[ix + self.n[0] * iy].push((p[0], p[1], line, arc));
    }

    /// Whether a point within `r` (<= the bucket size) of `p` belongs to another line than
    /// `line`, or to `line` itself at least `gap` of arc length behind `arc`.
    fn near(&self, p: [f64; 2], r: f64, line: usize, arc: f64, gap: f64) -> bool {
        let b = self.bucket(p);
        for dy in -1..=1 {
            for dx in -1..=1 {
                let mut c = [b[0] + dx, b[1] + dy];
                let mut skip = false;
                for k in 0..2 {
                    let n = self.n[k] as i64;
                    if self.periodic[k] {
                        c[k] = c[k].rem_euclid(n);
                    } else if c[k] < 0 || c[k] >= n {
                        skip = true;
                    }
                }
                if skip {
                    continue;
                }
                for &(x, y, l, s) in &self.buckets[c[0] as usize + self.n[0] * c[1] as usize] {
                    if l == line && (arc - s).abs() < gap {
                        continue;
                    }
                    let mut d = [x - p[0], y - p[1]];
                    for k in 0..2 {
                        if self.periodic[k] {
                            d[k] -= self.length[k] * (d[k] / self.length[k]).round();
                        }
                    }
                    if d[0] * d[0] + d[1] * d[1] < r * r {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// `p` wrapped into the grid on periodic axes (unchanged on the others).
    fn wrap(&self, p: [f64; 2]) -> [f64; 2] {
        std::array::from_fn(|k| {
            if self.periodic[k] { self.origin[k] + (p[k] - self.origin[k]).rem_euclid(self.length[k]) } else { p[k] }
        })
    }
}

/// A typical speed of the field: the median over bins with data (0 when none).
fn median_speed(f: &Fields) -> f64 {
    let mut s: Vec<f64> = f.layer(FieldKind::Speed).iter().copied().filter(|v| v.is_finite()).collect();
    if s.is_empty() {
        return 0.0;
    }
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// Evenly spaced streamlines `d_sep` (sigma) apart through the front grid of `f` (none for a
/// 3D grid, a field without data or a non-positive spacing). Slow fluid, below 5 % of the
/// median speed, ends a line: there the direction is thermal noise.
pub fn trace(f: &Fields, d_sep: f64) -> Vec<Streamline> {
    let g = &f.grid;
    if g.is_3d() || !(d_sep.is_finite() && d_sep > 0.0) {
        return Vec::new();
    }
    let v_min = 0.05 * median_speed(f);
    if v_min <= 0.0 {
        return Vec::new();
    }
    let d_test = 0.5 * d_sep;
    let h = 0.2 * g.cell[0].min(g.cell[1]).min(d_test);
    let mut occ = Occupancy::new(f, d_sep);
    let max_arc = 4.0 * (occ.length[0] + occ.length[1]);
    let dir = |p: [f64; 2]| -> Option<[f64; 2]> {
        let u = velocity_at(f, p)?;
        let s = (u[0] * u[0] + u[1] * u[1]).sqrt();
        (s >= v_min).then(|| [u[0] / s, u[1] / s])
    };
    let mut lines = Vec::new();
    let seeds = [(occ.length[0] / d_sep).floor().max(1.0) as usize, (occ.length[1] / d_sep).floor().max(1.0) as usize];
    for sy in 0..seeds[1] {
        for sx in 0..seeds[0] {
            let seed = [
                occ.origin[0] + (sx as f64 + 0.5) * occ.length[0] / seeds[0] as f64,
                occ.origin[1] + (sy as f64 + 0.5) * occ.length[1] / seeds[1] as f64,
            ];
            let line = lines.len();
            if dir(seed).is_none() || occ.near(seed, d_sep, usize::MAX, 0.0, 0.0) {
                continue;
            }
            // Forward then backward halves, in unwrapped coordinates.
            let mut halves: [Vec<[f64; 2]>; 2] = [vec![seed], vec![seed]];
            for (half, sign) in [(0usize, 1.0f64), (1, -1.0)] {
                let mut p = seed;
                let mut arc = 0.0;
                while arc < max_arc {
                    let Some(d1) = dir(occ.wrap(p)) else { break };
                    let mid = [p[0] + 0.5 * h * sign * d1[0], p[1] + 0.5 * h * sign * d1[1]];
                    let Some(d2) = dir(occ.wrap(mid)) else { break };
                    let q = [p[0] + h * sign * d2[0], p[1] + h * sign * d2[1]];
                    arc += h;
                    let signed_arc = sign * arc;
                    let w = occ.wrap(q);
                    if occ.near(w, d_test, line, signed_arc, 2.0 * d_sep) || velocity_at(f, w).is_none() {
                        break;
                    }
                    halves[half].push(q);
                    occ.insert(w, line, signed_arc);
                    p = q;
                }
            }
            occ.insert(seed, line, 0.0);
            let [fwd, mut back] = halves;
            back.reverse();
            back.pop();
            back.extend(fwd);
            if back.len() < 3 {
                continue;
            }
            lines.push(split_at_faces(&occ, &back));
        }
    }
    lines
}

/// Wraps an unwrapped polyline into the box, cutting it where it crosses a periodic face.
fn split_at_faces(occ: &Occupancy, pts: &[[f64; 2]]) -> Streamline {
    let image =
        |p: [f64; 2]| -> [i64; 2] {
            std::array::from_fn(|k| {
                if occ.periodic[k] { ((p[k] - occ.origin[k]) / occ.length[k]).floor() as i64 } else { 0 }
            })
        };
    let mut out: Streamline = Vec::new();
    let mut current: Vec<[f64; 2]> = Vec::new();
    let mut last = None;
    for &p in pts {
        let im = image(p);
        if last.is_some_and(|l| l != im) && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        last = Some(im);
        current.push(occ.wrap(p));
    }
    if current.len() >= 2 {
        out.push(current);
    }
    out.retain(|piece| piece.len() >= 2);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Accumulator, FieldSpec, Grid, finish};
    use crate::physics::sim_box::SimBox;

    /// A finished field with velocity `u(x, y)` in every bin of a `l` x `l` box of bin 1.
    fn field(l: f64, periodic: bool, u: impl Fn(f64, f64) -> [f64; 2]) -> Fields {
        let b = SimBox::new([l, l, 2.0], [periodic, periodic, true]);
        let spec = FieldSpec { bin: 1.0, ..FieldSpec::default() };
        let grid = Grid::new(&spec, &b).unwrap();
        let mut f = finish(&Accumulator::new(&grid), &grid, [0.0, 1.0]);
        for bin in 0..grid.len() {
            let c = grid.centre(bin);
            let v = u(c[0], c[1]);
            f.count[bin] = 10.0;
            f.vx[bin] = v[0];
            f.vy[bin] = v[1];
            f.speed[bin] = v[0].hypot(v[1]);
        }
        f
    }

    #[test]
    fn uniform_flow_interpolates_exactly_and_gives_straight_even_lines() {
        let f = field(20.0, true, |_, _| [1.0, 0.0]);
        assert_eq!(velocity_at(&f, [3.3, 7.9]), Some([1.0, 0.0]));
        let lines = trace(&f, 2.0);
        assert!(lines.len() >= 9, "{} lines", lines.len());
        for l in &lines {
            let y0 = l[0][0][1];
            for piece in l {
                for p in piece {
                    assert!((p[1] - y0).abs() < 1e-9, "a uniform x flow bends a streamline: {p:?}");
                    assert!((0.0..=20.0).contains(&p[0]));
                }
                // Along the flow.
                assert!(piece.last().unwrap()[0] > piece[0][0]);
            }
        }
        // Evenly spaced: neighbouring lines d_sep apart.
        let mut ys: Vec<f64> = lines.iter().map(|l| l[0][0][1]).collect();
        ys.sort_by(f64::total_cmp);
        for w in ys.windows(2) {
            assert!(w[1] - w[0] >= 1.0 - 1e-9, "lines closer than d_sep/2: {ys:?}");
        }
    }

    #[test]
    fn linear_field_interpolates_exactly_between_centres() {
        let f = field(10.0, false, |x, y| [0.5 * x, -0.25 * y]);
        let u = velocity_at(&f, [4.2, 6.7]).unwrap();
        assert!((u[0] - 2.1).abs() < 1e-12 && (u[1] + 1.675).abs() < 1e-12, "{u:?}");
        assert_eq!(velocity_at(&f, [-0.5, 3.0]), None);
    }

    #[test]
    fn solid_body_rotation_gives_circles() {
        let c = 15.0;
        let f = field(30.0, false, |x, y| [-(y - c), x - c]);
        let lines = trace(&f, 3.0);
        assert!(!lines.is_empty());
        let mut checked = 0;
        for l in &lines {
            let pts: Vec<&[f64; 2]> = l.iter().flatten().collect();
            let r0 = (pts[0][0] - c).hypot(pts[0][1] - c);
            if !(3.0..12.0).contains(&r0) {
                continue;
            }
            for p in &pts {
                let r = (p[0] - c).hypot(p[1] - c);
                assert!((r - r0).abs() < 0.02 * r0 + 0.05, "a streamline of a rotation drifts: {r0} -> {r}");
            }
            checked += 1;
        }
        assert!(checked >= 2, "too few circles checked");
    }

    #[test]
    fn empty_bins_stop_lines_and_still_fluid_has_none() {
        let mut f = field(20.0, true, |_, _| [1.0, 0.0]);
        for bin in 0..f.grid.len() {
            let c = f.grid.centre(bin);
            if (c[0] - 10.0).abs() < 2.0 && (c[1] - 10.0).abs() < 2.0 {
                f.count[bin] = 0.0;
                f.vx[bin] = f64::NAN;
                f.vy[bin] = f64::NAN;
                f.speed[bin] = f64::NAN;
            }
        }
        for l in trace(&f, 2.0) {
            for p in l.iter().flatten() {
                assert!(!((p[0] - 10.0).abs() < 1.5 && (p[1] - 10.0).abs() < 1.5), "a line enters an empty bin: {p:?}");
            }
        }
        let still = field(20.0, true, |_, _| [0.0, 0.0]);
        assert!(trace(&still, 2.0).is_empty());
    }
}
