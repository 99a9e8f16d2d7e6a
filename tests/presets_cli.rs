//! Built-in examples by name on every subcommand: `argon-sandbox examples` lists every preset;
//! `run`, `record`, `export-lammps`, `bench --scene` and `measure` take a preset's name where
//! they take a scene file (a file of that name in the working folder wins), and an unknown name
//! is refused with the known ones listed. The app's own resolution is in tests/app_headless.rs.

use std::path::PathBuf;
use std::process::{Command, Output};

use argon_sandbox::scene::presets::PRESETS;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_argon-sandbox"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("argon-presets-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the binary in `dir` (so no scene file of a preset's name is found by accident).
fn run_in(dir: &PathBuf, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn examples_lists_every_preset_with_its_size_and_backend() {
    let dir = scratch("list");
    let out = run_in(&dir, &["examples"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    for p in PRESETS {
        let line = t.lines().find(|l| l.trim_start().starts_with(&format!("{} ", p.name)));
        let line = line.unwrap_or_else(|| panic!("{} not listed:\n{t}", p.name));
        assert!(line.contains(&argon_sandbox::scene::presets::thousands(p.atoms)), "{line}");
        assert!(line.contains(p.made_for.label()), "{line}");
    }
    let long = text(&run_in(&dir, &["examples", "--long"]));
    assert!(PRESETS.iter().all(|p| long.contains(p.shows)), "{long}");
}

#[test]
fn a_preset_name_works_on_every_subcommand() {
    let dir = scratch("names");
    // run: the droplet by name, with and without `.ron`.
    for name in ["droplet", "droplet.ron"] {
        let thermo = dir.join("thermo.csv");
        let out = run_in(
            &dir,
            &["run", name, "--steps", "10", "--backend", "cpu", "--thermo", thermo.to_str().unwrap(), "--quiet"],
        );
        assert!(out.status.success(), "run {name}: {}", text(&out));
        assert!(std::fs::read_to_string(&thermo).unwrap().lines().count() >= 2);
    }
    // export-lammps
    let deck = dir.join("deck");
    let out = run_in(&dir, &["export-lammps", "channel_flow", "--out", deck.to_str().unwrap()]);
    assert!(out.status.success(), "export-lammps: {}", text(&out));
    let data = std::fs::read_to_string(deck.join("data.argon")).unwrap();
    assert!(data.contains("5484 atoms"), "the channel's 5,484 atoms: {}", &data[..data.len().min(400)]);
    // bench --scene
    let out = run_in(
        &dir,
        &[
            "bench",
            "--scene",
            "ar_kr_mixture",
            "--backend",
            "cpu",
            "--precision",
            "single",
            "--steps",
            "3",
            "--warmup",
            "0",
            "--repeats",
            "1",
            "--n",
            "0",
        ],
    );
    assert!(out.status.success(), "bench --scene: {}", text(&out));
    assert!(text(&out).contains("2738"), "the mixture's atoms: {}", text(&out));
    // record (needs a renderer: lavapipe in CI)
    let frames = dir.join("frames");
    let out = run_in(
        &dir,
        &[
            "record",
            "droplet",
            "--frames",
            "1",
            "--steps-per-frame",
            "1",
            "--size",
            "160x120",
            "--backend",
            "cpu",
            "--out",
            frames.to_str().unwrap(),
            "--quiet",
        ],
    );
    let t = text(&out);
    if !out.status.success() && t.contains("adapter") && std::env::var_os("ARGON_REQUIRE_RENDER").is_none() {
        println!("skipped record: no GPU adapter ({t})");
    } else {
        assert!(out.status.success(), "record: {t}");
        assert!(std::fs::read_dir(&frames).unwrap().count() >= 1);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A file in the working folder named like a preset is that file, not the preset.
#[test]
fn a_file_of_a_presets_name_wins() {
    let dir = scratch("file-wins");
    std::fs::write(dir.join("droplet"), "not a scene").unwrap();
    let out = run_in(&dir, &["run", "droplet", "--steps", "1", "--backend", "cpu", "--quiet"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("droplet:1:1"), "the file was read: {}", text(&out));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_unknown_name_lists_the_known_ones_on_every_subcommand() {
    let dir = scratch("unknown");
    let out_dir = dir.join("o");
    let o = out_dir.to_str().unwrap();
    for args in [
        vec!["vortex_streeet"],
        vec!["run", "vortex_streeet", "--steps", "1"],
        vec!["record", "vortex_streeet", "--frames", "1", "--out", o],
        vec!["export-lammps", "vortex_streeet", "--out", o],
        vec!["bench", "--scene", "vortex_streeet", "--steps", "1"],
        vec!["measure", "diffusion", "vortex_streeet", "--steps", "10"],
    ] {
        let out = run_in(&dir, &args);
        let t = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded: {t}");
        assert!(t.contains("vortex_streeet"), "{args:?} does not name what it was given: {t}");
        for p in PRESETS {
            assert!(t.contains(p.name), "{args:?} does not list {}: {t}", p.name);
        }
        assert!(!t.contains("panicked"), "{args:?}: {t}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
