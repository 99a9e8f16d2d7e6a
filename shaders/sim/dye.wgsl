// Dye on the wgpu backend (src/sim/gpu/engine/dye.rs; the CPU's src/sim/cpu/state/dye.rs,
// physics::dye): the tags live by CANONICAL index, two u16 to a u32 word (tag of atom c in
// the low half of word c / 2 for even c, the high half for odd), so the list re-sorting never
// touches them. `dye_step`, after each drift while there are rakes or a tunnel's zone with
// tags: an atom whose move x - dt v -> x crossed a rake takes the last such rake's tag (the
// move wrapped across a periodic x or y edge is also tested in the image on the other side),
// then an atom in the tunnel's inflow zone loses its tag, as the CPU does later in the same
// step (the positions do not change in between). Two atoms share a word, so a tag is written
// with an atomic and + or on its own half, and only when it changes.
//
// Compiled after common.wgsl (whose group 0 it reads) in a module of its own; its group 1
// is its own: the tag words, the arguments and the rakes.

struct DyeArgs {
    n_rakes: u32,
    // 1: clear the tags of the atoms in the zone [zone_lo, zone_hi) of x.
    zone: u32,
    pad0: u32,
    pad1: u32,
    zone_lo: real_s,
    zone_hi: real_s,
    // The longest move tested (crate::sim::RUNAWAY_STEP: a longer one is a blow-up).
    reach: real_s,
    pad2: real_s,
}

@group(1) @binding(0) var<storage, read_write> dye_words: array<atomic<u32>>;
@group(1) @binding(1) var<uniform> dye_args: DyeArgs;
// Three words of four per rake: (ax, ay) and (bx, by) as f32 (hi, lo) pairs' bits, then the tag.
@group(1) @binding(2) var<storage, read> dye_rakes: array<vec4<u32>>;

fn rake_real(hi: u32, lo: u32) -> real_s {
    return real_s(bitcast<f32>(hi)) + real_s(bitcast<f32>(lo));
}

// A rake's end from its word of (x hi, x lo, y hi, y lo).
fn rake_end(w: vec4<u32>) -> vec2<real_s> {
    return vec2<real_s>(rake_real(w.x, w.y), rake_real(w.z, w.w));
}

// Twice the signed area of (o, a, b), as physics::dye::cross.
fn dye_cross(o: vec2<real_s>, a: vec2<real_s>, b: vec2<real_s>) -> real_s {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// physics::dye::DyeRake::crossed: the segments p0 -> p1 and a -> b meet (an end touching the
// other counts; a move along the rake's own line does not).
fn dye_crossed(a: vec2<real_s>, b: vec2<real_s>, p0: vec2<real_s>, p1: vec2<real_s>) -> bool {
    let d1 = dye_cross(a, b, p0);
    let d2 = dye_cross(a, b, p1);
    if (d1 > 0.0 && d2 > 0.0) || (d1 < 0.0 && d2 < 0.0) || (d1 == 0.0 && d2 == 0.0) {
        return false;
    }
    let d3 = dye_cross(p0, p1, a);
    let d4 = dye_cross(p0, p1, b);
    return !((d3 > 0.0 && d4 > 0.0) || (d3 < 0.0 && d4 < 0.0));
}

// physics::dye::after_move: the last rake crossed, else `old`.
fn dye_after_move(p0: vec2<real_s>, p1: vec2<real_s>, old: u32) -> u32 {
    var tag = old;
    for (var r = 0u; r < dye_args.n_rakes; r++) {
        let a = rake_end(dye_rakes[3u * r]);
        let b = rake_end(dye_rakes[3u * r + 1u]);
        if dye_crossed(a, b, p0, p1) {
            tag = dye_rakes[3u * r + 2u].x;
        }
    }
    return tag;
}

// physics::dye::DyeRake::near: p within `reach` of rake r's bounding box.
fn dye_near(p: vec2<real_s>) -> bool {
    let reach = dye_args.reach;
    for (var r = 0u; r < dye_args.n_rakes; r++) {
        let a = rake_end(dye_rakes[3u * r]);
        let b = rake_end(dye_rakes[3u * r + 1u]);
        let lo = min(a, b) - vec2<real_s>(reach);
        let hi = max(a, b) + vec2<real_s>(reach);
        if p.x >= lo.x && p.x <= hi.x && p.y >= lo.y && p.y <= hi.y {
            return true;
        }
    }
    return false;
}

@compute @workgroup_size(WG)
fn dye_step(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    // After a blow-up the CPU stops before its rakes.
    if i >= P.n || atomicLoad(&flags[F_BLOWUP]) != 0u {
        return;
    }
    let c = ids[i];
    let shift_bits = 16u * (c & 1u);
    let word = atomicLoad(&dye_words[c >> 1u]);
    let old = (word >> shift_bits) & 0xffffu;
    let x = pos[i];
    let p1 = vec2<real_s>(x.x, x.y);
    var tag = old;
    if dye_args.n_rakes > 0u {
        // #if MIXED
        let lo = vec2<real_s>(P.box_lo.xy);
        let hi = vec2<real_s>(P.box_hi.xy);
        let len = vec2<real_s>(P.box_len.xy);
        // #else
        let lo = vec2<real_s>(P.lo.xy);
        let hi = vec2<real_s>(P.hi.xy);
        let len = vec2<real_s>(P.len.xy);
        // #endif
        let reach = dye_args.reach;
        var per = vec2<bool>(P.periodic.x != 0u, P.periodic.y != 0u);
        let wraps_x = per.x && (p1.x - reach < lo.x || p1.x + reach >= hi.x);
        let wraps_y = per.y && (p1.y - reach < lo.y || p1.y + reach >= hi.y);
        // Most atoms are far from every rake and from a periodic edge.
        if wraps_x || wraps_y || dye_near(p1) {
            let v = vel[i];
            let p0 = p1 - P.dt * vec2<real_s>(v.x, v.y);
            tag = dye_after_move(p0, p1, tag);
            var shift = vec2<real_s>(0.0);
            for (var k = 0u; k < 2u; k++) {
                if per[k] && p0[k] < lo[k] {
                    shift[k] = len[k];
                } else if per[k] && p0[k] >= hi[k] {
                    shift[k] = -len[k];
                }
            }
            if shift.x != 0.0 || shift.y != 0.0 {
                tag = dye_after_move(p0 + shift, p1 + shift, tag);
            }
        }
    }
    if dye_args.zone != 0u && p1.x >= dye_args.zone_lo && p1.x < dye_args.zone_hi {
        tag = 0u;
    }
    if tag != old {
        atomicAnd(&dye_words[c >> 1u], ~(0xffffu << shift_bits));
        atomicOr(&dye_words[c >> 1u], tag << shift_bits);
    }
}
