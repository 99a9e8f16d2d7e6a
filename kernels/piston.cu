// The piston (src/physics/piston.rs): the top y wall as a plane of mass M under an external
// pressure, stepped by velocity Verlet in lockstep with the atoms. The force epilogue puts
// the top wall's push on each atom into b.piston_part; piston_latch sums it (one block, a
// fixed order); piston_step kicks and drifts the plane. State in b.piston:
// [0] height, [1] velocity, [2] the atoms' push from the last force pass (up), [3] the drag
// target, [4] 1 while dragged.
#include "common.cuh"
#include "reduce.cuh"

// physics::piston::DRAG_TIME and DRAG_SPEED_MAX.
#define PISTON_DRAG_TIME 0.2
#define PISTON_DRAG_SPEED_MAX 2.0

extern "C" __global__ void __launch_bounds__(1024) piston_latch(Consts c, Bufs b) {
    __shared__ double scratch[32];
    double s = 0.0;
    for (int i = threadIdx.x; i < c.n; i += blockDim.x) s += b.piston_part[i];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    s = warp_sum(s);
    if (lane == 0) scratch[warp] = s;
    __syncthreads();
    if (warp == 0) {
        double t = lane < (int)(blockDim.x >> 5) ? scratch[lane] : 0.0;
        t = warp_sum(t);
        if (lane == 0) b.piston[2] = t;
    }
}

// PistonState::half_kick, or the drag velocity while dragged.
__device__ __forceinline__ void piston_kick(const Consts& c, double* s) {
    if (s[4] != 0.0) {
        double v = (s[3] - s[0]) / PISTON_DRAG_TIME;
        s[1] = v < -PISTON_DRAG_SPEED_MAX ? -PISTON_DRAG_SPEED_MAX : (v > PISTON_DRAG_SPEED_MAX ? PISTON_DRAG_SPEED_MAX : v);
        return;
    }
    double decay = exp(-0.5 * c.piston_damp * c.dt);
    s[1] = s[1] * decay + 0.5 * c.dt / c.piston_mass * (s[2] - c.piston_pa);
    if ((s[0] <= c.piston_lo && s[1] < 0.0) || (s[0] >= c.piston_hi && s[1] > 0.0)) s[1] = 0.0;
}

// PistonState::drift: h += dt v, then the hard stops.
__device__ __forceinline__ void piston_drift(const Consts& c, double* s) {
    s[0] += c.dt * s[1];
    if (s[0] < c.piston_lo) {
        s[0] = c.piston_lo;
        s[1] = 0.0;
    } else if (s[0] > c.piston_hi) {
        s[0] = c.piston_hi;
        s[1] = 0.0;
    }
}

// `second`: the half kick closing a step (after its force pass); `first`: the half kick and
// drift opening the next one (before its force pass).
extern "C" __global__ void piston_step(Consts c, Bufs b, int second, int first) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    double* s = b.piston;
    if (second) piston_kick(c, s);
    if (first) {
        piston_kick(c, s);
        piston_drift(c, s);
    }
}
