//! Every CPU path: runs the calling test binary's other tests again in child processes
//! under each code path the CPU backend has besides the one this machine picks by default
//! (`ARGON_SIMD=avx2`, `ARGON_SIMD=base`, `ARGON_CPU_CLUSTERS=0`), so the fallbacks most
//! users' CPUs take (no AVX-512) are tested on every machine CI runs on. A path the machine
//! cannot run falls back to the best it has (see `sim::cpu::simd`). Each path is first
//! checked to be the one asked for: the SIMD level the backend names, and for single
//! precision the pair search (`ARGON_SIMD=avx2` keeps the cluster-pair list, with its AVX2
//! loop; the baseline and `ARGON_CPU_CLUSTERS=0` take the per-atom list).

use std::process::Command;

/// Set in the children, so they do not start children of their own.
const CHILD: &str = "ARGON_CPU_PATH_CHILD";

/// The paths: (variable, value, what `run` reports for it when it names a SIMD level,
/// whether single precision takes the cluster-pair list there when the CPU has the level).
const PATHS: [(&str, &str, Option<&str>, bool); 3] = [
    ("ARGON_SIMD", "avx2", Some("AVX2"), true),
    ("ARGON_SIMD", "base", Some("baseline"), false),
    ("ARGON_CPU_CLUSTERS", "0", None, false),
];

/// Re-runs every test of this binary whose name lacks `driver` (the calling test) under each
/// path, and asserts each child passed at least one test.
pub fn rerun_under_other_cpu_paths(driver: &str) {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
    for (var, value, level, clusters) in PATHS {
        // The switch takes effect: the backend names the SIMD level it runs.
        if let Some(level) = level.filter(|_| value == "base" || avx2) {
            let text = run_with(var, value, &["run", "--steps", "1", "--backend", "cpu"]);
            assert!(text.contains(&format!("threads, {level})")), "{var}={value}: {text}");
        }
        // And the pair search: single precision on a small in.lj system.
        let bench =
            ["bench", "--backend", "cpu", "--precision", "single", "--n", "500", "--warmup", "0", "--steps", "1"];
        let text = run_with(var, value, &bench);
        let search = if clusters && avx2 { "cluster-pair list" } else { "neighbour list" };
        assert!(text.contains(&format!("; {search}")), "{var}={value}: not the {search}: {text}");
        let out = Command::new(&exe)
            .args(["--skip", driver])
            .env(var, value)
            .env(CHILD, "1")
            .output()
            .expect("the test binary runs again");
        let text = super::output_text(&out);
        eprintln!("{var}={value}: {}", text.lines().find(|l| l.starts_with("test result")).unwrap_or("no result line"));
        assert!(out.status.success(), "the tests failed under {var}={value}:\n{text}");
        let passed: usize = text
            .lines()
            .find_map(|l| l.strip_prefix("test result: ok. ")?.split(' ').next()?.parse().ok())
            .unwrap_or(0);
        assert!(passed > 0, "no test ran under {var}={value}:\n{text}");
    }
}

/// The binary's output (stdout, then stderr) for `args` with `var=value` (`ARGON_BIN` where
/// set, as on the GPU machine); panics unless it succeeded.
fn run_with(var: &str, value: &str, args: &[&str]) -> String {
    let bin = std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string());
    let out = Command::new(bin).args(args).env(var, value).output().expect("the binary runs");
    let text = super::output_text(&out);
    assert!(out.status.success(), "{var}={value} {args:?}: {text}");
    text
}
