// Observables on the GPU: pair-distance histogram for g(r) (tiled all pairs, per-block
// shared histograms), speed and height histograms, and publishing positions for the
// renderer in canonical order as float4 (x, y, z, colour scalar). Normalisation happens on
// the host (src/analysis), shared with the CPU backend.
#include "common.cuh"

// Pairs j > i with r < r_max into hist[bins] (integer counts, so the order does not matter).
extern "C" __global__ void __launch_bounds__(BLOCK) hist_pairs(Consts c, Bufs b, double r_max, int bins) {
    extern __shared__ unsigned int local[];
    __shared__ real_s4 tile[BLOCK];
    for (int k = threadIdx.x; k < bins; k += BLOCK) local[k] = 0;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    real_s4 pi = b.pos[i < c.n ? i : 0];
    double inv_dr = (double)bins / r_max, r2max = r_max * r_max;
    // Only tiles at or after this block's first atom hold partners j > i.
    for (int base = blockIdx.x * BLOCK; base < c.n; base += BLOCK) {
        int j = base + threadIdx.x;
        if (j < c.n) tile[threadIdx.x] = b.pos[j];
        __syncthreads();
        int count = c.n - base < BLOCK ? c.n - base : BLOCK;
        if (i < c.n) {
            for (int k = 0; k < count; k++) {
                if (base + k <= i) continue;
                real_s4 pj = tile[k];
                double d[3] = {(double)pi.x - (double)pj.x, (double)pi.y - (double)pj.y, (double)pi.z - (double)pj.z};
                double r2 = 0.0;
                for (int q = 0; q < 3; q++) {
                    double dq = d[q] - c.len[q] * rint(d[q] * c.inv_len[q]);
                    r2 += dq * dq;
                }
                if (r2 < r2max) {
                    int bin = (int)(sqrt(r2) * inv_dr);
                    if (bin < bins) atomicAdd(&local[bin], 1u);
                }
            }
        }
        __syncthreads();
    }
    for (int k = threadIdx.x; k < bins; k += BLOCK)
        if (local[k]) atomicAdd(&b.hist[k], (unsigned long long)local[k]);
}

extern "C" __global__ void __launch_bounds__(BLOCK) hist_speed(Consts c, Bufs b, double v_max, int bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    real_s4 v = b.vel[i];
    double s = sqrt((double)v.x * (double)v.x + (double)v.y * (double)v.y + (double)v.z * (double)v.z);
    int k = (int)(s / v_max * (double)bins);
    if (k >= 0 && k < bins) atomicAdd(&b.hist[k], 1ull);
}

extern "C" __global__ void __launch_bounds__(BLOCK) hist_height(Consts c, Bufs b, int bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    double u = ((double)b.pos[i].y - c.lo[1]) / c.len[1];
    int k = (int)floor(u * (double)bins);
    k = k < 0 ? 0 : (k > bins - 1 ? bins - 1 : k);
    atomicAdd(&b.hist[k], 1ull);
}

// Colour: 0 speed, 1 kinetic energy, 2 height, 3 species.
extern "C" __global__ void __launch_bounds__(BLOCK) publish(Consts c, Bufs b, int colour) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    real_s4 x = b.pos[i];
    real_s4 v = b.vel[i];
    double v2 = (double)v.x * (double)v.x + (double)v.y * (double)v.y + (double)v.z * (double)v.z;
    double s;
    if (colour == 0) s = sqrt(v2);
    else if (colour == 1) s = 0.5 * b.masses[type_of(x.w)] * v2;
    else if (colour == 2) s = (double)x.y;
    else s = (double)type_of(x.w);
    b.out[b.ids[i]] = make_float4((float)x.x, (float)x.y, (float)x.z, (float)s);
}
