// Velocity Verlet (kick-drift-kick) on the GPU, mirroring src/sim/cpu/state.rs: the first
// half kick and drift (with wrap, the skin test that triggers a neighbour-list rebuild, and
// the runaway and escape tests), the second half kick with the Langevin update fused in and kinetic
// partial sums (the per-atom parts in integrate.cuh), the thermostat step (Berendsen / CSVR factor, plain or relative to the flow
// from flow_profile.cu's bin sums, and the telemetry record), and velocity scaling. The step number lives on the device (b.clock[0], advanced by step_tick
// between the drift and the forces), so a captured graph of steps needs no arguments changed.
#include "common.cuh"
#include "reduce.cuh"
#include "rng.cuh"
#include "integrate.cuh"

// With `scale`, the previous step's thermostat factor lambda[0] is applied first (the same
// arithmetic as scale_velocities, saving a pass over the velocities inside a graph).
extern "C" __global__ void __launch_bounds__(BLOCK) integrate_first(Consts c, Bufs b, int track, int scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long step = b.clock[0] + 1;
    if (i >= c.n) return;
    real_s4 v = b.vel[i];
    real_f4 q = build_position(b, i, track);
    if (scale) {
        double l = b.lambda[0];
        if (l != 1.0) {
            real_s s = (real_s)l;
            v.x *= s;
            v.y *= s;
            v.z *= s;
        }
    }
    if (b.flags[FLAG_BLOWUP]) {
        if (scale) b.vel[i] = v;
        return;
    }
    real_s4 x = b.pos[i];
    kick_drift(c, b, i, x, v, b.force[i], mass_of(b, x), step, track, q);
}

// Second half kick (when `kick`), Langevin velocity update, and per-block sums of
// (m v^2, m v) into partials[4 * block ..]; with kin_off >= 0 the kinetic tensor too.
extern "C" __global__ void __launch_bounds__(BLOCK) integrate_second(Consts c, Bufs b, int kick, int kin_off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long step = b.clock[0];
    double ke2 = 0.0, px = 0.0, py = 0.0, pz = 0.0;
    if (i < c.n) {
        real_s4 v = b.vel[i];
        // With one species no position is read for the type.
        double m = mass_of(b, b.pos[i]);
        if (kick) {
            v = second_kick(c, b, i, v, b.force[i], m, step);
            b.vel[i] = v;
        }
        double vx = (double)v.x, vy = (double)v.y, vz = (double)v.z;
        ke2 = m * (vx * vx + vy * vy + vz * vz);
        px = m * vx;
        py = m * vy;
        pz = m * vz;
    }
    block_sum4(ke2, px, py, pz, b.partials_kin + 4 * blockIdx.x);
    if (kin_off >= 0) {
        // The masses and velocities again rather than kept live through the sums above.
        real_s4 v = i < c.n ? b.vel[i] : real_s4{};
        double m = i < c.n ? b.masses[type_of(b.pos[i].w)] : 0.0;
        kinetic_tensor(b, kin_off, m, v);
    }
}

// The end of the clock's step and the start of the next in one pass, for steps with neither
// telemetry nor a velocity-scaling thermostat: second kick (and Langevin) of step s, then
// the first kick and drift of step s + 1, the same arithmetic as integrate_second followed
// by integrate_first without the kinetic sums. With kin_off >= 0 (a pressure-tensor step),
// the kinetic tensor of step s's full-step velocities as integrate_second leaves it.
extern "C" __global__ void __launch_bounds__(BLOCK) integrate_fused(Consts c, Bufs b, int track, int kin_off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (kin_off < 0 && i >= c.n) return;
    real_s4 v{};
    double m = 0.0;
    if (i < c.n) {
        unsigned long long step = b.clock[0];
        real_s4 x = b.pos[i];
        // Forces and build positions are read once here; positions and velocities stay cached.
        real_f4 f = ldcs4(b.force + i);
        real_f4 q = build_position(b, i, track);
        int blown = b.flags[FLAG_BLOWUP];
        m = mass_of(b, x);
        v = second_kick(c, b, i, b.vel[i], f, m, step);
        // kick_drift leaves the next step's velocity in its argument: a copy keeps this step's.
        real_s4 w = v;
        if (blown) b.vel[i] = v;
        else kick_drift(c, b, i, x, w, f, m, step + 1, track, q);
    }
    if (kin_off >= 0) kinetic_tensor(b, kin_off, m, v);
}

// One block of TOTAL_THREADS: totals the kinetic partials, computes the thermostat's velocity
// factor into lambda[0] (1 when none applies), and with `want` writes a telemetry record
// (RECORD_WORDS, common.cuh) after the scaling. Relative to the flow its last two words are
// the bins' sum |P_b|^2 / M_b and occupied count, which the rescale about the bins' means
// keeps, so 2 KE minus the first is the thermal motion after the scaling (the thermal
// readout); else zeros, which a tunnel's latch replaces after its zone (flow_bins_record).
extern "C" __global__ void __launch_bounds__(TOTAL_THREADS) finish_step(Consts c, Bufs b, int n_blocks, int n_ev_blocks, int want, int thermostat_on) {
    __shared__ double scratch[32];
    unsigned long long step = b.clock[0];
    int record = (int)b.clock[1];
    const double* kin = b.partials_kin;
    const double* ev = b.partials_ev;
    int n_kin = n_blocks, n_ev = n_ev_blocks;
    double k0 = 0, k1 = 0, k2 = 0, k3 = 0;
    // Unrolled so many rounds' loads are in flight at once (one block reads every partial:
    // 64 rounds at a million atoms, each a full memory latency when issued one by one); the
    // adds keep their order, so the sums keep their bits.
    #pragma unroll 8
    for (int k = threadIdx.x; k < n_kin; k += TOTAL_THREADS) {
        k0 += kin[4 * k];
        k1 += kin[4 * k + 1];
        k2 += kin[4 * k + 2];
        k3 += kin[4 * k + 3];
    }
    double ke2 = block_sum_n<TOTAL_THREADS>(k0, scratch);
    double px = block_sum_n<TOTAL_THREADS>(k1, scratch);
    double py = block_sum_n<TOTAL_THREADS>(k2, scratch);
    double pz = block_sum_n<TOTAL_THREADS>(k3, scratch);
    double e0 = 0, e1 = 0, e2 = 0, e3 = 0;
    if (want) {
        #pragma unroll 8
        for (int k = threadIdx.x; k < n_ev; k += TOTAL_THREADS) {
            e0 += ev[4 * k];
            e1 += ev[4 * k + 1];
            e2 += ev[4 * k + 2];
            e3 += ev[4 * k + 3];
        }
    }
    double pe = block_sum_n<TOTAL_THREADS>(e0, scratch);
    double pw = block_sum_n<TOTAL_THREADS>(e1, scratch);
    double xe = block_sum_n<TOTAL_THREADS>(e2, scratch);
    double xw = block_sum_n<TOTAL_THREADS>(e3, scratch);
    if (threadIdx.x != 0) return;
    // Relative to the flow (flow_profile.cu, flow::FlowProfile): twice the kinetic energy
    // relative to each bin's mean, sum m v^2 - sum_b |P_b|^2 / M_b, over 3 N - 3 N_occupied
    // degrees of freedom (flow::relative_dof); the factor's arithmetic is the same.
    int relative = thermostat_on && c.relative_to_flow;
    double k_th = ke2, dof = c.dof, k_rel = 0.0;
    if (relative) {
        k_rel = ke2 - b.flow_stats[0];
        k_th = k_rel;
        double d = 3.0 * (double)c.n - 3.0 * b.flow_stats[1];
        dof = d > 1.0 ? d : 1.0;
    }
    double l = 1.0;
    if (thermostat_on && k_th > 0.0) {
        if (c.thermostat == 1) {
            double t = k_th / dof;
            double s = 1.0 + c.dt / c.tau * (c.target_t / t - 1.0);
            l = sqrt(s > 0.0 ? s : 0.0);
            l = l < 0.8 ? 0.8 : (l > 1.25 ? 1.25 : l);
        } else if (c.thermostat == 2) {
            Sequence rng;
            rng.init(c.seed, STREAM_CSVR, 0, step * 64ull);
            double ke = 0.5 * k_th;
            double target = 0.5 * dof * c.target_t;
            double factor = exp(-c.dt / c.tau);
            double rr = rng.gauss();
            double noises = rng.chi_squared(dof - 1.0);
            double new_ke = ke + (1.0 - factor) * (target * (noises + rr * rr) / dof - ke) +
                            2.0 * rr * sqrt(ke * target / dof * (1.0 - factor) * factor);
            l = sqrt((new_ke > 0.0 ? new_ke : 0.0) / ke);
        }
    }
    b.lambda[0] = l;
    if (want) {
        double* r = b.records + RECORD_WORDS * record;
        r[0] = (double)step;
        // Relative to the flow only the relative motion is scaled: the flow's part and the
        // momentum stay.
        double pl = relative ? 1.0 : l;
        r[1] = relative ? ke2 + (l * l - 1.0) * k_rel : ke2 * l * l;
        r[2] = pe;
        r[3] = pw;
        r[4] = xe;
        r[5] = xw;
        r[6] = px * pl;
        r[7] = py * pl;
        r[8] = pz * pl;
        r[9] = c.piston_on ? b.piston[1] : 0.0;
        r[10] = c.piston_on ? b.piston[0] : 0.0;
        r[11] = c.piston_on ? b.piston[2] : 0.0;
        r[12] = relative ? b.flow_stats[0] : 0.0;
        r[13] = relative ? b.flow_stats[1] : 0.0;
        b.clock[1] = record + 1;
    }
}

// One thread: the step in progress is the next one (between integrate_first and the forces).
extern "C" __global__ void step_tick(Consts c, Bufs b) {
    if (threadIdx.x == 0 && blockIdx.x == 0) b.clock[0] += 1;
}

extern "C" __global__ void __launch_bounds__(BLOCK) scale_velocities(Consts c, Bufs b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double l = b.lambda[0];
    if (i >= c.n || l == 1.0) return;
    real_s4 v = b.vel[i];
    real_s s = (real_s)l;
    v.x *= s;
    v.y *= s;
    v.z *= s;
    b.vel[i] = v;
}
