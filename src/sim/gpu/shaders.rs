//! The wgpu backend's WGSL compute shaders: one module of `shaders/sim/common.wgsl` (the
//! shared structs and bindings), `rng.wgsl` (Philox, as `crate::rng`), `rng64.wgsl` (its
//! uniforms and normals in f64, where the state is f64), `flow.wgsl` (the obstacles, surface
//! friction and body forces the force kernels call), and the kernels (`cells.wgsl`,
//! `forces.wgsl`, `cellforces.wgsl`, `integrate.wgsl`, `tunnel.wgsl`, `fields.wgsl`,
//! `profile.wgsl`), with the build's constants (workgroup size, species count) written in as
//! `const` lines; and the modules of the publish kernel (`publish.wgsl`), the histograms
//! (`analysis.wgsl`) and the dye step (`dye.wgsl`), each after the same common part. `all` lists every module as compiled,
//! for the portability test that translates each to MSL, HLSL and SPIR-V.
//!
//! One source serves the three precisions ([`Precision`]): each module starts with
//! `alias real_s = ...;` (the state's type: positions, velocities, sums) and
//! `alias real_f = ...;` (the forces'), f32 and f32 in single, f64 and f32 in mixed, f64 and
//! f64 in double; `// #if FLAG` ... `// #else` ... `// #endif` lines keep what only some
//! precisions have (flags `F64`: the state is f64, `MIXED`, `DOUBLE`, `SINGLE`); and a few
//! names stand for what differs between them ([`renames`]: in mixed the forces read `posf`,
//! an f32 copy of the positions, which is `pos` itself elsewhere). Single precision so builds
//! exactly the module it had before there were others (the same SPIR-V).

use super::engine::WG;
use crate::physics::real::Precision;

const PARTS: [(&str, &str); 11] = [
    ("common.wgsl", include_str!("../../../shaders/sim/common.wgsl")),
    ("rng.wgsl", include_str!("../../../shaders/sim/rng.wgsl")),
    ("rng64.wgsl", include_str!("../../../shaders/sim/rng64.wgsl")),
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
const DYE: &str = include_str!("../../../shaders/sim/dye.wgsl");

/// The parts of a module in `precision` (rng64.wgsl only where the state is f64).
fn parts(precision: Precision) -> impl Iterator<Item = &'static str> {
    PARTS.iter().filter(move |(name, _)| *name != "rng64.wgsl" || precision != Precision::Single).map(|(_, p)| *p)
}

/// The type aliases of `precision`: (state, forces).
fn types(precision: Precision) -> (&'static str, &'static str) {
    match precision {
        Precision::Single => ("f32", "f32"),
        Precision::Mixed => ("f64", "f32"),
        Precision::Double => ("f64", "f64"),
    }
}

/// The flags `// #if` lines test in `precision`.
fn flag(name: &str, precision: Precision) -> bool {
    match name {
        "F64" => precision != Precision::Single,
        "MIXED" => precision == Precision::Mixed,
        "DOUBLE" => precision == Precision::Double,
        "SINGLE" => precision == Precision::Single,
        other => panic!("shaders/sim: unknown flag `{other}` in an `// #if` line"),
    }
}

/// The names the shaders use for what differs between precisions, and what each is in
/// `precision` (a name not listed is a function the precision's own lines define):
/// - `posf`, the positions the forces and the list build read: `pos` but in mixed;
/// - `type_of_s`, the species of a state position: `type_of` but in mixed;
/// - `normal4_s`, normal numbers in the state's precision: `normal4`, or rng64's `normal4_64`;
/// - `idx_as_real_f`, `real_f_as_idx`, an atom index in a forces-precision w and back:
///   bitcasts in f32 (conversions in double);
/// - `obs_real`, a length of an obstacle: the hi word alone in f32 (hi + lo in double).
pub fn renames(precision: Precision) -> Vec<(&'static str, &'static str)> {
    let mut r = Vec::new();
    if precision != Precision::Mixed {
        r.extend([("posf", "pos"), ("type_of_s", "type_of")]);
    }
    r.push(("normal4_s", if precision == Precision::Single { "normal4" } else { "normal4_64" }));
    if precision != Precision::Double {
        r.extend([("idx_as_real_f", "bitcast<f32>"), ("real_f_as_idx", "bitcast<u32>"), ("obs_real", "obs_f32")]);
    }
    r
}

/// `src` for `precision`: the `// #if` blocks resolved (their directive lines dropped) and
/// the names of [`renames`] replaced.
fn preprocess(src: &str, precision: Precision) -> String {
    // Whether each open block keeps its lines now.
    let mut keep: Vec<bool> = Vec::new();
    let mut out = String::with_capacity(src.len());
    for line in src.lines() {
        let t = line.trim();
        if let Some(cond) = t.strip_prefix("// #if ") {
            let cond = cond.trim();
            let on = match cond.strip_prefix('!') {
                Some(name) => !flag(name, precision),
                None => flag(cond, precision),
            };
            keep.push(on);
            continue;
        }
        if t == "// #else" {
            let last = keep.last_mut().expect("shaders/sim: `// #else` without `// #if`");
            *last = !*last;
            continue;
        }
        if t == "// #endif" {
            keep.pop().expect("shaders/sim: `// #endif` without `// #if`");
            continue;
        }
        if keep.iter().all(|&k| k) {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(keep.is_empty(), "shaders/sim: an `// #if` without `// #endif`");
    rename(&out, &renames(precision))
}

/// `src` with every identifier found in `names` replaced by its value.
fn rename(src: &str, names: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        // A word inside a number (0x1p-24f, 1e18) is not an identifier: copy it as it is.
        let in_number = before.chars().last().is_some_and(|c| c.is_ascii_alphanumeric());
        let end = from.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(from.len());
        let word = &from[..end];
        match names.iter().find(|(name, _)| *name == word) {
            Some((_, to)) if !in_number => out.push_str(to),
            _ => out.push_str(word),
        }
        rest = &from[end..];
    }
    out.push_str(rest);
    out
}

/// The module's first lines: the build's constants and the precision's types.
fn header(ntypes: usize, precision: Precision) -> String {
    let (s, f) = types(precision);
    format!(
        "const WG: u32 = {WG}u;\nconst NTYPES: u32 = {}u;\nalias real_s = {s};\nalias real_f = {f};\n",
        ntypes.max(1)
    )
}

/// The simulation module for `ntypes` species in `precision`.
pub fn module(ntypes: usize, precision: Precision) -> String {
    let mut s = header(ntypes, precision);
    s.push_str(&format!("const PROBE: u32 = {}u;\n", build_probe()));
    for part in parts(precision) {
        s.push_str(&preprocess(part, precision));
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

/// The publish kernel's module for `ntypes` species in `precision`: the common part
/// (bindings, helpers) and `publish.wgsl`.
pub fn publish_module(ntypes: usize, precision: Precision) -> String {
    side_module(ntypes, precision, PUBLISH)
}

/// The histogram kernels' module for `ntypes` species in `precision`: the common part and
/// `analysis.wgsl`.
pub fn analysis_module(ntypes: usize, precision: Precision) -> String {
    side_module(ntypes, precision, ANALYSIS)
}

/// The dye kernel's module for `ntypes` species in `precision`: the common part and `dye.wgsl`.
pub fn dye_module(ntypes: usize, precision: Precision) -> String {
    side_module(ntypes, precision, DYE)
}

/// A module of its own for kernels outside the step (their outputs in group 1): the common
/// part (bindings, helpers) and `kernels`.
fn side_module(ntypes: usize, precision: Precision, kernels: &str) -> String {
    let mut s = header(ntypes, precision);
    for (name, part) in PARTS {
        if matches!(name, "common.wgsl" | "rng.wgsl") {
            s.push_str(&preprocess(part, precision));
            s.push('\n');
        }
    }
    s.push_str(&preprocess(kernels, precision));
    s
}

/// Every compute module of the backend as (name, complete WGSL source): the module for one
/// species (the fast path) and for several, in each precision; the names list the files each
/// holds, and those of the modules that need 64-bit floats (SHADER_F64) end in `_f64` before
/// the colon.
pub fn all() -> Vec<(&'static str, String)> {
    use Precision::{Double, Mixed, Single};
    vec![
        ("sim_1_species: common rng flow cells forces cellforces integrate tunnel fields profile", module(1, Single)),
        ("sim_4_species: common rng flow cells forces cellforces integrate tunnel fields profile", module(4, Single)),
        ("publish_1_species: common rng publish", publish_module(1, Single)),
        ("publish_4_species: common rng publish", publish_module(4, Single)),
        ("analysis_1_species: common rng analysis", analysis_module(1, Single)),
        ("analysis_4_species: common rng analysis", analysis_module(4, Single)),
        ("dye_1_species: common rng dye", dye_module(1, Single)),
        (
            "sim_1_species_mixed_f64: common rng rng64 flow cells forces cellforces integrate tunnel fields profile",
            module(1, Mixed),
        ),
        (
            "sim_4_species_mixed_f64: common rng rng64 flow cells forces cellforces integrate tunnel fields profile",
            module(4, Mixed),
        ),
        (
            "sim_1_species_double_f64: common rng rng64 flow cells forces cellforces integrate tunnel fields profile",
            module(1, Double),
        ),
        (
            "sim_4_species_double_f64: common rng rng64 flow cells forces cellforces integrate tunnel fields profile",
            module(4, Double),
        ),
        ("publish_1_species_mixed_f64: common rng publish", publish_module(1, Mixed)),
        ("publish_4_species_double_f64: common rng publish", publish_module(4, Double)),
        ("analysis_1_species_mixed_f64: common rng analysis", analysis_module(1, Mixed)),
        ("analysis_4_species_double_f64: common rng analysis", analysis_module(4, Double)),
        ("dye_1_species_mixed_f64: common rng dye", dye_module(1, Mixed)),
        ("dye_4_species_double_f64: common rng dye", dye_module(4, Double)),
    ]
}

/// Whether a module name of [`all`] is one that needs 64-bit floats.
pub fn needs_f64(name: &str) -> bool {
    name.split(':').next().is_some_and(|n| n.ends_with("_f64"))
}

#[cfg(test)]
mod tests {
    use wgpu::naga;

    fn parse(name: &str, src: &str) -> (naga::Module, naga::valid::ModuleInfo) {
        let module = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
        let caps = if super::needs_f64(name) {
            naga::valid::Capabilities::FLOAT64
        } else {
            naga::valid::Capabilities::empty()
        };
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
        (module, info)
    }

    /// Every module parses and validates (naga, as wgpu will), without a device: single
    /// precision without 64-bit floats, mixed and double with them.
    #[test]
    fn modules_validate() {
        for (name, src) in super::all() {
            parse(name, &src);
        }
    }

    /// The f64 modules take no 64-bit log, exp, power or trigonometry (Vulkan's extended
    /// instructions have none: rng64.wgsl computes them), and every entry point's workgroup
    /// memory fits [`super::super::device::F64_WORKGROUP_BYTES`].
    #[test]
    fn f64_modules_use_what_vulkan_has() {
        use naga::{Expression, MathFunction as M};
        let mut largest = 0;
        for (name, src) in super::all().into_iter().filter(|(n, _)| super::needs_f64(n)) {
            let (module, info) = parse(name, &src);
            let check = |f: &naga::Function, fi: &naga::valid::FunctionInfo, what: &str| {
                for (h, e) in f.expressions.iter() {
                    if let Expression::Math { fun, arg, .. } = e {
                        let wide = fi[*arg].ty.inner_with(&module.types).scalar_width() == Some(8);
                        let missing = matches!(
                            fun,
                            M::Log | M::Log2 | M::Exp | M::Exp2 | M::Pow | M::Sin | M::Cos | M::Tan | M::Atan2
                        );
                        assert!(!(wide && missing), "{name}: {what} takes {fun:?} of an f64 ({h:?})");
                    }
                }
            };
            for (h, f) in module.functions.iter() {
                check(f, &info[h], f.name.as_deref().unwrap_or("?"));
            }
            for (k, ep) in module.entry_points.iter().enumerate() {
                let ei = info.get_entry_point(k);
                check(&ep.function, ei, &ep.name);
                let bytes: u32 = module
                    .global_variables
                    .iter()
                    .filter(|(h, v)| v.space == naga::AddressSpace::WorkGroup && !ei[*h].is_empty())
                    .map(|(_, v)| module.types[v.ty].inner.size(module.to_ctx()))
                    .sum();
                largest = largest.max(bytes);
                assert!(
                    bytes <= super::super::device::F64_WORKGROUP_BYTES,
                    "{name}: `{}` needs {bytes} bytes of workgroup memory",
                    ep.name
                );
            }
        }
        eprintln!("largest workgroup memory of an f64 entry point: {largest} bytes");
    }

    /// The host's blocks (`layout.rs`, `flow.rs`) put every member where naga lays out the
    /// shaders' structs, and have their size, in every precision.
    #[test]
    fn host_blocks_match_the_shaders() {
        use super::super::flow::FlowParams;
        use super::super::layout::{Pair, Params, StepInfo};
        use crate::physics::real::Precision;
        for p in Precision::ALL {
            let name = if p == Precision::Single { "single" } else { "x_f64" };
            let (module, _) = parse(name, &super::module(4, p));
            let blocks = [
                ("Params", Params::default().block(p)),
                ("StepInfo", StepInfo::default().block(p)),
                ("Pair", Pair::default().block(p)),
                ("Flow", FlowParams::default().block(p)),
            ];
            for (ty, block) in blocks {
                let (_, t) = module.types.iter().find(|(_, t)| t.name.as_deref() == Some(ty)).expect(ty);
                let naga::TypeInner::Struct { members, span } = &t.inner else { panic!("{ty} is not a struct") };
                let offsets: Vec<usize> = members.iter().map(|m| m.offset as usize).collect();
                assert_eq!(offsets, block.offsets(), "{ty} in {p:?}: member offsets");
                assert_eq!(*span as usize, block.size(), "{ty} in {p:?}: size");
            }
            assert!(StepInfo::size(p) as usize >= StepInfo::default().block(p).size());
        }
    }

    /// The preprocessor keeps a block's lines only where its flag holds and renames whole
    /// identifiers only.
    #[test]
    fn blocks_and_names() {
        use crate::physics::real::Precision::{Double, Mixed, Single};
        let src =
            "a\n// #if F64\nb posf\n// #else\nc posf\n// #endif\n// #if !MIXED\nd\n// #endif\nposfx 1e18 obs_real\n";
        assert_eq!(super::preprocess(src, Single), "a\nc pos\nd\nposfx 1e18 obs_f32\n");
        assert_eq!(super::preprocess(src, Mixed), "a\nb posf\nposfx 1e18 obs_f32\n");
        assert_eq!(super::preprocess(src, Double), "a\nb pos\nd\nposfx 1e18 obs_real\n");
        for (name, src) in super::all() {
            assert!(!src.lines().any(|l| l.trim().starts_with("// #")), "{name}: a directive was left in");
        }
    }
}
