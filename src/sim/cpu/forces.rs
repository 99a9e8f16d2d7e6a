//! Pair forces on the CPU for the four algorithms, parallel over rayon's threads:
//! all-pairs plain (every row streams all atoms), all-pairs tiled (L1-sized tiles of
//! partners reused across a block of rows), cell list (27 cells, both partners computed
//! separately), and neighbour list (half list, Newton's third law into per-thread buffers).
//! All share the inner loops of `kernels`, so they agree to round-off.

use rayon::prelude::*;

use super::cells::CellGrid;
use super::kernels::{EnergyVirial, MinImage, full_contiguous, half_list};
use super::neighbors::{ListChunk, NeighborList};
use super::simd::multiversion;
use crate::physics::lj::PairCoeffs;
use crate::physics::real::Real;

/// Rows per parallel work item in the all-pairs and cell loops.
const ROW_CHUNK: usize = 64;
/// Partners per tile in the tiled all-pairs loop (32 KiB of f64 positions).
pub const TILE: usize = 1024;

#[inline(always)]
fn rows_body<F: Real, A: Real, C: PairCoeffs<F>, const M: u8>(
    first: usize,
    out: &mut [[F; 4]],
    pos: &[[F; 4]],
    tile: usize,
    coeffs: &C,
    img: &MinImage<F>,
) -> EnergyVirial<A> {
    let mut ev = EnergyVirial::default();
    for o in out.iter_mut() {
        *o = [F::zero(); 4];
    }
    for part in pos.chunks(tile.max(1)) {
        for (k, o) in out.iter_mut().enumerate() {
            let f = full_contiguous::<F, A, C, M>(pos[first + k], part, coeffs, img, &mut ev);
            o[0] += f[0];
            o[1] += f[1];
            o[2] += f[2];
        }
    }
    ev
}

multiversion!(fn rows<F: Real, A: Real, C: PairCoeffs<F>; const M: u8>(
    first: usize, out: &mut [[F; 4]], pos: &[[F; 4]], tile: usize, coeffs: &C, img: &MinImage<F>
) -> EnergyVirial<A> = rows_body);

/// All pairs. `tile = None` streams every partner for each row (plain); `Some(t)` walks the
/// partners in tiles of `t` shared by a block of rows (cache-blocked).
pub fn all_pairs<F: Real, A: Real, C: PairCoeffs<F>, const M: u8>(
    pos: &[[F; 4]],
    tile: Option<usize>,
    coeffs: &C,
    img: &MinImage<F>,
    force: &mut [[F; 4]],
) -> EnergyVirial<A> {
    let tile = tile.unwrap_or(pos.len());
    force
        .par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .map(|(c, out)| rows::<F, A, C, M>(c * ROW_CHUNK, out, pos, tile, coeffs, img))
        .collect::<Vec<_>>()
        .into_iter()
        .fold(EnergyVirial::default(), |mut a, b| {
            a.add(b);
            a
        })
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn cells_body<F: Real, A: Real, C: PairCoeffs<F>, const M: u8>(
    first: usize,
    out: &mut [[F; 4]],
    sorted: &[[F; 4]],
    sorted_cell: &[u32],
    grid: &CellGrid,
    coeffs: &C,
    img: &MinImage<F>,
) -> EnergyVirial<A> {
    let mut ev = EnergyVirial::default();
    let mut rows = Vec::with_capacity(32);
    let mut last_cell = usize::MAX;
    for (k, o) in out.iter_mut().enumerate() {
        let s = first + k;
        let c = sorted_cell[s] as usize;
        if c != last_cell {
            rows.clear();
            grid.row_ranges(grid.coords_of(c), false, &mut rows);
            last_cell = c;
        }
        let mut f = [F::zero(); 4];
        for r in &rows {
            let g = full_contiguous::<F, A, C, M>(sorted[s], &sorted[r.clone()], coeffs, img, &mut ev);
            f[0] += g[0];
            f[1] += g[1];
            f[2] += g[2];
        }
        *o = f;
    }
    ev
}

multiversion!(fn cells_rows<F: Real, A: Real, C: PairCoeffs<F>; const M: u8>(
    first: usize, out: &mut [[F; 4]], sorted: &[[F; 4]], sorted_cell: &[u32], grid: &CellGrid,
    coeffs: &C, img: &MinImage<F>
) -> EnergyVirial<A> = cells_body);

/// Scratch of the cell-list algorithm, kept between steps.
#[derive(Default)]
pub struct CellScratch<F> {
    pub grid: Option<CellGrid>,
    sorted: Vec<[F; 4]>,
    sorted_cell: Vec<u32>,
    sorted_force: Vec<[F; 4]>,
}

/// Cell list: bins the atoms, then each atom scans its 27 neighbouring cells.
/// `scratch.grid` must have been made for this box and a range of at least the cutoff.
pub fn cell_list<F: Real, A: Real, C: PairCoeffs<F>, const M: u8>(
    pos: &[[F; 4]],
    scratch: &mut CellScratch<F>,
    coeffs: &C,
    img: &MinImage<F>,
    force: &mut [[F; 4]],
) -> EnergyVirial<A> {
    let grid = scratch.grid.as_mut().expect("cell grid prepared by the caller");
    grid.bin_by(pos.len(), |i| [pos[i][0].f64(), pos[i][1].f64(), pos[i][2].f64()]);
    let grid = &*grid;
    scratch.sorted.clear();
    scratch.sorted.extend(grid.order.iter().map(|&i| pos[i as usize]));
    scratch.sorted_cell.clear();
    for c in 0..grid.n_cells() {
        let r = grid.range(c);
        scratch.sorted_cell.extend(std::iter::repeat_n(c as u32, r.len()));
    }
    scratch.sorted_force.resize(pos.len(), [F::zero(); 4]);
    let (sorted, sorted_cell) = (&scratch.sorted, &scratch.sorted_cell);
    let ev = scratch
        .sorted_force
        .par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .map(|(c, out)| cells_rows::<F, A, C, M>(c * ROW_CHUNK, out, sorted, sorted_cell, grid, coeffs, img))
        .collect::<Vec<_>>()
        .into_iter()
        .fold(EnergyVirial::default(), |mut a, b| {
            a.add(b);
            a
        });
    for (s, &i) in grid.order.iter().enumerate() {
        force[i as usize] = scratch.sorted_force[s];
    }
    ev
}

#[inline(always)]
fn half_body<F: Real, A: Real, C: PairCoeffs<F>, const M: u8>(
    chunk: &ListChunk,
    pos: &[[F; 4]],
    coeffs: &C,
    img: &MinImage<F>,
    buf: &mut [[F; 4]],
) -> EnergyVirial<A> {
    let mut ev = EnergyVirial::default();
    assert!(pos.len() <= buf.len() && chunk.first + chunk.start.len() - 1 <= pos.len());
    for k in 0..chunk.start.len() - 1 {
        let list = &chunk.nbrs[chunk.start[k] as usize..chunk.start[k + 1] as usize];
        // SAFETY: the list was built for these positions: every index is < pos.len() <= buf.len().
        unsafe { half_list::<F, A, C, M>(chunk.first + k, pos, list, coeffs, img, buf, &mut ev) };
    }
    ev
}

multiversion!(fn half_rows<F: Real, A: Real, C: PairCoeffs<F>; const M: u8>(
    chunk: &ListChunk, pos: &[[F; 4]], coeffs: &C, img: &MinImage<F>, buf: &mut [[F; 4]]
) -> EnergyVirial<A> = half_body);

/// The hand-vectorised AVX-512 loop when it applies (one species, f32 or f64, AVX-512
/// present), else the portable one.
fn half_rows_best<F: Real, A: Real, C: PairCoeffs<F>, const M: u8>(
    chunk: &ListChunk,
    pos: &[[F; 4]],
    coeffs: &C,
    img: &MinImage<F>,
    buf: &mut [[F; 4]],
) -> EnergyVirial<A> {
    #[cfg(target_arch = "x86_64")]
    if super::simd::level() == super::simd::SimdLevel::Avx512 {
        use super::avx512;
        use super::simd::{cast_ref, cast_slice, cast_slice_mut};
        if let Some(lj) = coeffs.uniform() {
            assert!(buf.len() >= pos.len() && chunk.first + chunk.start.len() - 1 <= pos.len());
            let ev = |s: EnergyVirial<f64>| EnergyVirial {
                energy: A::of(s.energy),
                virial: A::of(s.virial),
                tensor: s.tensor.map(A::of),
            };
            if let (Some(p), Some(l), Some(m)) = (cast_slice::<_, [f64; 4]>(pos), cast_ref(lj), cast_ref(img)) {
                let b = cast_slice_mut::<_, [f64; 4]>(buf).expect("same type as pos");
                // SAFETY: AVX-512 was detected; the list was built for `pos` (indices in bounds,
                // lengths padded to multiples of 8) and `buf` holds every atom.
                return ev(unsafe { avx512::half_rows_f64::<M>(chunk.first, p, &chunk.start, &chunk.nbrs, l, m, b) });
            }
            if let (Some(p), Some(l), Some(m)) = (cast_slice::<_, [f32; 4]>(pos), cast_ref(lj), cast_ref(img)) {
                let b = cast_slice_mut::<_, [f32; 4]>(buf).expect("same type as pos");
                // SAFETY: as above; the chunk's storage ends with 16 padding entries.
                return ev(unsafe { avx512::half_rows_f32::<M>(chunk.first, p, &chunk.start, &chunk.nbrs, l, m, b) });
            }
        }
    }
    half_rows::<F, A, C, M>(chunk, pos, coeffs, img, buf)
}

/// Neighbour list: each thread takes a contiguous range of atoms with about the same number
/// of pairs and accumulates into its own buffer (the first into `force`); the buffers are
/// then summed. `bufs` is resized as needed and kept between steps.
pub fn neighbor_list<F: Real, A: Real, C: PairCoeffs<F>, const M: u8>(
    pos: &[[F; 4]],
    nl: &NeighborList,
    bufs: &mut Vec<Vec<[F; 4]>>,
    coeffs: &C,
    img: &MinImage<F>,
    force: &mut [[F; 4]],
) -> EnergyVirial<A> {
    let n = pos.len();
    let threads = rayon::current_num_threads().max(1);
    let ranges = nl.balanced_ranges(threads);
    bufs.resize_with(ranges.len().saturating_sub(1), Vec::new);
    let mut targets: Vec<&mut [[F; 4]]> = Vec::with_capacity(ranges.len());
    targets.push(&mut *force);
    for b in bufs.iter_mut() {
        b.resize(n, [F::zero(); 4]);
        targets.push(b.as_mut_slice());
    }
    let ev = targets
        .into_par_iter()
        .zip(ranges.par_iter())
        .map(|(buf, range)| {
            buf.fill([F::zero(); 4]);
            let mut ev = EnergyVirial::default();
            for chunk in &nl.chunks[range.clone()] {
                ev.add(half_rows_best::<F, A, C, M>(chunk, pos, coeffs, img, buf));
            }
            ev
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(EnergyVirial::default(), |mut a, b| {
            a.add(b);
            a
        });
    if !bufs.is_empty() {
        let bufs = &*bufs;
        force.par_chunks_mut(4096).enumerate().for_each(|(c, chunk)| {
            for b in bufs {
                for (k, f) in chunk.iter_mut().enumerate() {
                    let g = b[c * 4096 + k];
                    f[0] += g[0];
                    f[1] += g[1];
                    f[2] += g[2];
                }
            }
        });
    }
    ev
}
