//! The wgpu backend's histograms counted on the device (src/sim/gpu/histograms.rs) against
//! the CPU backend's counts of the same state, on whatever adapter wgpu finds (CI: lavapipe).
//! Without an adapter each test prints `skipped: no wgpu adapter` and passes.
//!
//! The device bins in f32 what the CPU bins in f64 from the same f32 positions: a value (the
//! distance, the speed or the height in units of a bin) can land in the neighbouring bin only
//! when it lies within a few f32 roundings (about 4e-7 relative) of a bin edge. So the counts
//! must differ, summed over the bins, by at most twice the number of values within 2e-6 of an
//! edge, which the tests count on the CPU (and check is a small part of the whole, so the
//! bound is tight).
//!
//! g(r) over the whole box and over a region, through the list's cell grid (after steps, so
//! atoms have left the places where they were binned; right after an upload, before any
//! step), the cell list's and over all pairs; a tank with walls; a slab two cells thick; the speed histogram
//! and the density profile.

mod common;

use argon_sandbox::analysis::{self, RdfRegion};
use argon_sandbox::physics::params::{Algorithm, SimParams};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::gpu::GpuBackend;
use argon_sandbox::sim::{AtomState, Backend, PairSearch, Snapshot};
use common::jiggled_fluid;

/// Relative distance below which a value counts as on a bin edge (five times the device's
/// worst rounding).
const EDGE: f64 = 2e-6;

fn on_edge(x: f64, top: f64) -> bool {
    let k = x.round();
    k >= 1.0 && k <= top && (x - k).abs() <= EDGE * x.max(1.0)
}

/// Sum over bins of |a - b|.
fn l1(a: &[u64], b: &[u64]) -> u64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).sum()
}

/// Pairs (weighted as counted) whose distance in bins lies on an edge, over all pairs.
fn rdf_edge_pairs(snap: &Snapshot, bins: usize, r_max: f64, region: Option<&RdfRegion>) -> u64 {
    let b = &snap.sim_box;
    let p = &snap.atoms.positions;
    let inv_dr = bins as f64 / r_max;
    let mut edge = 0;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            let w = match region {
                None => 1,
                Some(r) => u64::from(r.contains(p[i])) + u64::from(r.contains(p[j])),
            };
            let d = b.min_image(p[i], p[j]);
            let x = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() * inv_dr;
            if w > 0 && on_edge(x, bins as f64) {
                edge += w;
            }
        }
    }
    edge
}

/// The device's g(r) counts against the CPU's of the same state (the CPU backend in double
/// holds the device's f32 positions exactly).
fn check_rdf(name: &str, g: &mut GpuBackend, params: &SimParams, bins: usize, r_max: f64, region: Option<&RdfRegion>) {
    let got = g.pair_counts(bins, r_max, region).unwrap();
    let snap = g.copy_state().unwrap();
    let cpu_params = SimParams { precision: Precision::Double, ..params.clone() };
    let cpu = argon_sandbox::sim::cpu::CpuBackend::new(snap.sim_box, cpu_params, &snap.atoms, None).unwrap();
    let want = cpu.pair_counts(bins, r_max, region, PairSearch::AllPairs).unwrap();
    let total: u64 = want.counts.iter().sum();
    let edge = rdf_edge_pairs(&snap, bins, r_max, region);
    let diff = l1(&got.counts, &want.counts);
    eprintln!("{name}: {total} pair counts, {diff} differ, {edge} on a bin edge");
    assert!(total > 10_000, "{name}: too few pairs ({total}) to test");
    assert!(edge * 1000 < total, "{name}: {edge} of {total} counts on an edge: the bound says little");
    assert!(diff <= 2 * edge, "{name}: device and CPU counts differ by {diff} (bound {})", 2 * edge);
    assert_eq!(got.centres, want.centres, "{name}: centres");
}

fn systems() -> Vec<(&'static str, SimBox, SimParams, AtomState)> {
    let (b, atoms) = jiggled_fluid([7, 7, 7], [false; 3], 0.1, &[], 11);
    let (tb, tank) = jiggled_fluid([7, 6, 5], [true, true, false], 0.1, &[], 12);
    let tank_params = SimParams { gravity: 0.3, ..SimParams::default() };
    // Two cells of the list range across z: the g(r) reach covers that axis once.
    let (sb, slab) = jiggled_fluid([9, 9, 4], [false; 3], 0.1, &[], 13);
    vec![
        ("periodic liquid", b, SimParams::default(), atoms),
        ("tank with walls and gravity", tb, tank_params, tank),
        ("thin periodic slab", sb, SimParams::default(), slab),
    ]
}

#[test]
fn rdf_counts_match_the_cpu() {
    if !common::wgpu_adapter() {
        return;
    }
    for (name, b, p, atoms) in systems() {
        for algorithm in [Algorithm::Neighbors, Algorithm::Cells, Algorithm::AllPairsTiled] {
            let params = SimParams { algorithm, precision: Precision::Single, ..p.clone() };
            let mut g = GpuBackend::new(b, params.clone(), &atoms, None).unwrap();
            let half = (0..3).filter(|&k| b.periodic[k]).map(|k| 0.5 * b.length()[k]).fold(f64::INFINITY, f64::min);
            let r_max = (0.999 * half).min(4.0);
            // Before any step (the grid is built on demand), then after steps: atoms have
            // moved from where the last build binned them.
            check_rdf(&format!("{name}, {algorithm:?}, fresh"), &mut g, &params, 100, r_max, None);
            g.advance_md(37).unwrap();
            check_rdf(&format!("{name}, {algorithm:?}, after 37 steps"), &mut g, &params, 100, r_max, None);
            let l = b.length();
            let region = RdfRegion {
                lo: std::array::from_fn(|k| b.lo[k] + 0.2 * l[k]),
                hi: std::array::from_fn(|k| b.lo[k] + 0.7 * l[k]),
            };
            check_rdf(&format!("{name}, {algorithm:?}, region"), &mut g, &params, 80, r_max, Some(&region));
        }
    }
}

/// Mixed and double (f64 positions: the CPU's own arithmetic, so the edge bound holds with
/// room), where the adapter has 64-bit floats.
#[test]
fn rdf_counts_match_the_cpu_in_mixed_and_double() {
    if !common::wgpu_f64_adapter() {
        return;
    }
    let (_, b, p, atoms) = systems().swap_remove(0);
    for precision in [Precision::Mixed, Precision::Double] {
        let params = SimParams { precision, ..p.clone() };
        let mut g = GpuBackend::new(b, params.clone(), &atoms, None).unwrap();
        g.advance_md(23).unwrap();
        check_rdf(&format!("periodic liquid, {precision:?}"), &mut g, &params, 100, 4.0, None);
    }
}

#[test]
fn speed_and_height_histograms_match_the_cpu() {
    if !common::wgpu_adapter() {
        return;
    }
    let (b, p, atoms) = {
        let (_, tb, tp, ta) = systems().swap_remove(1);
        (tb, tp, ta)
    };
    let params = SimParams { precision: Precision::Single, ..p };
    let mut g = GpuBackend::new(b, params, &atoms, None).unwrap();
    g.advance_md(20).unwrap();
    let snap = g.copy_state().unwrap();
    let n = snap.atoms.len();
    let (bins, v_max) = (60, 3.5);
    let speed = g.speed_histogram(bins, v_max).unwrap();
    let want = analysis::speed_histogram(&snap.atoms.velocities, bins, v_max).unwrap();
    let norm = n as f64 * v_max / bins as f64;
    let to_counts =
        |h: &analysis::Histogram, norm: f64| h.values.iter().map(|v| (v * norm).round() as u64).collect::<Vec<_>>();
    let edge = snap
        .atoms
        .velocities
        .iter()
        .filter(|v| on_edge((v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() / v_max * bins as f64, bins as f64))
        .count() as u64;
    let diff = l1(&to_counts(&speed, norm), &to_counts(&want, norm));
    assert!(diff <= 2 * edge, "speed histogram: {diff} counts differ ({edge} on an edge)");
    assert_eq!(to_counts(&speed, norm).iter().sum::<u64>(), to_counts(&want, norm).iter().sum::<u64>());

    let dens = g.density_profile(bins).unwrap();
    let want = analysis::density_profile(&snap.atoms.positions, &snap.sim_box, bins).unwrap();
    let l = b.length();
    let slab = l[0] * l[1] * l[2] / bins as f64;
    let edge = snap
        .atoms
        .positions
        .iter()
        .filter(|p| on_edge((p[1] - b.lo[1]) / l[1] * bins as f64, bins as f64 - 1.0))
        .count() as u64;
    let (got, want) = (to_counts(&dens, slab), to_counts(&want, slab));
    assert_eq!(got.iter().sum::<u64>(), n as u64, "density profile: every atom counted");
    assert!(l1(&got, &want) <= 2 * edge, "density profile: {} counts differ ({edge} on an edge)", l1(&got, &want));
}

#[test]
fn bad_requests_are_refused() {
    if !common::wgpu_adapter() {
        return;
    }
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 3);
    let mut g =
        GpuBackend::new(b, SimParams { precision: Precision::Single, ..SimParams::default() }, &atoms, None).unwrap();
    assert!(g.rdf(0, 2.0, None).is_err());
    assert!(g.speed_histogram(0, 2.0).is_err());
    let outside = RdfRegion { lo: [-1.0, 0.0, 0.0], hi: [1.0, 1.0, 1.0] };
    let e = g.rdf(50, 2.0, Some(&outside)).unwrap_err().to_string();
    assert!(e.contains("region.lo.x"), "{e}");
}
