//! The command line end to end: the LAMMPS 200-step NVE trajectory reproduced through
//! `run --init ... --units lj` to 1e-10 relative on every thermo row, thermo and trajectory
//! files in argon units, blow-ups stopped with a clear error, and a table of bad flags each
//! giving its expected message (never a panic).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use argon_sandbox::io::extxyz::read_extxyz;
use argon_sandbox::io::thermo::read_thermo_csv;
use common::{reference, rel, validation_dir};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_argon-sandbox"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("argon-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn init_file() -> String {
    validation_dir().join("lammps_fcc4000_T1.44_initial.extxyz").to_string_lossy().into_owned()
}

#[test]
fn lammps_nve_trajectory_through_the_cli() {
    let r = reference();
    let rows = r["nve_trajectory_fcc4000"]["rows"].as_array().unwrap();
    let dir = scratch("lammps");
    for algorithm in ["neighbors", "cells", "allpairs-tiled"] {
        let csv = dir.join(format!("{algorithm}.csv"));
        let out = run(&[
            "run",
            "--init",
            &init_file(),
            "--units",
            "lj",
            "--steps",
            "200",
            "--thermo",
            csv.to_str().unwrap(),
            "--thermo-every",
            "50",
            "--precision",
            "double",
            "--algorithm",
            algorithm,
            "--backend",
            "cpu",
            "--quiet",
        ]);
        assert!(out.status.success(), "{}", text(&out));
        let got = read_thermo_csv(&csv).unwrap();
        assert_eq!(got.len(), rows.len(), "{algorithm}: a row at step 0 and every 50 steps");
        for (g, want) in got.iter().zip(rows) {
            assert_eq!(g.step, want["step"].as_u64().unwrap());
            for col in ["temp", "pe", "ke", "etotal", "press"] {
                let (a, b) = (g.get(col).unwrap(), want[col].as_f64().unwrap());
                assert!(rel(a, b) < 1e-10, "{algorithm} step {} {col}: {a} vs LAMMPS {b}", g.step);
            }
        }
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn argon_units_thermo_and_trajectory() {
    let dir = scratch("argon");
    let (csv, xyz) = (dir.join("thermo.csv"), dir.join("traj.xyz"));
    let out = run(&[
        "run",
        "--steps",
        "40",
        "--thermo",
        csv.to_str().unwrap(),
        "--thermo-every",
        "20",
        "--xyz",
        xyz.to_str().unwrap(),
        "--xyz-every",
        "20",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let rows = read_thermo_csv(&csv).unwrap();
    assert_eq!(rows.iter().map(|r| r.step).collect::<Vec<_>>(), vec![0, 20, 40]);
    let t = rows[0].get("temperature_K").expect("argon columns carry units");
    assert!((60.0..120.0).contains(&t), "the default scene is liquid argon near 90 K, got {t}");
    assert!(rows[0].get("pressure_MPa").is_some() && rows[0].get("pe_kJ_per_mol").is_some());
    let frame = read_extxyz(&xyz).unwrap();
    assert_eq!(frame.units.as_deref(), Some("metal"));
    let l = frame.sim_box.length();
    assert!(l[0] > 100.0, "positions and box are in ångström: {l:?}");
    assert!(frame.velocities.is_some());
    let frames = std::fs::read_to_string(&xyz).unwrap().matches("Lattice=").count();
    assert_eq!(frames, 3);
    std::fs::remove_dir_all(dir).ok();
}

fn write(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
}

#[test]
fn blow_up_is_stopped_with_the_step_and_a_fix() {
    let dir = scratch("blowup");
    let xyz = dir.join("overlap.xyz");
    write(
        &xyz,
        "3\nLattice=\"8 0 0 0 8 0 0 0 8\" Properties=species:S:1:pos:R:3 pbc=\"T T T\" units=lj\n\
         Ar 1.0 1.0 1.0\nAr 1.05 1.0 1.0\nAr 4.0 4.0 4.0\n",
    );
    let out = run(&["run", "--init", xyz.to_str().unwrap(), "--units", "lj", "--steps", "100", "--quiet"]);
    let msg = text(&out);
    assert!(!out.status.success(), "{msg}");
    assert!(msg.contains("blew up at step"), "{msg}");
    assert!(msg.contains("smaller time step"), "{msg}");
    assert!(!msg.contains("panicked"), "{msg}");
    std::fs::remove_dir_all(dir).ok();
}

/// A mixture from `--init` (catalogue species by symbol): the trajectories keep the names and
/// type numbers, generated velocities follow each mass, the LAMMPS deck of the mixture preset
/// has one mass per type and a `pair_coeff` per type pair; an unknown species is refused.
#[test]
fn mixtures_from_init_files_keep_their_species() {
    let dir = scratch("mixture");
    let xyz = dir.join("mix.xyz");
    write(
        &xyz,
        "4\nLattice=\"8 0 0 0 8 0 0 0 8\" Properties=species:S:1:pos:R:3 pbc=\"T T T\" units=lj\n\
         Kr 1.0 1.0 1.0\nAr 3.0 1.0 1.0\nXe 1.0 4.0 4.0\nKr 5.0 5.0 5.0\n",
    );
    let (out_xyz, dump) = (dir.join("out.xyz"), dir.join("out.dump"));
    let out = run(&[
        "run",
        "--init",
        xyz.to_str().unwrap(),
        "--units",
        "lj",
        "--steps",
        "20",
        "--xyz",
        out_xyz.to_str().unwrap(),
        "--xyz-every",
        "10",
        "--dump",
        dump.to_str().unwrap(),
        "--dump-every",
        "10",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let frame = read_extxyz(&out_xyz).unwrap();
    assert_eq!(frame.species, ["Kr", "Ar", "Xe", "Kr"]);
    let dump_text = std::fs::read_to_string(&dump).unwrap();
    let atoms: Vec<&str> = dump_text.lines().skip_while(|l| !l.starts_with("ITEM: ATOMS")).skip(1).take(4).collect();
    let types: Vec<&str> = atoms.iter().map(|l| l.split_whitespace().nth(1).unwrap()).collect();
    // Types in order of first appearance: Kr 1, Ar 2, Xe 3.
    assert_eq!(types, ["1", "2", "3", "1"], "{dump_text}");
    // An unknown species names itself, the atom and the catalogue.
    write(&xyz, "1\nLattice=\"8 0 0 0 8 0 0 0 8\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\nHe 1 1 1\n");
    let out = run(&["run", "--init", xyz.to_str().unwrap(), "--steps", "1", "--quiet"]);
    let msg = text(&out);
    assert!(!out.status.success() && msg.contains("atom 1 is `He`") && msg.contains("`Kr`"), "{msg}");
    assert!(!msg.contains("panicked"), "{msg}");
    // The LAMMPS deck of the mixture preset.
    let deck = dir.join("deck");
    let preset = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/ar_kr_mixture.ron");
    let out = run(&["export-lammps", preset.to_str().unwrap(), "--out", deck.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out));
    let data = std::fs::read_to_string(deck.join("data.argon")).unwrap();
    assert!(data.contains("2 atom types") && data.contains("# Kr"), "{data}");
    let input = std::fs::read_to_string(deck.join("in.argon")).unwrap();
    for pair in ["pair_coeff      1 1 ", "pair_coeff      1 2 ", "pair_coeff      2 2 "] {
        assert!(input.contains(pair), "{pair} missing:\n{input}");
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn bad_flags_give_clear_errors() {
    let dir = scratch("flags");
    let missing = dir.join("missing.ron");
    let bad_scene = dir.join("bad.ron");
    write(&bad_scene, "(version: 1, bogus: 3)");
    let init = init_file();
    let dir_str = dir.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--steps", "10", "--dt", "500"], "--dt"),
        (vec!["run", "--steps", "10", "--units", "lj", "--dt", "-0.1"], "dt"),
        (vec!["run", "--steps", "10", "--units", "lj", "--temperature", "0"], "--temperature"),
        (vec!["run", "--steps", "10", "--init", &init, "--units", "lj", "--cutoff", "9"], "half the periodic box"),
        (vec!["run", "--steps", "10", "--ensemble", "nose"], "invalid value 'nose'"),
        (vec!["run", "--steps", "10", "--thermo-every", "0"], "--thermo-every"),
        (vec!["run", "--steps", "10", "--xyz-every", "0"], "--xyz-every"),
        (vec!["run", "--steps", "-5"], "invalid value '-5'"),
        (vec!["run"], "--steps"),
        (vec!["run", "--steps", "10", "--precision", "quad"], "invalid value 'quad'"),
        (vec!["run", "--steps", "10", "--units", "lj", "--ensemble", "csvr", "--tau", "0.0001"], "--tau"),
        (vec!["run", "--steps", "10", "--init", "/no/such/file.xyz"], "/no/such/file.xyz"),
        (vec!["run", missing.to_str().unwrap(), "--steps", "10"], "missing.ron"),
        (vec!["run", bad_scene.to_str().unwrap(), "--steps", "10"], "bogus"),
        (vec!["run", "--steps", "10", "--backend", "cuda"], "CUDA"),
        (vec!["bench", "--steps", "0"], "--steps"),
        (vec!["bench", "--algorithm", "fastest"], "invalid value 'fastest'"),
        (vec!["--threads", "0", "bench"], "--threads"),
        (vec!["--backend", "cpu", "run", "--steps", "5"], "--backend belongs to the desktop app"),
        (vec!["bench", "--render", "--size", "5x0"], "--size 5x0"),
        (vec!["record", "--out", "a.gif", "--size", "abc"], "WIDTHxHEIGHT"),
        (vec!["record", "--out", "a.mp4", "--size", "641x360"], "even width and height"),
        (vec!["record", "--out", "a.avi"], "use a .mp4 or .gif file"),
        (vec!["record", "--out", "a.gif", "--frames", "0"], "--frames"),
        (vec!["record", "--out", "a.gif", "--steps-per-frame", "0"], "--steps-per-frame"),
        (vec!["record", "--out", "a.gif", "--radius=-1"], "--radius"),
        (vec!["record", "--out", "a.mp4", "--fps", "0"], "--fps"),
        (vec!["record", "--out", "a.gif", "--colour", "rainbow"], "invalid value 'rainbow'"),
        (vec!["record", missing.to_str().unwrap(), "--out", "a.gif"], "missing.ron"),
        // The app's flags are checked before any window opens.
        (vec![missing.to_str().unwrap()], "missing.ron"),
        (vec![bad_scene.to_str().unwrap()], "bogus"),
        (vec!["--atoms", "5"], "--atoms 5"),
        (vec!["--exit-after-frames", "0"], "--exit-after-frames"),
        (vec!["--screenshot", "x.png"], "--exit-after-frames"),
        (vec!["--backend", "gpu"], "invalid value 'gpu'"),
        (vec!["bench", "--interactive", "--render"], "cannot be used with"),
        (vec!["bench", "--interactive", "--max-fps=-1"], "--max-fps"),
        (vec!["bench", "--interactive", "--steps-per-frame", "0"], "--steps-per-frame"),
        (vec!["bench", "--interactive", "--size", "0x10"], "--size 0x10"),
        (vec!["bench", "--interactive", "--flow-view", "--layer", "swirl"], "--layer \"swirl\": no such field layer"),
        (vec!["bench", "--interactive", "--layer", "dye"], "--flow-view"),
        (vec!["bench", "--interactive", "--replay", "rewind"], "invalid value 'rewind'"),
        (vec!["bench", "--scene", missing.to_str().unwrap(), "--backend", "cpu"], "missing.ron"),
        (vec!["bench", "--scene", bad_scene.to_str().unwrap(), "--backend", "cpu"], "bogus"),
        (vec!["bench", "--scene", "default", "--n", "3", "--backend", "cpu"], "--n 3"),
        (vec!["bench", "--scene", "default", "--publish"], "cannot be used with"),
        (vec!["bench", "--backend", "cpu", "--skin", "5"], "--skin"),
        (vec!["run", "--steps", "10", "--dump-every", "0"], "--dump-every"),
        (vec!["export-lammps"], "--out"),
        (vec!["export-lammps", missing.to_str().unwrap(), "--out", dir_str], "missing.ron"),
        (vec!["export-lammps", bad_scene.to_str().unwrap(), "--out", dir_str], "bogus"),
        (vec!["export-lammps", "--out", dir_str, "--units", "si"], "invalid value 'si'"),
        (vec!["export-lammps", "--out", dir_str, "--thermo-every", "0"], "--thermo-every"),
        (vec!["export-lammps", "--out", bad_scene.to_str().unwrap()], "writing the deck into"),
    ];
    for (args, expect) in cases {
        let out = run(&args);
        let msg = text(&out);
        assert!(!out.status.success(), "{args:?} should fail: {msg}");
        assert!(msg.contains(expect), "{args:?}: expected `{expect}` in: {msg}");
        assert!(!msg.contains("panicked"), "{args:?} panicked: {msg}");
    }
    std::fs::remove_dir_all(dir).ok();
}

/// More atoms than the CPU budget (`ARGON_CPU_MEMORY_MB`, else what the system has free) are
/// refused before anything is allocated, with the largest N that fits; that N then runs.
#[test]
fn too_many_atoms_for_the_cpu_budget_are_refused_with_the_largest_that_fits() {
    let preset = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/in_lj.ron");
    let out = bin()
        .args(["run", preset.to_str().unwrap(), "--backend", "cpu", "--steps", "1", "--quiet"])
        .env("ARGON_CPU_MEMORY_MB", "10")
        .output()
        .unwrap();
    let msg = text(&out);
    assert!(!out.status.success(), "{msg}");
    let max: usize = msg
        .split("largest system that fits has about ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no largest N in: {msg}"));
    assert!(max > 1000 && max < 32_000, "{msg}");
    let per = argon_sandbox::sim::cpu::bytes_per_atom(2.8);
    assert!(argon_sandbox::sim::cpu::memory_check(max, 2.8, Some(10_000_000)).is_ok());
    assert!(argon_sandbox::sim::cpu::memory_check(max + 1, 2.8, Some(10_000_000)).is_err());
    assert!(per * max <= 10_000_000);
}

#[test]
fn hybrid_monte_carlo_runs_from_the_cli_and_npt_in_a_tank_is_refused() {
    // The LAMMPS fcc state (periodic): NPT hybrid Monte Carlo at the JZG-ish pressure, in LJ units.
    let dir = scratch("hmc");
    let thermo = dir.join("thermo.csv");
    let out = run(&[
        "run",
        "--init",
        &init_file(),
        "--units",
        "lj",
        "--steps",
        "200",
        "--ensemble",
        "hmc-npt",
        "--trajectory",
        "10",
        "--pressure",
        "1.0",
        "--temperature",
        "1.44",
        "--thermo",
        thermo.to_str().unwrap(),
        "--thermo-every",
        "50",
    ]);
    let msg = text(&out);
    assert!(out.status.success(), "{msg}");
    assert!(msg.contains("hmc-npt"), "{msg}");
    assert!(msg.contains("hybrid Monte Carlo: accepted") && msg.contains("of 20 trajectories"), "{msg}");
    assert!(msg.contains("of 20 volume moves"), "{msg}");
    let rows = std::fs::read_to_string(&thermo).unwrap();
    // Step 0 and the chain states at steps 50, 100, 150, 200.
    assert_eq!(rows.lines().count(), 1 + 5, "{rows}");

    // The default scene is a closed tank: a constant-pressure chain cannot scale it.
    let out = run(&["run", "--steps", "10", "--ensemble", "hmc-npt", "--quiet"]);
    let msg = text(&out);
    assert!(!out.status.success(), "{msg}");
    assert!(msg.contains("thermostat") && msg.contains("periodic") && !msg.contains("panicked"), "{msg}");
    let out = run(&["run", "--steps", "10", "--ensemble", "hmc", "--trajectory", "0", "--quiet"]);
    let msg = text(&out);
    assert!(!out.status.success() && msg.contains("thermostat.trajectory"), "{msg}");
    std::fs::remove_dir_all(dir).ok();
}

/// `bench --scene`: the app's default tank, re-initialised to about the asked atom count,
/// with its own thermostat, gravity, walls and obstacles, measured without rendering.
#[test]
fn bench_measures_a_scene_at_the_asked_size() {
    let common = ["--n", "3000", "--backend", "cpu", "--precision", "single", "--repeats", "1", "--json"];
    let scene = bench_json(&[&["bench", "--scene", "default", "--steps", "20", "--warmup", "5"][..], &common].concat());
    let n = scene["n"].as_u64().unwrap();
    // The slab fill places about the asked count (the tank is scaled to hold it).
    assert!((2_400..=3_600).contains(&n), "{n} atoms for --n 3000: {scene}");
    assert!(scene["atom_steps_per_s"].as_f64().unwrap() > 0.0, "{scene}");
    assert_eq!(scene["precision"], "single", "{scene}");
    // The in.lj system of the same --n is a different system (a cube of fcc at 0.8442).
    let lj = bench_json(&[&["bench", "--steps", "5"][..], &common].concat());
    assert_ne!(lj["n"], scene["n"], "{lj}");
    // The skin asked is the skin measured, and the host's memory per atom is reported (the
    // positions and velocities alone take 48 bytes an atom while the system is built).
    let skinned = bench_json(&[&["bench", "--steps", "5", "--skin", "0.45"][..], &common].concat());
    assert_eq!(skinned["skin"].as_f64(), Some(0.45), "{skinned}");
    assert_eq!(lj["skin"].as_f64(), Some(0.3), "{lj}");
    let host = skinned["host_bytes_per_atom"].as_f64().unwrap_or(0.0);
    assert!(host > 48.0, "{skinned}");
}

/// The JSON line of a successful `bench ... --json` run.
fn bench_json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    let msg = text(&out);
    assert!(out.status.success(), "{args:?}: {msg}");
    let line = msg.lines().find(|l| l.starts_with('{')).unwrap_or_else(|| panic!("no JSON line in: {msg}"));
    serde_json::from_str(line).unwrap()
}

/// `--threads` is a global option: it works before a subcommand as well as after it.
#[test]
fn threads_before_or_after_the_subcommand() {
    for args in [
        &["--threads", "1", "run", "--steps", "5", "--backend", "cpu", "--quiet"][..],
        &["run", "--threads", "1", "--steps", "5", "--backend", "cpu", "--quiet"][..],
    ] {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
    }
}
