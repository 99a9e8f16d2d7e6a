//! The local mean flow a thermostat relative to the flow removes (a profile-unbiased
//! thermostat, Evans & Morriss; LAMMPS's `compute temp/profile`): per bin of
//! [`Grid::for_thermostat`], the mass M_b and momentum P_b of its atoms and the mean velocity
//! u_b = P_b / M_b; the kinetic energy of the motion relative to it, its degrees of freedom,
//! and the rescale v <- u_b + lambda (v - u_b). The CPU backend calls it as is; the CUDA
//! kernels (`kernels/flow_profile.cu`) mirror the same arithmetic.
//!
//! Owns the arithmetic only: no thermostat factor (the backends compute lambda exactly as for
//! the plain thermostat, from the relative kinetic energy and degrees of freedom), no state
//! beyond the grid and its scratch sums.

use super::grid::Grid;
use super::sample::{Accumulator, COUNT, MASS, MOMENTUM, STRIDE};
use crate::physics::sim_box::SimBox;

/// The per-bin mean flow of one configuration, and what the thermostat needs of it.
#[derive(Clone, Debug)]
pub struct FlowProfile {
    grid: Grid,
    acc: Accumulator,
    /// u_b per bin (zero for an empty bin).
    mean: Vec<[f64; 3]>,
    /// sum over bins of |P_b|^2 / M_b from the last [`FlowProfile::measure`].
    flow_twice_ke: f64,
    occupied: usize,
}

impl FlowProfile {
    /// The profile over box `b` ([`Grid::for_thermostat`]).
    pub fn new(b: &SimBox) -> FlowProfile {
        let grid = Grid::for_thermostat(b);
        let acc = Accumulator::new(&grid);
        let mean = vec![[0.0; 3]; grid.len()];
        FlowProfile { grid, acc, mean, flow_twice_ke: 0.0, occupied: 0 }
    }

    /// Whether this profile's grid is the one box `b` gives (a box that changed needs a new one).
    pub fn fits(&self, b: &SimBox) -> bool {
        self.grid == Grid::for_thermostat(b)
    }

    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Sums the bins of `n` atoms, atom `i` given by `atom(i)` as (position, velocity, mass),
    /// on the current rayon pool with the deterministic chunk order of
    /// [`Accumulator::sample_with`]; then the means, sum |P_b|^2 / M_b and the occupied bins.
    /// An atom outside the grid (only a position that is not a number) is left out, as the
    /// device kernel leaves it out.
    pub fn measure(&mut self, n: usize, atom: impl Fn(usize) -> ([f64; 3], [f64; 3], f64) + Sync) {
        self.acc.reset();
        self.acc.sample_with(&self.grid, n, atom);
        let (mut flow, mut occupied) = (0.0, 0);
        for (s, u) in self.acc.data().chunks_exact(STRIDE).zip(self.mean.iter_mut()) {
            let m = s[MASS];
            if s[COUNT] > 0.0 && m > 0.0 {
                let p = [s[MOMENTUM], s[MOMENTUM + 1], s[MOMENTUM + 2]];
                *u = p.map(|x| x / m);
                flow += (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) / m;
                occupied += 1;
            } else {
                *u = [0.0; 3];
            }
        }
        self.flow_twice_ke = flow;
        self.occupied = occupied;
    }

    /// The bins holding at least one atom at the last [`FlowProfile::measure`].
    pub fn occupied(&self) -> usize {
        self.occupied
    }

    /// The twice kinetic energy of the mean flow, sum_b |P_b|^2 / M_b.
    pub fn flow_twice_ke(&self) -> f64 {
        self.flow_twice_ke
    }

    /// The twice kinetic energy relative to the flow from the total `twice_ke` = sum m v^2:
    /// sum_i m_i |v_i - u_b(i)|^2 = sum m v^2 - sum_b |P_b|^2 / M_b.
    pub fn relative_twice_ke(&self, twice_ke: f64) -> f64 {
        twice_ke - self.flow_twice_ke
    }

    /// The mean velocity u_b of bin `b` (zero for an empty bin).
    pub fn mean(&self, b: usize) -> [f64; 3] {
        self.mean[b]
    }

    /// The velocity `v` of an atom at `pos` rescaled about its bin's mean:
    /// u_b + lambda (v - u_b); `v` itself outside the grid.
    #[inline]
    pub fn rescale(&self, pos: [f64; 3], v: [f64; 3], lambda: f64) -> [f64; 3] {
        match self.grid.bin_of(pos) {
            Some(b) => {
                let u = self.mean[b];
                std::array::from_fn(|k| u[k] + lambda * (v[k] - u[k]))
            }
            None => v,
        }
    }
}

/// Degrees of freedom of the motion relative to the flow of `n_atoms` atoms in `occupied`
/// bins: 3 N - 3 N_occupied (at least 1).
///
/// Each occupied bin's mean velocity fixes three degrees of freedom (the profile-unbiased
/// thermostat of Evans & Morriss), and the total momentum is the sum of the bins', so the
/// usual constraint on it is not subtracted again; an empty bin removes nothing. LAMMPS's
/// `compute temp/profile` (its `dof_compute`) subtracts only the usual 3 (`extra/dof`) and
/// the fixes' constraints, not the bins, so its relative temperature reads lower by the
/// factor (3 N - 3 N_occupied) / (3 N - 3); we do not follow it there, since its thermostat
/// then holds the thermal motion that much hotter than the target (the LAMMPS export lists
/// this among its approximate mappings).
pub fn relative_dof(n_atoms: usize, occupied: usize) -> f64 {
    (3 * n_atoms).saturating_sub(3 * occupied).max(1) as f64
}
