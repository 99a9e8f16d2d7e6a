//! How wide the neighbour-list build's cells are, shared by the device backends (CUDA and
//! wgpu): both builds take a cell's atoms as one warp's (or workgroup row's) 32 i-atoms, so a
//! cell as wide as the list range (about 19 atoms in a liquid) leaves lanes idle, and a
//! periodic depth shorter than three list ranges is one cell deep (a column), whose pairs take
//! their minimum image along it: it needs only twice the cut-off, not twice the list range,
//! so a thin slab can take any skin.

use crate::physics::params::Algorithm;
use crate::physics::sim_box::SimBox;

/// Atoms a list-build cell should hold: the build takes a cell's atoms as one warp's i-atoms
/// (up to 32 a round), so a cell of ~19 (the list range at liquid density) leaves 13 lanes
/// idle in the appends and flushes, while past 32 a cell takes two rounds over its
/// candidates. Measured on an H200 (CUDA, in.lj, ms a step against cells one range wide):
/// 24.5 atoms 2.4% faster at 1M atoms in single, 1.9% in mixed, 0.4% at 256,000, the same at
/// 32,000 (double 1.5% faster at 1M atoms, 0.5% at 256,000, 0.7% slower at 32,000); 32
/// atoms 5-13% slower.
pub const BUILD_CELL_ATOMS: f64 = 23.5;

/// The list build's cell widths along each axis for `n` atoms in `b`, list range `range` and
/// cut-off `cutoff`: up to 10% wider than the range, for about [`BUILD_CELL_ATOMS`] atoms a
/// cell at the box's mean density (the build's tests drop a wider cell's far candidates). A
/// column axis ([`Algorithm::column_axes`], a thin slab's depth) is one cell deep instead (its width is
/// the box's length there): each cell is a column through the slab whose pairs take their
/// minimum image along it. A periodic axis that wider cells would leave with two keeps
/// range-wide ones (the stencil would reach the other cell in both images).
pub fn list_cell_widths(b: &SimBox, range: f64, cutoff: f64, n: usize) -> [f64; 3] {
    let len = b.length();
    if n == 0 {
        return [range; 3];
    }
    let column = Algorithm::column_axes(b, range, cutoff);
    let across = column.iter().filter(|&&c| !c).count() as i32;
    // The width across giving BUILD_CELL_ATOMS a cell: n / V * w^across * (column depths).
    let depth: f64 = (0..3).filter(|&k| column[k]).map(|k| len[k]).product();
    let volume = len.iter().product::<f64>();
    let width = if across > 0 {
        (BUILD_CELL_ATOMS * volume / (n as f64 * depth)).powf(1.0 / across as f64).clamp(range, 1.1 * range)
    } else {
        range
    };
    std::array::from_fn(|k| {
        if column[k] {
            len[k]
        } else if b.periodic[k] && len[k] < 3.0 * width {
            range
        } else {
            width
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_hold_about_24_atoms_at_most_a_tenth_wider_and_thin_depths_are_columns() {
        // in.lj at a million atoms: about 24.5 atoms a cell, under the 10% cap.
        let side = (1_048_576.0f64 / 0.8442).cbrt();
        let w = list_cell_widths(&SimBox::new([side; 3], [true; 3]), 2.8, 2.5, 1_048_576);
        let atoms = w[0].powi(3) * 0.8442;
        assert!(w.iter().all(|&x| x == w[0]) && (23.0..25.0).contains(&atoms), "{w:?}: {atoms}");
        // A dilute gas: capped at 10% wider.
        let gas = list_cell_widths(&SimBox::new([100.0; 3], [true; 3]), 2.8, 2.5, 10_000);
        assert!(gas.iter().all(|&x| (x - 3.08).abs() < 1e-12), "{gas:?}");
        // The vortex street's slab: columns along z, range-wide across (27 atoms a column).
        let street_box = SimBox::new([862.0, 404.0, 5.6463], [true; 3]);
        let street = list_cell_widths(&street_box, 2.8, 2.5, 1_174_416);
        assert_eq!(street, [2.8, 2.8, 5.6463]);
        // A wider skin: the range passes half the depth, still a column (the cut-off fits).
        assert_eq!(list_cell_widths(&street_box, 3.0, 2.5, 1_174_416), [3.0, 3.0, 5.6463]);
        assert!(Algorithm::lists_fit(&street_box, 3.0, 2.5) && Algorithm::lists_fit(&street_box, 4.0, 2.5));
        // The cut-off past half the depth: no column, and lists do not fit.
        assert_eq!(Algorithm::column_axes(&street_box, 3.0, 2.9), [false; 3]);
        assert!(!Algorithm::lists_fit(&street_box, 3.0, 2.9));
        // Three ranges deep or more: no column; two ranges wide but not three: a column.
        assert_eq!(Algorithm::column_axes(&SimBox::new([40.0, 8.4, 8.3], [true; 3]), 2.8, 2.5), [false, false, true]);
        // Walled axes are never columns.
        assert_eq!(Algorithm::column_axes(&SimBox::new([40.0, 40.0, 5.6], [true, true, false]), 2.8, 2.5), [false; 3]);
        // No atoms: range-wide.
        assert_eq!(list_cell_widths(&SimBox::new([50.0; 3], [true; 3]), 2.8, 2.5, 0), [2.8; 3]);
    }
}
