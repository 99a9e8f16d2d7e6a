// Pair forces on the GPU for the four algorithms, mirroring src/sim/cpu/forces.rs, plus the
// one-body forces (walls, obstacles, surface friction, gravity, drive, tether) of
// src/sim/cpu/external.rs in the epilogue (obstacles and friction computed by surface_pass,
// surface.cu, just before). One thread per atom; every pair is visited from both sides (full lists), so
// energies and virials take half of each pair. With EV, per-block sums of
// (pair energy, pair virial, external energy, external virial) go to partials[4 * block ..].
// The STRESS mode (transport sampling, src/sim/cuda/engine/stress.rs) does what EV does and
// also sums the virial tensor W_ab (pair plus walls and obstacles; xx, yy, zz, xy, xz, yz)
// per block into partials_stress[6 * block ..]; stress.cu adds the kinetic part.
// forces_neighbors_step runs integrate_fused's per-atom step in the epilogue instead of
// storing the force (engine/steps.rs pairs such steps).
#include "common.cuh"
#include "lj.cuh"
#include "wall.cuh"
#include "obstacles.cuh"
#include "bodies.cuh"
#include "reduce.cuh"
#include "cells.cuh"
#include "integrate.cuh"

// What a force pass sums besides the forces: nothing, energies and the virial (telemetry),
// or those and the virial tensor (pressure-tensor samples).
#define MODE_NOEV 0
#define MODE_EV 1
#define MODE_STRESS 2

struct Acc {
    real_f fx, fy, fz;
    real_a e, w;
    real_a s[6]; // the virial tensor (MODE_STRESS only)
};

// Adds h times the dyadic product of the separation to s (a whole pair's virial tensor with
// h = f_ij/r_ij).
__device__ __forceinline__ void add_tensor(real_a s[6], real_a h, real_f dx, real_f dy, real_f dz) {
    real_a x = (real_a)dx, y = (real_a)dy, z = (real_a)dz;
    s[0] += h * x * x;
    s[1] += h * y * y;
    s[2] += h * z * z;
    s[3] += h * x * y;
    s[4] += h * x * z;
    s[5] += h * y * z;
}

// The pair (pi, pj) into acc; WRAP false leaves the minimum image out (the caller knows the
// plain difference is the nearest image).
template <int MODE, bool WRAP = true>
__device__ __forceinline__ void pair_accumulate(const Consts& c, const Bufs& a, const real_f4& pi, const real_f4& pj,
                                                Acc& acc) {
    real_f dx = pi.x - pj.x, dy = pi.y - pj.y, dz = pi.z - pj.z;
    if (WRAP) {
        dx = NEAREST(c, dx, 0);
        dy = NEAREST(c, dy, 1);
        dz = NEAREST(c, dz, 2);
    }
    real_f rsq = dx * dx + dy * dy + dz * dz;
    LjF p = lj_pair(c, a.table, type_of((real_s)pi.w), type_of((real_s)pj.w));
    if (MODE == MODE_NOEV && PRECISION != 2) {
        // Forces alone in f32, without a branch: every pair is evaluated, and one out of
        // range (or the padding, the atom itself at r = 0, whose reciprocal is infinite) adds
        // dx times a selected zero, which leaves each sum's bits as skipping it would (the
        // fused multiply-add adds a signed zero). Most pairs of a pack are in range, so the
        // branch skipped little and cost a reconvergence (and a reload of the coefficients)
        // per pair: 8% fewer instructions in the list loop, 3% off the in.lj step at 1M
        // atoms. Not in f64, whose division takes its slow path at r = 0 (the padding): there
        // the branch is cheaper.
        real_f fd, en;
        lj_eval(rsq, p, fd, en);
        fd = rsq < p.rcut_sq && rsq > (real_f)0 ? fd : (real_f)0;
        acc.fx += dx * fd;
        acc.fy += dy * fd;
        acc.fz += dz * fd;
        return;
    }
    if (rsq < p.rcut_sq && rsq > (real_f)0) {
        real_f fd, en;
        lj_eval(rsq, p, fd, en);
        if (MODE == MODE_STRESS) {
            // The pair's force once, then its products with the separation: six sums of
            // whole pairs, halved once in the epilogue (the scalar virial is their trace).
            real_f fx = dx * fd, fy = dy * fd, fz = dz * fd;
            acc.fx += fx;
            acc.fy += fy;
            acc.fz += fz;
            acc.s[0] += (real_a)(fx * dx);
            acc.s[1] += (real_a)(fy * dy);
            acc.s[2] += (real_a)(fz * dz);
            acc.s[3] += (real_a)(fx * dy);
            acc.s[4] += (real_a)(fx * dz);
            acc.s[5] += (real_a)(fy * dz);
        } else {
            acc.fx += dx * fd;
            acc.fy += dy * fd;
            acc.fz += dz * fd;
        }
        if (MODE >= MODE_EV) acc.e += (real_a)0.5 * (real_a)en;
        if (MODE == MODE_EV) acc.w += (real_a)0.5 * (real_a)(rsq * fd);
    }
}

// Adds walls, obstacles, gravity, drive and the tether for the atom in slot i at state
// position x; the walls' pushes go to wb[2 * axis + hi] too (for the body forces).
// With `xt`, the external virial tensor too (walls on the diagonal; an obstacle's along its
// force, W_ab = w f_a f_b / |f|^2 with w its scalar virial, as External::virial_tensor).
__device__ __forceinline__ void external_forces(const Consts& c, const Bufs& a, int i, const real_s4& x, Acc& acc,
                                                real_a& ext_e, real_a& ext_w, bool ev, double wb[6], double* xt) {
    double p[3] = {(double)x.x, (double)x.y, (double)x.z};
    double m = a.masses[type_of(x.w)];
    double f[3] = {0.0, 0.0, 0.0};
    double e = 0.0, w = 0.0;
    Wall93 wall = wall_from(c.w_c1, c.w_c2, c.w_c3, c.w_c4, c.w_offset, c.w_cutoff, c.w_dcap, c.w_ecap, c.w_fcap);
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        if (!c.periodic[k]) {
            real_f fl, el, fh, eh;
            // With a piston the top y wall is the piston plane, and its push is recorded.
            double hi = (k == 1 && c.piston_on) ? a.piston[0] : c.hi[k];
            wall_eval(wall, (real_f)(p[k] - c.lo[k]), fl, el);
            wall_eval(wall, (real_f)(hi - p[k]), fh, eh);
            f[k] += (double)fl - (double)fh;
            wb[2 * k] = (double)fl;
            wb[2 * k + 1] = (double)fh;
            e += (double)el + (double)eh;
            double wk = (p[k] - c.lo[k]) * (double)fl + (hi - p[k]) * (double)fh;
            w += wk;
            if (xt) xt[k] += wk;
            if (k == 1 && c.piston_on) a.piston_part[i] = (double)fh;
        }
    }
    // Which surfaces the atom may feel (near.cu): surface_pass writes only those atoms'
    // forces, and every other atom's is zero.
    unsigned int near = c.has_obstacles || c.friction_range > 0.0 ? a.near[i] : 0u;
    if (near & NEAR_OBSTACLE) {
        // From surface_pass, launched just before: the force kernels stay lean.
        double4 o = a.obs_force[i];
        f[0] += o.x;
        f[1] += o.y;
        e += o.z;
        w += o.w;
        if (xt && o.w != 0.0) {
            double f2 = o.x * o.x + o.y * o.y;
            if (f2 > 0.0) {
                xt[0] += o.w * o.x * o.x / f2;
                xt[1] += o.w * o.y * o.y / f2;
                xt[3] += o.w * o.x * o.y / f2;
            } else {
                // No direction: keep the trace (an atom exactly on a medial point).
                xt[0] += 0.5 * o.w;
                xt[1] += 0.5 * o.w;
            }
        }
    }
    if (near & NEAR_FRICTION) {
        // Surface friction from the same pass (no energy, no virial).
        double4 q = a.fric_force[i];
        f[0] += q.x;
        f[1] += q.y;
        f[2] += q.z;
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

// Sums the pair tensor `s` plus the external one `xt` over the block into
// partials_stress[6 * part ..] (thread 0 writes).
__device__ __forceinline__ void block_sum_tensor(const Bufs& a, const real_a s[6], const double xt[6], int part) {
    __shared__ double scratch[32];
    #pragma unroll
    for (int k = 0; k < 6; k++) {
        double t = block_sum((double)s[k] + xt[k], scratch);
        if (threadIdx.x == 0) a.partials_stress[6 * part + k] = t;
    }
}

// integrate_fused's work for atom i at state position x with force f, in the force pass's
// epilogue (forces_neighbors_step): the second half kick, then the next step's first half
// kick and drift, whose positions go to `out` (the force-precision positions; in single and
// double also the state positions, the same array there) and never to the array every thread
// is still gathering from. The same arithmetic on the same values as integrate_fused, so the
// same bits.
__device__ __forceinline__ void fused_integrate(const Consts& c, const Bufs& a, int i, const real_s4& x,
                                                const real_f4& f, real_f4* out, int track) {
    unsigned long long step = a.clock[0];
    real_f4 q = build_position(a, i, track);
    int blown = a.flags[FLAG_BLOWUP];
    double m = mass_of(a, x);
    real_s4 v = second_kick(c, a, i, a.vel[i], f, m, step);
    Bufs o = a;
    o.posf = out;
#if PRECISION != 1
    o.pos = out;
#endif
    if (!blown) {
        real_s4 y = x;
        kick_drift(c, o, i, y, v, f, m, step + 1, track, q);
        return;
    }
    // After a blow-up the positions stay (as integrate_fused leaves them), in the other array
    // (in mixed only the f32 copy moves: the state is updated in place).
    a.vel[i] = v;
#if PRECISION == 1
    out[i] = a.posf[i];
#else
    o.pos[i] = x;
#endif
}

// Stores the force of atom i (if valid), adds the walls' reactions to the body forces (every
// lane of every warp gets here) and, with EV, the block's sums into partial `part`. With
// `out` (forces_neighbors_step) the force is not stored: the integrator runs here instead
// (fused_integrate).
template <int MODE>
__device__ __forceinline__ void epilogue(const Consts& c, const Bufs& a, int i, Acc acc, int part,
                                         real_f4* out = nullptr, int track = 0) {
    const bool ev = MODE >= MODE_EV;
    real_a ext_e = 0, ext_w = 0;
    double wb[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double xt[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    if (i < c.n) {
        // The state position only where a one-body force reads it (walls, gravity, the drive,
        // the tether): a periodic box without them skips the load (32 bytes in mixed).
        bool need_x = !(c.periodic[0] && c.periodic[1] && c.periodic[2]) || c.gravity != 0.0 || c.drive != 0.0 ||
                      c.tether_id != NO_TETHER;
        real_s4 x = need_x || out ? a.pos[i] : real_s4{};
        external_forces(c, a, i, x, acc, ext_e, ext_w, ev, wb, MODE == MODE_STRESS ? xt : nullptr);
        real_f4 f;
        f.x = acc.fx;
        f.y = acc.fy;
        f.z = acc.fz;
        f.w = (real_f)0;
        if (out) fused_integrate(c, a, i, x, f, out, track);
        else a.force[i] = f;
    }
    if (c.n_bodies > 0) bodies_add_walls(c, a, wb);
    if (MODE == MODE_STRESS) {
        // Every pair was summed from both sides (full lists): half of each.
        #pragma unroll
        for (int k = 0; k < 6; k++) acc.s[k] *= (real_a)0.5;
        acc.w = acc.s[0] + acc.s[1] + acc.s[2];
    }
    if (ev) block_sum4((double)acc.e, (double)acc.w, (double)ext_e, (double)ext_w, a.partials_ev + 4 * part);
    if (MODE == MODE_STRESS) block_sum_tensor(a, acc.s, xt, part);
}

__device__ __forceinline__ Acc zero_acc() {
    Acc acc;
    acc.fx = acc.fy = acc.fz = (real_f)0;
    acc.e = acc.w = (real_a)0;
    #pragma unroll
    for (int k = 0; k < 6; k++) acc.s[k] = (real_a)0;
    return acc;
}

// All pairs, every partner read from global memory (the seed paper's GLOBAL kernel).
template <int MODE>
__device__ void allpairs_global(const Consts& c, const Bufs& a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = zero_acc();
    if (i < c.n) {
        real_f4 pi = a.posf[i];
        for (int j = 0; j < c.n; j++) pair_accumulate<MODE>(c, a, pi, a.posf[j], acc);
    }
    epilogue<MODE>(c, a, i, acc, blockIdx.x);
}

// All pairs, partners staged through shared memory one block-sized tile at a time (the
// seed paper's SHARED kernel), with a cheap rejection: the minimum-image distance from
// |d| and L - |d| (an add and a min per axis), and the force only for the few pairs inside
// the cutoff.
//
// In f32 (single, mixed) Newton's third law halves the work: block (I, seg) pairs atom tile
// I with tiles I + d (mod tiles) for its share of d = 0 .. tiles / 2, adding each pair's
// force to both atoms. Partner forces go through shared memory and all forces into
// per-atom 64-bit fixed-point sums (2^-32 resolution) by integer atomics, which add in any
// order to the same bits, so runs stay reproducible; allpairs_finish then adds the
// one-body forces and stores. In f64 the fixed point would lose digits, so every block
// scans every tile and stores its own atoms' forces (no atomics).
#define FIXED_SCALE 4294967296.0

// Squared minimum-image distance of a difference of wrapped positions, from |d| and
// wl - |d| per axis (wl: the box length on periodic axes, huge on walled ones): an add and a
// min per axis, for the all-pairs kernels' rejection of far pairs.
template <typename T>
__device__ __forceinline__ T image_dist2(T dx, T dy, T dz, const T wl[3]) {
    T ax = fabs(dx), ay = fabs(dy), az = fabs(dz);
    ax = fmin(ax, wl[0] - ax);
    ay = fmin(ay, wl[1] - ay);
    az = fmin(az, wl[2] - az);
    return ax * ax + ay * ay + az * az;
}

__device__ __forceinline__ long long to_fixed(real_f v) { return (long long)llrint((double)v * FIXED_SCALE); }

template <int MODE>
__device__ void allpairs_tiled(const Consts& c, const Bufs& a, int segs) {
    __shared__ real_f4 tile[BLOCK];
    real_f wl[3];
    #pragma unroll
    for (int k = 0; k < 3; k++) wl[k] = (real_f)2 * (real_f)c.half_len[k];
#if PRECISION == 2
    // The rejection runs in f32 on float copies (FP64 is half the FP32 rate) against the
    // cutoff plus a margin far above f32 round-off; survivors are computed in f64 (each pair
    // then against its own cutoff). Several species: the list range (the largest pair cutoff
    // plus the skin) bounds every pair's cutoff.
    __shared__ float4 tilef[BLOCK];
    float wlf[3] = {(float)wl[0], (float)wl[1], (float)wl[2]};
#if NTYPES == 1
    float rc = (float)sqrt(c.rcut_sq) + 1e-3f;
#else
    float rc = (float)sqrt(c.r_list_sq) + 1e-3f;
#endif
    float rc2f = rc * rc;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = zero_acc();
    real_f4 pi = a.posf[i < c.n ? i : 0];
    float4 pif = make_float4((float)pi.x, (float)pi.y, (float)pi.z, 0.0f);
    for (int base = 0; base < c.n; base += BLOCK) {
        int j = base + threadIdx.x;
        if (j < c.n) {
            real_f4 pj = a.posf[j];
            tile[threadIdx.x] = pj;
            tilef[threadIdx.x] = make_float4((float)pj.x, (float)pj.y, (float)pj.z, 0.0f);
        }
        __syncthreads();
        int count = c.n - base < BLOCK ? c.n - base : BLOCK;
        if (i < c.n) {
            #pragma unroll 4
            for (int k = 0; k < count; k++) {
                float4 q = tilef[k];
                if (!(image_dist2(pif.x - q.x, pif.y - q.y, pif.z - q.z, wlf) < rc2f)) continue;
                pair_accumulate<MODE>(c, a, pi, tile[k], acc);
            }
        }
        __syncthreads();
    }
    epilogue<MODE>(c, a, i, acc, blockIdx.x);
#else
    __shared__ unsigned long long fj[3][BLOCK];
    int tiles = (c.n + BLOCK - 1) / BLOCK;
    int I = blockIdx.x / segs, seg = blockIdx.x % segs;
    int half = tiles / 2;
    int d0 = seg * (half + 1) / segs, d1 = (seg + 1) * (half + 1) / segs;
    int i = I * BLOCK + threadIdx.x;
    bool live = i < c.n;
    real_f4 pi = a.posf[live ? i : 0];
    real_f fx = 0, fy = 0, fz = 0;
    real_a e = 0, w = 0;
    real_a st[6] = {0, 0, 0, 0, 0, 0};
    for (int d = d0; d < d1; d++) {
        // With an even tile count the pair (I, I + tiles / 2) is met from both ends: keep one.
        if (d == half && d > 0 && tiles % 2 == 0 && I >= half) continue;
        int J = I + d < tiles ? I + d : I + d - tiles;
        int base = J * BLOCK, j = base + threadIdx.x;
        __syncthreads();
        if (j < c.n) tile[threadIdx.x] = a.posf[j];
        fj[0][threadIdx.x] = fj[1][threadIdx.x] = fj[2][threadIdx.x] = 0ull;
        __syncthreads();
        int count = c.n - base < BLOCK ? c.n - base : BLOCK;
        if (live) {
            #pragma unroll 4
            for (int k = d == 0 ? threadIdx.x + 1 : 0; k < count; k++) {
                real_f4 pj = tile[k];
#if NTYPES == 1
                // Species (0, 0) only: its f32 cutoff rejects far pairs before anything else
                // (with several species each pair's own cutoff is tested below).
                if (!(image_dist2(pi.x - pj.x, pi.y - pj.y, pi.z - pj.z, wl) < c.lj_f[5])) continue;
#endif
                real_f dx = NEAREST(c, pi.x - pj.x, 0), dy = NEAREST(c, pi.y - pj.y, 1), dz = NEAREST(c, pi.z - pj.z, 2);
                real_f rsq = dx * dx + dy * dy + dz * dz;
                LjF p = lj_pair(c, a.table, type_of((real_s)pi.w), type_of((real_s)pj.w));
                if (!(rsq < p.rcut_sq)) continue;
                real_f fd, en;
                lj_eval(rsq, p, fd, en);
                fx += dx * fd;
                fy += dy * fd;
                fz += dz * fd;
                atomicAdd(&fj[0][k], (unsigned long long)to_fixed(-dx * fd));
                atomicAdd(&fj[1][k], (unsigned long long)to_fixed(-dy * fd));
                atomicAdd(&fj[2][k], (unsigned long long)to_fixed(-dz * fd));
                if (MODE >= MODE_EV) e += (real_a)en;
                if (MODE == MODE_EV) w += (real_a)(rsq * fd);
                if (MODE == MODE_STRESS) add_tensor(st, (real_a)fd, dx, dy, dz);
            }
        }
        __syncthreads();
        if (j < c.n && (fj[0][threadIdx.x] | fj[1][threadIdx.x] | fj[2][threadIdx.x])) {
            #pragma unroll
            for (int k = 0; k < 3; k++) atomicAdd(&a.pair_acc[4 * j + k], fj[k][threadIdx.x]);
        }
    }
    if (live) {
        atomicAdd(&a.pair_acc[4 * i], (unsigned long long)to_fixed(fx));
        atomicAdd(&a.pair_acc[4 * i + 1], (unsigned long long)to_fixed(fy));
        atomicAdd(&a.pair_acc[4 * i + 2], (unsigned long long)to_fixed(fz));
    }
    if (MODE == MODE_STRESS) w = st[0] + st[1] + st[2];
    if (MODE >= MODE_EV) block_sum4((double)e, (double)w, 0.0, 0.0, a.partials_ev + 4 * blockIdx.x);
    if (MODE == MODE_STRESS) {
        const double none[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        block_sum_tensor(a, st, none, blockIdx.x);
    }
#endif
}

// The symmetric all-pairs kernel's second half: each atom's fixed-point pair force (reset to
// zero for the next call) plus the one-body forces, stored; with EV the one-body sums go to
// the partials after the pair kernel's (`part0` of them).
template <int MODE>
__device__ void allpairs_finish(const Consts& c, const Bufs& a, int part0) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = zero_acc();
    if (i < c.n) {
        unsigned long long* s = a.pair_acc + 4 * i;
        acc.fx = (real_f)((double)(long long)s[0] / FIXED_SCALE);
        acc.fy = (real_f)((double)(long long)s[1] / FIXED_SCALE);
        acc.fz = (real_f)((double)(long long)s[2] / FIXED_SCALE);
        s[0] = s[1] = s[2] = 0ull;
    }
    epilogue<MODE>(c, a, i, acc, part0 + blockIdx.x);
}

// Cell list: atoms are sorted by cell; each atom scans the 27 surrounding cells (each
// distinct cell once).
template <int MODE>
__device__ void cell_scan(const Consts& c, const Bufs& a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = zero_acc();
    if (i < c.n) {
        real_f4 pi = a.posf[i];
        int cc[3];
        cell_coords(c, a.pos[i], cc);
        // Along a periodic axis of two cells, -1 and +1 are the same cell: visit it once
        // (the minimum image finds the partner's one image in range).
        int hi[3];
        #pragma unroll
        for (int k = 0; k < 3; k++) hi[k] = c.periodic[k] && c.cell_dims[k] == 2 ? 0 : 1;
        for (int dz = -1; dz <= hi[2]; dz++)
            for (int dy = -1; dy <= hi[1]; dy++)
                for (int dx = -1; dx <= hi[0]; dx++) {
                    int r = neighbour_cell(c, a.cell_rank, cc, dx, dy, dz);
                    if (r < 0) continue;
                    int end = a.cell_start[r + 1];
                    for (int j = a.cell_start[r]; j < end; j++) pair_accumulate<MODE>(c, a, pi, a.posf[j], acc);
                }
    }
    epilogue<MODE>(c, a, i, acc, blockIdx.x);
}

// Neighbour list: full list in packs of 8 (see Bufs::nlist), padded with the atom itself
// (a zero distance adds nothing). c.tpa threads share an atom, taking every tpa-th pack, and
// sum their forces with shuffles; each pack is one 16-byte load of 16-bit entries (two of
// 32-bit ones), then eight independent position loads, so many loads are in flight per
// thread. A 16-bit entry is a neighbour cell of the atom's cell and a place in it: the atom
// is that cell's first (the nb_first row of the atom's cell) plus the place. The rows of the
// block's cells (a run of ranks: atoms are sorted by cell) are staged in shared memory when
// there are at most NB_ROWS of them, so these lookups leave the L1 to the position loads;
// FIRST is the row's base (shared or global memory).
// With WRAP false the minimum image is left out: the whole warp's atoms are inside the box's
// inner region (c.inner_lo .. c.inner_hi, list range plus skin from every periodic face), so
// every listed partner is within that distance in the same image and the plain difference is
// already the nearest one (NEAREST would return it unchanged: the same bits, fewer
// instructions).
#define NB_ROWS 16
template <int MODE, bool WRAP, bool SHARED>
__device__ __forceinline__ void neighbor_packs(const Consts& c, const Bufs& a, int i, int lane, int tpa,
                                               const real_f4& pi, const int* first, Acc& acc) {
    int packs = (a.ncount[i] + 7) >> 3;
    const uint4* list = reinterpret_cast<const uint4*>(a.nlist);
    for (int p = lane; p < packs; p += tpa) {
        size_t at = (size_t)p * c.n + i;
        unsigned int js[8];
        // Streaming loads (evict first): the list is read once per step and is far larger
        // than the caches, which should keep the positions instead.
        if (c.list_wide) {
            uint4 j0 = __ldcs(list + 2 * at), j1 = __ldcs(list + 2 * at + 1);
            js[0] = j0.x, js[1] = j0.y, js[2] = j0.z, js[3] = j0.w;
            js[4] = j1.x, js[5] = j1.y, js[6] = j1.z, js[7] = j1.w;
        } else {
            uint4 w = __ldcs(list + at);
            unsigned int e[8] = {w.x & 0xffffu, w.x >> 16, w.y & 0xffffu, w.y >> 16,
                                 w.z & 0xffffu, w.z >> 16, w.w & 0xffffu, w.w >> 16};
            #pragma unroll
            for (int k = 0; k < 8; k++) {
                const int* row = first + (e[k] >> LIST16_SHIFT);
                js[k] = (unsigned int)(SHARED ? *row : __ldg(row)) + (e[k] & (LIST16_PLACES - 1));
            }
        }
        real_f4 pj[8];
        #pragma unroll
        for (int k = 0; k < 8; k++) pj[k] = ldg4(a.posf + js[k]);
        #pragma unroll
        for (int k = 0; k < 8; k++) pair_accumulate<MODE, WRAP>(c, a, pi, pj[k], acc);
    }
}

// Whether position p is in the inner region, where no listed partner needs an image.
__device__ __forceinline__ bool inner(const Consts& c, const real_f4& p) {
    float x = (float)p.x, y = (float)p.y, z = (float)p.z;
    return x > c.inner_lo[0] && x < c.inner_hi[0] && y > c.inner_lo[1] && y < c.inner_hi[1] && z > c.inner_lo[2] &&
           z < c.inner_hi[2];
}

template <int MODE, bool SHARED>
__device__ __forceinline__ void neighbor_atom(const Consts& c, const Bufs& a, int i, int lane, int tpa,
                                              const real_f4& pi, const int* first, Acc& acc) {
    // Warp-uniform: the plain loop only where every atom of the warp is inner.
    if (__all_sync(0xffffffffu, i >= c.n || inner(c, pi))) {
        if (i < c.n) neighbor_packs<MODE, false, SHARED>(c, a, i, lane, tpa, pi, first, acc);
    } else if (i < c.n) {
        neighbor_packs<MODE, true, SHARED>(c, a, i, lane, tpa, pi, first, acc);
    }
}

template <int MODE>
__device__ void neighbor_list(const Consts& c, const Bufs& a, real_f4* out = nullptr, int track = 0) {
    __shared__ int rows[NB_ROWS * 27];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int tpa = c.tpa;
    int i = t / tpa, lane = t & (tpa - 1);
    // The block's atoms and their cells' run of ranks k0 .. k1 (the same for every thread).
    int a0 = blockIdx.x * (blockDim.x / tpa), a1 = min(a0 + (int)blockDim.x / tpa, c.n) - 1;
    int k0 = 0, nrows = NB_ROWS + 1;
    if (!c.list_wide && a0 < c.n) {
        k0 = a.cell_of[a0];
        nrows = a.cell_of[a1] - k0 + 1;
        if (nrows <= NB_ROWS)
            for (int x = threadIdx.x; x < nrows * 27; x += blockDim.x) rows[x] = __ldg(a.nb_first + 27 * k0 + x);
    }
    __syncthreads();
    Acc acc = zero_acc();
    real_f4 pi = a.posf[i < c.n ? i : 0];
    int cell = c.list_wide || i >= c.n ? 0 : a.cell_of[i];
    if (nrows <= NB_ROWS) neighbor_atom<MODE, true>(c, a, i, lane, tpa, pi, rows + 27 * (cell - k0), acc);
    else neighbor_atom<MODE, false>(c, a, i, lane, tpa, pi, a.nb_first + 27 * cell, acc);
    for (int off = tpa >> 1; off > 0; off >>= 1) {
        acc.fx += __shfl_xor_sync(0xffffffffu, acc.fx, off);
        acc.fy += __shfl_xor_sync(0xffffffffu, acc.fy, off);
        acc.fz += __shfl_xor_sync(0xffffffffu, acc.fz, off);
    }
    epilogue<MODE>(c, a, lane == 0 ? i : c.n, acc, blockIdx.x, out, track);
}

// The STRESS variants keep the occupancy of the others (at most 64 registers at 1024 threads
// per SM): their six more sums would otherwise cost the gather loops a third of their warps.
#define STRESS_MIN_BLOCKS (1024 / BLOCK)
#define FORCE_KERNELS(name, body)                                                                                \
    extern "C" __global__ void __launch_bounds__(BLOCK) name##_noev(Consts c, Bufs a) { body<MODE_NOEV>(c, a); }     \
    extern "C" __global__ void __launch_bounds__(BLOCK) name##_ev(Consts c, Bufs a) { body<MODE_EV>(c, a); }         \
    extern "C" __global__ void __launch_bounds__(BLOCK, STRESS_MIN_BLOCKS) name##_stress(Consts c, Bufs a) { body<MODE_STRESS>(c, a); }
#define FORCE_KERNELS_ARG(name, body)                                                                            \
    extern "C" __global__ void __launch_bounds__(BLOCK) name##_noev(Consts c, Bufs a, int x) { body<MODE_NOEV>(c, a, x); } \
    extern "C" __global__ void __launch_bounds__(BLOCK) name##_ev(Consts c, Bufs a, int x) { body<MODE_EV>(c, a, x); }     \
    extern "C" __global__ void __launch_bounds__(BLOCK, STRESS_MIN_BLOCKS) name##_stress(Consts c, Bufs a, int x) { body<MODE_STRESS>(c, a, x); }

FORCE_KERNELS(forces_allpairs_global, allpairs_global)
FORCE_KERNELS_ARG(forces_allpairs_tiled, allpairs_tiled)
FORCE_KERNELS_ARG(allpairs_finish, allpairs_finish)
FORCE_KERNELS(forces_cells, cell_scan)
FORCE_KERNELS(forces_neighbors, neighbor_list)

// A whole fused step: the neighbour-list forces without energies, and integrate_fused's
// kicks and drift in their epilogue (fused_integrate), the drifted positions into `out`. The
// engine pairs such steps so positions go to the other array and back (engine/steps.rs):
// the forces never make the round trip through memory, and a step is one kernel fewer.
// Held to 56 registers in f32 (those of forces_neighbors_noev; the integrator's few spills
// fall in the epilogue) and 72 in f64 at 128 threads. Left free it takes 64 and 89, and the
// gathers lose warps: at a million atoms 2.6% slower in f32, 4.4% in f64 (H200). Tighter
// costs more than it gains: at 48 in f32 the pair loop spills (4.6% slower); at 72 in f64 it
// keeps two values of each pack in local memory and is still 0.4% faster than at 80.
#define STEP_BLOCKS ((PRECISION == 2 ? 896 : 1152) / BLOCK)
#define STEP_MIN_BLOCKS (STEP_BLOCKS > 0 ? STEP_BLOCKS : 1)
extern "C" __global__ void __launch_bounds__(BLOCK, STEP_MIN_BLOCKS) forces_neighbors_step(Consts c, Bufs a, real_f4* out, int track) {
    neighbor_list<MODE_NOEV>(c, a, out, track);
}
