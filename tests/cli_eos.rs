//! The `eos` command end to end (the real binary): three densities at T = 2.0 against the
//! Johnson-Zollweg-Gubbins table (`jzg1993_eos.csv`) within 2% for P and U/N with error bars
//! well inside that, a well-formed CSV and printed table; bad flags each exit non-zero with
//! a message naming the flag and the fix, never a panic. The JZG check runs on the CPU and,
//! where a device is usable, on CUDA (`skipped: no CUDA device` otherwise).

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::jzg_table;

fn run(args: &[&str]) -> Output {
    common::run_binary(args)
}

fn text(o: &Output) -> String {
    common::output_text(o)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("argon-cli-eos-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Reads `rho,P,P_err,U,U_err`, checking the header, five finite numbers per row.
fn read_csv(path: &std::path::Path) -> Vec<[f64; 5]> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("rho,P,P_err,U,U_err"));
    lines
        .map(|l| {
            let v: Vec<f64> =
                l.split(',').map(|x| x.parse().unwrap_or_else(|_| panic!("bad number in `{l}`"))).collect();
            assert_eq!(v.len(), 5, "row `{l}`");
            assert!(v.iter().all(|x| x.is_finite()), "row `{l}`");
            [v[0], v[1], v[2], v[3], v[4]]
        })
        .collect()
}

const REL_TOL: f64 = 0.02;

#[test]
fn three_densities_match_the_jzg_table() {
    three_densities_on("cpu");
}

/// The same on the CUDA backend; without a usable device it says `skipped: no CUDA device`.
#[test]
fn three_densities_match_the_jzg_table_on_cuda() {
    if let Err(why) = argon_sandbox::sim::cuda::device::open() {
        println!("skipped: no CUDA device ({why})");
        return;
    }
    three_densities_on("cuda");
}

fn three_densities_on(backend: &str) {
    let dir = scratch(&format!("jzg-{backend}"));
    let csv = dir.join("eos.csv");
    let o = run(&[
        "eos",
        "--temperature",
        "2.0",
        "--densities",
        "0.5:0.9:0.2",
        "--backend",
        backend,
        "--out",
        csv.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    println!("{out}");
    // The printed table carries the JZG values beside ours.
    assert!(out.contains("P (JZG)") && out.contains("3.05026"), "{out}");
    let rows = read_csv(&csv);
    assert_eq!(rows.iter().map(|r| r[0]).collect::<Vec<_>>(), vec![0.5, 0.7, 0.9]);
    let table = jzg_table();
    for [rho, p, p_err, u, u_err] in rows {
        let want = table.iter().find(|r| r.t == 2.0 && (r.rho - rho).abs() < 1e-9).expect("a JZG row");
        // The error bars are well inside the tolerance, so the comparison means something.
        assert!(p_err > 0.0 && 2.0 * p_err < REL_TOL * want.p.abs(), "rho {rho}: P error bar {p_err}");
        assert!(u_err > 0.0 && 2.0 * u_err < REL_TOL * want.u_per_n.abs(), "rho {rho}: U error bar {u_err}");
        assert!((p - want.p).abs() < REL_TOL * want.p.abs(), "rho {rho}: P {p} +- {p_err}, JZG {}", want.p);
        assert!(
            (u - want.u_per_n).abs() < REL_TOL * want.u_per_n.abs(),
            "rho {rho}: U {u} +- {u_err}, JZG {}",
            want.u_per_n
        );
    }
}

/// `--ensemble hmc` is accepted and maps to the hybrid Monte Carlo thermostat (a tiny run:
/// the physics check of HMC is the HMC driver's own test).
#[test]
fn hmc_ensemble_runs_and_writes_a_well_formed_csv() {
    let dir = scratch("hmc");
    let csv = dir.join("hmc.csv");
    let o = run(&[
        "eos",
        "--temperature",
        "2",
        "--densities",
        "0.4:0.6:0.1",
        "--ensemble",
        "hmc",
        "--trajectory",
        "10",
        "--atoms",
        "108",
        "--equilibration",
        "100",
        "--production",
        "200",
        "--blocks",
        "4",
        "--backend",
        "cpu",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("HMC"), "{}", text(&o));
    let rows = read_csv(&csv);
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r[2] >= 0.0 && r[4] >= 0.0 && r[3] < 0.0));
}

#[test]
fn bad_flags_are_refused_with_the_flag_and_the_fix() {
    let dir = scratch("bad");
    let out = dir.join("x.csv");
    let out = out.to_str().unwrap();
    let missing = dir.join("no/such/folder/x.csv");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--temperature", "2", "--densities", "0.3:0.7:0"], "invalid --densities: the step 0 must be positive"),
        (vec!["--temperature", "2", "--densities", "0.7:0.3:0.1"], "write the smaller first"),
        (vec!["--temperature", "2", "--densities", "0.0001:1:0.001"], "at most 200"),
        (vec!["--temperature", "2", "--densities", "0.5:2:0.5"], "outside (0, 1.5]"),
        (vec!["--temperature", "2", "--densities", "0.3:0.7"], "not a:b:step"),
        (vec!["--temperature", "2", "--densities", "1.2", "--atoms", "108"], "less than twice the cutoff"),
        (vec!["--temperature", "-1", "--densities", "0.5"], "invalid --temperature: -1 is outside [0.1, 10]"),
        (vec!["--temperature", "50", "--densities", "0.5"], "invalid --temperature"),
        (vec!["--temperature", "2", "--densities", "0.5", "--blocks", "1"], "invalid --blocks"),
        (vec!["--temperature", "2", "--densities", "0.5", "--atoms", "5"], "invalid --atoms"),
        (vec!["--temperature", "2", "--densities", "0.5", "--production", "30"], "invalid --production"),
        (vec!["--temperature", "2", "--densities", "0.5", "--cutoff", "0.5"], "invalid --cutoff"),
        (
            vec!["--temperature", "2", "--densities", "0.5", "--ensemble", "hmc", "--trajectory", "0"],
            "invalid --trajectory",
        ),
        (vec!["--temperature", "2", "--densities", "0.5", "--ensemble", "npt"], "invalid value 'npt' for '--ensemble"),
    ];
    for (args, want) in cases {
        let mut full = vec!["eos", "--backend", "cpu", "--out", out];
        full.extend(&args);
        let o = run(&full);
        let t = text(&o);
        assert!(!o.status.success(), "{args:?} succeeded: {t}");
        assert!(!t.contains("panicked"), "{args:?} panicked: {t}");
        assert!(t.contains(want), "{args:?}: wanted `{want}` in: {t}");
    }
    let o = run(&["eos", "--temperature", "2", "--densities", "0.5", "--out", missing.to_str().unwrap()]);
    assert!(!o.status.success() && text(&o).contains("does not exist"), "{}", text(&o));
    assert!(!std::path::Path::new(out).exists(), "nothing is written after a refusal");
}
