// Binning atoms into cells and sorting them by cell along a space-filling curve (cells are
// stored in Morton order through `cell_rank`), then building the neighbour list, mirroring
// src/sim/cpu/cells.rs and neighbors.rs. Every kernel first reads flags[gate] and returns
// when it is zero, so the host can queue a whole rebuild every step and the GPU decides
// (the skin test in integrate_first sets FLAG_REBUILD). The order inside a cell is sorted
// by the previous index, so lists and force sums are deterministic.
#include "common.cuh"
#include "cells.cuh"

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

// Adds each cell's block offset, and empties the counts for the next binning (cells_bin
// counts into zeros: they start zeroed and are emptied here once the scan has read them).
extern "C" __global__ void __launch_bounds__(BLOCK) cells_scan_add(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < c.n_cells) {
        b.cell_start[k] += b.scan_sums[k / SCAN_THREADS];
        b.cell_count[k] = 0;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK) cells_scatter(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    b.order[b.cell_start[b.cell_of[i]] + b.slot[i]] = (unsigned int)i;
}

// The atom from slot `src` into sorted place k of the permutation scratch arrays.
__device__ __forceinline__ void gather_to(const Bufs& b, int k, unsigned int src) {
    b.pos2[k] = b.pos[src];
    b.vel2[k] = b.vel[src];
    b.ids2[k] = b.ids[src];
}

// One warp per cell: each atom's place is the number of the cell's atoms with a smaller
// index (cells of up to 32 atoms, all in registers); a larger cell is insertion-sorted by
// its warp's first lane. Each atom is then gathered into its sorted place in the scratch
// arrays (permute_copy brings them back).
extern "C" __global__ void __launch_bounds__(BLOCK) cells_sort(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (k >= c.n_cells) return;
    int s = b.cell_start[k], e = b.cell_start[k + 1];
    if (e - s <= 32) {
        unsigned int v = lane < e - s ? b.order[s + lane] : 0xFFFFFFFFu;
        int rank = 0;
        for (int t = 0; t < 32; t++) rank += __shfl_sync(0xffffffffu, v, t) < v;
        if (lane < e - s) gather_to(b, s + rank, v);
        return;
    }
    if (lane == 0) {
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
    __syncwarp();
    for (int x = s + lane; x < e; x += 32) gather_to(b, x, b.order[x]);
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
// last pack padded by the atom itself (see Bufs::nlist). One warp per cell: its lanes own
// the cell's atoms (32 at a time), and the warp walks the 27 neighbouring cells together
// (their ranges and periodic image shifts worked out once, one per lane), staging 32
// candidates at a time in shared memory with one coalesced load, from which every lane reads
// the same candidate (a broadcast). Each lane first marks its hits among the 32 in a bit
// mask (no branch per candidate; candidate u is bit 31 - u, so a count of leading zeros
// finds them in index order) and appends them to its ring of RING entries in shared memory;
// after each chunk, whole packs of 8 go out as two 16-byte stores, many lanes at once (a
// chunk adds at most 32 to the 7 left over). Each atom's hits come in cell-then-index order, as a
// one-thread-per-atom scan would find them. Blocks of NB_BLOCK threads whatever BLOCK is, so
// the shared arrays stay small (Over::BuildWarps launches it so).
#define NB_BLOCK 128
#define RING 40
// A pack of 8 as two 16-byte stores.
__device__ __forceinline__ void store_pack(uint4* p, const unsigned int v[8]) {
    p[0] = make_uint4(v[0], v[1], v[2], v[3]);
    p[1] = make_uint4(v[4], v[5], v[6], v[7]);
}
extern "C" __global__ void __launch_bounds__(NB_BLOCK) nlist_build(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    __shared__ real_f4 stage[NB_BLOCK];
    // Per lane a ring of RING entries, interleaved by thread (entry q of thread t at
    // q * NB_BLOCK + t) so lanes never share a bank.
    __shared__ unsigned int ring[NB_BLOCK * RING];
    int lane = threadIdx.x & 31;
    real_f4* cand = stage + (threadIdx.x & ~31);
    int k = (blockIdx.x * NB_BLOCK + threadIdx.x) >> 5;
    // Whole warps leave together (n_cells warps are launched in whole warps).
    if (k >= c.n_cells) return;
    int s = b.cell_start[k], e = b.cell_start[k + 1];
    if (s == e) return;
    // The cell's grid coordinates, from its first atom (binned by the same function), and
    // lane t < 27 works out neighbour t (dz, dy, dx from -1 to 1, dx fastest): its atoms
    // nb_start .. nb_end (an empty range beyond a wall) and its image shift.
    int cc[3];
    cell_coords(c, b.pos[s], cc);
    int nb_start = 0, nb_end = 0;
    real_f nb_sh[3] = {(real_f)0, (real_f)0, (real_f)0};
    if (lane < 27) {
        int d[3] = {lane % 3 - 1, (lane / 3) % 3 - 1, lane / 9 - 1};
        int r = neighbour_cell_image(c, b.cell_rank, cc, d, nb_sh);
        if (r >= 0) {
            nb_start = b.cell_start[r];
            nb_end = b.cell_start[r + 1];
        }
    }
#if PRECISION == 2
    real_f rl2 = c.r_list_sq;
#else
    real_f rl2 = c.r_list_sq_f;
#endif
    // Padding for a partly filled stage: far from everything, so it is never a hit.
    const real_f far = (real_f)1e18;
    size_t n = (size_t)c.n;
    uint4* out = reinterpret_cast<uint4*>(b.nlist);
    for (int base = s; base < e; base += 32) {
        int i = base + lane;
        bool mine = i < e;
        real_f4 pi = b.posf[mine ? i : s];
        int count = 0;
        int w = 0, rp = 0, flushed = 0;
        for (int t = 0; t < 27; t++) {
            int start = __shfl_sync(0xffffffffu, nb_start, t), end = __shfl_sync(0xffffffffu, nb_end, t);
            if (start >= end) continue;
            real_f qx = pi.x - __shfl_sync(0xffffffffu, nb_sh[0], t);
            real_f qy = pi.y - __shfl_sync(0xffffffffu, nb_sh[1], t);
            real_f qz = pi.z - __shfl_sync(0xffffffffu, nb_sh[2], t);
            for (int j0 = start; j0 < end; j0 += 32) {
                real_f4 q;
                q.x = q.y = q.z = q.w = far;
                if (j0 + lane < end) q = ldg4(b.posf + j0 + lane);
                cand[lane] = q;
                __syncwarp();
                int m = end - j0 < 32 ? end - j0 : 32;
                unsigned int hits = 0, bit = 0x80000000u;
                #pragma unroll 4
                for (int u = 0; u < ((m + 3) & ~3); u++, bit >>= 1) {
                    real_f4 pj = cand[u];
                    real_f ex = qx - pj.x, ey = qy - pj.y, ez = qz - pj.z;
                    if (ex * ex + ey * ey + ez * ez < rl2) hits |= bit;
                }
                __syncwarp();
                unsigned int self = (unsigned int)(i - j0);
                if (self < 32u) hits &= ~(0x80000000u >> self);
                if (!mine) hits = 0;
                // Past max_nbrs the list overflows (flagged below) and is built again
                // larger: the hits beyond it are only counted.
                while (hits && count < c.max_nbrs) {
                    int u = __clz(hits);
                    hits ^= 0x80000000u >> u;
                    ring[w * NB_BLOCK + threadIdx.x] = (unsigned int)(j0 + u);
                    w = w == RING - 1 ? 0 : w + 1;
                    count++;
                }
                // Whole packs out, after the chunk (many lanes at once).
                while (flushed + 8 <= count && flushed + 8 <= c.max_nbrs) {
                    unsigned int v[8];
                    #pragma unroll
                    for (int q = 0; q < 8; q++) {
                        v[q] = ring[rp * NB_BLOCK + threadIdx.x];
                        rp = rp == RING - 1 ? 0 : rp + 1;
                    }
                    size_t at = ((size_t)(flushed >> 3) * n + i) * 2;
                    store_pack(out + at, v);
                    flushed += 8;
                }
                count += __popc(hits);
            }
        }
        // The warp's largest count, so one atomic per warp reaches the shared flag.
        int most = mine ? count : 0;
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) most = max(most, __shfl_xor_sync(0xffffffffu, most, off));
        if (lane == 0) {
            if (most > c.max_nbrs) b.flags[FLAG_OVERFLOW] = 1;
            atomicMax(&b.flags[FLAG_MAX_NBRS_SEEN], most);
        }
        if (!mine) continue;
        // The last, partial pack, padded with the atom itself (max_nbrs is a multiple of 8).
        int kept = count < c.max_nbrs ? count : c.max_nbrs;
        if (kept & 7) {
            unsigned int v[8];
            #pragma unroll
            for (int q = 0; q < 8; q++) {
                v[q] = q < (kept & 7) ? ring[rp * NB_BLOCK + threadIdx.x] : (unsigned int)i;
                rp = rp == RING - 1 ? 0 : rp + 1;
            }
            size_t at = ((size_t)(kept >> 3) * n + i) * 2;
            store_pack(out + at, v);
        }
        b.ncount[i] = kept;
        b.pos_build[i] = b.pos[i];
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
