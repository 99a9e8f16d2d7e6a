// Copies the 3D view's offscreen image into egui's render pass: one triangle covering the
// viewport egui set for the paint callback. The source is sRGB, so sampling gives linear
// colour; for a non-sRGB target the colour is encoded to sRGB here (ENCODE_SRGB).

@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var samp: sampler;

struct VsOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> VsOut {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    var out: VsOut;
    out.pos = vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, 0.0, 1.0);
    out.uv = uv;
    return out;
}

fn encode_srgb(c: vec3<f32>) -> vec3<f32> {
    let lo = c * 12.92;
    let hi = 1.055 * pow(c, vec3<f32>(1.0 / 2.4)) - 0.055;
    return select(hi, lo, c <= vec3<f32>(0.0031308));
}

const ENCODE_SRGB: bool = /*ENCODE_SRGB*/false;

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let c = textureSampleLevel(src, samp, in.uv, 0.0).rgb;
    if ENCODE_SRGB {
        return vec4<f32>(encode_srgb(c), 1.0);
    }
    return vec4<f32>(c, 1.0);
}
