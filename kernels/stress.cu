// The pressure tensor on the device for transport sampling (src/sim/cuda/engine/stress.rs;
// the contract is src/transport/spec.rs, the CPU's counterpart src/sim/cpu/stress.rs):
// P_ab = (sum_i m_i v_ia v_ib + W_ab) / V, xx, yy, zz, xy, xz, yz. The force pass of a
// stress step (MODE_STRESS, forces.cu) leaves per-block sums of W_ab in partials_stress; the
// step's integrator (integrate_second or integrate_fused, integrate.cu) leaves per-block sums
// of m v_a v_b after them (from `kin_off`), before the thermostat's uniform scaling, which
// stress_finish applies as lambda^2 (`scaled`); where the velocities change otherwise after
// the integrator (relative to the flow, the tunnel's zone), stress_kinetic sums them at the
// step's end instead. stress_finish adds both in a fixed order and writes the record
// [step, P_xx .. P_yz, unused] to row (step / every) % rows of stress_records, so the row of
// a step never depends on what ran before (a call redone after a list overflow writes the
// same rows again).
#include "common.cuh"
#include "reduce.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) stress_kinetic(Consts c, Bufs b, int kin_off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    real_s4 v = i < c.n ? b.vel[i] : real_s4{};
    double m = i < c.n ? b.masses[type_of(b.pos[i].w)] : 0.0;
    kinetic_tensor(b, kin_off, m, v);
}

// FINISH_BLOCKS blocks: each adds its share of the force and kinetic partials (the latter
// times `l2`, the thermostat's factor squared when `scaled`) into one row of `level2`; the
// last block to finish adds those rows in block order and writes the record, so the result
// does not depend on which block finished last. `count` (zero between calls) counts the
// blocks done.
extern "C" __global__ void __launch_bounds__(BLOCK) stress_finish(Consts c, Bufs b, unsigned long long every, int rows,
                                                                 int n_force, int kin_off, int n_kin, int scaled,
                                                                 int level2_off) {
    __shared__ double scratch[32];
    __shared__ bool last;
    double* level2 = b.partials_stress + 6 * (size_t)level2_off;
    unsigned long long* count = reinterpret_cast<unsigned long long*>(level2 + 6 * (size_t)gridDim.x);
    int stride = gridDim.x * BLOCK;
    // Six independent sums per thread over whole 48-byte rows (many loads in flight).
    double w[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, k6[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (int j = blockIdx.x * BLOCK + threadIdx.x; j < n_force; j += stride) {
        const double* p = b.partials_stress + 6 * (size_t)j;
        #pragma unroll
        for (int k = 0; k < 6; k++) w[k] += p[k];
    }
    for (int j = blockIdx.x * BLOCK + threadIdx.x; j < n_kin; j += stride) {
        const double* p = b.partials_stress + 6 * ((size_t)kin_off + j);
        #pragma unroll
        for (int k = 0; k < 6; k++) k6[k] += p[k];
    }
    double l2 = scaled ? b.lambda[0] * b.lambda[0] : 1.0;
    #pragma unroll
    for (int k = 0; k < 6; k++) {
        double t = block_sum(w[k], scratch) + l2 * block_sum(k6[k], scratch);
        if (threadIdx.x == 0) level2[6 * blockIdx.x + k] = t;
    }
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(count, 1ull) == (unsigned long long)gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    double tot[6];
    #pragma unroll
    for (int k = 0; k < 6; k++) {
        double acc = 0.0;
        for (int g = threadIdx.x; g < (int)gridDim.x; g += BLOCK) acc += __ldcg(level2 + 6 * g + k);
        tot[k] = block_sum(acc, scratch);
    }
    if (threadIdx.x != 0) return;
    *count = 0ull;
    unsigned long long step = b.clock[0];
    // The telemetry's volume: the box, under the piston when there is one.
    double volume = 1.0;
    #pragma unroll
    for (int k = 0; k < 3; k++) volume *= (k == 1 && c.piston_on) ? b.piston[0] - c.lo[1] : c.hi[k] - c.lo[k];
    double* r = b.stress_records + 8 * (size_t)((step / every) % (unsigned long long)rows);
    r[0] = (double)step;
    #pragma unroll
    for (int k = 0; k < 6; k++) r[1 + k] = tot[k] / volume;
    r[7] = 0.0;
}
