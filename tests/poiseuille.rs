//! The viscosity from the flow profile against LAMMPS: a plane Poiseuille channel (no-slip
//! walls in y by surface friction, periodic x and z, a body acceleration along x, CSVR
//! relative to the flow at T* = 1) on the CPU backend, sampled into flow fields once steady;
//! the shear viscosity from the parabola across the channel's central part
//! (`flow::viscosity::fit_poiseuille`, the app's readout) must agree within 10 % with the
//! Green-Kubo viscosity LAMMPS computed for the same potential and temperature at the
//! channel's centre density (`tests/data/viscosity_gk/reference.json`, interpolated between
//! its two densities; made by `run_all.sh` and `reduce.py` beside it).

use argon_sandbox::flow::viscosity::fit_poiseuille;
use argon_sandbox::flow::{FieldKind, FieldSpec, profile_mean_sem};
use argon_sandbox::scene::Scene;
use argon_sandbox::sim::{BackendChoice, open_backend, start_at};

/// 12 x 5 fcc cells at density 0.8 along x and z (the lattice meets itself across both
/// periodic faces), 20 sigma between the walls.
const SCENE: &str = "(
    version: 1,
    box: (size: (20.51976, 20.0, 8.5499), boundaries: (Periodic, Wall, Periodic)),
    potential: (cutoff: 2.5, shift: true),
    integrator: (dt: 0.005, skin: 0.3),
    temperature_k: 119.8,
    thermostat: Csvr(tau: 1.0, relative_to_flow: true),
    surface_friction: (damp: 0.5, range: 1.5),
    forces: (gravity: 0.0, drive: 0.03),
    atoms: [Lattice(kind: Fcc, density: 0.8)],
    seed: 11,
)";

/// The LAMMPS reference: (density, eta, standard error) per state.
fn reference() -> Vec<(f64, f64, f64)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/viscosity_gk/reference.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(v["temperature"].as_f64(), Some(1.0));
    v["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["density"].as_f64().unwrap(), s["eta"].as_f64().unwrap(), s["eta_sem"].as_f64().unwrap()))
        .collect()
}

#[test]
fn viscosity_from_the_poiseuille_profile_matches_lammps_green_kubo() {
    let scene = Scene::from_str(SCENE, "poiseuille.ron").unwrap();
    let setup = scene.build().unwrap();
    let (mut b, _) = open_backend(BackendChoice::Cpu, setup.sim_box, setup.params.clone(), &setup.atoms, None).unwrap();
    start_at(b.as_mut(), setup.step, setup.time, setup.piston).unwrap();
    // Settle: the slowest viscous mode across 20 sigma decays in about (H / pi)^2 rho / eta
    // ~ 14 tau; 60 tau leaves it at e^-4.
    b.advance(12_000).unwrap();
    b.drain_telemetry();
    let spec = FieldSpec { bin: 1.0, every: 10, window_tau: 20.0, ..FieldSpec::default() };
    b.set_fields(Some(spec)).unwrap();
    b.advance(40_000).unwrap();
    let t = b.drain_telemetry();
    let windows = b.take_fields(true).unwrap();
    assert_eq!(windows.len(), 10, "ten windows of 20 tau");
    let g = &windows[0].grid;
    let y: Vec<f64> = (0..g.n[1]).map(|j| g.origin[1] + (j as f64 + 0.5) * g.cell[1]).collect();
    let u = profile_mean_sem(&windows, FieldKind::Vx, 1);
    let rho = profile_mean_sem(&windows, FieldKind::Density, 1);
    let fit = fit_poiseuille(&y, &u, 0.03, 1.0, [0.0, 20.0], 0.7).unwrap();
    // Mass density 1 per atom: the fit's eta scales with it, so multiply by the centre density.
    let centre: Vec<f64> = y.iter().zip(&rho).filter(|(yy, _)| (**yy - 10.0).abs() <= 7.0).map(|(_, r)| r.0).collect();
    let density = centre.iter().sum::<f64>() / centre.len() as f64;
    let (eta, eta_sem) = (fit.viscosity * density, fit.sem * density);
    let temperature = t.iter().map(|x| x.temperature).sum::<f64>() / t.len() as f64;
    let r = reference();
    let (lo, hi) = (r[0], r[r.len() - 1]);
    assert!(
        (lo.0 - 0.01..=hi.0 + 0.01).contains(&density),
        "the channel's centre density {density:.4} lies outside the reference's {}..{}",
        lo.0,
        hi.0
    );
    let w = (density - lo.0) / (hi.0 - lo.0);
    let eta_ref = lo.1 + w * (hi.1 - lo.1);
    let ref_sem = ((1.0 - w) * lo.2).hypot(w * hi.2);
    println!(
        "centre density {density:.4}, T (with the flow) {temperature:.4}, profile peak {:.3} sigma/tau; \
         eta from the profile {eta:.3} +- {eta_sem:.3} (chi2/dof {:.2}), LAMMPS Green-Kubo {eta_ref:.3} +- {ref_sem:.3}",
        fit.coefficients[0], fit.chi2_dof
    );
    // The fit is a real one: the profile is curved well beyond its error.
    assert!(eta_sem < 0.05 * eta, "the profile is too noisy to test: eta {eta} +- {eta_sem}");
    assert!(
        (eta - eta_ref).abs() <= 0.10 * eta_ref,
        "eta from the profile {eta:.3} +- {eta_sem:.3} differs from LAMMPS Green-Kubo {eta_ref:.3} by more than 10 %"
    );
}
