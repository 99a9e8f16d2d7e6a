//! The soak: a tank run for a set wall time with a random live change every 100 steps
//! (algorithm, precision, block size, thermostat, obstacles, atoms added or removed). A
//! blow-up rolls back, as the app does; nothing may crash, no NaN may appear, and the energy
//! and temperature stay within bounds. Shared by the CPU test and the GPU one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use argon_sandbox::physics::obstacles::ObstacleField;
use argon_sandbox::physics::params::{Algorithm, SimParams, Thermostat};
use argon_sandbox::physics::real::Precision;
use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::rng::{Sequence, Stream};
use argon_sandbox::shapes::Shape;
use argon_sandbox::sim::{AtomSelection, AtomState, Backend, CaughtAtoms, SimError};

use super::blowup::finite;

struct Rng(Sequence);

impl Rng {
    fn u(&mut self) -> f64 {
        self.0.uniform()
    }
    fn pick(&mut self, n: usize) -> usize {
        ((self.u() * n as f64) as usize).min(n - 1)
    }
}

/// What a soak did.
#[derive(Debug, Default)]
pub struct SoakReport {
    pub changes: usize,
    pub steps: u64,
    pub blowups: usize,
    pub min_atoms: usize,
    pub max_atoms: usize,
}

/// Runs `b` (a tank `b0` holding a liquid) for `wall` with a random change every 100 steps.
pub fn soak(b: &mut dyn Backend, b0: SimBox, base: SimParams, wall: Duration, seed: u64, gpu: bool) -> SoakReport {
    let mut rng = Rng(Sequence::new(seed, Stream::GasPlacement, 99, 0));
    let len = b0.length();
    let mut params = base.clone();
    let mut shapes: Vec<Shape> = Vec::new();
    let mut r = SoakReport { min_atoms: usize::MAX, ..Default::default() };
    b.checkpoint().unwrap();
    let end = Instant::now() + wall;
    while Instant::now() < end {
        match b.advance(100) {
            Ok(()) => b.checkpoint().unwrap(),
            Err(SimError::BlowUp { .. }) => {
                r.blowups += 1;
                b.rollback().unwrap().expect("a checkpoint to roll back to");
            }
            Err(e) => panic!("soak: advancing failed after {} changes: {e}", r.changes),
        }
        r.steps += 100;
        let t = b.measure().unwrap();
        let n = b.n_atoms();
        r.min_atoms = r.min_atoms.min(n);
        r.max_atoms = r.max_atoms.max(n);
        assert!(t.total_energy().is_finite() && t.pressure.is_finite(), "soak: non-finite telemetry {t:?}");
        assert!(t.temperature < 20.0, "soak: temperature ran away to {} after {} changes", t.temperature, r.changes);
        let e = t.etotal_per_atom();
        assert!(e > -10.0 && e < 50.0, "soak: energy per atom {e} out of bounds after {} changes", r.changes);
        // One random change.
        match rng.pick(7) {
            0 => {
                params.algorithm =
                    [Algorithm::AllPairsTiled, Algorithm::Cells, Algorithm::Neighbors, Algorithm::Auto][rng.pick(4)]
            }
            1 => params.precision = [Precision::Single, Precision::Mixed, Precision::Double][rng.pick(3)],
            2 if gpu => params.block_size = [64, 128, 256, 512][rng.pick(4)],
            2 | 3 => {
                params.thermostat = match rng.pick(4) {
                    0 => Thermostat::Nve,
                    1 => Thermostat::Berendsen { tau: 0.5, relative_to_flow: false },
                    2 => Thermostat::Csvr { tau: 0.5, relative_to_flow: false },
                    _ => Thermostat::Langevin { damp: 1.0 },
                };
                params.temperature = 0.6 + rng.u();
            }
            4 => {
                if shapes.len() > 3 || rng.u() < 0.3 {
                    shapes.clear();
                } else {
                    let c = [2.0 + rng.u() * (len[0] - 4.0), 2.0 + rng.u() * (len[1] - 4.0)];
                    shapes.push(match rng.pick(3) {
                        0 => Shape::Circle { centre: c, radius: 0.5 + rng.u() },
                        1 => Shape::Rectangle {
                            centre: c,
                            half_size: [0.5 + rng.u(), 0.3 + rng.u()],
                            angle_deg: 90.0 * rng.u(),
                        },
                        _ => Shape::Segment { a: c, b: [c[0] + 2.0 * rng.u(), c[1] + 1.0], thickness: 0.6 },
                    });
                }
                let field = ObstacleField::bake(&shapes, &b0, 0.1).map(Arc::new);
                // Pushing caught atoms out onto their neighbours is the blow-up tests' business.
                b.set_obstacles(field, CaughtAtoms::Remove).unwrap();
            }
            5 => {
                // As the add-atoms brush does: only where an atom fits (0.95 sigma clear).
                let have = b.snapshot().unwrap().atoms.positions;
                let field = ObstacleField::bake(&shapes, &b0, 0.1);
                let mut positions: Vec<[f64; 3]> = Vec::new();
                for _ in 0..200 {
                    let p = [1.0 + rng.u() * (len[0] - 2.0), 1.0 + rng.u() * (len[1] - 2.0), rng.u() * len[2]];
                    let clear = |q: &[f64; 3]| {
                        let d = b0.min_image(p, *q);
                        d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > 0.95 * 0.95
                    };
                    let outside = field.as_ref().is_none_or(|f| f.sample(p[0], p[1]).distance > 1.0);
                    if outside && have.iter().all(clear) && positions.iter().all(clear) {
                        positions.push(p);
                    }
                    if positions.len() >= 20 {
                        break;
                    }
                }
                let k = positions.len();
                let added =
                    AtomState { velocities: vec![[0.0; 3]; k], types: vec![0; k], positions, ..Default::default() };
                b.add_atoms(&added).unwrap();
            }
            _ => {
                let centre = [rng.u() * len[0], rng.u() * len[1]];
                b.remove_atoms(&AtomSelection::Disc { centre, radius: 1.5 }).unwrap();
            }
        }
        if let Err(e) = b.set_params(params.clone()) {
            panic!("soak: a valid change was refused: {e}");
        }
        r.changes += 1;
    }
    let snap = b.snapshot().unwrap();
    assert!(finite(&snap), "soak: NaN in the final state");
    r
}
