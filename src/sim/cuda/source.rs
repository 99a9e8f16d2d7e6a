//! The CUDA kernel sources (`kernels/*.cu`, `kernels/*.cuh`), embedded in the binary and
//! compiled at run time by NVRTC for the device's architecture, with precision, block size
//! and species count as compile-time constants. Owns source assembly and compilation only.

use crate::physics::real::Precision;

/// (file name, text) of every kernel source, in the order they are concatenated.
const SOURCES: [(&str, &str); 28] = [
    ("common.cuh", include_str!("../../../kernels/common.cuh")),
    ("cells.cuh", include_str!("../../../kernels/cells.cuh")),
    ("lj.cuh", include_str!("../../../kernels/lj.cuh")),
    ("wall.cuh", include_str!("../../../kernels/wall.cuh")),
    ("obstacles.cuh", include_str!("../../../kernels/obstacles.cuh")),
    ("bodies.cuh", include_str!("../../../kernels/bodies.cuh")),
    ("rng.cuh", include_str!("../../../kernels/rng.cuh")),
    ("reduce.cuh", include_str!("../../../kernels/reduce.cuh")),
    ("binsum.cuh", include_str!("../../../kernels/binsum.cuh")),
    ("integrate.cuh", include_str!("../../../kernels/integrate.cuh")),
    ("dye.cuh", include_str!("../../../kernels/dye.cuh")),
    ("near.cuh", include_str!("../../../kernels/near.cuh")),
    ("surface.cuh", include_str!("../../../kernels/surface.cuh")),
    ("integrate.cu", include_str!("../../../kernels/integrate.cu")),
    ("forces.cu", include_str!("../../../kernels/forces.cu")),
    ("near.cu", include_str!("../../../kernels/near.cu")),
    ("surface.cu", include_str!("../../../kernels/surface.cu")),
    ("cells.cu", include_str!("../../../kernels/cells.cu")),
    ("analysis.cu", include_str!("../../../kernels/analysis.cu")),
    ("rdf.cu", include_str!("../../../kernels/rdf.cu")),
    ("piston.cu", include_str!("../../../kernels/piston.cu")),
    ("fields.cu", include_str!("../../../kernels/fields.cu")),
    ("flow_profile.cu", include_str!("../../../kernels/flow_profile.cu")),
    ("bodies.cu", include_str!("../../../kernels/bodies.cu")),
    ("tunnel.cu", include_str!("../../../kernels/tunnel.cu")),
    ("transport.cu", include_str!("../../../kernels/transport.cu")),
    ("stress.cu", include_str!("../../../kernels/stress.cu")),
    ("dye.cu", include_str!("../../../kernels/dye.cu")),
];

/// Every kernel entry point, for loading and for error messages.
pub const KERNELS: [&str; 29] = [
    "integrate_first",
    "integrate_second",
    "integrate_fused",
    "finish_step",
    "scale_velocities",
    "forces_allpairs_global_noev",
    "forces_allpairs_global_ev",
    "forces_allpairs_global_stress",
    "forces_allpairs_tiled_noev",
    "forces_allpairs_tiled_ev",
    "forces_allpairs_tiled_stress",
    "forces_cells_noev",
    "forces_cells_ev",
    "forces_cells_stress",
    "forces_neighbors_noev",
    "forces_neighbors_ev",
    "forces_neighbors_stress",
    "cells_bin",
    "cells_scan_blocks",
    "cells_scan_top",
    "cells_scan_add",
    "cells_scatter",
    "cells_sort",
    "permute_copy",
    "nlist_build",
    "rebuild_done",
    "hist_pairs",
    "hist_speed",
    "hist_height",
];

/// The g(r) kernels beyond `hist_pairs` (`kernels/rdf.cu`).
pub const RDF_KERNELS: [&str; 3] = ["rdf_bin", "rdf_scatter", "rdf_cells"];

/// Kernels beyond [`KERNELS`] (kept separate so the array length stays readable).
pub const EXTRA_KERNELS: [&str; 32] = [
    "surface_pass",
    "obstacle_pass",
    "publish",
    "near_pass",
    "nlist_build_wide",
    "nlist_build_column",
    "nlist_build_wide_column",
    "cells_scan_single",
    "forces_neighbors_step",
    "step_tick",
    "allpairs_finish_noev",
    "allpairs_finish_ev",
    "allpairs_finish_stress",
    "piston_latch",
    "piston_step",
    "fields_sample",
    "flow_bins_clear",
    "flow_bins_sum",
    "flow_bins_reduce",
    "flow_bins_record",
    "scale_relative",
    "bodies_latch",
    "tunnel_zone",
    "integrate_second_zone",
    "integrate_fused_zone",
    "tunnel_latch",
    "transport_init",
    "transport_sample",
    "transport_reduce",
    "stress_kinetic",
    "stress_finish",
    "dye_step",
];

/// The conditional-node kernel (`kernels/graph.cu`), compiled as a module of its own.
pub const GRAPH_SOURCE: &str = include_str!("../../../kernels/graph.cu");

/// Compiles the conditional-node kernel to PTX for `arch`.
pub fn compile_graph_kernel(arch: (i32, i32)) -> Result<cudarc::nvrtc::Ptx, String> {
    let opts = cudarc::nvrtc::CompileOptions {
        options: vec![format!("--gpu-architecture=compute_{}{}", arch.0, arch.1), "--std=c++17".to_string()],
        name: Some("argon_graph.cu".to_string()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(GRAPH_SOURCE, opts).map_err(|e| format!("NVRTC (graph kernel): {e:?}"))
}

/// One translation unit: the sources with each `#include "x"` replaced by x's text, once.
pub fn translation_unit() -> String {
    let mut out = String::new();
    let mut included: Vec<&str> = Vec::new();
    for (name, _) in SOURCES {
        append(name, &mut out, &mut included);
    }
    out
}

fn append<'a>(name: &'a str, out: &mut String, included: &mut Vec<&'a str>) {
    if included.contains(&name) {
        return;
    }
    included.push(name);
    let Some((_, text)) = SOURCES.iter().find(|(n, _)| *n == name) else {
        return;
    };
    out.push_str(&format!("// ---- {name}\n"));
    for line in text.lines() {
        let t = line.trim();
        if t == "#pragma once" {
            continue;
        }
        if let Some(rest) = t.strip_prefix("#include \"") {
            let dep = rest.trim_end_matches('"');
            if let Some((n, _)) = SOURCES.iter().find(|(n, _)| *n == dep) {
                append(n, out, included);
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
}

/// NVRTC options for a module variant.
pub fn options(precision: Precision, block: u32, n_types: usize, arch: (i32, i32)) -> Vec<String> {
    let p = match precision {
        Precision::Single => 0,
        Precision::Mixed => 1,
        Precision::Double => 2,
    };
    let mut opts = vec![
        format!("-DPRECISION={p}"),
        format!("-DBLOCK={block}"),
        format!("-DNTYPES={n_types}"),
        format!("--gpu-architecture=compute_{}{}", arch.0, arch.1),
        "--std=c++17".to_string(),
    ];
    opts.extend(extra_options());
    opts
}

/// `ARGON_NVRTC_OPTIONS`: more NVRTC options, whitespace-separated, for tuning the kernels'
/// compile-time knobs on a machine without a rebuild (`-DNAME=value ...`); only
/// `-D` definitions are taken.
fn extra_options() -> Vec<String> {
    std::env::var("ARGON_NVRTC_OPTIONS").map(|v| definitions_in(&v)).unwrap_or_default()
}

/// The `-D` definitions among whitespace-separated options.
fn definitions_in(options: &str) -> Vec<String> {
    options.split_whitespace().filter(|o| o.starts_with("-D")).map(str::to_string).collect()
}

/// Compiles the kernels to PTX. Errors carry NVRTC's log.
pub fn compile(
    precision: Precision,
    block: u32,
    n_types: usize,
    arch: (i32, i32),
) -> Result<cudarc::nvrtc::Ptx, String> {
    let opts = cudarc::nvrtc::CompileOptions {
        options: options(precision, block, n_types, arch),
        name: Some("argon_kernels.cu".to_string()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(translation_unit(), opts).map_err(|e| match e {
        cudarc::nvrtc::CompileError::CompileError { log, options, .. } => format!(
            "NVRTC could not compile the kernels ({}) with {}:\n{}",
            precision.name(),
            options.join(" "),
            log.to_string_lossy()
        ),
        other => format!("NVRTC failed: {other:?}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether NVRTC can be loaded; without it the compile tests print a skip line and pass,
    /// unless `ARGON_REQUIRE_NVRTC=1` (CI sets it, with NVRTC from PyPI on the library path,
    /// so a kernel that does not compile fails CI on a machine without a GPU).
    fn nvrtc_present() -> bool {
        // SAFETY: only probes whether the library can be loaded.
        let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
        if !present {
            assert!(
                std::env::var("ARGON_REQUIRE_NVRTC").as_deref() != Ok("1"),
                "ARGON_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (is its folder on LD_LIBRARY_PATH?)"
            );
            eprintln!("skipped: no NVRTC library");
        }
        present
    }

    /// Compiles every variant when NVRTC is available (no GPU needed).
    #[test]
    fn kernels_compile_with_nvrtc() {
        if !nvrtc_present() {
            return;
        }
        for precision in Precision::ALL {
            for (block, types) in [(128, 1), (96, 1), (1024, 2)] {
                if let Err(e) = compile(precision, block, types, (9, 0)) {
                    panic!("{e}");
                }
            }
        }
        if let Err(e) = compile_graph_kernel((9, 0)) {
            panic!("{e}");
        }
    }

    /// A compile error comes back with NVRTC's log (here: an impossible block size).
    #[test]
    fn compile_errors_carry_the_nvrtc_log() {
        if !nvrtc_present() {
            return;
        }
        let e = compile(Precision::Double, 0, 1, (9, 0)).unwrap_err();
        assert!(e.contains("NVRTC could not compile") && e.contains("error"), "{e}");
    }

    /// The tuning knob passes definitions only (no architecture or optimisation flags).
    #[test]
    fn the_tuning_knob_takes_definitions_only() {
        assert_eq!(definitions_in("  -DA=1 --use_fast_math -DB\t-arch=sm_50 "), ["-DA=1", "-DB"]);
        assert!(definitions_in("").is_empty());
    }

    #[test]
    fn includes_are_inlined_once() {
        let tu = translation_unit();
        assert_eq!(tu.matches("struct Consts {").count(), 1);
        assert!(!tu.contains("#include \""));
        for k in KERNELS.iter().chain(EXTRA_KERNELS.iter()).chain(RDF_KERNELS.iter()) {
            let name = k.trim_end_matches("_noev").trim_end_matches("_ev").trim_end_matches("_stress");
            assert!(tu.contains(name), "{k} is not in the sources");
        }
    }
}
