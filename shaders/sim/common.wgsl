// The wgpu backend's shared definitions (src/sim/gpu): the constants block, the per-step
// block, every binding (one layout serves every kernel), flag slots and small helpers
// (types, minimum image, the LJ pair and the 9-3 wall, workgroup sums in a fixed order).
// Mirrors kernels/common.cuh and src/sim/gpu/layout.rs field for field. The build writes
// `const WG: u32 = ...;` and `const NTYPES: u32 = ...;` before this file, and the precision's
// types (src/sim/gpu/shaders.rs): `real_s` the state's (positions, velocities, sums), `real_f`
// the forces' (f32 and f32 in single, f64 and f32 in mixed, f64 and f64 in double); lines between
// `// #if FLAG` and `// #endif` are kept only where FLAG holds (F64: mixed or double), and in
// single and double `posf` is `pos` and `type_of_s` is `type_of`.

struct Pair {
    lj1: real_f,
    lj2: real_f,
    lj3: real_f,
    lj4: real_f,
    offset: real_f,
    rcut_sq: real_f,
    pad0: real_f,
    pad1: real_f,
}

struct Params {
    dims: vec4<u32>,
    periodic: vec4<u32>,
    // The box in the forces' precision (the state's: box_* in mixed).
    lo: vec4<real_f>,
    hi: vec4<real_f>,
    len: vec4<real_f>,
    cell_inv: vec4<real_f>,
    inv_len: vec4<real_f>,
    // 9-3 wall: c1, c2, c3, c4, offset, cutoff, d_cap, e_cap; f_cap in wall_f.
    wall_a: vec4<real_f>,
    wall_b: vec4<real_f>,
    n: u32,
    n_cells: u32,
    max_nbrs: u32,
    n_groups: u32,
    dt: real_s,
    half_dt: real_s,
    rlist_sq: real_f,
    half_skin_sq: real_f,
    gravity: real_f,
    drive: real_f,
    drive_potential: u32,
    thermostat: u32,
    lang_c1: real_s,
    lang_c2: real_s,
    target_t: real_s,
    dof: real_s,
    dt_over_tau: real_s,
    csvr_factor: real_s,
    seed_lo: u32,
    seed_hi: u32,
    wall_f: real_f,
    runaway_sq: real_s,
    escape: real_s,
    walls: u32,
    // Species pair (0, 0): the one-species fast path reads it from here.
    @align(16) pair0: Pair,
    // #if MIXED
    // The box in the state's precision, for wrapping the f64 positions.
    box_lo: vec4<f64>,
    box_hi: vec4<f64>,
    box_len: vec4<f64>,
    // #endif
}

// One step's own values (a dynamic offset into a buffer of them, one per step of a call).
struct StepInfo {
    step_lo: u32,
    step_hi: u32,
    // Index of the step within the call (the blow-up report says which).
    k: u32,
    // Energies and virials summed, and a telemetry record written at this step.
    ev: u32,
    record: u32,
    // Apply the previous step's thermostat factor before the first half kick.
    scale: u32,
    // The step's CSVR noise (drawn on the host from the same Philox stream as the CPU).
    csvr_rr: real_s,
    csvr_chi: real_s,
    // 1: sum the kinetic energy of the velocities as they are (no kick): measure().
    no_kick: u32,
    // The thermostat's factor is computed (0 under measure()).
    thermostat_on: u32,
    // The previous step (whose second half kick a fused kick_drift takes, with its Langevin noise).
    prev_lo: u32,
    prev_hi: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<uniform> S: StepInfo;
// Positions with the species in w (f32: its bits; f64: its value), in the state's precision.
@group(0) @binding(2) var<storage, read_write> pos: array<vec4<real_s>>;
@group(0) @binding(3) var<storage, read_write> vel: array<vec4<real_s>>;
@group(0) @binding(4) var<storage, read_write> force: array<vec4<real_f>>;
@group(0) @binding(5) var<storage, read_write> ids: array<u32>;
@group(0) @binding(6) var<storage, read_write> pos_build: array<vec4<real_f>>;
@group(0) @binding(7) var<storage, read_write> flags: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> cell_count: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> cell_start: array<u32>;
@group(0) @binding(10) var<storage, read_write> cell_of: array<u32>;
// Full neighbour lists in packs of 8: entries 8p..8p+7 of atom i at [2 (p n + i)] and the next.
@group(0) @binding(11) var<storage, read_write> nlist: array<vec4<u32>>;
@group(0) @binding(12) var<storage, read_write> ncount: array<u32>;
@group(0) @binding(13) var<storage, read_write> tmp_pos: array<vec4<real_s>>;
@group(0) @binding(14) var<storage, read_write> tmp_vel: array<vec4<real_s>>;
@group(0) @binding(15) var<storage, read_write> tmp_ids: array<u32>;
// Per workgroup: (2 KE, px, py, pz) at [2 g], (pair E, pair W, external E, external W) at [2 g + 1].
@group(0) @binding(16) var<storage, read_write> partials: array<vec4<real_s>>;
// [0]: the thermostat's factor for the next step's first kick; where the state is f64 also
// [1]: the factor of a thermostat relative to the flow and [2]: the flow's sum |P_b|^2 / M_b
// (profile.wgsl; in single both are kept as f32 bits in its `prof`).
@group(0) @binding(17) var<storage, read_write> lambda: array<real_s>;
// Telemetry records: RECORD_WORDS (hi, lo) pairs each (lo zero where the state is f64).
@group(0) @binding(18) var<storage, read_write> records: array<vec2<real_s>>;
@group(0) @binding(19) var<storage, read_write> pairs: array<Pair>;
@group(0) @binding(20) var<storage, read_write> masses: array<real_s>;
// #if MIXED
// The positions in f32 (the species' bits in w), which the list build and the forces read:
// written by the drift and the cell sort.
@group(0) @binding(21) var<storage, read_write> posf: array<vec4<f32>>;
// #endif
// Indirect dispatch arguments of the rebuild: atoms at [0..3], one group at [3..6], cells at [6..9]. A group of its own, bound only for `plan`: a dispatch may not read a buffer as
// its arguments while one of its bind groups holds it as storage.
@group(1) @binding(0) var<storage, read_write> plan_args: array<u32>;
@group(0) @binding(22) var<storage, read_write> cell_fill: array<atomic<u32>>;
// The cell scan's per-block totals, then offsets.
@group(0) @binding(23) var<storage, read_write> block_sums: array<u32>;

// Flag slots (src/sim/gpu/layout.rs `flag`).
const F_REBUILD: u32 = 0u;
const F_OVERFLOW: u32 = 1u;
const F_MAX_SEEN: u32 = 2u;
const F_BLOWUP: u32 = 3u;
const F_BLOWUP_AT: u32 = 4u;
const F_ESCAPE: u32 = 5u;
const F_BUILDS: u32 = 6u;
// The rebuild flag of odd steps (F_REBUILD: even ones).
const F_REBUILD_ODD: u32 = 7u;

// The rebuild flag of the step whose counter's low word is `step_lo`: the step's kick sets
// it, its `count_cells` reads it, and the kick clears the other parity's for the next step.
fn rebuild_flag(step_lo: u32) -> u32 {
    return select(F_REBUILD, F_REBUILD_ODD, (step_lo & 1u) == 1u);
}

const RECORD_WORDS: u32 = 8u;

// The species of a position in the forces' precision.
fn type_of(p: vec4<real_f>) -> u32 {
    // #if DOUBLE
    return u32(p.w);
    // #else
    return bitcast<u32>(p.w);
    // #endif
}

// #if MIXED
// The species of a position in the state's precision (f64).
fn type_of_s(p: vec4<f64>) -> u32 {
    return u32(p.w);
}
// #endif

// #if DOUBLE
// An atom index carried in a position's w (the list build's candidates): its value in f64,
// its bits in f32 (where these names are bitcasts).
fn idx_as_real_f(j: u32) -> f64 {
    return f64(j);
}

fn real_f_as_idx(x: f64) -> u32 {
    return u32(x);
}
// #endif

fn periodic_mask() -> vec3<real_f> {
    return vec3<real_f>(real_f(P.periodic.x), real_f(P.periodic.y), real_f(P.periodic.z));
}

// The minimum image of d along the periodic axes.
fn min_image(d: vec3<real_f>) -> vec3<real_f> {
    return d - periodic_mask() * P.len.xyz * round(d * P.inv_len.xyz);
}

fn pair_of(ti: u32, tj: u32) -> Pair {
    if NTYPES == 1u {
        return P.pair0;
    }
    return pairs[ti * NTYPES + tj];
}

// Not a finite number (NaN or infinity), tested on the bits: a compiler may assume floats
// are finite, so x != x is not reliable. An f64 is tested as the f32 it rounds to (NaN stays
// NaN; beyond f32's range is infinite, and far beyond any position or speed).
fn not_finite(x: real_s) -> bool {
    // #if F64
    return (bitcast<u32>(f32(x)) & 0x7f800000u) == 0x7f800000u;
    // #else
    return (bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u;
    // #endif
}

// (force pushing away from the surface, energy) of the 9-3 wall at distance d.
fn wall_eval(d: real_f) -> vec2<real_f> {
    let c = P.wall_a;
    let cut = P.wall_b.y;
    let dcap = P.wall_b.z;
    let ecap = P.wall_b.w;
    if d >= cut {
        return vec2<real_f>(0.0, 0.0);
    }
    if d < dcap {
        return vec2<real_f>(P.wall_f, ecap + P.wall_f * (dcap - d));
    }
    let rinv = 1.0 / d;
    let r2inv = rinv * rinv;
    let r4inv = r2inv * r2inv;
    let r10inv = r4inv * r4inv * r2inv;
    let f = c.x * r10inv - c.y * r4inv;
    let e = c.z * r4inv * r4inv * rinv - c.w * r2inv * rinv - P.wall_b.x;
    return vec2<real_f>(f, e);
}

var<workgroup> red: array<vec4<real_s>, WG>;

// The sum of every invocation's `v` over the workgroup, the same tree (and bits) each run;
// valid in invocation 0. Call from uniform control flow.
fn workgroup_sum(lid: u32, v: vec4<real_s>) -> vec4<real_s> {
    red[lid] = v;
    workgroupBarrier();
    var s = WG / 2u;
    loop {
        if s == 0u {
            break;
        }
        if lid < s {
            red[lid] = red[lid] + red[lid + s];
        }
        workgroupBarrier();
        s = s / 2u;
    }
    let r = red[0];
    workgroupBarrier();
    return r;
}
