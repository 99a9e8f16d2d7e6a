//! Every WGSL shader of the project translates, with the naga that wgpu itself uses, to MSL
//! (Metal), HLSL (DX12) and SPIR-V (Vulkan), so a shader that could not run on Metal or DX12
//! fails here, on CI machines without any GPU.
//!
//! The modules are the ones the app builds: the render shaders of `shaders/*.wgsl` assembled as
//! `src/render` assembles them at run time (every variant), and every compute module of
//! `sim::gpu::shaders::all()`. Each is parsed, validated with the capabilities the app asks
//! for on a device that has them (and no more), then written per entry point with options
//! that mirror wgpu 30's backends: binding maps laid out as wgpu-hal lays them out, no faked
//! bindings, bounds checks on, MSL 2.4, HLSL shader model 5.1 and SPIR-V 1.0 unless the module
//! needs more (then the version from which wgpu offers it: SM 6.6 for the splat path's 64-bit
//! atomics). A capability a backend never grants (Metal has no f64; only Vulkan and GL offer
//! the early depth test) skips that one translation, printed with the reason; where the app
//! builds another variant instead, that one is checked too.
//!
//! `cargo test --release --test shader_portability -- --nocapture` shows the table.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use naga::back::{hlsl, msl, spv};
use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{AddressSpace, Module, ResourceBinding, ShaderStage, StorageAccess, TypeInner};

/// One WGSL module as the app hands it to `create_shader_module`.
struct Source {
    /// What the module is, for messages (files it is made of, substitutions).
    name: String,
    /// The `shaders/` files (stems) it is assembled from.
    files: Vec<&'static str>,
    source: String,
    /// The device features the app requires before it builds this module.
    features: wgpu::Features,
}

/// The render shaders, assembled exactly as `src/render` does: keep in step with
/// `Renderer::new` (atoms, early depth), `Splat::new` (atoms + splat), `ViewResources::new`
/// (blit, sRGB encoding) and `flow_plane::PlanePipeline::new` (flow_plane).
fn render_sources() -> Vec<Source> {
    let atoms = include_str!("../shaders/atoms.wgsl");
    let splat = include_str!("../shaders/splat.wgsl");
    let blit = include_str!("../shaders/blit.wgsl");
    assert!(atoms.contains("/*EARLY_DEPTH*/"), "atoms.wgsl lost the /*EARLY_DEPTH*/ marker src/render/mod.rs replaces");
    assert!(
        blit.contains("/*ENCODE_SRGB*/false"),
        "blit.wgsl lost the /*ENCODE_SRGB*/false marker src/render/view.rs replaces"
    );
    // `Renderer::new`: with SHADER_EARLY_DEPTH_TEST the fragment shader promises conservative depth.
    let early = wgpu::Features::SHADER_EARLY_DEPTH_TEST;
    let atoms_early = atoms.replace("/*EARLY_DEPTH*/", "@early_depth_test(greater_equal)");
    // `Splat::new` appends splat.wgsl to the atoms source the renderer built (either variant),
    // only on devices with `splat::features()`.
    let splat_features = argon_sandbox::render::splat::features();
    let with_splat = |atoms_source: &str| format!("{atoms_source}\n{splat}");
    let mut sources = vec![
        Source { name: "atoms".into(), files: vec!["atoms"], source: atoms.into(), features: wgpu::Features::empty() },
        Source {
            name: "atoms (early depth)".into(),
            files: vec!["atoms"],
            source: atoms_early.clone(),
            features: early,
        },
        Source {
            name: "atoms + splat".into(),
            files: vec!["atoms", "splat"],
            source: with_splat(atoms),
            features: splat_features,
        },
        Source {
            name: "atoms (early depth) + splat".into(),
            files: vec!["atoms", "splat"],
            source: with_splat(&atoms_early),
            features: early | splat_features,
        },
        Source {
            name: "flat".into(),
            files: vec!["flat"],
            source: include_str!("../shaders/flat.wgsl").into(),
            features: wgpu::Features::empty(),
        },
        Source {
            name: "flow_plane".into(),
            files: vec!["flow_plane"],
            source: include_str!("../shaders/flow_plane.wgsl").into(),
            features: wgpu::Features::empty(),
        },
    ];
    // `ViewResources::new`: "true" for a non-sRGB target (the shader encodes), "false" for sRGB.
    for encode in ["false", "true"] {
        sources.push(Source {
            name: format!("blit (ENCODE_SRGB = {encode})"),
            files: vec!["blit"],
            source: blit.replace("/*ENCODE_SRGB*/false", encode),
            features: wgpu::Features::empty(),
        });
    }
    sources
}

/// The wgpu compute backend's modules, as compiled. Single precision's need no device feature;
/// mixed and double precision's (named `..._f64`: `shaders::needs_f64`) use 64-bit floats
/// (SHADER_F64).
fn sim_sources() -> Vec<Source> {
    argon_sandbox::sim::gpu::shaders::all()
        .into_iter()
        .map(|(name, source)| Source {
            name: format!("sim::{name}"),
            files: Vec::new(),
            source,
            features: if argon_sandbox::sim::gpu::shaders::needs_f64(name) {
                wgpu::Features::SHADER_F64
            } else {
                wgpu::Features::empty()
            },
        })
        .collect()
}

/// The naga capabilities wgpu grants for `features` (as `wgpu_naga_bridge` maps them). Only the
/// features the app's shaders ask for are mapped: a new one must be added here on purpose.
fn naga_capabilities(features: wgpu::Features) -> Capabilities {
    let map = [
        (wgpu::Features::SHADER_EARLY_DEPTH_TEST, Capabilities::EARLY_DEPTH_TEST),
        (wgpu::Features::SHADER_INT64, Capabilities::SHADER_INT64),
        (wgpu::Features::SHADER_INT64_ATOMIC_MIN_MAX, Capabilities::SHADER_INT64_ATOMIC_MIN_MAX),
        (
            wgpu::Features::SHADER_INT64_ATOMIC_ALL_OPS,
            Capabilities::SHADER_INT64_ATOMIC_MIN_MAX.union(Capabilities::SHADER_INT64_ATOMIC_ALL_OPS),
        ),
        (wgpu::Features::SHADER_F64, Capabilities::FLOAT64),
    ];
    let mut caps = Capabilities::empty();
    let mut left = features;
    for (feature, cap) in map {
        if features.contains(feature) {
            caps |= cap;
            left.remove(feature);
        }
    }
    assert!(left.is_empty(), "map {left:?} to naga capabilities in naga_capabilities()");
    caps
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    Msl,
    Hlsl,
    Spv,
}

impl Target {
    const ALL: [Target; 3] = [Target::Msl, Target::Hlsl, Target::Spv];

    fn label(self) -> &'static str {
        match self {
            Target::Msl => "MSL (Metal)",
            Target::Hlsl => "HLSL (DX12)",
            Target::Spv => "SPIR-V (Vulkan)",
        }
    }

    /// What naga's writer for this target can translate.
    fn naga_supports(self) -> Capabilities {
        match self {
            Target::Msl => msl::supported_capabilities(),
            Target::Hlsl => hlsl::supported_capabilities(),
            Target::Spv => spv::supported_capabilities(),
        }
    }

    /// Capabilities wgpu 30's backend for this target never grants, with what happens instead.
    /// A module needing one of them is never built on that backend, so its translation there
    /// is skipped (and printed); anything else a backend lacks is a failure.
    fn never_granted(self) -> &'static [(Capabilities, &'static str)] {
        // wgpu-hal offers SHADER_EARLY_DEPTH_TEST only on Vulkan and GL: on Metal and DX12 the
        // renderer builds atoms.wgsl without the attribute, the plain variant checked here too
        // (naga's MSL and HLSL writers would just drop the attribute).
        const EARLY: (Capabilities, &str) = (
            Capabilities::EARLY_DEPTH_TEST,
            "wgpu offers SHADER_EARLY_DEPTH_TEST only on Vulkan/GL; the plain variant runs here",
        );
        match self {
            // Metal has no 64-bit floats: wgpu's Metal backend never offers SHADER_F64 and naga's
            // MSL writer rejects f64. A module that needs f64 cannot run on Metal at all.
            Target::Msl => &[(Capabilities::FLOAT64, "Metal has no f64 (no SHADER_F64 on Metal)"), EARLY],
            // DX12 keeps f64 modules: naga writes `double` (shader model 5.0+), although wgpu 30's
            // DX12 backend does not offer SHADER_F64 yet.
            Target::Hlsl => &[EARLY],
            Target::Spv => &[],
        }
    }
}

/// The Metal Shading Language version to translate for: 2.4 (macOS 12, iOS 15) unless the module
/// needs more. wgpu uses the newest the OS offers and gates features on it: SHADER_INT64 from
/// 2.3, SHADER_INT64_ATOMIC_MIN_MAX from 2.4 (Apple9, or Apple8 with Mac2: the splat path),
/// SHADER_INT64_ATOMIC_ALL_OPS from 3.1 (Apple9; naga's MSL writer has no such atomics anyway).
fn msl_version(caps: Capabilities) -> (u8, u8) {
    if caps.contains(Capabilities::SHADER_INT64_ATOMIC_ALL_OPS) { (3, 1) } else { (2, 4) }
}

/// The HLSL shader model: 5.1 (what wgpu's DX12 backend compiles with FXC, its fallback when no
/// dxcompiler.dll is found) unless the module needs more. wgpu offers SHADER_INT64 from SM 6.0
/// and the 64-bit atomics (min/max included) only from SM 6.6, through DXC: SM 5.1 has no
/// 64-bit atomics, so the splat path exists on DX12 only with DXC.
fn hlsl_shader_model(caps: Capabilities) -> hlsl::ShaderModel {
    if caps.intersects(Capabilities::SHADER_INT64_ATOMIC_MIN_MAX | Capabilities::SHADER_INT64_ATOMIC_ALL_OPS) {
        hlsl::ShaderModel::V6_6
    } else if caps.contains(Capabilities::SHADER_INT64) {
        hlsl::ShaderModel::V6_0
    } else {
        hlsl::ShaderModel::V5_1
    }
}

/// SPIR-V 1.0, what wgpu writes for a Vulkan 1.0 device (64-bit atomics come there from
/// VK_KHR_shader_atomic_int64), and the SPIR-V capabilities wgpu's Vulkan backend declares
/// available for `caps` (naga rejects code that needs others).
fn spv_options(caps: Capabilities) -> (u8, u8, naga::FastHashSet<spv::Capability>) {
    use spv::Capability as C;
    // Always available on Vulkan, plus the downlevel ones every desktop device has.
    let mut available = vec![
        C::Shader,
        C::Matrix,
        C::Sampled1D,
        C::Image1D,
        C::ImageQuery,
        C::DerivativeControl,
        C::StorageImageExtendedFormats,
        C::SampledCubeArray,
        C::SampleRateShading,
    ];
    if caps.contains(Capabilities::SHADER_INT64) {
        available.push(C::Int64);
    }
    if caps.intersects(Capabilities::SHADER_INT64_ATOMIC_MIN_MAX | Capabilities::SHADER_INT64_ATOMIC_ALL_OPS) {
        available.push(C::Int64Atomics);
    }
    if caps.contains(Capabilities::FLOAT64) {
        // wgpu 30 leaves it out of its list (naga declares it without asking); the device has
        // shaderFloat64 whenever SHADER_F64 is on.
        available.push(C::Float64);
    }
    (1, 0, available.into_iter().collect())
}

/// Bounds checks as wgpu applies them by default (`ShaderRuntimeChecks::checked()`).
fn bounds_checks() -> BoundsCheckPolicies {
    BoundsCheckPolicies {
        index: BoundsCheckPolicy::Restrict,
        buffer: BoundsCheckPolicy::Restrict,
        image_load: BoundsCheckPolicy::Restrict,
        binding_array: BoundsCheckPolicy::Unchecked,
    }
}

/// The module's resource bindings in (group, binding) order, as a pipeline layout lists them.
fn bindings(module: &Module) -> Vec<(ResourceBinding, &naga::GlobalVariable)> {
    let mut list: Vec<_> =
        module.global_variables.iter().filter_map(|(_, var)| var.binding.map(|binding| (binding, var))).collect();
    list.sort_by_key(|(binding, _)| (binding.group, binding.binding));
    list
}

/// What kind of slot a bound global takes.
enum Slot {
    Uniform,
    Storage { writable: bool },
    Texture { writable: bool },
    Sampler,
}

fn slot(module: &Module, var: &naga::GlobalVariable) -> Slot {
    match (var.space, &module.types[var.ty].inner) {
        (AddressSpace::Uniform, _) => Slot::Uniform,
        (AddressSpace::Storage { access }, _) => Slot::Storage { writable: access.contains(StorageAccess::STORE) },
        (AddressSpace::Handle, TypeInner::Sampler { .. }) => Slot::Sampler,
        (AddressSpace::Handle, TypeInner::Image { class, .. }) => Slot::Texture {
            writable: matches!(class, naga::ImageClass::Storage { access, .. } if access.contains(StorageAccess::STORE)),
        },
        (space, ty) => {
            panic!("global {:?} ({space:?}, {ty:?}): mirror how wgpu-hal binds it in the test's binding maps", var.name)
        }
    }
}

/// Metal: buffer, texture and sampler slots counted up in layout order, then the sizes buffer
/// (runtime-sized storage, vertex pulling), as wgpu-hal's Metal `create_pipeline_layout`.
fn msl_resources(module: &Module, stage: ShaderStage) -> msl::EntryPointResources {
    let mut resources = msl::EntryPointResources::default();
    let (mut buffers, mut textures, mut samplers) = (0u8, 0u8, 0u8);
    let mut has_storage = false;
    for (binding, var) in bindings(module) {
        let mut target = msl::BindTarget::default();
        match slot(module, var) {
            Slot::Uniform => {
                target.buffer = Some(buffers);
                buffers += 1;
            }
            Slot::Storage { writable } => {
                target.buffer = Some(buffers);
                target.mutable = writable;
                buffers += 1;
                has_storage = true;
            }
            Slot::Texture { writable } => {
                target.texture = Some(textures);
                target.mutable = writable;
                textures += 1;
            }
            Slot::Sampler => {
                target.sampler = Some(msl::BindSamplerTarget::Resource(samplers));
                samplers += 1;
            }
        }
        resources.resources.insert(binding, target);
    }
    if has_storage || stage == ShaderStage::Vertex {
        resources.sizes_buffer = Some(buffers);
    }
    resources
}

/// Metal pulls vertex attributes from buffers (wgpu sets `vertex_pulling_transform`). The app's
/// vertex buffers (flat.wgsl's) are one interleaved buffer, attributes packed in location order:
/// the mapping wgpu-hal builds for that layout, derived from the entry point's inputs.
fn msl_vertex_buffers(module: &Module, ep: &naga::EntryPoint) -> Vec<msl::VertexBufferMapping> {
    let mut inputs = Vec::new();
    for arg in &ep.function.arguments {
        match (&arg.binding, &module.types[arg.ty].inner) {
            (Some(naga::Binding::Location { location, .. }), ty) => inputs.push((*location, ty.clone())),
            (None, TypeInner::Struct { members, .. }) => {
                for m in members {
                    if let Some(naga::Binding::Location { location, .. }) = m.binding {
                        inputs.push((location, module.types[m.ty].inner.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    if inputs.is_empty() {
        return Vec::new();
    }
    inputs.sort_by_key(|(location, _)| *location);
    let mut offset = 0;
    let mut attributes = Vec::new();
    for (location, ty) in inputs {
        use naga::{ScalarKind as K, VectorSize as N};
        use wgpu::VertexFormat as F;
        let (scalar, size) = match ty {
            TypeInner::Scalar(s) => (s, None),
            TypeInner::Vector { size, scalar } => (scalar, Some(size)),
            other => panic!("vertex input {location} of {}: {other:?} has no vertex format", ep.name),
        };
        let format = match (scalar.kind, scalar.width, size) {
            (K::Float, 4, None) => F::Float32,
            (K::Float, 4, Some(N::Bi)) => F::Float32x2,
            (K::Float, 4, Some(N::Tri)) => F::Float32x3,
            (K::Float, 4, Some(N::Quad)) => F::Float32x4,
            (K::Uint, 4, None) => F::Uint32,
            (K::Uint, 4, Some(N::Bi)) => F::Uint32x2,
            (K::Uint, 4, Some(N::Tri)) => F::Uint32x3,
            (K::Uint, 4, Some(N::Quad)) => F::Uint32x4,
            (K::Sint, 4, None) => F::Sint32,
            (K::Sint, 4, Some(N::Bi)) => F::Sint32x2,
            (K::Sint, 4, Some(N::Tri)) => F::Sint32x3,
            (K::Sint, 4, Some(N::Quad)) => F::Sint32x4,
            other => panic!("vertex input {location} of {}: add a vertex format for {other:?}", ep.name),
        };
        attributes.push(msl::AttributeMapping { shader_location: location, offset, format });
        offset += format.size() as u32;
    }
    // wgpu-hal puts vertex buffer i in Metal buffer slot 30 - i.
    vec![msl::VertexBufferMapping {
        id: 30,
        stride: offset,
        step_mode: msl::VertexBufferStepMode::ByVertex,
        attributes,
    }]
}

/// DX12: CBV, SRV and UAV registers counted up in layout order (space 0), samplers as indices
/// into the group's sampler index buffer (an SRV after the group's others), then the special
/// constants (first vertex/instance, workgroup count) that wgpu-core always asks for, as
/// wgpu-hal's DX12 `create_pipeline_layout`.
fn hlsl_options(module: &Module, shader_model: hlsl::ShaderModel) -> hlsl::Options {
    let target = |register| hlsl::BindTarget {
        space: 0,
        register,
        binding_array_size: None,
        dynamic_storage_buffer_offsets_index: None,
        restrict_indexing: false,
    };
    let (mut cbv, mut srv, mut uav) = (0, 0, 0);
    let mut binding_map = hlsl::BindingMap::default();
    let mut sampler_buffers = hlsl::SamplerIndexBufferBindingMap::default();
    let all = bindings(module);
    let groups: BTreeSet<u32> = all.iter().map(|(binding, _)| binding.group).collect();
    for group in groups {
        let mut samplers = 0;
        for (binding, var) in all.iter().filter(|(binding, _)| binding.group == group) {
            let register = match slot(module, var) {
                Slot::Uniform => &mut cbv,
                Slot::Storage { writable: false } | Slot::Texture { writable: false } => &mut srv,
                Slot::Storage { writable: true } | Slot::Texture { writable: true } => &mut uav,
                Slot::Sampler => {
                    binding_map.insert(*binding, hlsl::BindTarget { space: 255, ..target(samplers) });
                    samplers += 1;
                    continue;
                }
            };
            binding_map.insert(*binding, target(*register));
            *register += 1;
        }
        if samplers > 0 {
            sampler_buffers.insert(hlsl::SamplerIndexBufferKey { group }, target(srv));
            srv += 1;
        }
    }
    hlsl::Options {
        shader_model,
        binding_map,
        fake_missing_bindings: false,
        special_constants_binding: Some(target(cbv)),
        sampler_buffer_binding_map: sampler_buffers,
        zero_initialize_workgroup_memory: true,
        restrict_indexing: true,
        force_loop_bounding: true,
        ..Default::default()
    }
}

/// Vulkan: descriptor set = group, binding = binding, as wgpu-hal's Vulkan pipeline layout.
fn spv_binding_map(module: &Module) -> spv::BindingMap {
    bindings(module)
        .into_iter()
        .map(|(binding, _)| {
            let info =
                spv::BindingInfo { descriptor_set: binding.group, binding: binding.binding, binding_array_size: None };
            (binding, info)
        })
        .collect()
}

/// Writes `module` for `target`, one entry point at a time as wgpu does (overrides processed
/// for that entry point first); returns what was written per entry point, or naga's error.
fn translate(target: Target, module: &Module, info: &ModuleInfo, caps: Capabilities) -> Result<String, String> {
    let mut done = Vec::new();
    for ep in &module.entry_points {
        let at = |what: String| format!("entry point `{}` ({:?}): {what}", ep.name, ep.stage);
        let (module, info) = naga::back::pipeline_constants::process_overrides(
            module,
            info,
            Some((ep.stage, &ep.name)),
            &naga::back::PipelineConstants::default(),
        )
        .map_err(|e| at(format!("overrides: {e}")))?;
        // The processed module may be compacted: its own entry point from here on.
        let ep = module.entry_points.iter().find(|e| e.name == ep.name && e.stage == ep.stage).expect("entry point");
        let ep_names = match target {
            Target::Msl => {
                let options = msl::Options {
                    lang_version: msl_version(caps),
                    per_entry_point_map: BTreeMap::from([(ep.name.clone(), msl_resources(&module, ep.stage))]),
                    fake_missing_bindings: false,
                    bounds_check_policies: bounds_checks(),
                    zero_initialize_workgroup_memory: true,
                    force_loop_bounding: true,
                    ..Default::default()
                };
                let vertex_buffers = match ep.stage {
                    ShaderStage::Vertex => msl_vertex_buffers(&module, ep),
                    _ => Vec::new(),
                };
                let pipeline = msl::PipelineOptions {
                    entry_point: Some((ep.stage, ep.name.clone())),
                    allow_and_force_point_size: false,
                    vertex_pulling_transform: true,
                    vertex_buffer_mappings: vertex_buffers,
                    binding_array_length_map: Default::default(),
                };
                let (_, translated) =
                    msl::write_string(&module, &info, &options, &pipeline).map_err(|e| at(e.to_string()))?;
                translated.entry_point_names.into_iter().map(|r| r.map_err(|e| e.to_string())).collect::<Vec<_>>()
            }
            Target::Hlsl => {
                let options = hlsl_options(&module, hlsl_shader_model(caps));
                let pipeline = hlsl::PipelineOptions { entry_point: Some((ep.stage, ep.name.clone())) };
                // A vertex shader is written knowing the fragment shader it feeds (wgpu passes
                // the pipeline's): the app pairs vs_X with fs_X of the same module.
                let fragment = match ep.stage {
                    ShaderStage::Vertex => ep
                        .name
                        .strip_prefix("vs_")
                        .map(|rest| format!("fs_{rest}"))
                        .filter(|fs| module.entry_points.iter().any(|e| &e.name == fs)),
                    _ => None,
                };
                let fragment = fragment.as_deref().and_then(|name| hlsl::FragmentEntryPoint::new(&module, name));
                let mut out = String::new();
                let reflection = hlsl::Writer::new(&mut out, &options, &pipeline)
                    .write(&module, &info, fragment.as_ref())
                    .map_err(|e| at(e.to_string()))?;
                reflection.entry_point_names.into_iter().map(|r| r.map_err(|e| e.to_string())).collect()
            }
            Target::Spv => {
                let (major, minor, capabilities) = spv_options(caps);
                let options = spv::Options {
                    lang_version: (major, minor),
                    flags: spv::WriterFlags::LABEL_VARYINGS | spv::WriterFlags::FORCE_POINT_SIZE,
                    fake_missing_bindings: false,
                    binding_map: spv_binding_map(&module),
                    capabilities: Some(capabilities),
                    bounds_check_policies: bounds_checks(),
                    zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::Polyfill,
                    force_loop_bounding: true,
                    ..Default::default()
                };
                let pipeline = spv::PipelineOptions { shader_stage: ep.stage, entry_point: ep.name.clone() };
                let words = spv::write_vec(&module, &info, &options, Some(&pipeline)).map_err(|e| at(e.to_string()))?;
                assert_eq!(words.first(), Some(&0x0723_0203), "not a SPIR-V module");
                vec![Ok(ep.name.clone())]
            }
        };
        // The MSL and HLSL writers report an entry point they could not write here, not as an
        // error of the whole module.
        if ep_names.is_empty() {
            return Err(at("the writer wrote no entry point".into()));
        }
        for name in ep_names {
            name.map_err(at)?;
        }
        done.push(ep.name.clone());
    }
    Ok(done.join(", "))
}

#[test]
fn every_shader_translates_to_metal_dx12_and_vulkan() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let render = render_sources();
    let sim = sim_sources();

    // Every render shader file is in at least one module checked here.
    let covered: BTreeSet<&str> = render.iter().flat_map(|s| s.files.iter().copied()).collect();
    for stem in wgsl_stems(&root.join("shaders"), false) {
        assert!(
            covered.contains(stem.as_str()),
            "shaders/{stem}.wgsl is not in any module of render_sources(): add it as src/render assembles it"
        );
    }
    // Every compute kernel file is in at least one module of `sim::gpu::shaders::all()`.
    for stem in wgsl_stems(&root.join("shaders/sim"), true) {
        assert!(
            sim.iter().any(|s| s.name.contains(&stem)),
            "shaders/sim/{stem}.wgsl has a @compute entry point but no module of sim::gpu::shaders::all() names it"
        );
    }

    let mut failures = Vec::new();
    let (mut translated, mut skipped) = (0, 0);
    // The simulation's f64 modules kept from Metal (each must need f64, and none reach MSL).
    let f64_modules = sim.iter().filter(|s| s.features.contains(wgpu::Features::SHADER_F64)).count();
    let mut f64_kept_from_msl = Vec::new();
    let modules = render.len() + sim.len();
    for src in render.iter().chain(&sim) {
        let fail = |target: &str, error: String| format!("{} -> {target}:\n{error}", src.name);
        let module = match naga::front::wgsl::parse_str(&src.source) {
            Ok(module) => module,
            Err(e) => {
                failures.push(fail("WGSL parse", e.emit_to_string(&src.source)));
                continue;
            }
        };
        let allowed = naga_capabilities(src.features);
        let info = match Validator::new(ValidationFlags::all(), allowed).validate(&module) {
            Ok(info) => info,
            Err(e) => {
                failures.push(fail(&format!("naga validation ({allowed:?})"), e.emit_to_string(&src.source)));
                continue;
            }
        };
        // A module allowed f64 needs it only if it does not validate without.
        let mut caps = allowed;
        if allowed.contains(Capabilities::FLOAT64)
            && Validator::new(ValidationFlags::all(), allowed - Capabilities::FLOAT64).validate(&module).is_ok()
        {
            caps -= Capabilities::FLOAT64;
        }
        if src.features.contains(wgpu::Features::SHADER_F64) {
            assert!(caps.contains(Capabilities::FLOAT64), "{}: named an f64 module but takes no f64", src.name);
        }
        for target in Target::ALL {
            if let Some((_, why)) = target.never_granted().iter().find(|(cap, _)| caps.intersects(*cap)) {
                println!("skip {:<34} {:<16} {why}", src.name, target.label());
                skipped += 1;
                if target == Target::Msl && caps.contains(Capabilities::FLOAT64) && src.name.starts_with("sim::") {
                    f64_kept_from_msl.push(src.name.clone());
                }
                continue;
            }
            let missing = caps - target.naga_supports();
            if !missing.is_empty() {
                failures.push(fail(target.label(), format!("naga cannot write {missing:?} for this target")));
                continue;
            }
            match translate(target, &module, &info, caps) {
                Ok(entry_points) => {
                    let version = match target {
                        Target::Msl => {
                            let (major, minor) = msl_version(caps);
                            format!("MSL {major}.{minor}")
                        }
                        Target::Hlsl => format!("SM {}", hlsl_shader_model(caps).to_str()),
                        Target::Spv => {
                            let (major, minor, _) = spv_options(caps);
                            format!("SPIR-V {major}.{minor}")
                        }
                    };
                    println!("ok   {:<34} {:<16} {version:<14} {entry_points}", src.name, target.label());
                    translated += 1;
                }
                Err(e) => failures.push(fail(target.label(), e)),
            }
        }
    }
    println!(
        "{modules} modules ({} render, {} sim) x 3 targets: {translated} translated, {skipped} skipped \
         (a capability the backend never grants), {} failed",
        render.len(),
        sim.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "shaders that do not translate:\n\n{}", failures.join("\n\n"));
    // Mixed and double precision exist as modules (every one needs f64, checked above), and
    // none is written for Metal, which has no f64 (wgpu never offers SHADER_F64 there).
    assert!(f64_modules >= 4, "the simulation's mixed and double modules: {f64_modules}");
    assert_eq!(f64_kept_from_msl.len(), f64_modules, "f64 modules kept from MSL: {f64_kept_from_msl:?}");
}

/// The stems of the `.wgsl` files in `dir` (none when it does not exist), only those with a
/// `@compute` entry point when `compute_only`.
fn wgsl_stems(dir: &Path, compute_only: bool) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut stems = Vec::new();
    for entry in entries {
        let path = entry.expect("read shader directory").path();
        if path.extension().is_some_and(|e| e == "wgsl") {
            let text = std::fs::read_to_string(&path).expect("read shader");
            if !compute_only || text.contains("@compute") {
                stems.push(path.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    stems.sort();
    stems
}

/// Metal's limits hold for every compute kernel of the simulation (each entry point counts
/// only what it uses): at most 32 KiB of workgroup memory and at most 31 buffers bound to one
/// stage (`max_compute_workgroup_storage_size` and the buffer argument table on Apple GPUs).
#[test]
fn sim_kernels_fit_metals_limits() {
    let mut report = Vec::new();
    for src in sim_sources() {
        let module = naga::front::wgsl::parse_str(&src.source).expect("parses (checked by the test above)");
        let info = Validator::new(ValidationFlags::all(), naga_capabilities(src.features))
            .validate(&module)
            .expect("validates (checked by the test above)");
        for (k, ep) in module.entry_points.iter().enumerate() {
            let fi = info.get_entry_point(k);
            let (mut shared, mut buffers) = (0u32, 0u32);
            for (handle, var) in module.global_variables.iter() {
                if fi[handle].is_empty() {
                    continue;
                }
                match var.space {
                    AddressSpace::WorkGroup => shared += module.types[var.ty].inner.size(module.to_ctx()),
                    AddressSpace::Storage { .. } | AddressSpace::Uniform => buffers += 1,
                    _ => {}
                }
            }
            assert!(
                shared <= 32 * 1024,
                "{} {}: {shared} bytes of workgroup memory (Metal: 32 KiB)",
                src.name,
                ep.name
            );
            assert!(buffers <= 31, "{} {}: {buffers} buffers (Metal: 31 a stage)", src.name, ep.name);
            report.push((shared, buffers, format!("{} {}", src.name.split(": ").next().unwrap_or(""), ep.name)));
        }
    }
    report.sort();
    let (shared, buffers, name) = report.last().expect("kernels");
    println!("most workgroup memory: {name} ({shared} bytes, {buffers} buffers)");
    let most = report.iter().map(|r| r.1).max().unwrap_or(0);
    println!("most buffers in one kernel: {most}");
}
