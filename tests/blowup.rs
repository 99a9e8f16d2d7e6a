//! Blow-ups on the CPU backend are detected, rolled back to the last checkpoint and leave no
//! NaN: a huge time step, atoms on top of each other, an atom through a wall, a shape drawn
//! through the liquid (`common/blowup.rs`, shared with the CUDA tests). Through the app's
//! simulation thread, a blow-up pauses, rolls back and says what happened and what to change,
//! and keeps the person's settings.

mod common;

use std::time::Duration;

use argon_sandbox::app::commands::{Pace, SimCommand, SimReport, SnapshotPurpose};
use argon_sandbox::app::sim_thread::SimHandle;
use argon_sandbox::physics::params::SimParams;
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::scene::Scene;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomState, Backend, BackendChoice, ColourScalar};
use common::blowup::*;
use common::jiggled_fluid;

fn cpu(b: SimBox, p: SimParams, atoms: &AtomState) -> Box<dyn Backend> {
    Box::new(CpuBackend::new(b, p, atoms, None).unwrap())
}

fn params() -> SimParams {
    SimParams { precision: Precision::Double, ..SimParams::default() }
}

#[test]
fn huge_time_step_is_rolled_back() {
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 1);
    huge_time_step(&cpu, b, params(), &atoms);
    let (b, atoms) = jiggled_fluid([5, 5, 4], [true, true, false], 0.1, &[], 2);
    huge_time_step(&cpu, b, SimParams { precision: Precision::Single, ..params() }, &atoms);
}

#[test]
fn atoms_on_top_of_each_other_are_rolled_back() {
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 3);
    atoms_on_top_of_each_other(&cpu, b, params(), &atoms);
}

#[test]
fn an_atom_leaving_the_tank_is_caught() {
    let b = SimBox::new([12.0, 8.0, 8.0], [false, true, true]);
    atom_leaving_the_tank(&cpu, b, params());
}

#[test]
fn a_shape_through_the_liquid_leaves_no_nan() {
    let (b, atoms) = jiggled_fluid([8, 8, 3], [true, true, false], 0.1, &[], 4);
    let blew = shape_through_the_liquid(&cpu, b, params(), &atoms);
    println!("the shape through the liquid blew up: {blew}");
}

/// Waits for a report matching `pick`, applying nothing else.
fn wait_for<T>(h: &SimHandle, what: &str, mut pick: impl FnMut(SimReport) -> Option<T>) -> T {
    let end = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < end {
        if let Some(r) = h.wait(Duration::from_millis(200))
            && let Some(t) = pick(r)
        {
            return t;
        }
    }
    panic!("no {what} within a minute");
}

#[test]
fn the_app_rolls_back_pauses_and_says_what_to_change() {
    let text = argon_sandbox::scene::presets::preset("droplet").unwrap();
    let scene = Scene::from_str(text, "droplet").unwrap();
    let pace = Pace::unlimited(20);
    let h = SimHandle::spawn(scene, BackendChoice::Cpu, pace, ColourScalar::Speed, true);
    // Let it run clean for a while (checkpoints are kept every half second).
    let status = wait_for(&h, "status", |r| match r {
        SimReport::Status(s) if s.step > 200 => Some(s),
        _ => None,
    });
    std::thread::sleep(Duration::from_millis(700));
    let mut p = status.params.clone();
    p.dt = 0.05;
    h.send(SimCommand::SetParams(Box::new(p)));
    let msg = wait_for(&h, "the blow-up report", |r| match r {
        SimReport::Error(m) => Some(m),
        _ => None,
    });
    assert!(msg.contains("blew up") && msg.contains("Rolled back to step"), "{msg}");
    assert!(msg.contains("time step"), "no fix suggested: {msg}");
    let status = wait_for(&h, "a paused status", |r| match r {
        SimReport::Status(s) if !s.running => Some(s),
        _ => None,
    });
    assert_eq!(status.params.dt, 0.05, "the person's setting was not kept");
    h.send(SimCommand::TakeSnapshot(SnapshotPurpose::Undo(1)));
    let snap = wait_for(&h, "the snapshot", |r| match r {
        SimReport::Snapshot { snapshot, .. } => Some(snapshot),
        _ => None,
    });
    assert!(finite(&snap), "NaN left in the state");
    assert!(snap.step < status.step + 1 && snap.step > 0);
}
