//! `bench` (the default mode): step rate of the LAMMPS `in.lj` system (fcc rho* = 0.8442,
//! T* = 1.44, r_c = 2.5, skin 0.3), or of a scene with `--scene`, over the backends,
//! algorithms, precisions, block sizes and sizes given. Prints a table, and with `--json` one
//! JSON object per case per line.
//!
//! `pair_interactions_per_s`: for all-pairs algorithms, N^2 per step (the effective rate the
//! seed paper and OpenMM quote); for cell and neighbour lists, the ordered pairs inside the
//! cutoff, N * rho * (4/3) pi r_c^3, per step.
//!
//! Each case also names the path that ran: the backend's device (for the CPU, its threads
//! and SIMD level) and how it found the pairs (`Backend::pair_search`: on the CPU,
//! the cluster-pair list or the per-atom neighbour list).
//!
//! With `--dye`, the dye a fluids demo adds (`common::bench_dye`: a tagged quarter of the
//! atoms and a rake across the box), so a run with and without gives its cost.
//!
//! And what the system costs in memory per atom: on the device, the bytes of the backend's
//! arrays after the timed steps (`Backend::device_bytes`: state, lists, cells, scratch,
//! backups; CUDA only), and on the host, the peak resident memory of building, uploading and
//! running the case above what the process held before it (the first case of a run also
//! carries one-time costs such as the CUDA context and the compiled kernels).

use std::time::Instant;

use anyhow::{Context, Result};
use clap::ValueEnum;

use super::common::{
    BenchArgs, bench_dye, in_lj_params, in_lj_system, median, peak_rss_mb, reset_peak_rss, rss_bytes, scene_setup,
};
use crate::cli::measure::Quantity;
use crate::flow::FieldSpec;
use crate::physics::params::{Algorithm, SimParams};
use crate::sim::{BackendChoice, open_backend};

pub fn run(args: &BenchArgs) -> Result<()> {
    if args.steps == 0 || args.repeats == 0 {
        anyhow::bail!("--steps and --repeats must be at least 1");
    }
    if !args.json {
        println!(
            "{:<6} {:<16} {:<7} {:>5} {:>5} {:>9} {:>7} {:>10} {:>10} {:>14} {:>14} {:>8} {:>8}  path",
            "backend",
            "algorithm",
            "prec",
            "block",
            "skin",
            "atoms",
            "steps",
            "ms/step",
            "min ms",
            "atom-steps/s",
            "pairs/s",
            "dev B/at",
            "host B/at"
        );
    }
    // What is measured while timing (--transport), by its flag value.
    let transport = args.transport.and_then(|q| q.to_possible_value()).map(|v| v.get_name().to_string());
    // The skins asked, or None: each system's own.
    let skins: Vec<Option<f64>> = match &args.skin {
        Some(v) => v.iter().map(|&s| Some(s)).collect(),
        None => vec![None],
    };
    let (mut measured, mut skipped) = (0usize, Vec::new());
    // Why the wgpu backend's adapter has no 64-bit floats (asked once, when a case needs it).
    let wgpu_f64 = std::cell::OnceCell::new();
    for &n_req in &args.sizes {
        for &backend in &args.backend {
            for &algorithm in &args.algorithm {
                for &precision in &args.precision {
                    let blocks: Vec<u32> =
                        if backend == BackendChoice::Cpu { vec![args.block_size[0]] } else { args.block_size.clone() };
                    for (&block_size, skin) in blocks.iter().flat_map(|b| skins.iter().map(move |s| (b, *s))) {
                        let params = SimParams {
                            telemetry_every: args.steps.max(1),
                            ..in_lj_params(algorithm, precision, block_size)
                        };
                        reset_peak_rss();
                        let rss0 = rss_bytes();
                        // Built per case and dropped once uploaded, so peak memory is the backend's.
                        let (sim_box, params, atoms, field) = match &args.scene {
                            None => {
                                let (sim_box, atoms) = in_lj_system(n_req);
                                (sim_box, params, atoms, None)
                            }
                            Some(which) => {
                                let setup = scene_setup(which, n_req)?;
                                let params = SimParams {
                                    algorithm,
                                    precision,
                                    block_size,
                                    telemetry_every: setup.params.telemetry_every.min(args.steps.max(1)),
                                    ..setup.params
                                };
                                let field =
                                    crate::physics::obstacles::ObstacleField::bake(&setup.shapes, &setup.sim_box, 0.1)
                                        .map(std::sync::Arc::new);
                                (setup.sim_box, params, setup.atoms, field)
                            }
                        };
                        let params = SimParams { skin: skin.unwrap_or(params.skin), ..params };
                        let (mut atoms, mut rakes) = (atoms, Vec::new());
                        if args.dye {
                            rakes.push(bench_dye(&sim_box, &mut atoms));
                        }
                        params.validate(&sim_box).map_err(|e| anyhow::anyhow!("--skin: {e}"))?;
                        let n = atoms.len();
                        // A case the wgpu backend does not run (mixed or double precision on an
                        // adapter without 64-bit floats, a piston) is skipped with the reason, so
                        // `--backend wgpu` measures what it runs.
                        let f64_missing = || -> Option<&str> {
                            (precision != crate::physics::real::Precision::Single)
                                .then(|| {
                                    wgpu_f64.get_or_init(|| crate::sim::gpu::device::f64_missing_on(None)).as_deref()
                                })
                                .flatten()
                        };
                        if backend == BackendChoice::Wgpu
                            && let Some(why) = crate::sim::gpu::unsupported(&params, f64_missing())
                        {
                            if args.json {
                                println!(
                                    "{}",
                                    serde_json::json!({"backend": "wgpu", "precision": precision.name(), "n": n, "skipped": why})
                                );
                            } else {
                                println!("wgpu   {:<16} {:<7} skipped: {why}", algorithm.name(), precision.name());
                            }
                            skipped.push(why);
                            continue;
                        }
                        measured += 1;
                        let (mut sim, _why) = open_backend(backend, sim_box, params, &atoms, field)
                            .with_context(|| format!("opening the {backend:?} backend"))?;
                        drop(atoms);
                        sim.set_dye_rakes(&rakes).context("--dye")?;
                        if let Some(every) = args.field_every {
                            let spec = FieldSpec { every, ..FieldSpec::default() };
                            sim.set_fields(Some(spec)).context("--field-every")?;
                        }
                        if let Some(q) = args.transport {
                            let dt = sim.params().dt;
                            let spec = match q {
                                Quantity::Diffusion => crate::transport::plan::diffusion(dt, 20.0),
                                Quantity::Viscosity => crate::transport::plan::viscosity(dt),
                            };
                            sim.set_transport(Some(spec)).map_err(|e| anyhow::anyhow!("--transport: {e}"))?;
                        }
                        let info = sim.info();
                        sim.advance(args.warmup).context("warm-up steps")?;
                        let mut times = Vec::with_capacity(args.repeats);
                        for _ in 0..args.repeats {
                            let t0 = Instant::now();
                            sim.advance(args.steps).context("timed steps")?;
                            // The records cross to the host, as a measurement takes them.
                            sim.take_transport().context("taking transport records")?;
                            times.push(t0.elapsed().as_secs_f64() / args.steps as f64);
                        }
                        let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
                        // Memory per atom: the device arrays, and the host's peak above what
                        // the process held before the case.
                        let dev_bytes = sim.device_bytes().map(|b| b as f64 / n as f64);
                        let host_bytes = match (rss0, peak_rss_mb()) {
                            (Some(r0), Some(peak)) => Some((peak * 1048576.0 - r0).max(0.0) / n as f64),
                            _ => None,
                        };
                        let used_skin = sim.params().skin;
                        let per_step = median(times);
                        let resolved = algorithm.resolve(n, &sim_box, 2.8, 2.5);
                        let pairs_per_step = match resolved {
                            Algorithm::AllPairsGlobal | Algorithm::AllPairsTiled => (n as f64) * (n as f64),
                            _ => n as f64 * 0.8442 * 4.0 / 3.0 * std::f64::consts::PI * 2.5f64.powi(3),
                        };
                        let search = sim.pair_search();
                        let atom_steps = n as f64 / per_step;
                        let pairs = pairs_per_step / per_step;
                        if args.json {
                            let obj = serde_json::json!({
                                "backend": info.kind,
                                "device": info.device,
                                "algorithm": resolved.name(),
                                "pair_search": search,
                                "precision": precision.name(),
                                "n": n,
                                "steps": args.steps,
                                "repeats": args.repeats,
                                "block_size": block_size,
                                "threads": rayon::current_num_threads(),
                                "ms_per_step": per_step * 1e3,
                                "min_ms_per_step": fastest * 1e3,
                                "atom_steps_per_s": atom_steps,
                                "pair_interactions_per_s": pairs,
                                "peak_rss_mb": peak_rss_mb(),
                                "field_every": args.field_every,
                                "transport": transport,
                                "skin": used_skin,
                                "dye": args.dye,
                                "device_bytes_per_atom": dev_bytes,
                                "host_bytes_per_atom": host_bytes,
                            });
                            println!("{obj}");
                        } else {
                            println!(
                                "{:<6} {:<16} {:<7} {:>5} {:>5} {:>9} {:>7} {:>10.4} {:>10.4} {:>14.4e} {:>14.4e} {:>8} {:>8}  {}; {}",
                                info.kind,
                                resolved.name(),
                                precision.name(),
                                block_size,
                                used_skin,
                                n,
                                args.steps,
                                per_step * 1e3,
                                fastest * 1e3,
                                atom_steps,
                                pairs,
                                per_atom(dev_bytes),
                                per_atom(host_bytes),
                                info.device,
                                search,
                            );
                            if let Some(q) = &transport {
                                println!("  (measuring {q} while timing)");
                            }
                            if args.dye {
                                println!("  (with dye: a quarter of the atoms tagged, a rake across the box)");
                            }
                        }
                    }
                }
            }
        }
    }
    if measured == 0
        && let Some(why) = skipped.first()
    {
        anyhow::bail!("no case could run: {why}");
    }
    if let (false, Some(mb)) = (args.json, peak_rss_mb()) {
        println!("peak resident memory (last case): {mb:.0} MB");
    }
    Ok(())
}

/// A per-atom byte count for the table ("-" where unknown).
fn per_atom(b: Option<f64>) -> String {
    b.map_or_else(|| "-".to_string(), |b| format!("{b:.0}"))
}
