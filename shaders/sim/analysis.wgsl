// The histograms of the app's plots on the device (src/sim/gpu/analysis.rs): g(r) pair counts
// through the list's own cell grid (`rdf_cells`) or over all pairs (`rdf_all`), the speed
// histogram (`speed_hist`) and the density profile along y (`height_hist`). Integer counts
// into 64-bit (lo, hi) u32 pairs: per workgroup in workgroup memory, then added to `hist`
// with carries, so the order of the additions does not matter. hist[bins] counts g(r)'s
// centres (atoms inside the region).
//
// The bins are the CPU's (src/sim/cpu/observe.rs, src/analysis) computed in f32: the
// difference of two positions is exact (two-sum) and so is its minimum image (the box edge as
// an f32 pair), so a distance differs from the CPU's f64 one by a few f32 roundings of the
// final arithmetic only; a count can land in the neighbouring bin only for a value within
// about 4e-7 of a bin edge (tests/wgpu_analysis.rs bounds the difference by those values).
//
// Compiled after common.wgsl (whose group 0 it reads) in a module of its own; its outputs
// are a group of their own (1), bound only here, as publish.wgsl does.

struct AnalysisArgs {
    // g(r)'s centres' region [lo, hi): bounds rounded up to f32, so that for f32 positions
    // p >= lo and p < hi answer as the f64 test does.
    region_lo: vec4<f32>,
    region_hi: vec4<f32>,
    // The box's edges as f32 (hi, lo) pairs: the exact minimum image.
    len_hi: vec4<f32>,
    len_lo: vec4<f32>,
    // Cells scanned each way along each axis (rdf_cells); all of them where 2 reach + 1
    // would cover the axis (`reach` = dims then, scanned once from cell 0).
    reach: vec4<u32>,
    bins: u32,
    region: u32,
    n: u32,
    pad0: u32,
    // rdf: bins / r_max; speed: bins / v_max; height: bins / the box's height.
    scale: f32,
    // rdf: r_max^2.
    r2max: f32,
    // height: the box's lower y edge.
    origin: f32,
    pad1: f32,
}

@group(1) @binding(0) var<storage, read_write> hist: array<atomic<u32>>;
@group(1) @binding(1) var<uniform> A: AnalysisArgs;

// Bins counted in workgroup memory (more go straight to `hist`).
const LOCAL_BINS: u32 = 1024u;
var<workgroup> local_hist: array<atomic<u32>, LOCAL_BINS>;

// Adds v to the 64-bit count of `slot`, carrying into its high word.
fn add64(slot: u32, v: u32) {
    if v == 0u {
        return;
    }
    let old = atomicAdd(&hist[2u * slot], v);
    if old + v < old {
        atomicAdd(&hist[2u * slot + 1u], 1u);
    }
}

fn local_on() -> bool {
    return A.bins + 1u <= LOCAL_BINS;
}

fn clear_local(lid: u32) {
    if local_on() {
        for (var k = lid; k <= A.bins; k += WG) {
            atomicStore(&local_hist[k], 0u);
        }
    }
    workgroupBarrier();
}

fn count(slot: u32, v: u32) {
    if local_on() {
        atomicAdd(&local_hist[slot], v);
    } else {
        add64(slot, v);
    }
}

fn flush_local(lid: u32) {
    workgroupBarrier();
    if local_on() {
        for (var k = lid; k <= A.bins; k += WG) {
            add64(k, atomicLoad(&local_hist[k]));
        }
    }
}

// (s, e) with s + e = a - b exactly (two-sum; no products, so no contraction can change it).
fn two_diff(a: real_s, b: real_s) -> vec2<real_s> {
    let s = a - b;
    let v = s - a;
    let e = (a - (s - v)) - (b + v);
    return vec2<real_s>(s, e);
}

// |a - b|^2 under the minimum image as SimBox::min_image finds it (the image shift is taken
// where |d| exceeds half the edge; pairs near half an edge are beyond r_max either way).
fn rdf_r2(a: vec3<real_s>, b: vec3<real_s>) -> real_s {
    var r2 = real_s(0.0);
    for (var k = 0u; k < 3u; k++) {
        var d = two_diff(a[k], b[k]);
        if P.periodic[k] != 0u && abs(d.x) > 0.5 * real_s(A.len_hi[k]) {
            let sh = sign(d.x);
            let t = two_diff(d.x, sh * real_s(A.len_hi[k]));
            d = vec2<real_s>(t.x, t.y + (d.y - sh * real_s(A.len_lo[k])));
        }
        let x = d.x + d.y;
        r2 += x * x;
    }
    return r2;
}

// The distance bin of r2, or bins (none) at or beyond r_max.
fn rdf_bin(r2: real_s) -> u32 {
    if !(r2 < real_s(A.r2max)) {
        return A.bins;
    }
    return min(u32(sqrt(r2) * real_s(A.scale)), A.bins);
}

fn rdf_inside(p: vec3<real_s>) -> bool {
    return all(p >= vec3<real_s>(A.region_lo.xyz)) && all(p < vec3<real_s>(A.region_hi.xyz));
}

// Counts the pair (i, j) seen from centre i: over the whole box once (j > i), over a region
// once for each of its atoms that is a centre (i a centre, j any other atom).
fn rdf_pair(i: u32, pi: vec3<real_s>, j: u32) {
    if A.region != 0u {
        if j == i {
            return;
        }
    } else if j <= i {
        return;
    }
    let k = rdf_bin(rdf_r2(pi, pos[j].xyz));
    if k < A.bins {
        count(k, 1u);
    }
}

// Whether atom i is a centre (counted in the centres' slot when it is).
fn rdf_centre(i: u32) -> bool {
    if i >= A.n {
        return false;
    }
    if A.region == 0u {
        return true;
    }
    if rdf_inside(pos[i].xyz) {
        count(A.bins, 1u);
        return true;
    }
    return false;
}

// One thread per atom (slots in cell order, as the last list build left them), scanning the
// cells within `reach` of its cell: atoms moved less than half the skin since that build,
// so every partner within r_max lies in them.
@compute @workgroup_size(WG)
fn rdf_cells(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    clear_local(lid.x);
    let i = gid.x;
    if rdf_centre(i) {
        let pi = pos[i].xyz;
        let c = cell_of[i];
        let dims = P.dims.xyz;
        let home = vec3<u32>(c % dims.x, (c / dims.x) % dims.y, c / (dims.x * dims.y));
        // Per axis: the first cell offset and the count (all cells once where the reach
        // covers the axis; clipped at a closed axis's ends).
        var first: vec3<i32>;
        var span: vec3<u32>;
        for (var k = 0u; k < 3u; k++) {
            let r = A.reach[k];
            if r >= dims[k] {
                first[k] = -i32(home[k]);
                span[k] = dims[k];
            } else if P.periodic[k] != 0u {
                first[k] = -i32(r);
                span[k] = 2u * r + 1u;
            } else {
                let lo = max(i32(home[k]) - i32(r), 0);
                let hi = min(i32(home[k]) + i32(r), i32(dims[k]) - 1);
                first[k] = lo - i32(home[k]);
                span[k] = u32(hi - lo + 1);
            }
        }
        for (var oz = 0u; oz < span.z; oz++) {
            let z = (i32(home.z) + first.z + i32(oz) + i32(dims.z)) % i32(dims.z);
            for (var oy = 0u; oy < span.y; oy++) {
                let y = (i32(home.y) + first.y + i32(oy) + i32(dims.y)) % i32(dims.y);
                for (var ox = 0u; ox < span.x; ox++) {
                    let x = (i32(home.x) + first.x + i32(ox) + i32(dims.x)) % i32(dims.x);
                    let cell = (u32(z) * dims.y + u32(y)) * dims.x + u32(x);
                    let end = cell_start[cell + 1u];
                    for (var j = cell_start[cell]; j < end; j++) {
                        rdf_pair(i, pi, j);
                    }
                }
            }
        }
    }
    flush_local(lid.x);
}

// All pairs (systems without a cell grid: small ones).
@compute @workgroup_size(WG)
fn rdf_all(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    clear_local(lid.x);
    let i = gid.x;
    if rdf_centre(i) {
        let pi = pos[i].xyz;
        for (var j = 0u; j < A.n; j++) {
            rdf_pair(i, pi, j);
        }
    }
    flush_local(lid.x);
}

// Speeds into bins of width v_max / bins (analysis::speed_bin); beyond v_max not counted.
@compute @workgroup_size(WG)
fn speed_hist(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    clear_local(lid.x);
    let i = gid.x;
    if i < A.n {
        let v = vel[i].xyz;
        let k = u32(min(sqrt(dot(v, v)) * real_s(A.scale), real_s(A.bins)));
        if k < A.bins {
            count(k, 1u);
        }
    }
    flush_local(lid.x);
}

// Heights into slabs along y, clamped into the box (analysis::height_bin).
@compute @workgroup_size(WG)
fn height_hist(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    clear_local(lid.x);
    let i = gid.x;
    if i < A.n {
        let u = floor((pos[i].y - real_s(A.origin)) * real_s(A.scale));
        count(u32(clamp(u, 0.0, real_s(A.bins - 1u))), 1u);
    }
    flush_local(lid.x);
}
