//! Finishing a window: from the per-bin sums to continuum fields (`Fields`): number density,
//! mass-weighted mean velocity, speed, the kinetic temperature about the bin's own mean
//! velocity, vorticity by finite differences between bins, and the Mach number against the
//! JZG speed of sound at the bin's own state.

use rayon::prelude::*;

use crate::physics::jzg;

use super::grid::Grid;
use super::kind::FieldKind;
use super::sample::{Accumulator, COUNT, MASS, MOMENTUM, MV2, STRIDE};

/// A finished field: scalar layers over the bins of `grid` (flat index [`Grid::index`]),
/// averaged over `samples` samples taken from `time[0]` to `time[1]` (tau).
///
/// `count` and `density` are 0 in a bin no atom visited; every other layer is NaN there (and
/// `temperature`, so `mach`, with fewer than 2 atom-samples). The density is per whole bin
/// volume: a bin cut by a wall or an obstacle reads low.
#[derive(Clone, Debug, PartialEq)]
pub struct Fields {
    pub grid: Grid,
    pub samples: u64,
    /// Start and end of the window, in tau.
    pub time: [f64; 2],
    pub density: Vec<f64>,
    pub vx: Vec<f64>,
    pub vy: Vec<f64>,
    pub vz: Vec<f64>,
    pub speed: Vec<f64>,
    pub temperature: Vec<f64>,
    pub vorticity: Vec<f64>,
    pub mach: Vec<f64>,
    pub count: Vec<f64>,
    /// The share of the bin's atom-samples that carry dye (NaN in an empty bin, and in every
    /// bin when `dye_sampled` is false).
    pub dye: Vec<f64>,
    /// Whether the sums counted dye (every backend's do; a LAMMPS run's rebuilt sums not).
    pub dye_sampled: bool,
}

/// Finishes the window `acc` (sampled on `grid`) that ran from `time[0]` to `time[1]` (tau).
///
/// Per bin with n atom-samples of total mass M, momentum p and sum m|v|^2 over S samples:
/// density n / (S V_bin); u = p / M; T = (sum m|v|^2 - M |u|^2) / (3 (n - 1)) (the mean
/// velocity over the window takes 3 degrees of freedom; clamped at 0 against round-off);
/// speed |u|; omega_z = du_y/dx - du_x/dy ([`derivative`]); Mach |u| / c(rho, T, M / n) with
/// c from [`jzg::sound_speed`]. With no samples at all every layer is NaN and count is 0.
pub fn finish(acc: &Accumulator, grid: &Grid, time: [f64; 2]) -> Fields {
    assert_eq!(acc.bins(), grid.len(), "finishing with another grid than the accumulator's");
    let bins = grid.len();
    let s = acc.samples() as f64;
    let volume = grid.bin_volume();
    let mut f = Fields {
        grid: grid.clone(),
        samples: acc.samples(),
        time,
        density: vec![f64::NAN; bins],
        vx: vec![f64::NAN; bins],
        vy: vec![f64::NAN; bins],
        vz: vec![f64::NAN; bins],
        speed: vec![f64::NAN; bins],
        temperature: vec![f64::NAN; bins],
        vorticity: vec![f64::NAN; bins],
        mach: vec![f64::NAN; bins],
        count: vec![0.0; bins],
        dye: vec![f64::NAN; bins],
        dye_sampled: acc.tagged().is_some(),
    };
    // Every bin on its own, on the rayon pool (a million-atom tank has some 10^5 bins, and the
    // JZG sound speed is the cost): the same values in any order.
    let samples = acc.samples();
    let per_bin: Vec<[f64; 8]> = acc
        .data()
        .par_chunks_exact(STRIDE)
        .map(|rec| {
            let (n, m) = (rec[COUNT], rec[MASS]);
            let mut out = [f64::NAN; 8];
            out[7] = n;
            if samples == 0 {
                return out;
            }
            let density = n / (s * volume);
            out[0] = density;
            if !(n > 0.0 && m > 0.0) {
                return out;
            }
            let u = [rec[MOMENTUM] / m, rec[MOMENTUM + 1] / m, rec[MOMENTUM + 2] / m];
            let u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
            (out[1], out[2], out[3], out[4]) = (u[0], u[1], u[2], u2.sqrt());
            if n >= 2.0 {
                let t = ((rec[MV2] - m * u2) / (3.0 * (n - 1.0))).max(0.0);
                out[5] = t;
                out[6] = u2.sqrt() / jzg::sound_speed(density, t, m / n);
            }
            out
        })
        .collect();
    for (b, v) in per_bin.iter().enumerate() {
        (f.density[b], f.vx[b], f.vy[b], f.vz[b], f.speed[b]) = (v[0], v[1], v[2], v[3], v[4]);
        (f.temperature[b], f.mach[b], f.count[b]) = (v[5], v[6], v[7]);
    }
    if let Some(tagged) = acc.tagged() {
        // Exact counts over exact counts: the fraction a host count of the same atoms gives.
        for (b, t) in tagged.iter().enumerate().filter(|(b, _)| f.count[*b] > 0.0) {
            f.dye[b] = t / f.count[b];
        }
    }
    f.vorticity = (0..bins)
        .into_par_iter()
        .map(|b| {
            let c = grid.coords(b);
            derivative(grid, &f.vy, 0, c) - derivative(grid, &f.vx, 1, c)
        })
        .collect();
    f
}

/// The derivative of `layer` along `axis` at bin `c`: a central difference between the two
/// neighbours (wrapping on periodic axes), else a one-sided difference between the bin and the
/// neighbour it has (at a wall or the grid's edge, or beside an empty bin such as an
/// obstacle's). NaN where the bin itself is empty or has no neighbour along `axis` with data
/// (a single bin on a walled axis). Along a periodic axis of one bin the derivative is 0.
pub fn derivative(grid: &Grid, layer: &[f64], axis: usize, c: [usize; 3]) -> f64 {
    let (n, h) = (grid.n[axis], grid.cell[axis]);
    let at = |i: usize| {
        let mut d = c;
        d[axis] = i;
        layer[grid.index(d)]
    };
    let i = c[axis];
    let here = at(i);
    if here.is_nan() {
        return f64::NAN;
    }
    let (lo, hi) = if grid.periodic[axis] {
        (Some((i + n - 1) % n), Some((i + 1) % n))
    } else {
        (i.checked_sub(1), (i + 1 < n).then_some(i + 1))
    };
    let (lo, hi) = (lo.map(at).filter(|v| !v.is_nan()), hi.map(at).filter(|v| !v.is_nan()));
    match (lo, hi) {
        (Some(l), Some(r)) => (r - l) / (2.0 * h),
        (None, Some(r)) => (r - here) / h,
        (Some(l), None) => (here - l) / h,
        (None, None) => f64::NAN,
    }
}

impl Fields {
    /// The layers these fields have: every one of [`FieldKind::ALL`], and dye where the sums
    /// counted it.
    pub fn kinds(&self) -> impl Iterator<Item = FieldKind> + use<> {
        let dye = self.dye_sampled;
        FieldKind::every().filter(move |k| dye || !FieldKind::OPTIONAL.contains(k))
    }

    /// The layer of `kind`.
    pub fn layer(&self, kind: FieldKind) -> &[f64] {
        match kind {
            FieldKind::Density => &self.density,
            FieldKind::Vx => &self.vx,
            FieldKind::Vy => &self.vy,
            FieldKind::Vz => &self.vz,
            FieldKind::Speed => &self.speed,
            FieldKind::Temperature => &self.temperature,
            FieldKind::Vorticity => &self.vorticity,
            FieldKind::Mach => &self.mach,
            FieldKind::Count => &self.count,
            FieldKind::Dye => &self.dye,
        }
    }

    /// The window's length in tau.
    pub fn span(&self) -> f64 {
        self.time[1] - self.time[0]
    }

    /// The full vorticity vector curl u per bin (x, y, z components): for 3D grids; on a 2D
    /// grid the z derivatives are those of a single layer (0 if z is periodic, else NaN), so
    /// only the z component (the `vorticity` layer) means something there.
    pub fn vorticity_vector(&self) -> [Vec<f64>; 3] {
        let g = &self.grid;
        let d = |layer: &[f64], axis| (0..g.len()).map(|b| derivative(g, layer, axis, g.coords(b))).collect::<Vec<_>>();
        let sub = |a: Vec<f64>, b: Vec<f64>| a.iter().zip(&b).map(|(x, y)| x - y).collect::<Vec<_>>();
        [sub(d(&self.vz, 1), d(&self.vy, 2)), sub(d(&self.vx, 2), d(&self.vz, 0)), sub(d(&self.vy, 0), d(&self.vx, 1))]
    }

    /// A line profile of `kind` along `axis`: per bin index along that axis, the mean of the
    /// layer over the bins across it that hold data (NaN where none does). The mean is plain:
    /// every bin across weighs the same, so a profile of a layer near a partly empty row is
    /// the mean of the bins that have atoms.
    pub fn profile(&self, kind: FieldKind, axis: usize) -> Vec<f64> {
        let g = &self.grid;
        let layer = self.layer(kind);
        let mut sum = vec![0.0; g.n[axis]];
        let mut used = vec![0usize; g.n[axis]];
        for (b, &v) in layer.iter().enumerate() {
            if !v.is_nan() {
                let i = g.coords(b)[axis];
                sum[i] += v;
                used[i] += 1;
            }
        }
        sum.iter().zip(&used).map(|(s, &k)| if k > 0 { s / k as f64 } else { f64::NAN }).collect()
    }
}
