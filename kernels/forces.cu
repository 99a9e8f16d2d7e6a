// Pair forces on the GPU for the four algorithms, mirroring src/sim/cpu/forces.rs, plus the
// one-body forces (walls, obstacles, gravity, drive, tether) of src/sim/cpu/external.rs in
// the epilogue (obstacles computed by obstacle_pass just before). One thread per atom; every pair is visited from both sides (full lists), so
// energies and virials take half of each pair. With EV, per-block sums of
// (pair energy, pair virial, external energy, external virial) go to partials[4 * block ..].
#include "common.cuh"
#include "lj.cuh"
#include "wall.cuh"
#include "obstacles.cuh"
#include "reduce.cuh"
#include "cells.cuh"

struct Acc {
    real_f fx, fy, fz;
    real_a e, w;
};

__device__ __forceinline__ void pair_accumulate(const Consts& c, const Bufs& a, const real_f4& pi, const real_f4& pj,
                                                Acc& acc, bool ev) {
    real_f dx = min_image(pi.x - pj.x, (real_f)c.len[0], (real_f)c.inv_len[0]);
    real_f dy = min_image(pi.y - pj.y, (real_f)c.len[1], (real_f)c.inv_len[1]);
    real_f dz = min_image(pi.z - pj.z, (real_f)c.len[2], (real_f)c.inv_len[2]);
    real_f rsq = dx * dx + dy * dy + dz * dz;
    LjF p = lj_pair(c, a.table, type_of((real_s)pi.w), type_of((real_s)pj.w));
    if (rsq < p.rcut_sq && rsq > (real_f)0) {
        real_f fd, en;
        lj_eval(rsq, p, fd, en);
        acc.fx += dx * fd;
        acc.fy += dy * fd;
        acc.fz += dz * fd;
        if (ev) {
            acc.e += (real_a)0.5 * (real_a)en;
            acc.w += (real_a)0.5 * (real_a)(rsq * fd);
        }
    }
}

// Adds walls, obstacles, gravity, drive and the tether for the atom in slot i at state
// position x.
__device__ __forceinline__ void external_forces(const Consts& c, const Bufs& a, int i, const real_s4& x, Acc& acc,
                                                real_a& ext_e, real_a& ext_w, bool ev) {
    double p[3] = {(double)x.x, (double)x.y, (double)x.z};
    double m = a.masses[type_of(x.w)];
    double f[3] = {0.0, 0.0, 0.0};
    double e = 0.0, w = 0.0;
    Wall93 wall = wall_from(c.w_c1, c.w_c2, c.w_c3, c.w_c4, c.w_offset, c.w_cutoff, c.w_dcap, c.w_ecap, c.w_fcap);
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        if (!c.periodic[k]) {
            real_f fl, el, fh, eh;
            wall_eval(wall, (real_f)(p[k] - c.lo[k]), fl, el);
            wall_eval(wall, (real_f)(c.hi[k] - p[k]), fh, eh);
            f[k] += (double)fl - (double)fh;
            e += (double)el + (double)eh;
            w += (p[k] - c.lo[k]) * (double)fl + (c.hi[k] - p[k]) * (double)fh;
        }
    }
    if (c.has_obstacles) {
        // From obstacle_pass, launched just before: the force kernels stay lean.
        double4 o = a.obs_force[i];
        f[0] += o.x;
        f[1] += o.y;
        e += o.z;
        w += o.w;
    }
    if (c.gravity != 0.0) {
        f[1] -= m * c.gravity;
        e += m * c.gravity * (p[1] - c.lo[1]);
    }
    if (c.drive != 0.0) {
        f[0] += m * c.drive;
        if (c.drive_potential) e -= m * c.drive * (p[0] - c.lo[0]);
    }
    // Tether: F = -k d in x-y, E = k |d|^2 / 2, no virial. The first test is the same for
    // every thread; the ids load happens only while a tether is set.
    if (c.tether_id != NO_TETHER && a.ids[i] == c.tether_id) {
        double dx = p[0] - c.tether_x, dy = p[1] - c.tether_y;
        if (c.periodic[0]) dx -= c.len[0] * rint(dx / c.len[0]);
        if (c.periodic[1]) dy -= c.len[1] * rint(dy / c.len[1]);
        f[0] -= c.tether_k * dx;
        f[1] -= c.tether_k * dy;
        e += 0.5 * c.tether_k * (dx * dx + dy * dy);
    }
    acc.fx += (real_f)f[0];
    acc.fy += (real_f)f[1];
    acc.fz += (real_f)f[2];
    if (ev) {
        ext_e += (real_a)e;
        ext_w += (real_a)w;
    }
}

// Stores the force of atom i (if valid) and, with EV, the block's sums.
__device__ __forceinline__ void epilogue(const Consts& c, const Bufs& a, int i, Acc acc, bool ev) {
    real_a ext_e = 0, ext_w = 0;
    if (i < c.n) {
        external_forces(c, a, i, a.pos[i], acc, ext_e, ext_w, ev);
        real_f4 f;
        f.x = acc.fx;
        f.y = acc.fy;
        f.z = acc.fz;
        f.w = (real_f)0;
        a.force[i] = f;
    }
    if (ev) block_sum4((double)acc.e, (double)acc.w, (double)ext_e, (double)ext_w, a.partials_ev + 4 * blockIdx.x);
}

__device__ __forceinline__ Acc zero_acc() {
    Acc acc;
    acc.fx = acc.fy = acc.fz = (real_f)0;
    acc.e = acc.w = (real_a)0;
    return acc;
}

// All pairs, every partner read from global memory (the seed paper's GLOBAL kernel).
template <bool EV>
__device__ void allpairs_global(const Consts& c, const Bufs& a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = zero_acc();
    if (i < c.n) {
        real_f4 pi = a.posf[i];
        for (int j = 0; j < c.n; j++) pair_accumulate(c, a, pi, a.posf[j], acc, EV);
    }
    epilogue(c, a, i, acc, EV);
}

// All pairs, partners staged through shared memory one block-sized tile at a time (the
// seed paper's SHARED kernel).
template <bool EV>
__device__ void allpairs_tiled(const Consts& c, const Bufs& a) {
    __shared__ real_f4 tile[BLOCK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = zero_acc();
    real_f4 pi = a.posf[i < c.n ? i : 0];
    for (int base = 0; base < c.n; base += BLOCK) {
        int j = base + threadIdx.x;
        if (j < c.n) tile[threadIdx.x] = a.posf[j];
        __syncthreads();
        int count = c.n - base < BLOCK ? c.n - base : BLOCK;
        if (i < c.n) {
            for (int k = 0; k < count; k++) pair_accumulate(c, a, pi, tile[k], acc, EV);
        }
        __syncthreads();
    }
    epilogue(c, a, i, acc, EV);
}

// Cell list: atoms are sorted by cell; each atom scans the 27 surrounding cells.
template <bool EV>
__device__ void cell_scan(const Consts& c, const Bufs& a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = zero_acc();
    if (i < c.n) {
        real_f4 pi = a.posf[i];
        int cc[3];
        cell_coords(c, a.pos[i], cc);
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int r = neighbour_cell(c, a.cell_rank, cc, dx, dy, dz);
                    if (r < 0) continue;
                    int end = a.cell_start[r + 1];
                    for (int j = a.cell_start[r]; j < end; j++) pair_accumulate(c, a, pi, a.posf[j], acc, EV);
                }
    }
    epilogue(c, a, i, acc, EV);
}

// Neighbour list: full list, column-major (nlist[k * n + i]) for coalesced reads.
template <bool EV>
__device__ void neighbor_list(const Consts& c, const Bufs& a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = zero_acc();
    if (i < c.n) {
        real_f4 pi = a.posf[i];
        int count = a.ncount[i];
        for (int k = 0; k < count; k++) {
            unsigned int j = a.nlist[(size_t)k * c.n + i];
            pair_accumulate(c, a, pi, a.posf[j], acc, EV);
        }
    }
    epilogue(c, a, i, acc, EV);
}

#define FORCE_KERNELS(name, body)                                                          \
    extern "C" __global__ void __launch_bounds__(BLOCK) name##_noev(Consts c, Bufs a) { body<false>(c, a); }     \
    extern "C" __global__ void __launch_bounds__(BLOCK) name##_ev(Consts c, Bufs a) { body<true>(c, a); }

FORCE_KERNELS(forces_allpairs_global, allpairs_global)
FORCE_KERNELS(forces_allpairs_tiled, allpairs_tiled)
FORCE_KERNELS(forces_cells, cell_scan)
FORCE_KERNELS(forces_neighbors, neighbor_list)

// The obstacle force, energy and virial of every atom (exact distance, obstacles.cuh), for the
// force kernel's epilogue to add in with the other one-body forces. A pass of its own, so the
// candidate loop does not cost the pair loops registers.
extern "C" __global__ void __launch_bounds__(BLOCK) obstacle_pass(Consts c, Bufs a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    real_s4 x = a.pos[i];
    double gx, gy;
    double dist = obs_sample(c, a, (double)x.x, (double)x.y, gx, gy);
    Wall93 ob = wall_from(c.o_c1, c.o_c2, c.o_c3, c.o_c4, c.o_offset, c.o_cutoff, c.o_dcap, c.o_ecap, c.o_fcap);
    real_f fo, eo;
    wall_eval(ob, (real_f)dist, fo, eo);
    double4 o = make_double4(0.0, 0.0, 0.0, 0.0);
    if (fo != (real_f)0 || eo != (real_f)0) {
        o = make_double4((double)fo * gx, (double)fo * gy, (double)eo, dist * (double)fo);
    }
    a.obs_force[i] = o;
}
