//! Thermostats relative to the flow (`relative_to_flow`, `flow::FlowProfile`):
//! (a) CPU: an LJ liquid (2048 atoms, rho = 0.7) streaming at U = 1 along x under CSVR at
//!     T* = 1 relative to the flow keeps its mean velocity (each bin's momentum is kept by the
//!     rescale) and its motion relative to the flow settles at T* = 1; the plain CSVR counts
//!     the flow as heat, so the same motion ends well below 1 (about 2/3), and scales the flow;
//! (b) the arithmetic of one rescale: each bin's momentum unchanged to round-off, the relative
//!     kinetic energy scaled by lambda^2, K_rel = sum m v^2 - sum_b |P_b|^2 / M_b;
//! (c) CUDA against the CPU in double precision (graphs and kernel by kernel, and the
//!     thermostat switched on live): the same trajectory (skipped without a CUDA device);
//! (d) scene spelling: `Csvr(tau: 1.0, relative_to_flow: true)`, the default false, and a
//!     misspelled key refused with the usual error.

mod common;

use argon_sandbox::flow::{FlowProfile, relative_dof};
use argon_sandbox::physics::init::LatticeKind;
use argon_sandbox::physics::params::{SimParams, Thermostat};
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::{AtomState, Backend, Snapshot};
use common::*;

const U: f64 = 1.0;

/// fcc 8x8x8 (2048 atoms) at rho = 0.7 and T* = 1, streaming at U along x.
fn streaming_liquid() -> (SimBox, AtomState) {
    let (b, mut atoms) = lattice_system(LatticeKind::Fcc, 0.7, [8; 3], 1.0, 5);
    for v in atoms.velocities.iter_mut() {
        v[0] += U;
    }
    (b, atoms)
}

/// Twice the kinetic energy relative to the flow profile, and its degrees of freedom.
fn relative_twice_ke(s: &Snapshot) -> (f64, f64) {
    let a = &s.atoms;
    let mut profile = FlowProfile::new(&s.sim_box);
    profile.measure(a.len(), |i| (a.positions[i], a.velocities[i], 1.0));
    let twice: f64 = a.velocities.iter().map(|v| v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sum();
    (profile.relative_twice_ke(twice), relative_dof(a.len(), profile.occupied()))
}

/// The temperature relative to the uniform stream U (independent of the bins): sum |v - U x|^2
/// over 3 N - 3.
fn stream_temperature(s: &Snapshot) -> f64 {
    let a = &s.atoms;
    let k: f64 = a.velocities.iter().map(|v| (v[0] - U).powi(2) + v[1] * v[1] + v[2] * v[2]).sum();
    k / (3.0 * a.len() as f64 - 3.0)
}

fn mean_vx(s: &Snapshot) -> f64 {
    mean(&s.atoms.velocities.iter().map(|v| v[0]).collect::<Vec<_>>())
}

struct StreamRun {
    /// Relative temperature (profile) and temperature relative to U, per sample.
    t_rel: Vec<f64>,
    t_stream: Vec<f64>,
    /// Largest |<vx> - U| over the run.
    worst_drift: f64,
    final_vx: f64,
}

fn stream_run(relative_to_flow: bool) -> StreamRun {
    let (b, atoms) = streaming_liquid();
    let params = SimParams {
        temperature: 1.0,
        thermostat: Thermostat::Csvr { tau: 0.5, relative_to_flow },
        telemetry_every: 100,
        seed: 17,
        ..SimParams::default()
    };
    let mut sim = cpu(b, params, &atoms);
    let mut run = StreamRun { t_rel: Vec::new(), t_stream: Vec::new(), worst_drift: 0.0, final_vx: U };
    // 1,000 steps to melt and settle, then 6,000 sampled every 20.
    for chunk in 0..350 {
        sim.advance(20).expect("advance");
        let s = sim.snapshot().expect("snapshot");
        let vx = mean_vx(&s);
        run.worst_drift = run.worst_drift.max((vx - U).abs());
        run.final_vx = vx;
        if chunk >= 50 {
            let (k, dof) = relative_twice_ke(&s);
            run.t_rel.push(k / dof);
            run.t_stream.push(stream_temperature(&s));
        }
    }
    sim.drain_telemetry();
    run
}

#[test]
fn streaming_liquid_keeps_its_flow_and_its_thermal_temperature_only_relative_to_the_flow() {
    let on = stream_run(true);
    let (t_rel, t_err) = block_mean_sem(&on.t_rel, 20);
    let (t_stream, ts_err) = block_mean_sem(&on.t_stream, 20);
    println!(
        "relative_to_flow: <vx> drift at most {:.2e}, T_rel = {t_rel:.4} +- {t_err:.4}, T relative to U = {t_stream:.4} +- {ts_err:.4}",
        on.worst_drift
    );
    // Momentum is conserved by the dynamics (periodic box, no body force) and kept per bin by
    // the rescale, so the mean velocity stays U to round-off.
    assert!(on.worst_drift < 1e-10, "the flow drifted by {:e}", on.worst_drift);
    assert!(t_err < 0.02, "error bar {t_err} too large");
    assert!((t_rel - 1.0).abs() < 4.0 * t_err + 0.005, "relative temperature {t_rel} +- {t_err}, target 1");
    assert!((t_stream - 1.0).abs() < 4.0 * ts_err + 0.02, "temperature relative to U {t_stream} +- {ts_err}");

    let off = stream_run(false);
    let (t_off, t_off_err) = block_mean_sem(&off.t_rel, 20);
    println!("plain CSVR: final <vx> = {:.4} (U = {U}), T_rel = {t_off:.4} +- {t_off_err:.4}", off.final_vx);
    // The plain thermostat holds sum m v^2, flow included, at the target: the motion relative
    // to the flow is colder by the flow's share (N U^2 of (3 N - 3) T: 1 - 1/3), and its
    // rescale scales the flow too, so the mean velocity is no longer kept.
    assert!(t_off < t_rel - 0.1 && t_off < 0.9, "plain CSVR: T_rel = {t_off} (relative_to_flow: {t_rel})");
    assert!(off.worst_drift > 1e-6, "the plain rescale scales the flow too ({:e})", off.worst_drift);
}

/// Box, positions, velocities and masses.
type Gas = (SimBox, Vec<[f64; 3]>, Vec<[f64; 3]>, Vec<f64>);

/// Random positions in a walled box with a sheared flow and thermal noise.
fn sheared_gas(n: usize) -> Gas {
    use argon_sandbox::rng::{Sequence, Stream};
    let b = SimBox::new([13.0, 9.0, 5.0], [true, false, true]);
    let mut rng = Sequence::new(3, Stream::GasPlacement, 1, 0);
    let mut pos = Vec::new();
    let mut vel = Vec::new();
    let mut mass = Vec::new();
    for i in 0..n {
        let p: [f64; 3] = std::array::from_fn(|k| rng.uniform() * b.length()[k]);
        let shear = 2.0 * p[1] / b.length()[1];
        vel.push([shear + rng.normal(), 0.3 + rng.normal(), rng.normal()]);
        pos.push(p);
        mass.push(if i % 3 == 0 { 2.1 } else { 1.0 });
    }
    (b, pos, vel, mass)
}

#[test]
fn one_rescale_keeps_each_bins_momentum_and_scales_the_relative_energy_by_lambda_squared() {
    let (b, pos, vel, mass) = sheared_gas(3000);
    let n = pos.len();
    let mut profile = FlowProfile::new(&b);
    assert_eq!(profile.grid().n, [7, 5, 1], "bins of about 2 sigma tiling 13 x 9");
    profile.measure(n, |i| (pos[i], vel[i], mass[i]));
    let twice: f64 = (0..n).map(|i| mass[i] * vel[i].iter().map(|x| x * x).sum::<f64>()).sum();
    let k_rel = profile.relative_twice_ke(twice);
    // K_rel is sum m |v - u_b|^2.
    let direct: f64 = (0..n)
        .map(|i| {
            let u = profile.mean(profile.grid().bin_of(pos[i]).unwrap());
            mass[i] * (0..3).map(|k| (vel[i][k] - u[k]).powi(2)).sum::<f64>()
        })
        .sum();
    assert!(rel(k_rel, direct) < 1e-12, "K_rel {k_rel} vs sum m |v - u|^2 {direct}");
    assert!(k_rel < 0.8 * twice, "the shear and drift are part of sum m v^2 ({k_rel} of {twice})");
    assert_eq!(profile.occupied(), 35);
    assert_eq!(relative_dof(n, profile.occupied()), (3 * n - 3 * 35) as f64);

    let lambda = 0.9;
    let means: Vec<[f64; 3]> = (0..profile.grid().len()).map(|b| profile.mean(b)).collect();
    let scaled: Vec<[f64; 3]> = (0..n).map(|i| profile.rescale(pos[i], vel[i], lambda)).collect();
    let twice2: f64 = (0..n).map(|i| mass[i] * scaled[i].iter().map(|x| x * x).sum::<f64>()).sum();
    profile.measure(n, |i| (pos[i], scaled[i], mass[i]));
    for (bin, u) in means.iter().enumerate() {
        let after = profile.mean(bin);
        let gap = (0..3).map(|k| (after[k] - u[k]).abs()).fold(0.0, f64::max);
        assert!(gap < 1e-13, "bin {bin}: mean velocity {u:?} became {after:?}");
    }
    let k_rel2 = profile.relative_twice_ke(twice2);
    assert!(rel(k_rel2, lambda * lambda * k_rel) < 1e-12, "K_rel {k_rel} -> {k_rel2}, want x {}", lambda * lambda);
}

#[test]
fn cuda_agrees_with_the_cpu_relative_to_the_flow() {
    use argon_sandbox::physics::params::Algorithm;
    use argon_sandbox::physics::real::Precision;
    use argon_sandbox::sim::cpu::CpuBackend;
    use argon_sandbox::sim::cuda::CudaBackend;
    if !gpu() {
        return;
    }
    // A walled-y box (the edge bins take atoms pressed into the walls) streaming along x.
    let (b, mut atoms) = jiggled_fluid([8, 8, 7], [false, true, false], 0.15, &[], 8);
    for v in atoms.velocities.iter_mut() {
        v[0] += U;
    }
    let gap = |a: &[[f64; 3]], c: &[[f64; 3]]| {
        a.iter().zip(c).map(|(a, c)| (0..3).map(|k| (a[k] - c[k]).abs()).fold(0.0, f64::max)).fold(0.0, f64::max)
    };
    for (thermostat, live) in [
        (Thermostat::Csvr { tau: 0.5, relative_to_flow: true }, false),
        (Thermostat::Berendsen { tau: 0.2, relative_to_flow: true }, false),
        // Switched on through set_params after 50 plain steps.
        (Thermostat::Csvr { tau: 0.5, relative_to_flow: true }, true),
    ] {
        let params = SimParams {
            precision: Precision::Double,
            algorithm: Algorithm::Neighbors,
            temperature: 1.0,
            thermostat,
            telemetry_every: 10,
            seed: 23,
            ..SimParams::default()
        };
        let start = if live {
            SimParams { thermostat: Thermostat::Csvr { tau: 0.5, relative_to_flow: false }, ..params.clone() }
        } else {
            params.clone()
        };
        let mut cpu = CpuBackend::new(b, start.clone(), &atoms, None).unwrap();
        let mut graphs = CudaBackend::new(b, start.clone(), &atoms, None).unwrap();
        let mut plain = CudaBackend::new(b, start, &atoms, None).unwrap();
        plain.set_step_graphs(false);
        if live {
            for s in [&mut cpu as &mut dyn Backend, &mut graphs, &mut plain] {
                s.advance(50).unwrap();
                s.set_params(params.clone()).unwrap();
            }
        }
        for s in [&mut cpu as &mut dyn Backend, &mut graphs, &mut plain] {
            s.advance(300).unwrap();
        }
        let (sc, sg, sp) = (cpu.snapshot().unwrap(), graphs.snapshot().unwrap(), plain.snapshot().unwrap());
        let dv = gap(&sc.atoms.velocities, &sg.atoms.velocities);
        let dx = gap(&sc.atoms.positions, &sg.atoms.positions);
        let dgp = gap(&sg.atoms.velocities, &sp.atoms.velocities);
        let (kc, dofc) = relative_twice_ke(&sc);
        let (kg, dofg) = relative_twice_ke(&sg);
        eprintln!(
            "{thermostat:?} live {live}: GPU vs CPU velocities {dv:.1e} positions {dx:.1e}; graphs vs kernel by \
             kernel {dgp:.1e}; T_rel CPU {:.5} GPU {:.5}; <vx> CPU {:.6} GPU {:.6}",
            kc / dofc,
            kg / dofg,
            mean_vx(&sc),
            mean_vx(&sg)
        );
        assert!(dv < 1e-6 && dx < 1e-6, "{thermostat:?} live {live}: trajectories part (v {dv:e}, x {dx:e})");
        assert!(dgp < 1e-9, "{thermostat:?} live {live}: graphs and kernel-by-kernel launches differ ({dgp:e})");
        let (tc, tg) = (cpu.drain_telemetry(), graphs.drain_telemetry());
        assert_eq!(tc.len(), tg.len());
        for (x, y) in tc.iter().zip(&tg) {
            assert!(
                rel(y.temperature, x.temperature) < 1e-8,
                "step {}: T {} vs {}",
                x.step,
                y.temperature,
                x.temperature
            );
            let dp = (0..3).map(|k| (y.momentum[k] - x.momentum[k]).abs()).fold(0.0, f64::max);
            assert!(dp < 1e-6, "step {}: momentum {:?} vs {:?}", x.step, y.momentum, x.momentum);
        }
    }
}

#[test]
fn scenes_spell_relative_to_flow_with_a_default_and_refuse_a_misspelling() {
    use argon_sandbox::scene::Scene;
    let scene = |thermostat: &str| {
        format!(
            "(\n    version: 1,\n    box: (size: (20.0, 20.0, 10.0), boundaries: (Wall, Periodic, Periodic)),\n    \
             temperature_k: 100.0,\n    thermostat: {thermostat},\n    atoms: [Lattice(kind: Fcc, density: 0.5)],\n)\n"
        )
    };
    let parse = |t: &str| Scene::from_str(&scene(t), "flow.ron").map(|s| s.thermostat);
    assert_eq!(
        parse("Csvr(tau: 1.0, relative_to_flow: true)").unwrap(),
        Thermostat::Csvr { tau: 1.0, relative_to_flow: true }
    );
    assert_eq!(parse("Csvr(tau: 1.0)").unwrap(), Thermostat::Csvr { tau: 1.0, relative_to_flow: false });
    assert_eq!(
        parse("Berendsen(tau: 0.5, relative_to_flow: true)").unwrap(),
        Thermostat::Berendsen { tau: 0.5, relative_to_flow: true }
    );
    let e = parse("Csvr(tau: 1.0, relative_to_flw: true)").unwrap_err().to_string();
    println!("{e}");
    assert!(e.contains("flow.ron:5:") && e.contains("relative_to_flw") && e.contains("relative_to_flow"), "{e}");
}
