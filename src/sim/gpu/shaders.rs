//! The wgpu backend's WGSL compute shaders: one module of `shaders/sim/common.wgsl` (the
//! shared structs and bindings), `rng.wgsl` (Philox, as `crate::rng`), `flow.wgsl` (the
//! obstacles, surface friction and body forces the force kernels call), and the kernels
//! (`cells.wgsl`, `forces.wgsl`, `cellforces.wgsl`, `integrate.wgsl`, `tunnel.wgsl`,
//! `fields.wgsl`, `profile.wgsl`), with the build's constants (workgroup size, species
//! count) written in as `const` lines; and the modules of the publish kernel (`publish.wgsl`)
//! and the histograms (`analysis.wgsl`), each after the same common part. `all` lists every
//! module as compiled, for the portability test that translates each to MSL, HLSL and SPIR-V.

use super::engine::WG;

const PARTS: [(&str, &str); 10] = [
    ("common.wgsl", include_str!("../../../shaders/sim/common.wgsl")),
    ("rng.wgsl", include_str!("../../../shaders/sim/rng.wgsl")),
    ("flow.wgsl", include_str!("../../../shaders/sim/flow.wgsl")),
    ("cells.wgsl", include_str!("../../../shaders/sim/cells.wgsl")),
    ("forces.wgsl", include_str!("../../../shaders/sim/forces.wgsl")),
    ("cellforces.wgsl", include_str!("../../../shaders/sim/cellforces.wgsl")),
    ("integrate.wgsl", include_str!("../../../shaders/sim/integrate.wgsl")),
    ("tunnel.wgsl", include_str!("../../../shaders/sim/tunnel.wgsl")),
    ("fields.wgsl", include_str!("../../../shaders/sim/fields.wgsl")),
    ("profile.wgsl", include_str!("../../../shaders/sim/profile.wgsl")),
];

const PUBLISH: &str = include_str!("../../../shaders/sim/publish.wgsl");
const ANALYSIS: &str = include_str!("../../../shaders/sim/analysis.wgsl");

/// The simulation module for `ntypes` species.
pub fn module(ntypes: usize) -> String {
    let mut s = format!(
        "const WG: u32 = {WG}u;\nconst NTYPES: u32 = {}u;\nconst PROBE: u32 = {}u;\n",
        ntypes.max(1),
        build_probe()
    );
    for (_, part) in PARTS {
        s.push_str(part);
        s.push('\n');
    }
    s
}

/// `ARGON_WGPU_BUILD_PROBE` (1 or 2: see cells.wgsl `build_probe`), else 0.
/// Read once (the step loop asks every step).
pub fn build_probe() -> u32 {
    static PROBE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *PROBE.get_or_init(|| {
        std::env::var("ARGON_WGPU_BUILD_PROBE").ok().and_then(|v| v.parse().ok()).filter(|&p| p <= 2).unwrap_or(0)
    })
}

/// The publish kernel's module for `ntypes` species: the common part (bindings, helpers)
/// and `publish.wgsl`.
pub fn publish_module(ntypes: usize) -> String {
    side_module(ntypes, PUBLISH)
}

/// The histogram kernels' module for `ntypes` species: the common part and `analysis.wgsl`.
pub fn analysis_module(ntypes: usize) -> String {
    side_module(ntypes, ANALYSIS)
}

/// A module of its own for kernels outside the step (their outputs in group 1): the common
/// part (bindings, helpers) and `kernels`.
fn side_module(ntypes: usize, kernels: &str) -> String {
    let mut s = format!("const WG: u32 = {WG}u;\nconst NTYPES: u32 = {}u;\n", ntypes.max(1));
    for (name, part) in PARTS {
        if matches!(name, "common.wgsl" | "rng.wgsl") {
            s.push_str(part);
            s.push('\n');
        }
    }
    s.push_str(kernels);
    s
}

/// Every compute module of the backend as (name, complete WGSL source): the module for one
/// species (the fast path) and for several; the names list the files each holds.
pub fn all() -> Vec<(&'static str, String)> {
    vec![
        ("sim_1_species: common rng flow cells forces cellforces integrate tunnel fields profile", module(1)),
        ("sim_4_species: common rng flow cells forces cellforces integrate tunnel fields profile", module(4)),
        ("publish_1_species: common rng publish", publish_module(1)),
        ("publish_4_species: common rng publish", publish_module(4)),
        ("analysis_1_species: common rng analysis", analysis_module(1)),
        ("analysis_4_species: common rng analysis", analysis_module(4)),
    ]
}

#[cfg(test)]
mod tests {
    /// Every module parses and validates (naga, as wgpu will), without a device.
    #[test]
    fn modules_validate() {
        use wgpu::naga;
        for (name, src) in super::all() {
            let module =
                naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&src)));
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
                .validate(&module)
                .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&src)));
        }
    }
}
