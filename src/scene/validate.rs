//! Validation of a parsed scene: every value against its allowed range, the cutoff against
//! the periodic box, fills (regions inside the box, an estimated atom count below the limit,
//! explicit atoms inside the walls and not overlapping) and obstacles (well-formed shapes, not
//! entirely outside the tank).
//!
//! The ranges of simulation parameters are [`SimParams::validate`]'s, mapped onto scene field
//! names here, so they are written once. Problems carry a [`FieldPath`]; the parser turns that
//! into a line and column.

use super::error::{Location, SceneError, num, tuple};
use super::grid::find_close_pair;
use super::locate::{FieldPath, line_col, locate};
use super::{Fill, Region, SCENE_VERSION, Scene};
use crate::physics::params::{ParamError, SimParams};
use crate::physics::sim_box::SimBox;
use crate::physics::tunnel::MeanFluid;

/// Longest box edge, in sigma.
pub const MAX_BOX_LENGTH: f64 = 10_000.0;
/// Largest box volume, in sigma^3 (backends grid the whole box).
pub const MAX_BOX_VOLUME: f64 = 1e9;
/// Most atoms a scene may create.
pub const MAX_ATOMS: usize = 50_000_000;
/// Highest reduced number density of a fill (solid argon near the triple point is ~0.97).
pub const MAX_DENSITY: f64 = 1.5;
/// Explicit atoms closer than this (sigma) overlap.
pub const MIN_EXPLICIT_SEPARATION: f64 = 0.5;
/// Largest magnitude of an obstacle coordinate or length, in sigma.
pub const MAX_SHAPE_COORDINATE: f64 = 1e6;
pub const MAX_OBSTACLES: usize = 10_000;
pub const MAX_POLYGON_POINTS: usize = 1_000;
pub const MAX_STROKE_POINTS: usize = 100_000;

const AXES: [&str; 3] = ["x", "y", "z"];

/// What is wrong, before it is given a place in the text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    Range { value: String, allowed: String },
    Invalid(String),
}

/// A validation failure at a path in the scene. `fallback` is where to point instead when
/// the path itself is not written in the file (a default is in use).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Problem {
    pub path: FieldPath,
    pub fallback: Option<FieldPath>,
    pub kind: Kind,
}

impl Problem {
    pub(crate) fn range(path: FieldPath, value: String, allowed: impl Into<String>) -> Self {
        Problem { path, fallback: None, kind: Kind::Range { value, allowed: allowed.into() } }
    }

    pub(crate) fn invalid(path: FieldPath, message: impl Into<String>) -> Self {
        Problem { path, fallback: None, kind: Kind::Invalid(message.into()) }
    }

    /// The error, located in `text` when there is one.
    pub(crate) fn into_error(self, file: &str, text: Option<&str>) -> SceneError {
        let mut defaulted = false;
        let at = match text {
            Some(text) => {
                let mut found = locate(text, &self.path);
                if !found.complete {
                    defaulted = true;
                    if let Some(fallback) = &self.fallback {
                        let other = locate(text, fallback);
                        if other.complete {
                            found = other;
                        }
                    }
                }
                let (line, col) = line_col(text, found.offset);
                Location::new(file, line, col)
            }
            None => Location::file_only(file),
        };
        let note = if defaulted { " (the field is not in the file, so its default applies)" } else { "" };
        let field = self.path.to_string();
        match self.kind {
            Kind::Range { value, allowed } => {
                SceneError::OutOfRange { at, field, value, allowed: format!("{allowed}{note}") }
            }
            Kind::Invalid(message) => SceneError::Invalid { at, field, message: format!("{message}{note}") },
        }
    }
}

pub(crate) fn ok_or(ok: bool, problem: impl FnOnce() -> Problem) -> Result<(), Problem> {
    if ok { Ok(()) } else { Err(problem()) }
}

pub(crate) fn path(names: &[&'static str]) -> FieldPath {
    FieldPath::fields(names)
}

/// The most steps per displayed frame a scene may ask for (the Simulation panel's limit).
pub const MAX_STEPS_PER_FRAME: u64 = 10_000;

/// Checks the whole scene; the first problem found is returned.
pub(crate) fn check(scene: &Scene) -> Result<(), Problem> {
    ok_or(scene.version == SCENE_VERSION, || {
        Problem::range(
            path(&["version"]),
            scene.version.to_string(),
            format!("this build reads scene version {SCENE_VERSION} only"),
        )
    })?;
    check_box(scene)?;
    super::validate_species::check_species(scene)?;
    let sim_box = scene.sim_box();
    let params = scene.sim_params();
    params.validate(&sim_box).map_err(|e| param_problem(scene, e))?;
    let atoms = check_fills(scene, &sim_box)?;
    check_tunnel_speed(scene, &params, &sim_box, atoms)?;
    check_start_spin(scene)?;
    super::validate_shapes::check_obstacles(&scene.obstacles, &sim_box)?;
    super::dye::check(&scene.dye, &sim_box)?;
    if let Some(f) = &scene.fields {
        f.validate(&sim_box, scene.integrator.dt)
            .map_err(|e| Problem::invalid(path(&["fields", e.field]), e.to_string()))?;
    }
    if let Some(n) = scene.steps_per_frame {
        ok_or((1..=MAX_STEPS_PER_FRAME).contains(&n), || {
            Problem::range(path(&["steps_per_frame"]), n.to_string(), format!("1 to {MAX_STEPS_PER_FRAME}"))
        })?;
    }
    if let Some(r) = &scene.resume {
        ok_or(r.time.is_finite() && r.time >= 0.0, || {
            Problem::range(path(&["resume", "time"]), num(r.time), "a finite time >= 0 (tau)")
        })?;
        if let Some(p) = &r.piston {
            ok_or(p.height.is_finite() && p.velocity.is_finite(), || {
                Problem::invalid(path(&["resume", "piston"]), "the piston's height and velocity must be finite numbers")
            })?;
            ok_or(scene.piston.is_some(), || {
                Problem::invalid(
                    path(&["resume", "piston"]),
                    "a piston state needs a `piston` section; add one or remove this",
                )
            })?;
        }
    }
    Ok(())
}

fn check_box(scene: &Scene) -> Result<(), Problem> {
    let size = scene.tank.size;
    for (k, &l) in size.iter().enumerate() {
        ok_or(l.is_finite() && l > 0.0 && l <= MAX_BOX_LENGTH, || {
            Problem::range(
                path(&["box", "size"]).index(k),
                num(l),
                format!("allowed range is (0, {MAX_BOX_LENGTH}] sigma along {}", AXES[k]),
            )
        })?;
    }
    let volume = size[0] * size[1] * size[2];
    ok_or(volume <= MAX_BOX_VOLUME, || {
        Problem::range(
            path(&["box", "size"]),
            tuple(&size),
            format!("the volume {} sigma^3 is larger than the limit {} sigma^3", num(volume), num(MAX_BOX_VOLUME)),
        )
    })
}

/// Maps a [`SimParams::validate`] error onto the scene field it came from.
fn param_problem(scene: &Scene, e: ParamError) -> Problem {
    let (names, fallback): (&[&'static str], Option<FieldPath>) = match e.field {
        "dt" => (&["integrator", "dt"], None),
        "skin" => (&["integrator", "skin"], None),
        "cutoff" => (&["potential", "cutoff"], Some(path(&["box", "size"]))),
        "temperature" => (&["temperature_k"], None),
        "thermostat.tau" => (&["thermostat", "tau"], Some(path(&["thermostat"]))),
        "thermostat.damp" => (&["thermostat", "damp"], Some(path(&["thermostat"]))),
        "gravity" => (&["forces", "gravity"], None),
        "drive" => (&["forces", "drive"], None),
        "wall.epsilon" => (&["walls", "epsilon"], None),
        "wall.sigma" => (&["walls", "sigma"], None),
        "wall.cutoff" => (&["walls", "cutoff"], None),
        "obstacle.epsilon" => (&["obstacle_wall", "epsilon"], None),
        "obstacle.sigma" | "obstacle.cutoff" => (&["obstacle_wall", "sigma"], None),
        "piston" => (&["piston"], None),
        "piston.pressure" => (&["piston", "pressure"], None),
        "piston.mass" => (&["piston", "mass"], Some(path(&["piston"]))),
        "piston.damping" => (&["piston", "damping"], Some(path(&["piston"]))),
        "surface_friction" => (&["surface_friction"], None),
        "surface_friction.damp" => (&["surface_friction", "damp"], Some(path(&["surface_friction"]))),
        "surface_friction.range" => (&["surface_friction", "range"], Some(path(&["surface_friction"]))),
        "tunnel" => (&["tunnel"], None),
        "tunnel.speed" => (&["tunnel", "speed"], Some(path(&["tunnel"]))),
        "tunnel.zone" => (&["tunnel", "zone"], Some(path(&["tunnel"]))),
        "tunnel.start_spin.spin" => (&["tunnel", "start_spin", "spin"], Some(path(&["tunnel", "start_spin"]))),
        "tunnel.start_spin.time" => (&["tunnel", "start_spin", "time"], Some(path(&["tunnel", "start_spin"]))),
        _ => (&[], None),
    };
    let value = match e.field {
        "temperature" => num(scene.temperature_k),
        _ => e.value.parse::<f64>().map(num).unwrap_or(e.value),
    };
    let mut p = Problem::range(path(names), value, e.reason);
    p.fallback = fallback;
    p
}

/// The tunnel's start spin acts through the surface friction: without it the spin would do
/// nothing, so it is refused.
fn check_start_spin(scene: &Scene) -> Result<(), Problem> {
    let spins = scene.tunnel.is_some_and(|t| t.start_spin.is_some());
    ok_or(!spins || scene.surface_friction.is_some(), || {
        Problem::invalid(
            path(&["tunnel", "start_spin"]),
            "the start spin moves the obstacles' surfaces through the surface friction, which is off: \
             add `surface_friction: (damp: 0.5, range: 1.5)`, or remove `start_spin`",
        )
    })
}

/// The tunnel's speed against the speed of sound at the scene's temperature and its estimated
/// mean density (`atoms`, the fills' estimate) and mass (by the composition); the backends
/// check again with the atoms they are given.
fn check_tunnel_speed(scene: &Scene, params: &SimParams, sim_box: &SimBox, atoms: f64) -> Result<(), Problem> {
    if params.tunnel.is_none() {
        return Ok(());
    }
    let first_only = [1.0];
    let fractions = scene.composition.as_deref().unwrap_or(&first_only);
    let mass: f64 = params.species.iter().zip(fractions).map(|(s, f)| s.mass * f).sum();
    let total = fractions.iter().take(params.species.len()).sum::<f64>();
    let mass = if total > 0.0 { mass / total } else { params.species[0].mass };
    let fluid = MeanFluid { density: atoms / sim_box.volume(), mass };
    params.validate_tunnel_speed(&fluid).map_err(|e| param_problem(scene, e))
}

fn check_density(p: FieldPath, density: f64, zero_ok: bool) -> Result<(), Problem> {
    let low_ok = if zero_ok { density >= 0.0 } else { density > 0.0 };
    ok_or(density.is_finite() && low_ok && density <= MAX_DENSITY, || {
        let open = if zero_ok { "[" } else { "(" };
        Problem::range(
            p,
            num(density),
            format!("allowed range is {open}0, {MAX_DENSITY}] atoms per sigma^3 (liquid argon is about 0.8)"),
        )
    })
}

/// Checks a region against the box; returns its volume.
fn check_region(p: FieldPath, r: &Region, len: [f64; 3]) -> Result<f64, Problem> {
    for k in 0..3 {
        for (name, v) in [("lo", r.lo[k]), ("hi", r.hi[k])] {
            ok_or(v.is_finite() && (0.0..=len[k]).contains(&v), || {
                Problem::range(
                    p.clone().field(name).index(k),
                    num(v),
                    format!("must lie inside the box: [0, {}] sigma along {}", num(len[k]), AXES[k]),
                )
            })?;
        }
        ok_or(r.lo[k] < r.hi[k], || {
            Problem::invalid(
                p.clone().field("hi").index(k),
                format!(
                    "{} is not above lo[{k}] = {}: a region needs lo < hi on every axis",
                    num(r.hi[k]),
                    num(r.lo[k])
                ),
            )
        })?;
    }
    Ok((0..3).map(|k| r.hi[k] - r.lo[k]).product())
}

/// Checks the fills; returns the estimated number of atoms they create.
fn check_fills(scene: &Scene, sim_box: &SimBox) -> Result<f64, Problem> {
    ok_or(!scene.atoms.is_empty(), || {
        Problem::invalid(
            path(&["atoms"]),
            "no fills: add at least one, e.g. `atoms: [Lattice(kind: Fcc, density: 0.8)]`",
        )
    })?;
    let len = sim_box.length();
    let volume = sim_box.volume();
    let mut total = 0.0;
    for (i, fill) in scene.atoms.iter().enumerate() {
        let p = path(&["atoms"]).index(i);
        let estimate = match fill {
            Fill::Lattice { density, region, .. } | Fill::Gas { density, region } => {
                check_density(p.clone().field("density"), *density, false)?;
                let v = match region {
                    Some(r) => check_region(p.clone().field("region"), r, len)?,
                    None => volume,
                };
                density * v
            }
            Fill::LiquidSlab { liquid_density, vapour_density, from, to } => {
                check_density(p.clone().field("liquid_density"), *liquid_density, false)?;
                check_density(p.clone().field("vapour_density"), *vapour_density, true)?;
                for (name, v) in [("from", *from), ("to", *to)] {
                    ok_or(v.is_finite() && (0.0..=len[1]).contains(&v), || {
                        Problem::range(
                            p.clone().field(name),
                            num(v),
                            format!("must be a height inside the box: [0, {}] sigma", num(len[1])),
                        )
                    })?;
                }
                ok_or(from < to, || {
                    Problem::invalid(p.clone().field("to"), format!("{} is not above from = {}", num(*to), num(*from)))
                })?;
                let slab = len[0] * len[2] * (to - from);
                liquid_density * slab + vapour_density * (volume - slab)
            }
            Fill::Atoms { positions, velocities, types, dye } => {
                check_explicit(&p, positions, velocities.as_deref(), sim_box)?;
                if let Some(d) = dye {
                    ok_or(d.len() == positions.len(), || {
                        Problem::invalid(
                            p.clone().field("dye"),
                            format!(
                                "{} dye tags for {} positions: give one tag per atom (0 untagged) or leave dye out",
                                d.len(),
                                positions.len()
                            ),
                        )
                    })?;
                }
                super::validate_species::check_types(&p, positions.len(), types.as_deref(), scene.species.len())?;
                positions.len() as f64
            }
        };
        total += estimate;
        ok_or(total <= MAX_ATOMS as f64, || {
            Problem::invalid(
                p.clone(),
                format!(
                    "the fills up to this one would create about {} atoms, more than the {MAX_ATOMS} a scene may \
                     hold: lower the density, or use a smaller region or box",
                    // At most MAX_DENSITY x MAX_BOX_VOLUME (both checked before): a whole number.
                    total.round() as u64
                ),
            )
        })?;
    }
    check_explicit_overlaps(scene, sim_box)?;
    Ok(total)
}

fn check_explicit(
    p: &FieldPath,
    positions: &[[f64; 3]],
    velocities: Option<&[[f64; 3]]>,
    sim_box: &SimBox,
) -> Result<(), Problem> {
    let len = sim_box.length();
    for (j, x) in positions.iter().enumerate() {
        for k in 0..3 {
            let inside = sim_box.periodic[k] || (x[k] > 0.0 && x[k] < len[k]);
            ok_or(x[k].is_finite() && inside, || {
                Problem::range(
                    p.clone().field("positions").index(j),
                    tuple(x),
                    format!(
                        "{} = {} must lie strictly inside the walls, 0 < {} < {} sigma (periodic axes take any \
                         finite value)",
                        AXES[k],
                        num(x[k]),
                        AXES[k],
                        num(len[k])
                    ),
                )
            })?;
        }
    }
    if let Some(v) = velocities {
        ok_or(v.len() == positions.len(), || {
            Problem::invalid(
                p.clone().field("velocities"),
                format!(
                    "gives {} velocities for {} positions: give one velocity per atom, or leave `velocities` out \
                     for Maxwell-Boltzmann velocities",
                    v.len(),
                    positions.len()
                ),
            )
        })?;
        for (j, x) in v.iter().enumerate() {
            ok_or(x.iter().all(|c| c.is_finite()), || {
                Problem::range(p.clone().field("velocities").index(j), tuple(x), "every component must be finite")
            })?;
        }
    }
    Ok(())
}

/// Explicit atoms of all `Atoms` fills, checked together for pairs closer than
/// [`MIN_EXPLICIT_SEPARATION`].
fn check_explicit_overlaps(scene: &Scene, sim_box: &SimBox) -> Result<(), Problem> {
    let mut origin: Vec<(usize, usize)> = Vec::new();
    let mut all: Vec<[f64; 3]> = Vec::new();
    for (i, fill) in scene.atoms.iter().enumerate() {
        if let Fill::Atoms { positions, .. } = fill {
            origin.extend((0..positions.len()).map(|j| (i, j)));
            all.extend_from_slice(positions);
        }
    }
    let Some((a, b, d)) = find_close_pair(sim_box, &all, MIN_EXPLICIT_SEPARATION) else {
        return Ok(());
    };
    let name = |k: usize| {
        let (i, j) = origin.get(k).copied().unwrap_or_default();
        (path(&["atoms"]).index(i).field("positions").index(j), i, j)
    };
    let (pa, ..) = name(a);
    let (pb, ..) = name(b);
    Err(Problem::invalid(
        pb,
        format!(
            "overlaps {pa}: the two atoms are {} sigma apart, closer than {MIN_EXPLICIT_SEPARATION} sigma \
             (minimum image on periodic axes): move or delete one of them",
            num((d * 1e4).round() / 1e4)
        ),
    ))
}
