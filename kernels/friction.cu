// Surface friction (src/physics/friction.rs), mirroring the CPU's External::friction in
// src/sim/cpu/external.rs: a Langevin force on the velocity tangential to each wall face and
// to the obstacle surface within c.friction_range of the atom, toward zero, using the
// velocity the atom has at this force pass. friction_pass (surface_pass where there are also
// obstacles) runs before the force kernel (only while friction is on) and writes the friction of each atom near a surface (near.cu) into
// b.fric_force, which the force epilogue adds after the obstacle force; the reaction goes to
// the surfaces' bodies here.
// Noise: normal4(seed, STREAM_SURFACE_FRICTION, id, step * 8 + surface), surface = 2 axis + hi
// for the wall faces and 6 for the obstacles, step = the device clock (the step whose force
// pass this is), as the host draws it.
// The tunnel's start spin: while the clock is before c.friction_spin_until the obstacle surface
// moves at c.friction_spin along t = (-gy, gx) and the drag pulls toward it; otherwise the
// branch is not taken and the force is the plain friction's to the bit.
#include "common.cuh"
#include "rng.cuh"
#include "obstacles.cuh"
#include "bodies.cuh"

#define FRICTION_SURFACES_PER_STEP 8ull
#define FRICTION_OBSTACLE_SURFACE 6ull

// The surface friction of the atom in slot i (-1: none; every lane of the warp calls it).
__device__ __forceinline__ void friction_atom(const Consts& c, const Bufs& a, int i) {
    double wf[6][3];
    #pragma unroll
    for (int f = 0; f < 6; f++) wf[f][0] = wf[f][1] = wf[f][2] = 0.0;
    double of[3] = {0.0, 0.0, 0.0};
    int shape = -1;
    // Only atoms near a surface (near.cu); warps with none leave at once.
    bool near = i >= 0 && (a.near[i] & NEAR_FRICTION);
    if (!__any_sync(FULL_WARP, near)) return;
    if (near) {
        real_s4 x = a.pos[i];
        real_s4 vv = a.vel[i];
        double p[3] = {(double)x.x, (double)x.y, (double)x.z};
        double v[3] = {(double)vv.x, (double)vv.y, (double)vv.z};
        double m = a.masses[type_of(x.w)];
        unsigned int id = a.ids[i];
        unsigned long long base = a.clock[0] * FRICTION_SURFACES_PER_STEP;
        double drag = c.friction_gamma * m;
        double sd = c.friction_noise * sqrt(m);
        double ff[3] = {0.0, 0.0, 0.0};
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            if (c.periodic[k]) continue;
            // With a piston the top y wall is the piston plane.
            double hi = (k == 1 && c.piston_on) ? a.piston[0] : c.hi[k];
            double d[2] = {p[k] - c.lo[k], hi - p[k]};
            #pragma unroll
            for (int h = 0; h < 2; h++) {
                if (!(d[h] < c.friction_range)) continue;
                double xi[4];
                normal4(c.seed, STREAM_SURFACE_FRICTION, id, base + (unsigned long long)(2 * k + h), xi);
                #pragma unroll
                for (int j = 0; j < 3; j++) {
                    double t = j == k ? 0.0 : -drag * v[j] + sd * xi[j];
                    ff[j] += t;
                    wf[2 * k + h][j] = t;
                }
            }
        }
        if (c.has_obstacles) {
            double gx, gy;
            int nearest;
            double dist = obs_sample_shape(c, a, p[0], p[1], gx, gy, nearest);
            if (dist < c.friction_range && nearest >= 0) {
                double xi[4];
                normal4(c.seed, STREAM_SURFACE_FRICTION, id, base + FRICTION_OBSTACLE_SURFACE, xi);
                double vn = v[0] * gx + v[1] * gy;
                double xn = xi[0] * gx + xi[1] * gy;
                double vt[3] = {v[0] - vn * gx, v[1] - vn * gy, v[2]};
                if (a.clock[0] < c.friction_spin_until) {
                    vt[0] += c.friction_spin * gy;
                    vt[1] -= c.friction_spin * gx;
                }
                double xt[3] = {xi[0] - xn * gx, xi[1] - xn * gy, xi[2]};
                #pragma unroll
                for (int j = 0; j < 3; j++) {
                    of[j] = -drag * vt[j] + sd * xt[j];
                    ff[j] += of[j];
                }
                shape = nearest;
            }
        }
        a.fric_force[i] = make_double4(ff[0], ff[1], ff[2], 0.0);
    }
    if (c.n_bodies > 0) {
        #pragma unroll
        for (int f = 0; f < 6; f++) {
            int body = c.body_wall[f];
            if (body >= 0) bodies_add_vec(a, body, wf[f]);
        }
        bodies_add_shape3(a, shape, of);
    }
}

// friction_atom over every atom slot, where there are no obstacles.
extern "C" __global__ void __launch_bounds__(BLOCK) friction_pass(Consts c, Bufs a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    friction_atom(c, a, i < c.n ? i : -1);
}

// The obstacle forces (forces.cu, obstacle_atom) and the surface friction of the atoms near.cu
// flagged, in one pass before the force kernel where there are both (the wind tunnels): one
// kernel of the step graph instead of two (H200, single: the twin eddies' step 0.0863 ->
// 0.0843 ms, the vortex street's 0.3838 -> 0.3811). Where there are only obstacles (the
// default tank) obstacle_pass alone stays: this kernel in its place was 1% slower there.
extern "C" __global__ void __launch_bounds__(BLOCK) surface_pass(Consts c, Bufs a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int slot = i < c.n ? i : -1;
    obstacle_atom(c, a, slot);
    friction_atom(c, a, slot);
}
