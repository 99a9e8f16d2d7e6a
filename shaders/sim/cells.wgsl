// The neighbour-list rebuild on the device: decided by the skin test of the first half kick
// (F_REBUILD), launched by indirect dispatch (`plan` writes the group counts, zero when no
// rebuild is due, so no step waits for a read-back), atoms counted into cells with u32
// atomics, a scan over the cells by one workgroup (no subgroups), a scatter, then each
// cell put in order of the atoms' ids (so the order, and every sum over the lists, is the
// same run to run), and the full (gather) list of every atom within the list range.

// One invocation: the rebuild's group counts (atoms at [0..3], one workgroup at [3..6],
// cells at [6..9]), or zeros when none is due.
@compute @workgroup_size(1)
fn plan() {
    let due = atomicLoad(&flags[F_REBUILD]) != 0u && atomicLoad(&flags[F_BLOWUP]) == 0u;
    plan_args[0] = select(0u, (P.n + WG - 1u) / WG, due);
    plan_args[1] = 1u;
    plan_args[2] = 1u;
    plan_args[3] = select(0u, 1u, due);
    plan_args[4] = 1u;
    plan_args[5] = 1u;
    plan_args[6] = select(0u, (P.n_cells + WG - 1u) / WG, due);
    plan_args[7] = 1u;
    plan_args[8] = 1u;
    atomicStore(&flags[F_REBUILD], 0u);
    if due {
        atomicAdd(&flags[F_BUILDS], 1u);
    }
}

fn cell_coords(x: vec3<f32>) -> vec3<u32> {
    let f = floor((x - P.lo.xyz) * P.cell_inv.xyz);
    let top = vec3<f32>(P.dims.xyz) - 1.0;
    return vec3<u32>(clamp(f, vec3<f32>(0.0), top));
}

fn cell_index(c: vec3<u32>) -> u32 {
    return (c.z * P.dims.y + c.y) * P.dims.x + c.x;
}

@compute @workgroup_size(WG)
fn count_cells(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < P.n {
        let c = cell_index(cell_coords(pos[i].xyz));
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
        let c = cell_index(cell_coords(tmp_pos[s].xyz));
        let first = cell_start[c];
        let last = cell_start[c + 1u];
        var rank = 0u;
        for (var j = first; j < last; j++) {
            rank += select(0u, 1u, tmp_ids[j] < me);
        }
        let d = first + rank;
        pos[d] = tmp_pos[s];
        vel[d] = tmp_vel[s];
        ids[d] = me;
        cell_of[d] = c;
    }
}

// The cells a stencil visits along one axis: -1..1 around the atom's, or every cell once
// when a periodic axis has fewer than three (the minimum image then picks the partner).
fn axis_range(a: u32, c: u32) -> vec2<i32> {
    let d = i32(P.dims[a]);
    if P.periodic[a] != 0u && d < 3 {
        return vec2<i32>(0, d - 1);
    }
    if P.periodic[a] != 0u {
        return vec2<i32>(i32(c) - 1, i32(c) + 1);
    }
    return vec2<i32>(max(i32(c) - 1, 0), min(i32(c) + 1, d - 1));
}

fn wrap_cell(x: i32, d: i32) -> u32 {
    return u32((x % d + d) % d);
}

// Also empties the cell counts for the next rebuild (they are done with once the atoms are
// in place), which saves a dispatch a step.
@compute @workgroup_size(WG)
fn build_list(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= P.n {
        return;
    }
    for (var c = i; c < P.n_cells; c += P.n) {
        atomicStore(&cell_count[c], 0u);
        atomicStore(&cell_fill[c], 0u);
    }
    let pi = pos[i];
    pos_build[i] = pi;
    let ci = cell_coords(pi.xyz);
    let rx = axis_range(0u, ci.x);
    let ry = axis_range(1u, ci.y);
    let rz = axis_range(2u, ci.z);
    var count = 0u;
    for (var z = rz.x; z <= rz.y; z++) {
        for (var y = ry.x; y <= ry.y; y++) {
            for (var x = rx.x; x <= rx.y; x++) {
                let cc = vec3<u32>(
                    wrap_cell(x, i32(P.dims.x)),
                    wrap_cell(y, i32(P.dims.y)),
                    wrap_cell(z, i32(P.dims.z)),
                );
                let c = cell_index(cc);
                let last = cell_start[c + 1u];
                for (var j = cell_start[c]; j < last; j++) {
                    if j == i {
                        continue;
                    }
                    let d = min_image(pos[j].xyz - pi.xyz);
                    if dot(d, d) < P.rlist_sq {
                        if count < P.max_nbrs {
                            nlist[count * P.n + i] = j;
                        }
                        count += 1u;
                    }
                }
            }
        }
    }
    ncount[i] = min(count, P.max_nbrs);
    if count > P.max_nbrs {
        atomicStore(&flags[F_OVERFLOW], 1u);
    }
    atomicMax(&flags[F_MAX_SEEN], count);
}
