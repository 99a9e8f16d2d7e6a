// Transport sampling on the device (src/sim/cuda/engine/transport.rs; the contract is
// src/transport/spec.rs, mirrored from src/sim/cpu/transport.rs): unwrapped positions and
// the stored MSD and VACF origins are kept by canonical index, so re-sorting is invisible.
// The kernels are nodes of the step graphs, launched after the steps divisible by `every`;
// everything that changes from sample to sample follows from the step (b.clock[0]) and
// constants: the slot a new origin goes to, which slots hold an origin and since which step
// (origin_of), and the record rows. transport_sample carries the unwrapped positions forward
// (minimum image since the last sample on periodic axes), stores a new origin when one is
// due, and leaves per-block, per-species sums of |u - u0|^2 (MSD) or v . v0 (VACF) for
// every held origin; transport_reduce adds the blocks in a fixed order into the record of
// (sample, slot) in a ring of `rows` samples. Nothing crosses to the host until the records
// are read.
#include "common.cuh"
#include "reduce.cuh"

struct TransportArgs {
    double* u;                // per canonical index: unwrapped x, y, z, unused
    double* last;             // per canonical index: the wrapped position at the last MSD sample
    double* origins;          // slots x n: the stored states by canonical index, real_s4 (MSD: the
                              // unwrapped position; VACF: the velocity)
    double* partial;          // blocks x slots x nsp: transport_sample's block sums
    double* records;          // rows x slots x nsp: the sums of (sample, slot)
    unsigned long long start; // the step sampling started at (no origin at or before it)
    unsigned long long every; // sample interval
    unsigned long long origin_every;
    int slots;
    int nsp;                  // species
    int msd;                  // 1: unwrapped positions (MSD), 0: velocities (VACF)
    int blocks;               // blocks of transport_sample
    int rows;                 // samples the record ring holds
    int pad;
};

// The origin step slot k holds at sample step `step` (a new origin at `step` included), or
// -1 when it holds none: origins are taken at multiples m of origin_every after the start,
// into slot m % slots.
__device__ __forceinline__ long long origin_of(const TransportArgs& t, unsigned long long step, int k) {
    unsigned long long m_max = step / t.origin_every;
    unsigned long long back = (m_max % (unsigned long long)t.slots + (unsigned long long)(t.slots - k)) %
                              (unsigned long long)t.slots;
    if (back > m_max) return -1;
    unsigned long long o = (m_max - back) * t.origin_every;
    return o > t.start ? (long long)o : -1;
}

// The unwrapped positions and the last sampled ones start as the wrapped positions now.
extern "C" __global__ void __launch_bounds__(BLOCK) transport_init(Consts c, Bufs b, TransportArgs t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    size_t id = b.ids[i];
    real_s4 x = b.pos[i];
    double p[3] = {(double)x.x, (double)x.y, (double)x.z};
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        t.u[4 * id + k] = p[k];
        t.last[4 * id + k] = p[k];
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK) transport_sample(Consts c, Bufs b, TransportArgs t) {
    __shared__ double scratch[32];
    unsigned long long step = b.clock[0];
    int new_slot = step % t.origin_every == 0 ? (int)((step / t.origin_every) % (unsigned long long)t.slots) : -1;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool live = i < c.n;
    double now[3] = {0.0, 0.0, 0.0};
    int sp = -1;
    size_t id = 0;
    if (live) {
        id = b.ids[i];
        real_s4 x = b.pos[i];
        sp = type_of(x.w);
        if (t.msd) {
            double p[3] = {(double)x.x, (double)x.y, (double)x.z};
            #pragma unroll
            for (int k = 0; k < 3; k++) {
                // inv_len is 0 on walled axes: the plain difference there.
                double d = p[k] - t.last[4 * id + k];
                d -= c.len[k] * rint(d * c.inv_len[k]);
                now[k] = t.u[4 * id + k] + d;
                t.u[4 * id + k] = now[k];
                t.last[4 * id + k] = p[k];
            }
        } else {
            real_s4 v = b.vel[i];
            now[0] = (double)v.x;
            now[1] = (double)v.y;
            now[2] = (double)v.z;
        }
        if (new_slot >= 0) {
            // In the state's precision: the velocity exactly; the unwrapped position to the
            // state's own resolution (half the bytes in single).
            real_s4* o = reinterpret_cast<real_s4*>(t.origins) + (size_t)new_slot * c.n + id;
            *o = t.msd ? real_s4{(real_s)now[0], (real_s)now[1], (real_s)now[2], (real_s)0} : b.vel[i];
        }
    }
    for (int s = 0; s < t.slots; s++) {
        if (origin_of(t, step, s) < 0) continue;
        double term = 0.0;
        if (live) {
            real_s4 o = ldcs4(reinterpret_cast<const real_s4*>(t.origins) + (size_t)s * c.n + id);
            if (t.msd) {
                double dx = now[0] - (double)o.x, dy = now[1] - (double)o.y, dz = now[2] - (double)o.z;
                term = dx * dx + dy * dy + dz * dz;
            } else {
                term = now[0] * (double)o.x + now[1] * (double)o.y + now[2] * (double)o.z;
            }
        }
        for (int q = 0; q < t.nsp; q++) {
            double tot = block_sum(sp == q ? term : 0.0, scratch);
            if (threadIdx.x == 0) t.partial[((size_t)blockIdx.x * t.slots + s) * t.nsp + q] = tot;
        }
    }
}

// One block per slot: its blocks' sums added in a fixed order into its record.
extern "C" __global__ void __launch_bounds__(BLOCK) transport_reduce(Consts c, Bufs b, TransportArgs t) {
    __shared__ double scratch[32];
    unsigned long long step = b.clock[0];
    int s = blockIdx.x;
    if (origin_of(t, step, s) < 0) return;
    size_t row = (size_t)((step / t.every) % (unsigned long long)t.rows) * t.slots + s;
    for (int q = 0; q < t.nsp; q++) {
        double acc = 0.0;
        for (int k = threadIdx.x; k < t.blocks; k += blockDim.x) acc += t.partial[((size_t)k * t.slots + s) * t.nsp + q];
        double tot = block_sum(acc, scratch);
        if (threadIdx.x == 0) t.records[row * t.nsp + q] = tot;
    }
}
