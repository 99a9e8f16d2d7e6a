// g(r) pair counts (src/sim/cuda/engine/rdf.rs): all pairs (tiled, the reference) or through
// an analysis cell grid of its own (cells at least r_max wide, bound into scratch arrays;
// the atoms' order and the list's cells are left alone). Each block counts into a shared
// histogram, then adds it to hist with global atomics: integer counts, so the order of the
// additions does not matter and both searches give the same counts. hist[bins] counts the
// centres (atoms inside the region; unused over the whole box).
//
// Over the whole box each pair counts once; over a region each ordered pair (centre inside,
// partner anywhere). The distance is SimBox::min_image's (src/physics/sim_box.rs) in IEEE
// operations that are never contracted, so the CPU backend finds the same bins.
#include "common.cuh"

// Mirrors `RdfArgs` in src/sim/cuda/launch.rs.
struct RdfArgs {
    double r_max;
    double lo[3];       // the centres' region [lo, hi) when region != 0
    double hi[3];
    double inv_cell[3]; // analysis grid: cells per unit length
    int dims[3];
    int n_cells;
    int bins;
    int region;
};

// |a - b|^2 under the minimum image, as SimBox::min_image and the CPU backend compute it.
__device__ __forceinline__ double rdf_r2(const Consts& c, const real_s4& a, const real_s4& b) {
    double d[3] = {__dsub_rn((double)a.x, (double)b.x), __dsub_rn((double)a.y, (double)b.y),
                   __dsub_rn((double)a.z, (double)b.z)};
    #pragma unroll
    for (int q = 0; q < 3; q++) {
        // |d| <= 0.49 len rounds to the image shift 0, which leaves d exactly as it is.
        if (c.periodic[q] && fabs(d[q]) > 0.49 * c.len[q])
            d[q] = __dsub_rn(d[q], __dmul_rn(c.len[q], rint(__ddiv_rn(d[q], c.len[q]))));
    }
    return __dadd_rn(__dadd_rn(__dmul_rn(d[0], d[0]), __dmul_rn(d[1], d[1])), __dmul_rn(d[2], d[2]));
}

// The distance bin of r2 (-1 at or beyond r_max), as observe.rs finds it.
__device__ __forceinline__ int rdf_bin_of(double r2, double r2max, double inv_dr, int bins) {
    if (!(r2 < r2max)) return -1;
    int k = (int)__dmul_rn(sqrt(r2), inv_dr);
    return k < bins ? k : -1;
}

__device__ __forceinline__ int rdf_inside(const RdfArgs& a, const real_s4& x) {
    double p[3] = {(double)x.x, (double)x.y, (double)x.z};
    int in = 1;
    #pragma unroll
    for (int k = 0; k < 3; k++) in &= p[k] >= a.lo[k] && p[k] < a.hi[k];
    return in;
}

// All pairs j > i, tiled through shared memory; over a region a pair counts once for each
// of its atoms that is a centre.
extern "C" __global__ void __launch_bounds__(BLOCK) hist_pairs(Consts c, Bufs b, RdfArgs a) {
    extern __shared__ unsigned int local[];
    __shared__ real_s4 tile[BLOCK];
    const int bins = a.bins;
    for (int k = threadIdx.x; k <= bins; k += BLOCK) local[k] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    real_s4 pi = b.pos[i < c.n ? i : 0];
    int wi = a.region ? rdf_inside(a, pi) : 1;
    if (a.region && i < c.n && wi) atomicAdd(&local[bins], 1u);
    double inv_dr = __ddiv_rn((double)bins, a.r_max), r2max = __dmul_rn(a.r_max, a.r_max);
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
                int w = a.region ? wi + rdf_inside(a, pj) : 1;
                if (!w) continue;
                int bin = rdf_bin_of(rdf_r2(c, pi, pj), r2max, inv_dr, bins);
                if (bin >= 0) atomicAdd(&local[bin], (unsigned int)w);
            }
        }
        __syncthreads();
    }
    for (int k = threadIdx.x; k <= bins; k += BLOCK)
        if (local[k]) atomicAdd(&b.hist[k], (unsigned long long)local[k]);
}

// The analysis cell of every atom (x fastest; clamped on walled axes, as cell_coords does),
// and the cells' atom counts.
extern "C" __global__ void __launch_bounds__(BLOCK) rdf_bin(Consts c, Bufs b, RdfArgs a, int* cell_of, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    real_s4 x = b.pos[i];
    double p[3] = {(double)x.x, (double)x.y, (double)x.z};
    int cc[3];
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        double u = floor((p[k] - c.lo[k]) * a.inv_cell[k]);
        int v = u != u || u < 0.0 ? 0 : (u > (double)(a.dims[k] - 1) ? a.dims[k] - 1 : (int)u);
        cc[k] = v;
    }
    int cell = (cc[2] * a.dims[1] + cc[1]) * a.dims[0] + cc[0];
    cell_of[i] = cell;
    atomicAdd(&count[cell], 1);
}

// Atoms into their cells' slots (any order inside a cell: the counts do not depend on it).
extern "C" __global__ void __launch_bounds__(BLOCK) rdf_scatter(Consts c, Bufs b, const int* cell_of, int* cursor,
                                                                 unsigned int* order) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    order[atomicAdd(&cursor[cell_of[i]], 1)] = (unsigned int)i;
}

// The cells around `v` along an axis of `m` cells: the cell and its two neighbours (wrapped
// on a periodic axis, cut at a wall), or every cell of a periodic axis of fewer than three,
// each once.
__device__ __forceinline__ int rdf_axis_cells(int v, int m, int periodic, int out[3]) {
    if (periodic && m < 3) {
        for (int q = 0; q < m; q++) out[q] = q;
        return m;
    }
    int k = 0;
    for (int o = -1; o <= 1; o++) {
        int u = v + o;
        if (u < 0 || u >= m) {
            if (!periodic) continue;
            u = u < 0 ? u + m : u - m;
        }
        out[k++] = u;
    }
    return k;
}

// One thread per atom, in cell order (a warp's atoms share their cells, so the candidates'
// loads are broadcasts): the partners in the 27 cells around its own. Over the whole box
// partners j > i; over a region every partner of a centre.
extern "C" __global__ void __launch_bounds__(BLOCK) rdf_cells(Consts c, Bufs b, RdfArgs a, const int* start,
                                                               const unsigned int* order, const int* cell_of) {
    extern __shared__ unsigned int local[];
    const int bins = a.bins;
    for (int k = threadIdx.x; k <= bins; k += BLOCK) local[k] = 0;
    __syncthreads();
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < c.n) {
        int i = (int)order[t];
        real_s4 pi = b.pos[i];
        int centre = a.region ? rdf_inside(a, pi) : 1;
        if (a.region && centre) atomicAdd(&local[bins], 1u);
        if (centre) {
            double inv_dr = __ddiv_rn((double)bins, a.r_max), r2max = __dmul_rn(a.r_max, a.r_max);
            int cell = cell_of[i];
            int cc[3] = {cell % a.dims[0], (cell / a.dims[0]) % a.dims[1], cell / (a.dims[0] * a.dims[1])};
            int xs[3], ys[3], zs[3];
            int nx = rdf_axis_cells(cc[0], a.dims[0], c.periodic[0], xs);
            int ny = rdf_axis_cells(cc[1], a.dims[1], c.periodic[1], ys);
            int nz = rdf_axis_cells(cc[2], a.dims[2], c.periodic[2], zs);
            for (int qz = 0; qz < nz; qz++)
                for (int qy = 0; qy < ny; qy++)
                    for (int qx = 0; qx < nx; qx++) {
                        int q = (zs[qz] * a.dims[1] + ys[qy]) * a.dims[0] + xs[qx];
                        int e = start[q + 1];
                        for (int s = start[q]; s < e; s++) {
                            int j = (int)order[s];
                            if (a.region ? j == i : j <= i) continue;
                            int bin = rdf_bin_of(rdf_r2(c, pi, b.pos[j]), r2max, inv_dr, bins);
                            if (bin >= 0) atomicAdd(&local[bin], 1u);
                        }
                    }
        }
    }
    __syncthreads();
    for (int k = threadIdx.x; k <= bins; k += BLOCK)
        if (local[k]) atomicAdd(&b.hist[k], (unsigned long long)local[k]);
}
