// Flow-field sampling (src/flow, sim/cuda/engine/fields.rs): each atom's bin as
// flow::Grid::bin_of finds it (flow_bin_of, common.cuh), and (1, m, m v, m |v|^2) added into
// the window's per-bin sums acc[bin * 6 + q] (the layout of flow::Accumulator), summed over
// the warp's atoms of each bin first (warp_bin_sums, binsum.cuh), so one lane per bin and
// warp does the atomics. With dye tags (`dye`, one unsigned short per atom by canonical
// index, dye[ids[i]]; null: no dye column) the tagged atom-samples of each bin are counted
// too, into acc[6 * bins + bin] after the sums (flow::Accumulator's dye channel), as a 7th
// value of the same warp sums; without tags that value and its shuffles are skipped.
#include "binsum.cuh"

// The sample of atom i (bin -1 outside the grid) summed into acc: K = 6 without dye, 7 with.
template <int K>
__device__ __forceinline__ void fields_add(const Consts& c, const Bufs& b, const FieldGrid& g, double* acc,
                                           const unsigned short* dye, WarpScratch<double>& scratch) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int bin = -1;
    double q[K];
    #pragma unroll
    for (int k = 0; k < K; k++) q[k] = 0.0;
    if (i < c.n) {
        real_s4 x = b.pos[i];
        bin = flow_bin_of(g, x);
        if (bin >= 0) {
            real_s4 v = b.vel[i];
            double m = b.masses[type_of(x.w)];
            double vx = (double)v.x, vy = (double)v.y, vz = (double)v.z;
            q[0] = 1.0;
            q[1] = m;
            q[2] = m * vx;
            q[3] = m * vy;
            q[4] = m * vz;
            q[5] = m * (vx * vx + vy * vy + vz * vz);
            if (K > 6) q[K - 1] = dye[b.ids[i]] != 0 ? 1.0 : 0.0;
        }
    }
    // Every lane of the warp gets here (no early return), as warp_bin_sums needs.
    if (warp_bin_sums(bin, q, scratch) && bin >= 0) {
        double* out = acc + (size_t)bin * 6;
        #pragma unroll
        for (int k = 0; k < 6; k++) atomicAdd(out + k, q[k]);
        if (K > 6 && q[K - 1] != 0.0) {
            size_t bins = (size_t)g.n[0] * (size_t)g.n[1] * (size_t)g.n[2];
            atomicAdd(acc + 6 * bins + bin, q[K - 1]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK) fields_sample(Consts c, Bufs b, FieldGrid g, double* acc, const unsigned short* dye) {
    __shared__ WarpScratch<double> scratch[BLOCK / 32];
    // `dye` is the same for every thread: the whole warp takes one branch.
    if (dye) {
        fields_add<7>(c, b, g, acc, dye, scratch[threadIdx.x / 32]);
    } else {
        fields_add<6>(c, b, g, acc, dye, scratch[threadIdx.x / 32]);
    }
}
