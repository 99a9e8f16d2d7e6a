//! Flow fields through the command line: `run --fields DIR` writes VTK image data that the
//! Python `vtk` package (as ParaView) reads with the right grid and values, the settings can
//! live in a scene, and bad settings are refused with the flag or field named.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use argon_sandbox::io::thermo::read_thermo_csv;
use common::python::{python, run_json};

fn run(args: &[&str]) -> Output {
    common::run_binary(args)
}

fn text(o: &Output) -> String {
    common::output_text(o)
}

/// A periodic fcc fluid 12 x 12 x 6 sigma at rho* 0.8, NVE (zero total momentum), with the
/// given `fields` section (empty: none).
fn scene(dir: &Path, fields: &str) -> PathBuf {
    let path = dir.join("box.ron");
    let text = format!(
        "(version: 1, box: (size: (12.0, 12.0, 6.0), boundaries: (Periodic, Periodic, Periodic)),
          temperature_k: 179.7, thermostat: Nve, atoms: [Lattice(kind: Fcc, density: 0.8)], seed: 7, {fields})"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn vtk_reads_the_fields_with_the_right_grid_and_values() {
    let dir = common::temp_dir("fields-vtk");
    let out_dir = dir.join("out");
    let thermo = dir.join("thermo.csv");
    let scene = scene(&dir, "");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let args = [
        "run",
        &s(&scene),
        "--steps",
        "1000",
        "--backend",
        "cpu",
        "--units",
        "lj",
        "--fields",
        &s(&out_dir),
        "--field-every",
        "5",
        "--field-window",
        "2",
        "--thermo",
        &s(&thermo),
        "--thermo-every",
        "10",
    ];
    let out = run(&args);
    assert!(out.status.success(), "{}", text(&out));
    // "system: N atoms, ..."
    let log = text(&out);
    let n_atoms: f64 = log.split("system: ").nth(1).and_then(|r| r.split(' ').next()).unwrap().parse().unwrap();
    // 1000 steps of 0.005 tau in windows of 2 tau (80 samples every 5 steps): 2 full windows
    // and a last partial one of 1 tau at the end of the run.
    let names: Vec<String> = {
        let mut v: Vec<String> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names, ["fields.pvd", "fields_0001.vti", "fields_0002.vti", "fields_0003.vti"]);

    let Some(py) = python() else { return };
    let got = run_json(&py, "python/vtk_read.py", &[out_dir.as_os_str()]);
    let pvd = got["pvd"].as_array().unwrap();
    assert_eq!(pvd.len(), 3);
    let times: Vec<f64> = pvd.iter().map(|d| d[0].as_f64().unwrap()).collect();
    for (t, want) in times.iter().zip([2.0, 4.0, 5.0]) {
        assert!((t - want).abs() < 1e-9, "window end times {times:?}");
    }
    let temps: Vec<f64> = read_thermo_csv(&thermo).unwrap().iter().map(|r| r.get("temp").unwrap()).collect();
    let t_run = temps.iter().sum::<f64>() / temps.len() as f64;
    for (k, f) in got["files"].as_array().unwrap().iter().enumerate() {
        // 6 x 6 bins of 2 sigma through the whole depth: points 7 x 7 x 2, one cell a bin.
        assert_eq!(floats(&f["dims"]), [7.0, 7.0, 2.0], "file {k}");
        assert_eq!(floats(&f["spacing"]), [2.0, 2.0, 6.0], "file {k}");
        assert_eq!(floats(&f["origin"]), [0.0, 0.0, 0.0], "file {k}");
        assert_eq!(f["cells"].as_u64(), Some(36));
        assert!((f["time"].as_f64().unwrap() - times[k]).abs() < 1e-9);
        assert!(f["hidden"].as_array().unwrap().is_empty(), "no empty bins in a dense fluid");
        let a = &f["arrays"];
        let count = floats(&a["count"]);
        let density = floats(&a["density"]);
        let vel: Vec<Vec<f64>> = a["velocity"].as_array().unwrap().iter().map(floats).collect();
        let samples = if k < 2 { 80.0 } else { 40.0 };
        // Every atom is in some bin at every sample.
        let total: f64 = count.iter().sum();
        assert!((total - n_atoms * samples).abs() < 1e-6, "file {k}: {total} atom-samples");
        // Density: the box's N/V on average, each bin near it.
        let mean_rho = density.iter().sum::<f64>() / 36.0;
        assert!((mean_rho - n_atoms / 864.0).abs() < 1e-12, "file {k}: mean density {mean_rho}");
        // Momentum: the run's total is zero, so the count-weighted velocities sum to ~0
        // (against the thermal scale sqrt(T) per atom-sample).
        for axis in 0..3 {
            let p: f64 = vel.iter().zip(&count).map(|(v, c)| v[axis] * c).sum();
            assert!(p.abs() < 1e-9 * total, "file {k}: momentum {p} along {axis}");
        }
        // Temperature relative to each bin's mean: the run's temperature within a few percent
        // (the bins' own mean velocities take 3 of some 1,100 degrees of freedom each).
        let temp = floats(&a["temperature"]);
        let t_bins = temp.iter().sum::<f64>() / temp.len() as f64;
        assert!((t_bins / t_run - 1.0).abs() < 0.03, "file {k}: bins {t_bins}, run {t_run}");
        assert_eq!(vel.len(), 36);
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_scene_holds_the_field_settings() {
    let dir = common::temp_dir("fields-scene");
    let out_dir = dir.join("out");
    let scene = scene(&dir, "fields: (bin: 3.0, every: 4, window_tau: 1.0, three_d: true)");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let out = run(&["run", &s(&scene), "--steps", "200", "--backend", "cpu", "--fields", &s(&out_dir), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out));
    let vti = std::fs::read_to_string(out_dir.join("fields_0001.vti")).unwrap();
    // bins of 3 sigma in 3D: 4 x 4 x 2 cells.
    assert!(vti.contains("WholeExtent=\"0 4 0 4 0 2\""), "{}", &vti[..600]);
    assert!(vti.contains("Spacing=\"3 3 3\""));
    assert!(out_dir.join("fields_0001.vti").exists() && !out_dir.join("fields_0002.vti").exists());
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn bad_field_settings_are_refused_with_the_flag_named() {
    let dir = common::temp_dir("fields-bad");
    let out_dir = dir.join("out");
    let good = scene(&dir, "");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (good, out_s) = (s(&good), s(&out_dir));
    let base = ["run", good.as_str(), "--steps", "10", "--backend", "cpu", "--units", "lj"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--fields", &out_s, "--field-bin", "0"], "--field-bin"),
        (vec!["--fields", &out_s, "--field-bin", "-1"], "--field-bin"),
        (vec!["--fields", &out_s, "--field-bin", "NaN"], "--field-bin"),
        (vec!["--fields", &out_s, "--field-bin", "50"], "--field-bin"),
        (vec!["--fields", &out_s, "--field-every", "0"], "--field-every"),
        (vec!["--fields", &out_s, "--field-every", "10", "--field-window", "0.01"], "--field-window"),
        (vec!["--field-bin", "2"], "--fields"),
        (vec!["--field-window", "5"], "--fields"),
        (vec!["--fields"], "--fields"),
    ];
    for (extra, expect) in cases {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let out = run(&args);
        let msg = text(&out);
        assert!(!out.status.success(), "{extra:?} should fail: {msg}");
        assert!(msg.contains(expect), "{extra:?}: expected `{expect}` in: {msg}");
        assert!(!msg.contains("panicked"), "{extra:?} panicked: {msg}");
    }
    // In a scene: the error names the field with its line.
    let bad = scene(&dir, "fields: (bin: 0.0)");
    let out = run(&["run", &s(&bad), "--steps", "10", "--backend", "cpu"]);
    let msg = text(&out);
    assert!(!out.status.success() && msg.contains("fields.bin") && msg.contains("box.ron:"), "{msg}");
    assert!(!msg.contains("panicked"), "{msg}");
    std::fs::remove_dir_all(dir).ok();
}

/// A flow past an obstacle with fields: `wake.csv` beside them holds a readout row per window
/// (the stream from the window, the cylinder's drag coefficient, the wake probe's full
/// shedding periods: none in 6 tau), and `run` prints the wake.
#[test]
fn run_writes_the_wake_readout_per_window() {
    let dir = std::env::temp_dir().join(format!("argon-wake-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scenes/channel_flow.ron");
    let d = dir.to_str().unwrap();
    let o = run(&["run", scene, "--backend", "cpu", "--steps", "1200", "--fields", d, "--field-window", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let err = text(&o);
    assert!(err.contains("wake of obstacle 1") && err.contains("C_d = ") && err.contains("Re = "), "{err}");
    assert!(err.contains("shedding (wake probe): 0 full periods yet"), "{err}");
    let csv = std::fs::read_to_string(dir.join("wake.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "time_tau");
    // The period columns come last, after the older ones (whose readers index by position).
    assert_eq!(header[14], "wake_probe_vy");
    assert_eq!(header[20], "recirculation_min_vx_stderr");
    assert_eq!(header[21..], ["shedding_full_periods", "third_full_period_tau"]);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "three windows of 2 tau in 6 tau");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), header.len());
        assert!((r[col("time_tau")].parse::<f64>().unwrap() - 2.0 * (k + 1) as f64).abs() < 1e-9);
        assert!((r[col("diameter")].parse::<f64>().unwrap() - 6.0).abs() < 1e-9);
        assert!(r[col("speed")].parse::<f64>().unwrap() > 0.0, "the drive makes a stream along +x");
        assert!(r[col("drag_coefficient")].parse::<f64>().unwrap() > 0.0, "the stream pushes the cylinder along +x");
        assert_eq!((r[col("shedding_full_periods")], r[col("third_full_period_tau")]), ("0", ""), "{r:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
