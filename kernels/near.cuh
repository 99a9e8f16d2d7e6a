// The near-surface flags of one atom (near.cu's near_pass, and permute_copy in cells.cu,
// which sets them as it puts the re-sorted atoms back): NEAR_OBSTACLE where the obstacle
// field's distance is below the obstacle cut-off plus `margin`, NEAR_FRICTION where a wall face
// or obstacle surface is within the friction range plus `margin`.
#pragma once
#include "common.cuh"
#include "obstacles.cuh"

// Rounding room for the positions (f32 at a thousand sigma is 6e-5) on top of the margin.
#define NEAR_SLACK 0.01

// The flags of an atom at state position x.
__device__ __forceinline__ unsigned char near_bits(const Consts& c, const Bufs& b, const real_s4& x, double margin) {
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
    return bits;
}
