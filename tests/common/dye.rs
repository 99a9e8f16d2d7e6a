//! Dye checks shared by the device backends' tests (`tests/wgpu_dye.rs`, `tests/cuda.rs`),
//! each against the CPU backend: tags kept by canonical index follow their atoms through
//! many steps of list rebuilds and re-sorting, add and remove, rollback and a CPU -> device ->
//! CPU switch; rakes tag the atoms crossing them as the CPU's do (the same set over a few
//! steps where the trajectories agree, the same straight streak in a uniform stream); the
//! tunnel's inflow zone clears tags; the published colour scalar for Dye is each atom's tag;
//! the flow fields' dye-fraction layer is the tagged share of each bin counted on the host.

use argon_sandbox::physics::dye::{Dye, DyeRake};
use argon_sandbox::physics::init::LatticeKind;
use argon_sandbox::physics::params::{Algorithm, SimParams};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomSelection, AtomState, Backend, ColourScalar, PositionTarget, start_at};

/// Opens a device backend on a system.
pub type Open<'a> = &'a dyn Fn(SimBox, SimParams, &AtomState) -> Box<dyn Backend>;

/// A scattered pattern of tags (about half the atoms, sources 1..=5), by canonical index.
fn pattern(n: usize) -> Vec<Dye> {
    (0..n).map(|i| if (i * 7919) % 11 < 5 { (1 + (i * 31) % 5) as Dye } else { 0 }).collect()
}

/// An FCC fluid of `cells` cells a side (rho* 0.75, T* 1.4) tagged with [`pattern`].
pub fn dyed_fluid(cells: usize) -> (SimBox, AtomState) {
    let (b, mut atoms) = super::lattice_system(LatticeKind::Fcc, 0.75, [cells; 3], 1.4, 11);
    atoms.dye = pattern(atoms.len());
    (b, atoms)
}

/// `base` with `algorithm` and a time step of 0.005.
fn with(base: &SimParams, algorithm: Algorithm) -> SimParams {
    SimParams { algorithm, dt: 0.005, ..base.clone() }
}

/// Tags kept through many steps of list rebuilds and re-sorting, without touching the dynamics.
pub fn tags_follow_their_atoms_through_re_sorting(open: Open, base: &SimParams) {
    for algorithm in [Algorithm::Neighbors, Algorithm::Cells] {
        tags_kept_while_atoms_travel(open, &with(base, algorithm), 5, 4, &format!("{algorithm:?}"));
    }
}

/// [`dyed_fluid`] of `cells` a side run with `params` for `rounds` x 100 steps beside the same
/// fluid without dye: every atom keeps its tag, the positions are the undyed run's bit for bit,
/// and more than half the atoms travel 0.5 sigma (so re-sorting would have scrambled tags kept
/// by slot). `label` names the case in failures.
pub fn tags_kept_while_atoms_travel(open: Open, params: &SimParams, cells: usize, rounds: usize, label: &str) {
    let (b, atoms) = dyed_fluid(cells);
    let mut sim = open(b, params.clone(), &atoms);
    let mut plain = open(b, params.clone(), &AtomState { dye: Vec::new(), ..atoms.clone() });
    for _ in 0..rounds {
        sim.advance(100).unwrap();
        plain.advance(100).unwrap();
        let (s, p) = (sim.copy_state().unwrap(), plain.copy_state().unwrap());
        let wrong = s.atoms.dye.iter().zip(&atoms.dye).filter(|(a, b)| a != b).count();
        assert!(s.atoms.dye.len() == atoms.len() && wrong == 0, "{label}: {wrong} atoms' tags changed");
        // The tags ride along without touching the dynamics.
        assert_eq!(s.atoms.positions, p.atoms.positions, "{label}");
        assert!(p.atoms.dye.is_empty(), "no dye column appears by itself");
    }
    let end = sim.copy_state().unwrap();
    let moved = end.atoms.positions.iter().zip(&atoms.positions).filter(|(a, o)| {
        let d = b.min_image(**a, **o);
        d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > 0.25
    });
    assert!(moved.count() > atoms.len() / 2, "{label}: too little motion to test re-sorting");
}

/// CPU -> device -> CPU, add, remove and rollback (device to device and through the host).
pub fn add_remove_rollback_and_a_switch_keep_each_atoms_tag(open: Open, base: &SimParams) {
    let (b, atoms) = dyed_fluid(4);
    let n = atoms.len();
    let params = with(base, Algorithm::Neighbors);
    // CPU -> device -> CPU, through snapshots as the app hands states across.
    let mut cpu = super::cpu(b, params.clone(), &atoms);
    cpu.advance(30).unwrap();
    let snap = cpu.snapshot().unwrap();
    let mut sim = open(b, params.clone(), &snap.atoms);
    start_at(sim.as_mut(), snap.step, snap.time, None).unwrap();
    sim.advance(50).unwrap();
    assert_eq!(sim.copy_state().unwrap().atoms.dye, atoms.dye);
    // Remove every third atom: the rest keep theirs in their new canonical order.
    let gone: Vec<usize> = (0..n).filter(|i| i % 3 == 0).collect();
    let before = sim.copy_state().unwrap();
    assert_eq!(sim.remove_atoms(&AtomSelection::Indices(gone)).unwrap(), n.div_ceil(3));
    let mut want: Vec<Dye> = (0..n).filter(|i| i % 3 != 0).map(|i| atoms.dye[i]).collect();
    assert_eq!(sim.copy_state().unwrap().atoms.dye, want);
    let new =
        |x: [f64; 3], dye: Vec<Dye>| AtomState { positions: vec![x], velocities: vec![[0.0; 3]], types: vec![0], dye };
    sim.add_atoms(&new(before.atoms.positions[0], vec![])).unwrap();
    sim.add_atoms(&new(before.atoms.positions[3], vec![9])).unwrap();
    want.extend([0, 9]);
    sim.advance(40).unwrap();
    assert_eq!(sim.copy_state().unwrap().atoms.dye, want);
    // Rollback: a checkpoint, then a rake changes tags (and an edit the atoms); back again.
    sim.checkpoint().unwrap();
    let at = sim.copy_state().unwrap();
    let l = b.length();
    sim.set_dye_rakes(&[DyeRake { a: [0.5 * l[0], 0.0], b: [0.5 * l[0], l[1]], tag: 8 }]).unwrap();
    sim.advance(200).unwrap();
    assert!(sim.copy_state().unwrap().atoms.dye.contains(&8), "the rake tagged nothing");
    sim.checkpoint().unwrap();
    let tagged = sim.copy_state().unwrap();
    sim.advance(100).unwrap();
    // Device to device: the later checkpoint's tags.
    assert_eq!(sim.rollback().unwrap(), Some(tagged.step));
    assert_eq!(sim.copy_state().unwrap().atoms.dye, tagged.atoms.dye);
    // Through the host after an edit: the earlier one's (a checkpoint before any rake).
    sim.set_dye_rakes(&[]).unwrap();
    let mut sim2 = open(b, params.clone(), &at.atoms);
    start_at(sim2.as_mut(), at.step, at.time, None).unwrap();
    sim2.checkpoint().unwrap();
    sim2.advance(20).unwrap();
    sim2.remove_atoms(&AtomSelection::Indices(vec![0, 1, 2])).unwrap();
    assert_eq!(sim2.rollback().unwrap(), Some(at.step));
    assert_eq!(sim2.copy_state().unwrap().atoms.dye, at.atoms.dye);
    // And back to the CPU, tags included.
    let end = sim.snapshot().unwrap();
    let mut back = CpuBackend::new(b, params, &end.atoms, None).unwrap();
    back.advance(20).unwrap();
    assert_eq!(back.copy_state().unwrap().atoms.dye, end.atoms.dye);
}

/// Rolling back to a checkpoint taken before rakes made the dye column: all untagged.
pub fn a_checkpoint_without_dye_clears_tags_rakes_made_since(open: Open, base: &SimParams) {
    let (b, mut atoms) = dyed_fluid(4);
    atoms.dye.clear();
    let mut sim = open(b, with(base, Algorithm::Neighbors), &atoms);
    sim.advance(10).unwrap();
    sim.checkpoint().unwrap();
    let l = b.length();
    sim.set_dye_rakes(&[DyeRake { a: [0.5 * l[0], 0.0], b: [0.5 * l[0], l[1]], tag: 3 }]).unwrap();
    sim.advance(200).unwrap();
    assert!(sim.copy_state().unwrap().atoms.dye.contains(&3));
    sim.rollback().unwrap();
    assert!(sim.copy_state().unwrap().atoms.dye.iter().all(|&d| d == 0), "tags from after the checkpoint");
}

/// The published colour scalar for Dye: the tag at each canonical index (0 without dye).
pub fn the_published_dye_scalar_is_each_atoms_tag(open: Open, base: &SimParams) {
    let (b, atoms) = dyed_fluid(4);
    let mut sim = open(b, with(base, Algorithm::Neighbors), &atoms);
    sim.advance(60).unwrap();
    let mut out = vec![[0.0f32; 4]; atoms.len()];
    sim.write_positions(PositionTarget::Host(&mut out), ColourScalar::Dye).unwrap();
    let state = sim.copy_state().unwrap();
    for (i, (o, &d)) in out.iter().zip(&state.atoms.dye).enumerate() {
        assert_eq!(o[3], d as f32, "atom {i}");
        assert_eq!(o[0], state.atoms.positions[i][0] as f32, "atom {i} at its canonical index");
    }
    assert!(out.iter().any(|o| o[3] == 5.0));
    // Without a dye column: all untagged.
    let mut plain = open(b, with(base, Algorithm::Neighbors), &AtomState { dye: Vec::new(), ..atoms });
    plain.write_positions(PositionTarget::Host(&mut out), ColourScalar::Dye).unwrap();
    assert!(out.iter().all(|o| o[3] == 0.0));
}

/// A uniform stream along x through a rake at x = `xr` from y0 to y1: (box, atoms, rake).
fn stream(size: [f64; 3], xr: f64, y: [f64; 2], u: f64) -> (SimBox, AtomState, DyeRake) {
    let cells = [(size[0] / 1.65) as usize, (size[1] / 1.65) as usize, (size[2] / 1.65) as usize];
    let (b, mut atoms) = super::lattice_system(LatticeKind::Fcc, 0.7, cells, 1.0, 5);
    for v in atoms.velocities.iter_mut() {
        v[0] += u;
    }
    let l = b.length();
    let rake = DyeRake { a: [b.lo[0] + xr, b.lo[1] + y[0] * l[1]], b: [b.lo[0] + xr, b.lo[1] + y[1] * l[1]], tag: 1 };
    (b, atoms, rake)
}

/// The same tagged set as the CPU's over a few steps where the trajectories agree.
pub fn rakes_tag_the_cpus_atoms_while_the_trajectories_agree(open: Open) {
    // Double precision on both: the trajectories agree to rounding for a few dozen steps, so
    // the crossings (tested in f64 from the same positions and velocities) are the same set.
    let (b, lattice, rake) = stream([16.0, 16.0, 6.6], 4.0, [0.2, 0.8], 1.0);
    let params = SimParams { precision: Precision::Double, dt: 0.005, ..SimParams::default() };
    // Melted first (a lattice's atoms rattle in their cages and cross nothing).
    let mut melt = super::cpu(b, params.clone(), &lattice);
    melt.advance(300).unwrap();
    let atoms = melt.copy_state().unwrap().atoms;
    let mut cpu: Box<dyn Backend> = Box::new(super::cpu(b, params.clone(), &atoms));
    let mut gpu = open(b, params, &atoms);
    // A rake on the periodic x edge too: its crossings are found only in the wrapped image.
    let edge = DyeRake { a: [b.lo[0], rake.a[1]], b: [b.lo[0], rake.b[1]], tag: 2 };
    for s in [&mut cpu, &mut gpu] {
        s.set_dye_rakes(&[rake, edge]).unwrap();
    }
    let (mut total, mut edge_total) = (0, 0);
    for _ in 0..10 {
        cpu.advance(10).unwrap();
        gpu.advance(10).unwrap();
        let (c, g) = (cpu.copy_state().unwrap(), gpu.copy_state().unwrap());
        let drift =
            c.atoms.positions.iter().zip(&g.atoms.positions).map(|(p, q)| (p[0] - q[0]).abs()).fold(0.0, f64::max);
        assert!(drift < 1e-9, "the trajectories parted ({drift:e})");
        let diff: Vec<usize> = (0..c.atoms.len()).filter(|&i| c.atoms.dye[i] != g.atoms.dye[i]).collect();
        assert!(diff.is_empty(), "{} atoms tagged differently: {:?}", diff.len(), &diff[..diff.len().min(10)]);
        total = c.atoms.dye.iter().filter(|&&d| d == 1).count();
        edge_total = c.atoms.dye.iter().filter(|&&d| d == 2).count();
    }
    eprintln!("{edge_total} atoms crossed the periodic edge's rake");
    assert!(edge_total > 5, "only {edge_total} atoms crossed the periodic edge's rake");
    eprintln!("{total} atoms crossed the rake");
    assert!(total > 20, "only {total} atoms crossed the rake");
}

/// A rake in a uniform stream: the CPU's straight streak downstream (its statistics).
pub fn a_rake_in_a_uniform_stream_draws_the_cpus_straight_streak(open: Open, base: &SimParams) {
    let (xr, u) = (3.0, 1.0);
    let (b, atoms, rake) = stream([20.0, 20.0, 5.0], xr, [0.35, 0.65], u);
    let l = b.length();
    let params = with(base, Algorithm::Neighbors);
    let mut cpu: Box<dyn Backend> = Box::new(CpuBackend::new(b, params.clone(), &atoms, None).unwrap());
    let mut gpu = open(b, params.clone(), &atoms);
    cpu.set_dye_rakes(&[rake]).unwrap();
    gpu.set_dye_rakes(&[rake]).unwrap();
    let steps = 1200;
    cpu.advance(steps).unwrap();
    gpu.advance(steps).unwrap();
    let t = steps as f64 * params.dt;
    let streak = |s: &mut dyn Backend| {
        let a = s.copy_state().unwrap().atoms;
        let tagged: Vec<[f64; 3]> = a.positions.iter().zip(&a.dye).filter(|(_, d)| **d == 1).map(|(p, _)| *p).collect();
        let n = tagged.len() as f64;
        let mean_y = tagged.iter().map(|p| p[1]).sum::<f64>() / n;
        for p in &tagged {
            // Downstream of the rake, no further than the stream went (a few sigma of thermal motion).
            let x = (p[0] - rake.a[0]).rem_euclid(l[0]);
            let x = if x > l[0] - 3.0 { x - l[0] } else { x };
            assert!(x > -3.0 && x < u * t + 3.0, "tagged atom at x {:.2}: not downstream", p[0]);
        }
        (n, mean_y)
    };
    let (nc, yc) = streak(cpu.as_mut());
    let (ng, yg) = streak(gpu.as_mut());
    let rho = atoms.len() as f64 / b.volume();
    let flux = rho * u * t * (rake.b[1] - rake.a[1]) * l[2];
    eprintln!("tagged: CPU {nc}, device {ng}, carried {flux:.0}; mean y {yc:.2} {yg:.2}");
    for n in [nc, ng] {
        assert!(n > 0.95 * flux && n < 1.4 * flux, "{n} tagged, {flux:.0} carried through");
    }
    // The same streak: counts within their Poisson noise (4 sigma), mean y on the rake's middle.
    assert!((nc - ng).abs() < 4.0 * (nc + ng).sqrt(), "CPU {nc} vs device {ng}");
    let mid = 0.5 * (rake.a[1] + rake.b[1]);
    assert!((yc - mid).abs() < 0.5 && (yg - mid).abs() < 0.5, "mean y {yc:.2} {yg:.2} vs {mid:.2}");
}

/// The tunnel's inflow zone clears the tags of the atoms passing it (`precision` the scene's).
pub fn the_tunnels_inflow_zone_clears_tags(open: Open, precision: &str) {
    let text = &format!(
        "(version: 1, box: (size: (24.0, 10.0, 5.0), boundaries: (Periodic, Periodic, Periodic)), \
         temperature_k: 120.0, atoms: [Lattice(kind: Fcc, density: 0.7)], integrator: (dt: 0.005, skin: 0.3), \
         precision: {precision}, seed: 5, tunnel: (speed: 1.0, zone: 4.0), \
         thermostat: Csvr(tau: 1.0, relative_to_flow: true), dye: [Region(min: (0.0, 0.0), max: (24.0, 10.0))])"
    );
    let setup = argon_sandbox::scene::Scene::from_str(text, "test.ron").unwrap().build().unwrap();
    assert!(setup.atoms.dye.iter().all(|&d| d == 1), "the region covers the tank");
    let mut sim = open(setup.sim_box, setup.params.clone(), &setup.atoms);
    sim.advance(400).unwrap();
    let end = sim.copy_state().unwrap();
    let lo = setup.sim_box.lo[0];
    let (zone, rest): (Vec<_>, Vec<_>) =
        end.atoms.positions.iter().zip(&end.atoms.dye).partition(|(p, _)| p[0] < lo + 4.0);
    assert!(!zone.is_empty() && zone.iter().all(|(_, d)| **d == 0), "an atom in the zone kept its tag");
    let cleared = rest.iter().filter(|(_, d)| **d == 0).count();
    let kept = rest.iter().filter(|(_, d)| **d == 1).count();
    assert!(cleared > 0 && kept > 0, "{cleared} cleared, {kept} kept downstream");
}

/// A dilute gas for the dye-fraction layer on `grid`: per bin 0 to 4 atoms (canonical order
/// bin by bin) 1.5 sigma apart along z, within 0.3 sigma of the bin's centre in x and y, so
/// a few steps move none near a bin edge whatever the precision; the bins' atoms all tagged,
/// none, or every second one (tags 1 to 65535, in either half of a device's tag word, one with a zero low byte).
fn dye_gas(grid: &argon_sandbox::flow::Grid) -> AtomState {
    let mut atoms = AtomState::default();
    for bin in 0..grid.len() {
        let [cx, cy, _] = grid.centre(bin);
        for j in 0..(bin * 7) % 5 {
            let i = atoms.len();
            let u = ((bin * 13 + j * 29) % 17) as f64 / 17.0 - 0.5;
            atoms.positions.push([cx + 0.6 * u, cy - 0.5 * u, 0.75 + 1.5 * j as f64]);
            let w = |k: usize| ((i * k) % 21) as f64 / 10.0 - 1.0;
            atoms.velocities.push([w(37), w(53), w(11)]);
            atoms.types.push(0);
            let tagged = match bin % 3 {
                0 => true,
                1 => false,
                _ => j % 2 == 1,
            };
            atoms.dye.push(if tagged { [1, 256, 65535, 2][(i + j) % 4] } else { 0 });
        }
    }
    atoms
}

/// The flow fields' dye-fraction layer (`FieldKind::Dye`) as the backend counts it: per bin,
/// the tagged share of the window's atom-samples equals the share counted on the host from
/// the same state, exactly (integer counts both), in bins wholly, partly and not tagged, with
/// NaN in empty bins; the window's 3 samples hold 3 times the host's count of each bin (no
/// atom crosses a bin edge, checked). Without a dye column the layer is 0 wherever there are
/// atoms: counted, not missing.
pub fn the_dye_fraction_layer_is_the_host_count(open: Open, base: &SimParams) {
    use argon_sandbox::flow::{FieldKind, FieldSpec, Grid};
    let b = SimBox::new([24.0, 24.0, 6.0], [true, true, true]);
    let spec = FieldSpec { bin: 3.0, every: 1, window_tau: 0.015, ..FieldSpec::default() };
    let grid = Grid::new(&spec, &b).unwrap();
    let atoms = dye_gas(&grid);
    let params = SimParams { dt: 0.005, ..base.clone() };
    // (atoms, tagged) per bin of a state, counted on the host.
    let host = |a: &AtomState| {
        let mut c = vec![(0u32, 0u32); grid.len()];
        for (i, p) in a.positions.iter().enumerate() {
            let bin = grid.bin_of(*p).expect("every atom is inside the grid");
            c[bin].0 += 1;
            c[bin].1 += u32::from(a.dye.get(i).is_some_and(|&d| d != 0));
        }
        c
    };
    for dyed in [true, false] {
        let start = if dyed { atoms.clone() } else { AtomState { dye: Vec::new(), ..atoms.clone() } };
        let mut sim = open(b, params.clone(), &start);
        sim.set_fields(Some(spec.clone())).unwrap();
        sim.advance(3).unwrap();
        let f = sim.take_fields(true).unwrap().pop().expect("a window");
        assert_eq!(f.samples, 3, "dye {dyed}");
        assert!(f.dye_sampled, "dye {dyed}: the backend's sums carry no dye channel");
        let end = sim.copy_state().unwrap();
        let counts = host(&end.atoms);
        assert_eq!(counts, host(&start), "dye {dyed}: an atom changed bins or tags: a weak test");
        let layer = f.layer(FieldKind::Dye);
        let (mut empty, mut full, mut none, mut partial) = (0, 0, 0, 0);
        for (bin, &(n, t)) in counts.iter().enumerate() {
            assert_eq!(f.count[bin], 3.0 * n as f64, "dye {dyed}, bin {bin}: atom-samples");
            if n == 0 {
                assert!(layer[bin].is_nan(), "dye {dyed}, bin {bin}: empty, yet a fraction {}", layer[bin]);
                empty += 1;
                continue;
            }
            assert_eq!(layer[bin], t as f64 / n as f64, "dye {dyed}, bin {bin}: {t} of {n} tagged");
            match t {
                0 => none += 1,
                t if t == n => full += 1,
                _ => partial += 1,
            }
        }
        assert!(empty > 0 && none > 0, "dye {dyed}: {empty} empty bins, {none} untagged");
        if dyed {
            assert!(full > 0 && partial > 0, "{full} bins all tagged, {partial} partly: a weak test");
        }
    }
}
