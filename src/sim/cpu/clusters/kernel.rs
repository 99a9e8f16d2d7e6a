//! The cluster-pair loops' safe entry points: which ISA-specific loop serves each SIMD level
//! (`cluster_kernel` on AVX-512, `cluster_avx2` on AVX2+FMA) and the checks their `unsafe`
//! rests on.

use super::{Block, ClusterChunk, LjPair};
use crate::sim::cpu::kernels::EnergyVirial;
use crate::sim::cpu::simd::{self, SimdLevel};

/// For each entry of `near` (candidate j-clusters of i-cluster `ci`, as in the list), which
/// halves of `ci` (bit h: atoms 4h..4h + 4) have an atom within `sqrt(r2)` of one of the
/// j-cluster's (for `ci` itself unshifted, only pairs j > i count); written to `halves`.
/// Entries naming clusters outside `packed` get 0.
///
/// Panics when the CPU cannot run `level`'s loop (see [`runnable`]) or `ci` is outside
/// `packed`.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
pub fn near_halves(
    level: SimdLevel,
    ci: usize,
    near: &[u32],
    packed: &[Block],
    shifts: &[[f32; 4]; 27],
    r2: f32,
    halves: &mut Vec<u8>,
) {
    assert!(runnable(level), "no cluster-pair loop for {level:?} on this CPU");
    assert!(ci < packed.len(), "cluster outside the list");
    halves.clear();
    halves.reserve(near.len());
    #[cfg(target_arch = "x86_64")]
    match level {
        // SAFETY: AVX-512 is present (runnable); `ci` is in bounds and every j is checked.
        SimdLevel::Avx512 => unsafe {
            super::super::cluster_kernel::near_halves_avx512(ci, near, packed, shifts, r2, halves)
        },
        // SAFETY: AVX2 and FMA are present (runnable).
        SimdLevel::Avx2 => unsafe {
            super::super::cluster_avx2::near_halves_avx2(ci, near, packed, shifts, r2, halves)
        },
        SimdLevel::Base => unreachable!("not runnable"),
    }
}

/// Forces of the i-clusters of `chunk` (and their reactions) added to `buf`, from the packed
/// positions; returns the sums of mode `M` (see `kernels::mode`). Entries naming clusters outside `packed`
/// are skipped.
///
/// Panics when the CPU cannot run `level`'s loop (see [`runnable`]) or `buf` is shorter
/// than `packed`.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
pub fn rows<const M: u8>(
    level: SimdLevel,
    chunk: &ClusterChunk,
    packed: &[Block],
    shifts: &[[f32; 4]; 27],
    lj: &LjPair<f32>,
    buf: &mut [Block],
) -> EnergyVirial<f64> {
    assert!(runnable(level), "no cluster-pair loop for {level:?} on this CPU");
    assert!(buf.len() >= packed.len(), "force buffer shorter than the clusters");
    #[cfg(target_arch = "x86_64")]
    match level {
        // SAFETY: AVX-512 is present (runnable); every index is checked against
        // `packed.len() <= buf.len()`.
        SimdLevel::Avx512 => unsafe { super::super::cluster_kernel::rows_avx512::<M>(chunk, packed, shifts, lj, buf) },
        // SAFETY: AVX2 and FMA are present (runnable).
        SimdLevel::Avx2 => unsafe { super::super::cluster_avx2::rows_avx2::<M>(chunk, packed, shifts, lj, buf) },
        SimdLevel::Base => unreachable!("not runnable"),
    }
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!("not runnable")
}

/// Whether this CPU can run the cluster loop of `level`: AVX-512 where it is the level in
/// use (see `simd`), AVX2 wherever the CPU has AVX2 and FMA (so tests can run it beside
/// AVX-512), never the baseline.
pub fn runnable(level: SimdLevel) -> bool {
    match level {
        SimdLevel::Avx512 => simd::level() == SimdLevel::Avx512,
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma"),
        _ => false,
    }
}
