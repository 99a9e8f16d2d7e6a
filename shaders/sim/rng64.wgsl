// Random numbers in f64 for the wgpu backend's mixed and double precision, concatenated after
// rng.wgsl (whose Philox raw numbers they convert) where the state is f64: the host's
// uniforms and normals (src/rng.rs `uniform4`, `normal4`, `Sequence`) to within a few f64
// ulps. ln, exp, cos and sin come from arithmetic here, since Vulkan's extended instructions
// have no 64-bit log, exp or trigonometry (sqrt and ldexp they have).

// ln 2 in two parts (fdlibm's): k * LN2_HI is exact for |k| < 2^11.
const RNG_LN2_HI: f64 = 6.93147180369123816490e-01;
const RNG_LN2_LO: f64 = 1.90821492927058770002e-10;

// (x + 0.5) / 2^32 in (0, 1), exactly as the host (the sum has 33 significant bits).
fn rng_u01_64(x: u32) -> f64 {
    return (f64(x) + 0.5) * (1.0 / 4294967296.0);
}

// ln x for a positive normal x: x = m 2^e with m in [sqrt(1/2), sqrt(2)) (found by exact
// scalings by powers of two: frexp's f64 exponent would be an i64, a capability of its own),
// and ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, its series to s^23
// (truncation below 1e-19).
fn rng_ln64(x: f64) -> f64 {
    var m = x;
    var e: f64 = 0.0;
    // Steps of 2^64 into [2^-64, 2^64), then halving steps into [1, 2).
    for (var i = 0u; i < 17u && m >= 18446744073709551616.0; i++) {
        m *= 1.0 / 18446744073709551616.0;
        e += 64.0;
    }
    for (var i = 0u; i < 17u && m < 1.0 / 18446744073709551616.0; i++) {
        m *= 18446744073709551616.0;
        e -= 64.0;
    }
    var sh: f64 = 32.0;
    var p: f64 = 4294967296.0;
    for (var k = 0u; k < 6u; k++) {
        // p = 2^sh: m >= p takes sh from the exponent, m < 2 / p adds it.
        if m >= p {
            m *= 1.0 / p;
            e += sh;
        } else if m < 2.0 / p {
            m *= p;
            e -= sh;
        }
        sh *= 0.5;
        p = sqrt(p);
    }
    if m > 1.4142135623730951 {
        m *= 0.5;
        e += 1.0;
    }
    let s = (m - 1.0) / (m + 1.0);
    let z = s * s;
    let q = 1.0 + z * (1.0 / 3.0 + z * (1.0 / 5.0 + z * (1.0 / 7.0 + z * (1.0 / 9.0 + z * (1.0 / 11.0
        + z * (1.0 / 13.0 + z * (1.0 / 15.0 + z * (1.0 / 17.0 + z * (1.0 / 19.0 + z * (1.0 / 21.0
        + z * (1.0 / 23.0)))))))))));
    return e * RNG_LN2_HI + (e * RNG_LN2_LO + 2.0 * s * q);
}

// e^x: x = k ln 2 + r with |r| <= ln 2 / 2, e^r from its series to r^17 (truncation below
// 1e-24), scaled by 2^k; 0 below e^-745 (the smallest subnormal).
fn rng_exp64(x: f64) -> f64 {
    if x < -745.0 {
        return 0.0;
    }
    let k = round(x * (1.0 / 0.6931471805599453));
    let r = (x - k * RNG_LN2_HI) - k * RNG_LN2_LO;
    var term: f64 = 1.0;
    var sum: f64 = 1.0;
    for (var n = 1u; n < 18u; n++) {
        term = term * r / f64(n);
        sum += term;
    }
    return ldexp(sum, i32(k));
}

// (cos, sin) of 2 pi (x + 0.5) / 2^32: x's top bits pick the nearest quarter turn exactly (as
// rng_cos_sin_turns), the rest f in [-1/8, 1/8] turn, exact in f64, goes into the series of
// sin and cos of a = 2 pi f, |a| <= pi / 4, to a^19 and a^18 (truncation below 1e-19), and
// the quarter turns rotate the result.
fn rng_cos_sin_turns64(x: u32) -> vec2<f64> {
    let q = (x + 0x20000000u) >> 30u;
    let f = (f64(bitcast<i32>((x + 0x20000000u) & 0x3FFFFFFFu) - 0x20000000) + 0.5) * (1.0 / 4294967296.0);
    let a = f * 6.283185307179586;
    let g = a * a;
    let s = a * (1.0 + g * (-1.0 / 6.0 + g * (1.0 / 120.0 + g * (-1.0 / 5040.0 + g * (1.0 / 362880.0
        + g * (-1.0 / 39916800.0 + g * (1.0 / 6227020800.0 + g * (-1.0 / 1307674368000.0
        + g * (1.0 / 355687428096000.0 + g * (-1.0 / 121645100408832000.0))))))))));
    let c = 1.0 + g * (-1.0 / 2.0 + g * (1.0 / 24.0 + g * (-1.0 / 720.0 + g * (1.0 / 40320.0
        + g * (-1.0 / 3628800.0 + g * (1.0 / 479001600.0 + g * (-1.0 / 87178291200.0
        + g * (1.0 / 20922789888000.0 + g * (-1.0 / 6402373705728000.0)))))))));
    switch q {
        case 0u: { return vec2<f64>(c, s); }
        case 1u: { return vec2<f64>(-s, c); }
        case 2u: { return vec2<f64>(-c, -s); }
        default: { return vec2<f64>(s, -c); }
    }
}

// Box-Muller on the uniforms of x1 and x2, as the host's box_muller: r = sqrt(-2 ln u1),
// t = 2 pi u2, (r cos t, r sin t).
fn rng_box_muller64(x1: u32, x2: u32) -> vec2<f64> {
    let r = sqrt(-2.0 * rng_ln64(rng_u01_64(x1)));
    return r * rng_cos_sin_turns64(x2);
}

// Four uniform numbers in (0, 1) (rng::uniform4).
fn uniform4_64(seed: vec2<u32>, stream: u32, index: u32, counter: vec2<u32>) -> vec4<f64> {
    let r = rng_raw4(seed, stream, index, counter);
    return vec4<f64>(rng_u01_64(r.x), rng_u01_64(r.y), rng_u01_64(r.z), rng_u01_64(r.w));
}

// Four standard normal numbers (rng::normal4).
fn normal4_64(seed: vec2<u32>, stream: u32, index: u32, counter: vec2<u32>) -> vec4<f64> {
    let r = rng_raw4(seed, stream, index, counter);
    return vec4<f64>(rng_box_muller64(r.x, r.y), rng_box_muller64(r.z, r.w));
}
