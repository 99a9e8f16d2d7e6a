// Cell-grid helpers shared by the cell sort, the list build and the cell-list force loop:
// the cell of a position (clamped on walled axes) and the storage rank of a neighbouring
// cell (periodic wrap, -1 beyond a wall). Cells are stored in Morton order via cell_rank.
#pragma once
#include "common.cuh"

__device__ __forceinline__ void cell_coords(const Consts& c, const real_s4& x, int cc[3]) {
    double p[3] = {(double)x.x, (double)x.y, (double)x.z};
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        double u = floor((p[k] - c.lo[k]) * c.cell_inv[k]);
        int v = u != u || u < 0.0 ? 0 : (int)u;
        cc[k] = v > c.cell_dims[k] - 1 ? c.cell_dims[k] - 1 : v;
    }
}

__device__ __forceinline__ int cell_rank_of(const Consts& c, const int* cell_rank, const int q[3]) {
    return cell_rank[(q[2] * c.cell_dims[1] + q[1]) * c.cell_dims[0] + q[0]];
}

// The storage rank of the cell at offset d from cell cc (periodic wrap, -1 beyond a wall),
// and in `shift` the image offset of that cell's atoms as seen from cc: -len, 0 or +len per
// axis (the list build applies it once per cell instead of a minimum image per pair). Along a
// periodic axis of one cell only d = 0 is a neighbour, with no shift.
__device__ __forceinline__ int neighbour_cell_image(const Consts& c, const int* cell_rank, const int cc[3],
                                                    const int d[3], real_f shift[3]) {
    int q[3];
    #pragma unroll
    for (int k = 0; k < 3; k++) {
        int v = cc[k] + d[k];
        int m = c.cell_dims[k];
        shift[k] = (real_f)0;
        if (v < 0 || v >= m) {
            if (!c.periodic[k]) return -1;
            // One cell along a periodic axis (a thin slab's depth in the list build): the cell
            // itself only, each pair taking its minimum image along that axis.
            if (m == 1) return -1;
            shift[k] = v < 0 ? -IMG_LEN(c, k) : IMG_LEN(c, k);
            v = v < 0 ? v + m : v - m;
        }
        q[k] = v;
    }
    return cell_rank_of(c, cell_rank, q);
}

__device__ __forceinline__ int neighbour_cell(const Consts& c, const int* cell_rank, const int cc[3], int dx, int dy,
                                              int dz) {
    int d[3] = {dx, dy, dz};
    real_f shift[3];
    return neighbour_cell_image(c, cell_rank, cc, d, shift);
}
