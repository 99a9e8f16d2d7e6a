// The wind tunnel's inflow zone (src/physics/tunnel.rs), mirroring the CPU's
// src/sim/cpu/state/tunnel.rs: at the end of a step (after integrate_second and the
// thermostat's scaling) every atom whose wrapped x lies in [c.tunnel_lo, c.tunnel_hi) gets a
// fresh Maxwell-Boltzmann velocity at c.target_t around (c.tunnel_speed, 0, 0):
// v = (U, 0, 0) + sqrt(T / m) (g0, g1, g2), g = normal4(seed, STREAM_TUNNEL_INFLOW, id, step),
// step = the device clock (the step that just ended), as the host draws it.
//
// Where no thermostat scales the velocities after the second kick, integrate_second_zone does
// that kick and the zone in one pass.
//
// Bookkeeping: tunnel_zone leaves per block the momentum and kinetic energy it gave the atoms
// (block_sum4, a fixed order) in b.tunnel_part, and adds them to the block's running sums in
// b.tunnel_sum (c.tunnel_slots blocks of 4, room for the smallest block size, so sums of an
// earlier block size stay counted). Only on a telemetry step (after finish_step wrote record
// b.clock[1] - 1) does tunnel_latch (one block, a fixed order) total them: it adds the step's
// partials to that record's kinetic energy and momentum (the record then describes the state
// after the zone, as the CPU's does), writes the running sums' totals to b.tunnel_records
// and restarts them. (A single-block latch every step cost the vortex street 6 us a step.)
#include "common.cuh"
#include "reduce.cuh"
#include "rng.cuh"
#include "integrate.cuh"
#include "bodies.cuh"
#include "dye.cuh"

// The zone for the atoms of this block: slot i (past c.n: none) at x, whose velocity (v where
// `have_v`, else read here, only in the zone) an atom in the zone trades for its fresh one
// (stored, and left in v); the block's momentum and kinetic energy given into tunnel_part.
// Every thread of the block calls it.
__device__ __forceinline__ void zone_block(const Consts& c, const Bufs& b, int i, real_s4 x, real_s4& v, bool have_v,
                                           unsigned long long step) {
    double dp[3] = {0.0, 0.0, 0.0}, dke = 0.0;
    double px = (double)x.x;
    bool in_zone = i < c.n && px >= c.tunnel_lo && px < c.tunnel_hi;
    // Most blocks hold no atom of the thin zone: their partials are zeros, as the sums give.
    if (!__syncthreads_or(in_zone)) {
        if (threadIdx.x < 4) b.tunnel_part[4 * blockIdx.x + threadIdx.x] = 0.0;
        return;
    }
    if (in_zone) {
        if (!have_v) v = b.vel[i];
        double m = b.masses[type_of(x.w)];
        double g[4];
        normal4(c.seed, STREAM_TUNNEL_INFLOW, b.ids[i], step, g);
        double s = sqrt(c.target_t / m);
        // Uncontracted, as the host computes U + s g0.
        real_s4 w = v;
        w.x = (real_s)__dadd_rn(c.tunnel_speed, __dmul_rn(s, g[0]));
        w.y = (real_s)__dmul_rn(s, g[1]);
        w.z = (real_s)__dmul_rn(s, g[2]);
        b.vel[i] = w;
        double o[3] = {(double)v.x, (double)v.y, (double)v.z};
        double n[3] = {(double)w.x, (double)w.y, (double)w.z};
        #pragma unroll
        for (int k = 0; k < 3; k++) dp[k] = m * (n[k] - o[k]);
        double n2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
        double o2 = o[0] * o[0] + o[1] * o[1] + o[2] * o[2];
        dke = 0.5 * m * (n2 - o2);
        v = w;
    }
    block_sum4(dp[0], dp[1], dp[2], dke, b.tunnel_part + 4 * blockIdx.x);
    // The block's running sums (block_sum4's thread 0 wrote the partials it adds).
    if (threadIdx.x == 0) {
        #pragma unroll
        for (int k = 0; k < 4; k++) b.tunnel_sum[4 * blockIdx.x + k] += b.tunnel_part[4 * blockIdx.x + k];
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK) tunnel_zone(Consts c, Bufs b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    real_s4 x = i < c.n ? b.pos[i] : real_s4{}, v{};
    zone_block(c, b, i, x, v, false, b.clock[0]);
}

// integrate_second (kick 1, no kinetic tensor) and then tunnel_zone in one pass, where no
// thermostat scales the velocities between them (NVE, as in the vortex street): the kinetic
// partials are those of the kicked velocities, before the zone, as integrate_second's, and the
// zone's partials and velocities are tunnel_zone's, bit for bit; one kernel of the step graph
// fewer.
extern "C" __global__ void __launch_bounds__(BLOCK) integrate_second_zone(Consts c, Bufs b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long step = b.clock[0];
    double ke2 = 0.0, px = 0.0, py = 0.0, pz = 0.0;
    real_s4 x{}, v{};
    if (i < c.n) {
        x = b.pos[i];
        v = b.vel[i];
        double m = mass_of(b, x);
        v = second_kick(c, b, i, v, b.force[i], m, step);
        b.vel[i] = v;
        double vx = (double)v.x, vy = (double)v.y, vz = (double)v.z;
        ke2 = m * (vx * vx + vy * vy + vz * vz);
        px = m * vx;
        py = m * vy;
        pz = m * vz;
    }
    block_sum4(ke2, px, py, pz, b.partials_kin + 4 * blockIdx.x);
    zone_block(c, b, i, x, v, true, step);
}

// integrate_second_zone and the next step's integrate_first in one pass (integrate_fused with
// the zone between its kicks), for a tunnel's steps with neither telemetry nor a
// velocity-scaling thermostat: the second half kick of step s (the clock's), the inflow zone
// (its velocities and per-block partials as tunnel_zone's, for tunnel_latch), then the first
// half kick and drift of step s + 1 and, with `dye`, dye_step's tags for the drifted atom.
// With `bodies`, block 0 also does bodies_latch's LATCH_ADD (its force sums are complete:
// the force pass ran before). No kinetic partials: nothing reads them after such a step. The
// same bits as the kernels it replaces.
extern "C" __global__ void __launch_bounds__(BLOCK) integrate_fused_zone(Consts c, Bufs b, int track, int bodies,
                                                                         unsigned short* dye, const double* rakes,
                                                                         int n_rakes, int dye_zone, double reach) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long step = b.clock[0];
    if (bodies && blockIdx.x == 0) bodies_latch_block(c, b, 0);
    real_s4 x{}, v{};
    real_f4 f{}, q{};
    double m = 0.0;
    int blown = b.flags[FLAG_BLOWUP];
    if (i < c.n) {
        x = b.pos[i];
        // Forces and build positions are read once here; positions and velocities stay cached.
        f = ldcs4(b.force + i);
        q = build_position(b, i, track);
        m = mass_of(b, x);
        v = second_kick(c, b, i, b.vel[i], f, m, step);
    }
    zone_block(c, b, i, x, v, true, step);
    if (i >= c.n) return;
    if (blown) {
        b.vel[i] = v;
        return;
    }
    kick_drift(c, b, i, x, v, f, m, step + 1, track, q);
    if (dye) dye_atom(c, b, i, x, &v, dye, rakes, n_rakes, dye_zone, reach);
}

// One block of TOTAL_THREADS, on a telemetry step: the step's totals over the n_blocks
// partials of tunnel_zone correct that step's record, and the running sums of all
// c.tunnel_slots blocks, totalled, close it and restart.
extern "C" __global__ void __launch_bounds__(TOTAL_THREADS) tunnel_latch(Consts c, Bufs b, int n_blocks) {
    __shared__ double scratch[32];
    double a[4] = {0.0, 0.0, 0.0, 0.0}, t[4] = {0.0, 0.0, 0.0, 0.0};
    for (int k = threadIdx.x; k < n_blocks; k += TOTAL_THREADS) {
        #pragma unroll
        for (int q = 0; q < 4; q++) a[q] += b.tunnel_part[4 * k + q];
    }
    for (int k = threadIdx.x; k < c.tunnel_slots; k += TOTAL_THREADS) {
        #pragma unroll
        for (int q = 0; q < 4; q++) {
            t[q] += b.tunnel_sum[4 * (size_t)k + q];
            b.tunnel_sum[4 * (size_t)k + q] = 0.0;
        }
    }
    double d[4], s[4];
    #pragma unroll
    for (int q = 0; q < 4; q++) {
        d[q] = block_sum_n<TOTAL_THREADS>(a[q], scratch);
        s[q] = block_sum_n<TOTAL_THREADS>(t[q], scratch);
    }
    if (threadIdx.x != 0) return;
    int record = (int)b.clock[1] - 1;
    double* r = b.records + RECORD_WORDS * record;
    r[1] += 2.0 * d[3];
    r[6] += d[0];
    r[7] += d[1];
    r[8] += d[2];
    #pragma unroll
    for (int q = 0; q < 4; q++) b.tunnel_records[4 * (size_t)record + q] = s[q];
}
