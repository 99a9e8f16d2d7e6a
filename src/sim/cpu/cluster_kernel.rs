//! The AVX-512 f32 force loop over a cluster-pair list (see `clusters`, whose `kernel`
//! module calls it after checking its safety conditions), and the pruning test its build
//! uses. An entry pairs half an i-cluster (4 atoms) with a j-cluster (8
//! atoms), computed as two vectors of (2 i-atoms x 8 j-atoms): the j positions are one
//! broadcast load per axis, their reactions one vector add per axis, and the i forces stay
//! in registers until the half cluster is done (everything fits in the 32 registers). Same
//! LJ arithmetic as the per-atom AVX-512 loop (rcp14 with one Newton step).

#![allow(unsafe_op_in_unsafe_fn)]

use std::arch::x86_64::*;

use super::clusters::{Block, ClusterChunk, resolve};
use super::kernels::{EnergyVirial, TENSOR_AXES, mode};
use crate::physics::lj::LjPair;

/// Lane l of register r pairs i-atom 2r + l / 8 with j-atom l % 8: keep j > i.
const fn diag_masks() -> [u16; 4] {
    let mut m = [0u16; 4];
    let mut r = 0;
    while r < 4 {
        let mut l = 0;
        while l < 16 {
            if (l & 7) > 2 * r + l / 8 {
                m[r] |= 1 << l;
            }
            l += 1;
        }
        r += 1;
    }
    m
}

/// Row `d` of an i-cluster as four registers of (atom 2r x 8, atom 2r + 1 x 8) (for pruning).
#[inline(always)]
unsafe fn load_i(b: &Block, d: usize, pick: &[__m512i; 4]) -> [__m512; 4] {
    let row = _mm512_castps256_ps512(_mm256_load_ps(b.0[d].as_ptr()));
    [
        _mm512_permutexvar_ps(pick[0], row),
        _mm512_permutexvar_ps(pick[1], row),
        _mm512_permutexvar_ps(pick[2], row),
        _mm512_permutexvar_ps(pick[3], row),
    ]
}

/// Row `d` of a j-cluster in both halves of a register, shifted by `shift`.
#[inline(always)]
unsafe fn load_j(b: &Block, d: usize, shift: f32) -> __m512 {
    let row = _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_load_ps(b.0[d].as_ptr()))));
    _mm512_add_ps(row, _mm512_set1_ps(shift))
}

/// Sum of the 16 lanes, in f64.
#[inline(always)]
unsafe fn sum_pd(v: __m512) -> f64 {
    let lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    let hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v))));
    _mm512_reduce_add_pd(_mm512_add_pd(lo, hi))
}

/// `clusters::kernel::near_halves` on AVX-512.
///
/// # Safety
/// The CPU has AVX-512F, AVX-512VL, AVX2 and FMA, and `ci < packed.len()`.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub(super) unsafe fn near_halves_avx512(
    ci: usize,
    near: &[u32],
    packed: &[Block],
    shifts: &[[f32; 4]; 27],
    r2: f32,
    halves: &mut Vec<u8>,
) {
    let zero = _mm512_setzero_ps();
    let cut = _mm512_set1_ps(r2);
    let pick = [pick(0), pick(1), pick(2), pick(3)];
    let bi = packed.get_unchecked(ci);
    let xi = [load_i(bi, 0, &pick), load_i(bi, 1, &pick), load_i(bi, 2, &pick)];
    for &e in near {
        let Some((_, bj, s, own)) = resolve(e, ci, packed, shifts) else {
            halves.push(0);
            continue;
        };
        let xj = [load_j(bj, 0, s[0]), load_j(bj, 1, s[1]), load_j(bj, 2, s[2])];
        let mut h = 0u8;
        for r in 0..4 {
            let keep: u16 = if own { DIAG[r] } else { 0xffff };
            let dx = _mm512_sub_ps(xi[0][r], xj[0]);
            let dy = _mm512_sub_ps(xi[1][r], xj[1]);
            let dz = _mm512_sub_ps(xi[2][r], xj[2]);
            let rsq = _mm512_fmadd_ps(dz, dz, _mm512_fmadd_ps(dy, dy, _mm512_mul_ps(dx, dx)));
            let near =
                _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(_mm512_mask_cmp_ps_mask::<_CMP_GT_OQ>(keep, rsq, zero), rsq, cut);
            h |= ((near != 0) as u8) << (r / 2);
        }
        halves.push(h);
    }
}

/// Lane indices of register r: i-atom 2r in lanes 0..8, 2r + 1 in lanes 8..16.
const PICK: [[i32; 16]; 4] = {
    let mut p = [[0i32; 16]; 4];
    let mut r = 0;
    while r < 4 {
        let mut l = 0;
        while l < 16 {
            p[r][l] = (2 * r + l / 8) as i32;
            l += 1;
        }
        r += 1;
    }
    p
};

/// The lane indices of register r (see [`PICK`]).
#[inline(always)]
unsafe fn pick(r: usize) -> __m512i {
    _mm512_loadu_si512(PICK[r].as_ptr() as *const _)
}

/// Row `d` of an i-cluster as two registers (see [`PICK`] for `pick`).
#[inline(always)]
unsafe fn load_half(b: &Block, d: usize, pick: &[__m512i; 2]) -> [__m512; 2] {
    let row = _mm512_castps256_ps512(_mm256_load_ps(b.0[d].as_ptr()));
    [_mm512_permutexvar_ps(pick[0], row), _mm512_permutexvar_ps(pick[1], row)]
}

/// A cluster with itself (unshifted): each pair once, j after i.
const DIAG: [u16; 4] = diag_masks();

/// The i forces of two registers (atoms a, a + 1 and a + 2, a + 3, 8 lanes each), summed per
/// atom into 4 lanes.
#[inline(always)]
unsafe fn reduce_half(r0: __m512, r1: __m512) -> __m128 {
    // One atom per 128-bit lane, 4 partial sums each.
    let u = _mm512_add_ps(_mm512_shuffle_f32x4::<0b10_00_10_00>(r0, r1), _mm512_shuffle_f32x4::<0b11_01_11_01>(r0, r1));
    let t = _mm512_add_ps(u, _mm512_shuffle_ps::<0b01_00_11_10>(u, u));
    let t = _mm512_add_ps(t, _mm512_shuffle_ps::<0b10_11_00_01>(t, t));
    let order = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    _mm512_castps512_ps128(_mm512_permutexvar_ps(order, t))
}

/// `clusters::kernel::rows` on AVX-512.
///
/// # Safety
/// The CPU has AVX-512F, AVX-512VL, AVX2 and FMA, and `buf.len() >= packed.len()`.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub(super) unsafe fn rows_avx512<const M: u8>(
    chunk: &ClusterChunk,
    packed: &[Block],
    shifts: &[[f32; 4]; 27],
    lj: &LjPair<f32>,
    buf: &mut [Block],
) -> EnergyVirial<f64> {
    let n = packed.len();
    let zero = _mm512_setzero_ps();
    let two = _mm512_set1_ps(2.0);
    let (lj1, lj2) = (_mm512_set1_ps(lj.lj1), _mm512_set1_ps(lj.lj2));
    let (lj3, lj4, off) = (_mm512_set1_ps(lj.lj3), _mm512_set1_ps(lj.lj4), _mm512_set1_ps(lj.offset));
    let rc2 = _mm512_set1_ps(lj.rcut_sq);
    let mut sums = EnergyVirial::<f64>::default();
    for (ci, h, entries) in chunk.rows() {
        if ci >= n {
            break;
        }
        let bi = packed.get_unchecked(ci);
        // Registers 2h and 2h + 1: atoms 4h, 4h + 1 and 4h + 2, 4h + 3.
        let pick = [pick(2 * h), pick(2 * h + 1)];
        let xi = [load_half(bi, 0, &pick), load_half(bi, 1, &pick), load_half(bi, 2, &pick)];
        let mut fi = [[zero; 2]; 3];
        let (mut e_acc, mut w_acc) = (zero, zero);
        let mut shift_acc = [zero; 6];
        for &e in entries {
            let Some((cj, bj, s, own)) = resolve(e, ci, packed, shifts) else { continue };
            let (xj, yj, zj) = (load_j(bj, 0, s[0]), load_j(bj, 1, s[1]), load_j(bj, 2, s[2]));
            let mut fj = [zero; 3];
            for r in 0..2 {
                let keep: u16 = if own { DIAG[2 * h + r] } else { 0xffff };
                let dx = _mm512_sub_ps(xi[0][r], xj);
                let dy = _mm512_sub_ps(xi[1][r], yj);
                let dz = _mm512_sub_ps(xi[2][r], zj);
                let rsq = _mm512_fmadd_ps(dz, dz, _mm512_fmadd_ps(dy, dy, _mm512_mul_ps(dx, dx)));
                let mask = _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(
                    _mm512_mask_cmp_ps_mask::<_CMP_GT_OQ>(keep, rsq, zero),
                    rsq,
                    rc2,
                );
                // rcp14 plus one Newton step: ~2^-28 relative error, below f32's ulp.
                let a = _mm512_maskz_rcp14_ps(mask, rsq);
                let r2inv = _mm512_mul_ps(a, _mm512_fnmadd_ps(rsq, a, two));
                let r6inv = _mm512_mul_ps(_mm512_mul_ps(r2inv, r2inv), r2inv);
                let fd = _mm512_mul_ps(_mm512_mul_ps(r6inv, _mm512_fmsub_ps(lj1, r6inv, lj2)), r2inv);
                fi[0][r] = _mm512_fmadd_ps(dx, fd, fi[0][r]);
                fi[1][r] = _mm512_fmadd_ps(dy, fd, fi[1][r]);
                fi[2][r] = _mm512_fmadd_ps(dz, fd, fi[2][r]);
                fj[0] = _mm512_fnmadd_ps(dx, fd, fj[0]);
                fj[1] = _mm512_fnmadd_ps(dy, fd, fj[1]);
                fj[2] = _mm512_fnmadd_ps(dz, fd, fj[2]);
                if M & mode::ENERGY != 0 {
                    let en = _mm512_sub_ps(_mm512_mul_ps(r6inv, _mm512_fmsub_ps(lj3, r6inv, lj4)), off);
                    e_acc = _mm512_add_ps(e_acc, _mm512_maskz_mov_ps(mask, en));
                    w_acc = _mm512_fmadd_ps(rsq, fd, w_acc);
                }
            }
            if M & mode::STRESS != 0 {
                // The image-shift term (see `ClusterList::forces`), zero for unshifted
                // entries: summed for every entry, so no branch to mispredict.
                let sv = [_mm512_set1_ps(s[0]), _mm512_set1_ps(s[1]), _mm512_set1_ps(s[2])];
                for (q, &(a, b)) in TENSOR_AXES.iter().enumerate() {
                    shift_acc[q] = _mm512_fmadd_ps(sv[a], fj[b], shift_acc[q]);
                }
            }
            // The two halves of a register are the same j-atoms: fold them into j's forces.
            let out = buf.get_unchecked_mut(cj);
            for (d, f) in fj.iter().enumerate() {
                let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(*f)));
                let p = out.0[d].as_mut_ptr();
                _mm256_store_ps(p, _mm256_add_ps(_mm256_load_ps(p), _mm256_add_ps(_mm512_castps512_ps256(*f), hi)));
            }
        }
        let out = buf.get_unchecked_mut(ci);
        for (d, f) in fi.iter().enumerate() {
            let p = out.0[d].as_mut_ptr().add(4 * h);
            _mm_storeu_ps(p, _mm_add_ps(_mm_loadu_ps(p), reduce_half(f[0], f[1])));
        }
        if M & mode::STRESS != 0 {
            for q in 0..6 {
                sums.tensor[q] += sum_pd(shift_acc[q]);
            }
        }
        if M & mode::ENERGY != 0 {
            sums.energy += sum_pd(e_acc);
            sums.virial += sum_pd(w_acc);
        }
    }
    sums
}
