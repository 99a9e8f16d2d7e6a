// Binning atoms into cells and sorting them by cell along a space-filling curve (cells are
// stored in Morton order through `cell_rank`), then building the neighbour list, mirroring
// src/sim/cpu/cells.rs and neighbors.rs. Every kernel first reads flags[gate] and returns
// when it is zero, so the host can queue a whole rebuild every step and the GPU decides
// (the skin test in integrate_first sets FLAG_REBUILD). The order inside a cell is sorted
// by the previous index, so lists and force sums are deterministic.
#include "common.cuh"
#include "cells.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) cells_clear(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < c.n_cells) b.cell_count[k] = 0;
}

extern "C" __global__ void __launch_bounds__(BLOCK) cells_bin(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    int cc[3];
    cell_coords(c, b.pos[i], cc);
    int rank = cell_rank_of(c, b.cell_rank, cc);
    b.cell_of[i] = rank;
    b.slot[i] = atomicAdd(&b.cell_count[rank], 1);
}

// One block: exclusive prefix sum of cell_count into cell_start (n_cells + 1 entries).
extern "C" __global__ void __launch_bounds__(BLOCK) cells_scan(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    __shared__ int sums[BLOCK];
    __shared__ int carry;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int base = 0; base < c.n_cells; base += BLOCK) {
        int k = base + threadIdx.x;
        int v = k < c.n_cells ? b.cell_count[k] : 0;
        sums[threadIdx.x] = v;
        __syncthreads();
        // Hillis-Steele inclusive scan within the chunk.
        for (int off = 1; off < BLOCK; off <<= 1) {
            int t = threadIdx.x >= off ? sums[threadIdx.x - off] : 0;
            __syncthreads();
            sums[threadIdx.x] += t;
            __syncthreads();
        }
        if (k < c.n_cells) b.cell_start[k] = carry + sums[threadIdx.x] - v;
        __syncthreads();
        if (threadIdx.x == BLOCK - 1) carry += sums[BLOCK - 1];
        __syncthreads();
    }
    if (threadIdx.x == 0) b.cell_start[c.n_cells] = carry;
}

extern "C" __global__ void __launch_bounds__(BLOCK) cells_scatter(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    b.order[b.cell_start[b.cell_of[i]] + b.slot[i]] = (unsigned int)i;
}

// One thread per cell: insertion sort of the cell's atoms by their current index.
extern "C" __global__ void __launch_bounds__(BLOCK) cells_sort(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= c.n_cells) return;
    int s = b.cell_start[k], e = b.cell_start[k + 1];
    for (int x = s + 1; x < e; x++) {
        unsigned int v = b.order[x];
        int y = x - 1;
        while (y >= s && b.order[y] > v) {
            b.order[y + 1] = b.order[y];
            y--;
        }
        b.order[y + 1] = v;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK) permute_gather(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= c.n) return;
    unsigned int src = b.order[k];
    b.pos2[k] = b.pos[src];
    b.vel2[k] = b.vel[src];
    b.ids2[k] = b.ids[src];
}

extern "C" __global__ void __launch_bounds__(BLOCK) permute_copy(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= c.n) return;
    real_s4 x = b.pos2[k];
    b.pos[k] = x;
    b.vel[k] = b.vel2[k];
    b.ids[k] = b.ids2[k];
#if PRECISION == 1
    b.posf[k] = make_float4((float)x.x, (float)x.y, (float)x.z, (float)x.w);
#endif
}

// Full Verlet list within cutoff + skin from the 27 surrounding cells (atoms already sorted
// by cell, so cell r holds atoms cell_start[r] .. cell_start[r + 1]).
extern "C" __global__ void __launch_bounds__(BLOCK) nlist_build(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    real_s4 xi = b.pos[i];
    real_f4 pi = b.posf[i];
    int cc[3];
    cell_coords(c, xi, cc);
    int count = 0;
    real_f rl2 = (real_f)c.r_list_sq;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int r = neighbour_cell(c, b.cell_rank, cc, dx, dy, dz);
                if (r < 0) continue;
                int end = b.cell_start[r + 1];
                for (int j = b.cell_start[r]; j < end; j++) {
                    if (j == i) continue;
                    real_f4 pj = b.posf[j];
                    real_f ex = min_image(pi.x - pj.x, (real_f)c.len[0], (real_f)c.inv_len[0]);
                    real_f ey = min_image(pi.y - pj.y, (real_f)c.len[1], (real_f)c.inv_len[1]);
                    real_f ez = min_image(pi.z - pj.z, (real_f)c.len[2], (real_f)c.inv_len[2]);
                    if (ex * ex + ey * ey + ez * ez < rl2) {
                        if (count < c.max_nbrs) b.nlist[(size_t)count * c.n + i] = (unsigned int)j;
                        count++;
                    }
                }
            }
    if (count > c.max_nbrs) b.flags[FLAG_OVERFLOW] = 1;
    atomicMax(&b.flags[FLAG_MAX_NBRS_SEEN], count);
    b.ncount[i] = count < c.max_nbrs ? count : c.max_nbrs;
    b.pos_build[i] = xi;
}

// One thread: the rebuild is over.
extern "C" __global__ void __launch_bounds__(BLOCK) rebuild_done(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        if (gate == FLAG_REBUILD) b.flags[FLAG_REBUILD] = 0;
        b.flags[FLAG_BUILDS] += 1;
    }
}
