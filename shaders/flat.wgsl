// Flat-coloured geometry: the tank outline and walls, obstacle prisms. Positions in tank
// coordinates (sigma), colours per vertex (linear RGB, alpha for translucent walls).

struct Frame {
    view_proj: mat4x4<f32>,
};

@group(0) @binding(0) var<uniform> frame: Frame;

struct VIn {
    @location(0) pos: vec3<f32>,
    @location(1) colour: vec4<f32>,
};

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) colour: vec4<f32>,
};

@vertex
fn vs_main(v: VIn) -> VOut {
    var out: VOut;
    out.clip = frame.view_proj * vec4<f32>(v.pos, 1.0);
    out.colour = v.colour;
    return out;
}

@fragment
fn fs_main(in: VOut) -> @location(0) vec4<f32> {
    return in.colour;
}
