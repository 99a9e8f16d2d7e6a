// The per-atom steps of velocity Verlet shared by the integrator kernels (integrate.cu) and
// the fused force-and-integrate kernel (forces.cu, forces_neighbors_step): one species'
// mass, the build position for the skin test, the first half kick and drift with its tests,
// and the second half kick with the Langevin update.
#pragma once
#include "common.cuh"
#include "rng.cuh"

// The mass of an atom whose state position is x: with one species its mass, without
// waiting on the position's load for the type.
__device__ __forceinline__ double mass_of(const Bufs& b, const real_s4& x) {
#if NTYPES == 1
    return b.masses[0];
#else
    return b.masses[type_of(x.w)];
#endif
}

// Atom i's position at the last list build, for the skin test (zero without `track`). The
// callers load it with the atom's other data, before any store: the compiler must assume a
// store may alias it, so loaded after them it would cost one more memory round trip.
__device__ __forceinline__ real_f4 build_position(const Bufs& b, int i, int track) {
    real_f4 q{};
    if (track) q = ldcs4(b.pos_build + i);
    return q;
}

// First half kick and drift of atom i (state x, v; force f) for `step`: wrap on periodic
// axes, the escape and runaway tests, and with `track` the skin test against q, the build
// position (build_position). Stores x and v, and leaves them in x and v.
__device__ __forceinline__ void kick_drift(const Consts& c, const Bufs& b, int i, real_s4& x, real_s4& v,
                                           const real_f4& f, double m, unsigned long long step, int track,
                                           const real_f4& q) {
    real_s dtfm = (real_s)(0.5 * c.dt / m);
    real_s dt = (real_s)c.dt;
    v.x += dtfm * (real_s)f.x;
    v.y += dtfm * (real_s)f.y;
    v.z += dtfm * (real_s)f.z;
    real_s dx = dt * v.x, dy = dt * v.y, dz = dt * v.z;
    x.x += dx;
    x.y += dy;
    x.z += dz;
    real_s* xs[3] = {&x.x, &x.y, &x.z};
    bool escaped = false;
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        if (c.periodic[k]) {
            real_s lo = (real_s)c.lo[k], hi = (real_s)c.hi[k], len = (real_s)(c.hi[k] - c.lo[k]);
            if (*xs[k] < lo) *xs[k] += len;
            else if (*xs[k] >= hi) *xs[k] -= len;
        } else {
            double xk = (double)*xs[k];
            escaped |= xk < c.lo[k] - ESCAPE_MARGIN || xk > c.hi[k] + ESCAPE_MARGIN;
        }
    }
    if (escaped) {
        b.flags[FLAG_ESCAPE] = 1;
        b.flags[FLAG_BLOWUP] = 1;
        atomicMin(b.blowup_step, step);
    }
    b.pos[i] = x;
    b.vel[i] = v;
#if PRECISION == 1
    b.posf[i] = make_float4((float)x.x, (float)x.y, (float)x.z, (float)x.w);
#endif
    double moved = (double)(dx * dx + dy * dy + dz * dz);
    if (!(moved <= c.runaway_sq)) {
        b.flags[FLAG_BLOWUP] = 1;
        atomicMin(b.blowup_step, step);
    }
    if (track) {
        double d[3] = {(double)x.x - (double)q.x, (double)x.y - (double)q.y, (double)x.z - (double)q.z};
        double r2 = 0.0;
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            double dk = d[k] - c.len[k] * rint(d[k] * c.inv_len[k]);
            r2 += dk * dk;
        }
        if (r2 > c.skin_half_sq) b.flags[FLAG_REBUILD] = 1;
    }
}

// Second half kick of atom i for `step` with the Langevin update after it; returns v.
__device__ __forceinline__ real_s4 second_kick(const Consts& c, const Bufs& b, int i, real_s4 v, const real_f4& f,
                                               double m, unsigned long long step) {
    real_s dtfm = (real_s)(0.5 * c.dt / m);
    v.x += dtfm * (real_s)f.x;
    v.y += dtfm * (real_s)f.y;
    v.z += dtfm * (real_s)f.z;
    if (c.thermostat == 3) {
        double xi[4];
        normal4(c.seed, STREAM_LANGEVIN, b.ids[i], step, xi);
        double sd = c.langevin_c2 * sqrt(c.target_t / m);
        v.x = (real_s)(c.langevin_c1 * (double)v.x + sd * xi[0]);
        v.y = (real_s)(c.langevin_c1 * (double)v.y + sd * xi[1]);
        v.z = (real_s)(c.langevin_c1 * (double)v.z + sd * xi[2]);
    }
    return v;
}
