//! The twin-eddies wind tunnel (`assets/scenes/twin_eddies.ron`) made small enough for CI:
//! the same fluid, stream, inflow zone and no-slip cylinder, with the cylinder and the tank
//! scaled down (D = 11.5 sigma, Re about 19), run headless on the CPU. Behind the cylinder the
//! mean flow on the centre line must turn backwards (a recirculation bubble attached to the
//! body) and close again, with a length L/D in the range the steady-wake literature gives
//! at this Re (Dennis & Chang 1970: 0.27 at Re 10, 0.94 at Re 20) widened for the small,
//! compressible, periodic tank, with the reverse flow well outside its own noise (jackknife
//! over the averaged windows).

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::run_binary as run;

/// The preset with the small tank, written into `dir`.
fn small_scene(dir: &Path) -> PathBuf {
    let preset =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scenes/twin_eddies.ron")).unwrap();
    let mut text = preset.clone();
    for (from, to) in [
        ("size: (147.0, 72.0, 5.6463)", "size: (80.0, 46.0, 5.6463)"),
        ("Circle(centre: (54.2, 36.0), radius: 7.2)", "Circle(centre: (35.0, 23.0), radius: 5.75)"),
    ] {
        assert!(text.contains(from), "the preset changed: {from} not found");
        text = text.replace(from, to);
    }
    let path = dir.join("small.ron");
    std::fs::write(&path, text).unwrap();
    path
}

/// The last row of `wake.csv` in `dir` as (column name, value) lookups.
fn last_row(dir: &Path) -> impl Fn(&str) -> Option<f64> + use<> {
    let csv = std::fs::read_to_string(dir.join("wake.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let last: Vec<String> = lines.last().unwrap().split(',').map(String::from).collect();
    move |name: &str| {
        let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
        last[i].parse().ok()
    }
}

fn tunnel_run(scene: &Path, fields: &Path) -> Output {
    let (s, f) = (scene.to_str().unwrap(), fields.to_str().unwrap());
    // 20,000 steps of 0.004 tau (18 D / U): the bubble forms within about 30 tau (7 D / U);
    // the last five 10-tau windows average it.
    run(&[
        "run",
        s,
        "--backend",
        "cpu",
        "--precision",
        "single",
        "--steps",
        "20000",
        "--fields",
        f,
        "--field-window",
        "10",
        "--thermo-every",
        "500",
    ])
}

#[test]
fn the_small_twin_eddies_tunnel_shows_reverse_flow_behind_the_cylinder() {
    let dir = std::env::temp_dir().join(format!("argon-twin-eddies-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let o = tunnel_run(&small_scene(&dir), &dir.join("no_slip"));
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    eprintln!("{}", err.lines().filter(|l| l.starts_with("  ")).collect::<Vec<_>>().join("\n"));
    let row = last_row(&dir.join("no_slip"));
    let re = row("reynolds").unwrap();
    assert!((15.0..=22.0).contains(&re), "Re {re}");
    let l = row("recirculation_length_over_d").expect("no recirculation bubble behind the no-slip cylinder");
    let sem = row("recirculation_length_over_d_stderr").unwrap_or(f64::NAN);
    eprintln!("Re {re:.1}: L/D = {l:.3} +- {sem:.3}");
    assert!((0.3..=2.0).contains(&l), "L/D {l} at Re {re}");
    // Reverse flow: the most negative centre-line velocity, well beyond its error, and a
    // real fraction of the stream.
    let (min_vx, min_sem) = (row("recirculation_min_vx").unwrap(), row("recirculation_min_vx_stderr").unwrap());
    eprintln!("reverse flow down to {min_vx:.3} +- {min_sem:.3} sigma/tau (U = {})", row("speed").unwrap());
    assert!(min_vx < -0.03 * row("speed").unwrap(), "reverse flow only {min_vx}");
    assert!(
        min_sem.is_finite() && min_vx < -4.0 * min_sem,
        "reverse flow {min_vx} +- {min_sem}: not clear of the noise"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
