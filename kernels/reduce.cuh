// Deterministic block reductions (fixed order for a given block size): warp shuffles, then
// one value per warp through shared memory. BLOCK must be a multiple of 32, at most 1024.
#pragma once
#include "common.cuh"

__device__ __forceinline__ double warp_sum(double v) {
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// Threads of the one-block kernels that total per-block partials every step (finish_step,
// tunnel_latch): a million atoms leave 8,192 partials at 128 threads a block, and one block
// of BLOCK threads reading them took 17 us a step (one memory latency per round).
#define TOTAL_THREADS 1024

// Sum of `v` over a block of NT threads; the result is valid in thread 0. `scratch` holds 32
// doubles.
template <int NT>
__device__ __forceinline__ double block_sum_n(double v, double* scratch) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    double s = 0.0;
    if (warp == 0) {
        s = lane < (NT / 32) ? scratch[lane] : 0.0;
        s = warp_sum(s);
    }
    return s;
}

// Sum of `v` over the block (BLOCK threads); the result is valid in thread 0.
__device__ __forceinline__ double block_sum(double v, double* scratch) { return block_sum_n<BLOCK>(v, scratch); }

// Sums four values over the block into out[0..4] (thread 0 writes).
__device__ __forceinline__ void block_sum4(double a, double b, double c, double d, double* out) {
    __shared__ double scratch[32];
    double s0 = block_sum(a, scratch);
    double s1 = block_sum(b, scratch);
    double s2 = block_sum(c, scratch);
    double s3 = block_sum(d, scratch);
    if (threadIdx.x == 0) {
        out[0] = s0;
        out[1] = s1;
        out[2] = s2;
        out[3] = s3;
    }
}

// The block's sums of the kinetic tensor m v_a v_b (xx, yy, zz, xy, xz, yz; m = 0 for threads
// without an atom) into partials_stress[6 * (kin_off + block) ..], for a pressure-tensor
// step (stress.cu). Every thread of the block must call it.
__device__ __forceinline__ void kinetic_tensor(const Bufs& b, int kin_off, double m, const real_s4& v) {
    __shared__ double scratch[32];
    double u[3] = {(double)v.x, (double)v.y, (double)v.z};
    const int ia[6] = {0, 1, 2, 0, 0, 1}, ib[6] = {0, 1, 2, 1, 2, 2};
    #pragma unroll
    for (int k = 0; k < 6; k++) {
        double t = block_sum(m * u[ia[k]] * u[ib[k]], scratch);
        if (threadIdx.x == 0) b.partials_stress[6 * ((size_t)kin_off + blockIdx.x) + k] = t;
    }
}
