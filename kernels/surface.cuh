// The one-body forces of the surfaces that need more than a wall's distance, atom by atom,
// for the force epilogue (forces.cu) to add in: the obstacle force, energy and virial from the
// exact distance field (obstacles.cuh), mirroring src/physics/obstacles.rs, and the surface
// friction (src/physics/friction.rs), mirroring the CPU's External::friction in
// src/sim/cpu/external.rs: a Langevin force on the velocity tangential to each wall face and
// to the obstacle surface within c.friction_range of the atom, toward zero, using the
// velocity the atom has at this force pass. Only atoms near.cu flagged are computed; warps
// with none leave at once. The reactions go to the surfaces' bodies (bodies.cuh).
// Friction noise: normal4(seed, STREAM_SURFACE_FRICTION, id, step * 8 + surface), surface =
// 2 axis + hi for the wall faces and 6 for the obstacles, step = the device clock (the step
// whose force pass this is), as the host draws it.
// The tunnel's start spin: while the clock is before c.friction_spin_until the obstacle surface
// moves at c.friction_spin along t = (-gy, gx) and the drag pulls toward it; otherwise the
// branch is not taken and the force is the plain friction's to the bit.
// surface_pass (surface.cu) runs them just before the force kernel, for obstacles, friction or
// both, with the distance field sampled once for both (before, friction and obstacles each
// sampled it: H200, ncu, the vortex street's pass 15 -> 12.6 us).
#pragma once
#include "common.cuh"
#include "rng.cuh"
#include "wall.cuh"
#include "obstacles.cuh"
#include "bodies.cuh"
#include "near.cuh"

#define FRICTION_SURFACES_PER_STEP 8ull
#define FRICTION_OBSTACLE_SURFACE 6ull

// The obstacle force, energy and virial of the atom in slot i (-1: none) if near.cu flagged it
// (exact distance, obstacles.cuh), into obs_force for the force kernel's epilogue to add in
// with the other one-body forces; warps with no such atom leave at once. With bodies, the
// reaction goes to the shape of the nearest surface. Every lane of the warp calls it, with
// `hit` the atom's nearest surface (surface_atom samples it once for this and the friction).
__device__ __forceinline__ void obstacle_atom(const Consts& c, const Bufs& a, int i, const ObsHit& hit) {
    int shape = -1;
    double4 o = make_double4(0.0, 0.0, 0.0, 0.0);
    bool near = i >= 0 && (a.near[i] & NEAR_OBSTACLE);
    if (!__any_sync(FULL_WARP, near)) return;
    if (near) {
        double gx = hit.gx, gy = hit.gy, dist = hit.dist;
        int nearest = hit.shape;
        Wall93 ob = wall_from(c.o_c1, c.o_c2, c.o_c3, c.o_c4, c.o_offset, c.o_cutoff, c.o_dcap, c.o_ecap, c.o_fcap);
        real_f fo, eo;
        wall_eval(ob, (real_f)dist, fo, eo);
        if (fo != (real_f)0 || eo != (real_f)0) {
            o = make_double4((double)fo * gx, (double)fo * gy, (double)eo, dist * (double)fo);
            shape = nearest;
        }
        a.obs_force[i] = o;
    }
    if (c.n_bodies > 0) bodies_add_obstacle(a, shape, o.x, o.y);
}

// The surface friction of the atom in slot i (-1: none; every lane of the warp calls it), with
// `hit` its nearest obstacle surface where there are obstacles (surface_atom).
__device__ __forceinline__ void friction_atom(const Consts& c, const Bufs& a, int i, const ObsHit& hit) {
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
            double gx = hit.gx, gy = hit.gy;
            int nearest = hit.shape;
            if (hit.dist < c.friction_range && nearest >= 0) {
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

// The obstacle force and surface friction of the atom in slot i (-1: none) into obs_force and
// fric_force, for the epilogue to add (nothing where there are neither). The distance field is
// sampled once for both. Every lane of the warp calls it. FRICTION false leaves the friction
// out (obstacle_pass, surface.cu).
template <bool FRICTION = true>
__device__ __forceinline__ void surface_atom(const Consts& c, const Bufs& a, int i) {
    bool friction = FRICTION && c.friction_range > 0.0;
    if (!c.has_obstacles && !friction) return;
    unsigned int bits = i >= 0 ? a.near[i] : 0u;
    if (!__any_sync(FULL_WARP, bits != 0u)) return;
    ObsHit hit = {c.obs_far, 0.0, 0.0, -1};
    if (bits && c.has_obstacles) {
        real_s4 x = a.pos[i];
        hit = obs_hit(c, a, (double)x.x, (double)x.y);
    }
    if (c.has_obstacles) obstacle_atom(c, a, i, hit);
    if (friction) friction_atom(c, a, i, hit);
}
