// Observables on the GPU (g(r) pair counts are in rdf.cu): speed and height histograms, and
// publishing positions for the renderer in canonical order as float4 (x, y, z, colour
// scalar). Normalisation happens on the host (src/analysis), shared with the CPU backend.
#include "common.cuh"

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

// Colour: 0 speed, 1 kinetic energy, 2 height, 3 species, 4 dye (the tag at the canonical
// index, kernels/dye.cu; `dye` null without a dye column: all untagged).
extern "C" __global__ void __launch_bounds__(BLOCK) publish(Consts c, Bufs b, int colour, const unsigned short* dye) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    real_s4 x = b.pos[i];
    real_s4 v = b.vel[i];
    double v2 = (double)v.x * (double)v.x + (double)v.y * (double)v.y + (double)v.z * (double)v.z;
    double s;
    if (colour == 0) s = sqrt(v2);
    else if (colour == 1) s = 0.5 * b.masses[type_of(x.w)] * v2;
    else if (colour == 2) s = (double)x.y;
    else if (colour == 4) s = dye ? (double)dye[b.ids[i]] : 0.0;
    else s = (double)type_of(x.w);
    b.out[b.ids[i]] = make_float4((float)x.x, (float)x.y, (float)x.z, (float)s);
}
