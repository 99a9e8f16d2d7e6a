// Exact obstacle distance, mirroring src/physics/obstacles.rs: the cell holding the point lists
// the primitives (circle, capsule, rotated rectangle, polygon) that can be nearest there; the
// distance is the minimum of their exact signed distances, in double.
#pragma once
#include "common.cuh"

#define OBS_CIRCLE 0
#define OBS_CAPSULE 1
#define OBS_RECT 2

struct ObsPrim {
    unsigned int kind, first, count, shape;  // shape: the index of the shape it belongs to
    double a[6];
};

__device__ __forceinline__ void obs_to_segment(double px, double py, double ax, double ay, double bx, double by,
                                               double& dx, double& dy) {
    double pax = px - ax, pay = py - ay, bax = bx - ax, bay = by - ay;
    double bb = bax * bax + bay * bay;
    double h = bb > 0.0 ? (pax * bax + pay * bay) / bb : 0.0;
    h = h < 0.0 ? 0.0 : (h > 1.0 ? 1.0 : h);
    dx = pax - bax * h;
    dy = pay - bay * h;
}

__device__ __forceinline__ double obs_radial(double dx, double dy, double r, double& gx, double& gy) {
    double len = sqrt(dx * dx + dy * dy);
    if (len > 0.0) {
        gx = dx / len;
        gy = dy / len;
        return len - r;
    }
    gx = 1.0;
    gy = 0.0;
    return -r;
}

__device__ double obs_eval(const ObsPrim& q, const double2* verts, double px, double py, double& gx, double& gy) {
    const double* a = q.a;
    if (q.kind == OBS_CIRCLE) return obs_radial(px - a[0], py - a[1], a[2], gx, gy);
    if (q.kind == OBS_CAPSULE) {
        double dx, dy;
        obs_to_segment(px, py, a[0], a[1], a[2], a[3], dx, dy);
        return obs_radial(dx, dy, a[4], gx, gy);
    }
    if (q.kind == OBS_RECT) {
        double c = a[4], s = a[5];
        double dx = px - a[0], dy = py - a[1];
        double lx = c * dx + s * dy, ly = -s * dx + c * dy;
        double qx = fabs(lx) - a[2], qy = fabs(ly) - a[3];
        double sx = lx < 0.0 ? -1.0 : 1.0, sy = ly < 0.0 ? -1.0 : 1.0;
        double dist, lgx, lgy;
        if (qx > 0.0 || qy > 0.0) {
            double vx = qx > 0.0 ? qx : 0.0, vy = qy > 0.0 ? qy : 0.0;
            double r = sqrt(vx * vx + vy * vy);
            dist = r;
            lgx = sx * vx / r;
            lgy = sy * vy / r;
        } else if (qx > qy) {
            dist = qx;
            lgx = sx;
            lgy = 0.0;
        } else {
            dist = qy;
            lgx = 0.0;
            lgy = sy;
        }
        gx = c * lgx - s * lgy;
        gy = s * lgx + c * lgy;
        return dist;
    }
    // Polygon: nearest edge, sign by crossing number.
    const double2* v = verts + q.first;
    int n = (int)q.count;
    double best = 1e300, bx = 1.0, by = 0.0;
    bool inside = false;
    int j = n - 1;
    for (int i = 0; i < n; i++) {
        double dx, dy;
        obs_to_segment(px, py, v[j].x, v[j].y, v[i].x, v[i].y, dx, dy);
        double d2 = dx * dx + dy * dy;
        if (d2 < best) {
            best = d2;
            bx = dx;
            by = dy;
        }
        if ((v[i].y > py) != (v[j].y > py)) {
            double x = v[i].x + (py - v[i].y) / (v[j].y - v[i].y) * (v[j].x - v[i].x);
            if (px < x) inside = !inside;
        }
        j = i;
    }
    double d = obs_radial(bx, by, 0.0, gx, gy);
    if (inside) {
        gx = -gx;
        gy = -gy;
        return -d;
    }
    return d;
}

// Distance (clamped at far, where the gradient is zero) and gradient at (x, y), and the shape
// of the nearest surface (-1 beyond far).
__device__ __forceinline__ double obs_sample_shape(const Consts& c, const Bufs& a, double x, double y, double& gx,
                                                   double& gy, int& shape) {
    double p[2] = {x, y};
    int idx[2];
    #pragma unroll
    for (int k = 0; k < 2; k++) {
        if (c.grid_periodic[k]) p[k] -= c.grid_len[k] * floor((p[k] - c.grid_lo[k]) / c.grid_len[k]);
        double u = floor((p[k] - c.grid_lo[k]) / c.grid_cell[k]);
        int i = u < 0.0 ? 0 : (int)u;
        idx[k] = i > c.grid_cells[k] - 1 ? c.grid_cells[k] - 1 : i;
    }
    int cell = idx[1] * c.grid_cells[0] + idx[0];
    double best = c.obs_far;
    gx = 0.0;
    gy = 0.0;
    shape = -1;
    const ObsPrim* prims = (const ObsPrim*)a.obs_prims;
    for (unsigned int k = a.obs_start[cell]; k < a.obs_start[cell + 1]; k++) {
        double hx, hy;
        const ObsPrim& q = prims[a.obs_cand[k]];
        double d = obs_eval(q, (const double2*)a.obs_verts, p[0], p[1], hx, hy);
        if (d < best) {
            best = d;
            gx = hx;
            gy = hy;
            shape = (int)q.shape;
        }
    }
    return best;
}

// The nearest obstacle surface to a point: distance, unit gradient and shape (-1: none).
struct ObsHit {
    double dist, gx, gy;
    int shape;
};

__device__ __forceinline__ ObsHit obs_hit(const Consts& c, const Bufs& a, double x, double y) {
    ObsHit h;
    h.dist = obs_sample_shape(c, a, x, y, h.gx, h.gy, h.shape);
    return h;
}

// Distance and gradient at (x, y), as obs_sample_shape without the shape.
__device__ __forceinline__ double obs_sample(const Consts& c, const Bufs& a, double x, double y, double& gx,
                                             double& gy) {
    int shape;
    return obs_sample_shape(c, a, x, y, gx, gy, shape);
}
