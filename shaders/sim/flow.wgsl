// The wind tunnel's one-body parts on the wgpu backend (src/sim/gpu/flow.rs, engine/flow.rs):
// the constants block `F` (obstacle grid, surface friction, tunnel zone, field grid, body
// order), the obstacles' exact signed distance (mirroring src/physics/obstacles.rs and
// kernels/obstacles.cuh) in the forces' precision with every coordinate held as a (hi, lo)
// pair of f32, so in f32 a difference p - c keeps f32's relative precision however far from
// the origin the shape sits (in double, hi + lo carries 48 bits of each coordinate and every
// length the same: `obs_real`); the obstacle force (the 9-3 wall of `params.obstacle`), the surface friction
// (src/physics/friction.rs: same Philox stream and counters as the CPU), and the force on
// each body (src/sim/bodies.rs): per workgroup, one fixed-order workgroup sum per body that
// any of its atoms touches (no float atomics), finished per step by `flow_finish`.
// Everything here is behind a uniform flag: a feature that is off costs one test.

struct Flow {
    grid_lo: vec2<real_f>,
    grid_cell_inv: vec2<real_f>,
    grid_len: vec2<real_f>,
    grid_cells: vec2<u32>,
    grid_periodic: vec2<u32>,
    n_bodies: u32,
    obstacles: u32,
    // The obstacles' 9-3 wall: c1, c2, c3, c4 and offset, cutoff, d_cap, e_cap; f_cap in obs_f.
    obs_a: vec4<real_f>,
    obs_b: vec4<real_f>,
    obs_f: real_f,
    far: real_f,
    friction: u32,
    fr_range: real_f,
    fr_gamma: real_f,
    fr_noise: real_f,
    tunnel: u32,
    tunnel_lo: real_s,
    tunnel_hi: real_s,
    tunnel_speed: real_s,
    fields: u32,
    // Anything for finish_force to do: obstacles, friction or bodies.
    surfaces: u32,
    // Word offsets into obs_data of the primitives, vertices, cell starts and candidates.
    prims_at: u32,
    verts_at: u32,
    start_at: u32,
    cand_at: u32,
    // Body index of the wall face 2 axis + hi, -1 on periodic axes.
    body_wall: array<vec4<i32>, 2>,
    // The flow-field grid (flow::Grid): origin, 1 / bin, bins per axis, periodic and walled axes.
    fg_origin: vec4<real_s>,
    fg_inv: vec4<real_s>,
    fg_n: vec4<u32>,
    fg_periodic: vec4<u32>,
    fg_walled: vec4<u32>,
    fg_bins: u32,
    // (hi, lo) words of one flow record (flow_finish).
    flow_words: u32,
    pad0: u32,
    pad1: u32,
    // The thermostat's flow grid (flow::Grid::for_thermostat), as the field grid's.
    pg_origin: vec4<real_s>,
    pg_inv: vec4<real_s>,
    pg_n: vec4<u32>,
    pg_periodic: vec4<u32>,
    pg_walled: vec4<u32>,
    pg_bins: u32,
    // A rescaling thermostat relative to the flow (1 Berendsen, 2 CSVR; profile.wgsl).
    relative: u32,
    // The thermal readout of a telemetry record (SimParams::thermal_readout).
    thermal: u32,
    pad2: u32,
    // The tunnel's start spin (physics::friction::Spin): the obstacle surfaces' tangential
    // speed, counter-clockwise, for the force passes of the steps before spin_until (lo, hi
    // words; 0: no spin).
    fr_spin: real_f,
    spin_until: vec2<u32>,
}

@group(0) @binding(24) var<uniform> F: Flow;
// Obstacle primitives (16 words: kind, first, count, shape, a[6] as (hi, lo) f32 pairs),
// vertices ((x hi, x lo, y hi, y lo)), cell starts and candidates, at F's offsets.
@group(0) @binding(25) var<storage, read_write> obs_data: array<u32>;
// Per workgroup and body: the force on the body from the workgroup's atoms, at [g * nb + b].
@group(0) @binding(26) var<storage, read_write> body_part: array<vec4<real_s>>;

const OBS_CIRCLE: u32 = 0u;
const OBS_CAPSULE: u32 = 1u;
const OBS_RECT: u32 = 2u;
const NO_SHAPE: u32 = 0xffffffffu;
// Bodies up to 32 * MAX_BODY_WORDS (the host refuses more).
const MAX_BODY_WORDS: u32 = 32u;

fn obs_f32(at: u32) -> f32 {
    return bitcast<f32>(obs_data[at]);
}

// Coordinate q of primitive word `at` as (hi, lo).
fn obs_pair(at: u32) -> vec2<f32> {
    return vec2<f32>(obs_f32(at), obs_f32(at + 1u));
}

// #if DOUBLE
// The (hi, lo) pair at word `at` as one number (obs_f32, the hi word alone, elsewhere).
fn obs_real(at: u32) -> f64 {
    return f64(obs_f32(at)) + f64(obs_f32(at + 1u));
}
// #endif

// p - c for c given as (hi, lo) pairs per axis.
fn obs_sub(p: vec2<real_f>, cx: vec2<f32>, cy: vec2<f32>) -> vec2<real_f> {
    return vec2<real_f>((p.x - real_f(cx.x)) - real_f(cx.y), (p.y - real_f(cy.x)) - real_f(cy.y));
}

// (|d| - r, gradient) for displacement d from a centre or spine.
fn obs_radial(d: vec2<real_f>, r: real_f) -> vec3<real_f> {
    let len = length(d);
    if len > 0.0 {
        return vec3<real_f>(len - r, d / len);
    }
    return vec3<real_f>(-r, 1.0, 0.0);
}

// The displacement from the segment a-b to the point, given pa = p - a and ba = b - a.
fn obs_to_segment(pa: vec2<real_f>, ba: vec2<real_f>) -> vec2<real_f> {
    let bb = dot(ba, ba);
    var h: real_f = 0.0;
    if bb > 0.0 {
        h = clamp(dot(pa, ba) / bb, 0.0, 1.0);
    }
    return pa - ba * h;
}

fn obs_vert(k: u32) -> vec4<f32> {
    let at = F.verts_at + 4u * k;
    return vec4<f32>(obs_f32(at), obs_f32(at + 1u), obs_f32(at + 2u), obs_f32(at + 3u));
}

// (signed distance, gradient) of primitive q at p (Prim::eval).
fn obs_eval(q: u32, p: vec2<real_f>) -> vec3<real_f> {
    let at = F.prims_at + 16u * q;
    let kind = obs_data[at];
    let a = at + 4u;
    if kind == OBS_CIRCLE {
        return obs_radial(obs_sub(p, obs_pair(a), obs_pair(a + 2u)), obs_real(a + 4u));
    }
    if kind == OBS_CAPSULE {
        let pa = obs_sub(p, obs_pair(a), obs_pair(a + 2u));
        let ax = obs_pair(a);
        let ay = obs_pair(a + 2u);
        let bx = obs_pair(a + 4u);
        let by = obs_pair(a + 6u);
        let ba = vec2<real_f>(
            (real_f(bx.x) - real_f(ax.x)) + (real_f(bx.y) - real_f(ax.y)),
            (real_f(by.x) - real_f(ay.x)) + (real_f(by.y) - real_f(ay.y)),
        );
        return obs_radial(obs_to_segment(pa, ba), obs_real(a + 8u));
    }
    if kind == OBS_RECT {
        let d = obs_sub(p, obs_pair(a), obs_pair(a + 2u));
        let c = obs_real(a + 8u);
        let s = obs_real(a + 10u);
        let l = vec2<real_f>(c * d.x + s * d.y, -s * d.x + c * d.y);
        let qd = abs(l) - vec2<real_f>(obs_real(a + 4u), obs_real(a + 6u));
        let sg = select(vec2<real_f>(1.0), vec2<real_f>(-1.0), l < vec2<real_f>(0.0));
        var dist: real_f;
        var g: vec2<real_f>;
        if qd.x > 0.0 || qd.y > 0.0 {
            let v = max(qd, vec2<real_f>(0.0));
            let r = length(v);
            dist = r;
            g = sg * v / r;
        } else if qd.x > qd.y {
            dist = qd.x;
            g = vec2<real_f>(sg.x, 0.0);
        } else {
            dist = qd.y;
            g = vec2<real_f>(0.0, sg.y);
        }
        return vec3<real_f>(dist, c * g.x - s * g.y, s * g.x + c * g.y);
    }
    // Polygon: the nearest edge, the sign by the crossing number.
    let first = obs_data[at + 1u];
    let n = obs_data[at + 2u];
    var best: real_f = 3.0e38;
    var bd = vec2<real_f>(1.0, 0.0);
    var inside = false;
    var vj = obs_vert(first + n - 1u);
    for (var k = 0u; k < n; k++) {
        let vi = obs_vert(first + k);
        // p - v_j, p - v_i and v_i - v_j, each difference from the (hi, lo) pairs.
        let pj = obs_sub(p, vj.xy, vj.zw);
        let pi = obs_sub(p, vi.xy, vi.zw);
        let e = vec2<real_f>(
            (real_f(vi.x) - real_f(vj.x)) + (real_f(vi.y) - real_f(vj.y)),
            (real_f(vi.z) - real_f(vj.z)) + (real_f(vi.w) - real_f(vj.w)),
        );
        let d = obs_to_segment(pj, e);
        let d2 = dot(d, d);
        if d2 < best {
            best = d2;
            bd = d;
        }
        // (v_i.y > p.y) != (v_j.y > p.y), and p.x left of the crossing.
        if (pi.y < 0.0) != (pj.y < 0.0) {
            if pi.x < pi.y / (-e.y) * (-e.x) {
                inside = !inside;
            }
        }
        vj = vi;
    }
    let r = obs_radial(bd, 0.0);
    if inside {
        return vec3<real_f>(-r.x, -r.y, -r.z);
    }
    return r;
}

struct ObsSample {
    // distance, gradient x, gradient y
    d: vec3<real_f>,
    shape: u32,
}

// The exact distance (clamped at F.far, no gradient beyond) to the nearest obstacle at
// (x, y) and its shape (ObstacleField::sample).
fn obs_sample(x: vec2<real_f>) -> ObsSample {
    var p = x;
    var idx = vec2<u32>(0u);
    for (var k = 0u; k < 2u; k++) {
        if F.grid_periodic[k] != 0u {
            let l = F.grid_len[k];
            p[k] -= l * floor((p[k] - F.grid_lo[k]) / l);
        }
        let u = floor((p[k] - F.grid_lo[k]) * F.grid_cell_inv[k]);
        idx[k] = min(u32(max(u, 0.0)), F.grid_cells[k] - 1u);
    }
    let c = idx.y * F.grid_cells.x + idx.x;
    var best = ObsSample(vec3<real_f>(F.far, 0.0, 0.0), NO_SHAPE);
    let last = obs_data[F.start_at + c + 1u];
    for (var k = obs_data[F.start_at + c]; k < last; k++) {
        let q = obs_data[F.cand_at + k];
        let r = obs_eval(q, p);
        if r.x < best.d.x {
            best = ObsSample(r, obs_data[F.prims_at + 16u * q + 3u]);
        }
    }
    return best;
}

// (force away from the surface, energy) of the obstacles' 9-3 wall at distance d.
fn obs_wall(d: real_f) -> vec2<real_f> {
    let c = F.obs_a;
    if d >= F.obs_b.y {
        return vec2<real_f>(0.0, 0.0);
    }
    if d < F.obs_b.z {
        return vec2<real_f>(F.obs_f, F.obs_b.w + F.obs_f * (F.obs_b.z - d));
    }
    let rinv = 1.0 / d;
    let r2inv = rinv * rinv;
    let r4inv = r2inv * r2inv;
    let r10inv = r4inv * r4inv * r2inv;
    let f = c.x * r10inv - c.y * r4inv;
    let e = c.z * r4inv * r4inv * rinv - c.w * r2inv * rinv - F.obs_b.x;
    return vec2<real_f>(f, e);
}

// One atom's reactions on the bodies: per wall face (2 axis + hi) and on its nearest shape.
struct BodyTerms {
    wall: array<vec3<real_f>, 6>,
    shape: u32,
    on_shape: vec3<real_f>,
}

// The friction's Philox counter of `surface` at the step of this force pass (friction.rs).
fn friction_counter(surface: u32) -> vec2<u32> {
    return vec2<u32>((S.step_lo << 3u) | surface, (S.step_hi << 3u) | (S.step_lo >> 29u));
}

// Whether this force pass's step is before the end of the start spin (64-bit compare).
fn spinning() -> bool {
    return S.step_hi < F.spin_until.y || (S.step_hi == F.spin_until.y && S.step_lo < F.spin_until.x);
}

// The obstacle force, the surface friction and the wall pushes on the bodies of the atom in
// slot i at x (mass m), added to f, with their (energy, virial); the reactions go to `t`.
fn surface_forces(
    i: u32,
    x: vec3<real_f>,
    m: real_f,
    f: ptr<function, vec3<real_f>>,
    t: ptr<function, BodyTerms>,
) -> vec2<real_f> {
    var ev = vec2<real_f>(0.0);
    var s = ObsSample(vec3<real_f>(F.far, 0.0, 0.0), NO_SHAPE);
    if F.obstacles != 0u {
        s = obs_sample(x.xy);
        let o = obs_wall(s.d.x);
        if o.x != 0.0 || o.y != 0.0 {
            let fo = o.x * s.d.yz;
            (*f).x += fo.x;
            (*f).y += fo.y;
            ev += vec2<real_f>(o.y, s.d.x * o.x);
            (*t).shape = s.shape;
            (*t).on_shape = -vec3<real_f>(fo, 0.0);
        }
    }
    if F.n_bodies != 0u && P.walls != 0u {
        for (var k = 0u; k < 3u; k++) {
            if P.periodic[k] == 0u {
                let lo = wall_eval(x[k] - P.lo[k]);
                let hi = wall_eval(P.hi[k] - x[k]);
                (*t).wall[2u * k][k] = -lo.x;
                (*t).wall[2u * k + 1u][k] = hi.x;
            }
        }
    }
    if F.friction != 0u {
        let v = vec3<real_f>(vel[i].xyz);
        let id = ids[i];
        let drag = F.fr_gamma * m;
        let sd = F.fr_noise * sqrt(m);
        let seed = vec2<u32>(P.seed_lo, P.seed_hi);
        for (var k = 0u; k < 3u; k++) {
            if P.periodic[k] != 0u {
                continue;
            }
            for (var h = 0u; h < 2u; h++) {
                let d = select(x[k] - P.lo[k], P.hi[k] - x[k], h == 1u);
                if d < F.fr_range {
                    let xi = vec4<real_f>(normal4_s(seed, STREAM_SURFACE_FRICTION, id, friction_counter(2u * k + h)));
                    var ft = -drag * v + sd * xi.xyz;
                    ft[k] = 0.0;
                    *f += ft;
                    (*t).wall[2u * k + h] -= ft;
                }
            }
        }
        if s.d.x < F.fr_range && s.shape != NO_SHAPE {
            let xi = vec4<real_f>(normal4_s(seed, STREAM_SURFACE_FRICTION, id, friction_counter(6u)));
            let g = s.d.yz;
            let vn = dot(v.xy, g);
            let xn = dot(xi.xy, g);
            var vt = vec3<real_f>(v.xy - vn * g, v.z);
            // The start spin: the velocity relative to the surface moving along (-gy, gx);
            // left out at rest, so the force is the plain friction's to the bit.
            if spinning() {
                vt.x += F.fr_spin * g.y;
                vt.y -= F.fr_spin * g.x;
            }
            let xt = vec3<real_f>(xi.xy - xn * g, xi.z);
            let ft = -drag * vt + sd * xt;
            *f += ft;
            // The friction's shape is the sample's, which the obstacle force (if any) shares.
            (*t).shape = s.shape;
            (*t).on_shape -= ft;
        }
    }
    return ev;
}

var<workgroup> body_mask: array<atomic<u32>, MAX_BODY_WORDS>;
var<workgroup> body_mask_u: array<u32, MAX_BODY_WORDS>;

// The atom's reaction on body b.
fn body_term(t: BodyTerms, b: u32) -> vec3<real_f> {
    var r = vec3<real_f>(0.0);
    if t.shape == b {
        r = t.on_shape;
    }
    for (var face = 0u; face < 6u; face++) {
        if F.body_wall[face / 4u][face % 4u] == i32(b) {
            r += t.wall[face];
        }
    }
    return r;
}

// The workgroup's force on every body into body_part[wg * nb + b]: a workgroup sum (fixed
// tree) for each body one of its atoms touched, zero for the others. Uniform control flow.
fn bodies_reduce(lid: u32, wg: u32, t: BodyTerms, valid: bool) {
    let nb = F.n_bodies;
    let words = (nb + 31u) / 32u;
    for (var w = lid; w < words; w += WG) {
        atomicStore(&body_mask[w], 0u);
    }
    workgroupBarrier();
    if valid {
        if t.shape != NO_SHAPE {
            atomicOr(&body_mask[t.shape / 32u], 1u << (t.shape % 32u));
        }
        for (var face = 0u; face < 6u; face++) {
            let b = F.body_wall[face / 4u][face % 4u];
            if b >= 0 && any(t.wall[face] != vec3<real_f>(0.0)) {
                atomicOr(&body_mask[u32(b) / 32u], 1u << (u32(b) % 32u));
            }
        }
    }
    workgroupBarrier();
    for (var w = lid; w < words; w += WG) {
        body_mask_u[w] = atomicLoad(&body_mask[w]);
    }
    workgroupBarrier();
    for (var b = lid; b < nb; b += WG) {
        if (body_mask_u[b / 32u] & (1u << (b % 32u))) == 0u {
            body_part[wg * nb + b] = vec4<real_s>(0.0);
        }
    }
    for (var w = 0u; w < words; w++) {
        var m = workgroupUniformLoad(&body_mask_u[w]);
        loop {
            if m == 0u {
                break;
            }
            let b = 32u * w + firstTrailingBit(m);
            m = m & (m - 1u);
            var v = vec4<real_s>(0.0);
            if valid {
                v = vec4<real_s>(vec3<real_s>(body_term(t, b)), 0.0);
            }
            let s = workgroup_sum(lid, v);
            if lid == 0u {
                body_part[wg * nb + b] = s;
            }
        }
    }
}

// finish_force's hook: the surfaces' forces on a valid atom added to f, with their (energy,
// virial), and the workgroup's body sums. Call from uniform control flow.
fn flow_forces(i: u32, lid: u32, wg: u32, x: vec4<real_f>, valid: bool, f: ptr<function, vec3<real_f>>) -> vec2<real_f> {
    if F.surfaces == 0u {
        return vec2<real_f>(0.0);
    }
    var t: BodyTerms;
    t.shape = NO_SHAPE;
    var ev = vec2<real_f>(0.0);
    if valid {
        ev = surface_forces(i, x.xyz, real_f(masses[type_of(x)]), f, &t);
    }
    if F.n_bodies != 0u {
        bodies_reduce(lid, wg, t, valid);
    }
    return ev;
}
