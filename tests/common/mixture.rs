//! Mixture helpers shared by `tests/mixtures.rs` and `tests/mixture_cutoffs.rs`: a LAMMPS data
//! file written by the test itself (not by the exporter) and the largest force difference.

use std::fmt::Write;

use argon_sandbox::physics::params::Species;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::AtomState;

/// A LAMMPS data file (`atom_style atomic`, reduced units) of the system: box, a mass per
/// type, positions, types and velocities at full precision.
pub fn write_data(path: &std::path::Path, b: &SimBox, atoms: &AtomState, species: &[Species]) {
    let len = b.length();
    let mut s = format!("argon-sandbox mixture test\n\n{} atoms\n{} atom types\n\n", atoms.len(), species.len());
    for (k, axis) in ["x", "y", "z"].iter().enumerate() {
        let _ = writeln!(s, "{:.17e} {:.17e} {axis}lo {axis}hi", b.lo[k], b.lo[k] + len[k]);
    }
    s.push_str("\nMasses\n\n");
    for (t, sp) in species.iter().enumerate() {
        let _ = writeln!(s, "{} {:.17e}", t + 1, sp.mass);
    }
    s.push_str("\nAtoms # atomic\n\n");
    for (i, (p, t)) in atoms.positions.iter().zip(&atoms.types).enumerate() {
        let _ = writeln!(s, "{} {} {:.17e} {:.17e} {:.17e}", i + 1, t + 1, p[0], p[1], p[2]);
    }
    s.push_str("\nVelocities\n\n");
    for (i, v) in atoms.velocities.iter().enumerate() {
        let _ = writeln!(s, "{} {:.17e} {:.17e} {:.17e}", i + 1, v[0], v[1], v[2]);
    }
    std::fs::write(path, s).unwrap();
}

/// The largest difference of any force component, relative to the largest component of `want`.
pub fn max_force_error(got: &[[f64; 3]], want: &[[f64; 3]]) -> f64 {
    assert_eq!(got.len(), want.len(), "atom counts");
    let scale = want.iter().flat_map(|f| f.iter()).fold(0.0f64, |m, x| m.max(x.abs()));
    let err = got.iter().zip(want).flat_map(|(a, b)| (0..3).map(move |k| (a[k] - b[k]).abs())).fold(0.0, f64::max);
    err / scale
}

/// The `[[fx, fy, fz], ...]` array of a JSON reply.
pub fn forces_of(v: &serde_json::Value) -> Vec<[f64; 3]> {
    v.as_array().expect("forces").iter().map(|f| std::array::from_fn(|k| f[k].as_f64().unwrap())).collect()
}

/// Neon, argon, krypton and xenon from the catalogue, in that order (types 0-3, as
/// `tests/lammps/mixture.py` numbers them 1-4).
pub fn ne_ar_kr_xe() -> Vec<Species> {
    ["Ne", "Ar", "Kr", "Xe"].iter().map(|s| argon_sandbox::physics::species::catalogue_species(s).unwrap()).collect()
}

/// A dense Ne-Ar-Kr-Xe fluid of 864 atoms (jiggled fcc at rho 0.8 in a periodic box of
/// 10.3 sigma; 25/35/25/15 %) with Maxwell-Boltzmann velocities for each atom's mass at T 1:
/// pair distances fill the whole span of the per-pair cut-offs, 2.0 (Ne-Ne) to 3.0 (Xe-Xe)
/// sigma at 2.5 sigma_ij.
pub fn four_species_fluid(seed: u64) -> (SimBox, AtomState, Vec<Species>) {
    let (b, mut atoms) = super::jiggled_fluid([6, 6, 6], [false; 3], 0.1, &[], seed);
    let species = ne_ar_kr_xe();
    atoms.types = argon_sandbox::physics::species::assign_types(atoms.len(), &[0.25, 0.35, 0.25, 0.15], seed);
    let masses: Vec<f64> = atoms.types.iter().map(|&t| species[t as usize].mass).collect();
    let n = atoms.len() as f64;
    atoms.velocities = argon_sandbox::physics::init::maxwell_boltzmann(&masses, 1.0, 3.0 * n - 3.0, seed, 0);
    (b, atoms, species)
}

/// Our thermo rows (`got`: the record at step 0, then the run's telemetry) against LAMMPS's
/// (`rows`: objects with step, temp, pe, ke, etotal, press, as `tests/lammps/mixture.py`
/// prints them): the same steps, and every quantity within `tol(step)` relative.
pub fn assert_thermo_matches(
    key: &str,
    got: &[argon_sandbox::sim::Telemetry],
    rows: &[serde_json::Value],
    tol: impl Fn(u64) -> f64,
) {
    assert_eq!(got.len(), rows.len(), "{key}: thermo rows");
    for (g, w) in got.iter().zip(rows) {
        let step = w["step"].as_u64().unwrap();
        assert_eq!(g.step, step);
        for (name, mine) in [
            ("temp", g.temperature),
            ("pe", g.pe_per_atom()),
            ("ke", g.ke_per_atom()),
            ("etotal", g.etotal_per_atom()),
            ("press", g.pressure),
        ] {
            let theirs = w[name].as_f64().unwrap();
            let off = super::rel(mine, theirs);
            assert!(off < tol(step), "{key} step {step} {name}: {mine} vs LAMMPS {theirs} ({off:.1e})");
        }
    }
}
