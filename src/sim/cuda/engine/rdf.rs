//! g(r) pair counts on the device (`kernels/rdf.cu`): through an analysis cell grid of its
//! own (cells at least r_max wide, so the 27 cells around an atom hold every partner), or all
//! pairs (`hist_pairs`, the reference the tests compare the grid with). Whole box or the
//! centres in a region.
//!
//! Bins atoms into scratch arrays allocated per call; it must not touch the atoms' order,
//! the list's cells or anything the step sequence reads.

use cudarc::driver::{CudaSlice, DevicePtr};

use super::Engine;
use super::arrays::{alloc, download, upload};
use crate::analysis::{RdfCounts, RdfRegion};
use crate::physics::sim_box::SimBox;
use crate::sim::cuda::device::Device;
use crate::sim::cuda::launch::{Launcher, RdfArgs};
use crate::sim::{PairSearch, SimError};

/// The analysis grid's cells per axis: cells at least `r_max` wide (one on an axis shorter
/// than that), coarsened until there are at most about two cells per atom.
pub fn rdf_grid_dims(b: &SimBox, r_max: f64, n: usize) -> [usize; 3] {
    let len = b.length();
    let most = (2 * n).max(64);
    let mut cell = r_max;
    loop {
        let dims: [usize; 3] = std::array::from_fn(|k| ((len[k] / cell).floor() as usize).clamp(1, 1 << 20));
        if dims[0] * dims[1] * dims[2] <= most {
            return dims;
        }
        cell *= 1.26;
    }
}

fn ptr(dev: &Device, s: &CudaSlice<u8>) -> u64 {
    s.device_ptr(&dev.stream).0
}

impl Engine {
    /// Raw g(r) counts (see [`RdfCounts`]) of the current positions; `bins` <= 4096.
    pub fn rdf_counts(
        &mut self,
        dev: &Device,
        bins: usize,
        r_max: f64,
        region: Option<&RdfRegion>,
        search: PairSearch,
    ) -> Result<RdfCounts, SimError> {
        if bins > 4096 {
            return Err(SimError::Invalid(format!("g(r) on the GPU takes at most 4096 bins (got {bins})")));
        }
        let n = self.n;
        let dims = rdf_grid_dims(&self.sim_box, r_max, n);
        let len = self.sim_box.length();
        let mut a = RdfArgs {
            r_max,
            inv_cell: std::array::from_fn(|k| dims[k] as f64 / len[k]),
            dims: dims.map(|d| d as i32),
            n_cells: (dims[0] * dims[1] * dims[2]) as i32,
            bins: bins as i32,
            ..RdfArgs::default()
        };
        if let Some(r) = region {
            (a.lo, a.hi, a.region) = (r.lo, r.hi, 1);
        }
        let hist = alloc(dev, (bins + 1) * 8, "allocating the g(r) histogram")?;
        let mut b = self.bufs;
        b.hist = ptr(dev, &hist);
        let l = Launcher { stream: &dev.stream, module: &self.module, c: &self.consts, b: &b };
        if n >= 2 {
            match search {
                PairSearch::AllPairs => l.hist_pairs(&a)?,
                PairSearch::Cells => {
                    let n_cells = a.n_cells as usize;
                    let what = "allocating the g(r) cells";
                    let cell_of = alloc(dev, n * 4, what)?;
                    let count = alloc(dev, n_cells * 4, what)?;
                    l.rdf_bin(&a, ptr(dev, &cell_of), ptr(dev, &count))?;
                    // The exclusive prefix sum of a few thousand counts, on the host.
                    let raw = download(dev, &Some(count), n_cells * 4, "reading the g(r) cells")?;
                    let mut start = Vec::with_capacity((n_cells + 1) * 4);
                    let mut sum = 0u32;
                    start.extend_from_slice(&sum.to_le_bytes());
                    for c in raw.chunks_exact(4) {
                        sum += u32::from_le_bytes(c.try_into().expect("4 bytes"));
                        start.extend_from_slice(&sum.to_le_bytes());
                    }
                    let cursor = upload(dev, &start[..n_cells * 4], what)?;
                    let start = upload(dev, &start, what)?;
                    let order = alloc(dev, n * 4, what)?;
                    l.rdf_scatter(ptr(dev, &cell_of), ptr(dev, &cursor), ptr(dev, &order))?;
                    l.rdf_cells(&a, ptr(dev, &start), ptr(dev, &order), ptr(dev, &cell_of))?;
                }
            }
        }
        let raw = download(dev, &Some(hist), (bins + 1) * 8, "reading the g(r) histogram")?;
        let mut counts: Vec<u64> =
            raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        let centres = counts.pop().unwrap_or(0) as usize;
        Ok(RdfCounts { counts, centres: if region.is_some() { centres } else { n } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_cells_reach_r_max_and_stay_few() {
        let b = SimBox::new([107.0, 107.0, 107.0], [true; 3]);
        let d = rdf_grid_dims(&b, 4.0, 1 << 20);
        assert_eq!(d, [26; 3]);
        // A tiny r_max is coarsened to about two cells per atom.
        let d = rdf_grid_dims(&b, 0.01, 1000);
        assert!(d[0] * d[1] * d[2] <= 2000 && d.iter().all(|&x| 107.0 / x as f64 >= 0.01));
        // An axis shorter than r_max is one cell.
        assert_eq!(rdf_grid_dims(&SimBox::new([3.0, 20.0, 20.0], [true; 3]), 4.0, 1000)[0], 1);
    }
}
