// The 12-6 Lennard-Jones pair evaluator, mirroring src/physics/lj.rs (LAMMPS lj/cut form):
// force_divr = r^-8 (lj1 r^-6 - lj2), energy = r^-6 (lj3 r^-6 - lj4) - offset, r < r_c.
#pragma once
#include "common.cuh"

// One species pair's coefficients (the host's LjPair<f64>), with the pair's own cutoff.
struct LjCoeffs {
    double lj1, lj2, lj3, lj4, offset, rcut_sq;
};

struct LjF {
    real_f lj1, lj2, lj3, lj4, offset, rcut_sq;
};

__device__ __forceinline__ LjF lj_from(double lj1, double lj2, double lj3, double lj4, double off, double rc2) {
    LjF p;
    p.lj1 = (real_f)lj1;
    p.lj2 = (real_f)lj2;
    p.lj3 = (real_f)lj3;
    p.lj4 = (real_f)lj4;
    p.offset = (real_f)off;
    p.rcut_sq = (real_f)rc2;
    return p;
}

// Coefficients of the pair (ti, tj): the constants for one species, else the table.
__device__ __forceinline__ LjF lj_pair(const Consts& c, const LjCoeffs* table, int ti, int tj) {
#if NTYPES == 1 && PRECISION == 2
    return lj_from(c.lj1, c.lj2, c.lj3, c.lj4, c.lj_offset, c.rcut_sq);
#elif NTYPES == 1
    // f32 copies made on the host: nothing to convert per pair.
    LjF p;
    p.lj1 = c.lj_f[0];
    p.lj2 = c.lj_f[1];
    p.lj3 = c.lj_f[2];
    p.lj4 = c.lj_f[3];
    p.offset = c.lj_f[4];
    p.rcut_sq = c.lj_f[5];
    return p;
#else
    LjCoeffs t = table[ti * NTYPES + tj];
    return lj_from(t.lj1, t.lj2, t.lj3, t.lj4, t.offset, t.rcut_sq);
#endif
}

__device__ __forceinline__ void lj_eval(real_f rsq, const LjF& p, real_f& force_divr, real_f& energy) {
#if PRECISION == 2
    real_f r2inv = (real_f)1 / rsq;
#else
    // One MUFU reciprocal (at most 1 ulp) instead of the IEEE division's slow path: the same
    // bits as __fdividef(1, rsq) for every normal rsq, without the four instructions that
    // rescale a denormal one (a pair is never that close).
    real_f r2inv;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r2inv) : "f"(rsq));
#endif
    real_f r6inv = r2inv * r2inv * r2inv;
    force_divr = r6inv * (p.lj1 * r6inv - p.lj2) * r2inv;
    energy = r6inv * (p.lj3 * r6inv - p.lj4) - p.offset;
}
