// Per-bin sums of per-atom quantities with few global atomics (kernels/fields.cu,
// kernels/flow_profile.cu): the lanes of a warp that share a bin are grouped
// (__match_any_sync), permuted through shared memory so each group is a run of consecutive
// lanes, and summed by a segmented scan over the runs (as many doubling steps as the largest
// group needs); one lane per group and warp then does the atomics.
#pragma once
#include "common.cuh"

// Sums q over each run of consecutive lanes of the warp that share `key` (a segmented
// inclusive scan, as many doubling steps as the warp's longest run needs); true on each
// run's last lane, which then holds the run's sums. Every lane of the warp must call it.
template <typename T, int K>
__device__ __forceinline__ bool warp_run_sums(int key, T (&q)[K]) {
    const unsigned full = 0xffffffffu;
    int lane = (int)(threadIdx.x & 31);
    int prev = __shfl_up_sync(full, key, 1);
    unsigned heads = __ballot_sync(full, lane == 0 || prev != key);
    int start = 31 - __clz(heads & (full >> (31 - lane)));
    int span = lane - start + 1;
    for (int o = 16; o; o >>= 1) span = max(span, __shfl_xor_sync(full, span, o));
    for (int d = 1; d < span; d <<= 1) {
        #pragma unroll
        for (int k = 0; k < K; k++) {
            T t = __shfl_up_sync(full, q[k], d);
            if (lane - d >= start) q[k] += t;
        }
    }
    return lane == 31 || ((heads >> (lane + 1)) & 1u);
}

// Per-warp scratch of warp_bin_sums: one value and one key per lane.
template <typename T>
struct WarpScratch {
    T value[32];
    int key[32];
};

// Sums q over all lanes of the warp that share `key`, wherever they are in the warp; true on
// one lane per key, which then holds the sums in q and the key in `key`. `s` is this warp's
// scratch. Every lane of the warp must call it.
template <typename T, int K>
__device__ __forceinline__ bool warp_bin_sums(int& key, T (&q)[K], WarpScratch<T>& s) {
    const unsigned full = 0xffffffffu;
    int lane = (int)(threadIdx.x & 31);
    unsigned peers = __match_any_sync(full, key);
    int leader = __ffs(peers) - 1;
    int rank = __popc(peers & ((1u << lane) - 1u));
    // Each group's first place: the lanes of the groups whose leaders come first.
    int size = lane == leader ? __popc(peers) : 0;
    int incl = size;
    for (int d = 1; d < 32; d <<= 1) {
        int t = __shfl_up_sync(full, incl, d);
        if (lane >= d) incl += t;
    }
    int dest = __shfl_sync(full, incl - size, leader) + rank;
    s.key[dest] = key;
    __syncwarp();
    key = s.key[lane];
    #pragma unroll
    for (int k = 0; k < K; k++) {
        __syncwarp();
        s.value[dest] = q[k];
        __syncwarp();
        q[k] = s.value[lane];
    }
    __syncwarp();
    return warp_run_sums(key, q);
}
