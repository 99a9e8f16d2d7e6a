// The thermostat relative to the flow on the GPU, mirroring src/flow/profile.rs (FlowProfile):
// per bin of the thermostat's x-y grid (Consts::flow_grid, flow::Grid::for_thermostat), the
// mass M_b and momentum P_b of its atoms (flow_bins_clear, flow_bins_sum), the means
// u_b = P_b / M_b with sum |P_b|^2 / M_b and the occupied bins (flow_bins_reduce, read by
// finish_step in integrate.cu), and the rescale v <- u_b + lambda (v - u_b) (scale_relative).
// Launched by sim/cuda/engine/steps.rs between integrate_second and finish_step. The thermal
// readout (sim::ThermalTelemetry) runs the same bins on a telemetry step's final state where
// finish_step's are not that state's (after a tunnel's zone, and in a measure) and copies
// their sums into the record (flow_bins_record; sim/cuda/engine/telemetry.rs).
#include "binsum.cuh"
#include "reduce.cuh"

// Fixed-point scale of the per-bin sums (2^36): each atom's m and m v are rounded to integer
// multiples of 2^-36 and added as 64-bit integers, so the sums do not depend on the order of
// the atomics (the trajectory stays reproducible) and hold up to +-1.3e8 per bin.
#define FLOW_FIXED 68719476736.0

// Zeroes the per-bin sums (one thread per bin).
extern "C" __global__ void __launch_bounds__(BLOCK) flow_bins_clear(Consts c, Bufs b) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= c.flow_bins) return;
    #pragma unroll
    for (int q = 0; q < 4; q++) b.flow_sums[4 * k + q] = 0ull;
}

// Adds each atom's (m, m vx, m vy, m vz) into its bin's sums (one thread per atom), summed
// over the warp's atoms of each bin first (warp_bin_sums): integers, so exact in any order
// (two's complement, added as unsigned).
extern "C" __global__ void __launch_bounds__(BLOCK) flow_bins_sum(Consts c, Bufs b) {
    __shared__ WarpScratch<unsigned long long> scratch[BLOCK / 32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int bin = -1;
    unsigned long long q[4] = {0, 0, 0, 0};
    if (i < c.n) {
        real_s4 x = b.pos[i];
        bin = flow_bin_of(c.flow_grid, x);
        if (bin >= 0) {
            real_s4 v = b.vel[i];
            double m = b.masses[type_of(x.w)];
            q[0] = (unsigned long long)__double2ll_rn(m * FLOW_FIXED);
            q[1] = (unsigned long long)__double2ll_rn(m * (double)v.x * FLOW_FIXED);
            q[2] = (unsigned long long)__double2ll_rn(m * (double)v.y * FLOW_FIXED);
            q[3] = (unsigned long long)__double2ll_rn(m * (double)v.z * FLOW_FIXED);
        }
    }
    // Every lane of the warp gets here (no early return), as warp_bin_sums needs.
    if (warp_bin_sums(bin, q, scratch[threadIdx.x / 32]) && bin >= 0) {
        unsigned long long* out = b.flow_sums + (size_t)bin * 4;
        #pragma unroll
        for (int k = 0; k < 4; k++) atomicAdd(out + k, q[k]);
    }
}

// One block: each bin's mean velocity into flow_mean (zero for an empty bin), and
// flow_stats = [sum over bins |P_b|^2 / M_b, occupied bins] (a fixed-order block sum).
extern "C" __global__ void __launch_bounds__(BLOCK) flow_bins_reduce(Consts c, Bufs b) {
    __shared__ double scratch[32];
    double flow = 0.0, occupied = 0.0;
    for (int k = threadIdx.x; k < c.flow_bins; k += BLOCK) {
        const long long* s = reinterpret_cast<const long long*>(b.flow_sums + 4 * k);
        double m = (double)s[0] / FLOW_FIXED;
        double* u = b.flow_mean + 4 * k;
        if (m > 0.0) {
            double px = (double)s[1] / FLOW_FIXED, py = (double)s[2] / FLOW_FIXED, pz = (double)s[3] / FLOW_FIXED;
            u[0] = px / m;
            u[1] = py / m;
            u[2] = pz / m;
            flow += (px * px + py * py + pz * pz) / m;
            occupied += 1.0;
        } else {
            u[0] = 0.0;
            u[1] = 0.0;
            u[2] = 0.0;
        }
        u[3] = 0.0;
    }
    double f = block_sum(flow, scratch);
    double o = block_sum(occupied, scratch);
    if (threadIdx.x == 0) {
        b.flow_stats[0] = f;
        b.flow_stats[1] = o;
    }
}

// v <- u_b + lambda (v - u_b) with lambda = lambda[0] from finish_step (one thread per atom;
// atoms outside the grid, as flow_bins_sum left them out, are untouched).
extern "C" __global__ void __launch_bounds__(BLOCK) scale_relative(Consts c, Bufs b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double l = b.lambda[0];
    if (i >= c.n || l == 1.0) return;
    real_s4 x = b.pos[i];
    int bin = flow_bin_of(c.flow_grid, x);
    if (bin < 0) return;
    const double* u = b.flow_mean + 4 * bin;
    real_s4 v = b.vel[i];
    v.x = (real_s)(u[0] + l * ((double)v.x - u[0]));
    v.y = (real_s)(u[1] + l * ((double)v.y - u[1]));
    v.z = (real_s)(u[2] + l * ((double)v.z - u[2]));
    b.vel[i] = v;
}

// One thread: the last flow_bins_reduce's [sum |P_b|^2 / M_b, occupied bins] into the last
// two words of the telemetry record written last (b.clock[1] - 1), whose 2 KE already
// describes the same state (after a tunnel's latch corrected it).
extern "C" __global__ void flow_bins_record(Consts c, Bufs b) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    int record = (int)b.clock[1] - 1;
    if (record < 0) return;
    double* r = b.records + RECORD_WORDS * record;
    r[12] = b.flow_stats[0];
    r[13] = b.flow_stats[1];
}
