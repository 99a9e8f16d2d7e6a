//! Helpers shared by the integration tests: building small systems and reading validation data.
#![allow(dead_code)]

pub mod blowup;
pub mod cpu_paths;
pub mod dye;
pub mod mixture;
pub mod python;
pub mod soak;

use argon_sandbox::physics::init::{LatticeKind, lattice_box, maxwell_boltzmann};
use argon_sandbox::physics::params::{Algorithm, SimParams};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomState, Backend, Snapshot};

pub use argon_sandbox::io::validation_dir;

/// A fresh, empty scratch folder named after `tag` and this process.
pub fn temp_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("argon-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(validation_dir().join("lammps_reference.json")).expect("validation data");
    serde_json::from_str(&text).expect("json")
}

pub fn at_rest(positions: Vec<[f64; 3]>) -> AtomState {
    let n = positions.len();
    AtomState { positions, velocities: vec![[0.0; 3]; n], types: vec![0; n], ..Default::default() }
}

/// A lattice with Maxwell-Boltzmann velocities at `t`.
pub fn lattice_system(kind: LatticeKind, density: f64, cells: [usize; 3], t: f64, seed: u64) -> (SimBox, AtomState) {
    let (b, pos) = lattice_box(kind, density, cells);
    let n = pos.len();
    let v = maxwell_boltzmann(&vec![1.0; n], t, 3.0 * n as f64 - 3.0, seed, 0);
    (b, AtomState { positions: pos, velocities: v, types: vec![0; n], ..Default::default() })
}

pub fn cpu(b: SimBox, params: SimParams, atoms: &AtomState) -> CpuBackend {
    CpuBackend::new(b, params, atoms, None).expect("backend")
}

pub fn params(algorithm: Algorithm, precision: Precision, shift: bool) -> SimParams {
    SimParams { algorithm, precision, shift, ..SimParams::default() }
}

pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

pub fn measure(b: &mut dyn Backend) -> argon_sandbox::sim::Telemetry {
    b.measure().expect("measure")
}

/// FCC sites at density 0.8 filling whole lattice cells (so no two atoms meet across a
/// periodic boundary), jiggled by up to `amp` per axis, with Maxwell-Boltzmann velocities at
/// T = 1.2. `cells` sets the box; `walls` marks walled axes, whose sites keep 0.9 sigma from
/// the walls (the box grows by 1.8 there); atoms closer than 0.9 to an obstacle are dropped.
pub fn jiggled_fluid(
    cells: [usize; 3],
    walls: [bool; 3],
    amp: f64,
    shapes: &[argon_sandbox::shapes::Shape],
    seed: u64,
) -> (SimBox, AtomState) {
    use argon_sandbox::rng::{Sequence, Stream};
    let a = LatticeKind::Fcc.constant(0.8);
    let size: [f64; 3] = std::array::from_fn(|k| cells[k] as f64 * a + if walls[k] { 1.8 } else { 0.0 });
    let b = SimBox::new(size, std::array::from_fn(|k| !walls[k]));
    let origin: [f64; 3] = std::array::from_fn(|k| if walls[k] { 0.9 } else { 0.0 });
    let hi: [f64; 3] = std::array::from_fn(|k| origin[k] + cells[k] as f64 * a);
    let mut rng = Sequence::new(seed, Stream::GasPlacement, 7, 0);
    let pos: Vec<[f64; 3]> = argon_sandbox::physics::init::lattice_sites(LatticeKind::Fcc, 0.8, origin, origin, hi)
        .into_iter()
        .filter(|p| shapes.iter().all(|s| s.signed_distance([p[0], p[1]]) > 0.9))
        .map(|p| b.wrap(std::array::from_fn(|k| p[k] + amp * (2.0 * rng.uniform() - 1.0))))
        .collect();
    let n = pos.len();
    let v = maxwell_boltzmann(&vec![1.0; n], 1.2, 3.0 * n as f64, seed, 0);
    (b, AtomState { positions: pos, velocities: v, types: vec![0; n], ..Default::default() })
}

#[allow(unused_imports)]
pub use argon_sandbox::analysis::tail::{p_tail, u_tail};

/// [`argon_sandbox::analysis::blocks::block_mean_sem`], which must have enough samples here.
pub fn block_mean_sem(xs: &[f64], n_blocks: usize) -> (f64, f64) {
    argon_sandbox::analysis::blocks::block_mean_sem(xs, n_blocks)
        .unwrap_or_else(|| panic!("{} samples in {n_blocks} blocks", xs.len()))
}

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// One row of `jzg1993_eos.csv`.
#[derive(Clone, Copy, Debug)]
pub struct JzgRow {
    pub t: f64,
    pub rho: f64,
    pub p: f64,
    pub u_per_n: f64,
    pub p_tail: f64,
    pub u_tail: f64,
}

/// All rows of the Johnson-Zollweg-Gubbins table (comment lines start with '#').
pub fn jzg_table() -> Vec<JzgRow> {
    let path = argon_sandbox::io::validation_dir().join("jzg1993_eos.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("csv header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
    let (ct, cr, cp, cu, cpt, cut) =
        (col("T"), col("rho"), col("P"), col("U_per_N"), col("P_tail_rc2.5"), col("u_tail_rc2.5"));
    lines
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.trim().parse().expect("number")).collect();
            JzgRow { t: v[ct], rho: v[cr], p: v[cp], u_per_n: v[cu], p_tail: v[cpt], u_tail: v[cut] }
        })
        .collect()
}

/// Sum of |m v| over all atoms (unit masses unless `masses` says otherwise per type).
pub fn momentum_scale(atoms: &AtomState, masses: &[f64]) -> f64 {
    atoms
        .velocities
        .iter()
        .zip(&atoms.types)
        .map(|(v, &t)| masses[t as usize] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
        .sum()
}

/// -dE/dx of atom `i` along axis `k` by central differences of step `h` around `base`
/// (restores each displaced state into `sim`; the caller restores `base` if it continues).
pub fn numeric_force(sim: &mut dyn Backend, base: &Snapshot, i: usize, k: usize, h: f64) -> f64 {
    let mut energy = [0.0; 2];
    for (s, sign) in [-1.0, 1.0].iter().enumerate() {
        let mut snap = base.clone();
        snap.atoms.positions[i][k] += sign * h;
        sim.restore(&snap).unwrap();
        energy[s] = sim.measure().unwrap().potential_energy();
    }
    -(energy[1] - energy[0]) / (2.0 * h)
}

/// True when a CUDA device is usable; otherwise says `skipped: no CUDA device` and why.
pub fn gpu() -> bool {
    match argon_sandbox::sim::cuda::device::open() {
        Ok(_) => true,
        Err(why) => {
            eprintln!("skipped: no CUDA device ({why})");
            false
        }
    }
}

/// Runs the app's binary (`ARGON_BIN` where set, as on the GPU machine) with `args`.
pub fn run_binary(args: &[&str]) -> std::process::Output {
    std::process::Command::new(
        std::env::var("ARGON_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_argon-sandbox").to_string()),
    )
    .args(args)
    .output()
    .expect("the binary runs")
}

/// A finished command's stdout then stderr, as text.
pub fn output_text(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The first `bytes` of a wgpu buffer (COPY_SRC) of the offscreen renderer's device, read back.
pub fn read_gpu_buffer(gpu: &argon_sandbox::render::offscreen::Gpu, buffer: &wgpu::Buffer, bytes: u64) -> Vec<u8> {
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test readback"),
        size: bytes,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
    gpu.queue.submit(Some(enc.finish()));
    let slice = staging.slice(..);
    slice.map_async(wgpu::MapMode::Read, |r| r.expect("mapping the read-back buffer"));
    gpu.device.poll(wgpu::PollType::wait_indefinitely()).expect("waiting for the read-back");
    let out = slice.get_mapped_range().expect("the mapped read-back").to_vec();
    staging.unmap();
    out
}

/// True when wgpu opens an adapter; otherwise says `skipped: no wgpu adapter` (a failure
/// under ARGON_REQUIRE_RENDER=1).
#[allow(dead_code)]
pub fn wgpu_adapter() -> bool {
    match argon_sandbox::sim::gpu::device::open() {
        Ok(_) => true,
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            eprintln!("skipped: no wgpu adapter ({e})");
            false
        }
    }
}

/// True when wgpu opens an adapter with 64-bit floats in shaders; otherwise says why the
/// test is skipped.
#[allow(dead_code)]
pub fn wgpu_f64_adapter() -> bool {
    if !wgpu_adapter() {
        return false;
    }
    match argon_sandbox::sim::gpu::device::open().map(|d| d.f64_missing().map(|w| w.to_string())) {
        Ok(None) => true,
        Ok(Some(why)) => {
            eprintln!("skipped: adapter has no SHADER_F64 ({why})");
            false
        }
        Err(e) => {
            eprintln!("skipped: no wgpu adapter ({e})");
            false
        }
    }
}
