//! Turning a valid scene into a [`SimSetup`]: the box and parameters, then the atoms, fill by
//! fill in order (lattices, random gas, liquid slab + vapour, explicit atoms), keeping clear of
//! walls, obstacles and earlier atoms, then species at the scene's composition (drawn from
//! the seed) and Maxwell-Boltzmann velocities for each atom's mass, with zero total momentum
//! at exactly the scene's temperature.

use super::error::{Location, SceneError, num};
use super::grid::NeighbourGrid;
use super::{Fill, Region, Scene, SimSetup, SpeciesSpec};
use crate::analysis::degrees_of_freedom;
use crate::physics::init::{LatticeKind, gas_positions, lattice_sites, maxwell_boltzmann};
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{Boundary, SimParams, Species};
use crate::physics::sim_box::SimBox;
use crate::physics::species;
use crate::physics::wall::WallParams;
use crate::sim::AtomState;
use crate::units::kelvin_to_reduced;

/// Generated atoms keep at least this many wall (or obstacle) sigmas from a surface.
pub const SURFACE_CLEARANCE: f64 = 0.8;
/// Lattice sites closer than this (sigma) to an atom already placed are skipped.
pub const LATTICE_SEPARATION: f64 = 0.85;
/// Gas atoms keep at least this distance (sigma) from every other atom.
pub const GAS_SEPARATION: f64 = 0.9;
/// Explicit atoms closer than this (sigma) to an atom of an earlier fill are refused.
pub const EXPLICIT_SEPARATION: f64 = 0.5;
/// The cell count `gas_positions` can grid (it allocates one list per cell of ~0.9 sigma).
const GAS_GRID_CELLS: usize = 64_000_000;

impl Scene {
    /// The simulation box: edges from the origin, periodic where the scene says `Periodic`.
    pub fn sim_box(&self) -> SimBox {
        SimBox::new(self.tank.size, self.tank.boundaries.map(|b| b == Boundary::Periodic))
    }

    /// The simulation parameters the scene sets; the rest keep [`SimParams::default`].
    pub fn sim_params(&self) -> SimParams {
        SimParams {
            dt: self.integrator.dt,
            cutoff: self.potential.cutoff,
            shift: self.potential.shift,
            skin: self.integrator.skin,
            temperature: kelvin_to_reduced(self.temperature_k),
            thermostat: self.thermostat,
            gravity: self.forces.gravity,
            drive: self.forces.drive,
            wall: WallParams { epsilon: self.walls.epsilon, sigma: self.walls.sigma, cutoff: self.walls.cutoff },
            obstacle: WallParams::repulsive(self.obstacle_wall.epsilon, self.obstacle_wall.sigma),
            seed: self.seed,
            species: self.species.iter().map(|s| s.species()).collect(),
            piston: self.piston.as_ref().map(|p| p.params()),
            surface_friction: self.surface_friction,
            tunnel: self.tunnel,
            precision: self.precision.unwrap_or(SimParams::default().precision),
            ..SimParams::default()
        }
    }

    /// Validates the scene and creates its atoms. Deterministic for a seed.
    pub fn build(&self) -> Result<SimSetup, SceneError> {
        self.validate()?;
        let sim_box = self.sim_box();
        let params = self.sim_params();
        let mut placer = Placer {
            sim_box,
            label: self.label(),
            seed: self.seed,
            wall_clearance: SURFACE_CLEARANCE * params.wall.sigma,
            obstacle_clearance: SURFACE_CLEARANCE * params.obstacle.sigma,
            field: ObstacleField::bake(&self.obstacles, &sim_box, 0.1),
            positions: Vec::new(),
            velocities: Vec::new(),
            types: Vec::new(),
        };
        let len = sim_box.length();
        let mut saved_dye: Vec<(usize, &Vec<crate::physics::dye::Dye>)> = Vec::new();
        for (i, fill) in self.atoms.iter().enumerate() {
            match fill {
                Fill::Lattice { kind, density, region } => {
                    let r = region.clone().unwrap_or(Region { lo: [0.0; 3], hi: len });
                    placer.lattice(*kind, *density, r.lo, r.hi);
                }
                Fill::Gas { density, region } => {
                    let r = region.clone().unwrap_or(Region { lo: [0.0; 3], hi: len });
                    placer.gas(i, *density, r.lo, r.hi)?;
                }
                Fill::LiquidSlab { liquid_density, vapour_density, from, to } => {
                    placer.lattice(LatticeKind::Fcc, *liquid_density, [0.0, *from, 0.0], [len[0], *to, len[2]]);
                    placer.gas(i, *vapour_density, [0.0; 3], [len[0], *from, len[2]])?;
                    placer.gas(i, *vapour_density, [0.0, *to, 0.0], len)?;
                }
                Fill::Atoms { positions, velocities, types, dye } => {
                    let first = placer.positions.len();
                    placer.explicit(i, positions, velocities.as_deref(), types.as_deref())?;
                    if let Some(d) = dye {
                        saved_dye.push((first, d));
                    }
                }
            }
        }
        let n = placer.positions.len();
        if n == 0 {
            return Err(SceneError::Build {
                at: Location::file_only(&placer.label),
                message: "the fills created no atoms (walls and obstacles leave no room, or the regions are too \
                          small): raise a density or enlarge a region"
                    .into(),
            });
        }
        let types = self.assign_types(&placer.types);
        let missing: Vec<usize> = (0..n).filter(|&i| placer.velocities[i].is_none()).collect();
        let masses: Vec<f64> = missing.iter().map(|&i| params.species[types[i] as usize].mass).collect();
        let dof = degrees_of_freedom(missing.len(), &sim_box, &params, !self.obstacles.is_empty());
        let generated = maxwell_boltzmann(&masses, params.temperature, dof, self.seed, 0);
        // In a wind tunnel generated atoms start with the stream (an impulsive start, as a
        // fluid-dynamics code starts a tunnel): the flow is there from the first step instead
        // of reaching the tank only through the inflow zone.
        let stream = params.tunnel.map_or(0.0, |t| t.speed);
        for (&i, mut v) in missing.iter().zip(generated) {
            v[0] += stream;
            placer.velocities[i] = Some(v);
        }
        let velocities = placer.velocities.into_iter().map(|v| v.unwrap_or([0.0; 3])).collect();
        let mut atoms = AtomState { positions: placer.positions, velocities, types, ..Default::default() };
        // Saved tags (explicit atoms of a saved state), each fill's at its atoms' places.
        for (first, d) in saved_dye {
            atoms.dye_mut()[first..first + d.len()].copy_from_slice(d);
        }
        let (step, time) = self.resume.map_or((0, 0.0), |r| (r.step, r.time));
        if self.resume.is_none() {
            super::dye::tag_regions(&self.dye, 0, &mut atoms);
        }
        let piston = self.resume.and_then(|r| r.piston);
        Ok(SimSetup {
            sim_box,
            params,
            atoms,
            shapes: self.obstacles.clone(),
            step,
            time,
            piston,
            fields: self.fields.clone(),
            dye: self.dye.clone(),
        })
    }

    /// A copy of this scene whose atoms are exactly `atoms` (one explicit `Atoms` fill with
    /// positions and velocities): how a running system is saved as a scene.
    pub fn with_atoms(&self, atoms: &AtomState) -> Scene {
        let positions = atoms.positions.iter().map(|&p| self.sim_box().wrap(p)).collect();
        let types = (self.species.len() > 1 || atoms.types.iter().any(|&t| t != 0)).then(|| atoms.types.clone());
        let dye = atoms.has_dye().then(|| atoms.dye.clone());
        Scene {
            atoms: vec![Fill::Atoms { positions, velocities: Some(atoms.velocities.clone()), types, dye }],
            ..self.clone()
        }
    }

    /// A copy of this scene with the running `species` (catalogue symbols where they match);
    /// the composition is kept for the species already listed and zero for new ones (so the
    /// fills still build what they built).
    pub fn with_species(&self, species: &[Species]) -> Scene {
        let specs: Vec<SpeciesSpec> = species.iter().map(SpeciesSpec::of).collect();
        let first_only = || vec![1.0];
        let composition = match &self.composition {
            None if specs.len() <= 1 => None,
            c => {
                let mut c = c.clone().unwrap_or_else(first_only);
                c.resize(specs.len(), 0.0);
                Some(c)
            }
        };
        Scene { species: specs, composition, ..self.clone() }
    }

    /// The species of every atom: explicit atoms as given, generated atoms (`None`) drawn at
    /// the scene's composition (all the first species without one) from the seed.
    fn assign_types(&self, placed: &[Option<u32>]) -> Vec<u32> {
        let generated = placed.iter().filter(|t| t.is_none()).count();
        let first_only: Vec<f64> = (0..self.species.len()).map(|k| if k == 0 { 1.0 } else { 0.0 }).collect();
        let fractions = self.composition.as_deref().unwrap_or(&first_only);
        let mut drawn = species::assign_types(generated, fractions, self.seed).into_iter();
        placed.iter().map(|t| t.unwrap_or_else(|| drawn.next().unwrap_or(0))).collect()
    }

    /// A copy of this scene that continues the running state `snap`: its atoms, step and
    /// time. Loading it gives the same simulation, bit for bit, as running on.
    pub fn with_state(&self, snap: &crate::sim::Snapshot) -> Scene {
        let resume = super::Resume { step: snap.step, time: snap.time, piston: snap.piston };
        Scene { resume: Some(resume), ..self.with_atoms(&snap.atoms) }
    }
}

/// The atoms placed so far and what they must keep clear of.
struct Placer {
    sim_box: SimBox,
    label: String,
    seed: u64,
    wall_clearance: f64,
    obstacle_clearance: f64,
    field: Option<ObstacleField>,
    positions: Vec<[f64; 3]>,
    /// None: to be drawn from Maxwell-Boltzmann.
    velocities: Vec<Option<[f64; 3]>>,
    /// None: to be drawn at the scene's composition.
    types: Vec<Option<u32>>,
}

impl Placer {
    fn build_error(&self, fill: usize, message: String) -> SceneError {
        SceneError::Build { at: Location::file_only(&self.label), message: format!("atoms[{fill}]: {message}") }
    }

    /// Far enough from walls (walled axes) and obstacles.
    fn clear_of_surfaces(&self, p: [f64; 3]) -> bool {
        let len = self.sim_box.length();
        let walls_ok = (0..3)
            .all(|k| self.sim_box.periodic[k] || (p[k] >= self.wall_clearance && p[k] <= len[k] - self.wall_clearance));
        walls_ok && self.field.as_ref().is_none_or(|f| f.sample(p[0], p[1]).distance >= self.obstacle_clearance)
    }

    fn grid_of_placed(&self, min_cell: f64, extra: usize) -> NeighbourGrid {
        let mut grid = NeighbourGrid::new(&self.sim_box, min_cell, self.positions.len() + extra);
        for &p in &self.positions {
            grid.insert(p);
        }
        grid
    }

    fn push(&mut self, p: [f64; 3], v: Option<[f64; 3]>, t: Option<u32>) {
        self.positions.push(self.sim_box.wrap(p));
        self.velocities.push(v);
        self.types.push(t);
    }

    /// Lattice sites in `[lo, hi)` anchored at the box origin, skipping sites near surfaces or
    /// near atoms already placed (including this lattice's own sites across a periodic seam).
    fn lattice(&mut self, kind: LatticeKind, density: f64, lo: [f64; 3], hi: [f64; 3]) {
        let sites = lattice_sites(kind, density, self.sim_box.lo, lo, hi);
        let mut grid = self.grid_of_placed(LATTICE_SEPARATION, sites.len());
        for site in sites {
            if self.clear_of_surfaces(site) && grid.nearest_within(site, LATTICE_SEPARATION).is_none() {
                grid.insert(site);
                self.push(site, None, None);
            }
        }
    }

    /// Random atoms at `density` in the part of `[lo, hi)` clear of the walls, then skipping
    /// those near obstacles; errors when they cannot all be placed without overlaps.
    fn gas(&mut self, fill: usize, density: f64, mut lo: [f64; 3], mut hi: [f64; 3]) -> Result<(), SceneError> {
        let len = self.sim_box.length();
        for k in 0..3 {
            if !self.sim_box.periodic[k] {
                lo[k] = lo[k].max(self.wall_clearance);
                hi[k] = hi[k].min(len[k] - self.wall_clearance);
            }
        }
        if density <= 0.0 || (0..3).any(|k| lo[k] >= hi[k]) {
            return Ok(());
        }
        let volume: f64 = (0..3).map(|k| hi[k] - lo[k]).product();
        let count = (density * volume).round() as usize;
        let cells: f64 = len.iter().map(|&l| (l / GAS_SEPARATION).floor().clamp(1.0, 1024.0)).product();
        if cells > GAS_GRID_CELLS as f64 {
            return Err(self.build_error(
                fill,
                format!(
                    "a random gas fill in a box this large needs a placement grid of {} cells, more than the \
                     {GAS_GRID_CELLS} it supports: use a Lattice fill or a smaller box",
                    cells as u64
                ),
            ));
        }
        let seed = self.seed ^ (fill as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let placed = gas_positions(&self.sim_box, lo, hi, count, GAS_SEPARATION, &self.positions, seed);
        if placed.len() < count {
            return Err(self.build_error(
                fill,
                format!(
                    "only {} of {count} gas atoms fit at least {GAS_SEPARATION} sigma from each other and from \
                     earlier atoms (density {}): lower the density (random placement jams above about 0.6), or use \
                     a Lattice fill for a liquid",
                    placed.len(),
                    num(density)
                ),
            ));
        }
        for p in placed {
            if self.clear_of_surfaces(p) {
                self.push(p, None, None);
            }
        }
        Ok(())
    }

    /// Explicit atoms, as given (wrapped on periodic axes); they must not sit on earlier atoms.
    fn explicit(
        &mut self,
        fill: usize,
        positions: &[[f64; 3]],
        velocities: Option<&[[f64; 3]]>,
        types: Option<&[u32]>,
    ) -> Result<(), SceneError> {
        let grid = self.grid_of_placed(EXPLICIT_SEPARATION, 0);
        for (j, &p) in positions.iter().enumerate() {
            if let Some((_, d)) = grid.nearest_within(p, EXPLICIT_SEPARATION) {
                return Err(self.build_error(
                    fill,
                    format!(
                        "positions[{j}] is {} sigma from an atom placed by an earlier fill: list explicit `Atoms` \
                         fills first (later fills keep clear of them), or move the atom",
                        num((d * 1e4).round() / 1e4)
                    ),
                ));
            }
        }
        for (j, &p) in positions.iter().enumerate() {
            let t = types.and_then(|t| t.get(j).copied()).unwrap_or(0);
            self.push(p, velocities.and_then(|v| v.get(j).copied()), Some(t));
        }
        Ok(())
    }
}
