// Pair forces gathered per atom (no float atomics: each atom sums its own full list, or
// every other atom in tiles held in workgroup memory for small systems), then the one-body
// forces (9-3 walls on the closed axes, gravity, the drive), mirroring kernels/forces.cu.
// On telemetry steps each workgroup also sums (pair E, pair W, external E, external W) into
// partials[2 g + 1], pair terms halved as every pair is seen from both atoms.

// The force in the forces' precision; energy and virial summed in the state's.
struct Acc {
    f: vec3<real_f>,
    e: real_s,
    w: real_s,
}

fn add_pair(acc: ptr<function, Acc>, d: vec3<real_f>, ti: u32, tj: u32) {
    let rsq = dot(d, d);
    let c = pair_of(ti, tj);
    if rsq < c.rcut_sq {
        let r2inv = 1.0 / rsq;
        let r6inv = r2inv * r2inv * r2inv;
        let fd = r6inv * (c.lj1 * r6inv - c.lj2) * r2inv;
        (*acc).f += d * fd;
        if S.ev != 0u {
            let en = r6inv * (c.lj3 * r6inv - c.lj4) - c.offset;
            (*acc).e += real_s(0.5 * en);
            (*acc).w += real_s(0.5 * rsq * fd);
        }
    }
}

// Neighbour j's pair force on the atom at pi (type ti).
fn gather(acc: ptr<function, Acc>, pi: vec4<real_f>, ti: u32, j: u32) {
    let pj = posf[j];
    add_pair(acc, min_image(pi.xyz - pj.xyz), ti, type_of(pj));
}

// The pack of atom i's list holding entries k..k+7 (of cnt), read as two 16-byte loads
// (coalesced over the atoms), gathered in order.
fn gather_pack(acc: ptr<function, Acc>, pi: vec4<real_f>, ti: u32, i: u32, k: u32, cnt: u32) {
    let at = 2u * ((k / 8u) * P.n + i);
    let a = nlist[at];
    let b = nlist[at + 1u];
    let m = cnt - k;
    gather(acc, pi, ti, a.x);
    if m > 1u { gather(acc, pi, ti, a.y); }
    if m > 2u { gather(acc, pi, ti, a.z); }
    if m > 3u { gather(acc, pi, ti, a.w); }
    if m > 4u { gather(acc, pi, ti, b.x); }
    if m > 5u { gather(acc, pi, ti, b.y); }
    if m > 6u { gather(acc, pi, ti, b.z); }
    if m > 7u { gather(acc, pi, ti, b.w); }
}

// Walls, gravity and the drive on the atom at x of mass m: (force, (energy, virial)).
fn one_body(x: vec3<real_f>, m: real_f, f: ptr<function, vec3<real_f>>) -> vec2<real_f> {
    var e: real_f = 0.0;
    var w: real_f = 0.0;
    if P.walls != 0u {
        for (var k = 0u; k < 3u; k++) {
            if P.periodic[k] == 0u {
                let dl = x[k] - P.lo[k];
                let dh = P.hi[k] - x[k];
                let lo = wall_eval(dl);
                let hi = wall_eval(dh);
                (*f)[k] += lo.x - hi.x;
                e += lo.y + hi.y;
                w += dl * lo.x + dh * hi.x;
            }
        }
    }
    if P.gravity != 0.0 {
        (*f).y -= m * P.gravity;
        e += m * P.gravity * (x.y - P.lo.y);
    }
    if P.drive != 0.0 {
        (*f).x += m * P.drive;
        if P.drive_potential != 0u {
            e -= m * P.drive * (x.x - P.lo.x);
        }
    }
    return vec2<real_f>(e, w);
}

// The atom's total force stored, and its workgroup's energy and virial sums on ev steps.
fn finish_force(i: u32, lid: u32, wg: u32, acc: Acc, x: vec4<real_f>, valid: bool) {
    var ext = vec2<real_f>(0.0, 0.0);
    var f = acc.f;
    if valid {
        ext = one_body(x.xyz, real_f(masses[type_of(x)]), &f);
    }
    // Obstacles, surface friction and the body forces (flow.wgsl; one uniform test when off).
    ext += flow_forces(i, lid, wg, x, valid, &f);
    if valid {
        force[i] = vec4<real_f>(f, 0.0);
    }
    if S.ev != 0u {
        var v = vec4<real_s>(0.0);
        if valid {
            v = vec4<real_s>(acc.e, acc.w, real_s(ext.x), real_s(ext.y));
        }
        let s = workgroup_sum(lid, v);
        if lid == 0u {
            partials[2u * wg + 1u] = s;
        }
    }
}

@compute @workgroup_size(WG)
fn forces_list(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    let valid = i < P.n && atomicLoad(&flags[F_BLOWUP]) == 0u;
    var acc = Acc(vec3<real_f>(0.0), 0.0, 0.0);
    var pi = vec4<real_f>(0.0);
    if valid {
        pi = posf[i];
        let ti = type_of(pi);
        let cnt = ncount[i];
        for (var k = 0u; k < cnt; k += 8u) {
            gather_pack(&acc, pi, ti, i, k, cnt);
        }
    }
    finish_force(i, lid.x, wid.x, acc, pi, valid);
}

var<workgroup> tile: array<vec4<real_f>, WG>;

@compute @workgroup_size(WG)
fn forces_all(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    let valid = i < P.n && atomicLoad(&flags[F_BLOWUP]) == 0u;
    var acc = Acc(vec3<real_f>(0.0), 0.0, 0.0);
    var pi = vec4<real_f>(0.0);
    if valid {
        pi = posf[i];
    }
    let ti = type_of(pi);
    let tiles = (P.n + WG - 1u) / WG;
    for (var t = 0u; t < tiles; t++) {
        let j0 = t * WG;
        if j0 + lid.x < P.n {
            tile[lid.x] = posf[j0 + lid.x];
        }
        workgroupBarrier();
        let m = min(WG, P.n - j0);
        if valid {
            for (var k = 0u; k < m; k++) {
                if j0 + k != i {
                    let pj = tile[k];
                    add_pair(&acc, min_image(pi.xyz - pj.xyz), ti, type_of(pj));
                }
            }
        }
        workgroupBarrier();
    }
    finish_force(i, lid.x, wid.x, acc, pi, valid);
}

// Threads per atom of `forces_split`.
const TPA: u32 = 4u;
var<workgroup> part: array<vec4<real_f>, WG>;

// The list forces with TPA threads per atom, for systems too small to keep the GPU busy
// with one (each thread takes every TPA-th pack; the atom's sum is theirs in a fixed
// order), on steps without energies (forces_list sums those). Thread t takes atom
// t % (WG / TPA) of the workgroup's, so a warp reads one pack of consecutive atoms.
@compute @workgroup_size(WG)
fn forces_split(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let lid = lid3.x;
    let per = WG / TPA;
    let a = lid % per;
    let lane = lid / per;
    let i = wid.x * per + a;
    let valid = i < P.n && atomicLoad(&flags[F_BLOWUP]) == 0u;
    var acc = Acc(vec3<real_f>(0.0), 0.0, 0.0);
    var pi = vec4<real_f>(0.0);
    if valid {
        pi = posf[i];
        let ti = type_of(pi);
        let cnt = ncount[i];
        for (var k = lane * 8u; k < cnt; k += 8u * TPA) {
            gather_pack(&acc, pi, ti, i, k, cnt);
        }
    }
    part[lid] = vec4<real_f>(acc.f, 0.0);
    workgroupBarrier();
    if lane == 0u && valid {
        var f = part[a].xyz;
        for (var q = 1u; q < TPA; q++) {
            f += part[a + q * per].xyz;
        }
        one_body(pi.xyz, real_f(masses[type_of(pi)]), &f);
        force[i] = vec4<real_f>(f, 0.0);
    }
}
