//! Dye tags (issue 47): a per-atom property in canonical order that follows its atoms through
//! the CPU backend's re-sorting, edits, rollback, saved states and backend switches; rakes
//! that tag the atoms crossing them; the device backends taking tagged atoms; bad input
//! refused by name (the device backends' own dye tests: tests/wgpu_dye.rs, tests/cuda.rs).

mod common;

use argon_sandbox::io::extxyz::{FrameRef, read_extxyz, write_extxyz};
use argon_sandbox::physics::dye::{Dye, DyeRake};
use argon_sandbox::physics::params::{Algorithm, SimParams};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::cuda::CudaBackend;
use argon_sandbox::sim::gpu::GpuBackend;
use argon_sandbox::sim::{AtomSelection, AtomState, Backend, BackendChoice, open_backend};

use common::dye::dyed_fluid;

#[test]
fn tags_follow_their_atoms_through_re_sorting_in_every_precision() {
    let open = |b, p, a: &AtomState| -> Box<dyn Backend> { Box::new(common::cpu(b, p, a)) };
    for (precision, algorithm) in [
        (Precision::Single, Algorithm::Neighbors),
        (Precision::Mixed, Algorithm::Neighbors),
        (Precision::Double, Algorithm::Cells),
    ] {
        let params = SimParams { precision, algorithm, dt: 0.005, ..SimParams::default() };
        common::dye::tags_kept_while_atoms_travel(&open, &params, 6, 6, &format!("{precision:?}"));
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

/// A running state saved as a scene (the app's "Save with atoms") keeps each atom's tag in its
/// explicit fill, and loads with them; a tag list of the wrong length is refused by field.
#[test]
fn scenes_saved_with_atoms_keep_their_tags() {
    use argon_sandbox::scene::{Fill, Scene};
    let (b, atoms) = dyed_fluid(3);
    let mut sim = common::cpu(b, SimParams::default(), &atoms);
    sim.advance(30).unwrap();
    let snap = sim.snapshot().unwrap();
    let mut scene = argon_sandbox::scene::default_scene();
    scene.tank.size = b.length();
    scene.tank.boundaries = [argon_sandbox::physics::params::Boundary::Periodic; 3];
    scene.obstacles.clear();
    let saved = scene.with_state(&snap);
    let dir = common::temp_dir("dye-scene");
    let path = dir.join("dyed.ron");
    saved.save(&path).unwrap();
    let setup = Scene::load(&path).unwrap().build().unwrap();
    assert_eq!(setup.atoms.dye, snap.atoms.dye, "the tags of a saved state");
    assert!(setup.atoms.dye.iter().any(|&d| d != 0));
    let mut bad = saved.clone();
    if let Fill::Atoms { dye: Some(d), .. } = &mut bad.atoms[0] {
        d.pop();
    }
    let e = bad.validate().unwrap_err();
    assert!(e.to_string().contains("dye tags for"), "{e}");
    assert!(e.field().is_some_and(|f| f.ends_with("dye")), "{:?}", e.field());
}

#[test]
fn backend_switches_keep_tags_on_every_backend() {
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
    // Every backend carries tags now: Auto takes whichever it takes for the system, and the
    // tags come back from it (CUDA and wgpu where there is a device; without one, the error
    // is about the device, never the dye).
    let (mut auto, why) = open_backend(BackendChoice::Auto, b, params.clone(), &snap.atoms, None).unwrap();
    assert!(!why.contains("dye"), "{why}");
    assert_eq!(auto.copy_state().unwrap().atoms.dye, atoms.dye, "{why}");
    let devices: [Result<Box<dyn Backend>, _>; 2] = [
        CudaBackend::new(b, params.clone(), &snap.atoms, None).map(|s| Box::new(s) as Box<dyn Backend>),
        GpuBackend::new(b, params.clone(), &snap.atoms, None).map(|s| Box::new(s) as Box<dyn Backend>),
    ];
    for d in devices {
        match d {
            Ok(mut s) => {
                s.advance(20).unwrap();
                assert_eq!(s.copy_state().unwrap().atoms.dye, atoms.dye, "{}", s.info().kind);
            }
            Err(e) => assert!(!e.to_string().contains("dye"), "{e}"),
        }
    }
}

/// A periodic fluid scene (or a tunnel) with `dye` sources, built.
fn scene(size: [f64; 3], extra: &str, dye: &str) -> Result<argon_sandbox::scene::SimSetup, String> {
    let text = format!(
        "(version: 1, box: (size: ({}, {}, {}), boundaries: (Periodic, Periodic, Periodic)), temperature_k: 120.0, \
         atoms: [Lattice(kind: Fcc, density: 0.7)], integrator: (dt: 0.005, skin: 0.3), precision: Double, \
         seed: 5, {extra} dye: [{dye}])",
        size[0], size[1], size[2]
    );
    let s = argon_sandbox::scene::Scene::from_str(&text, "test.ron").map_err(|e| e.to_string())?;
    s.build().map_err(|e| e.to_string())
}

#[test]
fn scene_sources_are_checked_by_field_and_numbered_in_order() {
    let size = [20.0, 12.0, 5.0];
    for (dye, words) in [
        ("Region(min: (5.0, 3.0), max: (5.0, 8.0))", ["dye[0]", "empty"]),
        (
            "Rake(a: (1.0, 1.0), b: (1.0, 9.0)), Region(min: (5.0, 3.0), max: (25.0, 8.0))",
            ["dye[1]", "outside the tank"],
        ),
        ("Rake(a: (1.0, -2.0), b: (1.0, 9.0))", ["dye[0]", "outside the tank"]),
        ("Rake(a: (4.0, 4.0), b: (4.0, 4.0))", ["dye[0]", "zero length"]),
    ] {
        let e = scene(size, "", dye).expect_err("refused");
        assert!(words.iter().all(|w| e.contains(w)), "{dye}: {e}");
        assert!(e.contains("test.ron:1:"), "located: {e}");
    }
    let many = vec!["Rake(a: (1.0, 1.0), b: (1.0, 9.0))"; 65_536].join(", ");
    let e = scene(size, "", &many).expect_err("refused");
    assert!(e.contains("dye[65535]") && e.contains("at most 65535"), "{}", &e[..e.len().min(300)]);
    let s = scene(size, "", "Rake(a: (1.0, 1.0), b: (1.0, 9.0)), Region(min: (5.0, 3.0), max: (9.0, 8.0))").unwrap();
    let inside = |p: &[f64; 3]| p[0] >= 5.0 && p[0] < 9.0 && p[1] >= 3.0 && p[1] < 8.0;
    for (p, &d) in s.atoms.positions.iter().zip(&s.atoms.dye) {
        assert_eq!(d, if inside(p) { 2 } else { 0 }, "{p:?}");
    }
    assert_eq!(argon_sandbox::scene::dye::rakes(&s.dye), vec![DyeRake { a: [1.0, 1.0], b: [1.0, 9.0], tag: 1 }]);
}

#[test]
fn a_rake_in_a_uniform_stream_draws_a_straight_streak_downstream() {
    let (xr, y0, y1, u) = (4.0, 12.0, 18.0, 1.0);
    let setup = scene([26.0, 30.0, 5.0], "", &format!("Rake(a: ({xr}, {y0}), b: ({xr}, {y1}))")).unwrap();
    let b = setup.sim_box;
    let l = b.length();
    let mut atoms = setup.atoms.clone();
    // The whole fluid moves at u along x: a uniform stream (NVE keeps it).
    for v in atoms.velocities.iter_mut() {
        v[0] += u;
    }
    let mut sim = CpuBackend::new(b, setup.params.clone(), &atoms, None).unwrap();
    sim.set_dye_rakes(&argon_sandbox::scene::dye::rakes(&setup.dye)).unwrap();
    // y displacements, summed over short legs (no leg wraps more than half the box).
    let (steps, leg) = (3000, 100);
    let mut last = atoms.positions.clone();
    let mut dy = vec![0.0; atoms.len()];
    for _ in 0..steps / leg {
        sim.advance(leg).unwrap();
        let now = sim.copy_state().unwrap().atoms.positions;
        for (i, (p, q)) in now.iter().zip(&last).enumerate() {
            let d = p[1] - q[1];
            dy[i] += d - l[1] * (d / l[1]).round();
        }
        last = now;
    }
    let t = steps as f64 * setup.params.dt;
    let d_y = dy.iter().map(|d| d * d).sum::<f64>() / dy.len() as f64 / (2.0 * t);
    assert!(d_y > 0.0);
    // The bound below must leave room in the box to fail.
    assert!(y0 - 4.0 * (2.0 * d_y * t).sqrt() - 0.5 > 2.0 && y1 + 4.0 * (2.0 * d_y * t).sqrt() + 0.5 < l[1] - 2.0);
    let end = sim.copy_state().unwrap();
    let spread = (2.0 * d_y * t).sqrt();
    let tagged: Vec<&[f64; 3]> =
        end.atoms.positions.iter().zip(&end.atoms.dye).filter(|(_, d)| **d == 1).map(|(p, _)| p).collect();
    // As many atoms as the stream carries through the rake (number density x u t x height x
    // depth), plus those thermal motion carried across and back near the rake.
    let rho = end.atoms.len() as f64 / b.volume();
    let flux = rho * u * t * (y1 - y0) * l[2];
    let n = tagged.len() as f64;
    let ys = tagged.iter().map(|p| p[1]);
    let (lo, hi) = (ys.clone().fold(f64::MAX, f64::min), ys.fold(f64::MIN, f64::max));
    eprintln!("{n} tagged, {flux:.0} carried; y {lo:.2}..{hi:.2}; D_y {d_y:.3}, spread {spread:.2}");
    assert!(n > 0.95 * flux && n < 1.4 * flux, "{n} tagged, {flux:.0} carried through");
    for p in &tagged {
        // Downstream of the rake (x measured from it, with the wrap), no further than the
        // stream went, to a few sigma of thermal motion.
        let x = (p[0] - xr).rem_euclid(l[0]);
        let x = if x > l[0] - 3.0 { x - l[0] } else { x };
        assert!(x > -3.0 && x < u * t + 3.0, "tagged atom at x {:.2}: not downstream ({})", p[0], u * t);
        // Within the rake's y extent to the diffusion spread (4 standard deviations).
        assert!(p[1] > y0 - 4.0 * spread - 0.5 && p[1] < y1 + 4.0 * spread + 0.5, "y {:.2} (spread {spread:.2})", p[1]);
    }
    // The streak is straight: its mean y is the rake's middle, to its spread's error.
    let mean_y = tagged.iter().map(|p| p[1]).sum::<f64>() / n;
    assert!((mean_y - 0.5 * (y0 + y1)).abs() < 0.5, "mean y {mean_y:.2}");
}

#[test]
fn the_tunnels_inflow_zone_clears_tags() {
    let setup = scene(
        [24.0, 10.0, 5.0],
        "tunnel: (speed: 1.0, zone: 4.0), thermostat: Csvr(tau: 1.0, relative_to_flow: true),",
        "Region(min: (0.0, 0.0), max: (24.0, 10.0))",
    )
    .unwrap();
    assert!(setup.atoms.dye.iter().all(|&d| d == 1), "the region covers the tank");
    let mut sim = CpuBackend::new(setup.sim_box, setup.params.clone(), &setup.atoms, None).unwrap();
    sim.advance(600).unwrap();
    let end = sim.copy_state().unwrap();
    let in_zone = |p: &[f64; 3]| p[0] < 4.0;
    let (zone, rest): (Vec<_>, Vec<_>) = end.atoms.positions.iter().zip(&end.atoms.dye).partition(|(p, _)| in_zone(p));
    assert!(zone.iter().all(|(_, d)| **d == 0), "an atom in the zone kept its tag");
    let cleared = rest.iter().filter(|(_, d)| **d == 0).count();
    let kept = rest.iter().filter(|(_, d)| **d == 1).count();
    assert!(cleared > 0 && kept > 0, "{cleared} cleared, {kept} kept downstream");
}

/// The flow fields' dye-fraction layer (`FieldKind::Dye`) on the CPU backend: per bin, the
/// tagged share of the atoms that the same state puts there, counted on the host, exactly
/// (two counts of the same atoms). Sums made without a dye channel (a LAMMPS run's, rebuilt by
/// `lammps-fields`) leave the layer unavailable (NaN, `dye_sampled` false) rather than a wrong
/// zero. (The device backends count it too: `common::dye`, run on the CPU below.)
#[test]
fn the_dye_fraction_layer_is_each_bins_tagged_share_counted_on_the_host() {
    use argon_sandbox::flow::{Accumulator, FieldKind, FieldSpec, Grid, STRIDE, finish};
    let (b, atoms) = dyed_fluid(6);
    let params = SimParams { precision: Precision::Double, dt: 0.005, ..SimParams::default() };
    let mut sim = common::cpu(b, params, &atoms);
    // One sample a window, so the window is exactly the state after the step.
    let spec = FieldSpec { bin: 1.5, every: 1, window_tau: 0.005, ..FieldSpec::default() };
    sim.set_fields(Some(spec.clone())).unwrap();
    sim.advance(3).unwrap();
    let f = sim.take_fields(true).unwrap().pop().expect("a window");
    assert_eq!(f.samples, 1);
    assert!(f.dye_sampled, "the CPU backend counts dye per bin");
    let state = sim.copy_state().unwrap();
    let grid = Grid::new(&spec, &b).unwrap();
    let (mut count, mut tagged) = (vec![0u32; grid.len()], vec![0u32; grid.len()]);
    for (p, d) in state.atoms.positions.iter().zip(&state.atoms.dye) {
        let Some(bin) = grid.bin_of(*p) else { continue };
        count[bin] += 1;
        tagged[bin] += u32::from(*d != 0);
    }
    let layer = f.layer(FieldKind::Dye);
    let mut mixed = 0;
    for bin in 0..grid.len() {
        assert_eq!(f.count[bin], count[bin] as f64, "bin {bin}: atom count");
        if count[bin] == 0 {
            assert!(layer[bin].is_nan(), "bin {bin}: empty, yet a fraction {}", layer[bin]);
            continue;
        }
        assert_eq!(layer[bin], tagged[bin] as f64 / count[bin] as f64, "bin {bin}: {} of {}", tagged[bin], count[bin]);
        mixed += usize::from(tagged[bin] > 0 && tagged[bin] < count[bin]);
    }
    assert!(mixed > grid.len() / 4, "only {mixed} bins hold both tagged and untagged atoms: a weak test");
    // Sums made without a dye channel carry none.
    let plain = Accumulator::from_raw(&grid, vec![1.0; grid.len() * STRIDE], 1).unwrap();
    let g = finish(&plain, &grid, [0.0, 1.0]);
    assert!(!g.dye_sampled && g.dye.iter().all(|v| v.is_nan()), "sums without dye claim a dye layer");
    assert_eq!(FieldKind::from_name("dye").unwrap(), FieldKind::Dye);
}

/// The device backends' check of the dye-fraction layer (`common::dye`) on the CPU backend,
/// in each precision: the check itself holds where the layer is right.
#[test]
fn the_shared_dye_fraction_check_passes_on_the_cpu() {
    let open = |b, p, a: &AtomState| -> Box<dyn Backend> { Box::new(common::cpu(b, p, a)) };
    for precision in [Precision::Single, Precision::Mixed, Precision::Double] {
        common::dye::the_dye_fraction_layer_is_the_host_count(&open, &SimParams { precision, ..SimParams::default() });
    }
}
