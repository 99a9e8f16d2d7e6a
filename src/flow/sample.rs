//! The accumulators a window of samples adds into: per bin the atom-samples, mass, momentum
//! and twice the kinetic energy, in one flat `Vec<f64>` a CUDA kernel can mirror with atomics
//! into one device array; and the parallel CPU sampler, whose result has the same bits on any
//! number of threads. Beside them, the dye channel: the tagged atom-samples per bin (counted
//! on the CPU by [`Accumulator::sample_dye`], on a device by its own sampler and brought in
//! by [`Accumulator::from_raw_dye`]; sums made without one, a LAMMPS run's, carry none).

use rayon::prelude::*;

use super::grid::Grid;
use super::spec::FieldError;

/// Values per bin in [`Accumulator::data`]: `[count, mass, px, py, pz, mv2]`.
pub const STRIDE: usize = 6;
/// Offset of the number of atom-samples in a bin's record.
pub const COUNT: usize = 0;
/// Offset of the summed mass (argon masses).
pub const MASS: usize = 1;
/// Offset of the summed momentum's x component (y and z follow): sum m v.
pub const MOMENTUM: usize = 2;
/// Offset of the summed m |v|^2 (twice the kinetic energy).
pub const MV2: usize = 5;

/// Atoms per chunk the sampler aims for; the chunk count depends only on the number of atoms
/// and bins, never on the thread count, so the sums are always added in the same order.
const ATOMS_PER_CHUNK: usize = 32_768;
/// Enough chunks to keep 32 threads busy; more would cost more to reduce than they save.
const MAX_CHUNKS: usize = 32;
/// Per-chunk accumulators may take this much memory at most (a large 3D grid gets fewer
/// chunks, so less parallelism, rather than gigabytes of scratch).
const SCRATCH_BYTES: usize = 64 << 20;
/// Bins per task when the chunks are reduced into the window's sums.
const REDUCE_BINS: usize = 4096;

/// Sums over a window of samples, per bin, in a flat array of [`STRIDE`] values a bin, plus the
/// number of samples taken. Bins follow [`Grid::index`].
#[derive(Clone, Debug, PartialEq)]
pub struct Accumulator {
    data: Vec<f64>,
    samples: u64,
    bins: usize,
    /// Per-chunk sums of one sample, kept between calls so sampling allocates nothing.
    scratch: Vec<f64>,
    /// Tagged (dyed) atom-samples per bin; None: these sums carry no dye channel (a LAMMPS
    /// run's rebuilt sums).
    tagged: Option<Vec<f64>>,
}

impl Accumulator {
    /// Empty sums for `grid`.
    pub fn new(grid: &Grid) -> Self {
        Accumulator {
            data: vec![0.0; grid.len() * STRIDE],
            samples: 0,
            bins: grid.len(),
            scratch: Vec::new(),
            tagged: Some(vec![0.0; grid.len()]),
        }
    }

    /// Sums made elsewhere (a device array copied back): `data` must hold [`STRIDE`] values
    /// for each bin of `grid`.
    pub fn from_raw(grid: &Grid, data: Vec<f64>, samples: u64) -> Result<Self, FieldError> {
        super::spec::check(
            data.len() == grid.len() * STRIDE,
            "data",
            data.len(),
            format!("the grid has {} bins, so the sums must hold {} values", grid.len(), grid.len() * STRIDE),
        )?;
        Ok(Accumulator { data, samples, bins: grid.len(), scratch: Vec::new(), tagged: None })
    }

    /// As [`Accumulator::from_raw`], with the dye channel counted beside the sums: `tagged`
    /// holds the tagged atom-samples of each bin of `grid` (a device's sampler).
    pub fn from_raw_dye(grid: &Grid, data: Vec<f64>, tagged: Vec<f64>, samples: u64) -> Result<Self, FieldError> {
        super::spec::check(
            tagged.len() == grid.len(),
            "tagged",
            tagged.len(),
            format!("the grid has {} bins, so the dye channel must hold {} counts", grid.len(), grid.len()),
        )?;
        Ok(Accumulator { tagged: Some(tagged), ..Self::from_raw(grid, data, samples)? })
    }

    /// The sums, [`STRIDE`] values a bin.
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// The tagged atom-samples per bin, where these sums count them.
    pub fn tagged(&self) -> Option<&[f64]> {
        self.tagged.as_deref()
    }

    /// The number of samples added.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The number of bins.
    pub fn bins(&self) -> usize {
        self.bins
    }

    /// Forgets every sample (keeps the memory).
    pub fn reset(&mut self) {
        self.data.fill(0.0);
        self.samples = 0;
        if let Some(t) = &mut self.tagged {
            t.fill(0.0);
        }
    }

    /// Adds another window's sums (same grid) to these.
    ///
    /// # Panics
    /// If the two were made for grids with different numbers of bins.
    pub fn merge(&mut self, other: &Accumulator) {
        assert_eq!(self.bins, other.bins, "merging accumulators of different grids");
        for (a, b) in self.data.iter_mut().zip(&other.data) {
            *a += b;
        }
        self.samples += other.samples;
        match (&mut self.tagged, &other.tagged) {
            (Some(a), Some(b)) => a.iter_mut().zip(b).for_each(|(a, b)| *a += b),
            _ => self.tagged = None,
        }
    }

    /// Adds one sample of every atom inside `grid`: atom `i` at `positions[i]` with
    /// `velocities[i]` and mass `masses_by_type[types[i]]`. See [`Accumulator::sample_with`].
    ///
    /// # Panics
    /// If the slices differ in length, a type has no mass, or `grid` is not this accumulator's.
    pub fn sample(
        &mut self,
        grid: &Grid,
        positions: &[[f64; 3]],
        velocities: &[[f64; 3]],
        masses_by_type: &[f64],
        types: &[u32],
    ) {
        let n = positions.len();
        assert!(velocities.len() == n && types.len() == n, "positions, velocities and types differ in length");
        self.sample_with(grid, n, |i| (positions[i], velocities[i], masses_by_type[types[i] as usize]));
    }

    /// Adds one sample of `n` atoms, atom `i` given by `atom(i)` as (position, velocity, mass),
    /// so a backend samples its own arrays in place. Runs on the current rayon pool in chunks of
    /// atoms fixed by the atom and bin counts, each into its own scratch sums, which are then
    /// added in chunk order: the same input gives the same bits on any thread count. Allocates
    /// only on the first call (or when the atoms outgrow the scratch).
    ///
    /// # Panics
    /// If `grid` is not this accumulator's.
    pub fn sample_with(&mut self, grid: &Grid, n: usize, atom: impl Fn(usize) -> ([f64; 3], [f64; 3], f64) + Sync) {
        assert_eq!(grid.len(), self.bins, "sampling with another grid than the accumulator's");
        self.samples += 1;
        let record = self.bins * STRIDE;
        let chunks = chunk_count(n, self.bins);
        let per_chunk = n.div_ceil(chunks).max(1);
        let add = |sums: &mut [f64], range: std::ops::Range<usize>| {
            for i in range {
                let (p, v, m) = atom(i);
                let Some(b) = grid.bin_of(p) else { continue };
                let s = &mut sums[b * STRIDE..b * STRIDE + STRIDE];
                s[COUNT] += 1.0;
                s[MASS] += m;
                s[MOMENTUM] += m * v[0];
                s[MOMENTUM + 1] += m * v[1];
                s[MOMENTUM + 2] += m * v[2];
                s[MV2] += m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            }
        };
        if chunks == 1 {
            add(&mut self.data, 0..n);
            return;
        }
        if self.scratch.len() < chunks * record {
            self.scratch.resize(chunks * record, 0.0);
        }
        let scratch = &mut self.scratch[..chunks * record];
        scratch.par_chunks_mut(record).enumerate().for_each(|(c, sums)| {
            sums.fill(0.0);
            add(sums, (c * per_chunk).min(n)..((c + 1) * per_chunk).min(n));
        });
        let scratch = &*scratch;
        self.data.par_chunks_mut(REDUCE_BINS * STRIDE).enumerate().for_each(|(t, out)| {
            let start = t * REDUCE_BINS * STRIDE;
            for c in 0..chunks {
                let part = &scratch[c * record + start..c * record + start + out.len()];
                for (o, p) in out.iter_mut().zip(part) {
                    *o += p;
                }
            }
        });
    }
}

impl Accumulator {
    /// Adds the dye channel of the sample [`Accumulator::sample_with`] just took: each atom
    /// `i` with a tag (`dye[i] != 0`; `dye` empty: none) counted in the bin of `position(i)`.
    /// Integer counts, so the order does not matter; only tagged atoms are visited.
    pub fn sample_dye(&mut self, grid: &Grid, dye: &[crate::physics::dye::Dye], position: impl Fn(usize) -> [f64; 3]) {
        let tagged = self.tagged.get_or_insert_with(|| vec![0.0; grid.len()]);
        for (i, _) in dye.iter().enumerate().filter(|(_, d)| **d != 0) {
            if let Some(b) = grid.bin_of(position(i)) {
                tagged[b] += 1.0;
            }
        }
    }
}

/// Chunks of atoms for one sample: about [`ATOMS_PER_CHUNK`] each, at most [`MAX_CHUNKS`],
/// and no more than [`SCRATCH_BYTES`] of per-chunk sums.
pub(super) fn chunk_count(atoms: usize, bins: usize) -> usize {
    let by_atoms = atoms.div_ceil(ATOMS_PER_CHUNK).clamp(1, MAX_CHUNKS);
    let by_memory = (SCRATCH_BYTES / (bins.max(1) * STRIDE * std::mem::size_of::<f64>())).max(1);
    by_atoms.min(by_memory)
}
