//! Dye spreads at the fluid's own rate (issue 47): a blob of tagged atoms in a quiescent
//! periodic LJ liquid (4,000 atoms at rho* 0.8, T* 1, held by a weak CSVR as `measure --hold
//! 10` holds it) spreads with variance 2 D t per axis, and that D agrees within 10 % with
//! `argon-sandbox measure diffusion` on the same state.
//!
//! The liquid is melted from the lattice under a strong thermostat first (melting cools it).
//! The blob is the half of the box with x < L/2 (about 2,000 atoms, tagged through the
//! state's dye column), followed by its tags for 20 tau: its displacements are unwrapped
//! from states 10 steps apart, and their variance per axis (about the blob's own mean, so the
//! blob's drift does not count) over 2 t is D. With 2,000 atoms a single 20-tau variance has
//! a relative standard error of sqrt(2 / 2000) = 3 % per axis, 2 % over the three.

mod common;

use argon_sandbox::physics::init::LatticeKind;
use argon_sandbox::physics::params::{SimParams, Thermostat};
use argon_sandbox::sim::Backend;
use common::{cpu, lattice_system, output_text, run_binary, temp_dir};

#[test]
fn a_dye_blob_spreads_at_the_measured_self_diffusion() {
    let (b, mut atoms) = lattice_system(LatticeKind::Fcc, 0.8, [10, 10, 10], 1.0, 11);
    let params = SimParams {
        temperature: 1.0,
        thermostat: Thermostat::Csvr { tau: 10.0, relative_to_flow: false },
        telemetry_every: 1000,
        ..SimParams::default()
    };
    // Melt the lattice and bring it back to T* 1 under a strong CSVR (melting takes the heat
    // of fusion from the motion), then hold it weakly, as `measure` will, and tag the blob.
    let strong = SimParams { thermostat: Thermostat::Csvr { tau: 0.5, relative_to_flow: false }, ..params.clone() };
    let mut melt = cpu(b, strong, &atoms);
    melt.advance(6000).unwrap();
    let mut sim = cpu(b, params.clone(), &melt.snapshot().unwrap().atoms);
    sim.advance(1000).unwrap();
    let start = sim.snapshot().unwrap();
    let len = b.length();
    atoms = start.atoms.clone();
    atoms.dye = atoms.positions.iter().map(|p| u16::from(p[0] - b.lo[0] < 0.5 * len[0])).collect();
    let tagged: Vec<usize> = (0..atoms.len()).filter(|&i| atoms.dye[i] == 1).collect();
    assert!(tagged.len() > 1800 && tagged.len() < 2200, "{} atoms in the blob", tagged.len());

    // The same state for `measure diffusion`, before the blob moves.
    let dir = temp_dir("dye-diffusion");
    let init = dir.join("state.xyz");
    let mut text = format!(
        "{}\nLattice=\"{} 0 0 0 {} 0 0 0 {}\" Properties=species:S:1:pos:R:3:velo:R:3 pbc=\"T T T\" units=lj\n",
        atoms.len(),
        len[0],
        len[1],
        len[2]
    );
    for (p, v) in atoms.positions.iter().zip(&atoms.velocities) {
        text += &format!("Ar {} {} {} {} {} {}\n", p[0], p[1], p[2], v[0], v[1], v[2]);
    }
    std::fs::write(&init, text).unwrap();

    let mut snap = start;
    snap.atoms = atoms;
    sim.restore(&snap).unwrap();
    let dt = params.dt;
    let (every, steps) = (10u64, (20.0 / dt).round() as u64);
    let mut last: Vec<[f64; 3]> = tagged.iter().map(|&i| snap.atoms.positions[i]).collect();
    let mut disp = vec![[0.0f64; 3]; tagged.len()];
    for _ in 0..steps / every {
        sim.advance(every).unwrap();
        let now = sim.copy_state().unwrap().atoms;
        for (k, &i) in tagged.iter().enumerate() {
            assert_eq!(now.dye[i], 1, "atom {i} lost its tag");
            for a in 0..3 {
                let mut d = now.positions[i][a] - last[k][a];
                d -= len[a] * (d / len[a]).round();
                disp[k][a] += d;
            }
            last[k] = now.positions[i];
        }
    }
    let t = (steps / every * every) as f64 * dt;
    let n = tagged.len() as f64;
    let per_axis: Vec<f64> = (0..3)
        .map(|a| {
            let mean = disp.iter().map(|d| d[a]).sum::<f64>() / n;
            let var = disp.iter().map(|d| (d[a] - mean).powi(2)).sum::<f64>() / (n - 1.0);
            var / (2.0 * t)
        })
        .collect();
    let d_blob = per_axis.iter().sum::<f64>() / 3.0;

    let out = run_binary(&[
        "measure",
        "diffusion",
        "--init",
        init.to_str().unwrap(),
        "--steps",
        "25400",
        "--equilibrate",
        "0",
        "--hold",
        "10",
        "--backend",
        "cpu",
        "--json",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", output_text(&out));
    let j: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    let (d, sem) = (j["value"].as_f64().unwrap(), j["stderr"].as_f64().unwrap());
    eprintln!(
        "dye blob: D = {d_blob:.5} (x, y, z: {per_axis:.5?}) over {t} tau; measure diffusion: {d:.5} +- {sem:.5}"
    );
    assert!((d_blob - d).abs() < 0.1 * d, "the blob spreads with D = {d_blob}, measure diffusion says {d} +- {sem}");
    let _ = std::fs::remove_dir_all(&dir);
}
