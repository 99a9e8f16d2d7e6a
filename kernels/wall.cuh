// The 9-3 wall evaluator, mirroring src/physics/wall.rs: LAMMPS fix wall/lj93 form, with a
// linear continuation below d_cap so atoms inside a wall or obstacle are pushed out.
#pragma once
#include "common.cuh"

struct Wall93 {
    real_f c1, c2, c3, c4, offset, cutoff, dcap, ecap, fcap;
};

__device__ __forceinline__ Wall93 wall_from(double c1, double c2, double c3, double c4, double off, double cut,
                                            double dcap, double ecap, double fcap) {
    Wall93 w;
    w.c1 = (real_f)c1;
    w.c2 = (real_f)c2;
    w.c3 = (real_f)c3;
    w.c4 = (real_f)c4;
    w.offset = (real_f)off;
    w.cutoff = (real_f)cut;
    w.dcap = (real_f)dcap;
    w.ecap = (real_f)ecap;
    w.fcap = (real_f)fcap;
    return w;
}

// Force pushing away from the surface and energy at distance d (zero beyond the cutoff).
__device__ __forceinline__ void wall_eval(const Wall93& w, real_f d, real_f& f, real_f& e) {
    if (d >= w.cutoff) {
        f = 0;
        e = 0;
    } else if (d < w.dcap) {
        f = w.fcap;
        e = w.ecap + w.fcap * (w.dcap - d);
    } else {
        real_f rinv = (real_f)1 / d;
        real_f r2inv = rinv * rinv;
        real_f r4inv = r2inv * r2inv;
        real_f r10inv = r4inv * r4inv * r2inv;
        f = w.c1 * r10inv - w.c2 * r4inv;
        e = w.c3 * r4inv * r4inv * rinv - w.c4 * r2inv * rinv - w.offset;
    }
}
