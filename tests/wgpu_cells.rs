//! The cell list on the wgpu backend (`Algorithm::Cells`: the atoms binned into cells of the
//! largest cut-off and sorted by cell every step, each atom scanning its 27 neighbour cells,
//! `shaders/sim/cellforces.wgsl`), on whatever adapter wgpu finds (CI: Mesa's lavapipe).
//! Without an adapter each test prints `skipped: no wgpu adapter` and passes, unless
//! ARGON_REQUIRE_RENDER=1 makes that a failure.
//!
//! - On the same state, the cell-list forces, energies and virials equal the neighbour
//!   list's on the same backend to f32 summation round-off (the bound is derived below),
//!   on the list's own cell grid and on its wider one, and the CPU's cell list in double
//!   within 1e-5 (the bound `tests/wgpu_backend.rs` holds the list to): a periodic liquid, a
//!   tank with walls, gravity and a drive, a slab two cells thick, a four-species mixture at
//!   per-pair cut-offs, and a box of two cells a side (where the lists fall back to all pairs).
//! - Trajectories of 200 steps (in.lj's held-out LAMMPS run of 4,000 atoms, a two-species
//!   mixture at per-pair cut-offs, a tank with walls) give the CPU cell list's thermo (in
//!   double) within 1e-4 every 50 steps, and in.lj LAMMPS's: the bound and length of the
//!   LAMMPS trajectory in `tests/wgpu_backend.rs`.
//! - Obstacles, surface friction and the forces on the bodies as the CPU cell list's.
//! - Switching Cells <-> Neighbors mid-run keeps the state bit for bit and the energy.
//! - The atoms are binned every step; checked and trusted shader modules agree; reruns are
//!   identical; blow-ups roll back.

mod common;

use std::sync::Arc;

use argon_sandbox::io::extxyz::read_extxyz;
use argon_sandbox::physics::lj::Table;
use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{Algorithm, SimParams};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::gpu::GpuBackend;
use argon_sandbox::sim::{AtomState, Backend, Snapshot, Telemetry};
use common::{jiggled_fluid, rel};

fn with(p: &SimParams, algorithm: Algorithm, precision: Precision) -> SimParams {
    SimParams { algorithm, precision, ..p.clone() }
}

/// Largest |F_gpu - F_cpu| over the largest |F_cpu|.
fn force_error(got: &[[f64; 3]], want: &[[f64; 3]]) -> f64 {
    let norm = |f: &[f64; 3]| (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
    let scale = want.iter().map(norm).fold(0.0, f64::max);
    got.iter().zip(want).map(|(a, b)| norm(&[a[0] - b[0], a[1] - b[1], a[2] - b[2]])).fold(0.0, f64::max) / scale
}

/// A two-species fluid (argon and xenon, 60/40) at per-pair cut-offs of 2.5 sigma_ij.
fn two_species_fluid(seed: u64) -> (SimBox, AtomState, SimParams) {
    let (b, mut atoms) = jiggled_fluid([6, 6, 6], [false; 3], 0.1, &[], seed);
    let species: Vec<_> =
        ["Ar", "Xe"].iter().map(|s| argon_sandbox::physics::species::catalogue_species(s).unwrap()).collect();
    atoms.types = argon_sandbox::physics::species::assign_types(atoms.len(), &[0.6, 0.4], seed);
    let masses: Vec<f64> = atoms.types.iter().map(|&t| species[t as usize].mass).collect();
    let n = atoms.len() as f64;
    atoms.velocities = argon_sandbox::physics::init::maxwell_boltzmann(&masses, 1.0, 3.0 * n - 3.0, seed, 0);
    (b, atoms, SimParams { species, ..SimParams::default() })
}

fn systems() -> Vec<(&'static str, SimBox, SimParams, AtomState)> {
    let (b, atoms) = jiggled_fluid([6, 6, 6], [false; 3], 0.1, &[], 3);
    let (tb, tank) = jiggled_fluid([6, 5, 4], [true, true, false], 0.1, &[], 4);
    let tank_params = SimParams { gravity: 0.3, drive: 0.2, ..SimParams::default() };
    // Two cells of the cut-off across z: each visited once, minimum images per pair.
    let (sb, slab) = jiggled_fluid([7, 7, 4], [false; 3], 0.1, &[], 5);
    let (mb, mix, species) = common::mixture::four_species_fluid(5);
    let mix_params = SimParams { species, ..SimParams::default() };
    vec![
        ("periodic liquid", b, SimParams::default(), atoms),
        ("tank with walls, gravity and a drive", tb, tank_params, tank),
        ("thin periodic slab", sb, SimParams::default(), slab),
        ("four-species mixture", mb, mix_params, mix),
    ]
}

/// f32's unit round-off.
const U: f64 = 1.0 / 16_777_216.0;

/// gamma_m = m u / (1 - m u): a sum of m terms in f32, in any order and grouping of depth m,
/// is within gamma_m times the sum of their magnitudes of the exact sum (Higham, Accuracy and
/// Stability of Numerical Algorithms, 4.2).
fn gamma(m: usize) -> f64 {
    m as f64 * U / (1.0 - m as f64 * U)
}

/// What the f32 round-off of the pair sums is measured against, from the positions as the
/// device holds them (rounded to f32), in double: per atom its pairs within their cut-off
/// and per axis the sum of its pair forces' magnitudes; over all pairs the sums of
/// |energy| / 2 and |virial| / 2 (as the kernels count each pair from both atoms).
struct Magnitudes {
    pairs: Vec<usize>,
    force: Vec<[f64; 3]>,
    energy: f64,
    virial: f64,
}

fn magnitudes(b: &SimBox, p: &SimParams, atoms: &AtomState) -> Magnitudes {
    let table = Table::<f64>::from_params(p);
    let x: Vec<[f64; 3]> = atoms.positions.iter().map(|q| q.map(|v| v as f32 as f64)).collect();
    let n = x.len();
    let mut m = Magnitudes { pairs: vec![0; n], force: vec![[0.0; 3]; n], energy: 0.0, virial: 0.0 };
    for i in 0..n {
        for j in 0..n {
            if i == j {
                continue;
            }
            let d = b.min_image(x[i], x[j]);
            let rsq = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let c = &table.pairs[atoms.types[i] as usize * table.n_types + atoms.types[j] as usize];
            if rsq < c.rcut_sq {
                let (fd, e) = c.eval(rsq);
                m.pairs[i] += 1;
                for k in 0..3 {
                    m.force[i][k] += (d[k] * fd).abs();
                }
                m.energy += 0.5 * e.abs();
                m.virial += 0.5 * (rsq * fd).abs();
            }
        }
    }
    m
}

/// The cell-list forces and telemetry against `other`'s (another pair search on the same
/// backend, from the same state). Both kernels evaluate every pair the same way, so they can
/// differ only in the order the terms are summed and in whether a compiler fuses a term's
/// multiply with its add: each sum is within gamma_m sum|t| of the exact one, and a fused
/// multiply-add moves a term by at most u |t|, so the two differ by less than
/// 3 gamma_m sum|t| (per atom and axis over its m pairs; for the energy and virial over the
/// deepest sum: an atom's pairs, then the 8 levels of the workgroup tree and the
/// compensated total over workgroups, given 2 levels more).
fn assert_same_sums(name: &str, mag: &Magnitudes, cells: &mut GpuBackend, other: &mut GpuBackend) {
    let (fc, fo) = (cells.forces().unwrap(), other.forces().unwrap());
    let mut worst = 0.0f64;
    let same = fc.iter().zip(&fo).filter(|(a, b)| a == b).count();
    for (i, (a, b)) in fc.iter().zip(&fo).enumerate() {
        for k in 0..3 {
            let bound = 3.0 * gamma(mag.pairs[i]) * mag.force[i][k];
            let off = (a[k] - b[k]).abs();
            worst = worst.max(off / bound);
            assert!(off <= bound, "{name}: atom {i} axis {k}: {} vs {} ({off:e} > {bound:e})", a[k], b[k]);
        }
    }
    let (tc, to) = (cells.measure().unwrap(), other.measure().unwrap());
    let depth = mag.pairs.iter().copied().max().unwrap() + 8 + 2;
    for (what, a, b, scale) in
        [("pair energy", tc.pair_energy, to.pair_energy, mag.energy), ("virial", tc.virial, to.virial, mag.virial)]
    {
        let bound = 3.0 * gamma(depth) * scale;
        assert!((a - b).abs() <= bound, "{name}: {what} {a} vs {b} (bound {bound:e})");
    }
    // The same velocities summed over workgroups of other atoms: positive terms, depth 10.
    let (a, b) = (tc.kinetic_energy, to.kinetic_energy);
    assert!((a - b).abs() <= 3.0 * gamma(10) * b, "{name}: kinetic energy {a} vs {b}");
    eprintln!(
        "{name}: largest force difference {worst:.3} of the round-off bound; {same} of {} atoms' forces equal bit for bit",
        fc.len()
    );
}

/// On the same state: the cell list's forces, energy and virial as the neighbour list's to
/// summation round-off, on the list's own grid (a skin of 0.001 keeps its cells those of
/// the cut-off) and on its usual wider one; and as the CPU's cell list in double within 1e-5.
#[test]
fn cell_forces_match_the_neighbour_list_and_the_cpu() {
    if !common::wgpu_adapter() {
        return;
    }
    for (name, b, p, atoms) in systems() {
        let mag = magnitudes(&b, &p, &atoms);
        let mut cells = GpuBackend::new(b, with(&p, Algorithm::Cells, Precision::Single), &atoms, None).unwrap();
        assert_eq!(cells.pair_search(), "cell list", "{name}");
        for skin in [0.001, p.skin] {
            let rc = p.max_cutoff();
            if skin < p.skin {
                let same = (0..3).all(|k| {
                    let l = b.length()[k];
                    (l / rc).floor() == (l / (rc + skin)).floor()
                });
                assert!(same, "{name}: the list's grid should be the cells' at skin {skin}");
            }
            let q = SimParams { skin, ..with(&p, Algorithm::Neighbors, Precision::Single) };
            let mut list = GpuBackend::new(b, q, &atoms, None).unwrap();
            assert_eq!(list.pair_search(), "neighbour list", "{name}");
            assert_same_sums(&format!("{name}, list skin {skin}"), &mag, &mut cells, &mut list);
        }
        let mut cpu = CpuBackend::new(b, with(&p, Algorithm::Cells, Precision::Double), &atoms, None).unwrap();
        let err = force_error(&cells.forces().unwrap(), &cpu.forces().unwrap());
        assert_eq!(cpu.pair_search(), "cell list", "{name}");
        assert!(err < 1e-5, "{name}: forces off the CPU's by {err:e}");
        let (t, want) = (cells.measure().unwrap(), cpu.measure().unwrap());
        for (what, a, c) in [
            ("pair energy", t.pair_energy, want.pair_energy),
            ("external energy", t.external_energy, want.external_energy),
            ("virial", t.virial, want.virial),
        ] {
            let off = (a - c).abs() / c.abs().max(1.0);
            assert!(off < 1e-5, "{name}: {what} {a} vs CPU {c}");
        }
    }
}

/// In double (where the adapter has 64-bit floats) the cell list's forces and energies are the
/// CPU's cell list's to 1e-12, and in mixed to the single bound.
#[test]
fn cell_forces_match_the_cpu_in_mixed_and_double() {
    if !common::wgpu_f64_adapter() {
        return;
    }
    for (name, b, p, atoms) in systems() {
        let mut cpu = CpuBackend::new(b, with(&p, Algorithm::Cells, Precision::Double), &atoms, None).unwrap();
        let want = cpu.forces().unwrap();
        let want_t = cpu.measure().unwrap();
        for (precision, bound) in [(Precision::Mixed, 1e-5), (Precision::Double, 1e-12)] {
            let mut cells = GpuBackend::new(b, with(&p, Algorithm::Cells, precision), &atoms, None).unwrap();
            assert_eq!(cells.pair_search(), "cell list", "{name}");
            let err = force_error(&cells.forces().unwrap(), &want);
            assert!(err < bound, "{name}, {precision:?}: forces off the CPU's by {err:e}");
            let t = cells.measure().unwrap();
            for (what, a, c) in
                [("pair energy", t.pair_energy, want_t.pair_energy), ("virial", t.virial, want_t.virial)]
            {
                let off = (a - c).abs() / c.abs().max(1.0);
                assert!(off < bound, "{name}, {precision:?}: {what} {a} vs CPU {c}");
            }
        }
    }
}

/// A box of two cut-off cells a side (5.1 sigma, the smallest the cut-off allows): the cell
/// list runs there, visiting each cell once along every axis; the neighbour list (cut-off
/// and skin, past half the box) runs too, the box one column of list cells along every axis
/// (each pair's minimum image, `Algorithm::column_axes`), where it had fallen back to all
/// pairs. Both give the CPU's forces.
#[test]
fn two_cells_a_side_run_the_cell_list_where_lists_fall_back() {
    if !common::wgpu_adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([3, 3, 3], [false; 3], 0.1, &[], 14);
    let p = SimParams::default();
    assert!(b.length()[0] >= 2.0 * p.max_cutoff() && b.length()[0] < 2.0 * p.list_range());
    let mut cells = GpuBackend::new(b, with(&p, Algorithm::Cells, Precision::Single), &atoms, None).unwrap();
    assert_eq!(cells.pair_search(), "cell list");
    let mut list = GpuBackend::new(b, with(&p, Algorithm::Neighbors, Precision::Single), &atoms, None).unwrap();
    assert_eq!(list.pair_search(), "neighbour list");
    let mut cpu = CpuBackend::new(b, with(&p, Algorithm::Cells, Precision::Double), &atoms, None).unwrap();
    let want_f = cpu.forces().unwrap();
    let err = force_error(&cells.forces().unwrap(), &want_f);
    assert!(err < 1e-5, "two cells a side: forces off the CPU's by {err:e}");
    let err = force_error(&list.forces().unwrap(), &want_f);
    assert!(err < 1e-5, "one list column a side: forces off the CPU's by {err:e}");
    let (t, want) = (cells.measure().unwrap(), cpu.measure().unwrap());
    assert!(rel(t.pair_energy, want.pair_energy) < 1e-5, "pair energy {} vs CPU {}", t.pair_energy, want.pair_energy);
    assert!(rel(t.virial, want.virial) < 1e-5, "virial {} vs CPU {}", t.virial, want.virial);
}

/// Thermo rows (temp, pe, ke, etotal, press) of a record.
fn thermo(t: &Telemetry) -> [(&'static str, f64); 5] {
    [
        ("temp", t.temperature),
        ("pe", t.pe_per_atom()),
        ("ke", t.ke_per_atom()),
        ("etotal", t.etotal_per_atom()),
        ("press", t.pressure),
    ]
}

/// The record at step 0, then the telemetry of `steps` steps.
fn thermo_run(sim: &mut dyn Backend, steps: u64) -> Vec<Telemetry> {
    let mut out = vec![sim.measure().unwrap()];
    sim.advance(steps).unwrap();
    out.extend(sim.drain_telemetry());
    out
}

/// The cell list's run of 200 steps (thermo every 50) against the CPU cell list's in double:
/// each quantity within 1e-4 relative, the bound (and length) of the LAMMPS trajectory in
/// `tests/wgpu_backend.rs`. Returns the run's records.
fn assert_trajectory_matches_the_cpu(name: &str, b: SimBox, p: &SimParams, atoms: &AtomState) -> Vec<Telemetry> {
    let p = SimParams { telemetry_every: 50, ..p.clone() };
    let mut g = GpuBackend::new(b, with(&p, Algorithm::Cells, Precision::Single), atoms, None).unwrap();
    assert_eq!(g.pair_search(), "cell list", "{name}");
    let got = thermo_run(&mut g, 200);
    let mut cpu = CpuBackend::new(b, with(&p, Algorithm::Cells, Precision::Double), atoms, None).unwrap();
    let want = thermo_run(&mut cpu, 200);
    assert_eq!(cpu.pair_search(), "cell list", "{name}");
    assert_eq!(got.len(), 5, "{name}: records");
    assert_eq!(got.len(), want.len(), "{name}: records");
    let mut worst = 0.0f64;
    for (a, c) in got.iter().zip(&want) {
        assert_eq!(a.step, c.step, "{name}");
        for ((col, x), (_, y)) in thermo(a).into_iter().zip(thermo(c)) {
            let off = rel(x, y);
            worst = worst.max(off);
            assert!(off < 1e-4, "{name} step {} {col}: {x} vs CPU {y} ({off:.1e})", a.step);
        }
    }
    eprintln!("{name}: largest relative thermo difference from the CPU over 200 steps {worst:.1e}");
    got
}

/// in.lj (the held-out LAMMPS trajectory: 4,000 atoms of fcc at 0.8442 from T 1.44, NVE), a
/// two-species mixture at per-pair cut-offs, and a tank with walls, gravity and a drive, 200
/// steps each as the CPU's cell list; in.lj's thermo also within 1e-4 of LAMMPS's.
#[test]
fn trajectories_match_the_cpu_cell_list() {
    if !common::wgpu_adapter() {
        return;
    }
    let r = common::reference();
    let rows = r["nve_trajectory_fcc4000"]["rows"].as_array().unwrap();
    let f = read_extxyz(&common::validation_dir().join("lammps_fcc4000_T1.44_initial.extxyz")).unwrap();
    let n = f.positions.len();
    let atoms = AtomState {
        positions: f.positions,
        velocities: f.velocities.unwrap(),
        types: vec![0; n],
        ..Default::default()
    };
    let got = assert_trajectory_matches_the_cpu("in.lj", f.sim_box, &SimParams::default(), &atoms);
    assert_eq!(got.len(), rows.len());
    for (t, want) in got.iter().zip(rows) {
        assert_eq!(t.step, want["step"].as_u64().unwrap());
        for (col, mine) in thermo(t) {
            let off = rel(mine, want[col].as_f64().unwrap());
            assert!(off < 1e-4, "in.lj step {} {col}: {mine} vs LAMMPS {} ({off:.1e})", t.step, want[col]);
        }
    }
    let (mb, mix, mp) = two_species_fluid(16);
    assert_trajectory_matches_the_cpu("argon-xenon mixture", mb, &mp, &mix);
    let (tb, tank) = jiggled_fluid([6, 5, 4], [true, true, false], 0.1, &[], 17);
    let tp = SimParams { gravity: 0.3, drive: 0.2, ..SimParams::default() };
    assert_trajectory_matches_the_cpu("tank with walls, gravity and a drive", tb, &tp, &tank);
}

/// A tank periodic in x and y, walled in z, with a circle and a rotated rectangle, under a
/// drive with surface friction, after 30 CPU steps (atoms pressed against the surfaces).
fn obstacle_tank() -> (Snapshot, SimParams, Arc<ObstacleField>) {
    let shapes = vec![
        Shape::Circle { centre: [4.0, 4.0], radius: 1.6 },
        Shape::Rectangle { centre: [10.5, 9.0], half_size: [1.4, 0.7], angle_deg: 30.0 },
    ];
    let (b, atoms) = jiggled_fluid([9, 8, 4], [false, false, true], 0.1, &shapes, 21);
    let field = Arc::new(ObstacleField::bake(&shapes, &b, 0.1).unwrap());
    let friction = Some(argon_sandbox::physics::friction::SurfaceFriction { damp: 0.5, range: 1.5 });
    let p = SimParams { drive: 0.5, surface_friction: friction, telemetry_every: 5, ..SimParams::default() };
    let mut cpu =
        CpuBackend::new(b, with(&p, Algorithm::Cells, Precision::Double), &atoms, Some(field.clone())).unwrap();
    cpu.advance(30).unwrap();
    (cpu.snapshot().unwrap(), p, field)
}

/// Obstacles, surface friction and the forces on the bodies under the cell list, from the
/// same state as the CPU's cell list in double: forces within 1e-5 of the largest and the
/// external energy and virial within 1e-5 relative (the bounds `tests/wgpu_flow.rs` holds the
/// list to), and each body's force over two records of five steps within 1e-4 of the
/// largest body force.
#[test]
fn obstacles_and_surfaces_match_the_cpu_cell_list() {
    if !common::wgpu_adapter() {
        return;
    }
    let (s, p, field) = obstacle_tank();
    let open_cpu = || {
        let mut c =
            CpuBackend::new(s.sim_box, with(&p, Algorithm::Cells, Precision::Double), &s.atoms, Some(field.clone()))
                .unwrap();
        c.restore(&s).unwrap();
        c
    };
    let mut g =
        GpuBackend::new(s.sim_box, with(&p, Algorithm::Cells, Precision::Single), &s.atoms, Some(field.clone()))
            .unwrap();
    g.restore(&s).unwrap();
    assert_eq!(g.pair_search(), "cell list");
    let mut c = open_cpu();
    let err = force_error(&g.forces().unwrap(), &c.forces().unwrap());
    assert!(err < 1e-5, "forces off the CPU's by {err:e}");
    let (t, want) = (g.measure().unwrap(), c.measure().unwrap());
    assert!(want.external_energy > 1.0, "the obstacles push: {}", want.external_energy);
    for (what, a, b) in [
        ("external energy", t.external_energy, want.external_energy),
        ("virial", t.virial, want.virial),
        ("pair energy", t.pair_energy, want.pair_energy),
    ] {
        assert!((a - b).abs() / b.abs().max(1.0) < 1e-5, "{what} {a} vs CPU {b}");
    }
    g.advance(10).unwrap();
    c.advance(10).unwrap();
    let (got, want) = (g.drain_telemetry(), c.drain_telemetry());
    assert_eq!(got.len(), 2);
    for (a, b) in got.iter().zip(&want) {
        assert_eq!(a.step, b.step);
        assert_eq!(a.body_forces.len(), 4, "two shapes and two wall faces");
        assert_eq!(a.body_forces.len(), b.body_forces.len());
        let scale = b.body_forces.iter().map(|f| f.force.iter().map(|x| x * x).sum::<f64>().sqrt()).fold(0.0, f64::max);
        for (x, y) in a.body_forces.iter().zip(&b.body_forces) {
            assert_eq!(x.body.name(), y.body.name());
            for k in 0..3 {
                let off = (x.force[k] - y.force[k]).abs();
                assert!(off < 1e-4 * scale, "step {}: {} {:?} vs CPU {:?}", a.step, x.body.name(), x.force, y.force);
            }
        }
    }
}

/// Cells -> Neighbors -> Cells mid-run (`set_params`, as the app's algorithm menu): the step,
/// positions and velocities carry over bit for bit, the energy to the sums' round-off, and
/// the run goes on conserving it.
#[test]
fn switching_cells_and_neighbours_mid_run_keeps_the_state() {
    if !common::wgpu_adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.05, &[], 18);
    let p = SimParams { telemetry_every: 50, ..with(&SimParams::default(), Algorithm::Cells, Precision::Single) };
    let mut g = GpuBackend::new(b, p.clone(), &atoms, None).unwrap();
    let e0 = g.measure().unwrap().total_energy();
    g.advance(100).unwrap();
    for (algorithm, search) in [
        (Algorithm::Neighbors, "neighbour list"),
        (Algorithm::Cells, "cell list"),
        (Algorithm::Neighbors, "neighbour list"),
    ] {
        let before = g.copy_state().unwrap();
        let e_before = g.measure().unwrap().total_energy();
        g.set_params(SimParams { algorithm, ..p.clone() }).unwrap();
        assert_eq!(g.pair_search(), search);
        let after = g.copy_state().unwrap();
        assert_eq!(after, before, "switching to {algorithm:?} changed the state");
        let e_after = g.measure().unwrap().total_energy();
        assert!(rel(e_after, e_before) < 1e-5, "{algorithm:?}: energy {e_before} -> {e_after} across the switch");
        g.advance(100).unwrap();
        assert_eq!(g.step(), after.step + 100);
    }
    let t = g.drain_telemetry();
    assert_eq!(t.len(), 8);
    let drift = t.iter().map(|x| (x.total_energy() - e0).abs()).fold(0.0, f64::max) / atoms.len() as f64;
    assert!(drift < 1e-3, "energy drifted {drift:e} per atom over the switches");
}

/// The atoms are binned and sorted by cell every step (as CUDA's cell list), not when they
/// moved half a skin as for the list.
#[test]
fn cells_are_binned_every_step() {
    if !common::wgpu_adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.05, &[], 19);
    let p = with(&SimParams::default(), Algorithm::Cells, Precision::Single);
    let mut g = GpuBackend::new(b, p, &atoms, None).unwrap();
    g.advance(200).unwrap();
    // The first forces' binning, then one a step.
    assert_eq!(g.list_builds(), 201);
}

/// wgpu's runtime bounds checks change nothing in the cell kernel (the release build trusts
/// its indices): checked and trusted modules agree bit for bit after 30 steps.
#[test]
fn checked_and_unchecked_shaders_give_the_same_cell_forces() {
    if !common::wgpu_adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false, false, true], 0.1, &[], 22);
    let p = with(&SimParams::default(), Algorithm::Cells, Precision::Single);
    let run = |checked: bool| {
        let mut g = GpuBackend::with_checks(b, p.clone(), &atoms, None, checked).unwrap();
        g.advance(30).unwrap();
        g.forces().unwrap()
    };
    assert_eq!(run(true), run(false));
}

/// The same run twice gives the same bits; a blow-up is reported and rolled back.
#[test]
fn reruns_are_identical_and_blow_ups_roll_back() {
    if !common::wgpu_adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 20);
    let p = SimParams {
        thermostat: argon_sandbox::physics::params::Thermostat::Langevin { damp: 0.5 },
        ..with(&SimParams::default(), Algorithm::Cells, Precision::Single)
    };
    let run = || {
        let mut g = GpuBackend::new(b, p.clone(), &atoms, None).unwrap();
        g.advance(200).unwrap();
        let t: Vec<u64> = g.drain_telemetry().iter().map(|t| t.total_energy().to_bits()).collect();
        (g.snapshot().unwrap().atoms, t)
    };
    assert_eq!(run(), run());
    let open = |b: SimBox, p: SimParams, a: &AtomState| -> Box<dyn Backend> {
        Box::new(GpuBackend::new(b, p, a, None).unwrap())
    };
    let cells = with(&SimParams::default(), Algorithm::Cells, Precision::Single);
    common::blowup::huge_time_step(&open, b, cells.clone(), &atoms);
    common::blowup::atoms_on_top_of_each_other(&open, b, cells.clone(), &atoms);
    let tank = SimBox::new([12.0, 10.0, 10.0], [false, true, true]);
    common::blowup::atom_leaving_the_tank(&open, tank, cells);
}
