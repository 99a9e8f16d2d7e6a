//! Exported decks run unchanged by the `lmp` executable on 1 and 2 MPI ranks (mpiexec from the
//! mpich wheel, `tests/lammps/run_lmp.py`): every preset (the vortex street for one step: it
//! has 1.2 million atoms), with the same thermo at step 0 on both (1e-9: sums over a million
//! atoms in another order) and, for the decks
//! without random numbers (the LAMMPS in.lj preset, the default tank forced to NVE), after 100
//! steps (1e-8); and the flow fields of a quiescent box written by LAMMPS on 2 ranks,
//! converted by `argon-sandbox lammps-fields` and read back with VTK: density N/V, velocity
//! zero within its errors, temperature as set.
//!
//! Needs a Python with `lammps` and `mpich`: `ARGON_PYTHON=/path/to/venv/bin/python`. Without
//! it the tests print a skip line and pass, unless `ARGON_REQUIRE_PYTHON=1` (CI sets both).

mod common;

use std::path::{Path, PathBuf};

use common::python::{python, run_json};
use common::{output_text, run_binary};

use argon_sandbox::scene::presets;

/// Exports `scene` (a path or preset name) into `dir` with `extra` flags; the warnings printed.
fn export(scene: &str, dir: &Path, steps: u64, extra: &[&str]) -> String {
    let steps = steps.to_string();
    let mut args = vec!["export-lammps", scene, "--out", dir.to_str().unwrap(), "--steps", &steps];
    args.extend(["--thermo-every", &steps]);
    args.extend(extra);
    let o = run_binary(&args);
    assert!(o.status.success(), "export of {scene} failed: {}", output_text(&o));
    output_text(&o)
}

/// Thermo rows of the deck in `dir` run on `ranks` MPI ranks.
fn lmp(py: &Path, dir: &Path, ranks: u32) -> Vec<serde_json::Value> {
    let r = ranks.to_string();
    let v = run_json(py, "lammps/run_lmp.py", &[dir.as_os_str(), r.as_ref()]);
    v["rows"].as_array().expect("rows").clone()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-12)
}

const COLUMNS: [&str; 5] = ["Temp", "PotEng", "KinEng", "TotEng", "Press"];

/// Runs the deck in `dir` on 1 and 2 ranks; compares step 0 always and the last row when
/// `exact`, else checks the last rows are finite and their temperatures within 10 %.
fn one_and_two_ranks(py: &Path, name: &str, dir: &Path, steps: u64, exact: bool) {
    let (one, two) = (lmp(py, dir, 1), lmp(py, dir, 2));
    assert_eq!(one.len(), 2, "{name}: {one:?}");
    assert_eq!(two.len(), 2, "{name}: {two:?}");
    let get = |row: &serde_json::Value, k: &str| row[k].as_f64().unwrap_or(f64::NAN);
    for k in COLUMNS {
        let (a, b) = (get(&one[0], k), get(&two[0], k));
        assert!(rel(a, b) < 1e-9, "{name} step 0 {k}: 1 rank {a}, 2 ranks {b}");
    }
    assert_eq!(get(&one[1], "Step"), steps as f64, "{name}");
    assert_eq!(get(&two[1], "Step"), steps as f64, "{name}");
    for k in COLUMNS {
        let (a, b) = (get(&one[1], k), get(&two[1], k));
        assert!(a.is_finite() && b.is_finite(), "{name} step {steps} {k}: {a} vs {b}");
        if exact {
            assert!(rel(a, b) < 1e-8, "{name} step {steps} {k}: 1 rank {a}, 2 ranks {b}");
        }
    }
    if !exact {
        let (a, b) = (get(&one[1], "Temp"), get(&two[1], "Temp"));
        assert!(rel(a, b) < 0.1, "{name} step {steps}: temperature {a} on 1 rank, {b} on 2");
    }
    if exact {
        // The system moved: not two copies of step 0.
        assert!(rel(get(&one[0], "PotEng"), get(&one[1], "PotEng")) > 1e-6, "{name}: nothing happened");
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("argon-lammps-mpi-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn every_preset_deck_runs_on_one_and_two_mpi_ranks() {
    let Some(py) = python() else { return };
    for p in presets::PRESETS {
        let dir = temp_dir(p.name);
        let deterministic = p.name == "in_lj";
        let steps = if p.name == "vortex_street" { 1 } else { 100 };
        export(p.name, &dir, steps, &[]);
        one_and_two_ranks(&py, p.name, &dir, steps, deterministic);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The default tank (walls, gravity, a cylinder and a rotated block) without its thermostat:
/// no random numbers, so 2 ranks follow 1 rank's trajectory to round-off.
#[test]
fn deterministic_tank_deck_gives_the_same_thermo_on_two_ranks() {
    let Some(py) = python() else { return };
    let text = presets::preset("default").unwrap();
    let nve = replaced(text, "thermostat: Csvr(tau: 0.5)", "thermostat: Nve");
    let dir = temp_dir("default-nve");
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("default_nve.ron");
    std::fs::write(&scene, nve).unwrap();
    export(scene.to_str().unwrap(), &dir.join("deck"), 100, &[]);
    let input = std::fs::read_to_string(dir.join("deck/in.argon")).unwrap();
    assert!(input.contains("wall/region") && input.contains("rotate v_rot0") && input.contains("gravity"));
    assert!(!input.contains("csvr") && !input.contains("langevin"), "{input}");
    one_and_two_ranks(&py, "default (NVE)", &dir.join("deck"), 100, true);
    let _ = std::fs::remove_dir_all(&dir);
}

fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the preset changed: {from} not found");
    text.replace(from, to)
}

/// A quiescent liquid (rho 0.8442, T* 1.44 under CSVR, 864 atoms) whose deck (argon in `real`
/// units) writes 3D fields on 4 x 4 x 4 bins; LAMMPS on 2 ranks, `argon-sandbox lammps-fields`, VTK reads the files.
/// After 2 tau of melting, 10 windows of 1 tau: every window's mean density is N/V (every atom
/// is in a bin at every sample: 1e-12), every bin's velocity is zero within its errors (the
/// mean of (u / sem)^2 over the 192 components, sem from the window-to-window spread, below 2;
/// its expectation is 9/7) and the count-weighted mean velocity is zero (momentum is conserved:
/// 1e-10), and the kinetic temperature the files hold (bins' thermal and mean-flow parts) is T*
/// within 4 standard errors over the windows.
#[test]
fn quiescent_box_fields_from_lammps_read_back_with_vtk() {
    let Some(py) = python() else { return };
    let dir = temp_dir("fields");
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("quiescent.ron");
    std::fs::write(
        &scene,
        r#"(
    version: 1, name: "quiescent",
    box: (size: (10.0776, 10.0776, 10.0776), boundaries: (Periodic, Periodic, Periodic)),
    temperature_k: 172.5,
    thermostat: Csvr(tau: 0.1),
    atoms: [Lattice(kind: Fcc, density: 0.8442)],
    fields: (bin: 2.5, every: 5, window_tau: 1.0, three_d: true),
    seed: 7,
)"#,
    )
    .unwrap();
    let deck = dir.join("deck");
    // In real units (Å, fs, g/mol): the converter must bring every value back to reduced units.
    export(scene.to_str().unwrap(), &deck, 2400, &["--units", "real"]);
    assert!(deck.join("fields.json").is_file());
    lmp(&py, &deck, 2);
    let out = dir.join("vtk");
    let o = run_binary(&["lammps-fields", deck.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", output_text(&o));
    let got = run_json(&py, "python/vtk_read.py", &[out.as_os_str()]);
    let files = got["files"].as_array().unwrap();
    assert_eq!(files.len(), 12, "one file per 1-tau window of 12 tau");
    let n_over_v = 864.0 / 10.0776f64.powi(3);
    // Scalars come as numbers, the velocity as [vx, vy, vz] per bin: flattened.
    let arr = |f: &serde_json::Value, k: &str| -> Vec<f64> {
        let flat = |v: &serde_json::Value| match v.as_array() {
            Some(c) => c.iter().map(|x| x.as_f64().unwrap()).collect(),
            None => vec![v.as_f64().unwrap()],
        };
        f["arrays"][k].as_array().unwrap().iter().flat_map(flat).collect()
    };
    for f in files {
        assert_eq!(f["dims"], serde_json::json!([5, 5, 5]));
        let d = arr(f, "density");
        assert_eq!(d.len(), 64);
        let mean = d.iter().sum::<f64>() / 64.0;
        assert!(rel(mean, n_over_v) < 1e-12, "mean density {mean}, N/V {n_over_v}");
        let count = arr(f, "count");
        let v = arr(f, "velocity");
        for k in 0..3 {
            let p: f64 = (0..64).map(|b| count[b] * v[3 * b + k]).sum::<f64>() / count.iter().sum::<f64>();
            assert!(p.abs() < 1e-10, "mean velocity {k}: {p}");
        }
    }
    let used = &files[2..];
    let w = used.len() as f64;
    let mut chi2 = 0.0;
    for b in 0..64 {
        for k in 0..3 {
            let u: Vec<f64> = used.iter().map(|f| arr(f, "velocity")[3 * b + k]).collect();
            let m = u.iter().sum::<f64>() / w;
            let var = u.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (w - 1.0);
            chi2 += m * m / (var / w);
        }
    }
    chi2 /= 192.0;
    // The kinetic temperature the files hold: per bin the thermal part 3 (n - 1) T plus the
    // mean flow's n m |u|^2, over 3 times all atom-samples (the thermostat's 3N - 3 differ by
    // 1/N). The bins' own T, relative to a window mean of correlated samples, reads lower.
    let t: Vec<f64> = used
        .iter()
        .map(|f| {
            let (temp, count, v) = (arr(f, "temperature"), arr(f, "count"), arr(f, "velocity"));
            let twice_ke: f64 = (0..64)
                .map(|b| {
                    let u2 = v[3 * b].powi(2) + v[3 * b + 1].powi(2) + v[3 * b + 2].powi(2);
                    3.0 * (count[b] - 1.0) * temp[b] + count[b] * u2
                })
                .sum();
            twice_ke / (3.0 * count.iter().sum::<f64>())
        })
        .collect();
    let bins_t = used.iter().map(|f| arr(f, "temperature").iter().sum::<f64>() / 64.0).sum::<f64>() / w;
    let tm = t.iter().sum::<f64>() / w;
    let t_sem = (t.iter().map(|x| (x - tm).powi(2)).sum::<f64>() / (w - 1.0) / w).sqrt();
    eprintln!("velocity (u/sem)^2 {chi2:.3}; temperature {tm:.4} +- {t_sem:.4} (set 1.44; bins' own {bins_t:.4})");
    assert!(chi2 < 2.0, "bin velocities not zero within their errors: mean (u/sem)^2 = {chi2}");
    assert!(t_sem < 0.02 * 1.44 && (tm - 1.44).abs() < 4.0 * t_sem, "temperature {tm} +- {t_sem}, set 1.44");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad LAMMPS output is refused with the file, line and field named.
#[test]
fn lammps_fields_names_the_bad_file_line_and_field() {
    let dir = temp_dir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let (d, out) = (dir.to_str().unwrap(), dir.join("out"));
    let o = run_binary(&["lammps-fields", d, "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(output_text(&o).contains("fields.json: not found: export the deck with its fields"), "{}", output_text(&o));
    let scene = dir.join("s.ron");
    std::fs::write(
        &scene,
        r#"(version: 1, name: "s", box: (size: (6.0, 6.0, 6.0), boundaries: (Periodic, Periodic, Periodic)),
            temperature_k: 120.0, atoms: [Lattice(kind: Fcc, density: 0.5)], fields: (bin: 3.0, every: 1, window_tau: 0.01))"#,
    )
    .unwrap();
    export(scene.to_str().unwrap(), &dir, 10, &[]);
    let chunks = "# Chunk-averaged data for fix fields and group all\n# Timestep Number-of-chunks Total-count\n\
        # Chunk Ncount v_fld_m v_fld_px v_fld_py v_fld_pz v_fld_mv2\n2 4 10\n  1 1 1 0 0 0 1\n  2 1 1 0 0 0 1\n";
    std::fs::write(dir.join("fields.chunks"), chunks).unwrap();
    let o = run_binary(&["lammps-fields", d, "--out", out.to_str().unwrap()]);
    let text = output_text(&o);
    assert!(!o.status.success());
    assert!(text.contains("fields.chunks:4: Number-of-chunks") && text.contains("ends after 2"), "{text}");
    std::fs::write(dir.join("fields.chunks"), chunks.replace("2 4 10", "2 2 10")).unwrap();
    let o = run_binary(&["lammps-fields", d, "--out", out.to_str().unwrap()]);
    let text = output_text(&o);
    assert!(
        text.contains("fields.chunks:4: Number-of-chunks: 2 chunks, but the grid of fields.json has 4 bins"),
        "{text}"
    );
    std::fs::write(dir.join("fields.chunks"), chunks.replace("  2 1 1 0 0 0 1", "  2 1 1 0 zero 0 1")).unwrap();
    let o = run_binary(&["lammps-fields", d, "--out", out.to_str().unwrap()]);
    let text = output_text(&o);
    assert!(text.contains("fields.chunks:6: v_fld_py: \"zero\" is not a number"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
