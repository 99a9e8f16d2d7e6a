//! Observables the CPU backend computes from its own state: pair counts for g(r) (through
//! the cell grid; over the whole box or from the centres in a region) and positions
//! published for the renderer. Normalisation lives in `analysis`, shared with the CUDA
//! backend.

use rayon::prelude::*;

use super::cells::CellGrid;
use crate::analysis;
use crate::analysis::{Histogram, RdfCounts, RdfRegion};
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::SimParams;
use crate::physics::real::Real;
use crate::sim::{ColourScalar, PairSearch, SimError, Snapshot};

/// g(r) over `bins` bins to `r_max`, over the whole box or around the centres in `region`.
/// In a periodic box the whole-box g(r) is normalised exactly by the ideal pair count
/// N (N - 1) / 2 per volume; in a tank, by the volume the fluid can reach; over a region, by
/// the centres and the density there (`analysis::rdf`).
pub fn rdf(
    snap: &Snapshot,
    params: &SimParams,
    field: Option<&ObstacleField>,
    bins: usize,
    r_max: f64,
    region: Option<&RdfRegion>,
) -> Result<Histogram, SimError> {
    let b = &snap.sim_box;
    let c = pair_counts(snap, bins, r_max, region, PairSearch::Cells)?;
    let n = snap.atoms.len();
    let volume = if b.fully_periodic() { b.volume() } else { analysis::reachable_volume(b, params, field) };
    analysis::rdf::rdf_from(&c, n, volume, r_max, region).map_err(SimError::Invalid)
}

/// Pair counts for g(r) (see [`RdfCounts`]): through the finest cell grid that reaches
/// `r_max` (all pairs where the box is too small for one), or all pairs when asked. Integer
/// counts of the same distances, so both searches give the same counts exactly.
pub fn pair_counts(
    snap: &Snapshot,
    bins: usize,
    r_max: f64,
    region: Option<&RdfRegion>,
    search: PairSearch,
) -> Result<RdfCounts, SimError> {
    let b = &snap.sim_box;
    analysis::check_rdf_request(b, bins, r_max).map_err(SimError::Invalid)?;
    if let Some(r) = region {
        analysis::rdf::check_rdf_region(b, r).map_err(SimError::Invalid)?;
    }
    let pos = &snap.atoms.positions;
    let n = pos.len();
    // Per atom: 1 when it is a centre. Over the whole box each pair counts once; over a
    // region once for each of its atoms that is a centre (ordered pairs from the centres).
    let weight: Vec<u8> = match region {
        Some(r) => pos.iter().map(|&p| u8::from(r.contains(p))).collect(),
        None => Vec::new(),
    };
    let centres = if region.is_some() { weight.iter().map(|&w| w as usize).sum() } else { n };
    let mut hist = vec![0u64; bins];
    if n >= 2 && centres > 0 {
        let inv_dr = bins as f64 / r_max;
        let r_max_sq = r_max * r_max;
        let count_pair = |h: &mut Vec<u64>, i: usize, j: usize| {
            let w = if weight.is_empty() { 1 } else { u64::from(weight[i] + weight[j]) };
            if w == 0 {
                return;
            }
            let d = b.min_image(pos[i], pos[j]);
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if r2 < r_max_sq {
                let k = (r2.sqrt() * inv_dr) as usize;
                if k < h.len() {
                    h[k] += w;
                }
            }
        };
        let merge = |mut a: Vec<u64>, b: Vec<u64>| {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
            a
        };
        let grid = match search {
            PairSearch::Cells => CellGrid::finest(b, r_max),
            PairSearch::AllPairs => None,
        };
        hist = match grid {
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
    Ok(RdfCounts { counts: hist, centres })
}

/// Per slot: the species, the canonical index and the dye tag (empty: none), for [`publish`].
pub struct SlotTags<'a> {
    pub types: &'a [u32],
    pub ids: &'a [u32],
    pub dye: &'a [u16],
}

/// Writes `[x, y, z, colour]` by canonical index.
pub fn publish<S: Real>(
    pos: &[[S; 4]],
    vel: &[[S; 3]],
    tags: SlotTags<'_>,
    masses: &[f64],
    colour: ColourScalar,
    out: &mut [[f32; 4]],
) -> Result<(), SimError> {
    let SlotTags { types, ids, dye } = tags;
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
            ColourScalar::Dye => dye.get(s).copied().unwrap_or(0) as f64,
        };
        out[ids[s] as usize] = [p[0].f64() as f32, p[1].f64() as f32, p[2].f64() as f32, c as f32];
    }
    Ok(())
}
