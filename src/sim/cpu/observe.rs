//! Analysis and edits on host-side state for the CPU backend: g(r), speed histogram,
//! density profile, publishing positions for the renderer, removing atoms, and resolving
//! atoms caught inside newly placed obstacles.

use rayon::prelude::*;

use super::cells::CellGrid;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimBox, SimParams};
use crate::physics::real::Real;
use crate::sim::{AtomSelection, AtomState, CaughtAtoms, ColourScalar, Histogram, SimError, Snapshot};

/// Distance from a wall or obstacle surface that atoms effectively cannot reach (in units of
/// the wall's sigma): where the repulsive 9-3 wall is about 1.5 epsilon high.
const EXCLUDED_LAYER: f64 = 0.7;

/// The volume the fluid can reach: the box minus the excluded layer at each wall, times the
/// fraction of the x-y face not inside (or too close to) an obstacle.
pub fn reachable_volume(b: &SimBox, params: &SimParams, field: Option<&ObstacleField>) -> f64 {
    let len = b.length();
    let mut v = 1.0;
    for k in 0..3 {
        let l = if b.periodic[k] { len[k] } else { (len[k] - 2.0 * EXCLUDED_LAYER * params.wall.sigma).max(0.0) };
        v *= l;
    }
    if let Some(f) = field {
        v *= f.free_fraction(EXCLUDED_LAYER * params.obstacle.sigma);
    }
    v
}

/// g(r) over `bins` bins to `r_max`. In a periodic box it is normalised exactly by the ideal
/// pair count N (N - 1) / 2 per volume; in a tank, by the volume the fluid can reach.
pub fn rdf(
    snap: &Snapshot,
    params: &SimParams,
    field: Option<&ObstacleField>,
    bins: usize,
    r_max: f64,
) -> Result<Histogram, SimError> {
    let b = &snap.sim_box;
    if bins == 0 || bins > 100_000 || !(r_max.is_finite() && r_max > 0.0) {
        return Err(SimError::Invalid(format!(
            "g(r) needs 1 to 100000 bins and a positive r_max (got {bins} bins, r_max {r_max})"
        )));
    }
    let len = b.length();
    for k in 0..3 {
        if b.periodic[k] && r_max > 0.5 * len[k] {
            return Err(SimError::Invalid(format!(
                "g(r) r_max {r_max} is more than half the periodic box along {} ({}); use at most {}",
                ["x", "y", "z"][k],
                len[k],
                0.5 * len[k]
            )));
        }
    }
    let pos = &snap.atoms.positions;
    let n = pos.len();
    let mut hist = vec![0u64; bins];
    if n >= 2 {
        let inv_dr = bins as f64 / r_max;
        let r_max_sq = r_max * r_max;
        let count_pair = |h: &mut Vec<u64>, i: usize, j: usize| {
            let d = b.min_image(pos[i], pos[j]);
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if r2 < r_max_sq {
                let k = (r2.sqrt() * inv_dr) as usize;
                if k < h.len() {
                    h[k] += 1;
                }
            }
        };
        let merge = |mut a: Vec<u64>, b: Vec<u64>| {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
            a
        };
        hist = match CellGrid::finest(b, r_max) {
            Some(mut g) => {
                g.bin(pos);
                let g = &g;
                (0..g.n_cells())
                    .into_par_iter()
                    .fold(
                        || vec![0u64; bins],
                        |mut h, c| {
                            let mut rows = Vec::new();
                            g.row_ranges(g.coords_of(c), true, &mut rows);
                            let own = &g.order[g.range(c)];
                            for (a, &i) in own.iter().enumerate() {
                                for &j in &own[a + 1..] {
                                    count_pair(&mut h, i as usize, j as usize);
                                }
                                for r in &rows {
                                    for &j in &g.order[r.clone()] {
                                        count_pair(&mut h, i as usize, j as usize);
                                    }
                                }
                            }
                            h
                        },
                    )
                    .reduce(|| vec![0u64; bins], merge)
            }
            None => (0..n)
                .into_par_iter()
                .fold(
                    || vec![0u64; bins],
                    |mut h, i| {
                        for j in i + 1..n {
                            count_pair(&mut h, i, j);
                        }
                        h
                    },
                )
                .reduce(|| vec![0u64; bins], merge),
        };
    }
    let volume = if b.fully_periodic() { b.volume() } else { reachable_volume(b, params, field) };
    let pairs = n as f64 * (n as f64 - 1.0) / 2.0;
    let dr = r_max / bins as f64;
    let values = hist
        .iter()
        .enumerate()
        .map(|(k, &c)| {
            let (r0, r1) = (k as f64 * dr, (k + 1) as f64 * dr);
            let shell = 4.0 / 3.0 * std::f64::consts::PI * (r1.powi(3) - r0.powi(3));
            let ideal = pairs / volume * shell;
            if ideal > 0.0 { c as f64 / ideal } else { 0.0 }
        })
        .collect();
    Ok(Histogram { lo: 0.0, hi: r_max, values })
}

/// Probability density of the speed (integrates to one over all speeds).
pub fn speed_histogram(atoms: &AtomState, bins: usize, v_max: f64) -> Result<Histogram, SimError> {
    if bins == 0 || bins > 100_000 || !(v_max.is_finite() && v_max > 0.0) {
        return Err(SimError::Invalid(format!(
            "speed histogram needs 1 to 100000 bins and a positive v_max (got {bins}, {v_max})"
        )));
    }
    let mut counts = vec![0u64; bins];
    for v in &atoms.velocities {
        let s = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        let k = (s / v_max * bins as f64) as usize;
        if k < bins {
            counts[k] += 1;
        }
    }
    let norm = atoms.len().max(1) as f64 * v_max / bins as f64;
    Ok(Histogram { lo: 0.0, hi: v_max, values: counts.iter().map(|&c| c as f64 / norm).collect() })
}

/// Number density along y in `bins` slabs over the box height.
pub fn density_profile(snap: &Snapshot, bins: usize) -> Result<Histogram, SimError> {
    if bins == 0 || bins > 100_000 {
        return Err(SimError::Invalid(format!("density profile needs 1 to 100000 bins (got {bins})")));
    }
    let b = &snap.sim_box;
    let len = b.length();
    let mut counts = vec![0u64; bins];
    for p in &snap.atoms.positions {
        let u = (p[1] - b.lo[1]) / len[1];
        let k = ((u * bins as f64).floor().max(0.0) as usize).min(bins - 1);
        counts[k] += 1;
    }
    let slab = len[0] * len[2] * len[1] / bins as f64;
    Ok(Histogram { lo: b.lo[1], hi: b.hi[1], values: counts.iter().map(|&c| c as f64 / slab).collect() })
}

/// Writes `[x, y, z, colour]` by canonical index.
pub fn publish<S: Real>(
    pos: &[[S; 3]],
    vel: &[[S; 3]],
    types: &[u32],
    ids: &[u32],
    masses: &[f64],
    colour: ColourScalar,
    out: &mut [[f32; 4]],
) -> Result<(), SimError> {
    if out.len() < pos.len() {
        return Err(SimError::Invalid(format!("position buffer holds {} atoms, need {}", out.len(), pos.len())));
    }
    for s in 0..pos.len() {
        let p = pos[s];
        let v = [vel[s][0].f64(), vel[s][1].f64(), vel[s][2].f64()];
        let v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        let c = match colour {
            ColourScalar::Speed => v2.sqrt(),
            ColourScalar::KineticEnergy => 0.5 * masses[types[s] as usize] * v2,
            ColourScalar::Height => p[1].f64(),
            ColourScalar::Species => types[s] as f64,
        };
        out[ids[s] as usize] = [p[0].f64() as f32, p[1].f64() as f32, p[2].f64() as f32, c as f32];
    }
    Ok(())
}

/// Removes the selected atoms; returns how many.
pub fn remove(atoms: &mut AtomState, which: &AtomSelection) -> usize {
    let n = atoms.len();
    let mut keep = vec![true; n];
    match which {
        AtomSelection::Indices(ix) => {
            for &i in ix {
                if i < n {
                    keep[i] = false;
                }
            }
        }
        AtomSelection::Disc { centre, radius } => {
            for (i, p) in atoms.positions.iter().enumerate() {
                let (dx, dy) = (p[0] - centre[0], p[1] - centre[1]);
                if dx * dx + dy * dy <= radius * radius {
                    keep[i] = false;
                }
            }
        }
    }
    retain(atoms, &keep)
}

fn retain(atoms: &mut AtomState, keep: &[bool]) -> usize {
    let before = atoms.len();
    let mut k = 0;
    for i in 0..before {
        if keep[i] {
            atoms.positions[k] = atoms.positions[i];
            atoms.velocities[k] = atoms.velocities[i];
            atoms.types[k] = atoms.types[i];
            k += 1;
        }
    }
    atoms.positions.truncate(k);
    atoms.velocities.truncate(k);
    atoms.types.truncate(k);
    before - k
}

/// Atoms closer to an obstacle surface than the wall's cap distance (or inside) are removed
/// or moved out along the distance gradient to the potential's cutoff. Returns how many.
pub fn resolve_caught(atoms: &mut AtomState, field: &ObstacleField, params: &SimParams, mode: CaughtAtoms) -> usize {
    let caught_below = 0.5 * params.obstacle.sigma;
    let target = params.obstacle.cutoff.max(caught_below);
    let caught: Vec<bool> = atoms.positions.iter().map(|p| field.sample(p[0], p[1]).distance < caught_below).collect();
    let count = caught.iter().filter(|&&c| c).count();
    match mode {
        CaughtAtoms::Remove => {
            let keep: Vec<bool> = caught.iter().map(|c| !c).collect();
            retain(atoms, &keep);
        }
        CaughtAtoms::PushOut => {
            for (i, c) in caught.iter().enumerate() {
                if !c {
                    continue;
                }
                let p = &mut atoms.positions[i];
                for _ in 0..50 {
                    let s = field.sample(p[0], p[1]);
                    if s.distance >= target {
                        break;
                    }
                    let g = (s.gradient[0].powi(2) + s.gradient[1].powi(2)).sqrt();
                    if g < 1e-9 {
                        break;
                    }
                    let step = (target - s.distance).max(field.cell[0].min(field.cell[1])) / g;
                    p[0] += s.gradient[0] / g * step;
                    p[1] += s.gradient[1] / g * step;
                }
                atoms.velocities[i] = [0.0; 3];
            }
        }
    }
    count
}
