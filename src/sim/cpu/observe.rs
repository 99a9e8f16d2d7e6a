//! Observables the CPU backend computes from its own state: pair counts for g(r) (through
//! the cell grid) and positions published for the renderer. Normalisation lives in
//! `analysis`, shared with the CUDA backend.

use rayon::prelude::*;

use super::cells::CellGrid;
use crate::analysis;
use crate::analysis::Histogram;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::SimParams;
use crate::physics::real::Real;
use crate::sim::{ColourScalar, SimError, Snapshot};

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
    analysis::check_rdf_request(b, bins, r_max).map_err(SimError::Invalid)?;
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
    let volume = if b.fully_periodic() { b.volume() } else { analysis::reachable_volume(b, params, field) };
    Ok(analysis::rdf_from_counts(&hist, n, volume, r_max))
}

/// Writes `[x, y, z, colour]` by canonical index.
pub fn publish<S: Real>(
    pos: &[[S; 4]],
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
