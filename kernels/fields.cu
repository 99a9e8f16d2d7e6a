// Flow-field sampling (src/flow, sim/cuda/engine/fields.rs): one thread per atom finds its bin
// as flow::Grid::bin_of does (flow_bin_of, common.cuh), and adds (1, m, m v, m |v|^2) into the window's per-bin sums
// acc[bin * 6 + q] (the layout of flow::Accumulator). Atoms of one warp that share a bin
// (most of them: atoms are sorted by cell) are summed by shuffles first, so one lane per bin
// and warp does the atomics.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) fields_sample(Consts c, Bufs b, FieldGrid g, double* acc) {
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
    // Every lane of the warp gets here (no early return), so the full mask is right.
    unsigned peers = __match_any_sync(0xffffffffu, bin);
    int leader = __ffs(peers) - 1;
    for (int k = 0; k < 6; k++) {
        double s = 0.0;
        for (unsigned rest = peers; rest; rest &= rest - 1) s += __shfl_sync(peers, q[k], __ffs(rest) - 1);
        q[k] = s;
    }
    if (bin >= 0 && (int)(threadIdx.x & 31) == leader) {
        double* out = acc + (size_t)bin * 6;
        for (int k = 0; k < 6; k++) atomicAdd(out + k, q[k]);
    }
}
