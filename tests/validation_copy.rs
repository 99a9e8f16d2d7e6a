//! The copy of the validation data kept in `tests/data/validation` (used where the project's
//! `../shared/validation` is absent, as on a fresh CI clone) is identical to the shared one.

use std::path::Path;

#[test]
fn vendored_validation_data_matches_the_shared_originals() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let vendored = root.join("tests/data/validation");
    let names = ["lammps_reference.json", "lammps_fcc4000_T1.44_initial.extxyz", "jzg1993_eos.csv", "README.md"];
    for name in names {
        assert!(vendored.join(name).is_file(), "{name} is missing from tests/data/validation");
    }
    let shared = root.join("../shared/validation");
    if !shared.is_dir() {
        eprintln!("skipped comparison: ../shared/validation is not present on this machine");
        return;
    }
    for name in names {
        let a = std::fs::read(vendored.join(name)).unwrap();
        let b = std::fs::read(shared.join(name)).unwrap();
        assert!(a == b, "tests/data/validation/{name} differs from ../shared/validation/{name}: copy it again");
    }
}
