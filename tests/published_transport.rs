//! D and eta against a published LJ transport study (issue 24): Lautenschlaeger and Hasse,
//! Fluid Phase Equilibria 482 (2019) 38-47, the Lennard-Jones fluid truncated and shifted at
//! 2.5 sigma (LJTS): our default potential. The numbers, where each came from, and the
//! cut-off, shift and finite-size effects: `tests/data/published_transport/` (README.md).
//!
//! - the data file against the study's own viscosity correlation as coded in
//!   `flow::wake::lj_viscosity` (an independent transcription), and the scenes the runs use;
//! - CPU (CI size): `measure diffusion` at both state points, 2,048 atoms, 13,280 production
//!   steps each (the two runs at once, one thread each: about 10 s wall, 20 s CPU), the
//!   Yeh-Hummer corrected D within 10 % of the study's, the standard error 0.4 to 2.3 %
//!   (checked against a ceiling of 4 %);
//! - CPU viscosity: none at CI size. Green-Kubo eta is a collective property: its error does
//!   not shrink with more atoms, only with a longer run, and a CI-length run (150 tau in
//!   `tests/transport.rs`) has a 15 to 25 % error. A few per cent takes 2,000 to 3,000 tau,
//!   minutes of CPU; that check is the GPU test's;
//! - GPU: `measure viscosity --backend cuda` at both states (8,788 atoms, 1,500,000 steps =
//!   7,500 tau each, the two at once), eta within 10 % with a standard error at most 4 %, and
//!   `measure diffusion` on 32,000 atoms. Skipped without a CUDA device.

mod common;

use std::path::{Path, PathBuf};

use common::{output_text, run_binary};
use serde_json::Value;

/// The bound on |ours - published| / published.
const BOUND: f64 = 0.10;

/// One state point of `reference.json`.
#[derive(Clone, Debug)]
struct State {
    label: String,
    density: f64,
    temperature: f64,
    d: f64,
    d_rel: f64,
    eta: f64,
    eta_rel: f64,
}

fn reference() -> Value {
    let p = format!("{}/tests/data/published_transport/reference.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn states() -> Vec<State> {
    let r = reference();
    let f = |s: &Value, k: &str| s[k].as_f64().unwrap_or_else(|| panic!("{k} in {s}"));
    r["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| State {
            label: s["label"].as_str().unwrap().to_string(),
            density: f(s, "density"),
            temperature: f(s, "temperature"),
            d: f(s, "D"),
            d_rel: f(s, "D_relative_uncertainty"),
            eta: f(s, "eta"),
            eta_rel: f(s, "eta_relative_uncertainty"),
        })
        .collect()
}

/// A scene for `state`: a periodic cube of `cells`^3 FCC cells at the state's density (so the
/// lattice meets itself across every face), the study's potential (2.5 sigma, shifted), its
/// temperature (kelvin in a scene: T* x 119.8 K), written into `dir`.
fn scene(dir: &Path, state: &State, cells: usize) -> PathBuf {
    let edge = cells as f64 * (4.0 / state.density).cbrt();
    let kelvin = state.temperature * argon_sandbox::units::ARGON_EPSILON_K;
    let (label, rho, t) = (&state.label, state.density, state.temperature);
    let text = [
        "(".to_string(),
        "    version: 1,".into(),
        format!("    name: \"LJTS state {label}\","),
        format!("    description: \"Lautenschlaeger and Hasse 2019, rho* {rho}, T* {t}\","),
        format!("    box: (size: ({edge:?}, {edge:?}, {edge:?}), boundaries: (Periodic, Periodic, Periodic)),"),
        "    potential: (cutoff: 2.5, shift: true),".into(),
        "    integrator: (dt: 0.005, skin: 0.3),".into(),
        format!("    temperature_k: {kelvin:?},"),
        "    thermostat: Nve,".into(),
        format!("    atoms: [Lattice(kind: Fcc, density: {rho:?})],"),
        "    seed: 1,".into(),
        ")\n".into(),
    ]
    .join("\n");
    let path = dir.join(format!("ljts_{}_{cells}.ron", state.label));
    std::fs::write(&path, text).unwrap();
    path
}

/// The seed of the runs: `ARGON_PUBLISHED_SEED` where set (to check a test is not flaky),
/// else a fixed one.
fn seed() -> String {
    std::env::var("ARGON_PUBLISHED_SEED").unwrap_or_else(|_| "20190001".into())
}

fn measure_json(args: &[&str]) -> Value {
    let out = run_binary(args);
    let text = output_text(&out);
    assert!(out.status.success(), "{args:?}: {text}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// `measure QUANTITY SCENE --json` on `backend`, held by a weak CSVR (tau 10) after the
/// default CSVR equilibration, with `extra` flags.
fn measure(quantity: &str, scene: &Path, backend: &str, steps: u64, extra: &[&str]) -> Value {
    let (steps, seed) = (steps.to_string(), seed());
    let mut args = vec![
        "measure",
        quantity,
        scene.to_str().unwrap(),
        "--steps",
        &steps,
        "--hold",
        "10",
        "--backend",
        backend,
        "--seed",
        &seed,
        "--json",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    measure_json(&args)
}

/// The run measured the state asked: the atoms, the density, and a mean temperature near the
/// target (a weak thermostat: the mean over a run wanders by a few tenths of a per cent).
fn assert_state(j: &Value, state: &State, atoms: usize) {
    assert_eq!(j["atoms"].as_u64(), Some(atoms as u64), "{j}");
    let rho = j["density"].as_f64().unwrap();
    assert!((rho / state.density - 1.0).abs() < 1e-9, "density {rho} for {}", state.density);
    let t = j["temperature"].as_f64().unwrap();
    assert!((t / state.temperature - 1.0).abs() < 0.02, "mean T* {t} for {}", state.temperature);
}

/// D of `j` (a `measure diffusion` result) against the study's: the Yeh-Hummer corrected value
/// within [`BOUND`], the standard error at most `max_sem` of the value.
fn assert_diffusion(j: &Value, state: &State, max_sem: f64) {
    let (d, sem) = (j["value"].as_f64().unwrap(), j["stderr"].as_f64().unwrap());
    let corrected = j["value_corrected"].as_f64().expect("a cubic periodic LJTS box gets the Yeh-Hummer correction");
    let from = &j["per_species"][0]["correction_viscosity_from"];
    assert_eq!(from, "Lautenschlaeger-Hasse LJTS correlation", "{j}");
    let dev = corrected / state.d - 1.0;
    eprintln!(
        "state {} (rho* {}, T* {}), {} atoms on {}: D* = {d:.5} +- {sem:.5} ({:.1} %), Green-Kubo {:.5}, Yeh-Hummer \
         corrected {corrected:.5}; published {:.5} +- {:.1} %: corrected {:+.1} %, uncorrected {:+.1} %",
        state.label,
        state.density,
        state.temperature,
        j["atoms"],
        j["backend"],
        100.0 * sem / d,
        j["green_kubo"].as_f64().unwrap(),
        state.d,
        100.0 * state.d_rel,
        100.0 * dev,
        100.0 * (d / state.d - 1.0),
    );
    assert!(sem > 0.0 && sem <= max_sem * d, "state {}: standard error {sem} of {d}", state.label);
    assert!(dev.abs() <= BOUND, "state {}: D*_inf = {corrected} vs published {}", state.label, state.d);
}

/// The data file against the study's correlation as coded (`lj_viscosity`, coefficients from
/// ls1-mardyn): a transcription error in either would show. The correlation was fitted to
/// this table and is within 1 % of it here (0.95 % at A, 0.40 % at B); 3 % leaves room for
/// the fit, not for a wrong digit.
#[test]
fn reference_agrees_with_the_coded_correlation() {
    let r = reference();
    assert!(r["potential"].as_str().unwrap().contains("2.5 sigma and shifted"));
    let states = states();
    assert_eq!(states.len(), 2);
    for (s, v) in states.iter().zip(r["states"].as_array().unwrap()) {
        let model = argon_sandbox::flow::wake::lj_viscosity(s.density, s.temperature).unwrap();
        let noted = v["eta_correlation"].as_f64().unwrap();
        assert!((model - noted).abs() < 1e-5, "state {}: {model} vs the file's {noted}", s.label);
        assert!((model / s.eta - 1.0).abs() < 0.03, "state {}: correlation {model} vs table {}", s.label, s.eta);
        assert!(s.d > 0.0 && s.d_rel > 0.0 && s.d_rel < 0.02 && s.eta_rel > 0.0 && s.eta_rel < 0.05, "{s:?}");
    }
}

/// The scenes hold the published states: whole FCC cells at the exact density, the study's
/// potential and temperature (cheap: no steps).
#[test]
fn scenes_build_the_published_states() {
    let dir = common::temp_dir("published-scenes");
    for s in states() {
        for cells in [8usize, 13, 20] {
            let setup = argon_sandbox::scene::load_setup(Some(&scene(&dir, &s, cells))).unwrap();
            let n = setup.atoms.len();
            assert_eq!(n, 4 * cells.pow(3), "state {} with {cells} cells", s.label);
            let rho = n as f64 / setup.sim_box.volume();
            assert!((rho / s.density - 1.0).abs() < 1e-12, "{rho}");
            let p = &setup.params;
            assert!(p.shift && (p.pair_cutoff(0, 0) - 2.5).abs() < 1e-12, "the study's potential");
            assert!((p.temperature / s.temperature - 1.0).abs() < 1e-12, "T* {}", p.temperature);
            assert!(setup.sim_box.fully_periodic());
        }
    }
}

/// D on the CPU at CI size: 2,048 atoms (L = 13.7 and 14.3 sigma), lags to 10 tau, 13,280
/// production steps (66 tau, the least `measure` takes for that lag) after 3,000 of
/// equilibration. Both states at once, one thread each. Measured here (2 cores, release, 7
/// seeds): 8 to 16 s wall (the longer while other builds shared the cores); the corrected D
/// within -1.0..+2.4 % of the study's at A and +0.3..+3.0 % at B, the uncorrected one 4 to
/// 8 % below it. The reported standard errors were 0.4 to 2.3 %; the spread over seeds, 1.2 %
/// (A) and 0.7 % (B), is the better measure of the true one. The ceiling is 4 %, not 3 %: an
/// error from 4 blocks is itself uncertain (chi with 3 degrees of freedom), and at a true
/// 1.2 % it would pass 3 % about once in 3,000 runs, 4 % about once in 3 million.
#[test]
fn diffusion_on_the_cpu_matches_the_published_ljts_data() {
    let dir = common::temp_dir("published-diffusion");
    let states = states();
    let scenes: Vec<PathBuf> = states.iter().map(|s| scene(&dir, s, 8)).collect();
    let results: Vec<Value> = std::thread::scope(|scope| {
        let runs: Vec<_> = scenes
            .iter()
            .map(|p| {
                scope.spawn(move || {
                    measure("diffusion", p, "cpu", 13_280, &["--lag", "10", "--equilibrate", "3000", "--threads", "1"])
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (j, s) in results.iter().zip(&states) {
        assert_eq!(j["backend"], "cpu");
        assert_state(j, s, 2048);
        assert_diffusion(j, s, 0.04);
    }
}

/// eta and D on the GPU, longer runs. Viscosity: 8,788 atoms (13 FCC cells), 1,500,000 steps
/// (7,500 tau, 20 blocks of 375 tau) per state, both states at once (the GPU is far from full
/// at this size): a first run of 500,000 steps gave standard errors of 3.3 and 4.3 %, so
/// three times longer gives about 2 to 2.5 %, under the 4 % ceiling, and the 10 % bound is
/// several errors wide. Diffusion: 32,000 atoms (20 cells, L = 34 sigma), lags to 20 tau,
/// 25,400 steps. About 2.5 minutes on an H100.
#[test]
fn viscosity_and_diffusion_on_the_gpu_match_the_published_ljts_data() {
    if !common::gpu() {
        return;
    }
    let dir = common::temp_dir("published-gpu");
    let states = states();
    for s in &states {
        let j = measure("diffusion", &scene(&dir, s, 20), "cuda", 25_400, &[]);
        assert_eq!(j["backend"], "cuda", "{j}");
        assert_state(&j, s, 32_000);
        assert_diffusion(&j, s, 0.02);
    }
    let scenes: Vec<PathBuf> = states.iter().map(|s| scene(&dir, s, 13)).collect();
    let results: Vec<Value> = std::thread::scope(|scope| {
        let runs: Vec<_> =
            scenes.iter().map(|sc| scope.spawn(move || measure("viscosity", sc, "cuda", 1_500_000, &[]))).collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (j, s) in results.iter().zip(&states) {
        assert_eq!(j["backend"], "cuda", "{j}");
        assert_state(j, s, 8788);
        let (eta, sem) = (j["value"].as_f64().unwrap(), j["stderr"].as_f64().unwrap());
        let dev = eta / s.eta - 1.0;
        eprintln!(
            "state {} (rho* {}, T* {}), 8788 atoms on cuda: eta* = {eta:.4} +- {sem:.4} ({:.1} %), at 0.6 / 1.6 t_cut {} / \
             {}; published {:.4} +- {:.1} %: {:+.1} %",
            s.label,
            s.density,
            s.temperature,
            100.0 * sem / eta,
            j["value_at_0.6_t_cut"],
            j["value_at_1.6_t_cut"],
            s.eta,
            100.0 * s.eta_rel,
            100.0 * dev,
        );
        assert!(sem > 0.0 && sem <= 0.04 * eta, "state {}: standard error {sem} of {eta}", s.label);
        assert!(dev.abs() <= BOUND, "state {}: eta* = {eta} vs published {}", s.label, s.eta);
    }
}
