//! Trajectories leave exactly: `run --xyz/--dump` writes a frame at step 0 and every K steps;
//! ASE reads our extended XYZ (positions, velocities, cell, pbc, species, step) bit for bit;
//! LAMMPS's `read_dump` reads our dump bit for bit on the system of an exported deck. The
//! Python checks need `ARGON_PYTHON` (see `common/python.rs`).

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use argon_sandbox::export::lammps::{ExportInput, LammpsUnits, build_deck, write_deck};
use argon_sandbox::io::trajectory::{TrajectoryFormat, TrajectoryWriter};
use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::scene::{Scene, SimSetup};
use argon_sandbox::sim::{BackendChoice, Snapshot, open_backend};
use argon_sandbox::units::UnitSystem;
use common::python::{python, run_json};
use common::temp_dir;

const TANK: &str = r#"(
    version: 1, name: "tank",
    box: (size: (14.0, 12.0, 6.0), boundaries: (Wall, Wall, Periodic)),
    temperature_k: 130.0,
    thermostat: Csvr(tau: 0.5),
    forces: (gravity: 0.02),
    atoms: [Lattice(kind: Fcc, density: 0.5)],
    obstacles: [Circle(centre: (7.0, 6.0), radius: 1.5)],
    seed: 9,
)"#;

fn setup() -> SimSetup {
    Scene::from_str(TANK, "tank").unwrap().build().unwrap()
}

/// Three snapshots 20 steps apart, written to `path` in `format` and `units`.
fn write_frames(path: &Path, format: TrajectoryFormat, units: UnitSystem) -> Vec<Snapshot> {
    let s = setup();
    let field = ObstacleField::bake(&s.shapes, &s.sim_box, 0.1).map(Arc::new);
    let (mut sim, _) = open_backend(BackendChoice::Cpu, s.sim_box, s.params.clone(), &s.atoms, field).unwrap();
    let mut w = TrajectoryWriter::create(path, format, units, vec!["Ar".into()], vec![1.0]).unwrap();
    let mut snaps = Vec::new();
    for _ in 0..3 {
        let snap = sim.snapshot().unwrap();
        w.write(&snap).unwrap();
        snaps.push(snap);
        sim.advance(20).unwrap();
    }
    assert!(!path.exists(), "the trajectory appeared before it was finished");
    w.finish().unwrap();
    snaps
}

fn floats(v: &serde_json::Value) -> Vec<[f64; 3]> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let r = r.as_array().unwrap();
            [r[0].as_f64().unwrap(), r[1].as_f64().unwrap(), r[2].as_f64().unwrap()]
        })
        .collect()
}

#[test]
fn ase_reads_our_extended_xyz_exactly() {
    let Some(py) = python() else { return };
    let dir = temp_dir("traj-ase");
    let path = dir.join("t.xyz");
    let snaps = write_frames(&path, TrajectoryFormat::ExtXyz, UnitSystem::Lj);
    let got = run_json(&py, "python/ase_read.py", &[path.as_os_str()]);
    let frames = got.as_array().unwrap();
    assert_eq!(frames.len(), snaps.len());
    for (f, s) in frames.iter().zip(&snaps) {
        assert_eq!(f["step"].as_u64().unwrap(), s.step);
        assert_eq!(floats(&f["positions"]), s.atoms.positions, "positions at step {}", s.step);
        assert_eq!(floats(&f["velo"]), s.atoms.velocities, "velocities at step {}", s.step);
        // ASE's own velocities: momenta / masses, the reduced velocities exactly (m = 1).
        assert_eq!(floats(&f["velocities"]), s.atoms.velocities, "get_velocities() at step {}", s.step);
        let cell = floats(&f["cell"]);
        let len = s.sim_box.length();
        assert_eq!(cell, vec![[len[0], 0.0, 0.0], [0.0, len[1], 0.0], [0.0, 0.0, len[2]]]);
        let pbc: Vec<bool> = f["pbc"].as_array().unwrap().iter().map(|b| b.as_bool().unwrap()).collect();
        assert_eq!(pbc, s.sim_box.periodic.to_vec());
        assert!(f["symbols"].as_array().unwrap().iter().all(|x| x == "Ar"));
    }
    // The frames differ: the check covers a moving system.
    assert_ne!(snaps[0].atoms.positions, snaps[2].atoms.positions);
    let _ = std::fs::remove_dir_all(&dir);
}

/// In argon units (`units=metal`: Å, Å/ps, u) ASE's `get_velocities()` is the velocity in
/// ASE's units (Å per ASE time unit) and its masses are argon's, so
/// `get_velocities() / ASE_TIME_PS` is the `velo` column in Å/ps, to round-off.
#[test]
fn ase_gets_our_velocities_in_its_own_units() {
    use argon_sandbox::io::extxyz::ASE_TIME_PS;
    use argon_sandbox::units::{ARGON_MASS_U, ARGON_SIGMA_ANGSTROM, argon_tau_ps};
    let Some(py) = python() else { return };
    let dir = temp_dir("traj-ase-metal");
    let path = dir.join("t.xyz");
    let snaps = write_frames(&path, TrajectoryFormat::ExtXyz, UnitSystem::Argon);
    let got = run_json(&py, "python/ase_read.py", &[path.as_os_str()]);
    let speed = ARGON_SIGMA_ANGSTROM / argon_tau_ps();
    for (f, s) in got.as_array().unwrap().iter().zip(&snaps) {
        assert!(f["masses"].as_array().unwrap().iter().all(|m| m.as_f64() == Some(ARGON_MASS_U)));
        let velo = floats(&f["velo"]);
        let ase = floats(&f["velocities"]);
        assert_eq!(velo.len(), s.atoms.len());
        let mut worst = 0.0f64;
        for ((a, v), w) in ase.iter().zip(&velo).zip(&s.atoms.velocities) {
            for k in 0..3 {
                assert!((v[k] - w[k] * speed).abs() <= 1e-12 * (w[k] * speed).abs().max(1e-300));
                worst = worst.max((a[k] / ASE_TIME_PS - v[k]).abs() / v[k].abs().max(1e-3));
            }
        }
        assert!(worst < 1e-12, "get_velocities() / ASE_TIME_PS differs from velo by {worst:e} (relative)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lammps_reads_our_dump_exactly() {
    let Some(py) = python() else { return };
    let dir = temp_dir("traj-dump");
    let path = dir.join("t.dump");
    let snaps = write_frames(&path, TrajectoryFormat::LammpsDump, UnitSystem::Lj);
    let s = setup();
    let deck = build_deck(&ExportInput {
        sim_box: &s.sim_box,
        params: &s.params,
        atoms: &s.atoms,
        shapes: &s.shapes,
        source: "trajectories test",
        units: LammpsUnits::Lj,
        rakes: 0,
        steps: 0,
        thermo_every: 1,
    })
    .unwrap();
    write_deck(&dir, &deck).unwrap();
    let steps: Vec<String> = snaps.iter().map(|s| s.step.to_string()).collect();
    let mut args = vec![dir.as_os_str(), path.as_os_str()];
    args.extend(steps.iter().map(|s| std::ffi::OsStr::new(s.as_str())));
    let got = run_json(&py, "lammps/read_dump.py", &args);
    for (f, s) in got.as_array().unwrap().iter().zip(&snaps) {
        assert_eq!(floats(&f["x"]), s.atoms.positions, "positions at step {}", s.step);
        assert_eq!(floats(&f["v"]), s.atoms.velocities, "velocities at step {}", s.step);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Parses the TIMESTEP lines and atom counts of a LAMMPS dump.
fn dump_frames(text: &str) -> Vec<(u64, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i] == "ITEM: TIMESTEP" {
            let step = lines[i + 1].parse().unwrap();
            let n = lines[i + 3].parse().unwrap();
            out.push((step, n));
            i += 9 + n;
        } else {
            panic!("unexpected line {i}: {}", lines[i]);
        }
    }
    out
}

#[test]
fn run_writes_xyz_and_dump_every_k_steps() {
    let dir = temp_dir("traj-run");
    let scene = dir.join("tank.ron");
    std::fs::write(&scene, TANK).unwrap();
    let (xyz, dump) = (dir.join("t.xyz"), dir.join("t.dump"));
    let bin = std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string());
    let out = Command::new(bin)
        .arg("run")
        .arg(&scene)
        .args(["--steps", "50", "--backend", "cpu", "--units", "argon", "--quiet"])
        .arg("--xyz")
        .arg(&xyz)
        .args(["--xyz-every", "20", "--dump"])
        .arg(&dump)
        .args(["--dump-every", "10"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&dump).unwrap();
    let frames = dump_frames(&text);
    let n = setup().atoms.len();
    assert_eq!(frames, (0..=5).map(|k| (10 * k, n)).collect::<Vec<_>>());
    // Argon units: the box is in Å.
    assert!(text.contains(&format!("0.0 {:?}", 14.0 * argon_sandbox::units::ARGON_SIGMA_ANGSTROM)), "{}", &text[..300]);
    let first = argon_sandbox::io::extxyz::read_extxyz(&xyz).unwrap();
    assert_eq!(first.units.as_deref(), Some("metal"));
    let xyz_text = std::fs::read_to_string(&xyz).unwrap();
    let steps: Vec<&str> =
        xyz_text.match_indices("Step=").map(|(i, _)| xyz_text[i + 5..].split(' ').next().unwrap()).collect();
    assert_eq!(steps, ["0", "20", "40"]);
    // Same file for both is refused.
    let bad = Command::new(env!("CARGO_BIN_EXE_argon-sandbox"))
        .arg("run")
        .arg(&scene)
        .args(["--steps", "5", "--backend", "cpu", "--quiet", "--xyz"])
        .arg(&xyz)
        .arg("--dump")
        .arg(&xyz)
        .output()
        .unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("same file"));
    let _ = std::fs::remove_dir_all(&dir);
}
