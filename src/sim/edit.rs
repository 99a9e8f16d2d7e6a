//! Edits of host-side atom state shared by every backend (they snapshot, edit, restore):
//! removing atoms by selection and resolving atoms caught inside newly placed obstacles.

use crate::physics::obstacles::ObstacleField;
use crate::physics::params::SimParams;
use crate::sim::{AtomSelection, AtomState, CaughtAtoms};

/// Removes the selected atoms; returns how many.
pub fn remove(atoms: &mut AtomState, which: &AtomSelection) -> usize {
    let n = atoms.len();
    let mut keep = vec![true; n];
    match which {
        AtomSelection::Indices(ix) => {
            for &i in ix {
                if i < n {
                    keep[i] = false;
                }
            }
        }
        AtomSelection::Disc { centre, radius } => {
            for (i, p) in atoms.positions.iter().enumerate() {
                let (dx, dy) = (p[0] - centre[0], p[1] - centre[1]);
                if dx * dx + dy * dy <= radius * radius {
                    keep[i] = false;
                }
            }
        }
    }
    retain(atoms, &keep)
}

fn retain(atoms: &mut AtomState, keep: &[bool]) -> usize {
    let before = atoms.len();
    let mut k = 0;
    for i in 0..before {
        if keep[i] {
            atoms.positions[k] = atoms.positions[i];
            atoms.velocities[k] = atoms.velocities[i];
            atoms.types[k] = atoms.types[i];
            if atoms.has_dye() {
                atoms.dye[k] = atoms.dye[i];
            }
            k += 1;
        }
    }
    atoms.positions.truncate(k);
    atoms.velocities.truncate(k);
    atoms.types.truncate(k);
    atoms.dye.truncate(k);
    before - k
}

/// Atoms closer to an obstacle surface than the wall's cap distance (or inside) are removed
/// or moved out along the distance gradient to the potential's cutoff. Returns how many.
pub fn resolve_caught(atoms: &mut AtomState, field: &ObstacleField, params: &SimParams, mode: CaughtAtoms) -> usize {
    let caught_below = 0.5 * params.obstacle.sigma;
    let target = params.obstacle.cutoff.max(caught_below);
    let caught: Vec<bool> = atoms.positions.iter().map(|p| field.sample(p[0], p[1]).distance < caught_below).collect();
    let count = caught.iter().filter(|&&c| c).count();
    match mode {
        CaughtAtoms::Remove => {
            let keep: Vec<bool> = caught.iter().map(|c| !c).collect();
            retain(atoms, &keep);
        }
        CaughtAtoms::PushOut => {
            for (i, c) in caught.iter().enumerate() {
                if !c {
                    continue;
                }
                let p = &mut atoms.positions[i];
                for _ in 0..50 {
                    let s = field.sample(p[0], p[1]);
                    if s.distance >= target {
                        break;
                    }
                    let g = (s.gradient[0].powi(2) + s.gradient[1].powi(2)).sqrt();
                    if g < 1e-9 {
                        break;
                    }
                    let step = (target - s.distance).max(field.cell[0].min(field.cell[1])) / g;
                    p[0] += s.gradient[0] / g * step;
                    p[1] += s.gradient[1] / g * step;
                }
                atoms.velocities[i] = [0.0; 3];
            }
        }
    }
    count
}
