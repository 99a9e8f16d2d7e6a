// The thermostat relative to the flow and the thermal readout on the wgpu backend, mirroring
// src/flow/profile.rs (FlowProfile) and kernels/flow_profile.cu: per bin of the thermostat's
// x-y grid (F.pg_*), the mass M_b and momentum P_b of its atoms as 64-bit fixed-point sums of
// two u32 atomics (scale 2^16, 2^36 where the state is f64; exact in any order:
// `profile_sum`), the means u_b = P_b / M_b
// with sum |P_b|^2 / M_b (compensated) and the occupied bins (`profile_reduce`, one
// workgroup, which empties the sums again), the factor from the motion relative to the flow
// (`thermo_relative`, one workgroup: Berendsen, or CSVR with its normal and chi-squared
// numbers drawn here from the host's Philox sequence, Stream::Csvr at step * 64, as
// rng::Sequence draws them) and the rescale v <- u_b + lambda (v - u_b) (`scale_relative`).
// The host then leaves finish_step's own factor at 1 (StepInfo::thermostat_on = 0). Where the
// state is f64, every number here is f64 too (the sequence's from rng64.wgsl), the means are
// kept in `prof` as (hi, lo) f32 pairs (48 bits: enough, as each is only ever scaled by
// 1 - lambda), and the factor and sum |P_b|^2 / M_b in lambda[1] and lambda[2].

const STREAM_CSVR: u32 = 3u;

// Per bin 8 words (low, high of m, m vx, m vy, m vz), then per bin the mean velocity (3 f32
// bits and a pad; f64: 3 (hi, lo) pairs and two pads), then [sum |P_b|^2 / M_b hi, lo,
// occupied bins, lambda] (f64: the occupied bins alone, at the third word).
@group(1) @binding(3) var<storage, read_write> prof: array<atomic<u32>>;

// #if F64
const PROF_MEAN_WORDS: u32 = 8u;
// #else
const PROF_MEAN_WORDS: u32 = 4u;
// #endif

fn prof_bin(x: vec3<real_s>) -> u32 {
    return grid_bin(x, F.pg_origin, F.pg_inv, F.pg_n, F.pg_periodic, F.pg_walled);
}

// #if F64
// The sums' scale where the state is f64: 2^36, so a term keeps 2^-37 (the mean velocities
// steer every atom's velocity each step), with room for 2^26 per bin and step; any 64-bit
// term goes in as a low word with its carry and a high word.
const PROF_SCALE: f64 = 68719476736.0;

fn prof_add(at: u32, x: f64) {
    let q = clamp(round(x * PROF_SCALE), -4611686018427387904.0, 4611686018427387904.0);
    let hi = floor(q * (1.0 / 4294967296.0));
    let lo = u32(q - hi * 4294967296.0);
    let up = bitcast<u32>(i32(hi));
    let old = atomicAdd(&prof[at], lo);
    let carry = select(0u, 1u, old + lo < old);
    if up + carry != 0u {
        atomicAdd(&prof[at + 1u], up + carry);
    }
}
// #else
const PROF_SCALE: f32 = FIELD_SCALE;

fn prof_add(at: u32, x: f32) {
    let v = i32(clamp(round(x * FIELD_SCALE), -2147483647.0, 2147483647.0));
    let lo = bitcast<u32>(v);
    let hi = select(0u, 0xffffffffu, v < 0);
    let old = atomicAdd(&prof[at], lo);
    let carry = select(0u, 1u, old + lo < old);
    if hi + carry != 0u {
        atomicAdd(&prof[at + 1u], hi + carry);
    }
}
// #endif

// The 64-bit sum at words (at, at + 1) as a number (its scale removed).
fn prof_value(at: u32) -> real_s {
    let lo = atomicLoad(&prof[at]);
    let hi = bitcast<i32>(atomicLoad(&prof[at + 1u]));
    return (real_s(hi) * 4294967296.0 + real_s(lo)) / PROF_SCALE;
}

fn prof_stats() -> u32 {
    return (8u + PROF_MEAN_WORDS) * F.pg_bins;
}

@compute @workgroup_size(WG)
fn profile_sum(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= P.n {
        return;
    }
    let x = pos[i];
    let bin = prof_bin(x.xyz);
    if bin == 0xffffffffu {
        return;
    }
    let v = vel[i].xyz;
    let m = masses[type_of_s(x)];
    let at = 8u * bin;
    prof_add(at, m);
    prof_add(at + 2u, m * v.x);
    prof_add(at + 4u, m * v.y);
    prof_add(at + 6u, m * v.z);
}

@compute @workgroup_size(WG)
fn profile_reduce(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    var flow = vec2<real_s>(0.0);
    var occupied: real_s = 0.0;
    for (var b = lid; b < F.pg_bins; b += WG) {
        let m = prof_value(8u * b);
        let p = vec3<real_s>(prof_value(8u * b + 2u), prof_value(8u * b + 4u), prof_value(8u * b + 6u));
        var u = vec3<real_s>(0.0);
        if m > 0.0 {
            u = p / m;
            flow = add_dd(flow, vec2<real_s>(dot(p, p) / m, 0.0));
            occupied += 1.0;
        }
        let mean = 8u * F.pg_bins + PROF_MEAN_WORDS * b;
        for (var k = 0u; k < 3u; k++) {
            // #if F64
            let hi = f32(u[k]);
            atomicStore(&prof[mean + 2u * k], bitcast<u32>(hi));
            atomicStore(&prof[mean + 2u * k + 1u], bitcast<u32>(f32(u[k] - f64(hi))));
            // #else
            atomicStore(&prof[mean + k], bitcast<u32>(u[k]));
            // #endif
        }
        for (var q = 0u; q < 8u; q++) {
            atomicStore(&prof[8u * b + q], 0u);
        }
    }
    // A fixed tree over the invocations, compensated (finish_step's; the count is exact).
    let z = vec2<real_s>(0.0);
    let tot = dd_sum8(lid, array<vec2<real_s>, 8>(flow, vec2<real_s>(occupied, 0.0), z, z, z, z, z, z));
    if lid == 0u {
        let t = vec3<real_s>(tot[0], tot[1].x);
        let at = prof_stats();
        // #if F64
        lambda[2] = t.x + t.y;
        // #else
        atomicStore(&prof[at], bitcast<u32>(t.x));
        atomicStore(&prof[at + 1u], bitcast<u32>(t.y));
        // #endif
        atomicStore(&prof[at + 2u], u32(t.z));
    }
}

// rng::Sequence over (seed, Stream::Csvr, 0, counter) in one invocation.
struct Seq {
    counter: vec2<u32>,
    buf: vec4<real_s>,
    used: u32,
    normal: bool,
}

// The sequence's next number, a normal one or a uniform one (Sequence::normal / uniform:
// a block of four of the other kind, or a spent block, is replaced by the next counter's).
// One call site per kernel keeps a single Philox in the compiled code.
fn seq_next(s: ptr<function, Seq>, normal: bool) -> real_s {
    if (*s).used == 4u || (*s).normal != normal {
        let r = rng_raw4(vec2<u32>(P.seed_lo, P.seed_hi), STREAM_CSVR, 0u, (*s).counter);
        // #if F64
        if normal {
            (*s).buf = vec4<f64>(rng_box_muller64(r.x, r.y), rng_box_muller64(r.z, r.w));
        } else {
            (*s).buf = vec4<f64>(rng_u01_64(r.x), rng_u01_64(r.y), rng_u01_64(r.z), rng_u01_64(r.w));
        }
        // #else
        if normal {
            (*s).buf = vec4<f32>(rng_box_muller(r.x, r.y), rng_box_muller(r.z, r.w));
        } else {
            (*s).buf = vec4<f32>(rng_u01(r.x), rng_u01(r.y), rng_u01(r.z), rng_u01(r.w));
        }
        // #endif
        let lo = (*s).counter.x + 1u;
        (*s).counter = vec2<u32>(lo, (*s).counter.y + select(0u, 1u, lo == 0u));
        (*s).used = 0u;
        (*s).normal = normal;
    }
    let x = (*s).buf[(*s).used];
    (*s).used += 1u;
    return x;
}

// CSVR's numbers for step `step` over `dof` degrees of freedom: (rr, chi-squared with dof - 1)
// as rng_csvr draws them on the host (Sequence at step * 64: normal, then Gamma((dof - 1) / 2)
// by Marsaglia and Tsang, times 2), as a small state machine drawing one number a turn.
fn csvr_numbers(step: vec2<u32>, dof: real_s) -> vec2<real_s> {
    var sq = Seq(vec2<u32>(step.x << 6u, (step.y << 6u) | (step.x >> 26u)), vec4<real_s>(0.0), 4u, false);
    var shape = 0.5 * (dof - 1.0);
    var boost: real_s = 1.0;
    var rr: real_s = 0.0;
    var x: real_s = 0.0;
    var v: real_s = 0.0;
    var d: real_s = 0.0;
    var c: real_s = 0.0;
    // 0: rr; 1: the boost of a shape below 1; 2: x; 3: u.
    var state = 0u;
    for (var turn = 0u; turn < 4000u; turn++) {
        let y = seq_next(&sq, state == 0u || state == 2u);
        if state == 0u {
            rr = y;
            if shape <= 0.0 {
                return vec2<real_s>(rr, 0.0);
            }
            state = select(2u, 1u, shape < 1.0);
            if state == 2u {
                d = shape - 1.0 / 3.0;
                c = 1.0 / sqrt(9.0 * d);
            }
        } else if state == 1u {
            // #if F64
            boost = rng_exp64(rng_ln64(y) / shape);
            // #else
            boost = pow(y, 1.0 / shape);
            // #endif
            shape += 1.0;
            d = shape - 1.0 / 3.0;
            c = 1.0 / sqrt(9.0 * d);
            state = 2u;
        } else if state == 2u {
            x = y;
            v = 1.0 + c * x;
            if v > 0.0 {
                v = v * v * v;
                state = 3u;
            }
        } else {
            // #if F64
            if y < 1.0 - 0.0331 * x * x * x * x || rng_ln64(y) < 0.5 * x * x + d * (1.0 - v + rng_ln64(v)) {
                return vec2<f64>(rr, 2.0 * d * v * boost);
            }
            // #else
            if y < 1.0 - 0.0331 * x * x * x * x || log(y) < 0.5 * x * x + d * (1.0 - v + log(v)) {
                return vec2<f32>(rr, 2.0 * d * v * boost);
            }
            // #endif
            state = 2u;
        }
    }
    return vec2<real_s>(rr, 2.0 * max(d, 0.0) * boost);
}

// One invocation: the factor from the motion relative to the flow (the reduce's sums and the
// kinetic partials of kick_second), into prof's lambda word; on a telemetry step the record's
// kinetic energy becomes the rescaled state's (2 KE + (lambda^2 - 1) K_rel; the momentum of
// every bin, so the total, is kept).
@compute @workgroup_size(WG)
fn thermo_relative(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    var acc = vec2<real_s>(0.0);
    for (var g = lid; g < P.n_groups; g += WG) {
        acc = add_dd(acc, vec2<real_s>(partials[2u * g].x, 0.0));
    }
    let z = vec2<real_s>(0.0);
    let tot = dd_sum8(lid, array<vec2<real_s>, 8>(acc, z, z, z, z, z, z, z));
    if lid != 0u {
        return;
    }
    let at = prof_stats();
    let ke2 = tot[0];
    // #if F64
    let flow = vec2<f64>(lambda[2], 0.0);
    // #else
    let flow = vec2<f32>(bitcast<f32>(atomicLoad(&prof[at])), bitcast<f32>(atomicLoad(&prof[at + 1u])));
    // #endif
    let occupied = real_s(atomicLoad(&prof[at + 2u]));
    let krel = add_dd(ke2, -flow);
    let k = krel.x + krel.y;
    let dof = max(3.0 * real_s(P.n) - 3.0 * occupied, 1.0);
    var l: real_s = 1.0;
    if k > 0.0 {
        if F.relative == 1u {
            let t = k / dof;
            let q = 1.0 + P.dt_over_tau * (P.target_t / t - 1.0);
            l = clamp(sqrt(max(q, 0.0)), 0.8, 1.25);
        } else {
            let ke = 0.5 * k;
            let goal = 0.5 * dof * P.target_t;
            let f = P.csvr_factor;
            let nums = csvr_numbers(vec2<u32>(S.step_lo, S.step_hi), dof);
            let rr = nums.x;
            let chi = nums.y;
            let new_ke = ke + (1.0 - f) * (goal * (chi + rr * rr) / dof - ke)
                + 2.0 * rr * sqrt(ke * goal / dof * (1.0 - f) * f);
            l = sqrt(max(new_ke, 0.0) / ke);
        }
    }
    // #if F64
    lambda[1] = l;
    // #else
    atomicStore(&prof[at + 3u], bitcast<u32>(l));
    // #endif
    if S.record != 0xffffffffu {
        let r = S.record * RECORD_WORDS;
        records[r] = add_dd(records[r], vec2<real_s>((l * l - 1.0) * krel.x, (l * l - 1.0) * krel.y));
    }
}

@compute @workgroup_size(WG)
fn scale_relative(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    // #if F64
    let l = lambda[1];
    // #else
    let l = bitcast<f32>(atomicLoad(&prof[prof_stats() + 3u]));
    // #endif
    if i >= P.n || l == 1.0 || atomicLoad(&flags[F_BLOWUP]) != 0u {
        return;
    }
    let bin = prof_bin(pos[i].xyz);
    if bin == 0xffffffffu {
        return;
    }
    let mean = 8u * F.pg_bins + PROF_MEAN_WORDS * bin;
    // #if F64
    var u = vec3<f64>(0.0);
    for (var k = 0u; k < 3u; k++) {
        let hi = bitcast<f32>(atomicLoad(&prof[mean + 2u * k]));
        u[k] = f64(hi) + f64(bitcast<f32>(atomicLoad(&prof[mean + 2u * k + 1u])));
    }
    // #else
    let u = vec3<f32>(
        bitcast<f32>(atomicLoad(&prof[mean])),
        bitcast<f32>(atomicLoad(&prof[mean + 1u])),
        bitcast<f32>(atomicLoad(&prof[mean + 2u])),
    );
    // #endif
    let v = vel[i].xyz;
    vel[i] = vec4<real_s>(u + l * (v - u), 0.0);
}

// One invocation after a telemetry step's profile_reduce on its final state: the thermal
// readout's (sum |P_b|^2 / M_b, occupied bins) into the step's flow record.
@compute @workgroup_size(1)
fn thermal_record() {
    if S.record == 0xffffffffu {
        return;
    }
    let at = prof_stats();
    let out = (S.record + 1u) * F.flow_words + F.flow_words - 2u;
    // #if F64
    flow_rec[out] = vec2<f64>(lambda[2], 0.0);
    // #else
    flow_rec[out] = vec2<f32>(bitcast<f32>(atomicLoad(&prof[at])), bitcast<f32>(atomicLoad(&prof[at + 1u])));
    // #endif
    flow_rec[out + 1u] = vec2<real_s>(real_s(atomicLoad(&prof[at + 2u])), 0.0);
}
