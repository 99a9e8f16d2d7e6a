// Velocity Verlet on the device, mirroring kernels/integrate.cu and src/sim/cpu/state/step.rs:
// the first half kick and drift (the previous step's thermostat factor applied first; wrap,
// the skin test that asks for a rebuild, the runaway and escape tests), the second half kick
// with the Langevin update and per-workgroup kinetic sums, and `finish_step`: one workgroup
// totals the sums in a fixed order (compensated, so a million f32 terms keep their digits),
// computes the Berendsen or CSVR factor and writes the telemetry record. Where the state is
// f64 (mixed, double) the kicks, the drift and every sum are f64, and the totals a plain
// fixed-order tree; in mixed the drift also writes the f32 positions the forces read (`posf`).

fn step_counter() -> vec2<u32> {
    return vec2<u32>(S.step_lo, S.step_hi);
}

fn blow_up(escape: bool) {
    atomicStore(&flags[F_BLOWUP], 1u);
    atomicMin(&flags[F_BLOWUP_AT], S.k);
    if escape {
        atomicStore(&flags[F_ESCAPE], 1u);
    }
}

// The first half kick and drift of atom i from velocity v (the previous step's thermostat
// factor and second kick already applied).
fn first_half(i: u32, v0: vec3<real_s>) {
    var v = v0;
    if atomicLoad(&flags[F_BLOWUP]) != 0u {
        vel[i] = vec4<real_s>(v, 0.0);
        return;
    }
    let p = pos[i];
    let m = masses[type_of_s(p)];
    v = v + vec3<real_s>(force[i].xyz) * (P.half_dt / m);
    let step = v * P.dt;
    var x = p.xyz + step;
    if not_finite(x.x) || not_finite(x.y) || not_finite(x.z) || dot(step, step) > P.runaway_sq {
        blow_up(false);
    }
    // #if MIXED
    // The box in f64, as the state.
    for (var k = 0u; k < 3u; k++) {
        if P.periodic[k] != 0u {
            let l = P.box_len[k];
            if x[k] < P.box_lo[k] {
                x[k] += l;
            } else if x[k] >= P.box_hi[k] {
                x[k] -= l;
            }
        } else if x[k] < P.box_lo[k] - P.escape || x[k] > P.box_hi[k] + P.escape {
            blow_up(true);
        }
    }
    // #else
    for (var k = 0u; k < 3u; k++) {
        if P.periodic[k] != 0u {
            let l = P.len[k];
            if x[k] < P.lo[k] {
                x[k] += l;
            } else if x[k] >= P.hi[k] {
                x[k] -= l;
            }
        } else if x[k] < P.lo[k] - P.escape || x[k] > P.hi[k] + P.escape {
            blow_up(true);
        }
    }
    // #endif
    let moved = min_image(vec3<real_f>(x) - pos_build[i].xyz);
    // Read before written: a million stores to one word would queue behind each other.
    let due = rebuild_flag(S.step_lo);
    if dot(moved, moved) > P.half_skin_sq && atomicLoad(&flags[due]) == 0u {
        atomicStore(&flags[due], 1u);
    }
    if i == 0u {
        atomicStore(&flags[rebuild_flag(S.step_lo + 1u)], 0u);
    }
    pos[i] = vec4<real_s>(x, p.w);
    // #if MIXED
    posf[i] = vec4<f32>(vec3<f32>(x), bitcast<f32>(type_of_s(p)));
    // #endif
    vel[i] = vec4<real_s>(v, 0.0);
}

// The second half kick of the step with counter `step` on velocity v of atom i (mass m),
// with the Langevin update.
fn second_half(i: u32, v0: vec3<real_s>, m: real_s, step: vec2<u32>) -> vec3<real_s> {
    var v = v0 + vec3<real_s>(force[i].xyz) * (P.half_dt / m);
    if P.thermostat == 3u {
        let xi = normal4_s(vec2<u32>(P.seed_lo, P.seed_hi), STREAM_LANGEVIN, ids[i], step);
        let sd = P.lang_c2 * sqrt(P.target_t / m);
        v = P.lang_c1 * v + sd * xi.xyz;
    }
    return v;
}

@compute @workgroup_size(WG)
fn kick_drift(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= P.n {
        return;
    }
    var v = vel[i].xyz;
    if S.scale != 0u {
        v = v * lambda[0];
    }
    first_half(i, v);
}

// The previous step's second half kick and this step's first half kick and drift in one
// pass, for a previous step with neither telemetry nor a rescaling thermostat (the same
// arithmetic as kick_second then kick_drift).
@compute @workgroup_size(WG)
fn kick_fused(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= P.n {
        return;
    }
    var v = vel[i].xyz;
    if atomicLoad(&flags[F_BLOWUP]) == 0u {
        v = second_half(i, v, masses[type_of_s(pos[i])], vec2<u32>(S.prev_lo, S.prev_hi));
    }
    first_half(i, v);
}

// Second half kick (unless S.no_kick) with the Langevin update, then the workgroup's
// (m v^2, m v) into partials[2 g].
@compute @workgroup_size(WG)
fn kick_second(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    var sums = vec4<real_s>(0.0);
    if i < P.n {
        var v = vel[i].xyz;
        let m = masses[type_of_s(pos[i])];
        if S.no_kick == 0u && atomicLoad(&flags[F_BLOWUP]) == 0u {
            v = second_half(i, v, m, step_counter());
            vel[i] = vec4<real_s>(v, 0.0);
        }
        sums = vec4<real_s>(m * dot(v, v), m * v);
    }
    let s = workgroup_sum(lid.x, sums);
    if lid.x == 0u {
        partials[2u * wid.x] = s;
    }
}

// #if F64
// Sums in f64: plain ones in the same (hi, lo) form, lo always zero.
fn add_dd(a: vec2<f64>, b: vec2<f64>) -> vec2<f64> {
    return vec2<f64>(a.x + b.x + (a.y + b.y), 0.0);
}

var<workgroup> dd: array<array<f64, 8>, WG>;

// The sum over the workgroup of every invocation's eight values (their hi words), the same
// tree each run; valid in invocation 0. Call from uniform control flow.
fn dd_sum8(lid: u32, v: array<vec2<f64>, 8>) -> array<vec2<f64>, 8> {
    for (var q = 0u; q < 8u; q++) {
        dd[lid][q] = v[q].x;
    }
    workgroupBarrier();
    var s = WG / 2u;
    loop {
        if s == 0u {
            break;
        }
        if lid < s {
            for (var q = 0u; q < 8u; q++) {
                dd[lid][q] = dd[lid][q] + dd[lid + s][q];
            }
        }
        workgroupBarrier();
        s = s / 2u;
    }
    var r: array<vec2<f64>, 8>;
    for (var q = 0u; q < 8u; q++) {
        r[q] = vec2<f64>(dd[0][q], 0.0);
    }
    workgroupBarrier();
    return r;
}
// #else
// Compensated sums: (hi, lo) with hi + lo the sum to about twice f32's precision.
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    return vec2<f32>(s, err);
}

fn add_dd(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let s = two_sum(a.x, b.x);
    return two_sum(s.x, s.y + a.y + b.y);
}

var<workgroup> dd: array<array<vec2<f32>, 8>, WG>;

// The compensated sum over the workgroup of every invocation's eight (hi, lo) values, the
// same tree each run; valid in invocation 0. Call from uniform control flow.
fn dd_sum8(lid: u32, v: array<vec2<f32>, 8>) -> array<vec2<f32>, 8> {
    dd[lid] = v;
    workgroupBarrier();
    var s = WG / 2u;
    loop {
        if s == 0u {
            break;
        }
        if lid < s {
            for (var q = 0u; q < 8u; q++) {
                dd[lid][q] = add_dd(dd[lid][q], dd[lid + s][q]);
            }
        }
        workgroupBarrier();
        s = s / 2u;
    }
    let r = dd[0];
    workgroupBarrier();
    return r;
}
// #endif

@compute @workgroup_size(WG)
fn finish_step(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    var acc: array<vec2<real_s>, 8>;
    for (var q = 0u; q < 8u; q++) {
        acc[q] = vec2<real_s>(0.0);
    }
    for (var g = lid; g < P.n_groups; g += WG) {
        let k = partials[2u * g];
        acc[0] = add_dd(acc[0], vec2<real_s>(k.x, 0.0));
        acc[5] = add_dd(acc[5], vec2<real_s>(k.y, 0.0));
        acc[6] = add_dd(acc[6], vec2<real_s>(k.z, 0.0));
        acc[7] = add_dd(acc[7], vec2<real_s>(k.w, 0.0));
        if S.ev != 0u {
            let e = partials[2u * g + 1u];
            acc[1] = add_dd(acc[1], vec2<real_s>(e.x, 0.0));
            acc[2] = add_dd(acc[2], vec2<real_s>(e.y, 0.0));
            acc[3] = add_dd(acc[3], vec2<real_s>(e.z, 0.0));
            acc[4] = add_dd(acc[4], vec2<real_s>(e.w, 0.0));
        }
    }
    let tot = dd_sum8(lid, acc);
    if lid != 0u {
        return;
    }
    let ke2 = tot[0].x + tot[0].y;
    var l: real_s = 1.0;
    if S.thermostat_on != 0u && ke2 > 0.0 {
        if P.thermostat == 1u {
            let t = ke2 / P.dof;
            let q = 1.0 + P.dt_over_tau * (P.target_t / t - 1.0);
            l = clamp(sqrt(max(q, 0.0)), 0.8, 1.25);
        } else if P.thermostat == 2u {
            let ke = 0.5 * ke2;
            let goal = 0.5 * P.dof * P.target_t;
            let f = P.csvr_factor;
            let rr = S.csvr_rr;
            let new_ke = ke + (1.0 - f) * (goal * (S.csvr_chi + rr * rr) / P.dof - ke)
                + 2.0 * rr * sqrt(ke * goal / P.dof * (1.0 - f) * f);
            l = sqrt(max(new_ke, 0.0) / ke);
        }
    }
    lambda[0] = l;
    if S.ev != 0u || S.record != 0xffffffffu {
        if S.record != 0xffffffffu {
            let r = S.record * RECORD_WORDS;
            let l2 = l * l;
            records[r] = vec2<real_s>(tot[0].x * l2, tot[0].y * l2);
            for (var q = 1u; q < 5u; q++) {
                records[r + q] = tot[q];
            }
            for (var q = 5u; q < 8u; q++) {
                records[r + q] = vec2<real_s>(tot[q].x * l, tot[q].y * l);
            }
        }
    }
}

// The last step's thermostat factor applied at the end of a call, so the state read back
// (or kept) is the scaled one.
@compute @workgroup_size(WG)
fn scale_velocities(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < P.n && lambda[0] != 1.0 {
        vel[i] = vec4<real_s>(vel[i].xyz * lambda[0], 0.0);
    }
}
