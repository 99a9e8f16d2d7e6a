//! The thermal temperature (`Telemetry::thermal`: the motion relative to the local mean flow
//! over the thermostat's bins) beside the ordinary one, whenever a run has a wind tunnel or a
//! thermostat relative to the flow:
//! (a) the twin-eddies scene on the CPU (after a warm-up that melts its lattice): the thermal
//!     temperature holds the target while the all-motion one is above it by the stream's
//!     share, checked against the stream's share computed from the record's momentum alone;
//! (b) `run --thermo`: the `temp_thermal` / `thermal_temperature_K` column in those runs (a
//!     tunnel, a thermostat relative to the flow without one) and exactly the old columns in
//!     others, and the printed summary names the thermal temperature;
//! (c) CUDA against the CPU in double precision (graphs and kernel by kernel): the same thermal
//!     temperatures record by record and in a measure, for a tunnel under a thermostat relative
//!     to the flow, under NVE and under a plain Berendsen, and for a thermostat relative to the
//!     flow without a tunnel (skipped without a CUDA device);
//! (d) the app's Temperature panel labels the thermal temperature while a tunnel runs, with
//!     the all-motion one beside it, and the T(t) plot has both series; without a flow it
//!     reads "Now: ..." as before.

mod app_common;
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use argon_sandbox::io::thermo::{ARGON_COLUMNS, LJ_COLUMNS, read_thermo_csv};
use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::tunnel::Tunnel;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{Backend, Telemetry};
use common::{gpu, jiggled_fluid, rel, temp_dir};

/// The twin-eddies scene: after a warm-up, its thermal temperature is within 5% of the
/// target (the thermostat relative to the flow holds it there), while the all-motion
/// temperature is above it by the stream's share, about U^2/3 = 2.25 epsilon/k_B at U = 2.6.
///
/// The warm-up: the scene starts from a lattice, which melts in the first 50 steps and takes
/// half the kinetic energy into potential energy (the thermal T* dips from 3.0 to 2.5), and
/// the scene's own coupling (tau 2) needs about 1,000 steps to bring it back; 200 steps at a
/// coupling of 0.1 tau do it, then 300 steps run with the scene's settings.
///
/// The share is checked against one computed from the record's momentum P alone (not from
/// the bins): T_all dof = 2 K_th + F with F = sum_b |P_b|^2 / M_b, and F = sum_b M_b |u_b|^2
/// (the mean flow) plus each bin's sampling noise, 3 T on average, which the thermal degrees
/// of freedom (3 per occupied bin fewer) take out; so T_all - T_th is the mean flow's
/// sum_b M_b |u_b|^2 / dof, to the noise of F (T sqrt(6 N_bins) / dof = 0.004 here, 0.2%).
/// By Cauchy-Schwarz that is at least |P|^2 / (M dof), the share of a uniform stream at the
/// fluid's mean velocity P / M; it exceeds it by the spread of the bins' mean velocities about
/// that mean, sum_b M_b |u_b - P/M|^2 / dof: round a cylinder of radius a in potential flow
/// (velocity deficit U a^2 / r^2) that is pi a^2 U^2 over the tank's area, 1.6% of the
/// stream's share here, doubled for the blockage (the fluid beside the cylinder speeds up in
/// a channel 5 D wide) and the young wake, so the bound is 1.00 - 0.01 (noise) to 1.05. A
/// thermal temperature over the wrong degrees of freedom (3 N, the bins not taken out) would
/// read 7.5% high and miss both bounds.
#[test]
fn twin_eddies_thermal_temperature_holds_the_target_and_the_stream_is_not_heat() {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/twin_eddies.ron");
    let setup = argon_sandbox::scene::load_setup(Some(&scene)).expect("the twin-eddies scene");
    let field = ObstacleField::bake(&setup.shapes, &setup.sim_box, 0.1).map(Arc::new);
    let params = SimParams { telemetry_every: 50, ..setup.params.clone() };
    assert_eq!(params.thermostat, Thermostat::Csvr { tau: 2.0, relative_to_flow: true });
    let target = params.temperature;
    let speed = params.tunnel.expect("the scene has a tunnel").speed;
    let masses: f64 = setup.atoms.types.iter().map(|&t| params.species[t as usize].mass).sum();
    let warm_up = SimParams { thermostat: Thermostat::Csvr { tau: 0.1, relative_to_flow: true }, ..params.clone() };
    let mut sim = CpuBackend::new(setup.sim_box, warm_up, &setup.atoms, field).expect("backend");
    let start = std::time::Instant::now();
    let first = sim.measure().expect("measure");
    sim.advance(200).expect("warm-up");
    sim.drain_telemetry();
    sim.set_params(params).expect("the scene's parameters");
    sim.advance(300).expect("advance");
    let records: Vec<Telemetry> = std::iter::once(first).chain(sim.drain_telemetry()).collect();
    eprintln!("{} atoms, 500 steps in {:.1} s", sim.n_atoms(), start.elapsed().as_secs_f64());
    assert_eq!(records.len(), 7, "a measure at the start and a record every 50 steps after the warm-up");
    for t in &records {
        let th = t.thermal.unwrap_or_else(|| panic!("step {}: no thermal temperature with a tunnel", t.step));
        let share = t.temperature - th.temperature;
        let p2: f64 = t.momentum.iter().map(|p| p * p).sum();
        let uniform = p2 / masses / t.dof;
        eprintln!(
            "step {:3}: thermal T* {:.4} (target {target:.4}), all motion {:.4}, share {share:.4}; uniform stream \
             at P/M = {:.4}: {uniform:.4} (U^2/3 = {:.4}), ratio {:.4}; {} bins",
            t.step,
            th.temperature,
            t.temperature,
            t.momentum[0] / masses,
            speed * speed / 3.0,
            share / uniform,
            th.occupied_bins
        );
        assert!(
            rel(th.temperature, target) < 0.05,
            "step {}: thermal T* {} vs target {target}",
            t.step,
            th.temperature
        );
        assert!(t.temperature > 1.5 * target, "step {}: all-motion T* {} counts no stream", t.step, t.temperature);
        // The fluid streams at about U (the zone keeps it there; the cylinder's drag slows it
        // a little): the uniform stream's share is about U^2/3 of the atoms' 3 dof each.
        assert!(rel(uniform, speed * speed * masses / t.dof) < 0.1, "step {}: P/M far from U", t.step);
        assert!(
            share > 0.99 * uniform && share < 1.05 * uniform,
            "step {}: all-motion minus thermal {share} vs the uniform stream's share {uniform}",
            t.step
        );
    }
}

/// A small periodic tunnel scene (512 atoms at rho 0.8, T* 1.2) with `thermostat` and the
/// tunnel (U = 0.8) or not.
fn small_scene(dir: &Path, name: &str, thermostat: &str, tunnel: bool) -> PathBuf {
    let tunnel = if tunnel { "tunnel: (speed: 0.8, zone: 3.0)," } else { "" };
    let text = format!(
        "(\n    version: 1,\n    name: \"{name}\",\n    box: (size: (13.68, 6.84, 6.84), boundaries: (Periodic, \
         Periodic, Periodic)),\n    temperature_k: 143.76,\n    thermostat: {thermostat},\n    atoms: \
         [Lattice(kind: Fcc, density: 0.8)],\n    {tunnel}\n)\n"
    );
    let path = dir.join(format!("{name}.ron"));
    std::fs::write(&path, text).unwrap();
    path
}

fn run_cli(scene: &Path, csv: &Path, units: &str) -> String {
    // `ARGON_BIN` where set, as on the GPU machine (where the build's path does not exist).
    let bin = std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string());
    let out = Command::new(bin)
        .args(["run", scene.to_str().unwrap(), "--steps", "200", "--thermo-every", "50", "--backend", "cpu"])
        .args(["--units", units, "--thermo", csv.to_str().unwrap()])
        .output()
        .expect("the binary runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn run_thermo_has_the_thermal_column_in_flows_and_only_there() {
    let dir = temp_dir("thermal-cli");
    let cases = [
        ("tunnel_nve", "Nve", true, true),
        ("tunnel_relative", "Csvr(tau: 0.5, relative_to_flow: true)", true, true),
        ("relative_only", "Csvr(tau: 0.5, relative_to_flow: true)", false, true),
        ("plain", "Csvr(tau: 0.5)", false, false),
    ];
    for (name, thermostat, tunnel, thermal) in cases {
        let scene = small_scene(&dir, name, thermostat, tunnel);
        for (units, columns, column, temp) in [
            ("lj", &LJ_COLUMNS[..], "temp_thermal", "temp"),
            ("argon", &ARGON_COLUMNS[..], "thermal_temperature_K", "temperature_K"),
        ] {
            let csv = dir.join(format!("{name}_{units}.csv"));
            let printed = run_cli(&scene, &csv, units);
            let header = std::fs::read_to_string(&csv).unwrap().lines().next().unwrap().to_string();
            let mut want: Vec<&str> = columns.to_vec();
            if thermal {
                // Right after the temperature.
                let at = want.iter().position(|c| *c == temp).unwrap() + 1;
                want.insert(at, column);
            }
            assert_eq!(header, want.join(","), "{name} ({units})");
            let rows = read_thermo_csv(&csv).unwrap();
            assert_eq!(rows.len(), 5, "{name} ({units}): rows at 0, 50, .. 200");
            for r in &rows {
                let t = r.get(temp).unwrap();
                match r.get(column) {
                    Some(th) if tunnel => {
                        // The stream U = 0.8 carries U^2/3 = 0.21 epsilon/k_B (25.6 K) of
                        // all-motion temperature that is not heat.
                        let share = (t - th) / if units == "lj" { 1.0 } else { 119.8 };
                        assert!(th.is_finite() && share > 0.1 && share < 0.3, "{name} step {}: {t} vs {th}", r.step);
                    }
                    Some(th) => assert!(th.is_finite() && th > 0.0, "{name} step {}: {th}", r.step),
                    None => assert!(!thermal, "{name}: no {column}"),
                }
            }
            // The summary line names the thermal temperature in a flow, and only there.
            let summary = printed.lines().find(|l| l.starts_with("step 200:")).unwrap_or_else(|| panic!("{printed}"));
            assert_eq!(summary.contains("thermal T"), thermal, "{name} ({units}): {summary}");
        }
    }
    std::fs::remove_dir_all(dir).ok();
}

/// The CPU's and the CUDA backend's thermal temperatures in double precision from the same
/// start: record by record (every 10 steps for 50 steps, as graphs and kernel by kernel) and
/// in a measure at the end, to 1e-9 relative: the bound `tunnel_matches_the_cpu` (tests/cuda.rs)
/// holds the records' kinetic energy to over the same 50 steps of the same fluid, and the
/// thermal kinetic energy is that minus the bins' flow sums (fixed point on the device, to
/// 2^-36 per atom), at least 90% of it here.
#[test]
fn cuda_thermal_temperature_matches_the_cpu() {
    use argon_sandbox::sim::cuda::CudaBackend;
    if !gpu() {
        return;
    }
    let (b, mut atoms) = jiggled_fluid([8, 4, 4], [false; 3], 0.05, &[], 3);
    for v in atoms.velocities.iter_mut() {
        v[0] += 0.5;
    }
    let tunnel = Some(Tunnel { speed: 0.5, zone: 4.0, start_spin: None });
    for (thermostat, tunnel) in [
        (Thermostat::Csvr { tau: 0.1, relative_to_flow: true }, tunnel),
        (Thermostat::Nve, tunnel),
        (Thermostat::Berendsen { tau: 0.1, relative_to_flow: false }, tunnel),
        (Thermostat::Csvr { tau: 0.1, relative_to_flow: true }, None),
    ] {
        let p = SimParams {
            thermostat,
            temperature: 1.2,
            tunnel,
            precision: Precision::Double,
            telemetry_every: 10,
            seed: 11,
            ..SimParams::default()
        };
        let what = format!("{thermostat:?}, tunnel {}", tunnel.is_some());
        let mut cpu = CpuBackend::new(b, p.clone(), &atoms, None).unwrap();
        let mut graphs = CudaBackend::new(b, p.clone(), &atoms, None).unwrap();
        let mut plain = CudaBackend::new(b, p, &atoms, None).unwrap();
        plain.set_step_graphs(false);
        let mut records: Vec<Vec<Telemetry>> = Vec::new();
        for s in [&mut cpu as &mut dyn Backend, &mut graphs, &mut plain] {
            let mut r = vec![s.measure().unwrap()];
            s.advance(50).unwrap();
            r.extend(s.drain_telemetry());
            r.push(s.measure().unwrap());
            records.push(r);
        }
        let thermal = |t: &Telemetry| t.thermal.unwrap_or_else(|| panic!("{what} step {}: no thermal", t.step));
        for gpu in &records[1..] {
            assert_eq!(gpu.len(), records[0].len(), "{what}");
            for (x, y) in records[0].iter().zip(gpu) {
                let (tx, ty) = (thermal(x), thermal(y));
                eprintln!(
                    "{what} step {}: thermal T CPU {:.10} GPU {:.10} ({} / {} bins), all motion {:.6}",
                    x.step, tx.temperature, ty.temperature, tx.occupied_bins, ty.occupied_bins, x.temperature
                );
                assert_eq!((x.step, tx.occupied_bins), (y.step, ty.occupied_bins), "{what}");
                assert!(
                    rel(ty.temperature, tx.temperature) < 1e-9,
                    "{what} step {}: thermal T {} vs CPU {}",
                    x.step,
                    ty.temperature,
                    tx.temperature
                );
                assert!(rel(y.temperature, x.temperature) < 1e-9, "{what} step {}", x.step);
            }
        }
        // The stream (0.5 along x, kept by the zone or by the thermostat relative to the flow)
        // is in the all-motion temperature and not in the thermal one.
        let last = records[0].last().unwrap();
        assert!(last.temperature - thermal(last).temperature > 0.04, "{what}: {last:?}");
    }
}

/// The Temperature panel while a tunnel runs: the thermal temperature is what it reads, under
/// its label, the all-motion one beside it; the T(t) plot has both series.
#[test]
fn the_temperature_panel_labels_the_thermal_temperature_while_a_tunnel_runs() {
    use app_common::{harness_of, loaded, until};
    use argon_sandbox::app::settings::Settings;
    use argon_sandbox::app::{App, AppOptions};
    use argon_sandbox::sim::BackendChoice;
    use argon_sandbox::ui::temperature::{ALL_MOTION_LABEL, THERMAL_LABEL};
    use egui_kittest::kittest::Queryable;
    let dir = temp_dir("thermal-ui");
    let scene = small_scene(&dir, "tunnel", "Csvr(tau: 0.5, relative_to_flow: true)", true);
    let app = App::new(AppOptions {
        scene: Some(scene),
        backend: Some(BackendChoice::Cpu),
        settings: Some(Settings::default()),
        ..Default::default()
    });
    let mut h = harness_of(app, [1400.0, 1300.0]);
    loaded(&mut h);
    until(&mut h, 60.0, "telemetry with a thermal temperature", |a| {
        a.last_telemetry.as_ref().is_some_and(|t| t.thermal.is_some()) && a.plots.thermal_k.points.len() >= 2
    });
    h.step();
    let t = h.state().last_telemetry.clone().unwrap();
    let thermal_k = t.thermal.unwrap().temperature * 119.8;
    let all_k = t.temperature * 119.8;
    eprintln!("thermal {thermal_k:.1} K, all motion {all_k:.1} K");
    // The stream U = 0.8 adds U^2/3 epsilon/k_B = 25.6 K to the all-motion temperature only.
    assert!(all_k - thermal_k > 10.0, "thermal {thermal_k} K, all motion {all_k} K");
    // The labels carry the values shown (the panel may have drawn a newer record than the one
    // read above, so only the labels' start is matched).
    h.get_by_label_contains(&format!("{THERMAL_LABEL}: "));
    h.get_by_label_contains(&format!("{ALL_MOTION_LABEL}: "));
    assert!(h.query_by_label_contains("Now: ").is_none(), "the plain reading is shown in a flow");
    let p = &h.state().plots;
    assert!(p.thermal_k.points.len() >= 2 && p.temperature_k.points.len() >= p.thermal_k.points.len());
    std::fs::remove_dir_all(dir).ok();
}

/// Without a flow the panel reads "Now: ..." as before, and nothing is labelled thermal.
#[test]
fn the_temperature_panel_reads_as_before_without_a_flow() {
    use app_common::{app_on, harness_of, loaded, until};
    use argon_sandbox::sim::BackendChoice;
    use argon_sandbox::ui::temperature::THERMAL_LABEL;
    use egui_kittest::kittest::Queryable;
    let mut h = harness_of(app_on(BackendChoice::Cpu, false, 2000), [1400.0, 1300.0]);
    loaded(&mut h);
    until(&mut h, 60.0, "telemetry", |a| a.last_telemetry.is_some());
    h.step();
    assert!(h.state().last_telemetry.as_ref().unwrap().thermal.is_none());
    h.get_by_label_contains("Now: ");
    assert!(h.query_by_label_contains(THERMAL_LABEL).is_none());
    assert!(h.state().plots.thermal_k.points.is_empty());
}
