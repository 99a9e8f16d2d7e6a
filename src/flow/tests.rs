//! Tests of the flow fields against flows whose fields are known exactly or statistically.

use super::*;
use crate::physics::init::maxwell_boltzmann;
use crate::physics::sim_box::SimBox;
use crate::rng::{Sequence, Stream};

/// `n` positions uniform in box `b`, from `seed`.
fn random_positions(b: &SimBox, n: usize, seed: u64) -> Vec<[f64; 3]> {
    let l = b.length();
    let mut r = Sequence::new(seed, Stream::GasPlacement, 0, 0);
    (0..n).map(|_| std::array::from_fn(|k| b.lo[k] + r.uniform() * l[k])).collect()
}

/// A simple-cubic lattice of spacing `a` filling `b`, offset by a/2 so no site is on a bin edge.
fn lattice(b: &SimBox, a: f64) -> Vec<[f64; 3]> {
    let l = b.length();
    let n = l.map(|x| (x / a).round() as usize);
    let mut out = Vec::new();
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let c = [i, j, k];
                out.push(std::array::from_fn(|d| b.lo[d] + (c[d] as f64 + 0.5) * a));
            }
        }
    }
    out
}

fn grid(b: &SimBox, spec: FieldSpec) -> Grid {
    Grid::new(&spec, b).unwrap()
}

#[test]
fn uniform_flow_has_its_velocity_everywhere_and_no_vorticity_or_temperature() {
    let b = SimBox::new([20.0, 16.0, 8.0], [true, true, true]);
    let big_u = [0.7, -0.3, 0.2];
    let masses = [1.0, 2.1];
    for three_d in [false, true] {
        let g = grid(&b, FieldSpec { three_d, ..FieldSpec::default() });
        let mut acc = Accumulator::new(&g);
        for s in 0..5 {
            let pos = random_positions(&b, 4000, 10 + s);
            let types: Vec<u32> = (0..pos.len() as u32).map(|i| i % 2).collect();
            acc.sample(&g, &pos, &vec![big_u; pos.len()], &masses, &types);
        }
        let f = finish(&acc, &g, [0.0, 1.0]);
        assert_eq!(f.samples, 5);
        let speed = (big_u[0] * big_u[0] + big_u[1] * big_u[1] + big_u[2] * big_u[2]).sqrt();
        let mut occupied = 0;
        for bin in (0..g.len()).filter(|&bin| f.count[bin] > 1.0) {
            occupied += 1;
            for (u, want) in [(f.vx[bin], big_u[0]), (f.vy[bin], big_u[1]), (f.vz[bin], big_u[2])] {
                assert!((u - want).abs() <= 1e-12 * want.abs(), "bin {bin}: {u} vs {want}");
            }
            assert!((f.speed[bin] - speed).abs() <= 1e-12 * speed);
            assert!(f.vorticity[bin].abs() <= 1e-12, "bin {bin}: vorticity {}", f.vorticity[bin]);
            assert!(f.temperature[bin].abs() <= 1e-12, "bin {bin}: T {}", f.temperature[bin]);
        }
        assert!(occupied as f64 > 0.95 * g.len() as f64, "{occupied} of {} bins occupied", g.len());
        for w in f.vorticity_vector() {
            assert!(w.iter().all(|x| x.is_nan() || x.abs() <= 1e-12));
        }
    }
}

#[test]
fn solid_body_rotation_has_vorticity_twice_the_angular_velocity() {
    let b = SimBox::new([24.0, 20.0, 3.0], [false, false, true]);
    let (omega, centre) = (0.37, [12.0, 10.0]);
    let pos = lattice(&b, 0.25);
    let vel: Vec<[f64; 3]> =
        pos.iter().map(|p| [-omega * (p[1] - centre[1]), omega * (p[0] - centre[0]), 0.0]).collect();
    let g = grid(&b, FieldSpec::default());
    assert_eq!(g.n, [12, 10, 1]);
    let mut acc = Accumulator::new(&g);
    acc.sample(&g, &pos, &vel, &[1.0], &vec![0; pos.len()]);
    let f = finish(&acc, &g, [0.0, 0.0]);
    for bin in 0..g.len() {
        let w = f.vorticity[bin];
        assert!((w / (2.0 * omega) - 1.0).abs() < 1e-9, "bin {:?}: {w}", g.coords(bin));
        let c = g.centre(bin);
        assert!((f.vy[bin] - omega * (c[0] - centre[0])).abs() < 1e-12);
    }
}

#[test]
fn maxwell_boltzmann_velocities_give_the_temperature_in_every_bin() {
    let b = SimBox::new([20.0, 20.0, 5.0], [true, true, true]);
    let (t, stream) = (1.5, [0.5, -0.2, 0.1]);
    let masses = [1.0, 2.0];
    let g = grid(&b, FieldSpec { bin: 4.0, ..FieldSpec::default() });
    let mut acc = Accumulator::new(&g);
    for s in 0..10 {
        let pos = random_positions(&b, 2000, 100 + s);
        let types: Vec<u32> = (0..pos.len() as u32).map(|i| i % 2).collect();
        let m: Vec<f64> = types.iter().map(|&k| masses[k as usize]).collect();
        let v = maxwell_boltzmann(&m, t, 3.0 * m.len() as f64 - 3.0, 200 + s, 0);
        let v: Vec<[f64; 3]> = v.iter().map(|v| std::array::from_fn(|k| v[k] + stream[k])).collect();
        acc.sample(&g, &pos, &v, &masses, &types);
    }
    let f = finish(&acc, &g, [0.0, 1.0]);
    let (mut sum, mut var) = (0.0, 0.0);
    for bin in 0..g.len() {
        let n = f.count[bin];
        let sd = t * (2.0 / (3.0 * (n - 1.0))).sqrt();
        let tb = f.temperature[bin];
        assert!((tb - t).abs() < 4.0 * sd, "bin {bin}: T = {tb} from {n} atom-samples (sd {sd})");
        assert!((f.vx[bin] - stream[0]).abs() < 5.0 * (t / n).sqrt(), "bin {bin}: vx {}", f.vx[bin]);
        sum += tb;
        var += sd * sd;
    }
    let bins = g.len() as f64;
    let (mean, se) = (sum / bins, var.sqrt() / bins);
    assert!((mean - t).abs() < 3.0 * se, "mean T over bins {mean} vs {t} (se {se})");
    // The Mach number is |u| / c at the bin's density, temperature and mean atomic mass.
    let bin = 7;
    let rec = &acc.data()[bin * STRIDE..(bin + 1) * STRIDE];
    let c =
        crate::physics::jzg::sound_speed(f.density[bin], f.temperature[bin], rec[sample::MASS] / rec[sample::COUNT]);
    assert!((f.mach[bin] - f.speed[bin] / c).abs() < 1e-12 && f.mach[bin] > 0.05);
}

#[test]
fn a_uniform_lattice_has_density_n_over_v_in_every_bin() {
    let b = SimBox::new([16.0, 12.0, 6.0], [true, true, false]);
    let pos = lattice(&b, 0.5);
    let rho = pos.len() as f64 / b.volume();
    assert!((rho - 8.0).abs() < 1e-12);
    for spec in [
        FieldSpec::default(),
        FieldSpec { three_d: true, ..FieldSpec::default() },
        FieldSpec { slab: Some([1.0, 4.0]), ..FieldSpec::default() },
        FieldSpec { bin: 2.9, ..FieldSpec::default() }, // 16 / 2.9 -> 6 bins of 2.67: no site on an edge
    ] {
        let g = grid(&b, spec.clone());
        let mut acc = Accumulator::new(&g);
        acc.sample(&g, &pos, &vec![[0.0; 3]; pos.len()], &[1.0], &vec![0; pos.len()]);
        acc.sample(&g, &pos, &vec![[0.0; 3]; pos.len()], &[1.0], &vec![0; pos.len()]);
        let f = finish(&acc, &g, [0.0, 1.0]);
        let total: f64 = f.count.iter().sum();
        for (bin, d) in f.density.iter().enumerate() {
            if spec.bin == 2.9 {
                assert!(d.is_finite() && (total - 2.0 * pos.len() as f64).abs() < 1e-9);
            } else {
                assert!((d / rho - 1.0).abs() < 1e-12, "{spec:?} bin {bin}: {d} vs {rho}");
            }
        }
    }
}

#[test]
fn sampling_gives_the_same_bits_on_any_number_of_threads() {
    let b = SimBox::new([30.0, 30.0, 10.0], [true, true, false]);
    let n = 100_000;
    let pos = random_positions(&b, n, 7);
    let mut r = Sequence::new(8, Stream::InitialVelocities, 0, 0);
    let vel: Vec<[f64; 3]> = (0..n).map(|_| [r.normal(), r.normal(), r.normal()]).collect();
    let types: Vec<u32> = (0..n as u32).map(|i| (i / 7) % 3).collect();
    let masses = [1.0, 0.505, 2.1];
    let g = grid(&b, FieldSpec { bin: 1.5, ..FieldSpec::default() });
    assert!(sample::chunk_count(n, g.len()) > 1, "the test must cover several chunks");
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut acc = Accumulator::new(&g);
        pool.install(|| {
            acc.sample(&g, &pos, &vel, &masses, &types);
            acc.sample(&g, &pos, &vel, &masses, &types);
        });
        acc
    };
    let one = run(1);
    for threads in [2, 3, 5] {
        let many = run(threads);
        assert!(one.data().iter().zip(many.data()).all(|(a, b)| a.to_bits() == b.to_bits()), "{threads} threads");
    }
    // And the sums are the plain ones.
    let mut plain = vec![0.0; g.len() * STRIDE];
    for i in 0..n {
        let bin = g.bin_of(pos[i]).unwrap();
        let m = masses[types[i] as usize];
        let v = vel[i];
        let rec = [1.0, m, m * v[0], m * v[1], m * v[2], m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2])];
        for k in 0..STRIDE {
            plain[bin * STRIDE + k] += 2.0 * rec[k];
        }
    }
    for (a, p) in one.data().iter().zip(&plain) {
        assert!((a - p).abs() <= 1e-9 * p.abs().max(1.0), "{a} vs {p}");
    }
    // merge, reset and from_raw keep the layout.
    let mut merged = one.clone();
    merged.merge(&one);
    assert_eq!(merged.samples(), 4);
    assert_eq!(merged.data()[0], 2.0 * one.data()[0]);
    let raw = Accumulator::from_raw(&g, one.data().to_vec(), one.samples()).unwrap();
    let (a, b) = (finish(&raw, &g, [0.0, 1.0]), finish(&one, &g, [0.0, 1.0]));
    for k in FieldKind::ALL {
        assert!(a.layer(k).iter().zip(b.layer(k)).all(|(x, y)| x.to_bits() == y.to_bits()), "{k}");
    }
    assert_eq!(Accumulator::from_raw(&g, vec![0.0; 5], 1).unwrap_err().field, "data");
    // A device's sums with their dye channel: the same dye layer as the host's, and sampled.
    let tagged = one.tagged().expect("the CPU's sums count dye").to_vec();
    let dyed = Accumulator::from_raw_dye(&g, one.data().to_vec(), tagged, one.samples()).unwrap();
    let (a, b) = (finish(&dyed, &g, [0.0, 1.0]), finish(&one, &g, [0.0, 1.0]));
    assert!(a.dye_sampled && !finish(&raw, &g, [0.0, 1.0]).dye_sampled);
    assert!(a.dye.iter().zip(&b.dye).all(|(x, y)| x.to_bits() == y.to_bits()));
    let short = Accumulator::from_raw_dye(&g, one.data().to_vec(), vec![0.0; g.len() + 1], 1);
    assert_eq!(short.unwrap_err().field, "tagged");
    merged.reset();
    assert!(merged.samples() == 0 && merged.data().iter().all(|&x| x == 0.0));
}

#[test]
fn bad_specs_name_their_field_and_nothing_panics() {
    let b = SimBox::new([20.0, 10.0, 6.0], [true, false, true]);
    let dt = 0.005;
    let cases: Vec<(FieldSpec, &str)> = vec![
        (FieldSpec { bin: 0.0, ..FieldSpec::default() }, "bin"),
        (FieldSpec { bin: -1.0, ..FieldSpec::default() }, "bin"),
        (FieldSpec { bin: f64::NAN, ..FieldSpec::default() }, "bin"),
        (FieldSpec { bin: f64::INFINITY, ..FieldSpec::default() }, "bin"),
        (FieldSpec { bin: 10.5, ..FieldSpec::default() }, "bin"),
        (FieldSpec { bin: 1e-4, ..FieldSpec::default() }, "bin"),
        (FieldSpec { slab: Some([3.0, 2.0]), ..FieldSpec::default() }, "slab"),
        (FieldSpec { slab: Some([2.0, 2.0]), ..FieldSpec::default() }, "slab"),
        (FieldSpec { slab: Some([-1.0, 2.0]), ..FieldSpec::default() }, "slab"),
        (FieldSpec { slab: Some([1.0, 6.5]), ..FieldSpec::default() }, "slab"),
        (FieldSpec { slab: Some([f64::NAN, 2.0]), ..FieldSpec::default() }, "slab"),
        (FieldSpec { every: 0, ..FieldSpec::default() }, "every"),
        (FieldSpec { window_tau: 0.01, ..FieldSpec::default() }, "window_tau"),
        (FieldSpec { window_tau: f64::NAN, ..FieldSpec::default() }, "window_tau"),
        (FieldSpec { window_tau: -5.0, ..FieldSpec::default() }, "window_tau"),
    ];
    for (spec, field) in cases {
        let err = spec.validate(&b, dt).unwrap_err();
        assert_eq!(err.field, field, "{spec:?}: {err}");
        assert!(err.to_string().starts_with(field), "{err}");
        assert!(err.reason.len() > 20, "{err}: says how to fix it");
        if field == "bin" || field == "slab" {
            assert!(Grid::new(&spec, &b).is_err());
        }
        let _ = (spec.bin_counts(&b), spec.samples_per_window(dt));
    }
    assert!(FieldSpec::default().validate(&b, dt).is_ok());
    assert!(FieldSpec { slab: Some([0.0, 6.0]), bin: 10.0, ..FieldSpec::default() }.validate(&b, dt).is_ok());
    assert!(FieldSpec { window_tau: 0.1, ..FieldSpec::default() }.validate(&b, dt).is_ok());
    assert_eq!(FieldSpec::default().validate(&b, f64::NAN).unwrap_err().field, "window_tau");
    let nan_box = SimBox::new([f64::NAN, 10.0, 6.0], [true; 3]);
    assert_eq!(FieldSpec::default().validate(&nan_box, dt).unwrap_err().field, "bin");
    assert_eq!(FieldSpec::default().samples_per_window(dt), 1000);
    // Scene files: defaults fill what is left out, unknown fields are refused.
    let spec: FieldSpec = ron::from_str("(bin: 1.5, slab: Some((1.0, 2.0)))").unwrap();
    assert_eq!(spec, FieldSpec { bin: 1.5, slab: Some([1.0, 2.0]), ..FieldSpec::default() });
    assert!(ron::from_str::<FieldSpec>("(bins: 1.5)").unwrap_err().to_string().contains("bins"));
    let err = FieldKind::from_name("vorticityy").unwrap_err();
    assert!(err.to_string().contains("density, vx, vy, vz, speed, temperature, vorticity, mach, count"), "{err}");
}

#[test]
fn positions_find_their_bins_at_the_edges() {
    let b = SimBox::new([10.0, 8.0, 6.0], [true, false, true]);
    let g = grid(&b, FieldSpec { bin: 2.0, three_d: true, ..FieldSpec::default() });
    assert_eq!((g.n, g.cell, g.bin_volume()), ([5, 4, 3], [2.0, 2.0, 2.0], 8.0));
    assert_eq!(g.bin_of([0.0, 0.0, 0.0]), Some(0));
    assert_eq!(g.bin_of([10.0, 8.0, 6.0]), Some(g.len() - 1), "exactly at hi: the last bin");
    assert_eq!(g.bin_of([10.0 + 1e-12, 1.0, 1.0]), Some(g.index([4, 0, 0])));
    assert_eq!(g.bin_of([-1e-12, 1.0, 1.0]), Some(0));
    assert_eq!(g.bin_of([11.0, 1.0, 1.0]), Some(0), "periodic x wraps");
    assert_eq!(g.bin_of([-1.0, 1.0, 1.0]), Some(4));
    assert_eq!(g.bin_of([1.0, -0.3, 1.0]), Some(0), "pressed into the wall at y = 0");
    assert_eq!(g.bin_of([1.0, 8.3, 1.0]), Some(g.index([0, 3, 0])));
    assert_eq!(g.bin_of([1.0, 11.0, 1.0]), None, "far beyond a wall");
    assert_eq!(g.bin_of([f64::NAN, 1.0, 1.0]), None);
    assert_eq!(g.bin_of([1.0, 1.0, f64::INFINITY]), None);
    for bin in 0..g.len() {
        assert_eq!(g.bin_of(g.centre(bin)), Some(bin));
    }
    let slab = grid(&b, FieldSpec { slab: Some([2.0, 3.0]), ..FieldSpec::default() });
    assert_eq!((slab.n, slab.cell[2], slab.periodic), ([5, 4, 1], 1.0, [true, false, false]));
    assert_eq!(slab.bin_of([1.0, 1.0, 2.5]), Some(0));
    assert_eq!(slab.bin_of([1.0, 1.0, 3.0]), Some(0));
    assert_eq!(slab.bin_of([1.0, 1.0, 3.5]), None, "outside the slab");
    assert_eq!(slab.bin_of([1.0, 1.0, 1.9]), None);
}

#[test]
fn vorticity_wraps_on_periodic_axes_and_goes_one_sided_beside_empty_bins() {
    // u_x = sin(k y_c) per bin on a periodic y: the central difference with wrap is
    // cos(k y_c) sin(k h) / h exactly, in the first and last rows too.
    let b = SimBox::new([8.0, 16.0, 2.0], [true, true, true]);
    let g = grid(&b, FieldSpec::default());
    let k = std::f64::consts::TAU / 16.0;
    let pos: Vec<[f64; 3]> = (0..g.len()).flat_map(|bin| [g.centre(bin); 3]).collect();
    let vel: Vec<[f64; 3]> = pos.iter().map(|p| [(k * p[1]).sin(), 0.0, 0.0]).collect();
    let mut acc = Accumulator::new(&g);
    acc.sample(&g, &pos, &vel, &[1.0], &vec![0; pos.len()]);
    let f = finish(&acc, &g, [0.0, 1.0]);
    let h = g.cell[1];
    for bin in 0..g.len() {
        let want = -(k * g.centre(bin)[1]).cos() * (k * h).sin() / h;
        assert!((f.vorticity[bin] - want).abs() < 1e-12, "bin {:?}", g.coords(bin));
    }
    // A walled x with an empty column: one-sided beside it, NaN in it.
    let b = SimBox::new([8.0, 4.0, 2.0], [false, true, true]);
    let g = grid(&b, FieldSpec::default());
    let pos: Vec<[f64; 3]> =
        (0..g.len()).filter(|&bin| g.coords(bin)[0] != 2).flat_map(|bin| [g.centre(bin); 2]).collect();
    let vel: Vec<[f64; 3]> = pos.iter().map(|p| [0.0, 0.5 * p[0] * p[0], 0.0]).collect();
    let mut acc = Accumulator::new(&g);
    acc.sample(&g, &pos, &vel, &[1.0], &vec![0; pos.len()]);
    let f = finish(&acc, &g, [0.0, 1.0]);
    let at = |i: usize| f.vorticity[g.index([i, 0, 0])];
    // u_y at x = 1, 3, (5 empty), 7: 0.5, 4.5, -, 24.5.
    assert_eq!(at(0), (4.5 - 0.5) / 2.0);
    assert_eq!(at(1), (4.5 - 0.5) / 2.0, "one-sided beside the empty bin");
    assert!(at(2).is_nan() && f.vx[g.index([2, 0, 0])].is_nan() && f.density[g.index([2, 0, 0])] == 0.0);
    assert!(at(3).is_nan(), "the last bin has no neighbour with data");
}

#[test]
fn kinds_have_units_and_block_errors_come_from_windows() {
    assert!((FieldKind::Density.to_si() - 25.33).abs() < 0.01);
    assert!((FieldKind::Speed.to_si() - 157.9).abs() < 0.2);
    assert!((FieldKind::Vorticity.to_si() - 0.4638).abs() < 1e-3);
    assert_eq!(FieldKind::Temperature.to_si(), 119.8);
    for k in FieldKind::ALL {
        assert_eq!(FieldKind::from_name(k.name()).unwrap(), k);
        assert_eq!(k.name().parse::<FieldKind>().unwrap(), k);
        assert!(!k.unit_lj().is_empty() && !k.unit_si().is_empty() && !k.label().is_empty());
    }
    assert!(FieldKind::Vorticity.signed() && FieldKind::Vx.signed() && !FieldKind::Speed.signed());
    // Windows as blocks: means 1.5 / 3.5 / 5.5 -> mean 3.5, se sqrt(4 / 3).
    let out = windows_mean_sem(&[vec![1.5, 1.0], vec![3.5, f64::NAN], vec![5.5, 2.0]]);
    assert_eq!(out[0].0, 3.5);
    assert!((out[0].1 - (4.0f64 / 3.0).sqrt()).abs() < 1e-15);
    assert!(out[1].0.is_nan());
    assert!(windows_mean_sem::<Vec<f64>>(&[]).is_empty());
}
