// Counter-based random numbers (Philox4x32-10) for the wgpu backend's kernels: the generator,
// uniform4 and normal4, and the stream numbers. Mirrors src/rng.rs (and kernels/rng.cuh)
// exactly: same counter, key, rounds and output order, so a (seed, stream, index, counter)
// draws bit-identical raw numbers on every backend, and the same uniforms and normals to
// f32 precision. Plain WGSL (u32 and f32 only): no entry points or bindings; this file is
// concatenated before the kernels that use it.

// rng::Stream values used by GPU kernels.
const STREAM_LANGEVIN: u32 = 2u;
const STREAM_SURFACE_FRICTION: u32 = 10u;
const STREAM_TUNNEL_INFLOW: u32 = 11u;

const PHILOX_M0: u32 = 0xD2511F53u;
const PHILOX_M1: u32 = 0xCD9E8D57u;
const PHILOX_W0: u32 = 0x9E3779B9u;
const PHILOX_W1: u32 = 0xBB67AE85u;

// (high, low) 32 bits of the 64-bit product a * b, from 16-bit limbs (no 64-bit integers or
// mulhi in WGSL). Every partial product is below 2^32; u32 products wrap, so lo = a * b.
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xFFFFu;
    let ah = a >> 16u;
    let bl = b & 0xFFFFu;
    let bh = b >> 16u;
    let ll = al * bl;
    let lh = al * bh;
    let hl = ah * bl;
    let hh = ah * bh;
    // Carry out of the low word: the sum of the middle bits stays below 3 * 2^16.
    let mid = (ll >> 16u) + (lh & 0xFFFFu) + (hl & 0xFFFFu);
    let hi = hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
    return vec2<u32>(hi, a * b);
}

// Philox4x32 with 10 rounds: four 32-bit outputs from a 128-bit counter and a 64-bit key
// (rng::philox4x32).
fn philox4x32(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = counter;
    var k = key;
    for (var i = 0u; i < 10u; i++) {
        if i > 0u {
            k = k + vec2<u32>(PHILOX_W0, PHILOX_W1);
        }
        let p0 = mulhilo(PHILOX_M0, c.x);
        let p1 = mulhilo(PHILOX_M1, c.z);
        c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
    }
    return c;
}

// The raw numbers behind uniform4 and normal4: counter [index, stream, counter_lo,
// counter_hi], key [seed_lo, seed_hi] (seed and counter are u64 on the host, as (lo, hi)).
fn rng_raw4(seed: vec2<u32>, stream: u32, index: u32, counter: vec2<u32>) -> vec4<u32> {
    return philox4x32(vec4<u32>(index, stream, counter.x, counter.y), seed);
}

// (x + 0.5) / 2^32 with a single rounding to f32: the two terms are exact (24 and 9
// significant bits), so only their sum rounds. (f32(x) + 0.5 would lose x's low bits.)
fn rng_half_scaled(x: u32) -> f32 {
    return f32(x >> 8u) * 0x1p-24f + (f32(x & 255u) + 0.5) * 0x1p-32f;
}

// The same for a signed s: (s + 0.5) / 2^32 with a single rounding.
fn rng_half_scaled_signed(s: i32) -> f32 {
    return f32(s >> 8u) * 0x1p-24f + (f32(s & 255) + 0.5) * 0x1p-32f;
}

// The host's uniform (x + 0.5) / 2^32 in (0, 1), correctly rounded, except that the values
// of x >= 2^32 - 128, which round to 1.0, give the largest f32 below 1 (within an ulp) so
// that u stays strictly inside (0, 1) as on the host.
fn rng_u01(x: u32) -> f32 {
    return min(rng_half_scaled(x), 0x1.fffffep-1f);
}

// -ln(u) for u = rng_u01(x), accurate near u = 1 as well: there v = 1 - u = (~x + 0.5) / 2^32
// exactly, and -ln(1 - v) = v + v^2/2 + ... + v^6/6 (truncation below 2e-10 relative for
// v < 1/32), where ln of the rounded u would be off by up to half its rounding step (and
// the builtin log is only bounded to 2^-21 absolute near 1).
fn rng_neg_log_u01(x: u32) -> f32 {
    let v = rng_half_scaled(~x);
    if v < 0.03125 {
        return v * (1.0 + v * (1.0 / 2.0 + v * (1.0 / 3.0 + v * (1.0 / 4.0 + v * (1.0 / 5.0 + v * (1.0 / 6.0))))));
    }
    return -log(rng_u01(x));
}

// (cos, sin) of 2 pi (x + 0.5) / 2^32 from polynomials, not the builtins (whose error
// Vulkan and Metal's fast math bound only by 2^-11 and 2^-13): x's top bits pick the
// nearest quarter turn exactly, the remaining f in [-1/8, 1/8] turn goes into Taylor
// series (truncation below 2e-9), and the quarter turns rotate the result.
fn rng_cos_sin_turns(x: u32) -> vec2<f32> {
    let q = (x + 0x20000000u) >> 30u;
    let f = rng_half_scaled_signed(bitcast<i32>((x + 0x20000000u) & 0x3FFFFFFFu) - 0x20000000);
    let g = f * f;
    let s = f * (6.283185307179586 + g * (-41.341702240399755 + g * (81.60524927607504
        + g * (-76.70585975306136 + g * 42.058693944897634))));
    let c = 1.0 + g * (-19.739208802178716 + g * (64.93939402266828 + g * (-85.45681720669371
        + g * (60.24464137187664 + g * -26.426256783374388))));
    switch q {
        case 0u: { return vec2<f32>(c, s); }
        case 1u: { return vec2<f32>(-s, c); }
        case 2u: { return vec2<f32>(-c, -s); }
        default: { return vec2<f32>(s, -c); }
    }
}

// Box-Muller on the uniforms of x1 and x2, as the host's box_muller: r = sqrt(-2 ln u1),
// t = 2 pi u2, (r cos t, r sin t).
fn rng_box_muller(x1: u32, x2: u32) -> vec2<f32> {
    let r = sqrt(2.0 * rng_neg_log_u01(x1));
    return r * rng_cos_sin_turns(x2);
}

// Four uniform numbers in (0, 1) for (seed, stream, index, counter) (rng::uniform4).
fn uniform4(seed: vec2<u32>, stream: u32, index: u32, counter: vec2<u32>) -> vec4<f32> {
    let r = rng_raw4(seed, stream, index, counter);
    return vec4<f32>(rng_u01(r.x), rng_u01(r.y), rng_u01(r.z), rng_u01(r.w));
}

// Four standard normal numbers: Box-Muller on the pairs (u0, u1) and (u2, u3) of uniform4
// (rng::normal4).
fn normal4(seed: vec2<u32>, stream: u32, index: u32, counter: vec2<u32>) -> vec4<f32> {
    let r = rng_raw4(seed, stream, index, counter);
    return vec4<f32>(rng_box_muller(r.x, r.y), rng_box_muller(r.z, r.w));
}
