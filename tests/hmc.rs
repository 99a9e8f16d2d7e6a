//! Hybrid Monte Carlo (`Thermostat::Hmc`, `Thermostat::HmcNpt`) on both backends.
//!
//! Against the Johnson-Zollweg-Gubbins table (`jzg1993_eos.csv`): NVT at T = 2.0, rho = 0.5
//! (P and U with tail corrections within 2%), and NPT at the table's pressure there (mean
//! density within 2% of 0.5). The potential-energy variance of the chain against a CSVR MD
//! run of the same state. Exactness of the moves: a rejected trajectory returns to the very
//! bits it started from (never integrated backwards), the clock counts every trajectory,
//! cycles split over `advance` calls give the same chain, and acceptance tends to 1 as dt
//! shrinks. CUDA versions print `skipped: no CUDA device` without one.

mod common;

use argon_sandbox::physics::cutoff::Cutoff;
use argon_sandbox::physics::init::LatticeKind;
use argon_sandbox::physics::params::{SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::cuda::CudaBackend;
use argon_sandbox::sim::{AtomState, Backend, Telemetry};
use common::*;

const RC: f64 = 2.5;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Cpu,
    Cuda,
}

fn open(kind: Kind, b: SimBox, params: SimParams, atoms: &AtomState) -> Box<dyn Backend> {
    match kind {
        Kind::Cpu => Box::new(cpu(b, params, atoms)),
        Kind::Cuda => Box::new(CudaBackend::new(b, params, atoms, None).expect("CUDA backend")),
    }
}

fn jzg(t: f64, rho: f64) -> JzgRow {
    *jzg_table()
        .iter()
        .find(|r| (r.t - t).abs() < 1e-9 && (r.rho - rho).abs() < 1e-9)
        .unwrap_or_else(|| panic!("no JZG row for T={t} rho={rho}"))
}

fn hmc_params(t: f64, thermostat: Thermostat, every: u64) -> SimParams {
    SimParams {
        cutoff: Cutoff::Absolute(RC),
        shift: false,
        temperature: t,
        thermostat,
        telemetry_every: every,
        seed: 11,
        ..SimParams::default()
    }
}

/// Melts the lattice with Bussi MD (an fcc start at rho = 0.5 has a shell of pairs just
/// inside the cutoff, so in the truncated, unshifted potential it lies ~65 epsilon below the
/// fluid: a chain started there never leaves it), then runs the backend's own ensemble for
/// `equilibrate` steps and returns the telemetry of the `steps` after.
fn sample(sim: &mut dyn Backend, equilibrate: u64, steps: u64) -> Vec<Telemetry> {
    let own = sim.params().clone();
    sim.set_params(SimParams { thermostat: Thermostat::Csvr { tau: 0.1, relative_to_flow: false }, ..own.clone() })
        .expect("melting params");
    sim.advance(1_000).expect("melting");
    sim.set_params(own).expect("params");
    sim.advance(equilibrate).expect("equilibration");
    sim.drain_telemetry();
    sim.advance(steps).expect("production");
    sim.drain_telemetry()
}

/// Variance of `xs` and its standard error from the spread of per-block variances.
fn block_variance(xs: &[f64], blocks: usize) -> (f64, f64) {
    let per = xs.len() / blocks;
    let vars: Vec<f64> = (0..blocks)
        .map(|b| {
            let s = &xs[b * per..(b + 1) * per];
            let m = mean(s);
            s.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (s.len() - 1) as f64
        })
        .collect();
    block_mean_sem(&vars, blocks)
}

fn nvt_against_jzg(kind: Kind, precision: Precision) {
    let (t, rho) = (2.0, 0.5);
    let want = jzg(t, rho);
    let (b, atoms) = lattice_system(LatticeKind::Fcc, rho, [6; 3], t, 5);
    let params = SimParams { precision, ..hmc_params(t, Thermostat::Hmc { trajectory: 20 }, 20) };
    let mut sim = open(kind, b, params, &atoms);
    let rows = sample(sim.as_mut(), 2_000, 40_000);
    assert_eq!(rows.len(), 2_000, "one chain record per 20-step cycle");
    let last = rows.last().unwrap();
    let acc = last.mc.acceptance().expect("trials counted");
    println!("{kind:?} {precision:?}: {} trajectories, acceptance {acc:.4}", last.mc.trials);
    assert!(acc > 0.5 && acc < 1.0, "acceptance {acc}: expected most but not all trajectories accepted at dt = 0.005");
    assert_eq!(last.mc.volume_trials, 0);

    let p: Vec<f64> = rows.iter().map(|r| r.pressure + p_tail(rho, RC)).collect();
    let u: Vec<f64> = rows.iter().map(|r| r.pair_energy / r.n_atoms as f64 + u_tail(rho, RC)).collect();
    let temp: Vec<f64> = rows.iter().map(|r| r.temperature).collect();
    let (p_mean, p_err) = block_mean_sem(&p, 20);
    let (u_mean, u_err) = block_mean_sem(&u, 20);
    let (t_mean, t_err) = block_mean_sem(&temp, 20);
    println!(
        "HMC NVT T={t} rho={rho}: <T> = {t_mean:.4} +- {t_err:.4}; P = {p_mean:.5} +- {p_err:.5} (JZG {:.5}); \
         U/N = {u_mean:.5} +- {u_err:.5} (JZG {:.5})",
        want.p, want.u_per_n
    );
    // The kinetic temperature of the chain's states (fresh velocities after 20 NVE steps).
    assert!(rel(t_mean, t) < 0.01, "<T> = {t_mean} +- {t_err}");
    assert!(p_err < 0.25 * 0.02 * want.p, "P error bar {p_err} too large for a 2% test");
    assert!(u_err < 0.25 * 0.02 * want.u_per_n.abs(), "U error bar {u_err} too large for a 2% test");
    assert!(rel(p_mean, want.p) < 0.02, "P = {p_mean} +- {p_err}, JZG {}", want.p);
    assert!(rel(u_mean, want.u_per_n) < 0.02, "U/N = {u_mean} +- {u_err}, JZG {}", want.u_per_n);

    // The potential-energy distribution's width against Bussi-thermostatted MD of the same
    // state: both sample the canonical ensemble of the positions.
    let md_params = hmc_params(t, Thermostat::Csvr { tau: 0.1, relative_to_flow: false }, 20);
    let (b, atoms) = lattice_system(LatticeKind::Fcc, rho, [6; 3], t, 5);
    let mut md = open(kind, b, SimParams { precision, ..md_params }, &atoms);
    let md_rows = sample(md.as_mut(), 2_000, 40_000);
    let pe = |rows: &[Telemetry]| rows.iter().map(|r| r.pair_energy).collect::<Vec<f64>>();
    let (v_hmc, e_hmc) = block_variance(&pe(&rows), 10);
    let (v_md, e_md) = block_variance(&pe(&md_rows), 10);
    let combined = (e_hmc * e_hmc + e_md * e_md).sqrt();
    println!("Var(U): HMC {v_hmc:.2} +- {e_hmc:.2}, CSVR MD {v_md:.2} +- {e_md:.2}");
    assert!(
        (v_hmc - v_md).abs() < 3.0 * combined + 0.05 * v_md,
        "potential-energy variance: HMC {v_hmc} +- {e_hmc} vs MD {v_md} +- {e_md}"
    );
    // Canonical fluctuations: Var(U) ~ N T^2 c_v^ex; sanity bound that it is not a delta or a blow-up.
    assert!(v_md > 10.0 && v_md < 1e4, "Var(U) = {v_md}");
}

fn npt_against_jzg(kind: Kind) {
    let (t, rho) = (2.0, 0.5);
    let want = jzg(t, rho);
    let (b, atoms) = lattice_system(LatticeKind::Fcc, rho, [6; 3], t, 9);
    let n = atoms.len() as f64;
    let thermostat = Thermostat::HmcNpt { trajectory: 10, pressure: want.p, max_dlnv: 0.03 };
    let mut sim = open(kind, b, hmc_params(t, thermostat, 10), &atoms);
    let rows = sample(sim.as_mut(), 5_000, 50_000);
    assert_eq!(rows.len(), 5_000);
    let last = rows.last().unwrap();
    let (acc, vacc) = (last.mc.acceptance().unwrap(), last.mc.volume_acceptance().unwrap());
    println!(
        "{kind:?} HMC NPT: {} trajectories, acceptance {acc:.4}; {} volume moves, acceptance {vacc:.4}",
        last.mc.trials, last.mc.volume_trials
    );
    assert_eq!(last.mc.trials, last.mc.volume_trials, "one volume move per cycle");
    assert!(acc > 0.5 && acc < 1.0, "trajectory acceptance {acc}");
    assert!(
        vacc > 0.1 && vacc < 0.95,
        "volume acceptance {vacc}: max_dlnv 0.03 should be neither always nor never accepted"
    );
    let density: Vec<f64> = rows.iter().map(|r| n / r.volume).collect();
    let box_now = sim.sim_box();
    assert!((density.last().unwrap() - n / box_now.volume()).abs() < 1e-9, "density from telemetry matches the box");
    let (d_mean, d_err) = block_mean_sem(&density, 20);
    println!("HMC NPT T={t} P={}: <rho> = {d_mean:.5} +- {d_err:.5} (JZG 0.5)", want.p);
    assert!(d_err < 0.005 * rho, "density error bar {d_err} too large for a 2% test");
    assert!(rel(d_mean, rho) < 0.02, "<rho> = {d_mean} +- {d_err}, JZG 0.5 at P = {}", want.p);
}

/// With a time step far too large the energy jumps and every trajectory is rejected: the
/// state is the saved one, bit for bit, and the clock still counts the steps.
fn rejection_restores_exactly(kind: Kind, precision: Precision) {
    let (b, atoms) = lattice_system(LatticeKind::Fcc, 0.8, [4; 3], 1.0, 3);
    let params = SimParams { dt: 0.03, precision, ..hmc_params(1.0, Thermostat::Hmc { trajectory: 15 }, 15) };
    let mut sim = open(kind, b, params, &atoms);
    let before = sim.copy_state().unwrap();
    sim.advance(45).unwrap();
    let after = sim.copy_state().unwrap();
    let rows = sim.drain_telemetry();
    assert_eq!(rows.len(), 3);
    let mc = rows.last().unwrap().mc;
    assert_eq!((mc.trials, mc.accepted), (3, 0), "dt = 0.03 from a cold lattice must be rejected");
    assert_eq!(after.step, 45);
    assert!((after.time - 45.0 * 0.03).abs() < 1e-12);
    assert_eq!(after.atoms.positions, before.atoms.positions, "{kind:?} {precision:?}: positions not restored exactly");
    // The chain's record is the restored state's energy, not the rejected trajectory's.
    let e0 = sim.measure().unwrap();
    assert!((rows[2].pair_energy - e0.pair_energy).abs() <= 1e-9 * e0.pair_energy.abs());
}

#[test]
fn hmc_nvt_matches_jzg_and_md_fluctuations_cpu() {
    nvt_against_jzg(Kind::Cpu, Precision::Double);
}

#[test]
fn hmc_nvt_matches_jzg_cuda() {
    if gpu() {
        nvt_against_jzg(Kind::Cuda, Precision::Single);
        nvt_against_jzg(Kind::Cuda, Precision::Double);
    }
}

#[test]
fn hmc_npt_density_matches_jzg_cpu() {
    npt_against_jzg(Kind::Cpu);
}

#[test]
fn hmc_npt_density_matches_jzg_cuda() {
    if gpu() {
        npt_against_jzg(Kind::Cuda);
    }
}

#[test]
fn rejected_trajectories_restore_the_saved_state_bit_for_bit() {
    for p in [Precision::Single, Precision::Mixed, Precision::Double] {
        rejection_restores_exactly(Kind::Cpu, p);
    }
    if gpu() {
        for p in [Precision::Single, Precision::Double] {
            rejection_restores_exactly(Kind::Cuda, p);
        }
    }
}

#[test]
fn cycles_split_over_advance_calls_give_the_same_chain() {
    let (b, atoms) = lattice_system(LatticeKind::Fcc, 0.6, [4; 3], 1.5, 4);
    let params = hmc_params(1.5, Thermostat::Hmc { trajectory: 12 }, 12);
    let mut whole = cpu(b, params.clone(), &atoms);
    let mut split = cpu(b, params, &atoms);
    whole.advance(120).unwrap();
    for k in [7, 5, 13, 1, 30, 64] {
        split.advance(k).unwrap();
    }
    assert_eq!(whole.step(), 120);
    assert_eq!(split.step(), 120);
    let (a, c) = (whole.copy_state().unwrap(), split.copy_state().unwrap());
    assert_eq!(a.atoms.positions, c.atoms.positions);
    let (ta, tc) = (whole.drain_telemetry(), split.drain_telemetry());
    assert_eq!(ta.len(), 10);
    assert_eq!(
        ta.iter().map(|t| (t.step, t.mc)).collect::<Vec<_>>(),
        tc.iter().map(|t| (t.step, t.mc)).collect::<Vec<_>>()
    );
}

#[test]
fn acceptance_tends_to_one_as_the_time_step_shrinks() {
    let (b, atoms) = lattice_system(LatticeKind::Fcc, 0.7, [4; 3], 1.5, 6);
    let mut rates = Vec::new();
    for dt in [0.012, 0.006, 0.0015] {
        // Shifted, so the Hamiltonian is continuous and dH comes from the integrator alone.
        let params = SimParams { dt, shift: true, ..hmc_params(1.5, Thermostat::Hmc { trajectory: 10 }, 10) };
        let mut sim = cpu(b, params, &atoms);
        sim.advance(3_000).unwrap();
        let mc = sim.drain_telemetry().last().unwrap().mc;
        rates.push(mc.acceptance().unwrap());
    }
    println!("acceptance at dt 0.012 / 0.006 / 0.0015: {rates:?}");
    assert!(rates[0] < rates[1] && rates[1] <= rates[2], "{rates:?}");
    assert!(rates[2] > 0.98, "{rates:?}");
}

#[test]
fn npt_refuses_a_walled_box_with_a_clear_message() {
    let (b, atoms) = lattice_system(LatticeKind::Fcc, 0.5, [3; 3], 1.0, 1);
    let walled = SimBox { periodic: [true, false, true], ..b };
    let params = hmc_params(1.0, Thermostat::HmcNpt { trajectory: 10, pressure: 1.0, max_dlnv: 0.02 }, 10);
    let err = argon_sandbox::sim::cpu::CpuBackend::new(walled, params.clone(), &atoms, None).err().expect("refused");
    let msg = err.to_string();
    assert!(msg.contains("thermostat") && msg.contains("periodic") && msg.contains("piston"), "{msg}");
    let bad = SimParams { thermostat: Thermostat::Hmc { trajectory: 0 }, ..params.clone() };
    let msg = bad.validate(&b).unwrap_err().to_string();
    assert!(msg.contains("thermostat.trajectory"), "{msg}");
    // The chain's energy has no piston terms: hybrid Monte Carlo under a piston is refused.
    let pushed = SimParams {
        thermostat: Thermostat::Hmc { trajectory: 10 },
        piston: Some(argon_sandbox::physics::piston::PistonParams::default()),
        ..params
    };
    let msg = pushed.validate(&walled).unwrap_err().to_string();
    assert!(msg.contains("piston") && msg.contains("Monte Carlo"), "{msg}");
}
