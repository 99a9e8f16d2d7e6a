//! Blow-up scenarios shared by the CPU (`tests/blowup.rs`) and CUDA (`tests/cuda.rs`) tests.
//! Each drives a backend into a blow-up (a huge time step, atoms placed on top of each other,
//! an atom flung through a wall, a shape drawn through the liquid), checks the cause is
//! detected, rolls back and checks the state is the checkpoint's exactly, finite, and runs on.

use argon_sandbox::physics::params::SimParams;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::{AtomState, Backend, CaughtAtoms, SimError, Snapshot};

/// Opens a backend on a system (CPU or CUDA).
pub type Open<'a> = &'a dyn Fn(SimBox, SimParams, &AtomState) -> Box<dyn Backend>;

pub fn finite(s: &Snapshot) -> bool {
    s.atoms.positions.iter().chain(&s.atoms.velocities).flatten().all(|x| x.is_finite())
}

fn bits(s: &Snapshot) -> Vec<u64> {
    s.atoms.positions.iter().chain(&s.atoms.velocities).flatten().map(|x| x.to_bits()).collect()
}

/// The blow-up's step and description; panics when `r` is not a blow-up naming `cause`.
fn expect_blowup(r: Result<(), SimError>, cause: &str, what: &str) -> u64 {
    match r {
        Err(SimError::BlowUp { step, what: w, hint }) => {
            assert!(w.contains(cause), "{what}: the cause `{w}` does not say `{cause}`");
            assert!(hint.contains("time step") || hint.contains("dt"), "{what}: no fix suggested: {hint}");
            step
        }
        other => panic!("{what}: expected a blow-up, got {other:?}"),
    }
}

/// Rolls back and checks the state is exactly `before` (atoms, step), finite, and runs on.
fn roll_back_to(b: &mut dyn Backend, before: &Snapshot, what: &str) {
    let step = b.rollback().expect("rollback").expect("a checkpoint");
    assert_eq!(step, before.step, "{what}: rolled back to the wrong step");
    let after = b.snapshot().unwrap();
    assert!(finite(&after), "{what}: NaN left in the state");
    assert_eq!(after.atoms.len(), before.atoms.len(), "{what}: atom count");
    assert!(bits(&after) == bits(before), "{what}: the state is not the checkpoint's");
}

/// A liquid, advanced a little, snapshotted and checkpointed: returns the snapshot.
fn settle(b: &mut dyn Backend) -> Snapshot {
    b.advance(20).unwrap();
    let before = b.snapshot().unwrap();
    b.checkpoint().unwrap();
    before
}

/// A huge time step on a dense liquid: dt = 0.1 tau is refused as input (the allowed range
/// ends at 0.05), and the largest allowed, ten times the usual, blows up.
pub fn huge_time_step(open: Open, b0: SimBox, p: SimParams, atoms: &AtomState) {
    let mut b = open(b0, p.clone(), atoms);
    let before = settle(b.as_mut());
    let refused = b.set_params(SimParams { dt: 0.1, ..p.clone() }).unwrap_err().to_string();
    assert!(refused.contains("dt") && refused.contains("0.05"), "{refused}");
    b.set_params(SimParams { dt: 0.05, ..p.clone() }).unwrap();
    let step = expect_blowup(b.advance(2000), "", "dt = 0.05");
    assert!(step > before.step, "the blow-up step {step} is before the run");
    roll_back_to(b.as_mut(), &before, "dt = 0.05");
    // With the time step fixed the run goes on.
    b.set_params(p).unwrap();
    b.advance(50).unwrap();
    assert!(finite(&b.snapshot().unwrap()));
}

/// An atom added 0.05 sigma from another.
pub fn atoms_on_top_of_each_other(open: Open, b0: SimBox, p: SimParams, atoms: &AtomState) {
    let mut b = open(b0, p, atoms);
    let before = settle(b.as_mut());
    let x = before.atoms.positions[0];
    let extra = AtomState {
        positions: vec![[x[0] + 0.05, x[1], x[2]]],
        velocities: vec![[0.0; 3]],
        types: vec![0],
        ..Default::default()
    };
    b.add_atoms(&extra).unwrap();
    expect_blowup(b.advance(50), "", "overlapping atoms");
    // The rollback also takes the added atom back out.
    roll_back_to(b.as_mut(), &before, "overlapping atoms");
}

/// An atom flung at a wall faster than the capped wall can stop it (0.4 sigma per step, under
/// the runaway limit): it leaves the tank. `b0` must have a wall on x and room near it.
pub fn atom_leaving_the_tank(open: Open, b0: SimBox, p: SimParams) {
    let len = b0.length();
    let positions = vec![[2.0, 0.5 * len[1], 0.5 * len[2]], [0.7 * len[0], 0.5 * len[1], 0.5 * len[2]]];
    let atoms = AtomState { positions, velocities: vec![[0.0; 3], [0.0; 3]], types: vec![0; 2], ..Default::default() };
    let mut b = open(b0, p, &atoms);
    let before = settle(b.as_mut());
    let fast = AtomState {
        positions: vec![[1.5, 0.3 * len[1], 0.3 * len[2]]],
        velocities: vec![[-80.0, 0.0, 0.0]],
        types: vec![0],
        ..Default::default()
    };
    b.add_atoms(&fast).unwrap();
    expect_blowup(b.advance(200), "left the closed tank", "atom through a wall");
    roll_back_to(b.as_mut(), &before, "atom through a wall");
}

/// A circle drawn through the middle of the liquid, its atoms pushed out onto their
/// neighbours. Whether this blows up depends on how crowded the surface gets; either way no
/// NaN may remain, and a blow-up must roll back.
pub fn shape_through_the_liquid(open: Open, b0: SimBox, p: SimParams, atoms: &AtomState) -> bool {
    let mut b = open(b0, p, atoms);
    let before = settle(b.as_mut());
    let len = b0.length();
    let circle = Shape::Circle { centre: [0.5 * len[0], 0.5 * len[1]], radius: 0.3 * len[0].min(len[1]) };
    let field = argon_sandbox::physics::obstacles::ObstacleField::bake(&[circle], &b0, 0.1).map(std::sync::Arc::new);
    let caught = b.set_obstacles(field, CaughtAtoms::PushOut).unwrap();
    assert!(caught > 10, "the circle caught only {caught} atoms");
    let blew = match b.advance(300) {
        Ok(()) => false,
        Err(SimError::BlowUp { .. }) => {
            let step = b.rollback().unwrap().expect("a checkpoint");
            assert_eq!(step, before.step);
            true
        }
        Err(e) => panic!("shape through the liquid: {e}"),
    };
    assert!(finite(&b.snapshot().unwrap()), "NaN left after the shape");
    blew
}
