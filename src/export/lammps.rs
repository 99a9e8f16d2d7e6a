//! A LAMMPS input deck (input script `in.argon` + data file `data.argon`) that reproduces a
//! system: box and boundaries, atoms with velocities, `lj/cut` with the same cutoffs and shift
//! (`lammps_pair.rs`: a `pair_coeff` with its cutoff per species pair),
//! 9-3 walls (`fix wall/lj93`), obstacles (`lammps_obstacles.rs`: `region` + `fix wall/region
//! lj93`), gravity and
//! drive (`fix gravity`), the ensemble, dt and the temperature's degrees of freedom.
//!
//! Obstacles become regions, not frozen wall atoms: argon-sandbox's obstacles are smooth 9-3
//! surfaces of the exact distance to each shape, and `fix wall/region lj93` is that same
//! potential, so circles (cylinders) and rectangles (blocks, rotated ones through `rotate`)
//! match to round-off. Frozen atoms would make a bumpy LJ surface with different physics.
//! Segments and strokes become unions of cylinders and rotated blocks, polygons unions of thin
//! edge walls: LAMMPS sums the contacts with the pieces of a union, which differs from the
//! distance to the whole shape near joints and corners; those are flagged as warnings. What
//! cannot map at all (the tether, the piston, atoms inside the linear wall cap, surface
//! friction at obstacles other than circles) is a comment and a warning. The wind tunnel's
//! inflow zone becomes a Langevin zone with the stream as bias (`lammps_tunnel.rs`). Surface friction at the walls maps to `fix
//! langevin` on a dynamic group near each walled face with a `temp/partial` bias leaving out
//! the normal axis (tangential only, as here; other random numbers).
//!
//! Units: `lj` (reduced, as inside), or `real` / `metal` for argon (sigma = 3.405 Å,
//! epsilon/k_B = 119.8 K, m = 39.948 g/mol), converted with LAMMPS's own constants so the
//! deck's dynamics are the reduced dynamics exactly.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::analysis::degrees_of_freedom;
use crate::flow::FieldSpec;
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
    /// Dye rakes in the system (not exported; named in a warning with the tagged atoms).
    pub rakes: usize,
    /// `run` length written at the end of the script.
    pub steps: u64,
    pub thermo_every: u64,
}

/// The two files, and what did not map exactly; with field output, also its description
/// (`fields.json`, see `lammps_fields.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct LammpsDeck {
    pub input: String,
    pub data: String,
    pub warnings: Vec<String>,
    pub fields: Option<super::lammps_fields::FieldsMeta>,
}

/// File names inside the export folder.
pub const INPUT_FILE: &str = "in.argon";
pub const DATA_FILE: &str = "data.argon";

/// How to run the deck: one core, MPI ranks, the GPU and KOKKOS packages (for the deck's
/// header and the export's printout).
pub fn how_to_run(fields: bool) -> Vec<String> {
    let mut v = vec![
        format!("lmp -in {INPUT_FILE}                               (one core)"),
        format!("mpiexec -n N lmp -in {INPUT_FILE}                  (N MPI ranks: any N, e.g. one per core)"),
        format!("mpiexec -n N lmp -sf gpu -pk gpu 1 -in {INPUT_FILE} (GPU package, one GPU shared by N ranks)"),
        format!("mpiexec -n G lmp -k on g 1 -sf kk -in {INPUT_FILE}  (KOKKOS, one rank per GPU; -k on g 1 per rank)"),
        "Fixes without a GPU or KOKKOS version (the variables of the friction, fix ave/chunk) run on the \
         host there."
            .to_string(),
    ];
    if fields {
        v.push(
            "then: argon-sandbox lammps-fields . --out fields (the .vti/.pvd and CSV files of `run --fields`)".into(),
        );
    }
    v
}

/// Formats a number in shortest round-trip form.
pub(super) fn num(x: f64) -> String {
    format!("{x:?}")
}

/// Builds the deck. Fails only on states LAMMPS cannot take at all (no atoms, NaN).
pub fn build_deck(inp: &ExportInput) -> Result<LammpsDeck, String> {
    build_deck_with_fields(inp, None)
}

/// Builds the deck, with the flow fields of `fields` on argon-sandbox's grid and the obstacle
/// forces written by LAMMPS when given (`lammps_fields.rs`). Fails on states LAMMPS cannot take
/// at all (no atoms, NaN) and on a field spec the box cannot honour.
pub fn build_deck_with_fields(inp: &ExportInput, fields: Option<&FieldSpec>) -> Result<LammpsDeck, String> {
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
    let _ =
        writeln!(script, "# Run it in the folder of {DATA_FILE}; the deck runs unchanged on any number of MPI ranks:");
    for line in how_to_run(fields.is_some()) {
        let _ = writeln!(script, "#   {line}");
    }
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
    let placed = if inp.shapes.is_empty() {
        Vec::new()
    } else {
        super::lammps_obstacles::obstacles(&mut script, &mut warnings, inp, &s, &wall(&p.obstacle))
    };
    let mut reactions = Vec::new();
    if let Some(f) = &p.surface_friction {
        super::lammps_friction::surface_friction(&mut script, inp, &s, f);
        reactions = super::lammps_obstacles::obstacle_friction(&mut script, &mut warnings, inp, &s, f, &placed);
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
    let tagged = a.dye.iter().filter(|&&d| d != 0).count();
    if tagged > 0 || inp.rakes > 0 {
        let msg = format!(
            "the dye ({tagged} atoms tagged, {} rakes) is not exported: the deck carries no per-atom tag and \
             LAMMPS has no stock fix that tags the atoms crossing a line; the flow is the same without it (dye \
             does not act on the atoms)",
            inp.rakes
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

    if let Some(t) = &p.tunnel {
        super::lammps_tunnel::tunnel(&mut script, inp, &s, t);
        if let Some(spin) = t.start_spin {
            let msg = format!(
                "the tunnel's start spin (the obstacles' surfaces moving at {:.3} U for the first {:.1} tau of a run) \
                 is not exported: LAMMPS has no stock fix dragging toward a moving surface for a while; a deck \
                 exported at the start sheds from thermal noise, later (in the vortex street about 180 tau later), \
                 with the same Strouhal number and drag once shedding",
                spin.spin, spin.time
            );
            let _ = writeln!(script, "\n# Not exported: {msg}.");
            warnings.push(msg);
        }
    }

    // Output.
    let meta = fields
        .map(|spec| super::lammps_fields::fields_output(&mut script, inp, &s, spec, &placed, &reactions))
        .transpose()?;
    let _ = writeln!(script, "\nthermo_style    custom step temp pe ke etotal press");
    let _ = writeln!(script, "thermo_modify   temp sandbox_temp norm yes flush yes format float %.15g");
    let _ = writeln!(script, "thermo          {}", inp.thermo_every.max(1));
    let _ = writeln!(script, "run             {}", inp.steps);
    Ok(LammpsDeck { input: script, data, warnings, fields: meta })
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

/// The temperature compute a rescaling thermostat fix uses: the deck's `sandbox_temp`, or
/// relative to the flow a `compute temp/profile` over the same x-y bins through the whole
/// depth (`flow::Grid::for_thermostat`; LAMMPS bins the box as we do and weighs by mass),
/// with 3 degrees of freedom out per bin (temp/profile takes them out itself: `extra/dof 0`).
/// Ours are out per occupied bin only, so the mapping
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
    // temp/profile removes 3 degrees of freedom per bin itself (LAMMPS 2025): no extra/dof on
    // top (3 per bin twice read 9 % hot in the twin eddies and held the flow 9 % cold).
    let _ = writeln!(script, "compute_modify  flow_temp extra/dof 0");
    let _ = writeln!(script, "fix_modify      thermostat temp flow_temp");
    let msg = format!(
        "relative_to_flow maps to compute temp/profile over the same {nx} x {ny} bins, whose degrees of freedom \
         are 3N - 3 x {} (LAMMPS removes 3 in every bin); argon-sandbox removes 3 per occupied bin only, so where bins \
         stay empty (inside obstacles, vapour) LAMMPS's relative temperature reads slightly low and its thermostat \
         holds the thermal motion slightly hotter",
        nx * ny
    );
    let _ = writeln!(script, "# {msg}.");
    warnings.push(msg);
}

/// Writes the deck into `dir` (created if needed), each file atomically, with `fields.json`
/// when the deck writes fields. Returns the paths of the input and data files.
pub fn write_deck(dir: &Path, deck: &LammpsDeck) -> std::io::Result<[PathBuf; 2]> {
    std::fs::create_dir_all(dir)?;
    let input = dir.join(INPUT_FILE);
    let data = dir.join(DATA_FILE);
    write_atomic(&data, deck.data.as_bytes())?;
    if let Some(meta) = &deck.fields {
        let text = serde_json::to_string_pretty(meta).map_err(std::io::Error::other)?;
        write_atomic(&dir.join(super::lammps_fields::META_FILE), text.as_bytes())?;
    }
    write_atomic(&input, deck.input.as_bytes())?;
    Ok([input, data])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The LJ-units deck of `atoms` in `b` with `p`, no shapes, no steps.
    fn lj_deck(b: &SimBox, p: &SimParams, atoms: &AtomState) -> LammpsDeck {
        try_lj_deck(b, p, atoms, 0).unwrap()
    }

    /// The LJ-units deck of `atoms` in `b` with `p` and `rakes` dye rakes, no shapes, no steps.
    fn try_lj_deck(b: &SimBox, p: &SimParams, atoms: &AtomState, rakes: usize) -> Result<LammpsDeck, String> {
        build_deck(&ExportInput {
            sim_box: b,
            params: p,
            atoms,
            shapes: &[],
            source: "test",
            units: LammpsUnits::Lj,
            rakes,
            steps: 0,
            thermo_every: 1,
        })
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
        assert!(on.input.contains("compute_modify  flow_temp extra/dof 0\n"), "{}", on.input);
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
        let inp = |atoms: &AtomState| try_lj_deck(&b, &p, atoms, 0);
        assert!(inp(&atoms).unwrap_err().contains("no atoms"));
        atoms.positions.push([f64::NAN, 0.0, 0.0]);
        atoms.velocities.push([0.0; 3]);
        atoms.types.push(0);
        assert!(inp(&atoms).unwrap_err().contains("NaN"));
    }

    /// Dye tags and rakes are named as not exported (the deck would otherwise run without them
    /// silently); a system without dye gets no such warning.
    #[test]
    fn dye_is_flagged_as_not_exported() {
        let b = SimBox::new([5.0; 3], [true; 3]);
        let p = SimParams::default();
        let mut atoms = AtomState::default();
        for k in 0..4 {
            atoms.positions.push([1.0 + k as f64, 1.0, 1.0]);
            atoms.velocities.push([0.0; 3]);
            atoms.types.push(0);
        }
        let deck = |atoms: &AtomState, rakes: usize| try_lj_deck(&b, &p, atoms, rakes).unwrap();
        let dye = |d: &LammpsDeck| d.warnings.iter().find(|w| w.contains("dye")).cloned();
        assert_eq!(dye(&deck(&atoms, 0)), None);
        atoms.dye = vec![0, 2, 2, 0];
        let w = dye(&deck(&atoms, 0)).expect("tagged atoms are named");
        assert!(w.contains("2 atoms tagged, 0 rakes"), "{w}");
        atoms.dye = vec![0; 4];
        let d = deck(&atoms, 3);
        assert!(dye(&d).is_some_and(|w| w.contains("0 atoms tagged, 3 rakes")), "{:?}", d.warnings);
        assert!(d.input.contains("# Not exported: the dye"), "the deck says so too");
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
    fn the_start_spin_is_flagged_as_not_exported() {
        use crate::physics::tunnel::{StartSpin, Tunnel};
        let b = SimBox::new([12.0, 6.0, 6.0], [true; 3]);
        let atoms = AtomState {
            positions: vec![[3.0, 3.0, 3.0]],
            velocities: vec![[0.0; 3]],
            types: vec![0],
            ..Default::default()
        };
        let spin = Some(StartSpin { spin: 1.0, time: 35.0 });
        let p = SimParams { tunnel: Some(Tunnel { speed: 0.5, zone: 3.0, start_spin: spin }), ..SimParams::default() };
        let deck = lj_deck(&b, &p, &atoms);
        assert!(
            deck.warnings.iter().any(|w| w.contains("start spin") && w.contains("35.0 tau")),
            "{:?}",
            deck.warnings
        );
        assert!(deck.input.contains("# Not exported: the tunnel's start spin"));
        let p = SimParams { tunnel: Some(Tunnel { start_spin: None, ..p.tunnel.unwrap() }), ..p };
        assert!(!lj_deck(&b, &p, &atoms).warnings.iter().any(|w| w.contains("start spin")));
    }

    #[test]
    fn the_tunnel_becomes_a_langevin_zone_with_the_stream_as_bias() {
        let b = SimBox::new([12.0, 6.0, 6.0], [true; 3]);
        let p = SimParams {
            tunnel: Some(crate::physics::tunnel::Tunnel { speed: 0.5, zone: 3.0, start_spin: None }),
            thermostat: Thermostat::Csvr { tau: 1.0, relative_to_flow: true },
            ..SimParams::default()
        };
        let atoms = AtomState {
            positions: vec![[3.0, 3.0, 3.0]],
            velocities: vec![[0.0; 3]],
            types: vec![0],
            ..Default::default()
        };
        let deck = lj_deck(&b, &p, &atoms);
        assert!(!deck.warnings.iter().any(|w| w.contains("inflow zone")), "{:?}", deck.warnings);
        let damp = num(10.0 * p.dt);
        for line in [
            "region          tunnel_zone block INF 3.0 INF INF INF INF units box\n".to_string(),
            "group           tunnel_zone dynamic all region tunnel_zone every 1\n".to_string(),
            "compute         tunnel_stream tunnel_zone temp/ramp vx 0.5 0.5 y 0.0 6.0 units box\n".to_string(),
            format!("fix             tunnel tunnel_zone langevin 1.0 1.0 {damp} 4\n"),
            "fix_modify      tunnel temp tunnel_stream\n".to_string(),
        ] {
            assert!(deck.input.contains(&line), "no {line} in {}", deck.input);
        }
        assert!(deck.input.find("fix             tunnel") > deck.input.find("fix             thermostat"));
        let plain = lj_deck(&b, &SimParams { tunnel: None, ..p }, &atoms);
        assert!(!plain.input.contains("tunnel"));
    }
}
