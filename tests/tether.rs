//! The tether, a spring k pulling one atom toward a point in the x-y plane (CPU backend):
//! - its force is minus the gradient of its energy (central differences of the potential
//!   energy), across a periodic boundary and next to walls, and it equals -k d (d the
//!   minimum-image x-y displacement, no z part) on an atom whose slot was re-sorted by cell,
//!   with k |d|^2 / 2 counted as external energy and no virial;
//! - in a small periodic fluid a stiff spring holds its atom near the target, also after the
//!   target is moved across the periodic boundary (the atom takes the short way);
//! - an atom index past the atom count (after removing atoms, or from the start) leaves the
//!   tether inactive without a panic;
//! - set_params refuses a bad stiffness or target, naming the field, and keeps the old state.

mod common;

use argon_sandbox::physics::cutoff::Cutoff;
use argon_sandbox::physics::init::gas_positions;
use argon_sandbox::physics::params::{Algorithm, SimParams, Tether, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::sim::cpu::CpuBackend;
use argon_sandbox::sim::{AtomSelection, AtomState, Backend, SimError};
use common::{at_rest, cpu, jiggled_fluid, numeric_force, rel};

fn params() -> SimParams {
    SimParams { algorithm: Algorithm::AllPairsGlobal, precision: Precision::Double, ..SimParams::default() }
}

fn tether(atom: usize, target: [f64; 2], stiffness: f64) -> Option<Tether> {
    Some(Tether { atom: atom as u32, target, stiffness })
}

/// Minimum-image x-y displacement of `p` from `target`.
fn xy_from(b: &SimBox, p: [f64; 3], target: [f64; 2]) -> [f64; 2] {
    let d = b.min_image(p, [target[0], target[1], p[2]]);
    [d[0], d[1]]
}

/// Compares the forces on every atom with central differences of the potential energy.
fn check_gradient(b: SimBox, params: SimParams, atoms: AtomState, what: &str) {
    let t = params.tether.expect("a tether");
    let mut sim = cpu(b, params, &atoms);
    let forces = sim.forces().unwrap();
    let base = sim.snapshot().unwrap();
    let h = 1e-6;
    for i in 0..atoms.len() {
        for k in 0..3 {
            let numeric = numeric_force(&mut sim, &base, i, k, h);
            let f = forces[i][k];
            let err = (numeric - f).abs() / (1.0 + f.abs());
            assert!(err < 2e-5, "{what}: atom {i} axis {k}: force {f} vs -dE/dx {numeric}");
        }
    }
    // The tether must be what this tested: its atom is well away from the target.
    let d = xy_from(&b, atoms.positions[t.atom as usize], t.target);
    assert!(t.stiffness * d[0].abs() > 0.5 && t.stiffness * d[1].abs() > 0.5, "{what}: the spring is slack ({d:?})");
}

#[test]
fn force_is_minus_the_gradient_of_the_energy() {
    // Periodic: the atom nearest x = 0 is tethered to a point 1.1 sigma from it across the
    // boundary (near x = L), so only the minimum image gives a short spring.
    let b = SimBox::new([7.0, 7.5, 8.0], [true; 3]);
    let l = b.length();
    let pos = gas_positions(&b, b.lo, b.hi, 30, 0.95, &[], 5);
    let i = (0..pos.len()).min_by(|&a, &c| pos[a][0].total_cmp(&pos[c][0])).unwrap();
    assert!(pos[i][0] < 1.0, "no atom near x = 0");
    let target = [pos[i][0] - 1.1 + l[0], (pos[i][1] + 0.8).rem_euclid(l[1])];
    let p = SimParams { tether: tether(i, target, 3.0), ..params() };
    check_gradient(b, p, at_rest(pos.clone()), "periodic, across the boundary");
    // The same target given outside the box, several box lengths away: the same physics.
    let far = [target[0] - 3.0 * l[0], target[1] + 2.0 * l[1]];
    let p = SimParams { tether: tether(i, far, 3.0), ..params() };
    check_gradient(b, p, at_rest(pos), "periodic, target outside the box");

    // Walled x and y with gravity and drive: the tether adds to the other one-body forces,
    // and a target outside the walls is taken as it is.
    let w = SimBox::new([12.0, 12.0, 12.0], [false, false, true]);
    let pos = gas_positions(&w, [2.0, 2.0, 0.0], [10.0, 10.0, 12.0], 30, 1.0, &[], 9);
    let p = SimParams {
        cutoff: Cutoff::Absolute(1.0),
        gravity: 0.7,
        drive: 0.3,
        tether: tether(3, [-1.5, 13.0], 2.0),
        ..params()
    };
    check_gradient(w, p, at_rest(pos), "walls and body forces");
}

/// F = -k d on x and y, nothing on z, on an atom whose slot was re-sorted by the neighbour
/// list; E = k |d|^2 / 2 counts into the external energy; the virial is unchanged.
#[test]
fn force_and_energy_on_a_resorted_atom() {
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 11);
    let l = b.length();
    let (atom, k) = (123, 20.0);
    for precision in Precision::ALL {
        let base =
            SimParams { algorithm: Algorithm::Neighbors, precision, telemetry_every: 50, ..SimParams::default() };
        // Steps re-sort the atoms by cell (a snapshot would put them back in canonical order,
        // so positions are read from a second run): the tether must find its atom by id.
        let mut sim = cpu(b, base.clone(), &atoms);
        sim.advance(100).unwrap();
        let mut twin = cpu(b, base.clone(), &atoms);
        twin.advance(100).unwrap();
        let p0 = twin.snapshot().unwrap().atoms.positions[atom];
        // A target about 1.3 sigma away, given outside the box.
        let target = [p0[0] + 0.9 - l[0], p0[1] - 0.95 - 3.0 * l[1]];
        let on = SimParams { tether: tether(atom, target, k), ..base.clone() };
        sim.set_params(on).unwrap();
        let f_on = sim.forces().unwrap();
        let t_on = sim.measure().unwrap();
        sim.set_params(base.clone()).unwrap();
        let f_off = sim.forces().unwrap();
        let t_off = sim.measure().unwrap();
        let p = sim.snapshot().unwrap().atoms.positions[atom];
        assert_eq!(p, p0);
        let d = xy_from(&b, p, target);
        assert!((d[0] + 0.9).abs() < 1e-5 && (d[1] - 0.95).abs() < 1e-5, "{precision:?}: d = {d:?}");
        let (tol, tol_e) = if precision == Precision::Double { (1e-9, 1e-12) } else { (1e-3, 1e-6) };
        for (i, (a, c)) in f_on.iter().zip(&f_off).enumerate() {
            let want = if i == atom { [-k * d[0], -k * d[1], 0.0] } else { [0.0; 3] };
            for ax in 0..3 {
                let got = a[ax] - c[ax];
                assert!(
                    (got - want[ax]).abs() <= tol * (1.0 + a[ax].abs()),
                    "{precision:?}: atom {i} axis {ax}: tether force {got}, expected {}",
                    want[ax]
                );
            }
        }
        let e = t_on.external_energy - t_off.external_energy;
        let want = 0.5 * k * (d[0] * d[0] + d[1] * d[1]);
        assert!((e - want).abs() <= tol_e * want, "{precision:?}: external energy {e} vs {want}");
        assert!(rel(t_on.pair_energy, t_off.pair_energy) <= tol_e, "{precision:?}: pair energy changed");
        assert!(rel(t_on.virial, t_off.virial) <= tol_e, "{precision:?}: the tether must add no virial");
        // x and y momenta are no longer conserved with the tether on.
        assert_eq!(t_on.dof - t_off.dof, 2.0);
    }
}

#[test]
fn a_stiff_tether_holds_its_atom_at_the_target_across_the_boundary() {
    let (b, atoms) = jiggled_fluid([5, 5, 5], [false; 3], 0.1, &[], 12);
    // The atom nearest x = 1.2 is pulled to x = 0.3, next to the periodic boundary, by
    // k = 50 (thermal spread sqrt(T/k) ~ 0.14 sigma).
    let atom = (0..atoms.len())
        .min_by(|&a, &c| (atoms.positions[a][0] - 1.2).abs().total_cmp(&(atoms.positions[c][0] - 1.2).abs()))
        .unwrap();
    let p0 = atoms.positions[atom];
    let base = SimParams {
        algorithm: Algorithm::Neighbors,
        thermostat: Thermostat::Langevin { damp: 0.1 },
        temperature: 1.0,
        telemetry_every: 50,
        ..SimParams::default()
    };
    let k = 50.0;
    let first = [0.3, p0[1] - 0.5];
    let mut sim = cpu(b, SimParams { tether: tether(atom, first, k), ..base.clone() }, &atoms);
    sim.advance(400).unwrap();
    let p = sim.snapshot().unwrap().atoms.positions[atom];
    let d = xy_from(&b, p, first);
    eprintln!("after 400 steps the atom is {:.3} sigma from the first target", d[0].hypot(d[1]));
    assert!(d[0].hypot(d[1]) < 0.5, "atom at {p:?}, target {first:?}");

    // Move the target across the boundary, to x = L - 0.5: 0.8 sigma from x = 0.3 through the
    // boundary, L - 0.8 through the box.
    let second = [b.hi[0] - 0.5, first[1]];
    let toward = -1.0;
    sim.set_params(SimParams { tether: tether(atom, second, k), ..base.clone() }).unwrap();
    // Follow the atom's unwrapped x in 10-step pieces (each far shorter than half the box).
    let (mut travelled, mut last) = (0.0, p);
    for _ in 0..20 {
        sim.advance(10).unwrap();
        let q = sim.snapshot().unwrap().atoms.positions[atom];
        travelled += b.min_image(q, last)[0];
        last = q;
    }
    let d = xy_from(&b, last, second);
    eprintln!(
        "after 200 more steps the atom is {:.3} sigma from the moved target, having moved {travelled:.3} along x",
        d[0].hypot(d[1])
    );
    assert!(d[0].hypot(d[1]) < 0.5, "atom at {last:?}, target {second:?}");
    // It took the short way, across the boundary, not through the box.
    assert!(
        (travelled - toward * 0.8).abs() < 0.5,
        "the atom moved {travelled} along x, expected about {}",
        toward * 0.8
    );
    let t = sim.measure().unwrap();
    assert!(t.total_energy().is_finite() && t.external_energy > 0.0);
}

#[test]
fn an_index_past_the_atom_count_leaves_the_tether_inactive() {
    let b = SimBox::new([8.0, 8.0, 8.0], [true; 3]);
    let pos = gas_positions(&b, b.lo, b.hi, 40, 0.9, &[], 3);
    let n = pos.len();
    let atoms = at_rest(pos);
    let reference = {
        let mut s = cpu(b, params(), &atoms);
        (s.forces().unwrap(), s.measure().unwrap())
    };

    // Out of range from the start (u32::MAX too): forces and energies as without a tether.
    for atom in [n, n + 5, u32::MAX as usize] {
        let mut sim = cpu(b, SimParams { tether: tether(atom, [1.0, 1.0], 10.0), ..params() }, &atoms);
        assert_eq!(sim.forces().unwrap(), reference.0, "atom index {atom}");
        let t = sim.measure().unwrap();
        assert_eq!(t.external_energy, 0.0);
        assert_eq!(t.dof, reference.1.dof);
        sim.advance(20).unwrap();
    }

    // Tether the last atom, then remove an atom before it: the index is now past the count.
    let p = SimParams { tether: tether(n - 1, [4.0, 4.0], 10.0), ..params() };
    let mut sim = cpu(b, p.clone(), &atoms);
    assert!(sim.measure().unwrap().external_energy > 0.0);
    sim.advance(10).unwrap();
    assert_eq!(sim.remove_atoms(&AtomSelection::Indices(vec![0])).unwrap(), 1);
    assert_eq!(sim.n_atoms(), n - 1);
    let t = sim.measure().unwrap();
    assert_eq!(t.external_energy, 0.0, "the tether still acts after its atom went");
    assert_eq!(t.dof, (3 * (n - 1) - 3) as f64);
    let mut without = cpu(b, params(), &sim.snapshot().unwrap().atoms);
    assert_eq!(sim.forces().unwrap(), without.forces().unwrap());
    sim.advance(20).unwrap();
    // The parameters still hold the tether: it is valid, only inactive.
    assert_eq!(sim.params().tether, p.tether);
    sim.set_params(p.clone()).unwrap();

    // Every atom removed: still no panic.
    let all = AtomSelection::Indices((0..n).collect());
    sim.remove_atoms(&all).unwrap();
    assert_eq!(sim.n_atoms(), 0);
    sim.advance(5).unwrap();
    sim.forces().unwrap();
    sim.measure().unwrap();
}

#[test]
fn set_params_refuses_a_bad_tether_and_keeps_the_state() {
    let (b, atoms) = jiggled_fluid([3, 3, 3], [false; 3], 0.05, &[], 13);
    let good = SimParams { tether: tether(4, [1.0, 2.0], 5.0), telemetry_every: 10, ..SimParams::default() };
    let mut sim: CpuBackend = cpu(b, good.clone(), &atoms);
    sim.advance(10).unwrap();
    let before = sim.snapshot().unwrap();
    let bad = [
        (0.0, [1.0, 2.0], "tether.stiffness"),
        (-3.0, [1.0, 2.0], "tether.stiffness"),
        (1000.5, [1.0, 2.0], "tether.stiffness"),
        (f64::NAN, [1.0, 2.0], "tether.stiffness"),
        (f64::INFINITY, [1.0, 2.0], "tether.stiffness"),
        (5.0, [f64::NAN, 2.0], "tether.target"),
        (5.0, [1.0, f64::NEG_INFINITY], "tether.target"),
    ];
    for (stiffness, target, field) in bad {
        let p = SimParams { tether: tether(4, target, stiffness), ..good.clone() };
        let e = sim.set_params(p.clone()).unwrap_err();
        let SimError::Param(pe) = &e else { panic!("{stiffness} {target:?}: not a parameter error: {e}") };
        assert_eq!(pe.field, field, "{e}");
        assert!(e.to_string().contains(field), "{e}");
        assert!(CpuBackend::new(b, p, &atoms, None).is_err());
        assert_eq!(sim.params(), &good);
        assert_eq!(sim.snapshot().unwrap(), before);
    }
    // The bounds themselves are allowed.
    sim.set_params(SimParams { tether: tether(4, [1.0, 2.0], 1000.0), ..good.clone() }).unwrap();
    sim.set_params(SimParams { tether: tether(4, [-1e6, 1e6], 1e-9), ..good }).unwrap();
    sim.advance(10).unwrap();
}
