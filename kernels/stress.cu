// The pressure tensor on the device for transport sampling (src/sim/cuda/engine/stress.rs;
// the contract is src/transport/spec.rs, the CPU's counterpart src/sim/cpu/stress.rs):
// P_ab = (sum_i m_i v_ia v_ib + W_ab) / V, xx, yy, zz, xy, xz, yz. The force pass of a
// stress step (MODE_STRESS, forces.cu) leaves per-block sums of W_ab in partials_stress;
// after the step's thermostat, stress_kinetic leaves per-block sums of m v_a v_b after them
// (from `kin_off`), and stress_finish adds both in a fixed order and writes the record
// [step, P_xx .. P_yz, unused] to row (step / every) % rows of stress_records, so the row of
// a step never depends on what ran before (a call redone after a list overflow writes the
// same rows again).
#include "common.cuh"
#include "reduce.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK) stress_kinetic(Consts c, Bufs b, int kin_off) {
    __shared__ double scratch[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v[3] = {0.0, 0.0, 0.0}, m = 0.0;
    if (i < c.n) {
        real_s4 u = b.vel[i];
        m = b.masses[type_of(b.pos[i].w)];
        v[0] = (double)u.x;
        v[1] = (double)u.y;
        v[2] = (double)u.z;
    }
    const int ia[6] = {0, 1, 2, 0, 0, 1}, ib[6] = {0, 1, 2, 1, 2, 2};
    #pragma unroll
    for (int k = 0; k < 6; k++) {
        double t = block_sum(m * v[ia[k]] * v[ib[k]], scratch);
        if (threadIdx.x == 0) b.partials_stress[6 * ((size_t)kin_off + blockIdx.x) + k] = t;
    }
}

// One block.
extern "C" __global__ void __launch_bounds__(BLOCK) stress_finish(Consts c, Bufs b, unsigned long long every, int rows,
                                                                 int n_force, int kin_off, int n_kin) {
    __shared__ double scratch[32];
    unsigned long long step = b.clock[0];
    double tot[6];
    #pragma unroll
    for (int k = 0; k < 6; k++) {
        double acc = 0.0;
        for (int j = threadIdx.x; j < n_force; j += BLOCK) acc += b.partials_stress[6 * (size_t)j + k];
        for (int j = threadIdx.x; j < n_kin; j += BLOCK) acc += b.partials_stress[6 * ((size_t)kin_off + j) + k];
        tot[k] = block_sum(acc, scratch);
    }
    if (threadIdx.x != 0) return;
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
