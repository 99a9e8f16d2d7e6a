// Binning atoms into cells and sorting them by cell along a space-filling curve (cells are
// stored in Morton order through `cell_rank`), then building the neighbour list, mirroring
// src/sim/cpu/cells.rs and neighbors.rs. Every kernel first reads flags[gate] and returns
// when it is zero, so the host can queue a whole rebuild every step and the GPU decides
// (the skin test in integrate_first sets FLAG_REBUILD). Inside a cell atoms are ordered by
// their sub-cell (4 x 4 x 4 per cell, Morton order: neighbours in space sit near each other
// in memory too), then by the previous index, so lists and force sums are deterministic.
#include "common.cuh"
#include "cells.cuh"
#include "near.cuh"

// slot[i]: the atom's arrival place in its cell (low SLOT_BITS) and its sub-cell above, while
// n fits SLOT_BITS (so does every cell's population); larger systems keep the plain place.
#define SLOT_BITS 26
#define SLOT_MASK ((1 << SLOT_BITS) - 1)

// Each atom's arrival place in its cell, from one atomic per cell and warp: atoms sorted by
// cell at the last rebuild come in runs of the same cell, whose atomics on one counter would
// wait on each other (the places differ from one atomic per atom, but cells_sort orders a
// cell's atoms by sub-cell and previous index whatever their arrival, so the sorted order is
// the same).
extern "C" __global__ void __launch_bounds__(BLOCK) cells_bin(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
    unsigned int live = __ballot_sync(0xffffffffu, i < c.n);
#endif
    if (i >= c.n) return;
    int cc[3];
    cell_coords(c, b.pos[i], cc);
    int rank = cell_rank_of(c, b.cell_rank, cc);
    b.cell_of[i] = rank;
    // The atom's sub-cell (4 x 4 x 4 per cell, Morton order), so the sort puts atoms near
    // each other in space next to each other inside the cell too.
    int sub = 0;
    if (c.n <= SLOT_MASK) {
        real_s4 x = b.pos[i];
        double p[3] = {(double)x.x, (double)x.y, (double)x.z};
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            double f = (p[k] - c.lo[k]) * c.cell_inv[k] - (double)cc[k];
            int q = f != f || f < 0.0 ? 0 : (int)(f * 4.0);
            q = q > 3 ? 3 : q;
            sub |= ((q & 1) << k) | ((q >> 1) << (k + 3));
        }
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
    unsigned int place = (unsigned int)atomicAdd(&b.cell_count[rank], 1);
#else
    unsigned int peers = __match_any_sync(live, rank);
    int lane = (int)(threadIdx.x & 31), leader = __ffs(peers) - 1;
    unsigned int first = 0;
    if (lane == leader) first = (unsigned int)atomicAdd(&b.cell_count[rank], __popc(peers));
    unsigned int place = __shfl_sync(peers, first, leader) + __popc(peers & ((1u << lane) - 1u));
#endif
    b.slot[i] = (int)(place | ((unsigned int)sub << SLOT_BITS));
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

// The whole scan in one launch where the cells fit one block (small systems, where each
// launch of a rebuild costs more than its work): each thread sums SCAN_ITEMS consecutive
// cells, one block scan of those sums gives each thread its first start, and it writes its
// cells' starts and empties their counts as cells_scan_add does. The same starts as the
// three-pass scan.
#define SCAN_ITEMS 8
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) cells_scan_single(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k0 = threadIdx.x * SCAN_ITEMS;
    int v[SCAN_ITEMS];
    int sum = 0;
    #pragma unroll
    for (int q = 0; q < SCAN_ITEMS; q++) {
        v[q] = k0 + q < c.n_cells ? b.cell_count[k0 + q] : 0;
        sum += v[q];
    }
    int total;
    int start = block_exclusive_scan(sum, total);
    #pragma unroll
    for (int q = 0; q < SCAN_ITEMS; q++) {
        if (k0 + q < c.n_cells) {
            b.cell_start[k0 + q] = start;
            b.cell_count[k0 + q] = 0;
        }
        start += v[q];
    }
    if (threadIdx.x == 0) b.cell_start[c.n_cells] = total;
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
    b.order[b.cell_start[b.cell_of[i]] + (c.n <= SLOT_MASK ? b.slot[i] & SLOT_MASK : b.slot[i])] = (unsigned int)i;
}

// The atom from slot `src` into sorted place k of the permutation scratch arrays.
__device__ __forceinline__ void gather_to(const Bufs& b, int k, unsigned int src) {
    b.pos2[k] = b.pos[src];
    b.vel2[k] = b.vel[src];
    b.ids2[k] = b.ids[src];
}

// The order inside a cell: by sub-cell, then by the previous index.
__device__ __forceinline__ unsigned long long sort_key(const Consts& c, const Bufs& b, unsigned int v) {
    if (c.n > SLOT_MASK) return v;
    return ((unsigned long long)((unsigned int)b.slot[v] >> SLOT_BITS) << 32) | v;
}

// One warp per cell: each atom's place is the number of the cell's atoms with a smaller
// key (keys are distinct: they hold the previous index), counted against the cell's atoms 32
// at a time through shuffles, so a cell of n atoms costs about n^2 / 32 compares a lane
// (cells of up to 32 atoms: one round, every key in registers). Each atom is then gathered
// into its sorted place in the scratch arrays (permute_copy brings them back).
extern "C" __global__ void __launch_bounds__(BLOCK) cells_sort(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    int k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (k >= c.n_cells) return;
    int s = b.cell_start[k], n = b.cell_start[k + 1] - s;
    for (int x0 = 0; x0 < n; x0 += 32) {
        bool mine = x0 + lane < n;
        unsigned int v = mine ? b.order[s + x0 + lane] : 0xFFFFFFFFu;
        unsigned long long key = mine ? sort_key(c, b, v) : ~0ull;
        int rank = 0;
        for (int y0 = 0; y0 < n; y0 += 32) {
            // The keys of atoms y0 .. y0 + 31 (past the cell: larger than any key).
            unsigned long long other = key;
            if (y0 != x0) other = y0 + lane < n ? sort_key(c, b, b.order[s + y0 + lane]) : ~0ull;
            for (int t = 0; t < 32; t++) rank += __shfl_sync(0xffffffffu, other, t) < key;
        }
        if (mine) gather_to(b, s + rank, v);
    }
}

// The sorted atoms back from the scratch arrays; with `near_margin` >= 0 (obstacles or surface
// friction) also their near-surface flags on these positions (near.cuh), which near_pass
// would set after the list build.
extern "C" __global__ void __launch_bounds__(BLOCK) permute_copy(Consts c, Bufs b, int gate, double near_margin) {
    if (!b.flags[gate]) return;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= c.n) return;
    real_s4 x = b.pos2[k];
    if (near_margin >= 0.0) b.near[k] = near_bits(c, b, x, near_margin);
    b.pos[k] = x;
    b.vel[k] = b.vel2[k];
    b.ids[k] = b.ids2[k];
#if PRECISION == 1
    b.posf[k] = make_float4((float)x.x, (float)x.y, (float)x.z, (float)x.w);
#endif
}

// Full Verlet list within cutoff + skin from the 27 surrounding cells (atoms already sorted
// by cell, so cell r holds atoms cell_start[r] .. cell_start[r + 1]), in packs of 8 with the
// last pack padded by the atom itself (see Bufs::nlist). One warp per cell, in groups of up
// to 32 of its atoms (the i-atoms, staged in shared memory). The 27 neighbouring cells' atoms
// are one stream of candidates (lane t < 27 works out cell t's range and periodic image
// shift once, a warp scan gives where each cell starts in the stream, and the warp's table in
// shared memory holds both), taken 32 at a time, one candidate per lane, already shifted by
// its image: every lane has work whatever the cells' populations; a lane finds its
// candidate's cell by walking the table forward. Each lane tests its candidate against every
// i-atom (the sign of r^2 - range^2 funnel-shifted into a word: no vote, no shuffle, no
// compare per test), a 32 x 32 bit transpose gives each i-atom's lane the hits among the 32
// candidates in stream order, and the lane appends them to its ring of RING entries (16 or
// 32 bits, the list's: see nlist_build and nlist_build_wide) in shared memory after the at
// most 7 left from the last chunk; after each chunk, whole packs of 8 go out as 16-byte
// stores, many lanes at once, and the rest moves to the ring's start. Each atom's hits come
// in cell-then-sorted-order, as a one-thread-per-atom scan would find them. Before the distance tests, each chunk of candidates meets a box test: one
// farther than the list range from the i-atoms' bounding box cannot be in range of any of
// them, so only the kept ones (stream order kept, 32 at a time) are tested. Blocks of
// NB_BLOCK threads whatever BLOCK is, so the shared arrays stay small (Over::BuildWarps
// launches it so).
#define NB_BLOCK 128
#define RING 40
// A ring entry: 16 bits where the list's entries are (half the shared memory, so more warps
// fit an SM), 32 in the wide variant.
template <bool WIDE> struct RingEntry { typedef unsigned short T; };
template <> struct RingEntry<true> { typedef unsigned int T; };
// Pack k of atom i out: 32-bit entries as two 16-byte stores, 16-bit ones as one.
template <bool WIDE>
__device__ __forceinline__ void store_pack(const Consts& c, void* list, int k, int i, const unsigned int v[8]) {
    size_t at = (size_t)k * (size_t)c.n + (size_t)i;
    if (WIDE) {
        uint4* p = reinterpret_cast<uint4*>(list) + 2 * at;
        p[0] = make_uint4(v[0], v[1], v[2], v[3]);
        p[1] = make_uint4(v[4], v[5], v[6], v[7]);
    } else {
        reinterpret_cast<uint4*>(list)[at] =
            make_uint4(v[0] | v[1] << 16, v[2] | v[3] << 16, v[4] | v[5] << 16, v[6] | v[7] << 16);
    }
}

// A 32 x 32 bit matrix held one row per lane (bit b of lane l: element (l, b)) transposed
// in place: afterwards bit b of lane l is the old element (b, l). Five swaps of blocks.
__device__ __forceinline__ unsigned int transpose32(unsigned int w, int lane) {
    const unsigned int low[5] = {0x0000FFFFu, 0x00FF00FFu, 0x0F0F0F0Fu, 0x33333333u, 0x55555555u};
    #pragma unroll
    for (int q = 0; q < 5; q++) {
        int s = 16 >> q;
        unsigned int o = __shfl_xor_sync(0xffffffffu, w, s);
        w = (lane & s) ? (w & ~low[q]) | ((o & ~low[q]) >> s) : (w & low[q]) | ((o & low[q]) << s);
    }
    return w;
}

// A word whose top bit is v's sign (set where v < 0; +0 and +inf leave it clear): the
// distance test's bit, shifted into a mask by a funnel shift.
__device__ __forceinline__ unsigned int sign_word(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned int sign_word(double v) {
    return (unsigned int)((unsigned long long)__double_as_longlong(v) >> 32);
}

__device__ __forceinline__ real_f4 make_real_f4(real_f x, real_f y, real_f z) {
    real_f4 v;
    v.x = x;
    v.y = y;
    v.z = z;
    v.w = (real_f)0;
    return v;
}

// Stream place `at` of a warp's candidates, in the neighbour cell whose table row is `span`
// and image shift `h`: returns the atom and puts its shifted position in (px, py, pz).
__device__ __forceinline__ int candidate(const Bufs& b, const int4& span, const real_f4& h, int at, real_f& px,
                                         real_f& py, real_f& pz) {
    int j = span.x + at;
    real_f4 q = ldg4(b.posf + j);
    px = q.x + h.x;
    py = q.y + h.y;
    pz = q.z + h.z;
    return j;
}

// The list entry of atom j at stream place `at` of neighbour cell t (table row `span`): the
// atom, or (16-bit entries) its neighbour cell and place there.
template <bool WIDE>
__device__ __forceinline__ unsigned int list_entry(int j, int t, int at, const int4& span) {
    return WIDE ? (unsigned int)j : (unsigned int)(t << LIST16_SHIFT | (at - span.z));
}

// The distance tests of a column variant: bit ni - 1 - ii set where the candidate at (px, py,
// pz) is within the list range of i-atom ii, each difference along an axis of AXES (bit q: axis
// q) taking its minimum image (half: half the length there, 1e30 on the other axes). Only the
// axes in AXES are wrapped: the thin slab's one axis costs one wrap a test, not three (H200,
// the vortex street: a build 494 -> 445 us, its step 0.3118 -> 0.3038 ms in single).
template <int AXES>
__device__ __forceinline__ unsigned int column_hits(const real_f4* ipos, int ni, real_f px, real_f py, real_f pz,
                                                    const real_f col_len[3], const real_f col_half[3], real_f rl2) {
    unsigned int mine_hits = 0;
    #pragma unroll 4
    for (int ii = 0; ii < ni; ii++) {
        real_f4 q = ipos[ii];
        real_f ex = q.x - px, ey = q.y - py, ez = q.z - pz;
        if (AXES & 1) ex = wrap_diff(ex, col_len[0], col_half[0]);
        if (AXES & 2) ey = wrap_diff(ey, col_len[1], col_half[1]);
        if (AXES & 4) ez = wrap_diff(ez, col_len[2], col_half[2]);
        real_f d = fma(ex, ex, fma(ey, ey, fma(ez, ez, -rl2)));
        mine_hits = __funnelshift_l(sign_word(d), mine_hits, 1);
    }
    return mine_hits;
}

template <bool WIDE, bool COLUMN> __device__ __forceinline__ void nlist_build_body(const Consts& c, const Bufs& b, int gate) {
    if (!b.flags[gate]) return;
    __shared__ real_f4 stage[NB_BLOCK];
    __shared__ typename RingEntry<WIDE>::T ring[NB_BLOCK * RING];
    // Per warp, the candidates that passed the box test and wait for the distance tests: their
    // shifted positions, list entries and atoms (at most 31 left over plus a chunk's 32).
    __shared__ real_f4 keep_pos[NB_BLOCK / 32][64];
    __shared__ int keep_atom[NB_BLOCK / 32][64];
    __shared__ unsigned int keep_entry[NB_BLOCK / 32][64];
    // Per warp, neighbour cell t's image shift (x, y, z) and (first atom - first stream place,
    // end of its stream places, first stream place); t = 27 ends the table (no candidates).
    __shared__ real_f4 nb_shift[NB_BLOCK / 32][28];
    __shared__ int4 nb_span[NB_BLOCK / 32][28];
    int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    real_f4* ipos = stage + (threadIdx.x & ~31);
    real_f4* kpos = keep_pos[wib];
    int* katom = keep_atom[wib];
    unsigned int* kentry = keep_entry[wib];
    int k = (blockIdx.x * NB_BLOCK + threadIdx.x) >> 5;
    // Whole warps leave together (n_cells warps are launched in whole warps).
    if (k >= c.n_cells) return;
    int s = b.cell_start[k], e = b.cell_start[k + 1];
    if (s == e) return;
    const unsigned int full = 0xffffffffu;
    // 16-bit entries name places up to LIST16_PLACES in a cell: a fuller one has the list
    // built again with 32-bit entries (the host sees both flags).
    if (!WIDE && e - s > LIST16_PLACES && lane == 0) {
        b.flags[FLAG_CELL_FULL] = 1;
        b.flags[FLAG_OVERFLOW] = 1;
    }
    // The cell's grid coordinates, from its first atom (binned by the same function), and
    // lane t < 27 works out neighbour t (dz, dy, dx from -1 to 1, dx fastest): its atoms
    // nb_start .. nb_start + nb_len (none beyond a wall) and its image shift.
    int cc[3];
    cell_coords(c, b.pos[s], cc);
    int nb_start = 0, nb_len = 0;
    real_f nb_sh[3] = {(real_f)0, (real_f)0, (real_f)0};
    if (lane < 27) {
        int d[3] = {lane % 3 - 1, (lane / 3) % 3 - 1, lane / 9 - 1};
        int r = neighbour_cell_image(c, b.cell_rank, cc, d, nb_sh);
        if (r >= 0) {
            nb_start = b.cell_start[r];
            nb_len = b.cell_start[r + 1] - nb_start;
        }
        // The force pass turns 16-bit entries back into atoms with this table.
        b.nb_first[k * 27 + lane] = nb_start;
    }
    // Where cell t's candidates end in the stream (inclusive scan), and the stream's length.
    int nb_end = nb_len;
    #pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        int u = __shfl_up_sync(full, nb_end, off);
        if (lane >= off) nb_end += u;
    }
    int total = __shfl_sync(full, nb_end, 31);
    if (lane < 28) {
        nb_shift[wib][lane] = lane < 27 ? make_real_f4(nb_sh[0], nb_sh[1], nb_sh[2]) : make_real_f4(0, 0, 0);
        nb_span[wib][lane] =
            make_int4(nb_start - (nb_end - nb_len), lane < 27 ? nb_end : 0x7fffffff, nb_end - nb_len, 0);
    }
    __syncwarp();
#if PRECISION == 2
    real_f rl2 = c.r_list_sq;
#else
    real_f rl2 = c.r_list_sq_f;
#endif
    // COLUMN (the variants launched where a periodic axis has one cell, a thin slab's depth:
    // the cell is a column through it): no image shifts along that axis, each pair takes its
    // minimum image along it in the distance tests (half: half the length there, 1e30
    // elsewhere, so no other difference is wrapped). Without it the kernel is the plain one.
    real_f col_half[3], col_len[3];
    int col_axes = 0;
    #pragma unroll
    for (int q = 0; q < 3; q++) {
        bool one = COLUMN && c.periodic[q] && c.cell_dims[q] == 1;
        col_len[q] = IMG_LEN(c, q);
        col_half[q] = one ? (real_f)0.5 * col_len[q] : (real_f)1e30;
        col_axes |= one ? 1 << q : 0;
    }
    for (int g0 = s; g0 < e; g0 += 32) {
        int ni = e - g0 < 32 ? e - g0 : 32;
        int i = g0 + lane;
        bool mine = lane < ni;
        __syncwarp();
        real_f4 me = b.posf[mine ? i : s];
        ipos[lane] = me;
        // Entries waiting in the ring, all hits (kept or not), entries stored in packs.
        int pend = 0, seen = 0, flushed = 0;
        // The i-atoms' bounding box: a candidate farther than the list range from it is out
        // of range of all of them (about a third of the 27 cells' atoms, in their edges and
        // corners), so it is dropped before the distance tests. The margin keeps every
        // candidate that a distance test could pass in floating point, so the lists are
        // exactly those without the box test.
        real_f bx0 = me.x, by0 = me.y, bz0 = me.z, bx1 = me.x, by1 = me.y, bz1 = me.z;
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            bx0 = min(bx0, __shfl_xor_sync(full, bx0, off));
            by0 = min(by0, __shfl_xor_sync(full, by0, off));
            bz0 = min(bz0, __shfl_xor_sync(full, bz0, off));
            bx1 = max(bx1, __shfl_xor_sync(full, bx1, off));
            by1 = max(by1, __shfl_xor_sync(full, by1, off));
            bz1 = max(bz1, __shfl_xor_sync(full, bz1, off));
        }
        // Along a column's axis the box spans everything (each pair takes its minimum image
        // there), so the test leaves that axis out at no cost per candidate.
        if (COLUMN) {
            if (col_half[0] < (real_f)1e30) bx0 = -(real_f)1e30, bx1 = (real_f)1e30;
            if (col_half[1] < (real_f)1e30) by0 = -(real_f)1e30, by1 = (real_f)1e30;
            if (col_half[2] < (real_f)1e30) bz0 = -(real_f)1e30, bz1 = (real_f)1e30;
        }
        real_f box2 = rl2 * (real_f)1.00001;
        // This lane's neighbour cell: the first whose stream places end after its candidate.
        int t = 0;
        // Stream places read so far, and candidates kept and waiting (the same in every lane).
        int c0 = 0, waiting = 0;
        while (true) {
            // Chunks of 32 stream places (one a lane) through the box test until 32 candidates
            // wait or the stream ends; kept ones are appended in stream order.
            while (waiting < 32 && c0 < total) {
                // Places only grow, so t only moves forward.
                int at = c0 + lane;
                int4 span = nb_span[wib][t];
                while (at >= span.y) span = nb_span[wib][++t];
                bool keep = false;
                real_f px = 0, py = 0, pz = 0;
                int j = -1;
                if (at < total) {
                    j = candidate(b, span, nb_shift[wib][t], at, px, py, pz);
                    real_f dx = max(max(bx0 - px, px - bx1), (real_f)0);
                    real_f dy = max(max(by0 - py, py - by1), (real_f)0);
                    real_f dz = max(max(bz0 - pz, pz - bz1), (real_f)0);
                    keep = dx * dx + dy * dy + dz * dz < box2;
                }
                unsigned int kept = __ballot_sync(full, keep);
                if (keep) {
                    int slot = waiting + __popc(kept & ((1u << lane) - 1u));
                    kpos[slot] = make_real_f4(px, py, pz);
                    kentry[slot] = list_entry<WIDE>(j, t, at, span);
                    katom[slot] = j;
                }
                waiting += __popc(kept);
                c0 += 32;
            }
            if (waiting == 0) break;
            __syncwarp();
            // This lane's candidate: kept one `lane`, or padding far from everything.
            int nc = waiting < 32 ? waiting : 32;
            real_f px = (real_f)1e18, py = (real_f)1e18, pz = (real_f)1e18;
            int j = -1;
            if (lane < nc) {
                real_f4 q = kpos[lane];
                px = q.x;
                py = q.y;
                pz = q.z;
                j = katom[lane];
            }
            // Bit ni - 1 - ii: this lane's candidate is within range of i-atom ii (the sign of
            // r^2 - range^2 shifted in, i-atom 0 first).
            unsigned int mine_hits = 0;
            if (!COLUMN) {
                #pragma unroll 4
                for (int ii = 0; ii < ni; ii++) {
                    real_f4 q = ipos[ii];
                    real_f ex = q.x - px, ey = q.y - py, ez = q.z - pz;
                    real_f d = fma(ex, ex, fma(ey, ey, fma(ez, ez, -rl2)));
                    mine_hits = __funnelshift_l(sign_word(d), mine_hits, 1);
                }
            } else {
                // One column axis (the usual thin slab) wraps only that axis's difference; the
                // others are never wrapped (their half is 1e30), so the hits are the same.
                switch (col_axes) {
                case 1: mine_hits = column_hits<1>(ipos, ni, px, py, pz, col_len, col_half, rl2); break;
                case 2: mine_hits = column_hits<2>(ipos, ni, px, py, pz, col_len, col_half, rl2); break;
                case 4: mine_hits = column_hits<4>(ipos, ni, px, py, pz, col_len, col_half, rl2); break;
                default: mine_hits = column_hits<7>(ipos, ni, px, py, pz, col_len, col_half, rl2); break;
                }
            }
            // Bit ii from now on.
            mine_hits = __brev(mine_hits) >> (32 - ni);
            unsigned int self = (unsigned int)(j - g0);
            if (self < 32u) mine_hits &= ~(1u << self);
            // Now bit l: candidate lane l is within range of this lane's i-atom, in stream order.
            unsigned int hits = transpose32(mine_hits, lane);
            if (!mine) hits = 0;
            // Past max_nbrs the list overflows (flagged below) and is built again larger: the
            // hits beyond it are only counted (seen), not kept.
            seen += __popc(hits);
            if (seen > c.max_nbrs) {
                while (flushed + pend + __popc(hits) > c.max_nbrs) hits ^= 1u << (31 - __clz(hits));
            }
            // Into the ring after the entries left from the last chunk (at most 7), in stream
            // order: at most 39 entries, so no wrap.
            while (hits) {
                int u = __ffs(hits) - 1;
                hits &= hits - 1;
                ring[pend * NB_BLOCK + threadIdx.x] = kentry[u];
                pend++;
            }
            // Whole packs out, after the chunk (many lanes at once), and what is left of the
            // ring back to its start.
            if (pend >= 8) {
                int f = 0;
                do {
                    const typename RingEntry<WIDE>::T* r = ring + f * NB_BLOCK + threadIdx.x;
                    unsigned int v[8];
                    #pragma unroll
                    for (int q = 0; q < 8; q++) v[q] = r[q * NB_BLOCK];
                    store_pack<WIDE>(c, b.nlist, flushed >> 3, i, v);
                    flushed += 8;
                    f += 8;
                } while (f + 8 <= pend);
                pend -= f;
                #pragma unroll
                for (int q = 0; q < 7; q++)
                    if (q < pend) ring[q * NB_BLOCK + threadIdx.x] = ring[(f + q) * NB_BLOCK + threadIdx.x];
            }
            // The kept candidates not yet tested move to the front (slots 32.. to 0..: the
            // reads and the writes never meet).
            __syncwarp();
            if (lane < waiting - nc) {
                kpos[lane] = kpos[nc + lane];
                kentry[lane] = kentry[nc + lane];
                katom[lane] = katom[nc + lane];
            }
            __syncwarp();
            waiting -= nc;
        }
        // The warp's largest count, so one atomic per warp reaches the shared flag.
        int most = mine ? seen : 0;
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) most = max(most, __shfl_xor_sync(full, most, off));
        if (lane == 0) {
            if (most > c.max_nbrs) b.flags[FLAG_OVERFLOW] = 1;
            atomicMax(&b.flags[FLAG_MAX_NBRS_SEEN], most);
        }
        if (mine) {
            // The last, partial pack, padded with the atom itself (max_nbrs is a multiple of 8):
            // in 16-bit entries, place i - s of neighbour cell 13 (the cell itself).
            if (pend) {
                unsigned int self = WIDE ? (unsigned int)i : (unsigned int)(13 << LIST16_SHIFT | (i - s));
                unsigned int v[8];
                #pragma unroll
                for (int q = 0; q < 8; q++) v[q] = q < pend ? ring[q * NB_BLOCK + threadIdx.x] : self;
                store_pack<WIDE>(c, b.nlist, flushed >> 3, i, v);
            }
            b.ncount[i] = flushed + pend;
            // From here to the next binning cell_of holds each (sorted) atom's cell.
            b.cell_of[i] = k;
            b.pos_build[i] = b.posf[i];
        }
    }
}

// The build for 16-bit entries, and for 32-bit ones (c.list_wide: some cell is too full for
// 16 bits), each with the shared memory its entries need.
extern "C" __global__ void __launch_bounds__(NB_BLOCK) nlist_build(Consts c, Bufs b, int gate) {
    nlist_build_body<false, false>(c, b, gate);
}
extern "C" __global__ void __launch_bounds__(NB_BLOCK) nlist_build_wide(Consts c, Bufs b, int gate) {
    nlist_build_body<true, false>(c, b, gate);
}
// The same where a periodic axis has one cell (columns through a thin slab).
extern "C" __global__ void __launch_bounds__(NB_BLOCK) nlist_build_column(Consts c, Bufs b, int gate) {
    nlist_build_body<false, true>(c, b, gate);
}
extern "C" __global__ void __launch_bounds__(NB_BLOCK) nlist_build_wide_column(Consts c, Bufs b, int gate) {
    nlist_build_body<true, true>(c, b, gate);
}

// One thread: the rebuild is over.
extern "C" __global__ void __launch_bounds__(BLOCK) rebuild_done(Consts c, Bufs b, int gate) {
    if (!b.flags[gate]) return;
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        if (gate == FLAG_REBUILD) b.flags[FLAG_REBUILD] = 0;
        b.flags[FLAG_BUILDS] += 1;
    }
}
