//! The AVX2+FMA f32 force loop over a cluster-pair list (see `clusters`, whose `kernel`
//! module calls it after checking its safety conditions), and the pruning test its build
//! uses: `cluster_kernel`'s AVX-512 loop recast for 8-lane registers, 16 of
//! them and no mask registers. An entry pairs half an i-cluster (4 atoms) with a j-cluster
//! (8 atoms), computed i-atom by i-atom (1 i-atom x 8 j-atoms per vector): the j positions
//! are one load per axis, their reactions summed over the four i-atoms and added with one
//! vector add per axis, and the i forces are kept in twelve accumulators until the half
//! cluster is done, then summed per atom with three horizontal adds per axis (twelve
//! accumulators and the j-cluster do not all fit in 16 registers, but every other split,
//! two or one i-atom per pass over the entries, measured slower). Same LJ arithmetic as the
//! AVX-512 loop, with masks as all-ones lanes and a true division for 1/r^2 (as fast here as
//! the 12-bit `rcp` with a Newton step, and correctly rounded).

#![allow(unsafe_op_in_unsafe_fn)]

use std::arch::x86_64::*;

use super::clusters::{Block, ClusterChunk, resolve};
use super::kernels::{EnergyVirial, TENSOR_AXES, mode};
use crate::physics::lj::LjPair;

/// Lane l of row k is set when j-atom l comes after i-atom k: a cluster with itself
/// (unshifted) counts each pair once.
const DIAG: [[i32; 8]; 8] = {
    let mut m = [[0i32; 8]; 8];
    let mut k = 0;
    while k < 8 {
        let mut l = k + 1;
        while l < 8 {
            m[k][l] = -1;
            l += 1;
        }
        k += 1;
    }
    m
};

/// Lanes where j-atom l comes after i-atom `k` (see [`DIAG`]).
#[inline(always)]
unsafe fn after(k: usize) -> __m256 {
    _mm256_castsi256_ps(_mm256_loadu_si256(DIAG[k].as_ptr() as *const __m256i))
}

/// Row `d` of a j-cluster, shifted by `shift`.
#[inline(always)]
unsafe fn load_j(b: &Block, d: usize, shift: f32) -> __m256 {
    _mm256_add_ps(_mm256_load_ps(b.0[d].as_ptr()), _mm256_set1_ps(shift))
}

/// i-atom `k`'s coordinate `d` in every lane.
#[inline(always)]
unsafe fn splat_i(b: &Block, d: usize, k: usize) -> __m256 {
    _mm256_broadcast_ss(&b.0[d][k])
}

/// Lanes with `0 < rsq < cut` (coincident points are two empty lanes), and, for a cluster
/// with itself (`OWN`), j-atom after i-atom `k`.
#[inline(always)]
unsafe fn in_range<const OWN: bool>(rsq: __m256, cut: __m256, k: usize) -> __m256 {
    let m = _mm256_and_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(rsq, _mm256_setzero_ps()), _mm256_cmp_ps::<_CMP_LT_OQ>(rsq, cut));
    if OWN { _mm256_and_ps(m, after(k)) } else { m }
}

/// Squared distances from i-atom coordinates `xi` to the j-atoms `xj`, and the differences.
#[inline(always)]
unsafe fn separation(xi: [__m256; 3], xj: &[__m256; 3]) -> ([__m256; 3], __m256) {
    let d = [_mm256_sub_ps(xi[0], xj[0]), _mm256_sub_ps(xi[1], xj[1]), _mm256_sub_ps(xi[2], xj[2])];
    let rsq = _mm256_fmadd_ps(d[2], d[2], _mm256_fmadd_ps(d[1], d[1], _mm256_mul_ps(d[0], d[0])));
    (d, rsq)
}

/// `clusters::kernel::near_halves` on AVX2.
///
/// # Safety
/// The CPU has AVX2 and FMA (indices are checked).
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn near_halves_avx2(
    ci: usize,
    near: &[u32],
    packed: &[Block],
    shifts: &[[f32; 4]; 27],
    r2: f32,
    halves: &mut Vec<u8>,
) {
    let cut = _mm256_set1_ps(r2);
    let bi = &packed[ci];
    for &e in near {
        let Some((_, bj, s, own)) = resolve(e, ci, packed, shifts) else {
            halves.push(0);
            continue;
        };
        let xj = [load_j(bj, 0, s[0]), load_j(bj, 1, s[1]), load_j(bj, 2, s[2])];
        let mut h = 0u8;
        for half in 0..2 {
            let mut any = _mm256_setzero_ps();
            for k in 4 * half..4 * half + 4 {
                let (_, rsq) = separation([splat_i(bi, 0, k), splat_i(bi, 1, k), splat_i(bi, 2, k)], &xj);
                let m = if own { in_range::<true>(rsq, cut, k) } else { in_range::<false>(rsq, cut, k) };
                any = _mm256_or_ps(any, m);
            }
            h |= ((_mm256_movemask_ps(any) != 0) as u8) << half;
        }
        halves.push(h);
    }
}

/// The pair coefficients in every lane.
struct Coeffs {
    one: __m256,
    lj1: __m256,
    lj2: __m256,
    lj3: __m256,
    lj4: __m256,
    offset: __m256,
    rc2: __m256,
}

/// Sum of the 8 lanes, in f64.
#[inline(always)]
unsafe fn sum_pd(v: __m256) -> f64 {
    let s = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)));
    let s = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd::<1>(s));
    _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)))
}

/// Each of the four vectors summed over its lanes, as the four lanes of the result.
#[inline(always)]
unsafe fn sum4(v: &[__m256; 4]) -> __m128 {
    let t = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
    _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps::<1>(t))
}

/// The pairs of i-atoms 4h..4h + 4 (of cluster `bi`) with the j-atoms at `xj`: i forces into
/// `fi` (by axis, then atom), with [`mode::ENERGY`] the energy and virial into
/// `ev`; returns the j forces.
#[inline(always)]
unsafe fn half_with<const M: u8, const OWN: bool>(
    bi: &Block,
    h: usize,
    xj: &[__m256; 3],
    c: &Coeffs,
    fi: &mut [[__m256; 4]; 3],
    ev: &mut [__m256; 2],
) -> [__m256; 3] {
    let mut fj = [_mm256_setzero_ps(); 3];
    for a in 0..4 {
        let k = 4 * h + a;
        let (d, rsq) = separation([splat_i(bi, 0, k), splat_i(bi, 1, k), splat_i(bi, 2, k)], xj);
        let mask = in_range::<OWN>(rsq, c.rc2, k);
        let r2inv = _mm256_and_ps(mask, _mm256_div_ps(c.one, rsq));
        let r6inv = _mm256_mul_ps(_mm256_mul_ps(r2inv, r2inv), r2inv);
        let fd = _mm256_mul_ps(_mm256_mul_ps(r6inv, _mm256_fmsub_ps(c.lj1, r6inv, c.lj2)), r2inv);
        for (axis, &dd) in d.iter().enumerate() {
            fi[axis][a] = _mm256_fmadd_ps(dd, fd, fi[axis][a]);
            fj[axis] = _mm256_fnmadd_ps(dd, fd, fj[axis]);
        }
        if M & mode::ENERGY != 0 {
            let en = _mm256_sub_ps(_mm256_mul_ps(r6inv, _mm256_fmsub_ps(c.lj3, r6inv, c.lj4)), c.offset);
            ev[0] = _mm256_add_ps(ev[0], _mm256_and_ps(mask, en));
            ev[1] = _mm256_fmadd_ps(rsq, fd, ev[1]);
        }
    }
    fj
}

/// `clusters::kernel::rows` on AVX2.
///
/// # Safety
/// The CPU has AVX2 and FMA (indices are checked).
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn rows_avx2<const M: u8>(
    chunk: &ClusterChunk,
    packed: &[Block],
    shifts: &[[f32; 4]; 27],
    lj: &LjPair<f32>,
    buf: &mut [Block],
) -> EnergyVirial<f64> {
    let n = packed.len();
    let zero = _mm256_setzero_ps();
    let c = Coeffs {
        one: _mm256_set1_ps(1.0),
        lj1: _mm256_set1_ps(lj.lj1),
        lj2: _mm256_set1_ps(lj.lj2),
        lj3: _mm256_set1_ps(lj.lj3),
        lj4: _mm256_set1_ps(lj.lj4),
        offset: _mm256_set1_ps(lj.offset),
        rc2: _mm256_set1_ps(lj.rcut_sq),
    };
    let mut sums = EnergyVirial::<f64>::default();
    for (ci, h, entries) in chunk.rows() {
        if ci >= n {
            break;
        }
        let bi = &packed[ci];
        let mut fi = [[zero; 4]; 3];
        let mut ev = [zero; 2];
        let mut shift_acc = [zero; 6];
        for &e in entries {
            let Some((cj, bj, s, own)) = resolve(e, ci, packed, shifts) else { continue };
            let xj = [load_j(bj, 0, s[0]), load_j(bj, 1, s[1]), load_j(bj, 2, s[2])];
            let fj = if own {
                half_with::<M, true>(bi, h, &xj, &c, &mut fi, &mut ev)
            } else {
                half_with::<M, false>(bi, h, &xj, &c, &mut fi, &mut ev)
            };
            if M & mode::STRESS != 0 {
                // The image-shift term (see `ClusterList::forces`), zero for unshifted
                // entries: summed for every entry, so no branch to mispredict.
                let sv = [_mm256_set1_ps(s[0]), _mm256_set1_ps(s[1]), _mm256_set1_ps(s[2])];
                for (q, &(a, b)) in TENSOR_AXES.iter().enumerate() {
                    shift_acc[q] = _mm256_fmadd_ps(sv[a], fj[b], shift_acc[q]);
                }
            }
            let out = &mut buf[cj];
            for (d, f) in fj.iter().enumerate() {
                let p = out.0[d].as_mut_ptr();
                _mm256_store_ps(p, _mm256_add_ps(_mm256_load_ps(p), *f));
            }
        }
        let out = &mut buf[ci];
        for (d, f) in fi.iter().enumerate() {
            let p = out.0[d][4 * h..4 * h + 4].as_mut_ptr();
            _mm_storeu_ps(p, _mm_add_ps(_mm_loadu_ps(p), sum4(f)));
        }
        if M & mode::STRESS != 0 {
            for q in 0..6 {
                sums.tensor[q] += sum_pd(shift_acc[q]);
            }
        }
        if M & mode::ENERGY != 0 {
            sums.energy += sum_pd(ev[0]);
            sums.virial += sum_pd(ev[1]);
        }
    }
    sums
}
