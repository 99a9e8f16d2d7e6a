// Flow-field sampling on the wgpu backend (src/sim/gpu/engine/fields.rs; the CPU's
// flow::Accumulator, kernels/fields.cu): each atom's bin as flow::Grid::bin_of finds it, and
// per bin the atom-samples (u32) and (m, m vx, m vy, m vz, m |v|^2) as 64-bit fixed-point sums
// of two u32 atomics each (low word, then the high word with the low word's carry): each
// atom's term is rounded to a multiple of 2^-16 (FIELD_SCALE), so a window's sums are exact
// integers, the same in any order of the atomics (runs repeat bit for bit), with room for
// 2^47 per bin. A term must fit an i32 after scaling (|m v^2| < 32768, far beyond a blow-up's
// 0.5 sigma a step); one that does not sets the overflow word, which take_fields reports.
// The velocities are the step's final ones (the thermostat factor applied, as the CPU has
// them when it samples). While the state has dye tags, `fields_dye` (dispatched right after
// `fields_sample`, in a group 1 of its own: the sums and the tag words) counts the tagged
// atom-samples of each bin into the bin's last word (flow::Accumulator's dye channel).

// Per bin FIELD_WORDS words: count, then (low, high) of mass, px, py, pz, m v^2, then the
// tagged count; the overflow flag after the last bin.
@group(1) @binding(2) var<storage, read_write> field_sums: array<atomic<u32>>;
// The dye tags by canonical index, two u16 to a word as dye.wgsl keeps them (`fields_dye`'s
// group 1 only).
@group(1) @binding(4) var<storage, read> field_dye: array<u32>;

const FIELD_WORDS: u32 = 12u;
// The word of a bin's tagged atom-samples.
const FIELD_TAGGED: u32 = 11u;
const FIELD_SCALE: real_s = 65536.0;

// The bin of position x on a grid (origin, 1 / bin, bins, periodic and walled axes), or
// 0xffffffff outside it (flow::Grid::bin_of).
fn grid_bin(
    x: vec3<real_s>,
    origin: vec4<real_s>,
    inv: vec4<real_s>,
    nb: vec4<u32>,
    periodic: vec4<u32>,
    walled: vec4<u32>,
) -> u32 {
    var c = vec3<u32>(0u);
    for (var k = 0u; k < 3u; k++) {
        let f = (x[k] - origin[k]) * inv[k];
        let n = real_s(nb[k]);
        if f >= 0.0 && f < n {
            c[k] = min(u32(f), nb[k] - 1u);
            continue;
        }
        let slack = select(real_s(1e-9), real_s(1.0), walled[k] != 0u);
        if f >= n && f <= n + slack {
            c[k] = nb[k] - 1u;
        } else if f < 0.0 && f >= -slack {
            c[k] = 0u;
        } else if periodic[k] != 0u && !not_finite(f) {
            let fl = floor(f);
            let r = fl - n * floor(fl / n);
            c[k] = min(u32(max(r, 0.0)), nb[k] - 1u);
        } else {
            return 0xffffffffu;
        }
    }
    return c.x + nb.x * (c.y + nb.y * c.z);
}

fn field_bin(x: vec3<real_s>) -> u32 {
    return grid_bin(x, F.fg_origin, F.fg_inv, F.fg_n, F.fg_periodic, F.fg_walled);
}

// Adds x (scaled) to the 64-bit sum at words (at, at + 1).
fn field_add(at: u32, x: real_s) {
    let q = round(x * FIELD_SCALE);
    if abs(q) >= 2147483648.0 {
        atomicStore(&field_sums[F.fg_bins * FIELD_WORDS], 1u);
        return;
    }
    let v = i32(q);
    let lo = bitcast<u32>(v);
    let hi = select(0u, 0xffffffffu, v < 0);
    let old = atomicAdd(&field_sums[at], lo);
    let carry = select(0u, 1u, old + lo < old);
    if hi + carry != 0u {
        atomicAdd(&field_sums[at + 1u], hi + carry);
    }
}

@compute @workgroup_size(WG)
fn fields_sample(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= P.n {
        return;
    }
    let x = pos[i];
    let bin = field_bin(x.xyz);
    if bin == 0xffffffffu {
        return;
    }
    var v = vel[i].xyz;
    // Without a tunnel (which applies it) the thermostat's factor waits for the next kick.
    if F.tunnel == 0u && S.thermostat_on != 0u {
        v = v * lambda[0];
    }
    let m = masses[type_of_s(x)];
    let at = bin * FIELD_WORDS;
    atomicAdd(&field_sums[at], 1u);
    field_add(at + 1u, m);
    field_add(at + 3u, m * v.x);
    field_add(at + 5u, m * v.y);
    field_add(at + 7u, m * v.z);
    field_add(at + 9u, m * dot(v, v));
}

// The dye channel of the sample `fields_sample` just took: each tagged atom counted in its bin.
@compute @workgroup_size(WG)
fn fields_dye(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= P.n {
        return;
    }
    let c = ids[i];
    if ((field_dye[c >> 1u] >> (16u * (c & 1u))) & 0xffffu) == 0u {
        return;
    }
    let bin = field_bin(pos[i].xyz);
    if bin != 0xffffffffu {
        atomicAdd(&field_sums[bin * FIELD_WORDS + FIELD_TAGGED], 1u);
    }
}
