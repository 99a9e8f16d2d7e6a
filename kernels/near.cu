// Which atoms can feel a surface before the next list rebuild, so the obstacle and surface
// friction passes and the force epilogue touch only those (a wind tunnel's cylinder reaches a
// few thousand of a million atoms). near_pass runs with the list rebuild (after the sort, on
// the positions the list is built from; every step without lists, margin 0) and sets, per
// atom slot, b.near[i]:
//   NEAR_OBSTACLE  the obstacle field's distance is below the obstacle cut-off plus `margin`
//   NEAR_FRICTION  a wall face or obstacle surface is within the friction range plus `margin`
// `margin` is half the skin: until the next rebuild no atom moves farther from its build
// position (integrate_first's skin test), and distances to surfaces change by at most that.
// A reach at or beyond the field's clamp (c.obs_far) flags every atom, as does a moving wall
// (the piston) for friction. Bits of an atom that cannot feel the surface are what the
// passes would have computed: a zero force.
#include "common.cuh"
#include "obstacles.cuh"

// Rounding room for the positions (f32 at a thousand sigma is 6e-5) on top of the margin.
#define NEAR_SLACK 0.01

extern "C" __global__ void __launch_bounds__(BLOCK) near_pass(Consts c, Bufs b, int gate, double margin) {
    if (!b.flags[gate]) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    real_s4 x = b.pos[i];
    double p[3] = {(double)x.x, (double)x.y, (double)x.z};
    double slack = margin + NEAR_SLACK;
    double dist = c.obs_far;
    unsigned char bits = 0;
    if (c.has_obstacles) {
        double gx, gy;
        dist = obs_sample(c, b, p[0], p[1], gx, gy);
        double reach = c.o_cutoff + slack;
        if (dist < reach || reach >= c.obs_far) bits |= NEAR_OBSTACLE;
    }
    if (c.friction_range > 0.0) {
        double reach = c.friction_range + slack;
        bool near = c.has_obstacles && (dist < reach || reach >= c.obs_far);
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            if (c.periodic[k]) continue;
            if (k == 1 && c.piston_on) near = true;
            if (p[k] - c.lo[k] < reach || c.hi[k] - p[k] < reach) near = true;
        }
        if (near) bits |= NEAR_FRICTION;
    }
    b.near[i] = bits;
}
