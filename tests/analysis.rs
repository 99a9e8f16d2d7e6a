//! Analysis observables of the CPU backend:
//! (a) g(r) of an ideal gas (4000 uniform random points, periodic) is 1 within counting noise
//! on [1, 4];
//! (b) g(r) of an equilibrated LJ liquid (2048 atoms, rho = 0.8442, T = 0.85, r_c = 2.5) has
//! its first peak at r = 1.05-1.15 with height 2.5-3.3 and tends to 1 at large r;
//! (c) the speed histogram integrates to the fraction of atoms below v_max (~1) and matches
//! the Maxwell-Boltzmann density 4 pi v^2 (2 pi T)^(-3/2) exp(-v^2 / 2T) within counting
//! noise (and a 10% hotter Maxwellian is rejected);
//! (d) the density profile along y integrates (sum x slab volume) to N, and in a tank walled
//! in y with gravity the bottom becomes much denser than the top;
//! (e) degrees of freedom: 3N - 3 periodic NVE, 3N fully walled, 3N with Langevin, 3N - 2
//! with gravity along a periodic y.

mod common;

use std::f64::consts::PI;
use std::sync::OnceLock;

use argon_sandbox::analysis::Histogram;
use argon_sandbox::physics::init::{LatticeKind, gas_positions, maxwell_boltzmann};
use argon_sandbox::physics::params::{SimParams, Thermostat};
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::rng::{Sequence, Stream};
use argon_sandbox::sim::{AtomState, Backend, Snapshot};
use common::*;

const LIQUID_T: f64 = 0.85;
const LIQUID_RHO: f64 = 0.8442;

fn liquid_params() -> SimParams {
    SimParams {
        temperature: LIQUID_T,
        thermostat: Thermostat::Csvr { tau: 0.1, relative_to_flow: false },
        telemetry_every: 100,
        seed: 5,
        ..SimParams::default()
    }
}

/// 2048 atoms melted at T = 2.5 and then equilibrated at T = 0.85, rho = 0.8442 (shared).
fn liquid() -> &'static Snapshot {
    static LIQUID: OnceLock<Snapshot> = OnceLock::new();
    LIQUID.get_or_init(|| {
        let (b, atoms) = lattice_system(LatticeKind::Fcc, LIQUID_RHO, [8; 3], 2.5, 17);
        let mut sim = cpu(b, SimParams { temperature: 2.5, ..liquid_params() }, &atoms);
        sim.advance(2_000).expect("melt");
        sim.set_params(liquid_params()).expect("params");
        sim.advance(4_000).expect("equilibrate");
        let t: Vec<f64> = sim.drain_telemetry().iter().rev().take(10).map(|r| r.temperature).collect();
        assert!(rel(mean(&t), LIQUID_T) < 0.05, "liquid not at T: {t:?}");
        sim.snapshot().expect("snapshot")
    })
}

/// Runs the liquid on and calls `sample` every `every` steps, `count` times.
fn sample_liquid(count: usize, every: u64, mut sample: impl FnMut(&mut dyn Backend)) {
    let s = liquid();
    let mut sim = cpu(s.sim_box, liquid_params(), &s.atoms);
    sim.restore(s).expect("restore");
    for _ in 0..count {
        sim.advance(every).expect("advance");
        sample(&mut sim);
    }
}

#[test]
fn ideal_gas_rdf_is_one() {
    let n = 4000;
    let b = SimBox::new([20.0; 3], [true; 3]);
    let mut rng = Sequence::new(12345, Stream::GasPlacement, 0, 0);
    let positions: Vec<[f64; 3]> = (0..n).map(|_| std::array::from_fn(|k| rng.uniform() * b.hi[k])).collect();
    let mut sim = cpu(b, SimParams::default(), &at_rest(positions));
    let (bins, r_max) = (40, 4.0);
    let g = sim.rdf(bins, r_max, None).expect("rdf");
    assert_eq!(g.values.len(), bins);
    // Expected pair count per shell and its Poisson error on g.
    let density_pairs = n as f64 * (n as f64 - 1.0) / 2.0 / b.volume();
    let (mut chi2, mut dof, mut counted, mut expected) = (0.0, 0, 0.0, 0.0);
    for (k, &gk) in g.values.iter().enumerate() {
        let r0 = k as f64 * g.bin_width();
        let r1 = r0 + g.bin_width();
        if r0 < 1.0 - 1e-9 {
            continue;
        }
        let ideal = density_pairs * 4.0 / 3.0 * PI * (r1.powi(3) - r0.powi(3));
        let sigma = 1.0 / ideal.sqrt();
        let z = (gk - 1.0) / sigma;
        assert!(z.abs() < 5.0, "g({:.2}) = {gk} is {z:.1} sigma from 1", g.bin_centre(k));
        chi2 += z * z;
        dof += 1;
        counted += gk * ideal;
        expected += ideal;
    }
    let g_mean = counted / expected;
    let g_err = 1.0 / expected.sqrt();
    println!("ideal gas: <g> on [1,4] = {g_mean:.5} +- {g_err:.5}, chi2/dof = {:.3} ({dof} bins)", chi2 / dof as f64);
    assert!(g_err < 0.25 * 0.01);
    assert!((g_mean - 1.0).abs() < 0.01, "<g> = {g_mean}");
    assert!(chi2 / (dof as f64) < 2.0, "chi2/dof = {}", chi2 / dof as f64);
}

#[test]
fn lj_liquid_rdf_has_its_first_peak_near_sigma() {
    let (bins, r_max) = (250, 5.0);
    let mut samples: Vec<Histogram> = Vec::new();
    sample_liquid(10, 200, |sim| samples.push(sim.rdf(bins, r_max, None).expect("rdf")));
    let m = samples.len() as f64;
    let avg: Vec<f64> = (0..bins).map(|k| samples.iter().map(|h| h.values[k]).sum::<f64>() / m).collect();
    let h0 = &samples[0];
    let (k_peak, &g_peak) = avg.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
    let r_peak = h0.bin_centre(k_peak);
    // Error of the peak height from the spread between snapshots (1 tau apart).
    let peaks: Vec<f64> = samples.iter().map(|h| h.values[k_peak]).collect();
    let (_, peak_err) = block_mean_sem(&peaks, peaks.len());
    // Large-r plateau: r in [3.5, 5).
    let far: Vec<f64> = samples
        .iter()
        .map(|h| {
            let ks: Vec<usize> = (0..bins).filter(|&k| h.bin_centre(k) > 3.5).collect();
            ks.iter().map(|&k| h.values[k]).sum::<f64>() / ks.len() as f64
        })
        .collect();
    let (g_far, g_far_err) = block_mean_sem(&far, far.len());
    // Inside the core nothing: g = 0 below 0.8 sigma.
    let core = avg.iter().enumerate().filter(|(k, _)| h0.bin_centre(*k) < 0.8).map(|(_, g)| *g).fold(0.0, f64::max);
    println!(
        "LJ liquid T={LIQUID_T} rho={LIQUID_RHO}: first peak g({r_peak:.3}) = {g_peak:.3} +- {peak_err:.3}; \
         <g> on [3.5,5] = {g_far:.4} +- {g_far_err:.4}; max g below 0.8 = {core:.2e}"
    );
    assert!((1.05..=1.15).contains(&r_peak), "first peak at {r_peak}");
    assert!(peak_err < 0.05, "peak height error {peak_err}");
    assert!((2.5..=3.3).contains(&g_peak), "first peak height {g_peak}");
    assert!(g_far_err < 0.005, "plateau error {g_far_err}");
    assert!((g_far - 1.0).abs() < 0.02, "g at large r = {g_far}");
    assert!(core < 1e-3, "atoms overlap: g = {core} below 0.8 sigma");
}

/// Mean of the Maxwell-Boltzmann speed density over `[a, b]` (Simpson's rule).
fn mb_bin_average(t: f64, a: f64, b: f64) -> f64 {
    let f = |v: f64| 4.0 * PI * v * v * (2.0 * PI * t).powf(-1.5) * (-v * v / (2.0 * t)).exp();
    let n = 64;
    let h = (b - a) / n as f64;
    let mut s = f(a) + f(b);
    for i in 1..n {
        s += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    s * h / 3.0 / (b - a)
}

/// chi^2 per bin and the worst |z| of `hist` (accumulated over `total` speeds) against MB at `t`,
/// over bins expecting at least 20 counts.
fn mb_chi2(hist: &[f64], dv: f64, total: f64, t: f64) -> (f64, f64, usize) {
    let (mut chi2, mut worst, mut used) = (0.0, 0.0f64, 0);
    for (k, &density) in hist.iter().enumerate() {
        let p = mb_bin_average(t, k as f64 * dv, (k + 1) as f64 * dv) * dv;
        if p * total < 20.0 {
            continue;
        }
        let observed = density * dv * total;
        let z = (observed - p * total) / (total * p * (1.0 - p)).sqrt();
        chi2 += z * z;
        worst = worst.max(z.abs());
        used += 1;
    }
    (chi2 / used as f64, worst, used)
}

#[test]
fn speed_histogram_is_maxwell_boltzmann() {
    let (bins, v_max) = (60, 6.0);
    let dv = v_max / bins as f64;
    let mut sum = vec![0.0; bins];
    let mut total = 0.0;
    let mut integrals = Vec::new();
    sample_liquid(10, 200, |sim| {
        let h = sim.speed_histogram(bins, v_max).expect("histogram");
        assert!((h.bin_width() - dv).abs() < 1e-15);
        let integral: f64 = h.values.iter().sum::<f64>() * dv;
        // Independent count of atoms below v_max.
        let snap = sim.snapshot().expect("snapshot");
        let below =
            snap.atoms.velocities.iter().filter(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() < v_max).count();
        assert!(
            (integral - below as f64 / snap.atoms.len() as f64).abs() < 1e-12,
            "integral {integral}, below {below}"
        );
        integrals.push(integral);
        for (s, v) in sum.iter_mut().zip(&h.values) {
            *s += v * snap.atoms.len() as f64;
        }
        total += snap.atoms.len() as f64;
    });
    let hist: Vec<f64> = sum.iter().map(|s| s / total).collect();
    let (chi2, worst, used) = mb_chi2(&hist, dv, total, LIQUID_T);
    let (chi2_hot, _, _) = mb_chi2(&hist, dv, total, 1.1 * LIQUID_T);
    let min_integral = integrals.iter().copied().fold(1.0, f64::min);
    println!(
        "speeds ({total} samples): min integral {min_integral:.6}; vs MB(T={LIQUID_T}) chi2/bin = {chi2:.3}, worst |z| = {worst:.2} \
         ({used} bins); vs MB(1.1 T) chi2/bin = {chi2_hot:.1}"
    );
    assert!(min_integral > 0.9999 && min_integral <= 1.0 + 1e-12, "integral {min_integral}");
    assert!(chi2 < 2.0 && worst < 5.0, "speeds are not Maxwell-Boltzmann at T: chi2/bin {chi2}, worst z {worst}");
    // Twice the acceptance bound, i.e. far outside chi2/bin = 1 +- sqrt(2 / bins) of a true fit.
    assert!(chi2_hot > 4.0, "the comparison cannot tell T from 1.1 T: chi2/bin {chi2_hot}");
}

#[test]
fn density_profile_integrates_to_n() {
    let s = liquid();
    let mut sim = cpu(s.sim_box, liquid_params(), &s.atoms);
    let bins = 37;
    let h = sim.density_profile(bins).expect("profile");
    let l = s.sim_box.length();
    let slab = l[0] * l[1] * l[2] / bins as f64;
    let n: f64 = h.values.iter().sum::<f64>() * slab;
    println!("periodic liquid: sum(profile) x slab = {n} (N = {})", s.atoms.len());
    assert!((n - s.atoms.len() as f64).abs() < 1e-9);
    assert_eq!((h.lo, h.hi), (s.sim_box.lo[1], s.sim_box.hi[1]));
    // A homogeneous liquid: every slab within 25% of rho.
    for (k, &v) in h.values.iter().enumerate() {
        assert!(rel(v, LIQUID_RHO) < 0.25, "slab {k}: density {v}");
    }
}

#[test]
fn gravity_makes_the_bottom_denser() {
    // Periodic in x and z, walls at y = 0 and y = 24; gas at mean density ~0.15 and T = 1.
    let b = SimBox::new([12.0, 24.0, 12.0], [true, false, true]);
    let pos = gas_positions(&b, [0.0, 1.0, 0.0], [12.0, 23.0, 12.0], 500, 1.0, &[], 9);
    let n = pos.len();
    assert_eq!(n, 500);
    let params = SimParams {
        temperature: 1.0,
        thermostat: Thermostat::Langevin { damp: 1.0 },
        gravity: 0.5,
        telemetry_every: 100,
        ..SimParams::default()
    };
    let vel = maxwell_boltzmann(&vec![1.0; n], 1.0, 3.0 * n as f64, 4, 0);
    let mut sim =
        cpu(b, params, &AtomState { positions: pos, velocities: vel, types: vec![0; n], ..Default::default() });
    let bins = 24;
    let slab = 12.0 * 12.0;
    let quarter = |h: &Histogram| -> (f64, f64) {
        let q = bins / 4;
        (mean(&h.values[..q]), mean(&h.values[bins - q..]))
    };
    let h0 = sim.density_profile(bins).expect("profile");
    let (bottom0, top0) = quarter(&h0);
    sim.advance(4_000).expect("advance");
    let h1 = sim.density_profile(bins).expect("profile");
    let (bottom1, top1) = quarter(&h1);
    for h in [&h0, &h1] {
        let total: f64 = h.values.iter().sum::<f64>() * slab;
        assert!((total - n as f64).abs() < 1e-9, "profile integrates to {total}, N = {n}");
    }
    println!(
        "tank with gravity: bottom/top quarter density {bottom0:.4}/{top0:.4} at start, {bottom1:.4}/{top1:.4} after 20 tau"
    );
    // The start is uniform (so the final check is not built in), the end is stratified.
    assert!(rel(bottom0, top0) < 0.35, "start not uniform: {bottom0} vs {top0}");
    assert!(bottom1 > 3.0 * top1, "no sedimentation: bottom {bottom1}, top {top1}");
}

#[test]
fn degrees_of_freedom() {
    let n = 300;
    let dof = |periodic: [bool; 3], params: SimParams| {
        let b = SimBox::new([10.0; 3], periodic);
        let pos = gas_positions(&b, [1.0; 3], [9.0; 3], n, 1.0, &[], 3);
        assert_eq!(pos.len(), n);
        let vel = maxwell_boltzmann(&vec![1.0; n], 1.0, 3.0 * n as f64, 8, 0);
        let mut sim =
            cpu(b, params, &AtomState { positions: pos, velocities: vel, types: vec![0; n], ..Default::default() });
        let t = measure(&mut sim);
        // The temperature uses exactly these degrees of freedom.
        assert!(rel(t.temperature, 2.0 * t.kinetic_energy / t.dof) < 1e-14);
        t.dof
    };
    let three_n = 3.0 * n as f64;
    let nve = SimParams::default();
    let langevin = SimParams { thermostat: Thermostat::Langevin { damp: 1.0 }, ..SimParams::default() };
    let csvr = SimParams { thermostat: Thermostat::Csvr { tau: 0.1, relative_to_flow: false }, ..SimParams::default() };
    let gravity = SimParams { gravity: 0.1, ..SimParams::default() };
    assert_eq!(dof([true; 3], nve.clone()), three_n - 3.0, "periodic NVE");
    assert_eq!(dof([true; 3], csvr), three_n - 3.0, "periodic CSVR");
    assert_eq!(dof([false; 3], nve.clone()), three_n, "fully walled");
    assert_eq!(dof([true, false, true], nve), three_n - 2.0, "walled in y");
    assert_eq!(dof([true; 3], langevin), three_n, "Langevin");
    assert_eq!(dof([true; 3], gravity), three_n - 2.0, "gravity along a periodic y");
}
