//! Cluster-pair lists against brute force, for every force loop the CPU can run.

use super::*;
use crate::sim::cpu::kernels::{TENSOR_AXES, mode};

/// Forces, energy and virial of every pair by brute force in f64 (minimum image), for
/// epsilon = sigma = 1 at `lj`'s cutoff, shifted when `lj` is.
fn brute(pos: &[[f32; 4]], b: &SimBox, lj: &LjPair<f32>) -> (Vec<[f64; 3]>, f64, f64, [f64; 6]) {
    let len = b.length();
    let mut f = vec![[0.0; 3]; pos.len()];
    let (mut e, mut w) = (0.0, 0.0);
    let mut t = [0.0; 6];
    let l = LjPair::<f64>::new(1.0, 1.0, (lj.rcut_sq as f64).sqrt(), lj.offset != 0.0);
    for i in 0..pos.len() {
        for j in i + 1..pos.len() {
            let d: [f64; 3] = std::array::from_fn(|k| {
                let d = pos[i][k] as f64 - pos[j][k] as f64;
                if b.periodic[k] { d - len[k] * (d / len[k]).round() } else { d }
            });
            let rsq = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if rsq >= l.rcut_sq {
                continue;
            }
            let r6 = 1.0 / (rsq * rsq * rsq);
            let fd = r6 * (l.lj1 * r6 - l.lj2) / rsq;
            e += r6 * (l.lj3 * r6 - l.lj4) - l.offset;
            w += rsq * fd;
            for k in 0..3 {
                f[i][k] += d[k] * fd;
                f[j][k] -= d[k] * fd;
            }
            for (q, &(a, c)) in TENSOR_AXES.iter().enumerate() {
                t[q] += d[a] * d[c] * fd;
            }
        }
    }
    (f, e, w, t)
}

/// A reproducible stream of uniform numbers in [0, 1).
fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as f64 / (1u64 << 31) as f64
    }
}

/// A jittered simple-cubic lattice of spacing `a` filling `b` (reproducible).
fn lattice(b: &SimBox, a: f64) -> Vec<[f32; 4]> {
    let len = b.length();
    let n: [usize; 3] = std::array::from_fn(|k| (len[k] / a).floor() as usize);
    let mut u = uniform(12345);
    let mut jitter = || (u() - 0.5) * 0.2;
    let mut out = Vec::new();
    for x in 0..n[0] {
        for y in 0..n[1] {
            for z in 0..n[2] {
                // Periodic axes: atoms right at the faces, so that moves cross them.
                let p: [f64; 3] = std::array::from_fn(|k| {
                    let x = [x, y, z][k] as f64 * a + if b.periodic[k] { 0.06 } else { 0.5 * a } + jitter();
                    if b.periodic[k] { x.rem_euclid(len[k]) } else { x }
                });
                out.push([p[0] as f32, p[1] as f32, p[2] as f32, 0.0]);
            }
        }
    }
    out
}

/// Atoms at random in `b`, `n` of them or as many as fit, none closer than `gap` to another
/// (reproducible).
fn random_fluid(b: &SimBox, n: usize, gap: f64) -> Vec<[f32; 4]> {
    let len = b.length();
    let mut u = uniform(987654321);
    let mut out: Vec<[f32; 4]> = Vec::with_capacity(n);
    for _ in 0..200 * n {
        if out.len() == n {
            break;
        }
        let p: [f64; 3] = std::array::from_fn(|k| b.lo[k] + u() * len[k]);
        let clear = out.iter().all(|q| {
            let d: [f64; 3] = std::array::from_fn(|k| {
                let d = p[k] - q[k] as f64;
                if b.periodic[k] { d - len[k] * (d / len[k]).round() } else { d }
            });
            d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= gap * gap
        });
        if clear {
            out.push([p[0] as f32, p[1] as f32, p[2] as f32, 0.0]);
        }
    }
    out
}

/// The force loops this CPU can run (see `kernel::runnable`).
fn kernels() -> Vec<SimdLevel> {
    let out: Vec<SimdLevel> =
        [SimdLevel::Avx512, SimdLevel::Avx2].into_iter().filter(|&l| kernel::runnable(l)).collect();
    if out.is_empty() {
        println!("skipped: cluster lists need AVX2 or AVX-512");
    }
    out
}

/// Builds clusters for `pos` (permuting it into cluster order) with each loop of
/// [`kernels`] and checks the forces (plain LJ).
fn check(b: &SimBox, pos: Vec<[f32; 4]>, what: &str) {
    for level in kernels() {
        check_with(level, b, pos.clone(), &LjPair::<f32>::new(1.0, 1.0, 2.5, false), &format!("{what} {level:?}"));
    }
}

/// Builds clusters for `pos` (permuting it into cluster order) with the loops of `level` and
/// checks forces, energy and virial against brute force, at the build and after a move
/// that wraps atoms across periodic faces.
fn check_with(level: SimdLevel, b: &SimBox, mut pos: Vec<[f32; 4]>, lj: &LjPair<f32>, what: &str) {
    let range = 2.8;
    assert!(fits(b, range), "{what}: test box too small");
    let mut list = ClusterList::default();
    let order = list.sort(&pos, b).to_vec();
    pos = order.iter().map(|&i| pos[i as usize]).collect();
    list.build_with(level, &pos, b, range);
    assert!(list.first.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= CLUSTER as u32), "{what}: cluster sizes");
    let compare = |list: &ClusterList, pos: &[[f32; 4]], stage: &str| {
        let mut force = vec![[0.0f32; 4]; pos.len()];
        let sums = list.forces_with::<{ mode::BOTH }>(level, lj, &mut Vec::new(), &mut force);
        let (e, w) = (sums.energy, sums.virial);
        let (want, we, ww, wt) = brute(pos, b, lj);
        let rms = (want.iter().map(|f| f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sum::<f64>() / pos.len() as f64).sqrt();
        assert!(rms > 1.0, "{what} {stage}: forces too small to test ({rms})");
        let worst = force
            .iter()
            .zip(&want)
            .map(|(f, g)| (0..3).map(|k| (f[k] as f64 - g[k]).abs()).fold(0.0, f64::max))
            .fold(0.0, f64::max);
        assert!(worst < 1e-4 * rms, "{what} {stage}: force off by {worst} (rms {rms})");
        assert!((e - we).abs() < 1e-5 * we.abs().max(1.0), "{what} {stage}: energy {e} against {we}");
        assert!((w - ww).abs() < 1e-5 * ww.abs().max(1.0), "{what} {stage}: virial {w} against {ww}");
        // The tensor's scale is the diagonal's (off-diagonal sums nearly cancel).
        let scale = wt[..3].iter().map(|x| x.abs()).fold(1.0, f64::max);
        for q in 0..6 {
            let (got, want) = (sums.tensor[q], wt[q]);
            assert!((got - want).abs() < 1e-5 * scale, "{what} {stage}: tensor[{q}] {got} against {want}");
        }
        // The other modes: the same forces, each with only its own sums.
        let mut again = vec![[0.0f32; 4]; pos.len()];
        let ev = list.forces_with::<{ mode::ENERGY }>(level, lj, &mut Vec::new(), &mut again);
        assert_eq!((ev.energy, ev.virial, ev.tensor), (e, w, [0.0; 6]), "{what} {stage}: ENERGY sums");
        assert_eq!(again, force, "{what} {stage}: ENERGY forces");
        let st = list.forces_with::<{ mode::STRESS }>(level, lj, &mut Vec::new(), &mut again);
        assert_eq!((st.energy, st.virial, st.tensor), (0.0, 0.0, sums.tensor), "{what} {stage}: STRESS sums");
        assert_eq!(again, force, "{what} {stage}: STRESS forces");
        let none = list.forces_with::<{ mode::FORCES }>(level, lj, &mut Vec::new(), &mut again);
        assert_eq!(none, EnergyVirial::default(), "{what} {stage}: FORCES sums");
        assert_eq!(again, force, "{what} {stage}: FORCES forces");
    };
    compare(&list, &pos, "at the build");
    // Move every atom less than half the skin, across periodic faces too, and wrap.
    let at_build: Vec<[f32; 3]> = pos.iter().map(|p| [p[0], p[1], p[2]]).collect();
    let len = b.length();
    for (i, p) in pos.iter_mut().enumerate() {
        for k in 0..3 {
            let step = [0.1, -0.1, 0.05][(i + k) % 3] as f32;
            let mut x = p[k] + step;
            if b.periodic[k] {
                if x < b.lo[k] as f32 {
                    x += len[k] as f32;
                } else if x >= b.hi[k] as f32 {
                    x -= len[k] as f32;
                }
            }
            p[k] = x;
        }
    }
    let wrapped = pos.iter().zip(&at_build).any(|(p, q)| (p[0] - q[0]).abs() > 1.0);
    assert!(!b.periodic[0] || wrapped, "{what}: no atom crossed a periodic face");
    list.pack(&pos, &at_build);
    compare(&list, &pos, "after moving");
}

#[test]
fn cluster_forces_match_brute_force_in_a_periodic_box() {
    let b = SimBox::new([11.0, 10.0, 12.0], [true; 3]);
    check(&b, lattice(&b, 1.1), "periodic");
}

#[test]
fn cluster_forces_match_brute_force_between_walls() {
    let b = SimBox::new([10.0, 11.0, 9.0], [true, false, false]);
    check(&b, lattice(&b, 1.1), "walled");
}

#[test]
fn cluster_forces_match_brute_force_in_a_small_box() {
    // Narrower than two list ranges: a pair can be in range in two images.
    let b = SimBox::new([5.2, 6.0, 5.5], [true; 3]);
    check(&b, lattice(&b, 1.08), "small");
}

/// A random dense fluid (density about 0.8, no two atoms closer than 0.85) whose columns
/// leave short clusters, with the shifted potential: every loop against brute force.
#[test]
fn cluster_forces_match_brute_force_in_a_random_fluid() {
    let b = SimBox::new([9.3, 8.7, 10.1], [true; 3]);
    let n = (0.8 * b.volume()) as usize;
    let pos = random_fluid(&b, n, 0.85);
    assert_eq!(pos.len(), n, "the fluid did not fit");
    let mut list = ClusterList::default();
    list.sort(&pos, &b);
    assert!(list.first.windows(2).any(|w| w[1] - w[0] < CLUSTER as u32), "no short cluster");
    let lj = LjPair::<f32>::new(1.0, 1.0, 2.5, true);
    for level in kernels() {
        check_with(level, &b, pos.clone(), &lj, &format!("random {level:?}"));
    }
}

#[test]
fn boxes_narrower_than_the_range_are_refused() {
    assert!(fits(&SimBox::new([10.0; 3], [true; 3]), 2.8));
    assert!(!fits(&SimBox::new([2.7, 10.0, 10.0], [true; 3]), 2.8));
    assert!(fits(&SimBox::new([2.7, 10.0, 10.0], [false, true, true]), 2.8));
}
