//! `bench --rdf`: the time of one g(r) (100 bins to 4 sigma, as the app asks) of the in.lj
//! system at each --n on each --backend and --precision, over the whole box and over a
//! region (the middle half of the box along every axis), median of --repeats after one
//! untimed call. Prints a table, and with `--json` one JSON object per case per line.

use std::time::Instant;

use anyhow::{Context, Result};

use super::common::{BenchArgs, in_lj_params, in_lj_system, median};
use crate::analysis::RdfRegion;
use crate::sim::{Backend, open_backend};

const BINS: usize = 100;
const R_MAX: f64 = 4.0;

/// (median, fastest) seconds of one g(r) over `repeats` calls after one untimed.
fn time_rdf(sim: &mut dyn Backend, region: Option<&RdfRegion>, repeats: usize) -> Result<(f64, f64)> {
    sim.rdf(BINS, R_MAX, region).context("g(r)")?;
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t0 = Instant::now();
        sim.rdf(BINS, R_MAX, region).context("g(r)")?;
        times.push(t0.elapsed().as_secs_f64());
    }
    let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
    Ok((median(times), fastest))
}

pub fn run(args: &BenchArgs) -> Result<()> {
    if args.repeats == 0 {
        anyhow::bail!("--repeats must be at least 1");
    }
    if !args.json {
        println!(
            "{:<6} {:<7} {:>9} {:>12} {:>12} {:>13} {:>10}",
            "backend", "prec", "atoms", "g(r) ms", "min ms", "region ms", "per s"
        );
    }
    for &n_req in &args.sizes {
        for &backend in &args.backend {
            for &precision in &args.precision {
                let params = in_lj_params(args.algorithm[0], precision, args.block_size[0]);
                let (b, atoms) = in_lj_system(n_req);
                let n = atoms.len();
                let (mut sim, _why) = open_backend(backend, b, params, &atoms, None)
                    .with_context(|| format!("opening the {backend:?} backend"))?;
                drop(atoms);
                let info = sim.info();
                sim.advance(args.warmup).context("warm-up steps")?;
                let l = b.length();
                let region = RdfRegion {
                    lo: std::array::from_fn(|k| b.lo[k] + 0.25 * l[k]),
                    hi: std::array::from_fn(|k| b.lo[k] + 0.75 * l[k]),
                };
                let (whole, fastest) = time_rdf(sim.as_mut(), None, args.repeats)?;
                let (inside, _) = time_rdf(sim.as_mut(), Some(&region), args.repeats)?;
                if args.json {
                    let obj = serde_json::json!({
                        "backend": info.kind,
                        "device": info.device,
                        "precision": precision.name(),
                        "n": n,
                        "bins": BINS,
                        "r_max": R_MAX,
                        "repeats": args.repeats,
                        "rdf_ms": whole * 1e3,
                        "min_rdf_ms": fastest * 1e3,
                        "region_rdf_ms": inside * 1e3,
                    });
                    println!("{obj}");
                } else {
                    println!(
                        "{:<6} {:<7} {:>9} {:>12.3} {:>12.3} {:>13.3} {:>10.1}",
                        info.kind,
                        precision.name(),
                        n,
                        whole * 1e3,
                        fastest * 1e3,
                        inside * 1e3,
                        1.0 / whole
                    );
                }
            }
        }
    }
    Ok(())
}
