//! Flow fields sampled by the backends: windows close on simulated time and at the end of a
//! run, a stream velocity shows as the mean velocity and not as heat, and the CPU and CUDA
//! backends give the same grids for the same run (GPU test).

mod common;

use argon_sandbox::flow::{FieldKind, FieldSpec, Fields};
use argon_sandbox::physics::init::LatticeKind;
use argon_sandbox::physics::params::{Algorithm, SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::sim::Backend;
use argon_sandbox::sim::cuda::CudaBackend;

/// A periodic fcc fluid at rho* 0.8, T 1.2, streaming at `u` along x.
fn streaming_fluid(u: f64) -> (argon_sandbox::physics::sim_box::SimBox, argon_sandbox::sim::AtomState) {
    let (b, mut atoms) = common::lattice_system(LatticeKind::Fcc, 0.8, [8, 8, 4], 1.2, 11);
    for v in atoms.velocities.iter_mut() {
        v[0] += u;
    }
    (b, atoms)
}

fn params(precision: Precision) -> SimParams {
    SimParams { thermostat: Thermostat::Nve, ..common::params(Algorithm::Neighbors, precision, true) }
}

#[test]
fn windows_close_on_time_and_a_stream_is_flow_not_heat() {
    let u = 0.7;
    let (b, atoms) = streaming_fluid(0.0);
    let n = atoms.len() as f64;
    let p = SimParams { telemetry_every: 5, ..params(Precision::Double) };
    let mut sim = common::cpu(b, p, &atoms);
    // Melt the lattice, then set the whole fluid streaming at u along x.
    sim.advance(1000).unwrap();
    let mut snap = sim.snapshot().unwrap();
    snap.atoms.velocities.iter_mut().for_each(|v| v[0] += u);
    snap.step = 0;
    snap.time = 0.0;
    sim.restore(&snap).unwrap();
    sim.drain_telemetry();
    // Every 5 steps, windows of 0.25 tau = 50 steps = 10 samples.
    let spec = FieldSpec { bin: 2.5, every: 5, window_tau: 0.25, ..FieldSpec::default() };
    sim.set_fields(Some(spec)).unwrap();
    sim.advance(120).unwrap();
    let full = sim.take_fields(false).unwrap();
    assert_eq!(full.len(), 2, "120 steps hold two full windows of 50");
    let last = sim.take_fields(true).unwrap();
    assert_eq!(last.len(), 1, "the open window (4 samples) closes at the end");
    assert_eq!((full[0].samples, full[1].samples, last[0].samples), (10, 10, 4));
    for (f, t) in full.iter().chain(&last).zip([[0.025, 0.25], [0.275, 0.5], [0.525, 0.6]]) {
        assert!((f.time[0] - t[0]).abs() < 1e-9 && (f.time[1] - t[1]).abs() < 1e-9, "{:?}", f.time);
    }
    // The thermal temperature at the same steps: the kinetic temperature (3N - 3 degrees of
    // freedom, the stream included) less the stream's N u^2 / (3N - 3).
    let telemetry = sim.drain_telemetry();
    let stream = n * u * u / (3.0 * n - 3.0);
    for f in &full {
        let at: Vec<f64> = telemetry
            .iter()
            .filter(|t| t.time >= f.time[0] - 1e-9 && t.time <= f.time[1] + 1e-9)
            .map(|t| t.temperature - stream)
            .collect();
        assert_eq!(at.len(), 10);
        let t_thermal = at.iter().sum::<f64>() / 10.0;
        let count: f64 = f.count.iter().sum();
        assert!((count - n * f.samples as f64).abs() < 1e-9);
        // Mass-weighted mean velocity over bins: the stream (total momentum is conserved).
        let vx: f64 = f.vx.iter().zip(&f.count).map(|(v, c)| v * c).sum::<f64>() / count;
        assert!((vx - u).abs() < 1e-9, "mean vx {vx}");
        // Temperature relative to each bin's mean velocity: the thermal one (within 3 %: the
        // bins' own mean velocities take 3 of their ~500 degrees of freedom), not 0.16 higher.
        let t_bins = mean(&f.temperature);
        assert!((t_bins / t_thermal - 1.0).abs() < 0.03, "bins {t_bins}, thermal {t_thermal}, stream {stream}");
        // Uniform stream: no vorticity beyond thermal noise; Mach about u / c.
        assert!(mean(&f.vorticity).abs() < 0.05, "mean vorticity {}", mean(&f.vorticity));
        assert!(mean(&f.mach) > 0.05 && mean(&f.mach) < 0.3, "mean Mach {}", mean(&f.mach));
    }
    // Off: nothing more is sampled.
    sim.set_fields(None).unwrap();
    sim.advance(60).unwrap();
    assert!(sim.take_fields(true).unwrap().is_empty());
}

fn mean(xs: &[f64]) -> f64 {
    let v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.iter().sum::<f64>() / v.len() as f64
}

fn agree(a: &Fields, b: &Fields, what: &str) {
    assert_eq!(a.grid, b.grid, "{what}: grids");
    assert_eq!(a.samples, b.samples, "{what}: samples");
    assert!((a.time[0] - b.time[0]).abs() < 1e-9 && (a.time[1] - b.time[1]).abs() < 1e-9, "{what}: times");
    let mut worst = 0.0f64;
    for kind in FieldKind::ALL {
        let (x, y) = (a.layer(kind), b.layer(kind));
        let scale = x.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
        for (i, (p, q)) in x.iter().zip(y).enumerate() {
            assert_eq!(p.is_nan(), q.is_nan(), "{what}: {kind} bin {i}: {p} vs {q}");
            if p.is_finite() {
                let d = (p - q).abs() / scale;
                worst = worst.max(d);
                assert!(d < 1e-9, "{what}: {kind} bin {i}: cpu {p}, cuda {q}");
            }
        }
    }
    eprintln!("{what}: worst difference {worst:.2e} of each layer's largest value");
}

#[test]
fn cpu_and_cuda_give_the_same_grids() {
    if !common::gpu() {
        return;
    }
    let (b, atoms) = streaming_fluid(0.4);
    for spec in [
        FieldSpec { bin: 2.0, every: 5, window_tau: 0.1, ..FieldSpec::default() },
        FieldSpec { bin: 1.5, every: 3, window_tau: 0.09, slab: Some([1.0, 5.0]), three_d: true },
    ] {
        let mut cpu = common::cpu(b, params(Precision::Double), &atoms);
        let mut gpu = CudaBackend::new(b, params(Precision::Double), &atoms, None).unwrap();
        let mut got = Vec::new();
        for sim in [&mut cpu as &mut dyn Backend, &mut gpu] {
            sim.set_fields(Some(spec.clone())).unwrap();
            sim.advance(45).unwrap();
            let mut w = sim.take_fields(false).unwrap();
            w.extend(sim.take_fields(true).unwrap());
            got.push(w);
        }
        assert_eq!(got[0].len(), got[1].len(), "{spec:?}: windows");
        assert!(got[0].len() >= 2);
        for (k, (c, g)) in got[0].iter().zip(&got[1]).enumerate() {
            agree(c, g, &format!("{spec:?} window {k}"));
        }
    }
}
