use argon_sandbox::cli::bench::{in_lj_system, peak_rss_mb};
use argon_sandbox::physics::params::{Precision, SimParams, Algorithm};
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::Backend;
fn rss() -> f64 { let s = std::fs::read_to_string("/proc/self/status").unwrap(); let l = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap(); l.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap()/1024.0 }
fn main() {
    let (b, atoms) = in_lj_system(1048576);
    eprintln!("system built: rss {:.0} peak {:.0}", rss(), peak_rss_mb().unwrap());
    let p = SimParams { precision: Precision::Double, algorithm: Algorithm::Neighbors, shift: false, telemetry_every: 1000, ..SimParams::default() };
    let mut sim = CpuBackend::new(b, p, &atoms, None).unwrap();
    drop(atoms);
    eprintln!("backend: rss {:.0} peak {:.0}", rss(), peak_rss_mb().unwrap());
    sim.advance(1).unwrap();
    eprintln!("1 step: rss {:.0} peak {:.0}", rss(), peak_rss_mb().unwrap());
    for k in 0..8 { sim.advance(25).unwrap(); eprintln!("{} steps: rss {:.0} peak {:.0}", 1 + 25 * (k + 1), rss(), peak_rss_mb().unwrap()); }
}
