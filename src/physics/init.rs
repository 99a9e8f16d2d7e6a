//! Initial states: simple cubic and FCC lattices (placed exactly as LAMMPS's `lattice` +
//! `create_atoms` place them), random gas fills without overlaps, and Maxwell-Boltzmann
//! velocities with zero total momentum scaled to an exact temperature.
//!
//! Pure functions from parameters to positions and velocities; no backend state.

use crate::physics::sim_box::SimBox;
use crate::rng::{Sequence, Stream};

/// A Bravais lattice with a cubic basis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LatticeKind {
    /// Simple cubic: one atom per cell (the seed paper's start).
    Sc,
    /// Face-centred cubic: four atoms per cell (LAMMPS `in.lj`).
    Fcc,
}

impl LatticeKind {
    pub fn basis(&self) -> &'static [[f64; 3]] {
        match self {
            LatticeKind::Sc => &[[0.0, 0.0, 0.0]],
            LatticeKind::Fcc => &[[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]],
        }
    }

    /// Lattice constant for reduced number density `density` (LAMMPS `lattice kind density`).
    pub fn constant(&self, density: f64) -> f64 {
        (self.basis().len() as f64 / density).powf(1.0 / 3.0)
    }
}

/// Lattice sites `(i + b) * a + origin` inside `[lo, hi)` (with a round-off tolerance of
/// 1e-9 a at the upper edge, so a region of exactly n cells holds exactly n cells of sites).
pub fn lattice_sites(kind: LatticeKind, density: f64, origin: [f64; 3], lo: [f64; 3], hi: [f64; 3]) -> Vec<[f64; 3]> {
    let a = kind.constant(density);
    let tol = 1e-9 * a;
    let mut lo_cell = [0i64; 3];
    let mut hi_cell = [0i64; 3];
    for k in 0..3 {
        lo_cell[k] = ((lo[k] - origin[k]) / a).floor() as i64 - 1;
        hi_cell[k] = ((hi[k] - origin[k]) / a).ceil() as i64 + 1;
    }
    let mut out = Vec::new();
    for iz in lo_cell[2]..hi_cell[2] {
        for iy in lo_cell[1]..hi_cell[1] {
            for ix in lo_cell[0]..hi_cell[0] {
                for b in kind.basis() {
                    let p = [
                        (ix as f64 + b[0]) * a + origin[0],
                        (iy as f64 + b[1]) * a + origin[1],
                        (iz as f64 + b[2]) * a + origin[2],
                    ];
                    if (0..3).all(|k| p[k] >= lo[k] - tol && p[k] < hi[k] - tol) {
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

/// A periodic box holding exactly `cells` lattice cells of `kind` at `density`, with its
/// atoms: the LAMMPS `lattice` + `region block 0 nx 0 ny 0 nz` + `create_atoms` system.
pub fn lattice_box(kind: LatticeKind, density: f64, cells: [usize; 3]) -> (SimBox, Vec<[f64; 3]>) {
    let a = kind.constant(density);
    let size = [cells[0] as f64 * a, cells[1] as f64 * a, cells[2] as f64 * a];
    let b = SimBox::new(size, [true; 3]);
    let sites = lattice_sites(kind, density, [0.0; 3], b.lo, b.hi);
    (b, sites)
}

/// Up to `count` random positions in `[lo, hi)` at least `min_separation` from each other
/// and from `existing` (minimum image in `sim_box`). Deterministic for a seed.
pub fn gas_positions(
    sim_box: &SimBox,
    lo: [f64; 3],
    hi: [f64; 3],
    count: usize,
    min_separation: f64,
    existing: &[[f64; 3]],
    seed: u64,
) -> Vec<[f64; 3]> {
    let cell = min_separation.max(0.1);
    let len = sim_box.length();
    let dims: [usize; 3] = std::array::from_fn(|k| ((len[k] / cell).floor() as usize).clamp(1, 1024));
    let total = dims[0] * dims[1] * dims[2];
    let mut grid: Vec<Vec<[f64; 3]>> = vec![Vec::new(); total.min(64_000_000)];
    let cell_of = |p: &[f64; 3]| -> [usize; 3] {
        std::array::from_fn(|k| {
            (((p[k] - sim_box.lo[k]) / len[k] * dims[k] as f64).floor().max(0.0) as usize).min(dims[k] - 1)
        })
    };
    let index = |c: [usize; 3]| (c[2] * dims[1] + c[1]) * dims[0] + c[0];
    for p in existing {
        grid[index(cell_of(p))].push(*p);
    }
    let sep_sq = min_separation * min_separation;
    let mut rng = Sequence::new(seed, Stream::GasPlacement, 0, 0);
    let mut out = Vec::with_capacity(count);
    let max_attempts = count.saturating_mul(50).max(1000);
    let mut attempts = 0;
    while out.len() < count && attempts < max_attempts {
        attempts += 1;
        let p: [f64; 3] = std::array::from_fn(|k| lo[k] + rng.uniform() * (hi[k] - lo[k]));
        let c = cell_of(&p);
        let mut ok = true;
        'search: for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                'neighbour: for dx in -1i64..=1 {
                    let d = [dx, dy, dz];
                    let mut n = [0usize; 3];
                    for k in 0..3 {
                        let v = c[k] as i64 + d[k];
                        if v < 0 || v >= dims[k] as i64 {
                            if !sim_box.periodic[k] {
                                // No cell beyond a wall: skip this neighbour only.
                                continue 'neighbour;
                            }
                            n[k] = v.rem_euclid(dims[k] as i64) as usize;
                        } else {
                            n[k] = v as usize;
                        }
                    }
                    for q in &grid[index(n)] {
                        let r = sim_box.min_image(p, *q);
                        if r[0] * r[0] + r[1] * r[1] + r[2] * r[2] < sep_sq {
                            ok = false;
                            break 'search;
                        }
                    }
                }
            }
        }
        if ok {
            grid[index(c)].push(p);
            out.push(p);
        }
    }
    out
}

/// Maxwell-Boltzmann velocities at `temperature` for atoms of `masses`, total momentum
/// removed and then scaled so the kinetic temperature with `dof` degrees of freedom is
/// exactly `temperature`. `first_index` offsets the random streams (for added atoms).
pub fn maxwell_boltzmann(masses: &[f64], temperature: f64, dof: f64, seed: u64, first_index: u32) -> Vec<[f64; 3]> {
    let n = masses.len();
    let mut v: Vec<[f64; 3]> = (0..n)
        .map(|i| {
            let mut s = Sequence::new(seed, Stream::InitialVelocities, first_index.wrapping_add(i as u32), 0);
            let sd = (temperature / masses[i]).sqrt();
            [s.normal() * sd, s.normal() * sd, s.normal() * sd]
        })
        .collect();
    if n == 0 {
        return v;
    }
    let total_mass: f64 = masses.iter().sum();
    let mut p = [0.0; 3];
    for (vi, m) in v.iter().zip(masses) {
        for k in 0..3 {
            p[k] += m * vi[k];
        }
    }
    for vi in v.iter_mut() {
        for k in 0..3 {
            vi[k] -= p[k] / total_mass;
        }
    }
    let twice_ke: f64 = v.iter().zip(masses).map(|(vi, m)| m * (vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2])).sum();
    if twice_ke > 0.0 && dof > 0.0 {
        let scale = (temperature * dof / twice_ke).sqrt();
        for vi in v.iter_mut() {
            for x in vi.iter_mut() {
                *x *= scale;
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fcc_box_has_four_atoms_per_cell_at_the_right_density() {
        let (b, sites) = lattice_box(LatticeKind::Fcc, 0.8442, [10, 10, 10]);
        assert_eq!(sites.len(), 4000);
        assert!((sites.len() as f64 / b.volume() - 0.8442).abs() < 1e-12);
        let (_, sc) = lattice_box(LatticeKind::Sc, 0.8, [16, 16, 16]);
        assert_eq!(sc.len(), 4096);
    }

    #[test]
    fn mb_velocities_have_zero_momentum_and_exact_temperature() {
        let masses = vec![1.0; 500];
        let v = maxwell_boltzmann(&masses, 1.5, 3.0 * 500.0 - 3.0, 42, 0);
        let p: [f64; 3] = std::array::from_fn(|k| v.iter().map(|x| x[k]).sum());
        assert!(p.iter().all(|x| x.abs() < 1e-10));
        let t = v.iter().map(|x| x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sum::<f64>() / 1497.0;
        assert!((t - 1.5).abs() < 1e-12);
    }

    #[test]
    fn gas_respects_separation_next_to_walls() {
        let b = SimBox::new([8.0, 8.0, 8.0], [false, false, true]);
        let pts = gas_positions(&b, b.lo, b.hi, 2000, 0.9, &[], 5);
        for i in 0..pts.len() {
            for j in 0..i {
                let d = b.min_image(pts[i], pts[j]);
                assert!(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= 0.81, "{:?} {:?}", pts[i], pts[j]);
            }
        }
    }

    #[test]
    fn gas_respects_separation() {
        let b = SimBox::new([10.0, 10.0, 10.0], [true; 3]);
        let pts = gas_positions(&b, b.lo, b.hi, 200, 1.0, &[], 3);
        assert_eq!(pts.len(), 200);
        for i in 0..pts.len() {
            for j in 0..i {
                let d = b.min_image(pts[i], pts[j]);
                assert!(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= 1.0);
            }
        }
    }
}
