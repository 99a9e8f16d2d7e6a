// Deterministic block reductions (fixed order for a given block size): warp shuffles, then
// one value per warp through shared memory. BLOCK must be a multiple of 32, at most 1024.
#pragma once
#include "common.cuh"

__device__ __forceinline__ double warp_sum(double v) {
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// Sum of `v` over the block; the result is valid in thread 0. `scratch` holds 32 doubles.
__device__ __forceinline__ double block_sum(double v, double* scratch) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    double s = 0.0;
    if (warp == 0) {
        s = lane < (BLOCK / 32) ? scratch[lane] : 0.0;
        s = warp_sum(s);
    }
    return s;
}

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
