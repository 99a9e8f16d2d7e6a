//! The CUDA cell kernels of kernels/cells.cu, their own source run on the CPU: tests/emu/warp.h
//! emulates the warp (one fiber per lane, collectives as barriers).
//! - The neighbour-list build (`nlist_build`): tests/emu/list_build.cpp builds the lists of a
//!   jittered FCC system and checks each against a brute-force search in f64 (the atoms in
//!   range, none twice, in stream order, the padding, and with an overflow the first
//!   `max_nbrs`, the flag and the largest count), in every precision (the box test of the f32
//!   builds included) and with 16- and 32-bit entries, walls, overflows and cells of more than
//!   32 atoms.
//! - The cell sort (`cells_sort`): tests/emu/cell_sort.cpp sorts cells of 0 to 150 atoms
//!   and checks each against `std::sort` by the same key (sub-cell then index, or the index
//!   alone past 2^26 atoms), with the atoms' data gathered along.
//!
//! So a change to either kernel is checked on a machine without a GPU; `tests/cuda.rs` checks
//! the lists' forces and the trajectories on the GPU.
//!
//! Needs a C++17 compiler (`$CXX`, else `g++`); without one the tests print a skip line and
//! pass, unless `ARGON_REQUIRE_CXX=1` (CI sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

fn compiler() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_string());
    let found = Command::new(&cxx).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("ARGON_REQUIRE_CXX").as_deref() != Ok("1"),
            "ARGON_REQUIRE_CXX=1 but no C++ compiler runs as `{cxx}` (set CXX or install g++)"
        );
        eprintln!("skipped: no C++ compiler (`{cxx}`)");
        return None;
    }
    Some(cxx)
}

/// The emulation header, the kernel sources with their includes inlined (as
/// sim::cuda::source does for NVRTC), and the harness (`tests/emu/{harness}.cpp`), as one
/// C++ file.
fn translation_unit(harness: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    let mut tu = read("tests/emu/warp.h");
    // The obstacle field and the near-surface flags, which permute_copy sets, come before.
    for f in
        ["kernels/common.cuh", "kernels/cells.cuh", "kernels/obstacles.cuh", "kernels/near.cuh", "kernels/cells.cu"]
    {
        tu.push_str(&format!("// ---- {f}\n"));
        for line in read(f).lines() {
            let t = line.trim();
            if t == "#pragma once" || t.starts_with("#include \"") {
                continue;
            }
            tu.push_str(line);
            tu.push('\n');
        }
    }
    tu.push_str(&read(&format!("tests/emu/{harness}.cpp")));
    tu
}

/// Compiles `harness` for `precision` (0 single, 1 mixed, 2 double) into a fresh folder;
/// with AddressSanitizer where the compiler has it, so an index past a shared array fails.
fn build(cxx: &str, precision: u32, harness: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("argon-{harness}-{}-{precision}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("making the harness folder");
    let src = dir.join(format!("{harness}.cpp"));
    std::fs::write(&src, translation_unit(harness)).expect("writing the harness source");
    let exe = dir.join(harness);
    let compile = |asan: bool| {
        let mut cmd = Command::new(cxx);
        cmd.args(["-std=c++17", "-O1", "-w"]);
        if asan {
            cmd.arg("-fsanitize=address");
        }
        cmd.arg(format!("-DPRECISION={precision}")).args(["-DBLOCK=128", "-DNTYPES=1"]);
        cmd.arg(&src).arg("-o").arg(&exe).output().expect("running the C++ compiler")
    };
    let out = compile(true);
    let out = if out.status.success() { out } else { compile(false) };
    assert!(out.status.success(), "the {harness} harness did not compile:\n{}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// One system: FCC cells per edge, 32-bit entries, list room, walled y, seed, jitter (sigma),
/// list range (sigma) and FCC cells along z (0: `nl`; a depth of two list cells but not three
/// is one column deep, as `CellSetup::for_lists` makes a thin slab).
struct Case {
    nl: u32,
    nz: u32,
    wide: bool,
    max_nbrs: u32,
    walls: bool,
    seed: u32,
    jitter: f64,
    range: f64,
}

/// Runs one system; returns the harness's summary line, failing on any problem it found.
fn run(exe: &Path, c: Case) -> String {
    let mut args = vec![
        c.nl.to_string(),
        (c.wide as u8).to_string(),
        c.max_nbrs.to_string(),
        (c.walls as u8).to_string(),
        c.seed.to_string(),
        c.jitter.to_string(),
        c.range.to_string(),
    ];
    if c.nz > 0 {
        args.push(c.nz.to_string());
    }
    run_harness(exe, &args, "list build")
}

/// Runs a harness with `args`; returns its summary line, failing (named `what`) with the
/// problems it printed when it exits with an error.
fn run_harness(exe: &Path, args: &[String], what: &str) -> String {
    let out = Command::new(exe).args(args).output().unwrap_or_else(|e| panic!("running the {what} harness: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let problems: Vec<&str> = stderr.lines().filter(|l| !l.contains("ASan doesn't fully support")).collect();
    assert!(out.status.success(), "{what} {args:?}: {stdout}{}", problems.join("\n"));
    stdout
}

fn overflowed(summary: &str) -> bool {
    summary.contains("overflow 1")
}

fn every_case(precision: u32) {
    let Some(cxx) = compiler() else { return };
    let exe = build(&cxx, precision, "list_build");
    let case =
        |nl, wide, max_nbrs, walls, seed, jitter, range| Case { nl, nz: 0, wide, max_nbrs, walls, seed, jitter, range };
    let slab =
        |nl, nz, wide, max_nbrs, walls, seed| Case { nl, nz, wide, max_nbrs, walls, seed, jitter: 0.5, range: 2.8 };
    // in.lj's range (2.5 + 0.3 skin) on a slightly jittered lattice: 16-bit entries.
    let s = run(&exe, case(7, false, 128, false, 1, 0.1, 2.8));
    assert!(!overflowed(&s), "{s}");
    // Walled y and liquid-like disorder.
    let s = run(&exe, case(9, false, 128, true, 2, 0.6, 2.8));
    assert!(!overflowed(&s), "{s}");
    // 32-bit entries.
    let s = run(&exe, case(8, true, 128, false, 3, 0.4, 2.8));
    assert!(!overflowed(&s), "{s}");
    // Lists too small: the first max_nbrs of each, the flag and the largest count.
    assert!(overflowed(&run(&exe, case(7, false, 40, false, 4, 0.3, 2.8))));
    assert!(overflowed(&run(&exe, case(8, true, 48, true, 5, 0.5, 2.8))));
    // Cells of about 50 atoms: each warp takes its cell's atoms in two groups of up to 32.
    let s = run(&exe, case(7, false, 232, false, 7, 0.5, 3.9));
    assert!(!overflowed(&s) && s.contains("per cell 50.8"), "{s}");
    // A thin slab (4 FCC cells, 6.7 sigma deep: two list cells, so one column): 5 x 5 x 1
    // columns of about 52 atoms (two groups a warp), every pair's minimum image along z taken
    // in the tests;
    // 16- and 32-bit entries, walled y, and an overflow.
    let s = run(&exe, slab(9, 4, false, 128, false, 8));
    assert!(!overflowed(&s) && s.contains("cells 25 per cell 51.8"), "{s}");
    let s = run(&exe, slab(9, 4, true, 128, true, 9));
    assert!(!overflowed(&s), "{s}");
    assert!(overflowed(&run(&exe, slab(9, 4, false, 40, false, 10))));
    if let Some(dir) = exe.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn single_precision_lists_match_brute_force() {
    every_case(0);
}

#[test]
fn mixed_precision_lists_match_brute_force() {
    every_case(1);
}

#[test]
fn double_precision_lists_match_brute_force() {
    every_case(2);
}

/// Runs the cell-sort harness; returns its summary line, failing on any problem it found.
fn run_sort(exe: &Path, seed: u32, large: bool) -> String {
    run_harness(exe, &[seed.to_string(), (large as u8).to_string()], "cell sort")
}

/// Every cell's atoms in key order (sub-cell, then index; the index alone past 2^26 atoms),
/// for cells of 0 to 150 atoms (one, two and five rounds of 32 keys), with f32 and f64 states.
#[test]
fn cell_sort_puts_every_cell_in_key_order() {
    let Some(cxx) = compiler() else { return };
    for precision in [0, 2] {
        let exe = build(&cxx, precision, "cell_sort");
        for (seed, large) in [(1, false), (2, false), (3, true)] {
            let s = run_sort(&exe, seed, large);
            assert!(s.contains("largest 150") && s.contains("problems 0"), "{s}");
        }
        if let Some(dir) = exe.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
