//! The grid of bins a field is averaged over, derived from a `FieldSpec` and the box: bins
//! that tile the box exactly along x and y (and z for 3D grids), one layer through the slab
//! or the whole depth for the 2D front grid, and the map from a position to its bin.

use crate::physics::sim_box::SimBox;

use super::spec::{FieldError, FieldSpec};

/// A position this many bins beyond a grid's edge still counts as at the edge (round-off;
/// mirrored in `kernels/fields.cu`).
pub const ROUND_OFF_BINS: f64 = 1e-9;

/// The bin edge (sigma) of the thermostat's flow grid ([`Grid::for_thermostat`]).
pub const THERMOSTAT_BIN: f64 = 2.0;

/// A regular grid of `n[0] x n[1] x n[2]` bins from `origin`, each `cell` in size. Bin
/// `(ix, iy, iz)` has the flat index `ix + n[0] * (iy + n[1] * iz)` (x fastest, as VTK orders
/// cells).
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// Bins along x, y, z (nz = 1 for the 2D front grid).
    pub n: [usize; 3],
    /// The low corner of bin (0, 0, 0), in sigma.
    pub origin: [f64; 3],
    /// The bin's edges, in sigma; the z edge of a 2D grid is the slab's (or the box's) depth.
    pub cell: [f64; 3],
    /// Whether the grid wraps along each axis: the box is periodic there and the grid covers
    /// it whole (never along z when a slab cuts the depth).
    pub periodic: [bool; 3],
    /// Whether an axis ends at a wall (a walled box axis the grid spans whole); positions a
    /// little beyond it (an atom pressed into a soft wall) count in the edge bin.
    walled: [bool; 3],
    inv_cell: [f64; 3],
    n_f64: [f64; 3],
}

impl Grid {
    /// The grid of `spec` over box `b`; an error when the bin or the slab does not fit the box.
    pub fn new(spec: &FieldSpec, b: &SimBox) -> Result<Grid, FieldError> {
        spec.validate_geometry(b)?;
        Ok(Grid::unchecked(spec, b))
    }

    /// The grid a thermostat relative to the flow averages the local mean velocity over:
    /// x-y bins of about [`THERMOSTAT_BIN`] through the whole depth, max(1, round(L /
    /// THERMOSTAT_BIN)) per axis, tiling the box exactly. It depends on the box alone (never
    /// on the display's field settings) and exists for any box, even one thinner than a bin.
    pub fn for_thermostat(b: &SimBox) -> Grid {
        let spec = FieldSpec { bin: THERMOSTAT_BIN, slab: None, three_d: false, ..FieldSpec::default() };
        Grid::unchecked(&spec, b)
    }

    /// The grid of `spec` over `b` without the checks of [`Grid::new`] (the bin counts are at
    /// least 1 whatever the bin).
    fn unchecked(spec: &FieldSpec, b: &SimBox) -> Grid {
        let n = spec.bin_counts(b);
        let [z0, z1] = spec.z_range(b);
        let l = b.length();
        let origin = [b.lo[0], b.lo[1], z0];
        let extent = [l[0], l[1], z1 - z0];
        let whole_z = spec.slab.is_none();
        let cell: [f64; 3] = std::array::from_fn(|k| extent[k] / n[k] as f64);
        let spans = [true, true, whole_z];
        Grid {
            n,
            origin,
            cell,
            periodic: std::array::from_fn(|k| spans[k] && b.periodic[k]),
            walled: std::array::from_fn(|k| spans[k] && !b.periodic[k]),
            inv_cell: cell.map(|c| 1.0 / c),
            n_f64: n.map(|v| v as f64),
        }
    }

    /// Whether each axis ends at a wall (see [`Grid::bin_of`]).
    pub fn walled(&self) -> [bool; 3] {
        self.walled
    }

    /// 1 / `cell`: what [`Grid::bin_of`] multiplies by (a device kernel must use the same).
    pub fn inv_cell(&self) -> [f64; 3] {
        self.inv_cell
    }

    /// The number of bins.
    pub fn len(&self) -> usize {
        self.n[0] * self.n[1] * self.n[2]
    }

    /// Never true: a grid has at least one bin.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the grid has more than one layer along z.
    pub fn is_3d(&self) -> bool {
        self.n[2] > 1
    }

    /// The volume of one bin, sigma^3.
    pub fn bin_volume(&self) -> f64 {
        self.cell[0] * self.cell[1] * self.cell[2]
    }

    /// The flat index of bin `(ix, iy, iz)`.
    #[inline]
    pub fn index(&self, c: [usize; 3]) -> usize {
        c[0] + self.n[0] * (c[1] + self.n[1] * c[2])
    }

    /// The bin `(ix, iy, iz)` of a flat index.
    pub fn coords(&self, bin: usize) -> [usize; 3] {
        [bin % self.n[0], (bin / self.n[0]) % self.n[1], bin / (self.n[0] * self.n[1])]
    }

    /// The centre of a bin, in sigma.
    pub fn centre(&self, bin: usize) -> [f64; 3] {
        let c = self.coords(bin);
        std::array::from_fn(|k| self.origin[k] + (c[k] as f64 + 0.5) * self.cell[k])
    }

    /// The bin holding `pos`, or None outside the grid (outside the slab, or not a number).
    /// A position exactly at the high edge (or within round-off beyond either edge) falls in
    /// the edge bin; on periodic axes a position outside the box is wrapped; on walled axes
    /// one up to a bin beyond the wall (an atom pressed into it) counts in the edge bin.
    #[inline]
    pub fn bin_of(&self, pos: [f64; 3]) -> Option<usize> {
        let mut c = [0usize; 3];
        for k in 0..3 {
            let f = (pos[k] - self.origin[k]) * self.inv_cell[k];
            // `f as usize` truncates, which is floor for 0 <= f < n.
            c[k] = if f >= 0.0 && f < self.n_f64[k] { f as usize } else { self.edge(k, f)? };
        }
        Some(self.index(c))
    }

    /// The bin along axis `k` of a fractional coordinate `f` outside `[0, n)`.
    #[cold]
    fn edge(&self, k: usize, f: f64) -> Option<usize> {
        let n = self.n_f64[k];
        let slack = if self.walled[k] { 1.0 } else { ROUND_OFF_BINS };
        if f >= n && f <= n + slack {
            Some(self.n[k] - 1)
        } else if f < 0.0 && f >= -slack {
            Some(0)
        } else if self.periodic[k] && f.is_finite() {
            let i = f.floor().rem_euclid(n);
            // rem_euclid can round up to n itself for a tiny negative remainder.
            Some((i as usize).min(self.n[k] - 1))
        } else {
            None
        }
    }
}
