// The dye's per-atom step (src/sim/cpu/state/dye.rs, physics::dye), shared by dye_step
// (dye.cu) and the tunnel's fused integrator (tunnel.cu): the rakes an atom's move crossed and
// the inflow zone's clearing. The arithmetic is the CPU's f64, uncontracted.
#pragma once
#include "common.cuh"

// Twice the signed area of (o, a, b), as physics::dye::cross.
__device__ __forceinline__ double dye_cross(double ox, double oy, double ax, double ay, double bx, double by) {
    return __dsub_rn(__dmul_rn(__dsub_rn(ax, ox), __dsub_rn(by, oy)), __dmul_rn(__dsub_rn(ay, oy), __dsub_rn(bx, ox)));
}

// physics::dye::DyeRake::crossed.
__device__ bool dye_crossed(const double* r, double p0x, double p0y, double p1x, double p1y) {
    double d1 = dye_cross(r[0], r[1], r[2], r[3], p0x, p0y);
    double d2 = dye_cross(r[0], r[1], r[2], r[3], p1x, p1y);
    if ((d1 > 0.0 && d2 > 0.0) || (d1 < 0.0 && d2 < 0.0) || (d1 == 0.0 && d2 == 0.0)) return false;
    double d3 = dye_cross(p0x, p0y, p1x, p1y, r[0], r[1]);
    double d4 = dye_cross(p0x, p0y, p1x, p1y, r[2], r[3]);
    return !((d3 > 0.0 && d4 > 0.0) || (d3 < 0.0 && d4 < 0.0));
}

// physics::dye::after_move: the last rake crossed, else `old`.
__device__ unsigned int dye_after_move(const double* rakes, int n_rakes, double p0x, double p0y, double p1x, double p1y, unsigned int old) {
    unsigned int tag = old;
    for (int r = 0; r < n_rakes; r++) {
        if (dye_crossed(rakes + 5 * r, p0x, p0y, p1x, p1y)) tag = (unsigned int)rakes[5 * r + 4];
    }
    return tag;
}

// physics::dye::DyeRake::near for any rake.
__device__ bool dye_near(const double* rakes, int n_rakes, double px, double py, double reach) {
    for (int r = 0; r < n_rakes; r++) {
        const double* k = rakes + 5 * r;
        if (px >= fmin(k[0], k[2]) - reach && px <= fmax(k[0], k[2]) + reach && py >= fmin(k[1], k[3]) - reach &&
            py <= fmax(k[1], k[3]) + reach)
            return true;
    }
    return false;
}

// Atom i's tag after its drift to x (velocity *v, read only where needed: the move was
// x - dt v -> x): the last rake its move crossed (a move wrapped across a periodic x or y
// edge is also tested in the image on the other side), then cleared in the tunnel's inflow
// zone (with `zone`). The atom's id and tag are read only where the tag may change: near a
// rake or a periodic edge, or in the zone. `rakes` holds 5 doubles per rake: ax, ay, bx, by,
// tag.
__device__ __forceinline__ void dye_atom(const Consts& c, const Bufs& b, int i, const real_s4& x, const real_s4* v,
                                         unsigned short* dye, const double* rakes, int n_rakes, int zone,
                                         double reach) {
    double p1x = (double)x.x, p1y = (double)x.y;
    bool near = false;
    if (n_rakes > 0) {
        bool wx = c.periodic[0] && (p1x - reach < c.lo[0] || p1x + reach >= c.hi[0]);
        bool wy = c.periodic[1] && (p1y - reach < c.lo[1] || p1y + reach >= c.hi[1]);
        // Most atoms are far from every rake and from a periodic edge.
        near = wx || wy || dye_near(rakes, n_rakes, p1x, p1y, reach);
    }
    bool in_zone = zone && p1x >= c.tunnel_lo && p1x < c.tunnel_hi;
    if (!near && !in_zone) return;
    unsigned int id = b.ids[i];
    unsigned int old = dye[id], tag = old;
    if (near) {
        real_s4 w = *v;
        double p0x = __dsub_rn(p1x, __dmul_rn(c.dt, (double)w.x));
        double p0y = __dsub_rn(p1y, __dmul_rn(c.dt, (double)w.y));
        tag = dye_after_move(rakes, n_rakes, p0x, p0y, p1x, p1y, tag);
        double p0[2] = {p0x, p0y}, shift[2] = {0.0, 0.0};
        for (int k = 0; k < 2; k++) {
            if (c.periodic[k] && p0[k] < c.lo[k]) shift[k] = c.len[k];
            else if (c.periodic[k] && p0[k] >= c.hi[k]) shift[k] = -c.len[k];
        }
        if (shift[0] != 0.0 || shift[1] != 0.0) {
            tag = dye_after_move(rakes, n_rakes, __dadd_rn(p0x, shift[0]), __dadd_rn(p0y, shift[1]),
                                 __dadd_rn(p1x, shift[0]), __dadd_rn(p1y, shift[1]), tag);
        }
    }
    if (in_zone) tag = 0;
    if (tag != old) dye[id] = (unsigned short)tag;
}
