// The wind tunnel's inflow zone and the per-step totals of the flow parts on the wgpu backend
// (src/sim/gpu/engine/flow.rs; the CPU's src/sim/cpu/state/tunnel.rs, kernels/tunnel.cu):
// `tunnel_zone` gives every atom whose wrapped x lies in the zone a fresh Maxwell-Boltzmann
// velocity around (U, 0, 0), from the same Philox numbers as the CPU (Stream::TunnelInflow,
// the atom's id, the step), after the step's thermostat factor, which it applies to every
// atom itself (the host then leaves the next first kick unscaled); per workgroup it sums what
// the zone gave (momentum, kinetic energy). `flow_finish`, one workgroup after every step,
// adds the step's body forces and zone sums, in a fixed order and compensated, to running
// sums, and on a telemetry step writes them into the flow record (and the zone's share into
// the step's kinetic energy and momentum). Bound with its own group 1 (flow_rec,
// tunnel_part, field_sums) besides group 0.

// (hi, lo) running sums in slot 0, then one record a slot, F.flow_words words each: 3 per
// body, the steps summed, the zone's momentum (3) and kinetic energy.
@group(1) @binding(0) var<storage, read_write> flow_rec: array<vec2<real_s>>;
// Per workgroup: (momentum x, y, z, kinetic energy) the zone gave its atoms this step.
@group(1) @binding(1) var<storage, read_write> tunnel_part: array<vec4<real_s>>;

@compute @workgroup_size(WG)
fn tunnel_zone(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    var s = vec4<real_s>(0.0);
    if i < P.n && atomicLoad(&flags[F_BLOWUP]) == 0u {
        var v = vel[i].xyz;
        if S.thermostat_on != 0u {
            v = v * lambda[0];
        }
        let x = pos[i];
        if x.x >= F.tunnel_lo && x.x < F.tunnel_hi {
            let m = masses[type_of_s(x)];
            let g = normal4_s(vec2<u32>(P.seed_lo, P.seed_hi), STREAM_TUNNEL_INFLOW, ids[i], vec2<u32>(S.step_lo, S.step_hi));
            let sd = sqrt(P.target_t / m);
            let nv = vec3<real_s>(F.tunnel_speed + sd * g.x, sd * g.y, sd * g.z);
            s = vec4<real_s>(m * (nv - v), 0.5 * m * (dot(nv, nv) - dot(v, v)));
            v = nv;
        }
        vel[i] = vec4<real_s>(v, 0.0);
    }
    let t = workgroup_sum(lid.x, s);
    if lid.x == 0u {
        tunnel_part[wid.x] = t;
    }
}

// The compensated sum of every invocation's four (hi, lo) values: finish_step's tree with
// the other four columns zero (each column is summed on its own, so these four come out as
// they would alone); valid in invocation 0. Uniform control flow.
fn flow_sum4(lid: u32, v: array<vec2<real_s>, 4>) -> array<vec2<real_s>, 4> {
    let z = vec2<real_s>(0.0);
    let s = dd_sum8(lid, array<vec2<real_s>, 8>(v[0], v[1], v[2], v[3], z, z, z, z));
    return array<vec2<real_s>, 4>(s[0], s[1], s[2], s[3]);
}

// Every workgroup's partial `which` (0: body b's force, 1: the zone's sums) in group order.
fn flow_total(lid: u32, which: u32, b: u32) -> array<vec2<real_s>, 4> {
    var acc: array<vec2<real_s>, 4>;
    for (var g = lid; g < P.n_groups; g += WG) {
        var p: vec4<real_s>;
        if which == 0u {
            p = body_part[g * F.n_bodies + b];
        } else {
            p = tunnel_part[g];
        }
        for (var q = 0u; q < 4u; q++) {
            acc[q] = add_dd(acc[q], vec2<real_s>(p[q], 0.0));
        }
    }
    return flow_sum4(lid, acc);
}

@compute @workgroup_size(WG)
fn flow_finish(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let nb = F.n_bodies;
    let record = S.record != 0xffffffffu;
    let out = (S.record + 1u) * F.flow_words;
    for (var b = 0u; b < nb; b++) {
        let tot = flow_total(lid, 0u, b);
        if lid == 0u {
            for (var j = 0u; j < 3u; j++) {
                let s = add_dd(flow_rec[3u * b + j], tot[j]);
                flow_rec[3u * b + j] = select(s, vec2<real_s>(0.0), record);
                if record {
                    flow_rec[out + 3u * b + j] = s;
                }
            }
        }
    }
    let zone = 3u * nb + 1u;
    if F.tunnel != 0u {
        let tot = flow_total(lid, 1u, 0u);
        if lid == 0u {
            for (var q = 0u; q < 4u; q++) {
                let s = add_dd(flow_rec[zone + q], tot[q]);
                flow_rec[zone + q] = select(s, vec2<real_s>(0.0), record);
                if record {
                    flow_rec[out + zone + q] = s;
                }
            }
            if record {
                // The record's kinetic sums are the step's before the zone: add its share.
                let r = S.record * RECORD_WORDS;
                records[r] = add_dd(records[r], vec2<real_s>(2.0 * tot[3].x, 2.0 * tot[3].y));
                for (var j = 0u; j < 3u; j++) {
                    records[r + 5u + j] = add_dd(records[r + 5u + j], tot[j]);
                }
            }
        }
    }
    if lid == 0u {
        let steps = flow_rec[3u * nb] + vec2<real_s>(1.0, 0.0);
        flow_rec[3u * nb] = select(steps, vec2<real_s>(0.0), record);
        if record {
            flow_rec[out + 3u * nb] = steps;
        }
    }
}
