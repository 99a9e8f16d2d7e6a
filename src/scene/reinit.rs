//! Re-initialising with another atom count or initial state: a new scene document made from
//! the current one (same boundaries, parameters and obstacles), with the tank scaled so the
//! chosen fill holds about the asked number of atoms. Lengths along periodic axes are rounded
//! to whole lattice cells so the lattice meets itself across the boundary.

use super::{Fill, MAX_ATOMS, MAX_BOX_LENGTH, Scene};
use crate::physics::init::LatticeKind;
use crate::physics::params::Boundary;

/// How atoms are placed on re-initialisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InitialState {
    /// Liquid (rho* = 0.8) in the lower half, vapour above.
    #[default]
    LiquidSlab,
    /// FCC lattice filling the tank at rho* = 0.8442 (LAMMPS in.lj).
    Fcc,
    /// Simple cubic lattice filling the tank at rho* = 0.8 (the seed paper's start).
    Sc,
    /// A dilute gas (rho* = 0.05) filling the tank.
    Gas,
}

impl InitialState {
    pub const ALL: [InitialState; 4] =
        [InitialState::LiquidSlab, InitialState::Fcc, InitialState::Sc, InitialState::Gas];

    pub fn label(self) -> &'static str {
        match self {
            InitialState::LiquidSlab => "Liquid slab + vapour",
            InitialState::Fcc => "FCC lattice",
            InitialState::Sc => "Simple cubic lattice",
            InitialState::Gas => "Gas",
        }
    }

    /// Density of the fill and the fraction of the tank it occupies.
    fn density_and_fraction(self) -> (f64, f64) {
        match self {
            InitialState::LiquidSlab => (0.8, 0.5),
            InitialState::Fcc => (0.8442, 1.0),
            InitialState::Sc => (0.8, 1.0),
            InitialState::Gas => (0.05, 1.0),
        }
    }

    /// Edge of the cubic cell of the lattice this state uses (sigma).
    fn cell(self) -> f64 {
        let (rho, _) = self.density_and_fraction();
        match self {
            InitialState::Sc => (1.0 / rho).cbrt(),
            _ => (4.0 / rho).cbrt(),
        }
    }
}

/// Smallest atom count offered.
pub const MIN_ATOMS: usize = 10;

/// A copy of `doc` holding about `n` atoms placed as `init`.
pub fn reinitialise(doc: &Scene, n: usize, init: InitialState) -> Result<Scene, String> {
    if !(MIN_ATOMS..=MAX_ATOMS).contains(&n) {
        return Err(format!("Atom count: enter a whole number from {MIN_ATOMS} to {MAX_ATOMS}"));
    }
    let (rho, fraction) = init.density_and_fraction();
    let volume = n as f64 / (rho * fraction);
    let size = doc.tank.size;
    let periodic = doc.tank.boundaries.map(|b| b == Boundary::Periodic);
    let cell = init.cell();
    // A thin tank (depth up to 20 sigma) keeps its depth and grows in x and y; others grow in 3D.
    let keep_z = size[2] <= 20.0;
    let mut new = size;
    if keep_z {
        let z = if periodic[2] { (size[2] / cell).round().max(1.0) * cell } else { size[2] };
        let s = (volume / (z * size[0] * size[1])).sqrt();
        new = [size[0] * s, size[1] * s, z];
    } else {
        let s = (volume / (size[0] * size[1] * size[2])).cbrt();
        new = new.map(|x| x * s);
    }
    let min_len = 2.0 * doc.sim_params().list_range() + 0.1;
    for k in 0..3 {
        if periodic[k] {
            new[k] = (new[k].max(min_len) / cell).round().max(1.0) * cell;
        } else {
            new[k] = new[k].max(3.0);
        }
        if new[k] > MAX_BOX_LENGTH {
            return Err(format!("Atom count: {n} atoms need a tank longer than {MAX_BOX_LENGTH} sigma; ask for fewer"));
        }
    }
    let scale = new[0] / size[0];
    let mut out = doc.clone();
    out.tank.size = new;
    out.obstacles = doc.obstacles.iter().map(|s| s.scaled(scale)).collect();
    out.dye = doc.dye.iter().map(|s| s.scaled(scale, [new[0], new[1]])).collect();
    out.atoms = vec![match init {
        InitialState::LiquidSlab => {
            Fill::LiquidSlab { liquid_density: rho, vapour_density: 0.005, from: 0.0, to: 0.5 * new[1] }
        }
        InitialState::Fcc => Fill::Lattice { kind: LatticeKind::Fcc, density: rho, region: None },
        InitialState::Sc => Fill::Lattice { kind: LatticeKind::Sc, density: rho, region: None },
        InitialState::Gas => Fill::Gas { density: rho, region: None },
    }];
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scene::default_scene;

    #[test]
    fn counts_come_close_to_the_request() {
        let doc = default_scene();
        for (n, init) in [(20_000, InitialState::LiquidSlab), (5_000, InitialState::Fcc), (3_000, InitialState::Sc)] {
            let s = reinitialise(&doc, n, init).unwrap();
            let built = s.build().unwrap().atoms.len();
            let err = (built as f64 - n as f64).abs() / n as f64;
            assert!(err < 0.25, "{init:?}: asked {n}, got {built}");
            assert_eq!(s.obstacles.len(), doc.obstacles.len());
        }
    }

    #[test]
    fn bad_counts_are_refused_naming_the_field() {
        let doc = default_scene();
        assert!(reinitialise(&doc, 3, InitialState::Fcc).unwrap_err().starts_with("Atom count"));
        assert!(reinitialise(&doc, MAX_ATOMS + 1, InitialState::Fcc).unwrap_err().starts_with("Atom count"));
    }
}
