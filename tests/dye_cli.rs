//! Dye headless (issue 47): `run --dye-box X0:X1,Y0:Y1` tags the atoms inside at step 0, after
//! the scene's own sources; `--xyz` frames carry the integer `dye` column (read back here and,
//! with `ARGON_PYTHON`, by ASE), the same tags from the CUDA and wgpu backends as from the
//! CPU; bad boxes are refused naming the flag.

mod common;

use std::path::Path;
use std::process::Output;

use common::python::{python, run_json};

fn run(args: &[&str]) -> Output {
    common::run_binary(args)
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A small periodic fluid with one scene region (source 1) in x 0..3.
fn scene_file(dir: &Path) -> String {
    let path = dir.join("dyed.ron");
    std::fs::write(
        &path,
        "(version: 1, box: (size: (16.0, 12.0, 5.0), boundaries: (Periodic, Periodic, Periodic)), \
         temperature_k: 120.0, atoms: [Lattice(kind: Fcc, density: 0.7)], precision: Double, \
         dye: [Region(min: (0.0, 0.0), max: (3.0, 12.0))])",
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

/// Each frame's (positions, dye) from an extended XYZ trajectory whose last column is dye.
fn frames(path: &Path) -> Vec<(Vec<[f64; 3]>, Vec<u16>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let mut out = Vec::new();
    while let Some(count) = lines.next() {
        let n: usize = count.trim().parse().unwrap();
        let header = lines.next().unwrap();
        assert!(header.contains("Properties=") && header.ends_with("units=lj"), "{header}");
        assert!(header.contains(":dye:I:1 "), "every frame has the dye column: {header}");
        let (mut pos, mut dye) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let w: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
            pos.push([1, 2, 3].map(|k| w[k].parse::<f64>().unwrap()));
            dye.push(w.last().unwrap().parse().unwrap());
        }
        out.push((pos, dye));
    }
    out
}

#[test]
fn dye_boxes_tag_at_step_0_after_the_scenes_sources_and_ride_in_the_trajectory() {
    let dir = common::temp_dir("dye-cli");
    let scene = scene_file(&dir);
    let xyz = dir.join("t.xyz");
    let o = run(&[
        "run",
        &scene,
        "--steps",
        "200",
        "--units",
        "lj",
        "--xyz",
        xyz.to_str().unwrap(),
        "--xyz-every",
        "100",
        "--dye-box",
        "5:9,2:6",
        "--dye-box",
        "8:12,4:10",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("dye: 3 sources"), "{}", text(&o));
    let f = frames(&xyz);
    assert_eq!(f.len(), 3);
    let (pos, dye) = &f[0];
    for (p, &d) in pos.iter().zip(dye) {
        let inside = |x0: f64, x1: f64, y0: f64, y1: f64| p[0] >= x0 && p[0] < x1 && p[1] >= y0 && p[1] < y1;
        // Later sources over earlier ones where boxes overlap.
        let want = if inside(8.0, 12.0, 4.0, 10.0) {
            3
        } else if inside(5.0, 9.0, 2.0, 6.0) {
            2
        } else if inside(0.0, 3.0, 0.0, 12.0) {
            1
        } else {
            0
        };
        assert_eq!(d, want, "atom at {p:?}");
    }
    assert!((1..=3).all(|k| dye.contains(&k)));
    // No rakes: the tags stay with their atoms (canonical order) frame after frame.
    assert!(f.iter().all(|(_, d)| d == dye));
    if let Some(py) = python() {
        let got = run_json(&py, "python/ase_read.py", &[xyz.as_os_str()]);
        for (g, (_, d)) in got.as_array().unwrap().iter().zip(&f) {
            assert_eq!(g["dye_kind"], "i", "ASE reads an integer column");
            let ase: Vec<u16> = g["dye"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u16).collect();
            assert_eq!(&ase, d);
        }
    }
}

#[test]
fn bad_dye_boxes_are_refused_naming_the_flag() {
    let dir = common::temp_dir("dye-cli-bad");
    let scene = scene_file(&dir);
    for (arg, extra, words) in [
        ("9:5,2:6", None, vec!["empty", "min < max"]),
        ("5:9,2:60", None, vec!["outside the tank", "y 0..12"]),
        ("5:9", None, vec!["X0:X1,Y0:Y1"]),
        ("a:b,2:6", None, vec!["X0:X1,Y0:Y1"]),
    ] {
        let mut args = vec!["run", &scene, "--steps", "1", "--units", "lj", "--dye-box", arg];
        if let Some(b) = extra {
            args.extend(["--backend", b]);
        }
        let o = run(&args);
        let t = text(&o);
        assert!(!o.status.success(), "{arg} {extra:?} was accepted");
        assert!(t.contains("--dye-box") && words.iter().all(|w| t.contains(w)), "{arg} {extra:?}: {t}");
        assert!(!t.contains("panicked"), "{t}");
    }
    // In argon units the box is in Å: 5:9 sigma would be about 17:31 Å.
    let o = run(&["run", &scene, "--steps", "1", "--dye-box", "17:31,7:20"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&["run", &scene, "--steps", "1", "--dye-box", "5:9,2:60"]);
    assert!(!o.status.success() && text(&o).contains("Å with --units argon"), "{}", text(&o));
}

#[test]
fn the_device_backends_tag_and_carry_dye_boxes_as_the_cpu_does() {
    let dir = common::temp_dir("dye-cli-devices");
    let scene = scene_file(&dir);
    let tags = |backend: &str| {
        let xyz = dir.join(format!("{backend}.xyz"));
        let o = run(&[
            "run",
            &scene,
            "--steps",
            "100",
            "--units",
            "lj",
            "--backend",
            backend,
            "--xyz",
            xyz.to_str().unwrap(),
            "--xyz-every",
            "50",
            "--dye-box",
            "5:9,2:6",
        ]);
        assert!(o.status.success(), "{backend}: {}", text(&o));
        frames(&xyz).into_iter().map(|(_, d)| d).collect::<Vec<_>>()
    };
    let cpu = tags("cpu");
    assert!(cpu[0].contains(&1) && cpu[0].contains(&2));
    for (backend, usable) in [("wgpu", common::wgpu_adapter()), ("cuda", common::gpu())] {
        if usable {
            // No rakes: every frame holds the step-0 tags, by canonical index.
            assert_eq!(tags(backend), cpu, "{backend}");
        }
    }
}
