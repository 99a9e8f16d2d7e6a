// The flow layer's colour plane: one quad from `plane.lo` to `plane.hi` at depth `plane.z`
// (tank coordinates, sigma), textured with one premultiplied texel per bin.

struct Frame {
    view_proj: mat4x4<f32>,
};

struct Plane {
    // lo.x, lo.y, hi.x, hi.y
    rect: vec4<f32>,
    // z, unused x3
    z: vec4<f32>,
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> plane: Plane;
@group(0) @binding(2) var bins: texture_2d<f32>;
@group(0) @binding(3) var bins_sampler: sampler;

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> VOut {
    // Two triangles: (0,0) (1,0) (1,1) and (0,0) (1,1) (0,1).
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 1.0), vec2<f32>(0.0, 1.0),
    );
    let uv = corners[i];
    let xy = mix(plane.rect.xy, plane.rect.zw, uv);
    var out: VOut;
    out.clip = frame.view_proj * vec4<f32>(xy, plane.z.x, 1.0);
    out.uv = uv;
    return out;
}

@fragment
fn fs_main(in: VOut) -> @location(0) vec4<f32> {
    return textureSample(bins, bins_sampler, in.uv);
}
