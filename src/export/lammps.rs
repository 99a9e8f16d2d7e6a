//! A LAMMPS input deck (input script `in.argon` + data file `data.argon`) that reproduces a
//! system: box and boundaries, atoms with velocities, `lj/cut` with the same cutoffs and shift
//! (`lammps_pair.rs`: a `pair_coeff` with its cutoff per species pair),
//! 9-3 walls (`fix wall/lj93`), obstacles (`region` + `fix wall/region lj93`), gravity and
//! drive (`fix gravity`), the ensemble, dt and the temperature's degrees of freedom.
//!
//! Obstacles become regions, not frozen wall atoms: argon-sandbox's obstacles are smooth 9-3
//! surfaces of the exact distance to each shape, and `fix wall/region lj93` is that same
//! potential, so circles (cylinders) and rectangles (blocks, rotated ones through `rotate`)
//! match to round-off. Frozen atoms would make a bumpy LJ surface with different physics.
//! Segments and strokes become unions of cylinders and rotated blocks, polygons unions of thin
//! edge walls: LAMMPS sums the contacts with the pieces of a union, which differs from the
//! distance to the whole shape near joints and corners; those are flagged as warnings. What
//! cannot map at all (the tether, the piston, the wind tunnel's inflow zone, atoms inside the
//! linear wall cap, surface friction at obstacles) is a comment and a warning. Surface friction at the walls maps to `fix
//! langevin` on a dynamic group near each walled face with a `temp/partial` bias leaving out
//! the normal axis (tangential only, as here; other random numbers).
//!
//! Units: `lj` (reduced, as inside), or `real` / `metal` for argon (sigma = 3.405 Å,
//! epsilon/k_B = 119.8 K, m = 39.948 g/mol), converted with LAMMPS's own constants so the
//! deck's dynamics are the reduced dynamics exactly.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::analysis::degrees_of_freedom;
use crate::io::atomic::write_atomic;
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::sim_box::SimBox;
use crate::physics::wall::WallParams;
use crate::shapes::Shape;
use crate::sim::AtomState;
use crate::units::{ARGON_EPSILON_K, ARGON_MASS_U, ARGON_SIGMA_ANGSTROM};

/// The LAMMPS `units` style of the deck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum LammpsUnits {
    /// Reduced LJ units, as argon-sandbox uses inside.
    Lj,
    /// Argon in Å, fs, kcal/mol, K, atm.
    Real,
    /// Argon in Å, ps, eV, K, bar.
    Metal,
}

impl LammpsUnits {
    pub fn name(self) -> &'static str {
        match self {
            LammpsUnits::Lj => "lj",
            LammpsUnits::Real => "real",
            LammpsUnits::Metal => "metal",
        }
    }
}

/// Reduced-to-LAMMPS conversion factors of one unit style (LAMMPS's own constants).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub length: f64,
    pub energy: f64,
    pub mass: f64,
    pub time: f64,
    pub velocity: f64,
    /// Acceleration in LAMMPS force/mass units (`fix gravity` magnitude).
    pub acceleration: f64,
    pub temperature: f64,
    pub pressure: f64,
}

impl Scale {
    pub fn of(units: LammpsUnits) -> Scale {
        // (Boltzmann constant, mvv2e, nktv2p) from LAMMPS's update.cpp / force.cpp.
        let (boltz, mvv2e, nktv2p) = match units {
            LammpsUnits::Lj => {
                return Scale {
                    length: 1.0,
                    energy: 1.0,
                    mass: 1.0,
                    time: 1.0,
                    velocity: 1.0,
                    acceleration: 1.0,
                    temperature: 1.0,
                    pressure: 1.0,
                };
            }
            LammpsUnits::Real => (0.0019872067, 48.88821291 * 48.88821291, 68568.415),
            LammpsUnits::Metal => (8.617343e-5, 1.0364269e-4, 1.6021765e6),
        };
        let (sigma, mass) = (ARGON_SIGMA_ANGSTROM, ARGON_MASS_U);
        let energy = ARGON_EPSILON_K * boltz;
        let time = sigma * (mass * mvv2e / energy).sqrt();
        Scale {
            length: sigma,
            energy,
            mass,
            time,
            velocity: sigma / time,
            acceleration: energy / (sigma * mass),
            temperature: ARGON_EPSILON_K,
            pressure: energy / sigma.powi(3) * nktv2p,
        }
    }
}

/// What the deck is made from.
pub struct ExportInput<'a> {
    pub sim_box: &'a SimBox,
    pub params: &'a SimParams,
    pub atoms: &'a AtomState,
    pub shapes: &'a [Shape],
    /// Where the system came from (a scene path, "the app"), for the header.
    pub source: &'a str,
    pub units: LammpsUnits,
    /// `run` length written at the end of the script.
    pub steps: u64,
    pub thermo_every: u64,
}

/// The two files, and what did not map exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct LammpsDeck {
    pub input: String,
    pub data: String,
    pub warnings: Vec<String>,
}

/// File names inside the export folder.
pub const INPUT_FILE: &str = "in.argon";
pub const DATA_FILE: &str = "data.argon";

/// Half-thickness (sigma) of the edge walls that stand in for a polygon's sides.
const POLYGON_EDGE_RADIUS: f64 = 1e-3;

/// Formats a number in shortest round-trip form.
pub(super) fn num(x: f64) -> String {
    format!("{x:?}")
}

/// Builds the deck. Fails only on states LAMMPS cannot take at all (no atoms, NaN).
pub fn build_deck(inp: &ExportInput) -> Result<LammpsDeck, String> {
    let a = inp.atoms;
    let n = a.len();
    if n == 0 {
        return Err("the system has no atoms".into());
    }
    if a.positions.iter().chain(&a.velocities).flatten().any(|x| !x.is_finite()) {
        return Err("the state holds NaN or infinite positions or velocities: roll back or reset first".into());
    }
    let s = Scale::of(inp.units);
    let p = inp.params;
    let b = inp.sim_box;
    let lo = b.lo;
    let len = b.length();
    let mut warnings = Vec::new();
    let mut data = String::new();
    let mut script = String::new();

    // Data file: box from the origin (a shift by -lo keeps gravity's energy reference).
    let _ = writeln!(
        data,
        "LAMMPS data file written by argon-sandbox {} from {} ({} units)\n",
        env!("CARGO_PKG_VERSION"),
        inp.source,
        inp.units.name()
    );
    let ntypes = p.species.len().max(1);
    let _ = writeln!(data, "{n} atoms\n{ntypes} atom types\n");
    for (k, axis) in ["x", "y", "z"].iter().enumerate() {
        let _ = writeln!(data, "0.0 {} {axis}lo {axis}hi", num(len[k] * s.length));
    }
    let _ = writeln!(data, "\nMasses\n");
    for (t, sp) in p.species.iter().enumerate() {
        let _ = writeln!(data, "{} {} # {}", t + 1, num(sp.mass * s.mass), sp.name);
    }
    let _ = writeln!(data, "\nAtoms # atomic\n");
    for (i, (x, &t)) in a.positions.iter().zip(&a.types).enumerate() {
        let w = b.wrap(*x);
        let c: Vec<String> = (0..3).map(|k| num((w[k] - lo[k]) * s.length)).collect();
        let _ = writeln!(data, "{} {} {} {} {}", i + 1, t + 1, c[0], c[1], c[2]);
    }
    let _ = writeln!(data, "\nVelocities\n");
    for (i, v) in a.velocities.iter().enumerate() {
        let _ = writeln!(
            data,
            "{} {} {} {}",
            i + 1,
            num(v[0] * s.velocity),
            num(v[1] * s.velocity),
            num(v[2] * s.velocity)
        );
    }

    // Header and system.
    let _ =
        writeln!(script, "# LAMMPS input written by argon-sandbox {} from {}.", env!("CARGO_PKG_VERSION"), inp.source);
    let _ = writeln!(script, "# Run it next to {DATA_FILE}: lmp -in {INPUT_FILE}");
    if inp.units != LammpsUnits::Lj {
        let _ = writeln!(
            script,
            "# Argon: sigma = {ARGON_SIGMA_ANGSTROM} A, epsilon/k_B = {ARGON_EPSILON_K} K, m = {ARGON_MASS_U} g/mol; \
             tau = {} {}.",
            num(s.time),
            if inp.units == LammpsUnits::Real { "fs" } else { "ps" }
        );
    }
    if lo != [0.0; 3] {
        let _ = writeln!(script, "# The box is shifted by {:?} sigma to start at the origin.", lo.map(|x| -x));
    }
    let bnd: Vec<&str> = b.periodic.iter().map(|&q| if q { "p" } else { "f" }).collect();
    let _ = writeln!(script, "\nunits           {}", inp.units.name());
    let _ = writeln!(script, "atom_style      atomic\ndimension       3");
    let _ = writeln!(script, "boundary        {} {} {}", bnd[0], bnd[1], bnd[2]);
    let _ = writeln!(script, "read_data       {DATA_FILE}");

    super::lammps_pair::pair_potential(&mut script, p, &s);
    let _ = writeln!(script, "neighbor        {} bin", num(p.skin * s.length));
    let _ = writeln!(script, "neigh_modify    every 1 delay 0 check yes");
    let _ = writeln!(script, "timestep        {}", num(p.dt * s.time));

    // Walls.
    let wall = |w: &WallParams| {
        format!("{} {} {}", num(w.epsilon * s.energy), num(w.sigma * s.length), num(w.cutoff * s.length))
    };
    let walled: Vec<usize> = (0..3).filter(|&k| !b.periodic[k]).collect();
    if !walled.is_empty() {
        let _ = writeln!(
            script,
            "\n# 9-3 LJ walls on the box faces of every walled axis (energy shifted to zero at the cutoff)."
        );
        let mut line = String::from("fix             walls all wall/lj93");
        for &k in &walled {
            let axis = ["x", "y", "z"][k];
            let _ = write!(line, " {axis}lo EDGE {} {axis}hi EDGE {}", wall(&p.wall), wall(&p.wall));
        }
        let _ = writeln!(script, "{line} units box");
        let _ = writeln!(script, "fix_modify      walls energy yes virial yes");
    }

    // Obstacles.
    if !inp.shapes.is_empty() {
        obstacles(&mut script, &mut warnings, inp, &s, &wall(&p.obstacle));
    }
    if let Some(f) = &p.surface_friction {
        super::lammps_friction::surface_friction(&mut script, &mut warnings, inp, &s, f);
    }

    // Body forces.
    if p.gravity != 0.0 {
        let _ = writeln!(script, "\n# Gravity along -y (energy m g y, as argon-sandbox counts it).");
        let _ =
            writeln!(script, "fix             gravity all gravity {} vector 0 -1 0", num(p.gravity * s.acceleration));
        let _ = writeln!(script, "fix_modify      gravity energy yes");
    }
    if p.drive != 0.0 {
        let _ = writeln!(script, "\n# Drive along +x.");
        let _ = writeln!(script, "fix             drive all gravity {} vector 1 0 0", num(p.drive * s.acceleration));
        if b.periodic[0] {
            let _ = writeln!(
                script,
                "# Along a periodic x the drive does work and has no potential energy (as in argon-sandbox)."
            );
        } else {
            let _ = writeln!(script, "fix_modify      drive energy yes");
        }
    }
    if let Some(t) = p.tether.filter(|t| t.is_active(n)) {
        let msg = format!(
            "the tether (a spring pulling atom {} toward the mouse) is an interactive tool and is not exported",
            t.atom + 1
        );
        let _ = writeln!(script, "\n# Not exported: {msg}.");
        warnings.push(msg);
    }
    if let Some(piston) = &p.piston {
        let msg = format!(
            "the piston (the top wall moving under {:.4} epsilon/sigma^3) is not exported: LAMMPS gets a fixed \
             top wall at the box top; rescale the box with fix press/berendsen or fix nph along y for a similar \
             constant-pressure run",
            piston.pressure
        );
        let _ = writeln!(script, "\n# Not exported: {msg}.");
        warnings.push(msg);
    }
    if let Some(t) = &p.tunnel {
        let (lo, hi) = t.bounds(b);
        let msg = format!(
            "the wind tunnel's inflow zone (atoms with {} <= x < {} get fresh Maxwell-Boltzmann velocities at the \
             target temperature around a stream of {} along +x every step) is not exported: LAMMPS has no such fix; \
             a dynamic group of that slab (region block + group dynamic every 1) under fix langevin with a short \
             damping time, with the stream added by fix aveforce or fix flow/gauss on the same group, approximates it",
            num(lo * s.length),
            num(hi * s.length),
            num(t.speed * s.velocity)
        );
        let _ = writeln!(script, "\n# Not exported: {msg}.");
        warnings.push(msg);
    }
    let capped = capped_atoms(inp);
    if capped > 0 {
        let msg = format!(
            "{capped} atoms sit closer than sigma/2 to a wall or obstacle, where argon-sandbox continues the 9-3 \
             potential linearly and LAMMPS does not: their energies differ; equilibrate before exporting"
        );
        let _ = writeln!(script, "\n# Warning: {msg}.");
        warnings.push(msg);
    }

    // Temperature and ensemble.
    let dof = degrees_of_freedom(n, b, p, !inp.shapes.is_empty());
    let removed = 3 * n as i64 - dof as i64;
    let _ = writeln!(script, "\n# Temperature with argon-sandbox's degrees of freedom: 3N - {removed}.");
    let _ = writeln!(script, "compute         sandbox_temp all temp");
    let _ = writeln!(script, "compute_modify  sandbox_temp extra/dof {removed}");
    let seed = (p.seed % 900_000_000) + 1;
    let t = num(p.temperature * s.temperature);
    let _ = writeln!(script, "fix             integrate all nve");
    match p.thermostat {
        Thermostat::Nve => {
            let _ = writeln!(script, "# NVE: velocity Verlet alone.");
        }
        Thermostat::Berendsen { tau, relative_to_flow } => {
            let _ = writeln!(script, "fix             thermostat all temp/berendsen {t} {t} {}", num(tau * s.time));
            thermostat_temp(&mut script, &mut warnings, b, relative_to_flow);
        }
        Thermostat::Csvr { tau, relative_to_flow } => {
            let _ = writeln!(script, "fix             thermostat all temp/csvr {t} {t} {} {seed}", num(tau * s.time));
            thermostat_temp(&mut script, &mut warnings, b, relative_to_flow);
        }
        Thermostat::Hmc { .. } | Thermostat::HmcNpt { .. } => {
            let msg = format!(
                "argon-sandbox samples this state by hybrid Monte Carlo ({}), which LAMMPS has no fix for: the deck \
                 samples the same temperature with CSVR (fix temp/csvr) at constant volume instead",
                p.thermostat.name()
            );
            let _ = writeln!(script, "# {msg}.");
            let _ = writeln!(
                script,
                "fix             thermostat all temp/csvr {t} {t} {} {seed}",
                num(100.0 * p.dt * s.time)
            );
            let _ = writeln!(script, "fix_modify      thermostat temp sandbox_temp");
            warnings.push(msg);
        }
        Thermostat::Langevin { damp } => {
            let _ = writeln!(script, "fix             thermostat all langevin {t} {t} {} {seed}", num(damp * s.time));
            let _ = writeln!(
                script,
                "# LAMMPS integrates Langevin differently (and with other random numbers): statistics agree, not trajectories."
            );
        }
    }

    // Output.
    let _ = writeln!(script, "\nthermo_style    custom step temp pe ke etotal press");
    let _ = writeln!(script, "thermo_modify   temp sandbox_temp norm yes flush yes");
    let _ = writeln!(script, "thermo          {}", inp.thermo_every.max(1));
    let _ = writeln!(script, "run             {}", inp.steps);
    Ok(LammpsDeck { input: script, data, warnings })
}

/// Atoms closer than the 9-3 cap (sigma/2) to a wall or obstacle.
fn capped_atoms(inp: &ExportInput) -> usize {
    let b = inp.sim_box;
    let p = inp.params;
    let field = crate::physics::obstacles::ObstacleField::bake(inp.shapes, b, 0.1);
    inp.atoms
        .positions
        .iter()
        .filter(|x| {
            let wall = (0..3).any(|k| !b.periodic[k] && (x[k] - b.lo[k]).min(b.hi[k] - x[k]) < 0.5 * p.wall.sigma);
            let obstacle = field.as_ref().is_some_and(|f| f.sample(x[0], x[1]).distance < 0.5 * p.obstacle.sigma);
            wall || obstacle
        })
        .count()
}

/// Regions and `fix wall/region` for every shape (and the periodic images near the box).
/// The temperature compute a rescaling thermostat fix uses: the deck's `sandbox_temp`, or
/// relative to the flow a `compute temp/profile` over the same x-y bins through the whole
/// depth (`flow::Grid::for_thermostat`; LAMMPS bins the box as we do and weighs by mass),
/// with 3 degrees of freedom out per bin. Ours are out per occupied bin only, so the mapping
/// is approximate where bins stay empty: a warning says so.
fn thermostat_temp(script: &mut String, warnings: &mut Vec<String>, b: &SimBox, relative_to_flow: bool) {
    if !relative_to_flow {
        let _ = writeln!(script, "fix_modify      thermostat temp sandbox_temp");
        return;
    }
    let grid = crate::flow::Grid::for_thermostat(b);
    let (nx, ny) = (grid.n[0], grid.n[1]);
    let _ =
        writeln!(script, "# relative_to_flow: the thermostat measures and rescales velocities relative to each bin's");
    let _ = writeln!(script, "# mean (mass-weighted) velocity, bins of about 2 sigma in x-y through the whole depth.");
    let _ = writeln!(script, "compute         flow_temp all temp/profile 1 1 1 xy {nx} {ny}");
    let _ = writeln!(script, "compute_modify  flow_temp extra/dof {}", 3 * nx * ny);
    let _ = writeln!(script, "fix_modify      thermostat temp flow_temp");
    let msg = format!(
        "relative_to_flow maps to compute temp/profile over the same {nx} x {ny} bins, whose degrees of freedom \
         are 3N - 3 x {} (extra/dof, every bin); argon-sandbox removes 3 per occupied bin only, so where bins \
         stay empty (inside obstacles, vapour) LAMMPS's relative temperature reads slightly low and its thermostat \
         holds the thermal motion slightly hotter",
        nx * ny
    );
    let _ = writeln!(script, "# {msg}.");
    warnings.push(msg);
}

fn obstacles(script: &mut String, warnings: &mut Vec<String>, inp: &ExportInput, s: &Scale, coeffs: &str) {
    let b = inp.sim_box;
    let len = b.length();
    let lo = b.lo;
    // Regions span z well beyond the box, so their z faces never touch an atom.
    let zspan = (len[2] + 100.0) * s.length;
    let (zlo, zhi) = (num(-zspan), num(len[2] * s.length + zspan));
    let _ = writeln!(
        script,
        "\n# Obstacles: each shape a region (extruded through z) with a 9-3 LJ wall on its surface,\n\
         # fix wall/region lj93, the potential argon-sandbox puts on the exact distance to the shape."
    );
    let reach = inp.params.obstacle.cutoff;
    let mut approximate = Vec::new();
    let mut id = 0usize;
    for (si, shape) in inp.shapes.iter().enumerate() {
        let (blo, bhi) = shape.bounds();
        let shifts = |k: usize| -> Vec<f64> {
            if !b.periodic[k] {
                return vec![0.0];
            }
            let mut v = vec![0.0];
            if blo[k] - reach < lo[k] {
                v.push(len[k]);
            }
            if bhi[k] + reach > lo[k] + len[k] {
                v.push(-len[k]);
            }
            v
        };
        for sx in shifts(0) {
            for sy in shifts(1) {
                let shape = shape.translated([sx - lo[0], sy - lo[1]]).scaled(s.length);
                let name = format!("obs{id}");
                id += 1;
                let image = if sx != 0.0 || sy != 0.0 { " (periodic image)" } else { "" };
                let _ = writeln!(script, "# obstacles[{si}]: {}{image}", shape.kind());
                if !region(script, &name, &shape, &zlo, &zhi, s.length) && sx == 0.0 && sy == 0.0 {
                    approximate.push(format!("obstacles[{si}] ({})", shape.kind()));
                }
                let _ = writeln!(script, "fix             {name} all wall/region {name} lj93 {coeffs}");
                let _ = writeln!(script, "fix_modify      {name} energy yes virial yes");
            }
        }
    }
    if !approximate.is_empty() {
        let msg = format!(
            "{} become unions of LAMMPS regions; LAMMPS sums the wall contacts of the pieces, so near joints and corners \
             the force differs from argon-sandbox's distance to the whole shape (circles and rectangles are exact)",
            approximate.join(", ")
        );
        let _ = writeln!(script, "# Warning: {msg}.");
        warnings.push(msg);
    }
}

/// Writes the region(s) for one shape (already in LAMMPS units) as `name`, side out.
/// Returns whether the region is exact.
fn region(script: &mut String, name: &str, shape: &Shape, zlo: &str, zhi: &str, unit_length: f64) -> bool {
    let mut parts: Vec<String> = Vec::new();
    let mut piece = |script: &mut String, body: String| {
        let pname = format!("{name}_{}", parts.len());
        let _ = writeln!(script, "region          {pname} {body}");
        parts.push(pname);
    };
    let cyl = |c: [f64; 2], r: f64| format!("cylinder z {} {} {} {zlo} {zhi} units box", num(c[0]), num(c[1]), num(r));
    let bar = |script: &mut String, a: [f64; 2], bb: [f64; 2], r: f64| {
        // A block along the segment a-b, half thickness r, rotated about its centre.
        let (dx, dy) = (bb[0] - a[0], bb[1] - a[1]);
        let l = (dx * dx + dy * dy).sqrt();
        let c = [0.5 * (a[0] + bb[0]), 0.5 * (a[1] + bb[1])];
        rotated_block(script, c, [0.5 * l, r], dy.atan2(dx), zlo, zhi)
    };
    let exact = match shape {
        Shape::Circle { centre, radius } => {
            let _ = writeln!(script, "region          {name} {} side out", cyl(*centre, *radius));
            return true;
        }
        Shape::Rectangle { centre, half_size, angle_deg } => {
            let body = rotated_block(script, *centre, *half_size, angle_deg.to_radians(), zlo, zhi);
            let _ = writeln!(script, "region          {name} {body} side out");
            return true;
        }
        Shape::Segment { a, b, thickness } => {
            let r = 0.5 * thickness;
            piece(script, cyl(*a, r));
            piece(script, cyl(*b, r));
            if a != b {
                let body = bar(script, *a, *b, r);
                piece(script, body);
            }
            false
        }
        Shape::Stroke { points, radius } => {
            for q in points {
                piece(script, cyl(*q, *radius));
            }
            for w in points.windows(2) {
                if w[0] != w[1] {
                    let body = bar(script, w[0], w[1], *radius);
                    piece(script, body);
                }
            }
            false
        }
        Shape::Polygon { points } => {
            let r = POLYGON_EDGE_RADIUS * unit_length;
            for q in points {
                piece(script, cyl(*q, r));
            }
            for i in 0..points.len() {
                let (p0, p1) = (points[i], points[(i + 1) % points.len()]);
                if p0 != p1 {
                    let body = bar(script, p0, p1, r);
                    piece(script, body);
                }
            }
            false
        }
    };
    if parts.len() == 1 {
        // A single piece (a stroke of one point): rename through a one-member union.
        let _ = writeln!(script, "region          {name} union 1 {} side out", parts[0]);
    } else {
        let _ = writeln!(script, "region          {name} union {} {} side out", parts.len(), parts.join(" "));
    }
    exact
}

/// A block of half extents `half` centred at `c`, rotated by `angle` (radians, counter-clockwise
/// about z). Axis-aligned blocks are written plainly; others through an angle variable.
fn rotated_block(script: &mut String, c: [f64; 2], half: [f64; 2], angle: f64, zlo: &str, zhi: &str) -> String {
    let box_of = |h: [f64; 2]| {
        format!(
            "block {} {} {} {} {zlo} {zhi} units box",
            num(c[0] - h[0]),
            num(c[0] + h[0]),
            num(c[1] - h[1]),
            num(c[1] + h[1])
        )
    };
    if angle == 0.0 {
        return box_of(half);
    }
    let var = format!("rot{}", script.matches("\nvariable        rot").count());
    let _ = writeln!(script, "variable        {var} equal {}", num(angle));
    format!("{} rotate v_{var} {} {} 0 0 0 1", box_of(half), num(c[0]), num(c[1]))
}

/// Writes the deck into `dir` (created if needed), each file atomically. Returns the paths.
pub fn write_deck(dir: &Path, deck: &LammpsDeck) -> std::io::Result<[PathBuf; 2]> {
    std::fs::create_dir_all(dir)?;
    let input = dir.join(INPUT_FILE);
    let data = dir.join(DATA_FILE);
    write_atomic(&data, deck.data.as_bytes())?;
    write_atomic(&input, deck.input.as_bytes())?;
    Ok([input, data])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The LJ-units deck of `atoms` in `b` with `p`, no shapes, no steps.
    fn lj_deck(b: &SimBox, p: &SimParams, atoms: &AtomState) -> LammpsDeck {
        build_deck(&ExportInput {
            sim_box: b,
            params: p,
            atoms,
            shapes: &[],
            source: "test",
            units: LammpsUnits::Lj,
            steps: 0,
            thermo_every: 1,
        })
        .unwrap()
    }

    #[test]
    fn real_units_reproduce_argon_tau_and_temperature() {
        let s = Scale::of(LammpsUnits::Real);
        // tau ~ 2156 fs; kinetic energy of unit reduced speed is epsilon / 2.
        assert!((s.time - 2156.0).abs() < 5.0, "{}", s.time);
        let mvv2e = 48.88821291 * 48.88821291;
        let ke = 0.5 * mvv2e * s.mass * s.velocity * s.velocity;
        assert!((ke - 0.5 * s.energy).abs() < 1e-12 * s.energy);
        let m = Scale::of(LammpsUnits::Metal);
        assert!((m.time * 1000.0 - s.time).abs() < 1e-3 * s.time);
    }

    #[test]
    fn relative_to_flow_becomes_temp_profile_over_the_same_bins() {
        let b = SimBox::new([13.0, 9.0, 5.0], [true, false, true]);
        let atoms = AtomState {
            positions: vec![[1.0, 2.0, 3.0]],
            velocities: vec![[0.1; 3]],
            types: vec![0],
            ..Default::default()
        };
        let deck = |relative_to_flow: bool| {
            let p = SimParams { thermostat: Thermostat::Csvr { tau: 1.0, relative_to_flow }, ..SimParams::default() };
            lj_deck(&b, &p, &atoms)
        };
        let on = deck(true);
        assert!(on.input.contains("compute         flow_temp all temp/profile 1 1 1 xy 7 5\n"), "{}", on.input);
        assert!(on.input.contains("compute_modify  flow_temp extra/dof 105\n"), "{}", on.input);
        assert!(on.input.contains("fix_modify      thermostat temp flow_temp\n"), "{}", on.input);
        assert!(on.warnings.iter().any(|w| w.contains("temp/profile")), "{:?}", on.warnings);
        let off = deck(false);
        assert!(
            !off.input.contains("temp/profile") && off.input.contains("fix_modify      thermostat temp sandbox_temp")
        );
    }

    #[test]
    fn an_empty_or_broken_state_is_refused() {
        let b = SimBox::new([5.0; 3], [true; 3]);
        let p = SimParams::default();
        let mut atoms = AtomState::default();
        let inp = |atoms: &AtomState| {
            build_deck(&ExportInput {
                sim_box: &b,
                params: &p,
                atoms,
                shapes: &[],
                source: "test",
                units: LammpsUnits::Lj,
                steps: 0,
                thermo_every: 1,
            })
        };
        assert!(inp(&atoms).unwrap_err().contains("no atoms"));
        atoms.positions.push([f64::NAN, 0.0, 0.0]);
        atoms.velocities.push([0.0; 3]);
        atoms.types.push(0);
        assert!(inp(&atoms).unwrap_err().contains("NaN"));
    }

    #[test]
    fn the_piston_is_flagged_as_not_exported() {
        let b = SimBox::new([6.0, 10.0, 6.0], [true, false, true]);
        let p =
            SimParams { piston: Some(crate::physics::piston::PistonParams::at_pressure(1.5)), ..SimParams::default() };
        let atoms = AtomState {
            positions: vec![[3.0, 5.0, 3.0]],
            velocities: vec![[0.0; 3]],
            types: vec![0],
            ..Default::default()
        };
        let deck = lj_deck(&b, &p, &atoms);
        assert!(deck.warnings.iter().any(|w| w.contains("piston") && w.contains("1.5000")), "{:?}", deck.warnings);
        assert!(deck.input.contains("# Not exported: the piston"));
    }

    #[test]
    fn the_tunnel_is_flagged_as_not_exported() {
        let b = SimBox::new([12.0, 6.0, 6.0], [true; 3]);
        let p = SimParams {
            tunnel: Some(crate::physics::tunnel::Tunnel { speed: 0.5, zone: 3.0 }),
            ..SimParams::default()
        };
        let atoms = AtomState {
            positions: vec![[3.0, 3.0, 3.0]],
            velocities: vec![[0.0; 3]],
            types: vec![0],
            ..Default::default()
        };
        let deck = lj_deck(&b, &p, &atoms);
        assert!(
            deck.warnings.iter().any(|w| w.contains("inflow zone") && w.contains("0 <= x < 3")),
            "{:?}",
            deck.warnings
        );
        assert!(deck.input.contains("# Not exported: the wind tunnel's inflow zone"), "{}", deck.input);
        let plain = lj_deck(&b, &SimParams::default(), &atoms);
        assert!(!plain.input.contains("inflow zone"));
    }
}
