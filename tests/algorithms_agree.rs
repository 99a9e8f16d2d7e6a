//! Every force algorithm and precision agrees with plain all-pairs in double precision on
//! random periodic and walled configurations (with an obstacle and gravity): forces,
//! energy and virial to 1e-10 relative in double, 1e-4 in single and mixed; also a
//! four-species fluid with a cut-off per pair. The pressure tensor a viscosity measurement
//! records (summed inside each force loop on its stress steps) against brute force.

mod common;

use std::sync::Arc;

use argon_sandbox::physics::cutoff::Cutoff;
use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{Algorithm, SimParams};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomState, Backend};
use common::jiggled_fluid;

struct Result3 {
    forces: Vec<[f64; 3]>,
    energy: f64,
    virial: f64,
    /// How the pairs were found (`Backend::pair_search`).
    search: &'static str,
}

fn evaluate(b: SimBox, p: SimParams, atoms: &AtomState, field: Option<Arc<ObstacleField>>) -> Result3 {
    let mut sim = CpuBackend::new(b, p, atoms, field).unwrap();
    let forces = sim.forces().unwrap();
    let t = sim.measure().unwrap();
    Result3 { forces, energy: t.potential_energy(), virial: t.virial, search: sim.pair_search() }
}

/// (worst per-atom force difference over the rms force, energy and virial relative differences).
fn differences(a: &Result3, r: &Result3) -> (f64, f64, f64) {
    let rms =
        (r.forces.iter().map(|f| f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sum::<f64>() / r.forces.len() as f64).sqrt();
    assert!(rms > 1.0, "the configuration should have substantial forces (rms {rms})");
    let worst = a
        .forces
        .iter()
        .zip(&r.forces)
        .map(|(x, y)| ((x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2) + (x[2] - y[2]).powi(2)).sqrt())
        .fold(0.0, f64::max);
    (worst / rms, (a.energy - r.energy).abs() / r.energy.abs(), (a.virial - r.virial).abs() / r.virial.abs())
}

/// Every algorithm at each precision against plain all-pairs at that precision (1e-10 in
/// double, 1e-4 in single and mixed), and single / mixed all-pairs against double all-pairs
/// (energy and virial to 1e-4; forces to 5e-3 of the rms force, what f32 positions allow).
fn compare(b: SimBox, base: SimParams, atoms: &AtomState, shapes: &[Shape], what: &str) {
    compare_with(b, base, atoms, shapes, what, false);
}

/// [`compare`]; with `lists`, the cell and neighbour algorithms must also really run their
/// lists (no fallback to all pairs).
fn compare_with(b: SimBox, base: SimParams, atoms: &AtomState, shapes: &[Shape], what: &str, lists: bool) {
    let field = ObstacleField::bake(shapes, &b, 0.1).map(Arc::new);
    let with = |algorithm, precision| SimParams { algorithm, precision, ..base.clone() };
    let double_ref = evaluate(b, with(Algorithm::AllPairsGlobal, Precision::Double), atoms, field.clone());
    for precision in Precision::ALL {
        let tol = if precision == Precision::Double { 1e-10 } else { 1e-4 };
        let reference = evaluate(b, with(Algorithm::AllPairsGlobal, precision), atoms, field.clone());
        for algorithm in Algorithm::CONCRETE {
            let r = evaluate(b, with(algorithm, precision), atoms, field.clone());
            let (df, de, dw) = differences(&r, &reference);
            eprintln!(
                "{what} {precision:?} {algorithm:?} ({}): force {df:.1e}, energy {de:.1e}, virial {dw:.1e}",
                r.search
            );
            if lists && matches!(algorithm, Algorithm::Cells | Algorithm::Neighbors) {
                assert!(
                    r.search.contains("list") && !r.search.contains("all pairs"),
                    "{what} {precision:?} {algorithm:?} fell back to {}",
                    r.search
                );
            }
            assert!(df < tol, "{what} {precision:?} {algorithm:?}: force differs by {df:e} of the rms force");
            assert!(de < tol, "{what} {precision:?} {algorithm:?}: energy differs by {de:e}");
            assert!(dw < tol, "{what} {precision:?} {algorithm:?}: virial differs by {dw:e}");
        }
        let (df, de, dw) = differences(&reference, &double_ref);
        eprintln!("{what} {precision:?} vs double: force {df:.1e}, energy {de:.1e}, virial {dw:.1e}");
        assert!(df < 5e-3 && de < 1e-4 && dw < 1e-4, "{what} {precision:?} strays from double: {df:e} {de:e} {dw:e}");
    }
}

#[test]
fn periodic_box() {
    let (b, atoms) = jiggled_fluid([8, 8, 7], [false; 3], 0.15, &[], 1);
    assert!(atoms.len() > 1500);
    for shift in [true, false] {
        compare(b, SimParams { shift, ..SimParams::default() }, &atoms, &[], "periodic");
    }
}

#[test]
fn walled_tank_with_obstacle_and_gravity() {
    let shapes = vec![
        Shape::Circle { centre: [9.0, 8.0], radius: 2.5 },
        Shape::Segment { a: [3.0, 3.0], b: [6.0, 5.0], thickness: 0.8 },
    ];
    let (b, atoms) = jiggled_fluid([10, 9, 5], [true, true, false], 0.12, &shapes, 2);
    let p = SimParams { gravity: 0.2, drive: 0.1, ..SimParams::default() };
    compare(b, p, &atoms, &shapes, "tank");
}

/// Thin slabs, as the wind tunnel needs: two cells of cutoff + skin along a periodic axis,
/// one along a walled one. The lists run (no fallback) and give the forces of all pairs.
#[test]
fn thin_slabs_run_their_lists() {
    let shapes = [Shape::Circle { centre: [9.0, 7.0], radius: 2.0 }];
    for (cells, walls, shapes, what) in [
        ([12, 8, 4], [false; 3], &[][..], "periodic slab two cells thick"),
        ([4, 9, 4], [false, true, false], &[][..], "thin in x and z, walled y"),
        ([12, 10, 1], [false, false, true], &shapes[..], "walled slab one cell thick, obstacle"),
    ] {
        let (b, atoms) = jiggled_fluid(cells, walls, 0.12, shapes, 4);
        let l = b.length();
        let range = SimParams::default().list_range();
        assert!(
            (0..3).any(|k| (b.periodic[k] && l[k] < 3.0 * range) || (!b.periodic[k] && l[k] < 2.0 * range)),
            "{what}: not thin"
        );
        let cutoff = SimParams::default().max_cutoff();
        assert_eq!(Algorithm::Auto.resolve(atoms.len(), &b, range, cutoff), Algorithm::Neighbors, "{what}: Auto");
        compare_with(b, SimParams::default(), &atoms, shapes, what, true);
    }
}

/// A skin wide enough that the list range passes half a thin slab's periodic depth (6.84
/// sigma; range 3.5): the depth is one column whose pairs take their minimum image, which
/// needs only the cut-off within half of it. Auto still takes the list, and every algorithm
/// gives the forces of all pairs (the CPU's per-atom list takes no columns: it runs the cell
/// list there; the device backends' columns are held to the CPU in tests/cuda.rs and
/// tests/wgpu_backend.rs).
#[test]
fn a_thin_slab_takes_a_skin_past_half_its_depth() {
    let (b, atoms) = jiggled_fluid([12, 8, 4], [false; 3], 0.12, &[], 4);
    let p = SimParams { skin: 1.0, ..SimParams::default() };
    assert!(2.0 * p.list_range() > b.length()[2] && 2.0 * p.max_cutoff() <= b.length()[2]);
    assert_eq!(Algorithm::Auto.resolve(atoms.len(), &b, p.list_range(), p.max_cutoff()), Algorithm::Neighbors);
    compare_with(b, p.clone(), &atoms, &[], "thin slab, skin past half its depth", false);
    // The CPU's per-atom list takes no columns: in double it runs the cell list there (not a
    // list built from all pairs).
    let q = SimParams { precision: Precision::Double, algorithm: Algorithm::Neighbors, ..p };
    let mut cpu = CpuBackend::new(b, q, &atoms, None).unwrap();
    cpu.advance(30).unwrap();
    assert!(cpu.pair_search().starts_with("cell list"), "{}", cpu.pair_search());
}

#[test]
fn small_periodic_box_without_room_for_cells() {
    // Shorter than twice cutoff + skin: cells and lists fall back to brute force.
    let (b, atoms) = jiggled_fluid([3, 3, 3], [false; 3], 0.1, &[], 3);
    compare(b, SimParams { cutoff: Cutoff::Absolute(2.5), ..SimParams::default() }, &atoms, &[], "small box");
}

/// A dense Ne-Ar-Kr-Xe fluid with a cut-off per pair (2.5 sigma_ij, 2.0 to 3.0 sigma): the
/// lists, built at the largest cut-off + skin, and the cells find every pair inside its own.
#[test]
fn four_species_at_per_pair_cutoffs() {
    let (b, atoms, species) = common::mixture::four_species_fluid(31);
    for shift in [true, false] {
        let p = SimParams { cutoff: Cutoff::PerPair(2.5), species: species.clone(), shift, ..SimParams::default() };
        compare_with(b, p, &atoms, &[], "four species, per-pair cut-offs", true);
    }
}

/// The pressure tensor of a state by brute force over every pair (minimum image, f64):
/// `(sum m v_a v_b + sum r_a f_b) / V`, in the order xx, yy, zz, xy, xz, yz.
fn brute_tensor(b: &SimBox, p: &SimParams, atoms: &AtomState) -> [f64; 6] {
    use argon_sandbox::physics::lj::{PairCoeffs, Table};
    let axes = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)];
    let table = Table::<f64>::from_params(p);
    let (x, v, t) = (&atoms.positions, &atoms.velocities, &atoms.types);
    let mut w = [0.0; 6];
    for i in 0..x.len() {
        let m = p.species[t[i] as usize].mass;
        for (q, &(a, c)) in axes.iter().enumerate() {
            w[q] += m * v[i][a] * v[i][c];
        }
        for j in i + 1..x.len() {
            let d = b.min_image(x[i], x[j]);
            let (fdr, _) = table.get(t[i], t[j]).eval_cut(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            for (q, &(a, c)) in axes.iter().enumerate() {
                w[q] += fdr * d[a] * d[c];
            }
        }
    }
    w.map(|w| w / b.volume())
}

/// Every algorithm and precision records, on a stress step, the pressure tensor of brute
/// force at that step's state: 1e-10 of the diagonal's scale in double, 1e-4 in single and
/// mixed (the pair tensor is summed by the force loop of the step: per-atom lists in f64
/// and f32, cluster lists, cells, all pairs; one species and four at per-pair cut-offs).
#[test]
fn stress_records_match_brute_force() {
    use argon_sandbox::transport::TransportSpec;
    let (b1, atoms1) = jiggled_fluid([6, 6, 6], [false; 3], 0.12, &[], 5);
    let (b4, atoms4, species) = common::mixture::four_species_fluid(32);
    let four = SimParams { cutoff: Cutoff::PerPair(2.5), species, ..SimParams::default() };
    for (b, atoms, base, what) in
        [(b1, atoms1, SimParams::default(), "one species"), (b4, atoms4, four, "four species")]
    {
        for precision in Precision::ALL {
            let tol = if precision == Precision::Double { 1e-10 } else { 1e-4 };
            for algorithm in Algorithm::CONCRETE {
                let p = SimParams { algorithm, precision, ..base.clone() };
                let mut sim = CpuBackend::new(b, p.clone(), &atoms, None).unwrap();
                sim.set_transport(Some(TransportSpec { msd: None, vacf: None, stress_every: 3 })).unwrap();
                sim.advance(6).unwrap();
                let records = sim.take_transport().unwrap().stress;
                assert_eq!(records.iter().map(|r| r.step).collect::<Vec<_>>(), [3, 6], "{what}");
                let want = brute_tensor(&b, &p, &sim.copy_state().unwrap().atoms);
                let got = records[1].p;
                let scale = want[..3].iter().map(|x| x.abs()).fold(0.0, f64::max);
                let worst = (0..6).map(|q| (got[q] - want[q]).abs()).fold(0.0, f64::max) / scale;
                eprintln!("stress {what} {precision:?} {algorithm:?} ({}): {worst:.1e}", sim.pair_search());
                assert!(worst < tol, "{what} {precision:?} {algorithm:?}: tensor {got:?} against {want:?}");
                assert!(want[3].abs() > 1e-6 * scale, "{what}: the off-diagonal is not trivially zero");
            }
        }
    }
}

/// Every test above again under each other CPU path (AVX2, baseline, no cluster lists):
/// see `common::cpu_paths`.
#[test]
fn all_of_these_under_every_cpu_path() {
    common::cpu_paths::rerun_under_other_cpu_paths("all_of_these_under_every_cpu_path");
}
