// The force on each body (src/sim/bodies.rs): obstacle shapes first, then the wall faces on
// walled axes (c.body_wall[2 * axis + hi] is the face's body index, -1 on periodic axes). The
// force epilogue and the obstacle pass add the reaction of each atom's wall and obstacle forces
// (minus the force on the atom) into b.body_fix, three 64-bit fixed-point sums per body
// (2^-32 resolution; integer adds give the same bits in any order, so the sums do not depend
// on block size or scheduling), aggregated per warp before one atomic per warp and body.
// bodies_latch (bodies.cu) moves them into the f64 running sums after every step's force pass.
#pragma once
#include "common.cuh"

#define BODY_SCALE 4294967296.0
#define FULL_WARP 0xffffffffu

__device__ __forceinline__ long long body_fixed(double v) { return (long long)llrint(v * BODY_SCALE); }

// The reaction of one atom's wall pushes wb[2 * axis + hi] (each positive away from its face)
// on the wall bodies. Every lane of the warp must call it (zeros for lanes with no atom).
__device__ __forceinline__ void bodies_add_walls(const Consts& c, const Bufs& b, const double wb[6]) {
    #pragma unroll
    for (int f = 0; f < 6; f++) {
        int body = c.body_wall[f];
        if (body < 0) continue;
        // The low face pushes atoms up the axis, so the atom pushes it down; the high face
        // the other way.
        long long v = body_fixed((f & 1) ? wb[f] : -wb[f]);
        if (!__any_sync(FULL_WARP, v != 0)) continue;
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL_WARP, v, off);
        if ((threadIdx.x & 31) == 0) atomicAdd(b.body_fix + 3 * body + (f >> 1), (unsigned long long)v);
    }
}

// The reaction of one atom's obstacle force (fx, fy) on shape `shape` (-1: none). Lanes of a
// warp with the same shape are summed first (one atomic per shape and warp). Every lane of
// the warp must call it.
__device__ __forceinline__ void bodies_add_obstacle(const Bufs& b, int shape, double fx, double fy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
    // No __match_any_sync before Volta: one atomic pair per atom.
    if (shape >= 0) {
        atomicAdd(b.body_fix + 3 * shape, (unsigned long long)body_fixed(-fx));
        atomicAdd(b.body_fix + 3 * shape + 1, (unsigned long long)body_fixed(-fy));
    }
#else
    unsigned int with = __ballot_sync(FULL_WARP, shape >= 0);
    if (shape < 0) return;
    unsigned int peers = __match_any_sync(with, shape);
    long long vx = body_fixed(-fx), vy = body_fixed(-fy);
    long long sx = 0, sy = 0;
    for (unsigned int m = peers; m; m &= m - 1) {
        int src = __ffs(m) - 1;
        sx += __shfl_sync(peers, vx, src);
        sy += __shfl_sync(peers, vy, src);
    }
    if ((int)(threadIdx.x & 31) == __ffs(peers) - 1) {
        atomicAdd(b.body_fix + 3 * shape, (unsigned long long)sx);
        atomicAdd(b.body_fix + 3 * shape + 1, (unsigned long long)sy);
    }
#endif
}

// The reaction (minus `f`) of one atom's force f on body `body`, the same body on every lane
// (a wall face): summed over the warp, one atomic per component. Every lane must call it.
__device__ __forceinline__ void bodies_add_vec(const Bufs& b, int body, const double f[3]) {
    #pragma unroll
    for (int j = 0; j < 3; j++) {
        long long v = body_fixed(-f[j]);
        if (!__any_sync(FULL_WARP, v != 0)) continue;
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL_WARP, v, off);
        if ((threadIdx.x & 31) == 0) atomicAdd(b.body_fix + 3 * body + j, (unsigned long long)v);
    }
}

// The reaction of one atom's force f (three components) on shape `shape` (-1: none), as
// bodies_add_obstacle with z. Every lane of the warp must call it.
__device__ __forceinline__ void bodies_add_shape3(const Bufs& b, int shape, const double f[3]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
    if (shape >= 0) {
        #pragma unroll
        for (int j = 0; j < 3; j++) atomicAdd(b.body_fix + 3 * shape + j, (unsigned long long)body_fixed(-f[j]));
    }
#else
    unsigned int with = __ballot_sync(FULL_WARP, shape >= 0);
    if (shape < 0) return;
    unsigned int peers = __match_any_sync(with, shape);
    long long v[3] = {body_fixed(-f[0]), body_fixed(-f[1]), body_fixed(-f[2])};
    long long s[3] = {0, 0, 0};
    for (unsigned int m = peers; m; m &= m - 1) {
        int src = __ffs(m) - 1;
        #pragma unroll
        for (int j = 0; j < 3; j++) s[j] += __shfl_sync(peers, v[j], src);
    }
    if ((int)(threadIdx.x & 31) == __ffs(peers) - 1) {
        #pragma unroll
        for (int j = 0; j < 3; j++) atomicAdd(b.body_fix + 3 * shape + j, (unsigned long long)s[j]);
    }
#endif
}

// bodies_latch's work (bodies.cu) for the threads of one block: each body component on its
// own thread (a fixed order). Also called by block 0 of the tunnel's fused integrator
// (tunnel.cu), which runs after the force pass as the latch would.
__device__ __forceinline__ void bodies_latch_block(const Consts& c, const Bufs& b, int mode) {
    int m = 3 * c.n_bodies;
    int stride = m + 1;
    int record = (int)b.clock[1];
    for (int k = threadIdx.x; k <= m; k += blockDim.x) {
        double add = 1.0;
        if (k < m) {
            add = (double)(long long)b.body_fix[k] / 4294967296.0;
            b.body_fix[k] = 0ull;
        }
        if (mode < 0) continue;
        double s = b.body_sum[k] + add;
        if (mode == 1) {
            b.body_records[(size_t)record * stride + k] = s;
            s = 0.0;
        }
        b.body_sum[k] = s;
    }
}
