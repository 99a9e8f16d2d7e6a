// Flow-field sampling (src/flow, sim/cuda/engine/fields.rs): each atom's bin as
// flow::Grid::bin_of finds it (flow_bin_of, common.cuh), and (1, m, m v, m |v|^2) added into
// the window's per-bin sums acc[bin * 6 + q] (the layout of flow::Accumulator), summed over
// the warp's atoms of each bin first (warp_bin_sums, binsum.cuh), so one lane per bin and
// warp does the atomics.
#include "binsum.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) fields_sample(Consts c, Bufs b, FieldGrid g, double* acc) {
    __shared__ WarpScratch<double> scratch[BLOCK / 32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int bin = -1;
    double q[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
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
        }
    }
    // Every lane of the warp gets here (no early return), as warp_bin_sums needs.
    if (warp_bin_sums(bin, q, scratch[threadIdx.x / 32]) && bin >= 0) {
        double* out = acc + (size_t)bin * 6;
        #pragma unroll
        for (int k = 0; k < 6; k++) atomicAdd(out + k, q[k]);
    }
}
