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

// Exclusive prefix sum of cell_count into cell_start (n_cells + 1 entries) in three passes:
// each block of SCAN_THREADS scans its cells and leaves its total in scan_sums, one block
// scans the totals, and every cell adds its block's offset.
#define SCAN_THREADS 1024

// Exclusive scan of v over a block of SCAN_THREADS threads (warp shuffles, then the warps'
// totals); every thread gets the block's total too. Contains __syncthreads: call from all.
__device__ __forceinline__ int block_exclusive_scan(int v, int& total) {
    __shared__ int offs[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int incl = v;
    #pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        int u = __shfl_up_sync(0xffffffffu, incl, off);
        if (lane >= off) incl += u;
    }
    __syncthreads();
    if (lane == 31) offs[warp] = incl;
    __syncthreads();
    int w = offs[lane], wi = w;
    #pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        int u = __shfl_up_sync(0xffffffffu, wi, off);
        if (lane >= off) wi += u;
    }
    total = __shfl_sync(0xffffffffu, wi, 31);
    int before = __shfl_sync(0xffffffffu, wi - w, warp);
    return before + incl - v;
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS) cells_scan_blocks(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = blockIdx.x * SCAN_THREADS + threadIdx.x;
    int total;
    int ex = block_exclusive_scan(k < c.n_cells ? b.cell_count[k] : 0, total);
    if (k < c.n_cells) b.cell_start[k] = ex;
    if (threadIdx.x == 0) b.scan_sums[blockIdx.x] = total;
}

// One block: exclusive scan of the block totals in place; cell_start[n_cells] = the total.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) cells_scan_top(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int blocks = (c.n_cells + SCAN_THREADS - 1) / SCAN_THREADS;
    int carry = 0;
    for (int base = 0; base < blocks; base += SCAN_THREADS) {
        int k = base + threadIdx.x;
        int total;
        int ex = block_exclusive_scan(k < blocks ? b.scan_sums[k] : 0, total);
        if (k < blocks) b.scan_sums[k] = carry + ex;
        carry += total;
    }
    if (threadIdx.x == 0) b.cell_start[c.n_cells] = carry;
}

extern "C" __global__ void __launch_bounds__(BLOCK) cells_scan_add(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < c.n_cells) b.cell_start[k] += b.scan_sums[k / SCAN_THREADS];
}

extern "C" __global__ void __launch_bounds__(BLOCK) cells_scatter(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    b.order[b.cell_start[b.cell_of[i]] + b.slot[i]] = (unsigned int)i;
}

// One warp per cell: each atom's place is the number of the cell's atoms with a smaller
// index (cells of up to 32 atoms, all in registers); a larger cell is insertion-sorted by
// its warp's first lane.
extern "C" __global__ void __launch_bounds__(BLOCK) cells_sort(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (k >= c.n_cells) return;
    int s = b.cell_start[k], e = b.cell_start[k + 1];
    if (e - s <= 32) {
        unsigned int v = lane < e - s ? b.order[s + lane] : 0xFFFFFFFFu;
        int rank = 0;
        for (int t = 0; t < 32; t++) rank += __shfl_sync(0xffffffffu, v, t) < v;
        if (lane < e - s) b.order[s + rank] = v;
        return;
    }
    if (lane != 0) return;
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
// by cell, so cell r holds atoms cell_start[r] .. cell_start[r + 1]), in packs of 8 with the
// last pack padded by the atom itself (see Bufs::nlist). At small N (c.tpa > 1) NB_LANES
// threads share an atom and read a cell's atoms side by side, hits placed in
// cell-then-index order by a ballot, so the list is the one a single thread would build; at
// large N one thread per atom keeps NB_UNROLL read-only loads in flight. A neighbouring cell
// farther from the atom than the list range is skipped (about a quarter of them), and a
// periodic cell's image shift is applied to the atom once per cell.
#define NB_LANES 8
#define NB_UNROLL 4
extern "C" __global__ void __launch_bounds__(BLOCK) nlist_build(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int lanes = c.tpa > 1 ? NB_LANES : 1;
    int i = t / lanes, lane = t & (lanes - 1);
    // Whole groups leave together (n * lanes threads are launched in whole groups).
    if (i >= c.n) return;
    unsigned int group = (lanes == 32 ? 0xffffffffu : (1u << lanes) - 1) << ((threadIdx.x & 31) & ~(lanes - 1));
    unsigned int below = group & ((1u << (threadIdx.x & 31)) - 1);
    real_s4 xi = b.pos[i];
    real_f4 pi = b.posf[i];
    int cc[3];
    cell_coords(c, xi, cc);
    double x[3] = {(double)xi.x, (double)xi.y, (double)xi.z};
    double gap_lo[3], gap_hi[3];
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        double w = 1.0 / c.cell_inv[k];
        double rel = x[k] - c.lo[k] - cc[k] * w;
        gap_lo[k] = rel > 0.0 ? rel * rel : 0.0;
        gap_hi[k] = w - rel > 0.0 ? (w - rel) * (w - rel) : 0.0;
    }
    int count = 0;
#if PRECISION == 2
    real_f rl2 = c.r_list_sq;
#else
    real_f rl2 = c.r_list_sq_f;
#endif
    size_t n = (size_t)c.n;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int d[3] = {dx, dy, dz};
                double g2 = 0.0;
                #pragma unroll
                for (int k = 0; k < 3; k++) g2 += d[k] < 0 ? gap_lo[k] : (d[k] > 0 ? gap_hi[k] : 0.0);
                if (g2 >= c.r_list_sq) continue;
                real_f sh[3];
                int r = neighbour_cell_image(c, b.cell_rank, cc, d, sh);
                if (r < 0) continue;
                real_f qx = pi.x - sh[0], qy = pi.y - sh[1], qz = pi.z - sh[2];
                int start = b.cell_start[r], end = b.cell_start[r + 1];
                if (lanes == 1) {
                    for (int j0 = start; j0 < end; j0 += NB_UNROLL) {
                        real_f4 pj[NB_UNROLL];
                        #pragma unroll
                        for (int u = 0; u < NB_UNROLL; u++) pj[u] = ldg4(b.posf + (j0 + u < end ? j0 + u : start));
                        #pragma unroll
                        for (int u = 0; u < NB_UNROLL; u++) {
                            int j = j0 + u;
                            real_f ex = qx - pj[u].x, ey = qy - pj[u].y, ez = qz - pj[u].z;
                            if (j < end && ex * ex + ey * ey + ez * ez < rl2 && j != i) {
                                if (count < c.max_nbrs) b.nlist[((size_t)(count >> 3) * n + i) * 8 + (count & 7)] = (unsigned int)j;
                                count++;
                            }
                        }
                    }
                    continue;
                }
                for (int j0 = start; j0 < end; j0 += lanes) {
                    int j = j0 + lane;
                    bool hit = false;
                    if (j < end) {
                        real_f4 pj = ldg4(b.posf + j);
                        real_f ex = qx - pj.x, ey = qy - pj.y, ez = qz - pj.z;
                        hit = ex * ex + ey * ey + ez * ez < rl2 && j != i;
                    }
                    unsigned int hits = __ballot_sync(group, hit);
                    int at = count + __popc(hits & below);
                    if (hit && at < c.max_nbrs) b.nlist[((size_t)(at >> 3) * n + i) * 8 + (at & 7)] = (unsigned int)j;
                    count += __popc(hits);
                }
            }
    int kept = count < c.max_nbrs ? count : c.max_nbrs;
    for (int pad = kept + lane; pad < ((kept + 7) & ~7); pad += lanes) {
        b.nlist[((size_t)(pad >> 3) * n + i) * 8 + (pad & 7)] = (unsigned int)i;
    }
    if (lane == 0) {
        if (count > c.max_nbrs) b.flags[FLAG_OVERFLOW] = 1;
        atomicMax(&b.flags[FLAG_MAX_NBRS_SEEN], count);
        b.ncount[i] = kept;
        b.pos_build[i] = xi;
    }
}

// One thread: the rebuild is over.
extern "C" __global__ void __launch_bounds__(BLOCK) rebuild_done(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        if (gate == FLAG_REBUILD) b.flags[FLAG_REBUILD] = 0;
        b.flags[FLAG_BUILDS] += 1;
    }
}
