//! The LAMMPS deck's flow-field and obstacle-force output, beside `lammps.rs`, and the
//! description of it ([`FieldsMeta`], `fields.json` beside the deck) that `argon-sandbox
//! lammps-fields` reads to turn LAMMPS's files into the `.vti`/`.pvd` and CSV files `run
//! --fields` writes.
//!
//! The fields: `compute chunk/atom` with an atom-style variable that gives each atom the flat
//! index (+1) of its bin on argon-sandbox's own grid (`flow::Grid`: the same bins, x fastest,
//! wrapped on periodic axes, clamped at walls, outside a z slab none), and `fix ave/chunk`
//! sampling every `every` steps over windows of `samples_per_window` samples: per bin the
//! atom count and the means of m, m v and m |v|^2, from which the converter rebuilds the exact
//! per-bin sums `run --fields` averages (count, mass, momentum, m v^2) and finishes them with
//! the same code (`flow::finish`: density, velocity, temperature about the bin's mean,
//! vorticity, Mach). The forces: per obstacle, the sum of its `fix wall/region` vectors (the
//! force on the wall, for the shape and its periodic images) minus the friction's
//! deterministic part summed over its shell (`lammps_obstacle_friction.rs`; the noise averages to zero), averaged by `fix
//! ave/time` over every step of each thermo interval. Wall faces' forces are not written.
//! Text generation and serde only.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::lammps::{ExportInput, Scale, num};
use super::lammps_obstacle_friction::FrictionReaction;
use crate::flow::{FieldSpec, Grid};
use crate::physics::sim_box::SimBox;
use crate::shapes::Shape;

/// The description file's name, beside `in.argon`.
pub const META_FILE: &str = "fields.json";
/// What the deck's `fix ave/chunk` writes (relative to where LAMMPS runs).
pub const CHUNKS_FILE: &str = "fields.chunks";
/// Obstacle forces averaged over each thermo interval.
pub const FORCES_SERIES_FILE: &str = "forces.series";
/// The format tag of [`FieldsMeta`].
pub const FORMAT: &str = "argon-sandbox lammps-fields 1";

/// Reduced-to-LAMMPS factors the converter divides by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetaScale {
    pub length: f64,
    pub mass: f64,
    pub velocity: f64,
    pub time: f64,
    /// Force: energy / length.
    pub force: f64,
}

/// What the converter needs to know about the deck's output (JSON, `fields.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldsMeta {
    pub format: String,
    /// The LAMMPS `units` style.
    pub units: String,
    pub scale: MetaScale,
    /// argon-sandbox's box (its own coordinates; the deck's start at the origin).
    pub sim_box: SimBox,
    pub spec: FieldSpec,
    /// The time step (tau).
    pub dt: f64,
    pub samples_per_window: u64,
    pub thermo_every: u64,
    /// The obstacles, in argon-sandbox's coordinates (the forces' columns, the wake readout).
    pub shapes: Vec<Shape>,
    /// The first species' mass (the wake readout's mass density).
    pub mass: f64,
    pub tunnel_speed: Option<f64>,
    pub chunks_file: String,
    /// None without obstacles.
    pub forces_series_file: Option<String>,
}

/// The atom-style expression of the bin index (0-based) along `axis` for `grid` in deck units
/// (`shift`: the deck's coordinates minus argon-sandbox's, times the length scale).
fn axis_index(grid: &Grid, axis: usize, origin: f64, cell: f64) -> String {
    let c = ["x", "y", "z"][axis];
    let n = grid.n[axis];
    if n == 1 && axis == 2 {
        return "0".into();
    }
    let f = format!("floor(({c}-{})/{})", num(origin), num(cell));
    if grid.periodic[axis] { format!("((({f})%{n}+{n})%{n})") } else { format!("min(max({f},0),{})", n - 1) }
}

/// Writes the field and force output lines; returns the description.
pub(super) fn fields_output(
    script: &mut String,
    inp: &ExportInput,
    s: &Scale,
    spec: &FieldSpec,
    placed: &[super::lammps_obstacles::Placed],
    reactions: &[FrictionReaction],
) -> Result<FieldsMeta, String> {
    let b = inp.sim_box;
    let p = inp.params;
    let grid = Grid::new(spec, b).map_err(|e| format!("fields: {e}"))?;
    spec.validate(b, p.dt).map_err(|e| format!("fields: {e}"))?;
    let per_window = spec.samples_per_window(p.dt);
    let every = spec.every;
    let nfreq = every * per_window;
    let origin: Vec<f64> = (0..3).map(|k| (grid.origin[k] - b.lo[k]) * s.length).collect();
    let cell: Vec<f64> = (0..3).map(|k| grid.cell[k] * s.length).collect();
    let [nx, ny, nz] = grid.n;
    let _ = writeln!(
        script,
        "\n# Flow fields on argon-sandbox's grid (as `argon-sandbox run --fields`): {nx} x {ny} x {nz} bins of\n\
         # {} x {} x {} from ({}, {}, {}), each atom's bin index (x fastest, +1) from v_fbin; per bin the atom\n\
         # count and the means of m, m v and m |v|^2 over {per_window} samples every {every} steps (windows of\n\
         # {nfreq} steps) into {CHUNKS_FILE}. `argon-sandbox lammps-fields DIR --out FIELDS` turns them (and the\n\
         # forces below) into fields_NNNN.vti, fields.pvd, forces.csv and wake.csv as `run --fields` writes.",
        num(cell[0]),
        num(cell[1]),
        num(cell[2]),
        num(origin[0]),
        num(origin[1]),
        num(origin[2]),
    );
    let index = format!(
        "{}+{nx}*({}+{ny}*{})",
        axis_index(&grid, 0, origin[0], cell[0]),
        axis_index(&grid, 1, origin[1], cell[1]),
        { axis_index(&grid, 2, origin[2], cell[2]) }
    );
    let inside = match spec.slab {
        Some([z0, z1]) => {
            let (z0, z1) = ((z0 - b.lo[2]) * s.length, (z1 - b.lo[2]) * s.length);
            format!("(z>={})*(z<={})*", num(z0), num(z1))
        }
        None => String::new(),
    };
    let _ = writeln!(script, "variable        fbin atom {inside}(1+{index})");
    let _ = writeln!(
        script,
        "compute         fbin all chunk/atom v_fbin nchunk once limit {} exact ids every compress no discard yes",
        grid.len()
    );
    let _ = writeln!(script, "variable        fld_m atom mass");
    for (c, v) in ["x", "y", "z"].iter().enumerate() {
        let _ = writeln!(script, "variable        fld_p{} atom mass*v{v}", ["x", "y", "z"][c]);
    }
    let _ = writeln!(script, "variable        fld_mv2 atom mass*(vx*vx+vy*vy+vz*vz)");
    let _ = writeln!(
        script,
        "fix             fields all ave/chunk {every} {per_window} {nfreq} fbin v_fld_m v_fld_px v_fld_py v_fld_pz \
         v_fld_mv2 norm all ave one format \" %.17g\" file {CHUNKS_FILE}"
    );
    let has_forces = !inp.shapes.is_empty();
    if has_forces {
        let _ = writeln!(
            script,
            "\n# The force of the fluid on each obstacle: its fix wall/region vectors (the force on the wall; its\n\
             # periodic images' too) minus the friction's deterministic part summed over its shell (the force on\n\
             # the atoms; the noise averages to zero), averaged\n\
             # over every step of each thermo interval into {FORCES_SERIES_FILE} (the converter averages those\n\
             # over each field window for forces.csv, as `run --fields` does)."
        );
        let mut names = Vec::new();
        for si in 0..inp.shapes.len() {
            for (k, axis) in ["x", "y", "z"].iter().enumerate() {
                // fix wall/region's vector is the force on the wall already (minus the atoms').
                let mut terms: Vec<String> =
                    placed.iter().filter(|q| q.shape == si).map(|q| format!("+f_{}[{}]", q.fix, k + 1)).collect();
                terms
                    .extend(reactions.iter().filter(|r| r.shape == si).map(|r| format!("-c_{}[{}]", r.compute, k + 1)));
                let name = format!("body{si}_f{axis}");
                let _ = writeln!(script, "variable        {name} equal {}", terms.join("").trim_start_matches('+'));
                names.push(format!("v_{name}"));
            }
        }
        let thermo = inp.thermo_every.max(1);
        let _ = writeln!(
            script,
            "fix             forces_series all ave/time 1 {thermo} {thermo} {} format \" %.17g\" file {FORCES_SERIES_FILE}",
            names.join(" ")
        );
    }
    Ok(FieldsMeta {
        format: FORMAT.into(),
        units: inp.units.name().into(),
        scale: MetaScale {
            length: s.length,
            mass: s.mass,
            velocity: s.velocity,
            time: s.time,
            force: s.energy / s.length,
        },
        sim_box: *b,
        spec: spec.clone(),
        dt: p.dt,
        samples_per_window: per_window,
        thermo_every: inp.thermo_every.max(1),
        shapes: inp.shapes.to_vec(),
        mass: p.species.first().map_or(1.0, |sp| sp.mass),
        tunnel_speed: p.tunnel.map(|t| t.speed),
        chunks_file: CHUNKS_FILE.into(),
        forces_series_file: has_forces.then(|| FORCES_SERIES_FILE.into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bin index wraps on periodic axes, clamps at walls, and is 0 through the depth.
    #[test]
    fn bin_index_wraps_periodic_axes_and_clamps_walled_ones() {
        let b = SimBox { lo: [-2.0, 0.0, 0.0], hi: [8.0, 6.0, 4.0], periodic: [true, false, true] };
        let spec = FieldSpec { bin: 2.0, ..FieldSpec::default() };
        let g = Grid::new(&spec, &b).unwrap();
        assert_eq!(g.n, [5, 3, 1]);
        assert_eq!(axis_index(&g, 0, 0.0, 2.0), "(((floor((x-0.0)/2.0))%5+5)%5)");
        assert_eq!(axis_index(&g, 1, 0.0, 2.0), "min(max(floor((y-0.0)/2.0),0),2)");
        assert_eq!(axis_index(&g, 2, 0.0, 4.0), "0");
    }
}
