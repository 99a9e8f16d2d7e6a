//! Dye sources in a scene (`dye: [Region(..), Rake(..)]`, see `physics::dye`): the schema,
//! their checks (each problem at `dye[i]` with the fix) and what they do to a built system:
//! regions tag the atoms inside at step 0, rakes go to the backend.

use serde::{Deserialize, Serialize};

use super::locate::FieldPath;
use super::validate::Problem;
use crate::physics::dye::{Dye, DyeRake, DyeRegion, check_number};
use crate::physics::sim_box::SimBox;
use crate::sim::AtomState;

/// One dye source, numbered by its place in the scene's `dye` list from 1. Points are (x, y)
/// in sigma; each source reaches through the whole depth (z).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum DyeSource {
    /// The atoms inside the box `min` to `max` are tagged once, at step 0.
    Region { min: [f64; 2], max: [f64; 2] },
    /// Every atom crossing the segment from `a` to `b` is tagged, every step.
    Rake { a: [f64; 2], b: [f64; 2] },
}

impl DyeSource {
    /// The source with every point scaled by `scale` about the origin (the tank's corner)
    /// and kept inside a tank of x-y `size` (a re-initialised tank, whose obstacles scale so).
    pub fn scaled(&self, scale: f64, size: [f64; 2]) -> DyeSource {
        let p = |q: [f64; 2]| [(q[0] * scale).clamp(0.0, size[0]), (q[1] * scale).clamp(0.0, size[1])];
        match *self {
            DyeSource::Region { min, max } => DyeSource::Region { min: p(min), max: p(max) },
            DyeSource::Rake { a, b } => DyeSource::Rake { a: p(a), b: p(b) },
        }
    }
}

/// Checks the sources in order against the tank.
pub(crate) fn check(sources: &[DyeSource], sim_box: &SimBox) -> Result<(), Problem> {
    for (i, s) in sources.iter().enumerate() {
        let at = || FieldPath::fields(&["dye"]).index(i);
        check_number(i + 1).map_err(|e| Problem::invalid(at(), e))?;
        let checked = match *s {
            DyeSource::Region { min, max } => DyeRegion { min, max }.validate(sim_box),
            DyeSource::Rake { a, b } => DyeRake { a, b, tag: 1 }.validate(sim_box),
        };
        checked.map_err(|e| Problem::invalid(at(), e))?;
    }
    Ok(())
}

/// Tags the atoms inside each region source of `sources`, numbered from `first + 1` in order
/// (later sources over earlier ones), and gives `atoms` a dye column; nothing without
/// sources. The sources must have passed [`check`] (or the same checks).
pub fn tag_regions(sources: &[DyeSource], first: usize, atoms: &mut AtomState) {
    if sources.is_empty() {
        return;
    }
    atoms.dye_mut();
    for (i, s) in sources.iter().enumerate() {
        if let DyeSource::Region { min, max } = *s {
            DyeRegion { min, max }.tag(&atoms.positions, &mut atoms.dye, (first + i + 1) as Dye);
        }
    }
}

/// The dye legend's entries of `sources`: each one's number (its place from 1) and name
/// ("1: rake"), as the app names its sources.
pub fn legend(sources: &[DyeSource]) -> Vec<(Dye, String)> {
    let name = |s: &DyeSource| match s {
        DyeSource::Rake { .. } => "rake",
        DyeSource::Region { .. } => "region",
    };
    sources.iter().enumerate().map(|(i, s)| ((i + 1) as Dye, format!("{}: {}", i + 1, name(s)))).collect()
}

/// The rakes among `sources`, each with its number (its place from 1).
pub fn rakes(sources: &[DyeSource]) -> Vec<DyeRake> {
    let rake = |(i, s): (usize, &DyeSource)| match *s {
        DyeSource::Rake { a, b } => Some(DyeRake { a, b, tag: (i + 1) as Dye }),
        DyeSource::Region { .. } => None,
    };
    sources.iter().enumerate().filter_map(rake).collect()
}
