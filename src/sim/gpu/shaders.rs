//! The wgpu backend's WGSL compute shaders: each module is `shaders/sim/common.wgsl` (the
//! shared structs and bindings) followed by one kernel file, with the build's constants
//! (workgroup size, species count) written in as `const` lines. `all` lists every module
//! as compiled, for the portability test that translates each to MSL, HLSL and SPIR-V.

/// Every compute module of the backend as (name, complete WGSL source).
pub fn all() -> Vec<(&'static str, String)> {
    Vec::new()
}
