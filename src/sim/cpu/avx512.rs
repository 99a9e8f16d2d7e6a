//! Hand-vectorised AVX-512 versions of the two hottest CPU loops, for one species:
//! the half-neighbour-list force loop (8 f64 or 16 f32 neighbours per vector: gathered
//! positions, masked LJ, reactions transposed and added back per neighbour) and the
//! neighbour-list candidate scan (positions as structure of arrays, periodic images per
//! span instead of a minimum image per pair, compress-store of the hits).
//!
//! Same arithmetic as `kernels::half_list` and the generic build (division, not reciprocal
//! approximations), so results agree with the portable loops to round-off. Callers check
//! `simd::level() == Avx512` first.

#![allow(unsafe_op_in_unsafe_fn)]

use std::arch::x86_64::*;

use super::cells::Span;
use super::kernels::{EnergyVirial, MinImage, mode};
use crate::physics::lj::LjPair;

const ROUND: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// Entry `k` of a block of neighbour indices, read as a scalar: volatile keeps the compiler
/// from loading the block as one vector and extracting each lane, which costs more shuffles
/// (on the port the transposes need) than the scalar loads themselves.
#[inline(always)]
unsafe fn index<const N: usize>(js: &[u32; N], k: usize) -> usize {
    debug_assert!(k < N);
    std::ptr::read_volatile(js.as_ptr().add(k)) as usize
}

/// x, y, z of the 8 f64 rows at `rows[k]` (each `[x, y, z, w]`), transposed into vectors.
#[inline(always)]
unsafe fn load8_xyz(base: *const f64, rows: &[u32; 8]) -> (__m512d, __m512d, __m512d) {
    let row = |k: usize| base.add(index(rows, k) * 4);
    let pair = |a: usize, b: usize| {
        _mm512_insertf64x4::<1>(_mm512_castpd256_pd512(_mm256_loadu_pd(row(a))), _mm256_loadu_pd(row(b)))
    };
    let (a0, a1, a2, a3) = (pair(0, 4), pair(1, 5), pair(2, 6), pair(3, 7));
    transpose8(a0, a1, a2, a3)
}

/// (rows 0|4, 1|5, 2|6, 3|7) of `[x, y, z, w]` -> (x, y, z) vectors in row order.
#[inline(always)]
unsafe fn transpose8(a0: __m512d, a1: __m512d, a2: __m512d, a3: __m512d) -> (__m512d, __m512d, __m512d) {
    let t0 = _mm512_unpacklo_pd(a0, a1); // x0 x1 | z0 z1 | x4 x5 | z4 z5
    let t1 = _mm512_unpackhi_pd(a0, a1); // y0 y1 | w0 w1 | y4 y5 | w4 w5
    let t2 = _mm512_unpacklo_pd(a2, a3); // x2 x3 | z2 z3 | x6 x7 | z6 z7
    let t3 = _mm512_unpackhi_pd(a2, a3);
    let even = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    let odd = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    (_mm512_permutex2var_pd(t0, even, t2), _mm512_permutex2var_pd(t1, even, t3), _mm512_permutex2var_pd(t0, odd, t2))
}

/// x, y, z of the 16 f32 rows at `rows[k]`, transposed into vectors (row order).
#[inline(always)]
unsafe fn load16_xyz(base: *const f32, rows: &[u32; 16]) -> (__m512, __m512, __m512) {
    let row = |k: usize| _mm_loadu_ps(base.add(index(rows, k) * 4));
    let quad = |a: usize| {
        let v = _mm512_castps128_ps512(row(a));
        let v = _mm512_insertf32x4::<1>(v, row(a + 4));
        let v = _mm512_insertf32x4::<2>(v, row(a + 8));
        _mm512_insertf32x4::<3>(v, row(a + 12))
    };
    transpose16(quad(0), quad(1), quad(2), quad(3))
}

/// Four vectors whose 128-bit lane k holds rows (4k + 0..3) respectively -> (x, y, z).
#[inline(always)]
unsafe fn transpose16(a0: __m512, a1: __m512, a2: __m512, a3: __m512) -> (__m512, __m512, __m512) {
    let t0 = _mm512_castps_pd(_mm512_unpacklo_ps(a0, a1)); // x0 x1 y0 y1 per lane
    let t1 = _mm512_castps_pd(_mm512_unpackhi_ps(a0, a1)); // z0 z1 w0 w1
    let t2 = _mm512_castps_pd(_mm512_unpacklo_ps(a2, a3)); // x2 x3 y2 y3
    let t3 = _mm512_castps_pd(_mm512_unpackhi_ps(a2, a3));
    (
        _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2)),
        _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2)),
        _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3)),
    )
}

/// Force loop over the atoms `first..first + start.len() - 1` of a half list in f64 (atom
/// `first + k` has `nbrs[start[k]..start[k + 1]]`). Returns the sums of mode `M` (see
/// `kernels::mode`).
///
/// # Safety
/// AVX-512F/VL must be available; those atoms exist in `pos`; every index in `nbrs` is below
/// `pos.len()`; each list is a multiple of 8 long and `nbrs` has 16 entries of padding after
/// the last; `force.len() >= pos.len()`.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub unsafe fn half_rows_f64<const M: u8>(
    first: usize,
    pos: &[[f64; 4]],
    start: &[u32],
    nbrs: &[u32],
    lj: &LjPair<f64>,
    img: &MinImage<f64>,
    force: &mut [[f64; 4]],
) -> EnergyVirial<f64> {
    let base = pos.as_ptr() as *const f64;
    let fbase = force.as_mut_ptr() as *mut f64;
    let one = _mm512_set1_pd(1.0);
    let zero = _mm512_setzero_pd();
    let (lj1, lj2) = (_mm512_set1_pd(lj.lj1), _mm512_set1_pd(lj.lj2));
    let (lj3, lj4, off) = (_mm512_set1_pd(lj.lj3), _mm512_set1_pd(lj.lj4), _mm512_set1_pd(lj.offset));
    let rc2 = _mm512_set1_pd(lj.rcut_sq);
    let len = [_mm512_set1_pd(img.len[0]), _mm512_set1_pd(img.len[1]), _mm512_set1_pd(img.len[2])];
    let inv = [_mm512_set1_pd(img.inv[0]), _mm512_set1_pd(img.inv[1]), _mm512_set1_pd(img.inv[2])];
    // Lane pairs (a, b) of two unpacked vectors -> one atom per 256-bit half.
    let lo_pairs = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    let hi_pairs = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    let mut e_acc = zero;
    let mut w_acc = zero;
    let mut t_acc = [zero; 6];
    for k in 0..start.len() - 1 {
        let i = first + k;
        let pi = *pos.get_unchecked(i);
        let (xi, yi, zi) = (_mm512_set1_pd(pi[0]), _mm512_set1_pd(pi[1]), _mm512_set1_pd(pi[2]));
        let (mut fxi, mut fyi, mut fzi) = (zero, zero, zero);
        let (s, e) = (*start.get_unchecked(k) as usize, *start.get_unchecked(k + 1) as usize);
        let mut k = s;
        while k < e {
            let js = &*(nbrs.as_ptr().add(k) as *const [u32; 8]);
            let (xj, yj, zj) = load8_xyz(base, js);
            let mut dx = _mm512_sub_pd(xi, xj);
            let mut dy = _mm512_sub_pd(yi, yj);
            let mut dz = _mm512_sub_pd(zi, zj);
            dx = _mm512_fnmadd_pd(len[0], _mm512_roundscale_pd::<ROUND>(_mm512_mul_pd(dx, inv[0])), dx);
            dy = _mm512_fnmadd_pd(len[1], _mm512_roundscale_pd::<ROUND>(_mm512_mul_pd(dy, inv[1])), dy);
            dz = _mm512_fnmadd_pd(len[2], _mm512_roundscale_pd::<ROUND>(_mm512_mul_pd(dz, inv[2])), dz);
            let rsq = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy)), _mm512_mul_pd(dz, dz));
            let mask = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(rsq, rc2) & _mm512_cmp_pd_mask::<_CMP_GT_OQ>(rsq, zero);
            let r2inv = _mm512_maskz_div_pd(mask, one, rsq);
            let r6inv = _mm512_mul_pd(_mm512_mul_pd(r2inv, r2inv), r2inv);
            let fd = _mm512_mul_pd(_mm512_mul_pd(r6inv, _mm512_sub_pd(_mm512_mul_pd(lj1, r6inv), lj2)), r2inv);
            let fx = _mm512_mul_pd(dx, fd);
            let fy = _mm512_mul_pd(dy, fd);
            let fz = _mm512_mul_pd(dz, fd);
            fxi = _mm512_add_pd(fxi, fx);
            fyi = _mm512_add_pd(fyi, fy);
            fzi = _mm512_add_pd(fzi, fz);
            if M & mode::ENERGY != 0 {
                let en = _mm512_sub_pd(_mm512_mul_pd(r6inv, _mm512_sub_pd(_mm512_mul_pd(lj3, r6inv), lj4)), off);
                e_acc = _mm512_add_pd(e_acc, _mm512_maskz_mov_pd(mask, en));
                w_acc = _mm512_add_pd(w_acc, _mm512_mul_pd(rsq, fd));
            }
            if M & mode::STRESS != 0 {
                let (d, f) = ([dx, dy, dz, dx, dx, dy], [fx, fy, fz, fy, fz, fz]);
                for q in 0..6 {
                    t_acc[q] = _mm512_fmadd_pd(d[q], f[q], t_acc[q]);
                }
            }
            // Transpose (fx, fy, fz, 0) into one 256-bit row per neighbour and subtract.
            let t0 = _mm512_unpacklo_pd(fx, fy);
            let t1 = _mm512_unpackhi_pd(fx, fy);
            let t2 = _mm512_unpacklo_pd(fz, zero);
            let t3 = _mm512_unpackhi_pd(fz, zero);
            let rows = [
                _mm512_permutex2var_pd(t0, lo_pairs, t2), // neighbours 0, 2
                _mm512_permutex2var_pd(t1, lo_pairs, t3), // 1, 3
                _mm512_permutex2var_pd(t0, hi_pairs, t2), // 4, 6
                _mm512_permutex2var_pd(t1, hi_pairs, t3), // 5, 7
            ];
            let lanes = [(0, 2), (1, 3), (4, 6), (5, 7)];
            for (r, &(a, b)) in rows.iter().zip(lanes.iter()) {
                let pa = fbase.add(index(js, a) * 4);
                _mm256_storeu_pd(pa, _mm256_sub_pd(_mm256_loadu_pd(pa), _mm512_castpd512_pd256(*r)));
                let pb = fbase.add(index(js, b) * 4);
                _mm256_storeu_pd(pb, _mm256_sub_pd(_mm256_loadu_pd(pb), _mm512_extractf64x4_pd::<1>(*r)));
            }
            k += 8;
        }
        let fi = fbase.add(i * 4);
        *fi += _mm512_reduce_add_pd(fxi);
        *fi.add(1) += _mm512_reduce_add_pd(fyi);
        *fi.add(2) += _mm512_reduce_add_pd(fzi);
    }
    EnergyVirial {
        energy: _mm512_reduce_add_pd(e_acc),
        virial: _mm512_reduce_add_pd(w_acc),
        tensor: t_acc.map(|t| _mm512_reduce_add_pd(t)),
    }
}

#[inline(always)]
unsafe fn sum_ps_as_pd(x: __m512) -> f64 {
    let lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
    let hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(x))));
    _mm512_reduce_add_pd(_mm512_add_pd(lo, hi))
}

/// Force loop of [`half_rows_f64`] in f32 (16 neighbours per vector).
/// Energies and virials are summed in f64 per atom.
///
/// # Safety
/// As [`half_rows_f64`] (lists a multiple of 8 long).
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub unsafe fn half_rows_f32<const M: u8>(
    first: usize,
    pos: &[[f32; 4]],
    start: &[u32],
    nbrs: &[u32],
    lj: &LjPair<f32>,
    img: &MinImage<f32>,
    force: &mut [[f32; 4]],
) -> EnergyVirial<f64> {
    let base = pos.as_ptr() as *const f32;
    let fbase = force.as_mut_ptr() as *mut f32;
    let zero = _mm512_setzero_ps();
    let (lj1, lj2) = (_mm512_set1_ps(lj.lj1), _mm512_set1_ps(lj.lj2));
    let (lj3, lj4, off) = (_mm512_set1_ps(lj.lj3), _mm512_set1_ps(lj.lj4), _mm512_set1_ps(lj.offset));
    let rc2 = _mm512_set1_ps(lj.rcut_sq);
    let len = [_mm512_set1_ps(img.len[0]), _mm512_set1_ps(img.len[1]), _mm512_set1_ps(img.len[2])];
    let inv = [_mm512_set1_ps(img.inv[0]), _mm512_set1_ps(img.inv[1]), _mm512_set1_ps(img.inv[2])];
    let mut sums = EnergyVirial::<f64>::default();
    for k in 0..start.len() - 1 {
        let i = first + k;
        let pi = *pos.get_unchecked(i);
        let (xi, yi, zi) = (_mm512_set1_ps(pi[0]), _mm512_set1_ps(pi[1]), _mm512_set1_ps(pi[2]));
        let (mut fxi, mut fyi, mut fzi) = (zero, zero, zero);
        let (mut e_i, mut w_i) = (zero, zero);
        let mut t_i = [zero; 6];
        let (s, e) = (*start.get_unchecked(k) as usize, *start.get_unchecked(k + 1) as usize);
        let mut k = s;
        while k < e {
            // Lists are padded to 8: the last vector may hold only 8 neighbours.
            let valid: u16 = if e - k >= 16 { 0xffff } else { 0x00ff };
            // Lists end at least 8 entries before the array does (NeighborList pads it), so
            // 16 indices can be read; lanes past the list are masked off.
            let js = &*(nbrs.as_ptr().add(k) as *const [u32; 16]);
            let (xj, yj, zj) = load16_xyz(base, js);
            let mut dx = _mm512_sub_ps(xi, xj);
            let mut dy = _mm512_sub_ps(yi, yj);
            let mut dz = _mm512_sub_ps(zi, zj);
            dx = _mm512_fnmadd_ps(len[0], _mm512_roundscale_ps::<ROUND>(_mm512_mul_ps(dx, inv[0])), dx);
            dy = _mm512_fnmadd_ps(len[1], _mm512_roundscale_ps::<ROUND>(_mm512_mul_ps(dy, inv[1])), dy);
            dz = _mm512_fnmadd_ps(len[2], _mm512_roundscale_ps::<ROUND>(_mm512_mul_ps(dz, inv[2])), dz);
            let rsq = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)), _mm512_mul_ps(dz, dz));
            let mask = valid & _mm512_cmp_ps_mask::<_CMP_LT_OQ>(rsq, rc2) & _mm512_cmp_ps_mask::<_CMP_GT_OQ>(rsq, zero);
            // rcp14 plus one Newton step: ~2^-28 relative error, below f32's ulp.
            let approx = _mm512_maskz_rcp14_ps(mask, rsq);
            let r2inv = _mm512_mul_ps(approx, _mm512_fnmadd_ps(rsq, approx, _mm512_set1_ps(2.0)));
            let r6inv = _mm512_mul_ps(_mm512_mul_ps(r2inv, r2inv), r2inv);
            let fd = _mm512_mul_ps(_mm512_mul_ps(r6inv, _mm512_sub_ps(_mm512_mul_ps(lj1, r6inv), lj2)), r2inv);
            let fx = _mm512_mul_ps(dx, fd);
            let fy = _mm512_mul_ps(dy, fd);
            let fz = _mm512_mul_ps(dz, fd);
            fxi = _mm512_add_ps(fxi, fx);
            fyi = _mm512_add_ps(fyi, fy);
            fzi = _mm512_add_ps(fzi, fz);
            if M & mode::ENERGY != 0 {
                let en = _mm512_sub_ps(_mm512_mul_ps(r6inv, _mm512_sub_ps(_mm512_mul_ps(lj3, r6inv), lj4)), off);
                e_i = _mm512_add_ps(e_i, _mm512_maskz_mov_ps(mask, en));
                w_i = _mm512_add_ps(w_i, _mm512_mul_ps(rsq, fd));
            }
            if M & mode::STRESS != 0 {
                let (d, f) = ([dx, dy, dz, dx, dx, dy], [fx, fy, fz, fy, fz, fz]);
                for q in 0..6 {
                    t_i[q] = _mm512_fmadd_ps(d[q], f[q], t_i[q]);
                }
            }
            // Transpose (fx, fy, fz, 0): each 128-bit lane of `rows[r]` is one neighbour.
            let t0 = _mm512_castps_pd(_mm512_unpacklo_ps(fx, fy));
            let t1 = _mm512_castps_pd(_mm512_unpackhi_ps(fx, fy));
            let t2 = _mm512_castps_pd(_mm512_unpacklo_ps(fz, zero));
            let t3 = _mm512_castps_pd(_mm512_unpackhi_ps(fz, zero));
            let rows = [
                _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2)), // neighbours 0, 4, 8, 12
                _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2)), // 1, 5, 9, 13
                _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3)), // 2, 6, 10, 14
                _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3)), // 3, 7, 11, 15
            ];
            // All 16 lanes, even when only 8 are the list's (no branch to mispredict): the
            // others hold zeros for entries of the next list or the storage's padding.
            for (r, row) in rows.iter().enumerate() {
                let parts = [
                    _mm512_castps512_ps128(*row),
                    _mm512_extractf32x4_ps::<1>(*row),
                    _mm512_extractf32x4_ps::<2>(*row),
                    _mm512_extractf32x4_ps::<3>(*row),
                ];
                for (q, part) in parts.iter().enumerate() {
                    let p = fbase.add(index(js, r + 4 * q) * 4);
                    _mm_storeu_ps(p, _mm_sub_ps(_mm_loadu_ps(p), *part));
                }
            }
            k += 16;
        }
        let fi = fbase.add(i * 4);
        *fi += _mm512_reduce_add_ps(fxi);
        *fi.add(1) += _mm512_reduce_add_ps(fyi);
        *fi.add(2) += _mm512_reduce_add_ps(fzi);
        if M & mode::ENERGY != 0 {
            sums.energy += sum_ps_as_pd(e_i);
            sums.virial += sum_ps_as_pd(w_i);
        }
        if M & mode::STRESS != 0 {
            for q in 0..6 {
                sums.tensor[q] += sum_ps_as_pd(t_i[q]);
            }
        }
    }
    sums
}

/// Appends to `out` every j in the `spans` whose distance to `pi` is below `range_sq`, each
/// span's atoms seen in its periodic image (`len` the box lengths), from positions stored
/// as structure of arrays (f64, 8 candidates per vector).
///
/// # Safety
/// AVX-512F/VL must be available and every span must lie within `x`, `y` and `z`.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub unsafe fn scan_soa_f64(
    pi: [f64; 3],
    spans: &[Span],
    [x, y, z]: [&[f64]; 3],
    len: [f64; 3],
    range_sq: f64,
    out: &mut Vec<u32>,
) {
    out.reserve(spans.iter().map(|s| s.slots.len() + 8).sum());
    let (xi, yi, zi) = (_mm512_set1_pd(pi[0]), _mm512_set1_pd(pi[1]), _mm512_set1_pd(pi[2]));
    let r2 = _mm512_set1_pd(range_sq);
    let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let mut n = out.len();
    let dst = out.as_mut_ptr() as *mut i32;
    for s in spans {
        let shift = |k: usize| _mm512_set1_pd(len[k] * s.image[k] as f64);
        let (sx, sy, sz) = (shift(0), shift(1), shift(2));
        let mut j = s.slots.start;
        while j < s.slots.end {
            let left = s.slots.end - j;
            let valid: u8 = if left >= 8 { 0xff } else { (1u8 << left) - 1 };
            let idx = _mm256_add_epi32(_mm256_set1_epi32(j as i32), iota);
            let dx = _mm512_sub_pd(_mm512_sub_pd(xi, _mm512_maskz_loadu_pd(valid, x.as_ptr().add(j))), sx);
            let dy = _mm512_sub_pd(_mm512_sub_pd(yi, _mm512_maskz_loadu_pd(valid, y.as_ptr().add(j))), sy);
            let dz = _mm512_sub_pd(_mm512_sub_pd(zi, _mm512_maskz_loadu_pd(valid, z.as_ptr().add(j))), sz);
            let rsq = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy)), _mm512_mul_pd(dz, dz));
            let hit = _mm512_mask_cmp_pd_mask::<_CMP_LT_OQ>(valid, rsq, r2);
            _mm256_mask_compressstoreu_epi32(dst.add(n), hit, idx);
            n += hit.count_ones() as usize;
            j += 8;
        }
    }
    out.set_len(n);
}

/// As [`scan_soa_f64`] for f32 positions, 16 candidates per vector. Hits within a block of
/// 16 are appended in the order j + 0, 4, 8, 12, 1, 5, ... (the order of the original
/// transposing loads, kept so that lists, and hence force sums, stay the same).
///
/// # Safety
/// AVX-512F/VL must be available and every span must lie within `x`, `y` and `z`.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub unsafe fn scan_soa_f32(
    pi: [f32; 3],
    spans: &[Span],
    [x, y, z]: [&[f32]; 3],
    len: [f32; 3],
    range_sq: f32,
    out: &mut Vec<u32>,
) {
    out.reserve(spans.iter().map(|s| s.slots.len() + 16).sum());
    let (xi, yi, zi) = (_mm512_set1_ps(pi[0]), _mm512_set1_ps(pi[1]), _mm512_set1_ps(pi[2]));
    let r2 = _mm512_set1_ps(range_sq);
    let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    let mut n = out.len();
    let dst = out.as_mut_ptr() as *mut i32;
    for s in spans {
        let shift = |k: usize| _mm512_set1_ps(len[k] * s.image[k] as f32);
        let (sx, sy, sz) = (shift(0), shift(1), shift(2));
        let mut j = s.slots.start;
        while j < s.slots.end {
            let left = s.slots.end - j;
            let valid: u16 = if left >= 16 { 0xffff } else { (1u16 << left) - 1 };
            let dx = _mm512_sub_ps(_mm512_sub_ps(xi, _mm512_maskz_loadu_ps(valid, x.as_ptr().add(j))), sx);
            let dy = _mm512_sub_ps(_mm512_sub_ps(yi, _mm512_maskz_loadu_ps(valid, y.as_ptr().add(j))), sy);
            let dz = _mm512_sub_ps(_mm512_sub_ps(zi, _mm512_maskz_loadu_ps(valid, z.as_ptr().add(j))), sz);
            let rsq = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)), _mm512_mul_ps(dz, dz));
            // Compare in the stored order: lane l tests candidate order[l].
            let rsq = _mm512_permutexvar_ps(order, rsq);
            let in_list = _mm512_cmplt_epi32_mask(order, _mm512_set1_epi32(left.min(16) as i32));
            let hit = _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(in_list, rsq, r2);
            let idx = _mm512_add_epi32(_mm512_set1_epi32(j as i32), order);
            _mm512_mask_compressstoreu_epi32(dst.add(n), hit, idx);
            n += hit.count_ones() as usize;
            j += 16;
        }
    }
    out.set_len(n);
}
