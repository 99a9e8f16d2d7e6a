//! Every CPU path: runs the calling test binary's other tests again in child processes
//! under each code path the CPU backend has besides the one this machine picks by default
//! (`ARGON_SIMD=avx2`, `ARGON_SIMD=base`, `ARGON_CPU_CLUSTERS=0`), so the fallbacks most
//! users' CPUs take (no AVX-512) are tested on every machine CI runs on. A path the machine
//! cannot run falls back to the best it has (see `sim::cpu::simd`).

use std::process::Command;

/// Set in the children, so they do not start children of their own.
const CHILD: &str = "ARGON_CPU_PATH_CHILD";

/// The paths: (variable, value, what `run` reports for it when it names a SIMD level).
const PATHS: [(&str, &str, Option<&str>); 3] =
    [("ARGON_SIMD", "avx2", Some("AVX2")), ("ARGON_SIMD", "base", Some("baseline")), ("ARGON_CPU_CLUSTERS", "0", None)];

/// Re-runs every test of this binary whose name lacks `driver` (the calling test) under each
/// path, and asserts each child passed at least one test.
pub fn rerun_under_other_cpu_paths(driver: &str) {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    for (var, value, level) in PATHS {
        // The switch takes effect: the backend names the SIMD level it runs.
        let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        if let Some(level) = level.filter(|_| value == "base" || avx2) {
            let out = Command::new(env!("CARGO_BIN_EXE_argon-sandbox"))
                .args(["run", "--steps", "1", "--backend", "cpu"])
                .env(var, value)
                .output()
                .expect("the binary runs");
            let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && text.contains(&format!("threads, {level})")), "{var}={value}: {text}");
        }
        let out = Command::new(&exe)
            .args(["--skip", driver])
            .env(var, value)
            .env(CHILD, "1")
            .output()
            .expect("the test binary runs again");
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        eprintln!("{var}={value}: {}", text.lines().find(|l| l.starts_with("test result")).unwrap_or("no result line"));
        assert!(out.status.success(), "the tests failed under {var}={value}:\n{text}");
        let passed: usize = text
            .lines()
            .find_map(|l| l.strip_prefix("test result: ok. ")?.split(' ').next()?.parse().ok())
            .unwrap_or(0);
        assert!(passed > 0, "no test ran under {var}={value}:\n{text}");
    }
}
