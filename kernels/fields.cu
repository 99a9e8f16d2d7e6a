// Flow-field sampling (src/flow, sim/cuda/engine/fields.rs): one thread per atom finds its bin
// as flow::Grid::bin_of does, and adds (1, m, m v, m |v|^2) into the window's per-bin sums
// acc[bin * 6 + q] (the layout of flow::Accumulator). Atoms of one warp that share a bin
// (most of them: atoms are sorted by cell) are summed by shuffles first, so one lane per bin
// and warp does the atomics.
#include "common.cuh"

// Mirrors the device parameters of flow::Grid (sim/cuda/engine/fields.rs: FieldGridArgs).
struct FieldGrid {
    double origin[3];
    double inv_cell[3];
    int n[3];
    int periodic[3];
    int walled[3];
    int pad;
};

// flow::grid::ROUND_OFF_BINS.
#define FIELD_ROUND_OFF_BINS 1e-9

// The bin along axis k of coordinate x, or -1 outside the grid (Grid::bin_of and Grid::edge).
__device__ __forceinline__ int field_axis(const FieldGrid& g, int k, double x) {
    double f = (x - g.origin[k]) * g.inv_cell[k];
    double n = (double)g.n[k];
    if (f >= 0.0 && f < n) return (int)f;
    double slack = g.walled[k] ? 1.0 : FIELD_ROUND_OFF_BINS;
    if (f >= n && f <= n + slack) return g.n[k] - 1;
    if (f < 0.0 && f >= -slack) return 0;
    if (g.periodic[k] && isfinite(f)) {
        double i = fmod(floor(f), n);
        if (i < 0.0) i += n;
        int b = (int)i;
        return b < g.n[k] - 1 ? b : g.n[k] - 1;
    }
    return -1;
}

extern "C" __global__ void __launch_bounds__(BLOCK) fields_sample(Consts c, Bufs b, FieldGrid g, double* acc) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int bin = -1;
    double q[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    if (i < c.n) {
        real_s4 x = b.pos[i];
        int ix = field_axis(g, 0, (double)x.x);
        int iy = field_axis(g, 1, (double)x.y);
        int iz = field_axis(g, 2, (double)x.z);
        if (ix >= 0 && iy >= 0 && iz >= 0) {
            bin = ix + g.n[0] * (iy + g.n[1] * iz);
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
