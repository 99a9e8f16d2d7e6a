// Philox4x32-10 counter-based random numbers, mirroring src/rng.rs (same streams, counters
// and outputs), so the wgpu, CPU and CUDA backends draw the same noise.

const STREAM_LANGEVIN: u32 = 2u;
const STREAM_SURFACE_FRICTION: u32 = 10u;
const STREAM_TUNNEL_INFLOW: u32 = 11u;

// (high, low) 32 bits of the 64-bit product a * b, from 16-bit limbs.
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let hi = p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    return vec2<u32>(hi, a * b);
}

fn philox4x32(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = counter;
    var k = key;
    for (var round = 0u; round < 10u; round++) {
        if round > 0u {
            k.x += 0x9E3779B9u;
            k.y += 0xBB67AE85u;
        }
        let p0 = mulhilo(0xD2511F53u, c.x);
        let p1 = mulhilo(0xCD9E8D57u, c.z);
        c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
    }
    return c;
}

// (x + 0.5) / 2^32 in f32, rounded from the exact value rather than from f32(x).
fn u01(x: u32) -> f32 {
    return f32(x >> 8u) * 5.9604645e-8 + (f32(x & 0xffu) + 0.5) * 2.3283064e-10;
}

fn uniform4(seed: vec2<u32>, stream: u32, index: u32, counter: vec2<u32>) -> vec4<f32> {
    let r = philox4x32(vec4<u32>(index, stream, counter.x, counter.y), seed);
    return vec4<f32>(u01(r.x), u01(r.y), u01(r.z), u01(r.w));
}

fn normal4(seed: vec2<u32>, stream: u32, index: u32, counter: vec2<u32>) -> vec4<f32> {
    let u = uniform4(seed, stream, index, counter);
    let r0 = sqrt(-2.0 * log(u.x));
    let t0 = 6.2831855 * u.y;
    let r1 = sqrt(-2.0 * log(u.z));
    let t1 = 6.2831855 * u.w;
    return vec4<f32>(r0 * cos(t0), r0 * sin(t0), r1 * cos(t1), r1 * sin(t1));
}
