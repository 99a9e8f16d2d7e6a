// Shared definitions of every argon-sandbox kernel: precision types chosen at compile time
// (NVRTC -D PRECISION=0 single, 1 mixed, 2 double), the block size (-D BLOCK=...), the
// constants struct mirrored by `sim/cuda/consts.rs`, and small helpers.
#pragma once

#ifndef PRECISION
#define PRECISION 2
#endif
#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef NTYPES
#define NTYPES 1
#endif

#if PRECISION == 0
typedef float real_s;   // integration state
typedef float4 real_s4;
typedef float real_f;   // force arithmetic
typedef float4 real_f4;
#elif PRECISION == 1
typedef double real_s;
typedef double4 real_s4;
typedef float real_f;
typedef float4 real_f4;
#else
typedef double real_s;
typedef double4 real_s4;
typedef double real_f;
typedef double4 real_f4;
#endif
// Energy and virial accumulate per atom in the state type (f64 for mixed), per block in f64.
typedef real_s real_a;

// Indices into the flags array.
#define FLAG_REBUILD 0
#define FLAG_OVERFLOW 1
#define FLAG_BLOWUP 2
#define FLAG_BUILDS 3
#define FLAG_MAX_NBRS_SEEN 4
#define FLAG_ALWAYS 5
#define FLAG_ESCAPE 6
#define FLAG_CELL_FULL 7
// Places in a cell 16-bit list entries can name, and the shift of the neighbour-cell number.
#define LIST16_PLACES 2048
#define LIST16_SHIFT 11
// An atom this far (sigma) beyond a wall plane has left the tank (sim::ESCAPE_MARGIN).
#define ESCAPE_MARGIN 1.0
// 64-bit blow-up step (atomicMin) lives in a separate u64 array.
// Doubles per telemetry record (sim/cuda/engine/telemetry.rs: RECORD_WORDS): [step, 2 KE,
// pair E, pair W, ext E, ext W, px, py, pz, piston velocity, height, push, sum_b |P_b|^2 / M_b
// of the thermal readout's flow bins, their occupied count] (integrate.cu's finish_step).
#define RECORD_WORDS 14

// Mirrors the device parameters of flow::Grid (sim/cuda/consts.rs: FieldGridArgs): the flow
// fields' grid (fields.cu) and the thermostat's flow grid (Consts::flow_grid, flow_profile.cu).
struct FieldGrid {
    double origin[3];
    double inv_cell[3];
    int n[3];
    int periodic[3];
    int walled[3];
    int pad;
};

// flow::grid::ROUND_OFF_BINS.
#define FIELD_ROUND_OFF_BINS 1e-9

// The bin along axis k of coordinate x, or -1 outside the grid (Grid::bin_of and Grid::edge).
__device__ __forceinline__ int field_axis(const FieldGrid& g, int k, double x) {
    double f = (x - g.origin[k]) * g.inv_cell[k];
    double n = (double)g.n[k];
    if (f >= 0.0 && f < n) return (int)f;
    double slack = g.walled[k] ? 1.0 : FIELD_ROUND_OFF_BINS;
    if (f >= n && f <= n + slack) return g.n[k] - 1;
    if (f < 0.0 && f >= -slack) return 0;
    if (g.periodic[k] && isfinite(f)) {
        double i = fmod(floor(f), n);
        if (i < 0.0) i += n;
        int b = (int)i;
        return b < g.n[k] - 1 ? b : g.n[k] - 1;
    }
    return -1;
}

// The flat bin (x fastest) of position x, or -1 outside the grid: flow::Grid::bin_of.
template <typename T4>
__device__ __forceinline__ int flow_bin_of(const FieldGrid& g, const T4& x) {
    int ix = field_axis(g, 0, (double)x.x);
    int iy = field_axis(g, 1, (double)x.y);
    int iz = field_axis(g, 2, (double)x.z);
    if (ix < 0 || iy < 0 || iz < 0) return -1;
    return ix + g.n[0] * (iy + g.n[1] * iz);
}

// Mirrors `Consts` in src/sim/cuda/consts.rs field for field.
struct Consts {
    double lo[3];
    double hi[3];
    double len[3];
    double inv_len[3];   // 0 on walled axes: minimum image becomes the identity there
    int periodic[3];
    int n;
    double dt;
    double skin_half_sq; // (skin / 2)^2
    double r_list_sq;    // (largest pair cutoff + skin)^2
    // LJ of species pair (0, 0) at its own cutoff; other pairs come from the table, each with
    // its own rcut_sq (one absolute distance, or k sigma_ij: physics::cutoff).
    double lj1, lj2, lj3, lj4, lj_offset, rcut_sq;
    // 9-3 walls on walled axes.
    double w_c1, w_c2, w_c3, w_c4, w_offset, w_cutoff, w_dcap, w_ecap, w_fcap;
    // 9-3 obstacle surface potential.
    double o_c1, o_c2, o_c3, o_c4, o_offset, o_cutoff, o_dcap, o_ecap, o_fcap;
    int has_obstacles;
    int grid_cells[2];
    int grid_periodic[2];
    double grid_lo[2];
    double grid_cell[2];
    double grid_len[2];
    double obs_far;
    double gravity;
    double drive;
    int drive_potential;
    // Cell grid.
    int cell_dims[3];
    int n_cells;
    double cell_inv[3];
    int max_nbrs;
    // Thermostat: 0 NVE, 1 Berendsen, 2 CSVR, 3 Langevin.
    int thermostat;
    double target_t;
    double tau;
    double langevin_c1;
    double langevin_c2;
    double dof;
    unsigned long long seed;
    double runaway_sq;
    int list_wide;        // neighbour-list entries of 32 bits (atom index), not 16 (see Bufs::nlist)
    // Tether: a spring k on atom tether_id (canonical index; 0xFFFFFFFF = none) toward
    // (tether_x, tether_y), the target moved into the box on periodic axes.
    unsigned int tether_id;
    double tether_x;
    double tether_y;
    double tether_k;
    // Minimum image by compare-and-shift (no rint on the XU pipe): half box length on
    // periodic axes, a huge value on walled ones; f32 copies of the box and of the species
    // (0, 0) LJ coefficients so single-precision loops convert nothing per pair.
    double half_len[3];
    float len_f[3];
    float half_f[3];
    float lj_f[6];        // lj1, lj2, lj3, lj4, offset, rcut_sq
    float r_list_sq_f;
    int tpa;              // threads per atom in the neighbour-list force kernel (power of 2, <= 32)
    // The piston (piston.cu): P_ext A, mass, friction, height limits; piston_on: 1 when the
    // top y wall is the piston at b.piston[0].
    double piston_pa;
    double piston_mass;
    double piston_damp;
    double piston_lo;
    double piston_hi;
    int piston_on;
    int pad1;
    // The thermostat relative to the flow (flow::FlowProfile, flow_profile.cu): its x-y grid
    // (flow::Grid::for_thermostat), its bin count, and 1 when the thermostat is on it.
    FieldGrid flow_grid;
    int flow_bins;
    int relative_to_flow;
    // Body forces (bodies.cuh): the number of bodies (shapes, then wall faces; 0: none summed)
    // and the body index of each wall face [2 * axis + hi] (-1 on periodic axes).
    int n_bodies;
    int body_wall[6];
    int pad2;
    // Surface friction (surface.cuh): gamma = 1/damp, the range (0: off), and
    // sqrt(2 gamma T / dt), the noise amplitude per sqrt(mass).
    double friction_gamma;
    double friction_range;
    double friction_noise;
    // The wind tunnel's inflow zone (tunnel.cu): the stream speed, the zone
    // [tunnel_lo, tunnel_hi) along x, 1 while the tunnel is on, and the blocks of running
    // sums in tunnel_sum.
    double tunnel_speed;
    double tunnel_lo;
    double tunnel_hi;
    int tunnel_on;
    int tunnel_slots;
    // The inner region of the box (f32): positions farther than the list range plus the skin
    // from every periodic face, where the neighbour-list force loop needs no minimum image
    // (empty where the box is too small; unbounded on walled axes).
    float inner_lo[3];
    float inner_hi[3];
    // The tunnel's start spin (surface.cuh, physics::friction::Spin): the obstacle surfaces'
    // tangential speed u, counter-clockwise, for the force passes of the steps before
    // friction_spin_until (0: no spin).
    double friction_spin;
    unsigned long long friction_spin_until;
};

#define NO_TETHER 0xFFFFFFFFu

// Every device array, passed by value to every kernel. Mirrors `Bufs` in
// src/sim/cuda/buffers.rs; unused pointers may be null.
struct LjCoeffs;
struct Bufs {
    real_s4* pos;         // x, y, z, species (state precision)
    real_s4* vel;
    real_f4* force;
    real_f4* posf;        // positions in force precision (aliases pos unless mixed)
    real_f4* pos_build;   // positions at the last neighbour-list build (force precision, as built)
    unsigned int* ids;    // canonical index of each slot
    real_s4* pos2;        // permutation scratch
    real_s4* vel2;
    unsigned int* ids2;
    const double* masses; // per species
    const LjCoeffs* table;
    const unsigned int* obs_start; // per obstacle cell: first candidate (cells + 1)
    const unsigned int* obs_cand;  // candidate primitive indices
    const void* obs_prims;         // struct ObsPrim (obstacles.cuh)
    const double* obs_verts;       // polygon vertices, x y pairs
    double4* obs_force;            // per atom: obstacle fx, fy, energy, virial (obstacle_atom)
    int* cell_count;      // per cell rank
    int* cell_start;      // per cell rank, n_cells + 1
    const int* cell_rank; // linear cell index (x fastest) -> storage rank (Morton order)
    int* cell_of;         // per atom: cell rank
    int* slot;            // per atom: arrival slot in its cell
    unsigned int* order;  // sorted position -> atom
    // Packs of 8: neighbour k of atom i at ((k / 8) * n + i) * 8 + k % 8, as 16-bit entries
    // (neighbour cell t of the atom's cell, 0..26, in bits 11..15 and the place in that cell
    // in bits 0..10: the atom nb_first[cell * 27 + t] + place), or, with list_wide, 32-bit
    // atom indices.
    void* nlist;
    int* ncount;
    double* partials_ev;  // 4 per block
    double* partials_kin; // 4 per block
    double* lambda;       // thermostat factor of this step
    double* records;      // telemetry records, RECORD_WORDS doubles each
    int* flags;
    unsigned long long* blowup_step;
    unsigned long long* hist;
    float4* out;          // published positions
    unsigned long long* clock; // [0]: the step in progress (advanced by step_tick), [1]: records written
    int* scan_sums;       // per 1024 cells: the block totals of the cell scan
    unsigned long long* pair_acc; // per atom 4 x 64-bit fixed-point pair force (symmetric all pairs)
    double* piston;       // height, velocity, push, drag target, dragged (piston.cu)
    double* piston_part;  // per atom: the top wall's push on it (the piston's force), this force pass
    unsigned long long* flow_sums; // per flow bin: mass, px, py, pz as 64-bit fixed point (flow_profile.cu;
                          // the thermostat relative to the flow and the thermal readout)
    double* flow_mean;    // per flow bin: ux, uy, uz, unused
    double* flow_stats;   // [sum over bins |P|^2 / M, occupied bins]
    unsigned long long* body_fix; // per body 3 x 64-bit fixed-point force of this force pass (bodies.cuh)
    double* body_sum;     // per body 3 f64 force sums since the last record, then the step count
    double* body_records; // per telemetry record: body_sum as it was at the record's step
    double4* fric_force;  // per atom: the surface friction force x, y, z, unused (surface.cuh)
    double* tunnel_part;  // per block of tunnel_zone: px, py, pz, KE the zone gave this step (tunnel.cu)
    double* tunnel_sum;   // the zone's px, py, pz, KE summed since the last record
    double* tunnel_records; // per telemetry record: tunnel_sum as it was at the record's step
    int* nb_first;        // per cell rank, 27: the first atom of each neighbour cell (nlist_build)
    double* partials_stress; // 6 per force block, then 6 per atom block (stress.cu), while stress is sampled
    double* stress_records;  // pressure-tensor records, 8 doubles each (stress.cu)
    unsigned char* near;     // per atom: NEAR_OBSTACLE | NEAR_FRICTION (near.cu), with obstacles or friction
};

// Bits of Bufs::near: the atom may feel the obstacles / the surface friction this step.
#define NEAR_OBSTACLE 1
#define NEAR_FRICTION 2

// A read-only load (the non-coherent path, which the compiler may move ahead of stores).
__device__ __forceinline__ float4 ldg4(const float4* p) { return __ldg(p); }
__device__ __forceinline__ double4 ldg4(const double4* p) {
    double2 a = __ldg(reinterpret_cast<const double2*>(p)), b = __ldg(reinterpret_cast<const double2*>(p) + 1);
    return make_double4(a.x, a.y, b.x, b.y);
}
// A streaming load (evict first): for data read once per step, so the caches keep the rest.
__device__ __forceinline__ float4 ldcs4(const float4* p) { return __ldcs(p); }
__device__ __forceinline__ double4 ldcs4(const double4* p) {
    double2 a = __ldcs(reinterpret_cast<const double2*>(p)), b = __ldcs(reinterpret_cast<const double2*>(p) + 1);
    return make_double4(a.x, a.y, b.x, b.y);
}

__device__ __forceinline__ real_f min_image(real_f d, real_f len, real_f inv) {
    return d - len * rint(d * inv);
}

// Minimum image of a difference of two wrapped coordinates (|d| < len) along axis k. In f32
// by compares and one add (the same value as min_image, without the XU pipe's rint and
// double-to-float conversions); in f64 by min_image, whose rint runs on the FP64 pipe and
// is cheaper there than compares and selects of 64-bit values.
#if PRECISION == 2
#define IMG_LEN(c, k) (c).len[k]
#define NEAREST(c, d, k) min_image((d), (c).len[k], (c).inv_len[k])
#else
#define IMG_LEN(c, k) (c).len_f[k]
#define NEAREST(c, d, k) wrap_diff((d), (c).len_f[k], (c).half_f[k])
#endif
__device__ __forceinline__ real_f wrap_diff(real_f d, real_f len, real_f half) {
    // |d| < len: one compare on |d| and a subtraction of len carrying d's sign (the same
    // value as d - len for d > half and d + len for d < -half).
    return fabs(d) > half ? d - copysign(len, d) : d;
}

// Per-type masses live in a small array; species 0 is argon by default.
__device__ __forceinline__ int type_of(real_s w) { return (int)w; }
