//! The soak on the CPU backend (`common/soak.rs`): 20 s of random live changes every 100
//! steps with no crash, no NaN and bounded energy (`ARGON_SOAK_SECONDS` sets the length; the
//! five-minute GPU version is in `tests/cuda.rs`).

mod common;

use std::time::Duration;

use argon_sandbox::physics::params::SimParams;
use argon_sandbox::physics::real::Precision;
use argon_sandbox::sim::cpu::CpuBackend;
use common::jiggled_fluid;
use common::soak::soak;

#[test]
fn random_live_changes_for_a_while() {
    let seconds: u64 = std::env::var("ARGON_SOAK_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let (b0, atoms) = jiggled_fluid([8, 8, 3], [true, true, false], 0.1, &[], 5);
    let params = SimParams { precision: Precision::Single, temperature: 1.0, ..SimParams::default() };
    let mut b = CpuBackend::new(b0, params.clone(), &atoms, None).unwrap();
    let r = soak(&mut b, b0, params, Duration::from_secs(seconds), 7, false);
    println!("{r:?}");
    assert!(r.changes >= 20, "only {} changes in {seconds} s", r.changes);
    assert!(r.min_atoms < r.max_atoms, "the atom count never changed: {r:?}");
}
