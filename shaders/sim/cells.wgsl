// The neighbour-list rebuild on the device: decided by the skin test of the first half kick
// (the step's parity's flag), launched by indirect dispatch (`count_cells` writes the group
// counts, zero when no rebuild is due, so no step waits for a read-back), atoms counted into cells with u32
// atomics, a scan over the cells by one workgroup (no subgroups), a scatter, then each
// cell put in order of the atoms' ids (so the order, and every sum over the lists, is the
// same run to run), and the full (gather) list of every atom within the list range.

// The rebuild's group counts (atoms at [0..3], one workgroup at [3..6], cells at [6..9], the
// list build's 2-D grid at [9..12]), or zeros when none is due.
fn plan(due: bool) {
    plan_args[0] = select(0u, (P.n + WG - 1u) / WG, due);
    plan_args[1] = 1u;
    plan_args[2] = 1u;
    plan_args[3] = select(0u, 1u, due);
    plan_args[4] = 1u;
    plan_args[5] = 1u;
    plan_args[6] = select(0u, (P.n_cells + WG - 1u) / WG, due);
    plan_args[7] = 1u;
    plan_args[8] = 1u;
    // The list build: rows of BUILD_ROW workgroups of CELLS_PER_GROUP cells.
    let groups = (P.n_cells + CELLS_PER_GROUP - 1u) / CELLS_PER_GROUP;
    plan_args[9] = select(0u, min(groups, BUILD_ROW), due);
    plan_args[10] = (groups + BUILD_ROW - 1u) / BUILD_ROW;
    plan_args[11] = 1u;
    if due {
        atomicAdd(&flags[F_BUILDS], 1u);
    }
}

fn cell_coords(x: vec3<real_f>) -> vec3<u32> {
    let f = floor((x - P.lo.xyz) * P.cell_inv.xyz);
    let top = vec3<real_f>(P.dims.xyz) - 1.0;
    return vec3<u32>(clamp(f, vec3<real_f>(0.0), top));
}

fn cell_index(c: vec3<u32>) -> u32 {
    return (c.z * P.dims.y + c.y) * P.dims.x + c.x;
}

// The rebuild's first kernel, dispatched every step (not indirectly): whether this step's
// rebuild is due (its parity's flag, which the step's kick set; the other parity's flag is
// the next step's), invocation 0 writing the rest's group counts (`plan`), and, when due,
// the atoms counted into their cells.
@compute @workgroup_size(WG)
fn count_cells(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let due = atomicLoad(&flags[rebuild_flag(S.step_lo)]) != 0u && atomicLoad(&flags[F_BLOWUP]) == 0u;
    if i == 0u {
        plan(due);
    }
    if due && i < P.n {
        let c = cell_index(cell_coords(posf[i].xyz));
        cell_of[i] = c;
        atomicAdd(&cell_count[c], 1u);
    }
}

var<workgroup> scan_buf: array<u32, WG>;

// Inclusive Hillis-Steele scan of `v` over the workgroup (from uniform control flow).
fn scan_workgroup(lid: u32, v: u32) -> u32 {
    scan_buf[lid] = v;
    workgroupBarrier();
    var off = 1u;
    loop {
        if off >= WG {
            break;
        }
        var add = 0u;
        if lid >= off {
            add = scan_buf[lid - off];
        }
        workgroupBarrier();
        scan_buf[lid] = scan_buf[lid] + add;
        workgroupBarrier();
        off = off * 2u;
    }
    let r = scan_buf[lid];
    workgroupBarrier();
    return r;
}

// The scan of the cell counts in three passes, each over the whole chip where it can: every
// workgroup scans its WG cells (cell_start holds the exclusive scan within the block,
// block_sums the block's total), one workgroup scans the block totals, and every workgroup
// adds its block's offset.
@compute @workgroup_size(WG)
fn scan_cells(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let c = wid.x * WG + lid.x;
    var v = 0u;
    if c < P.n_cells {
        v = atomicLoad(&cell_count[c]);
    }
    let inc = scan_workgroup(lid.x, v);
    if c < P.n_cells {
        cell_start[c] = inc - v;
    }
    if lid.x == WG - 1u {
        block_sums[wid.x] = inc;
    }
}

@compute @workgroup_size(WG)
fn scan_blocks(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let blocks = (P.n_cells + WG - 1u) / WG;
    var carry = 0u;
    for (var ch = 0u; ch * WG < blocks; ch++) {
        let b = ch * WG + lid;
        var v = 0u;
        if b < blocks {
            v = block_sums[b];
        }
        let inc = scan_workgroup(lid, v);
        if b < blocks {
            block_sums[b] = carry + inc - v;
        }
        carry = carry + scan_buf[WG - 1u];
        workgroupBarrier();
    }
    if lid == 0u {
        cell_start[P.n_cells] = carry;
    }
}

@compute @workgroup_size(WG)
fn scan_add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let c = gid.x;
    if c < P.n_cells {
        cell_start[c] = cell_start[c] + block_sums[wid.x];
    }
}

// Cells one workgroup scans alone (`scan_single`), and so in one dispatch instead of three.
const SCAN_SINGLE_MAX: u32 = WG * 16u;

// The whole scan in one workgroup when there are at most SCAN_SINGLE_MAX cells (the host
// picks it): each invocation sums a run of consecutive cells, the workgroup scans the runs,
// and each invocation writes its run's starts.
@compute @workgroup_size(WG)
fn scan_single(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let per = (P.n_cells + WG - 1u) / WG;
    let a = min(lid * per, P.n_cells);
    let b = min(a + per, P.n_cells);
    var sum = 0u;
    for (var c = a; c < b; c++) {
        sum += atomicLoad(&cell_count[c]);
    }
    let inc = scan_workgroup(lid, sum);
    var at = inc - sum;
    for (var c = a; c < b; c++) {
        cell_start[c] = at;
        at += atomicLoad(&cell_count[c]);
    }
    if lid == WG - 1u {
        cell_start[P.n_cells] = inc;
    }
}

@compute @workgroup_size(WG)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < P.n {
        let c = cell_of[i];
        let slot = cell_start[c] + atomicAdd(&cell_fill[c], 1u);
        tmp_pos[slot] = pos[i];
        tmp_vel[slot] = vel[i];
        tmp_ids[slot] = ids[i];
    }
}

// Each atom's place in its cell: after every atom of the cell with a smaller id.
@compute @workgroup_size(WG)
fn order_cells(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if s < P.n {
        let me = tmp_ids[s];
        let c = cell_index(cell_coords(vec3<real_f>(tmp_pos[s].xyz)));
        let first = cell_start[c];
        let last = cell_start[c + 1u];
        var rank = 0u;
        for (var j = first; j < last; j++) {
            rank += select(0u, 1u, tmp_ids[j] < me);
        }
        let d = first + rank;
        pos[d] = tmp_pos[s];
        // #if MIXED
        posf[d] = vec4<f32>(vec3<f32>(tmp_pos[s].xyz), bitcast<f32>(type_of_s(tmp_pos[s])));
        // #endif
        vel[d] = tmp_vel[s];
        ids[d] = me;
        cell_of[d] = c;
    }
}

// The list build: one workgroup of BUILD_WG threads takes CELLS_PER_GROUP cells, CELL_T
// threads each (a cell's atoms, CELL_T at a time, are its i-atoms). Each cell's 27 neighbour
// cells (dz, dy, dx from -1 to 1, dx fastest; none beyond a wall) are one stream of
// candidates: thread t < 27 of the cell works out neighbour t's atoms and periodic image
// shift once, and the stream is read CHUNK candidates at a time into workgroup memory,
// already shifted, so every i-atom tests them from there (no minimum image, no global read
// per test). A periodic axis with fewer than three cells visits each of its cells once and
// takes the minimum image per pair instead. Each atom's entries come in stream order, then
// ascending atom order within a cell (the same lists every run), and go out in packs of 8.
const BUILD_WG: u32 = 128u;
const CELL_T: u32 = 32u;
const CELLS_PER_GROUP: u32 = BUILD_WG / CELL_T;
// Build workgroups per row of the 2-D dispatch (`plan` writes rows of this many).
const BUILD_ROW: u32 = 16384u;

// Per cell of the group, neighbour t's (first atom - first stream place, stream end) and
// image shift; entry 27 ends the table.
var<workgroup> nb_span: array<vec2<i32>, 112>;
var<workgroup> nb_shift: array<vec4<real_f>, 108>;
// Per cell: its first and last atom and stream length.
var<workgroup> cell_span: array<vec3<u32>, CELLS_PER_GROUP>;
// Candidates staged per chunk: CHUNK a cell.
const CHUNK: u32 = 2u * CELL_T;
var<workgroup> cand: array<vec4<real_f>, 256>;

// Bit k set where staged candidate `at + k` (k < 32) is within the list range of x: a fixed
// trip count (places past the stream hold far candidates), four candidates loaded before
// any is tested, so the workgroup-memory loads overlap instead of each waiting for the last.
fn hit_bits(at: u32, x: vec3<real_f>) -> u32 {
    var bits = 0u;
    let r2 = P.rlist_sq;
    for (var k = 0u; k < 32u; k += 4u) {
        let d0 = cand[at + k].xyz - x;
        let d1 = cand[at + k + 1u].xyz - x;
        let d2 = cand[at + k + 2u].xyz - x;
        let d3 = cand[at + k + 3u].xyz - x;
        bits |= select(0u, 1u << k, dot(d0, d0) < r2);
        bits |= select(0u, 2u << k, dot(d1, d1) < r2);
        bits |= select(0u, 4u << k, dot(d2, d2) < r2);
        bits |= select(0u, 8u << k, dot(d3, d3) < r2);
    }
    return bits;
}

// As hit_bits, with each pair's minimum image along the periodic axes of fewer than three
// cells (P.dims.w: bit k for axis k), where a neighbour cell's single shift cannot give it.
// A thin slab (only z: the wind tunnels) takes the image along z alone, four candidates at
// a time as hit_bits.
fn hit_bits_image(at: u32, x: vec3<real_f>) -> u32 {
    var bits = 0u;
    let r2 = P.rlist_sq;
    if P.dims.w == 4u {
        let lz = P.len.z;
        let inv = P.inv_len.z;
        for (var k = 0u; k < 32u; k += 4u) {
            var d0 = cand[at + k].xyz - x;
            var d1 = cand[at + k + 1u].xyz - x;
            var d2 = cand[at + k + 2u].xyz - x;
            var d3 = cand[at + k + 3u].xyz - x;
            d0.z -= lz * round(d0.z * inv);
            d1.z -= lz * round(d1.z * inv);
            d2.z -= lz * round(d2.z * inv);
            d3.z -= lz * round(d3.z * inv);
            bits |= select(0u, 1u << k, dot(d0, d0) < r2);
            bits |= select(0u, 2u << k, dot(d1, d1) < r2);
            bits |= select(0u, 4u << k, dot(d2, d2) < r2);
            bits |= select(0u, 8u << k, dot(d3, d3) < r2);
        }
        return bits;
    }
    for (var k = 0u; k < 32u; k++) {
        let d = min_image(cand[at + k].xyz - x);
        // The far candidates past a stream's end can have a minimum image anywhere in the
        // box (in f64 always; in f32 1e18's stays ~1e10 away only where the multiply-add is
        // fused): left out by index. (The z-only path above leaves x and y alone, so they
        // stay far.)
        let real = real_f_as_idx(cand[at + k].w) != 0xffffffffu;
        bits |= select(0u, 1u << k, dot(d, d) < r2 && real);
    }
    return bits;
}

// The candidate at stream place `at` of the group's cell `sub` (the atom's position shifted
// by its image, the atom's index in w), or one far from everything past the stream's end
// (`total`). `t` is the neighbour cell reached so far (places only grow, so it only moves on).
fn candidate(sub: u32, at: u32, total: u32, t: ptr<function, u32>) -> vec4<real_f> {
    if at >= total {
        return vec4<real_f>(1e18, 1e18, 1e18, idx_as_real_f(0xffffffffu));
    }
    while i32(at) >= nb_span[sub * 28u + *t].y {
        *t += 1u;
    }
    let j = u32(nb_span[sub * 28u + *t].x + i32(at));
    return vec4<real_f>(posf[j].xyz + nb_shift[sub * 27u + *t].xyz, idx_as_real_f(j));
}
// Each thread's entries waiting to go out as a pack of 8 (entry q of thread t at q * BUILD_WG + t).
var<workgroup> ring: array<u32, 1024>;
// The staged candidates' atoms (apart from their positions, so the appends' loads of them
// are 4 bytes apart and meet fewer bank conflicts).
var<workgroup> cand_id: array<u32, 256>;

// Pack p of atom i's list out: 8 entries as two 16-byte stores, so a thread writes a whole
// 32-byte sector where single entries would each cost one (the list is packs of 8, pack p of
// atom i at vec4 2 (p n + i): see forces_list).
fn store_pack(lid: u32, i: u32, p: u32) {
    let at = 2u * (p * P.n + i);
    nlist[at] = vec4<u32>(ring[lid], ring[BUILD_WG + lid], ring[2u * BUILD_WG + lid], ring[3u * BUILD_WG + lid]);
    nlist[at + 1u] = vec4<u32>(
        ring[4u * BUILD_WG + lid],
        ring[5u * BUILD_WG + lid],
        ring[6u * BUILD_WG + lid],
        ring[7u * BUILD_WG + lid],
    );
}
var<workgroup> rounds_max: atomic<u32>;
var<workgroup> stream_max: atomic<u32>;
// The group's largest neighbour count: one atomic on the shared flag per group, not per atom
// (a million atomics on one word take longer than the build).
var<workgroup> most_seen: atomic<u32>;
// The two maxima, read back uniformly.
var<workgroup> loop_sizes: vec2<u32>;

// Neighbour cell d (-1..1 per axis) of cell cc along axis a: (cell coordinate, or -1 for
// none; image shift in box lengths).
fn stencil_axis(a: u32, c: u32, d: i32) -> vec2<i32> {
    let n = i32(P.dims[a]);
    let x = i32(c) + d;
    if P.periodic[a] == 0u {
        return vec2<i32>(select(x, -1, x < 0 || x >= n), 0);
    }
    if n < 3 {
        // Every cell once (d = 0, and d = 1 wrapped when there are two); the pair's minimum
        // image gives the partner.
        if d < 0 || (d == 1 && n == 1) {
            return vec2<i32>(-1, 0);
        }
        return vec2<i32>((x % n + n) % n, 0);
    }
    if x < 0 {
        return vec2<i32>(x + n, -1);
    }
    if x >= n {
        return vec2<i32>(x - n, 1);
    }
    return vec2<i32>(x, 0);
}

// Also empties the cell counts for the next rebuild (they are done with once the atoms are
// in place), which saves a dispatch a step.
@compute @workgroup_size(BUILD_WG)
fn build_list(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    build_cells(lid3.x, wid, 0u);
}

// ARGON_WGPU_BUILD_PROBE=1 or 2 (measuring): the build's work without its output, run before
// the real build: 1 counts the hits instead of storing them, 2 also skips the distance tests.
@compute @workgroup_size(BUILD_WG)
fn build_probe(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    build_cells(lid3.x, wid, PROBE);
}

fn build_cells(lid: u32, wid: vec3<u32>, probe: u32) {
    let sub = lid / CELL_T;
    let lane = lid % CELL_T;
    let c = (wid.y * BUILD_ROW + wid.x) * CELLS_PER_GROUP + sub;
    let here = c < P.n_cells;
    // (workgroup memory starts zeroed)
    // The cell's coordinates, and its 27 neighbours' spans.
    var s0 = 0u;
    var e0 = 0u;
    if here {
        s0 = cell_start[c];
        e0 = cell_start[c + 1u];
        let cc = vec3<u32>(c % P.dims.x, (c / P.dims.x) % P.dims.y, c / (P.dims.x * P.dims.y));
        if lane < 27u {
            let d = vec3<i32>(i32(lane % 3u) - 1, i32((lane / 3u) % 3u) - 1, i32(lane / 9u) - 1);
            let ax = stencil_axis(0u, cc.x, d.x);
            let ay = stencil_axis(1u, cc.y, d.y);
            let az = stencil_axis(2u, cc.z, d.z);
            var first = 0u;
            var len = 0u;
            if ax.x >= 0 && ay.x >= 0 && az.x >= 0 {
                let r = cell_index(vec3<u32>(u32(ax.x), u32(ay.x), u32(az.x)));
                first = cell_start[r];
                len = cell_start[r + 1u] - first;
            }
            nb_span[sub * 28u + lane] = vec2<i32>(i32(first), i32(len));
            nb_shift[sub * 27u + lane] = vec4<real_f>(vec3<real_f>(real_f(ax.y), real_f(ay.y), real_f(az.y)) * P.len.xyz, 0.0);
        }
        atomicMax(&rounds_max, (e0 - s0 + CELL_T - 1u) / CELL_T);
    }
    workgroupBarrier();
    // Stream places: one thread per cell turns lengths into (first - start, end).
    if here && lane == 0u {
        var at = 0u;
        for (var t = 0u; t < 27u; t++) {
            let sp = nb_span[sub * 28u + t];
            let end = at + u32(sp.y);
            nb_span[sub * 28u + t] = vec2<i32>(sp.x - i32(at), i32(end));
            at = end;
        }
        nb_span[sub * 28u + 27u] = vec2<i32>(0, 0x7fffffff);
        cell_span[sub] = vec3<u32>(s0, e0, at);
        atomicMax(&stream_max, at);
    }
    if here && lane == 1u && probe == 0u {
        atomicStore(&cell_count[c], 0u);
        atomicStore(&cell_fill[c], 0u);
    }
    workgroupBarrier();
    if lid == 0u {
        loop_sizes = vec2<u32>(atomicLoad(&rounds_max), atomicLoad(&stream_max));
    }
    let sizes = workgroupUniformLoad(&loop_sizes);
    let rounds = sizes.x;
    let total_max = sizes.y;
    let span = cell_span[sub];
    let total = select(0u, span.z, here);
    let small = P.dims.w != 0u;
    // Atom i's own place in the candidate stream: neighbour 13 (offset 0, 0, 0) is the cell
    // itself, whatever the stencil along a thin axis.
    let home = nb_span[sub * 28u + 13u].x;
    for (var r = 0u; r < rounds; r++) {
        let i = span.x + r * CELL_T + lane;
        let own = u32(i32(i) - home);
        let mine = here && i < span.y;
        var pi = vec4<real_f>(0.0);
        if mine {
            pi = posf[i];
            if probe == 0u {
                pos_build[i] = pi;
            }
        }
        var count = 0u;
        var t = 0u;
        // Chunks of 2 CELL_T candidates, each thread loading two; the next chunk's loads are
        // issued before this chunk's tests, so their latency hides behind them.
        var qa = candidate(sub, lane, total, &t);
        var qb = candidate(sub, CELL_T + lane, total, &t);
        for (var c0 = 0u; c0 < total_max; c0 += CHUNK) {
            cand[sub * CHUNK + lane] = qa;
            cand[sub * CHUNK + CELL_T + lane] = qb;
            cand_id[sub * CHUNK + lane] = real_f_as_idx(qa.w);
            cand_id[sub * CHUNK + CELL_T + lane] = real_f_as_idx(qb.w);
            workgroupBarrier();
            qa = candidate(sub, c0 + CHUNK + lane, total, &t);
            qb = candidate(sub, c0 + CHUNK + CELL_T + lane, total, &t);
            if mine {
                // The tests set one bit per candidate (no branch, so the warp stays together),
                // then each thread appends its hits in stream order.
                let base = sub * CHUNK;
                var hits = vec2<u32>(0u, 0u);
                if c0 < total && probe < 2u {
                    if small {
                        hits = vec2<u32>(hit_bits_image(base, pi.xyz), hit_bits_image(base + 32u, pi.xyz));
                    } else {
                        hits = vec2<u32>(hit_bits(base, pi.xyz), hit_bits(base + 32u, pi.xyz));
                    }
                } else if probe == 2u {
                    hits = vec2<u32>(real_f_as_idx(cand[base + lane].x) & 1u, 0u);
                }
                // Not the atom itself.
                let at = own - c0;
                if at < 32u {
                    hits.x &= ~(1u << at);
                } else if at < 64u {
                    hits.y &= ~(1u << (at - 32u));
                }
                if probe != 0u {
                    count += countOneBits(hits.x) + countOneBits(hits.y);
                    hits = vec2<u32>(0u);
                }
                // The hits appended in stream order, one loop over both halves (place 0..63):
                // the warp goes round as often as its lane with the most hits in the chunk,
                // not in each half. Each hit's atom is loaded an iteration ahead.
                var lo = hits.x;
                var hi = hits.y;
                var e = cand_id[base + (select(32u + firstTrailingBit(hi), firstTrailingBit(lo), lo != 0u) & 63u)];
                loop {
                    if (lo | hi) == 0u {
                        break;
                    }
                    hi = select(hi & (hi - 1u), hi, lo != 0u);
                    lo &= lo - 1u;
                    let next = cand_id[base + (select(32u + firstTrailingBit(hi), firstTrailingBit(lo), lo != 0u) & 63u)];
                    if count < P.max_nbrs {
                        ring[(count % 8u) * BUILD_WG + lid] = e;
                        if count % 8u == 7u {
                            store_pack(lid, i, count / 8u);
                        }
                    }
                    count += 1u;
                    e = next;
                }
            }
            workgroupBarrier();
        }
        if mine && probe != 0u {
            atomicMax(&most_seen, count);
        } else if mine {
            // The last, partial pack (its unused entries are never read).
            let kept = min(count, P.max_nbrs);
            if kept % 8u != 0u {
                store_pack(lid, i, kept / 8u);
            }
            ncount[i] = kept;
            atomicMax(&most_seen, count);
        }
    }
    workgroupBarrier();
    if lid == 0u {
        let most = atomicLoad(&most_seen);
        if probe != 0u {
            if most == 0xffffffffu {
                atomicStore(&flags[F_ESCAPE], 1u);
            }
            return;
        }
        if most > P.max_nbrs {
            atomicStore(&flags[F_OVERFLOW], 1u);
        }
        if most > 0u {
            atomicMax(&flags[F_MAX_SEEN], most);
        }
    }
}
