//! Dye tags (issue 47): a per-atom property in canonical order that follows its atoms through
//! the CPU backend's re-sorting, edits, rollback, saved states and backend switches; rakes
//! that tag the atoms crossing them; the devices' refusal; bad input refused by name.

mod common;

use argon_sandbox::io::extxyz::{FrameRef, read_extxyz, write_extxyz};
use argon_sandbox::physics::dye::{Dye, DyeRake};
use argon_sandbox::physics::init::LatticeKind;
use argon_sandbox::physics::params::{Algorithm, SimParams};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::sim::cuda::CudaBackend;
use argon_sandbox::sim::gpu::GpuBackend;
use argon_sandbox::sim::{AtomSelection, AtomState, Backend, BackendChoice, open_backend};

/// A scattered pattern of tags (about half the atoms, sources 1..=5), by canonical index.
fn pattern(n: usize) -> Vec<Dye> {
    (0..n).map(|i| if (i * 7919) % 11 < 5 { (1 + (i * 31) % 5) as Dye } else { 0 }).collect()
}

fn dyed_fluid(cells: usize) -> (argon_sandbox::physics::sim_box::SimBox, AtomState) {
    let (b, mut atoms) = common::lattice_system(LatticeKind::Fcc, 0.75, [cells; 3], 1.4, 11);
    atoms.dye = pattern(atoms.len());
    (b, atoms)
}

#[test]
fn tags_follow_their_atoms_through_re_sorting_in_every_precision() {
    for (precision, algorithm) in [
        (Precision::Single, Algorithm::Neighbors),
        (Precision::Mixed, Algorithm::Neighbors),
        (Precision::Double, Algorithm::Cells),
    ] {
        let (b, atoms) = dyed_fluid(6);
        let params = SimParams { precision, algorithm, dt: 0.005, ..SimParams::default() };
        let mut sim = common::cpu(b, params.clone(), &atoms);
        let mut plain = common::cpu(b, params, &AtomState { dye: Vec::new(), ..atoms.clone() });
        for _ in 0..6 {
            sim.advance(100).unwrap();
            plain.advance(100).unwrap();
            let (s, p) = (sim.copy_state().unwrap(), plain.copy_state().unwrap());
            let wrong = s.atoms.dye.iter().zip(&atoms.dye).filter(|(a, b)| a != b).count();
            assert!(s.atoms.dye.len() == atoms.len() && wrong == 0, "{precision:?}: {wrong} atoms' tags changed");
            // The tags ride along without touching the dynamics.
            assert_eq!(s.atoms.positions, p.atoms.positions, "{precision:?}");
            assert!(p.atoms.dye.is_empty(), "no dye column appears by itself");
        }
        // Atoms travelled: a re-sorted order would have scrambled slot-kept tags.
        let end = sim.copy_state().unwrap();
        let moved = end.atoms.positions.iter().zip(&atoms.positions).filter(|(a, o)| {
            let d = b.min_image(**a, **o);
            d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > 0.25
        });
        assert!(moved.count() > atoms.len() / 2, "{precision:?}: too little motion to test re-sorting");
    }
}

#[test]
fn add_and_remove_keep_each_atoms_tag() {
    let (b, atoms) = dyed_fluid(4);
    let n = atoms.len();
    let mut sim = common::cpu(b, SimParams::default(), &atoms);
    sim.advance(50).unwrap();
    let before = sim.copy_state().unwrap();
    let gone: Vec<usize> = (0..n).filter(|i| i % 3 == 0).collect();
    assert_eq!(sim.remove_atoms(&AtomSelection::Indices(gone)).unwrap(), n.div_ceil(3));
    let kept: Vec<Dye> = (0..n).filter(|i| i % 3 != 0).map(|i| atoms.dye[i]).collect();
    assert_eq!(sim.copy_state().unwrap().atoms.dye, kept);
    // Untagged newcomers get 0; tagged ones keep theirs.
    let new =
        |x: [f64; 3], dye: Vec<Dye>| AtomState { positions: vec![x], velocities: vec![[0.0; 3]], types: vec![0], dye };
    // Newcomers where removed atoms were (no overlap).
    let xs = [before.atoms.positions[0], before.atoms.positions[3]];
    sim.add_atoms(&new(xs[0], vec![])).unwrap();
    sim.add_atoms(&new(xs[1], vec![9])).unwrap();
    let mut want = kept.clone();
    want.extend([0, 9]);
    sim.advance(20).unwrap();
    assert_eq!(sim.copy_state().unwrap().atoms.dye, want);
}

#[test]
fn rollback_returns_the_checkpoints_tags() {
    let (b, atoms) = dyed_fluid(4);
    let mut sim = common::cpu(b, SimParams::default(), &atoms);
    sim.advance(20).unwrap();
    sim.checkpoint().unwrap();
    let at = sim.copy_state().unwrap();
    // Change the tags (a rake across the whole box height) and the atoms, then roll back.
    let l = b.length();
    sim.set_dye_rakes(&[DyeRake { a: [0.5 * l[0], 0.0], b: [0.5 * l[0], l[1]], tag: 8 }]).unwrap();
    sim.advance(200).unwrap();
    assert!(sim.copy_state().unwrap().atoms.dye.contains(&8), "the rake tagged nothing");
    sim.remove_atoms(&AtomSelection::Indices(vec![0, 1, 2])).unwrap();
    assert_eq!(sim.rollback().unwrap(), Some(at.step));
    assert_eq!(sim.copy_state().unwrap().atoms.dye, at.atoms.dye);
}

#[test]
fn saved_states_keep_tags_and_old_files_load_without() {
    let (b, atoms) = dyed_fluid(3);
    let mut sim = common::cpu(b, SimParams::default(), &atoms);
    sim.advance(30).unwrap();
    let snap = sim.snapshot().unwrap();
    let dir = common::temp_dir("dye-save");
    let names = vec!["Ar".to_string()];
    let frame = |dye| FrameRef {
        sim_box: &snap.sim_box,
        species_names: &names,
        types: &snap.atoms.types,
        positions: &snap.atoms.positions,
        velocities: Some(&snap.atoms.velocities),
        step: snap.step,
        time: snap.time,
        units: "lj",
        masses: Some(&[1.0]),
        dye,
    };
    write_extxyz(&dir.join("dyed.xyz"), &frame(Some(&snap.atoms.dye))).unwrap();
    write_extxyz(&dir.join("old.xyz"), &frame(None)).unwrap();
    let text = std::fs::read_to_string(dir.join("dyed.xyz")).unwrap();
    assert!(text.contains(":momenta:R:3:dye:I:1 "), "{}", text.lines().nth(1).unwrap());
    let back = read_extxyz(&dir.join("dyed.xyz")).unwrap();
    assert_eq!(back.dye.as_deref(), Some(&atoms.dye[..]));
    assert_eq!(read_extxyz(&dir.join("old.xyz")).unwrap().dye, None);
    // Through `--init`, the state loads with its tags and runs on.
    let init = argon_sandbox::scene::with_init(None, &dir.join("dyed.xyz")).unwrap();
    assert_eq!(init.setup.atoms.dye, atoms.dye);
    let old = argon_sandbox::scene::with_init(None, &dir.join("old.xyz")).unwrap();
    assert!(old.setup.atoms.dye.is_empty());
    // A tag outside the type's range is refused with the column named.
    let bad = text.replacen(" 1\n", " 70000\n", 1);
    std::fs::write(dir.join("bad.xyz"), bad).unwrap();
    let e = read_extxyz(&dir.join("bad.xyz")).unwrap_err().to_string();
    assert!(e.contains("(dye)") && e.contains("65535"), "{e}");
}

#[test]
fn backend_switch_cpu_to_cpu_keeps_tags_and_the_devices_refuse_them() {
    let (b, atoms) = dyed_fluid(3);
    let params = SimParams::default();
    let mut first = common::cpu(b, params.clone(), &atoms);
    first.advance(40).unwrap();
    let snap = first.snapshot().unwrap();
    let (mut second, _) = open_backend(BackendChoice::Cpu, b, params.clone(), &snap.atoms, None).unwrap();
    argon_sandbox::sim::start_at(second.as_mut(), snap.step, snap.time, None).unwrap();
    first.advance(40).unwrap();
    second.advance(40).unwrap();
    let (x, y) = (first.copy_state().unwrap(), second.copy_state().unwrap());
    assert_eq!(y.atoms.dye, atoms.dye);
    assert_eq!(x.atoms, y.atoms, "the switch is exact, tags included");
    // Auto takes the CPU for tagged atoms, saying why.
    let (auto, why) = open_backend(BackendChoice::Auto, b, params.clone(), &snap.atoms, None).unwrap();
    assert_eq!(auto.info().kind, "cpu");
    assert!(why.contains("dye"), "{why}");
    // CUDA refuses tagged atoms (before looking for a device), naming the CPU backend.
    let e = CudaBackend::new(b, params.clone(), &snap.atoms, None).err().expect("refused").to_string();
    assert!(e.contains("dye") && e.contains("CPU backend"), "{e}");
    let e = GpuBackend::new(b, params.clone(), &snap.atoms, None).err().expect("refused").to_string();
    assert!(e.contains("dye") && e.contains("CPU backend"), "{e}");
    // All-zero tags lose nothing: not refused for dye (here: no device, or it opens).
    let clear = AtomState { dye: vec![0; snap.atoms.len()], ..snap.atoms.clone() };
    if let Err(e) = CudaBackend::new(b, params, &clear, None) {
        assert!(!e.to_string().contains("dye"), "{e}");
    }
}
