//! g(r) through the cell grid and over a region of centres: the cell grid's counts equal all
//! pairs' exactly (CPU; CUDA against its all-pairs kernel and against the CPU, skipped
//! without a device), a region inside a liquid slab in vapour (and inside the droplet scene's
//! liquid) gives g(r) -> 1 where the box-normalised g(r) does not, and bad regions are
//! refused naming the field.

mod common;

use std::path::Path;
use std::sync::Arc;

use argon_sandbox::analysis::{Histogram, RdfRegion};
use argon_sandbox::physics::init::{LatticeKind, gas_positions, lattice_sites, maxwell_boltzmann};
use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{Algorithm, SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::cuda::CudaBackend;
use argon_sandbox::sim::{AtomState, Backend, PairSearch};
use common::{gpu, jiggled_fluid};

const BINS: usize = 100;
const R_MAX: f64 = 4.0;

/// A periodic box 8 x 8 x 24 fcc cells (density 0.8) long in z, with the liquid as an fcc
/// slab over z in [10, 30) and a dilute gas (density 0.02) in z < 8 and z >= 32.
fn slab() -> (SimBox, AtomState) {
    let a = LatticeKind::Fcc.constant(0.8);
    let (lx, lz) = (8.0 * a, 24.0 * a);
    let b = SimBox::new([lx, lx, lz], [true; 3]);
    let mut pos = lattice_sites(LatticeKind::Fcc, 0.8, [0.0; 3], [0.0, 0.0, 10.0], [lx, lx, 30.0]);
    for (lo, hi, seed) in [(0.0, 8.0, 1), (32.0, lz, 2)] {
        let count = (lx * lx * (hi - lo) * 0.02) as usize;
        pos.extend(gas_positions(&b, [0.0, 0.0, lo], [lx, lx, hi], count, 1.2, &pos, seed));
    }
    let n = pos.len();
    let v = maxwell_boltzmann(&vec![1.0; n], 0.85, 3.0 * n as f64 - 3.0, 5, 0);
    (b, AtomState { positions: pos, velocities: v, types: vec![0; n], ..Default::default() })
}

/// Mean of g over the bins in [r0, r1).
fn mean_over(g: &Histogram, r0: f64, r1: f64) -> f64 {
    let ks: Vec<usize> = (0..g.values.len()).filter(|&k| g.bin_centre(k) >= r0 && g.bin_centre(k) < r1).collect();
    ks.iter().map(|&k| g.values[k]).sum::<f64>() / ks.len() as f64
}

/// Averages `frames` g(r) (whole box and over `region`) taken `every` steps apart.
fn sampled(sim: &mut dyn Backend, region: &RdfRegion, frames: usize, every: u64) -> (Histogram, Histogram) {
    let mut sums = (vec![0.0; BINS], vec![0.0; BINS]);
    for _ in 0..frames {
        sim.advance(every).expect("advance");
        let whole = sim.rdf(BINS, R_MAX, None).expect("whole-box g(r)");
        let inside = sim.rdf(BINS, R_MAX, Some(region)).expect("region g(r)");
        for k in 0..BINS {
            sums.0[k] += whole.values[k] / frames as f64;
            sums.1[k] += inside.values[k] / frames as f64;
        }
    }
    let h = |values| Histogram { lo: 0.0, hi: R_MAX, values };
    (h(sums.0), h(sums.1))
}

#[test]
fn a_region_inside_a_liquid_slab_gives_g_one_at_large_r() {
    let (b, atoms) = slab();
    let params =
        SimParams { temperature: 0.85, thermostat: Thermostat::Langevin { damp: 0.5 }, ..SimParams::default() };
    let mut sim = CpuBackend::new(b, params, &atoms, None).expect("backend");
    sim.advance(600).expect("melting the slab");
    let region = RdfRegion { lo: [0.0, 0.0, 16.0], hi: [b.hi[0], b.hi[1], 24.0] };
    let (whole, inside) = sampled(&mut sim, &region, 6, 100);
    let (tail_box, tail_region) = (mean_over(&whole, 3.0, 4.0), mean_over(&inside, 3.0, 4.0));
    println!(
        "slab of {} atoms: g on [3, 4) box-normalised {tail_box:.3}, over the region {tail_region:.3}",
        atoms.len()
    );
    assert!(tail_box > 1.3, "the box-normalised tail {tail_box} should sit far above 1 in a slab");
    assert!((tail_region - 1.0).abs() < 0.05, "the region's tail {tail_region} should be 1 within 5%");
    // Still a liquid's g(r): a first peak near 1.1 sigma well above 2.
    let (k, &peak) = inside.values.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
    assert!((1.0..1.25).contains(&inside.bin_centre(k)) && peak > 2.0, "peak {peak} at {}", inside.bin_centre(k));
}

#[test]
fn a_region_inside_the_droplet_scene_gives_g_one_at_large_r() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/droplet.ron");
    let setup = argon_sandbox::scene::load_setup(Some(&path)).expect("droplet scene");
    let mut sim = CpuBackend::new(setup.sim_box, setup.params.clone(), &setup.atoms, None).expect("backend");
    sim.advance(600).expect("melting the block");
    // The block sits on the floor over x in [13, 27), y in [0, 12), z in [2, 12): centres
    // about 3 sigma inside it, above the floor's layering. The liquid is only 10 sigma deep in
    // z, so shells at r near 4 reach its surface: the tail is allowed a few percent low.
    let region = RdfRegion { lo: [16.0, 3.0, 4.5], hi: [24.0, 8.0, 9.5] };
    let (whole, inside) = sampled(&mut sim, &region, 6, 100);
    let (tail_box, tail_region) = (mean_over(&whole, 3.0, 4.0), mean_over(&inside, 3.0, 4.0));
    println!("droplet: g on [3, 4) box-normalised {tail_box:.3}, over the region {tail_region:.3}");
    assert!(tail_box > 2.0, "the box-normalised tail {tail_box} should sit far above 1 in a mostly empty tank");
    assert!((tail_region - 1.0).abs() < 0.08, "the region's tail {tail_region} should be near 1");
}

/// A walled tank with obstacles (as tests/cuda.rs has) and a periodic box.
fn systems() -> Vec<(&'static str, SimBox, AtomState, Option<Arc<ObstacleField>>)> {
    let shapes = vec![
        Shape::Circle { centre: [9.0, 8.0], radius: 2.5 },
        Shape::Rectangle { centre: [14.5, 4.0], half_size: [1.5, 0.8], angle_deg: 30.0 },
    ];
    let (periodic, pa) = jiggled_fluid([9, 8, 7], [false; 3], 0.3, &[], 11);
    let (tank, ta) = jiggled_fluid([10, 9, 5], [true, true, false], 0.3, &shapes, 12);
    let field = ObstacleField::bake(&shapes, &tank, 0.1).map(Arc::new);
    vec![("periodic", periodic, pa, None), ("tank", tank, ta, field)]
}

/// A region over part of the box, touching its lower x edge.
fn some_region(b: &SimBox) -> RdfRegion {
    let l = b.length();
    RdfRegion {
        lo: [b.lo[0], b.lo[1] + 0.3 * l[1], b.lo[2] + 0.2 * l[2]],
        hi: [b.lo[0] + 0.45 * l[0], b.hi[1], b.hi[2]],
    }
}

#[test]
fn cpu_cell_grid_counts_equal_all_pairs_exactly() {
    for (name, b, atoms, field) in systems() {
        let sim = CpuBackend::new(b, SimParams::default(), &atoms, field).expect("backend");
        let region = some_region(&b);
        for (r_max, reg) in [(4.0_f64, None), (4.0, Some(&region)), (2.7, Some(&region)), (5.5, None)] {
            let r_max = r_max.min(0.5 * b.length().iter().copied().fold(f64::INFINITY, f64::min));
            let cells = sim.pair_counts(BINS, r_max, reg, PairSearch::Cells).expect("cells");
            let all = sim.pair_counts(BINS, r_max, reg, PairSearch::AllPairs).expect("all pairs");
            let total: u64 = cells.counts.iter().sum();
            println!("{name}: r_max {r_max}, region {}: {total} counts, {} centres", reg.is_some(), cells.centres);
            assert!(total > 10_000, "too few pairs to test");
            assert_eq!(cells, all, "{name}: cell grid and all pairs differ (r_max {r_max}, region {reg:?})");
            if reg.is_some() {
                assert!(cells.centres > 100 && cells.centres < atoms.len() / 2);
            }
        }
    }
}

#[test]
fn bad_regions_are_refused_naming_the_field() {
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 3);
    let mut sim = CpuBackend::new(b, SimParams::default(), &atoms, None).expect("backend");
    let good = RdfRegion { lo: [1.0, 1.0, 1.0], hi: [5.0, 5.0, 5.0] };
    assert!(sim.rdf(BINS, 3.0, Some(&good)).is_ok());
    let cases = [
        (RdfRegion { lo: [-0.5, 1.0, 1.0], ..good }, "region.lo.x"),
        (RdfRegion { hi: [5.0, b.hi[1] + 1.0, 5.0], ..good }, "region.hi.y"),
        (RdfRegion { hi: [5.0, 5.0, 1.0], ..good }, "region.hi.z"),
        (RdfRegion { lo: [1.0, f64::NAN, 1.0], ..good }, "finite"),
        // Inside the box but smaller than one atom's room: fewer than two centres.
        (RdfRegion { lo: [1.0, 1.0, 1.0], hi: [1.01, 1.01, 1.01] }, "at least 2"),
    ];
    for (r, want) in cases {
        let e = sim.rdf(BINS, 3.0, Some(&r)).expect_err("a bad region").to_string();
        assert!(e.contains(want), "{r:?}: {e} should mention {want}");
    }
}

#[test]
fn cuda_cell_grid_counts_equal_all_pairs_and_the_cpu() {
    if !gpu() {
        return;
    }
    for (name, b, atoms, field) in systems() {
        let region = some_region(&b);
        for precision in [Precision::Double, Precision::Single] {
            // A short time step: the jiggled lattice (up to 0.3 sigma off its sites) starts with
            // close pairs that would blow up at the default step; the counts do not depend on it.
            let p = SimParams { precision, algorithm: Algorithm::Neighbors, dt: 0.0005, ..SimParams::default() };
            let mut cpu = CpuBackend::new(b, p.clone(), &atoms, field.clone()).expect("cpu");
            let mut gpu = CudaBackend::new(b, p.clone(), &atoms, field.clone()).expect("cuda");
            for reg in [None, Some(&region)] {
                let cells = gpu.pair_counts(BINS, R_MAX, reg, PairSearch::Cells).expect("cuda cells");
                let all = gpu.pair_counts(BINS, R_MAX, reg, PairSearch::AllPairs).expect("cuda all pairs");
                let host = cpu.pair_counts(BINS, R_MAX, reg, PairSearch::Cells).expect("cpu cells");
                println!("{name} {precision:?} region {}: {} counts", reg.is_some(), cells.counts.iter().sum::<u64>());
                assert_eq!(cells, all, "{name} {precision:?}: CUDA cell grid and all pairs differ");
                assert_eq!(cells, host, "{name} {precision:?}: CUDA and CPU counts differ");
                let (gc, gg) =
                    (cpu.rdf(BINS, R_MAX, reg).expect("cpu g(r)"), gpu.rdf(BINS, R_MAX, reg).expect("cuda g(r)"));
                assert_eq!(gc.values, gg.values, "{name} {precision:?}: g(r) differs");
            }
            // After steps (atoms re-sorted on the device) the counts still agree with the CPU's
            // view of the same state, and analysis leaves the run as it was. Only the periodic
            // fixture moves: the tank's jiggled sites press atoms into the walls and obstacles,
            // which blows up within a few steps on either backend (a fixture for counting).
            if name != "periodic" {
                continue;
            }
            gpu.advance(40).expect("advance");
            let snap = gpu.snapshot().expect("snapshot");
            let again = CpuBackend::new(b, p.clone(), &snap.atoms, field.clone()).expect("cpu");
            let d = gpu.pair_counts(BINS, R_MAX, Some(&region), PairSearch::Cells).expect("cells");
            assert_eq!(d, again.pair_counts(BINS, R_MAX, Some(&region), PairSearch::Cells).expect("cpu"));
            assert_eq!(gpu.snapshot().expect("snapshot"), snap, "g(r) changed the state");
        }
    }
}
