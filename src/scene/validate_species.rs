//! Validation of a scene's species and composition: catalogue symbols or complete custom
//! parameters in range, unique names that files can carry, fractions per species that sum to
//! 1 (needed when two or more species share generated fills), and explicit atoms' types.

use super::error::num;
use super::locate::FieldPath;
use super::validate::{Problem, ok_or, path};
use super::{Fill, Scene};
use crate::physics::species::{catalogue_names, check_composition, element};
use crate::units::{ARGON_EPSILON_K, ARGON_MASS_U, ARGON_SIGMA_ANGSTROM};

/// Most species a scene may list (the CUDA kernels' type tables are sized for this).
pub const MAX_SPECIES: usize = 16;

type Check = Result<(), Problem>;

/// A value of a custom species against `(lo, hi]` (or `[lo, hi]` when `closed`), in its units.
fn custom_value(p: FieldPath, v: f64, lo: f64, hi: f64, closed: bool, unit: &str) -> Check {
    let low_ok = if closed { v >= lo } else { v > lo };
    ok_or(v.is_finite() && low_ok && v <= hi, || {
        let open = if closed { "[" } else { "(" };
        Problem::range(p, num(v), format!("allowed range is {open}{}, {}] {unit}", num(lo), num(hi)))
    })
}

pub(crate) fn check_species(scene: &Scene) -> Check {
    let list = &scene.species;
    ok_or(!list.is_empty() && list.len() <= MAX_SPECIES, || {
        Problem::invalid(
            path(&["species"]),
            format!(
                "lists {} species: list between 1 and {MAX_SPECIES}, e.g. `species: [(name: \"Ar\"), (name: \"Kr\")]`",
                list.len()
            ),
        )
    })?;
    for (i, s) in list.iter().enumerate() {
        let p = path(&["species"]).index(i);
        let plain = !s.name.is_empty()
            && s.name.len() <= 16
            && s.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        ok_or(plain, || {
            Problem::invalid(
                p.clone().field("name"),
                format!(
                    "{:?} is not a usable species name: use 1 to 16 letters, digits, `_` or `-` (it is written into \
                     XYZ and LAMMPS files)",
                    s.name
                ),
            )
        })?;
        if let Some(j) = list[..i].iter().position(|o| o.name == s.name) {
            return Err(Problem::invalid(
                p.field("name"),
                format!("`{}` is already species {j}: each species is listed once", s.name),
            ));
        }
        let given = [s.sigma_angstrom, s.epsilon_k, s.mass_g_per_mol];
        let names = ["sigma_angstrom", "epsilon_k", "mass_g_per_mol"];
        match given.iter().filter(|v| v.is_some()).count() {
            0 => ok_or(element(&s.name).is_some(), || {
                Problem::invalid(
                    p.clone().field("name"),
                    format!(
                        "`{}` is not in the catalogue ({}; symbols are case-sensitive): use one of those, or give \
                         `sigma_angstrom`, `epsilon_k` and `mass_g_per_mol` for a species of your own",
                        s.name,
                        catalogue_names()
                    ),
                )
            })?,
            3 => {
                let sigma = ARGON_SIGMA_ANGSTROM;
                custom_value(
                    p.clone().field("sigma_angstrom"),
                    given[0].unwrap_or(0.0),
                    0.2 * sigma,
                    5.0 * sigma,
                    true,
                    "Å",
                )?;
                custom_value(
                    p.clone().field("epsilon_k"),
                    given[1].unwrap_or(0.0),
                    0.0,
                    100.0 * ARGON_EPSILON_K,
                    false,
                    "K",
                )?;
                custom_value(
                    p.clone().field("mass_g_per_mol"),
                    given[2].unwrap_or(0.0),
                    0.0,
                    1e4 * ARGON_MASS_U,
                    false,
                    "g/mol",
                )?;
            }
            _ => {
                let missing: Vec<&str> =
                    names.iter().zip(given).filter(|(_, v)| v.is_none()).map(|(n, _)| *n).collect();
                return Err(Problem::invalid(
                    p,
                    format!(
                        "`{}` gives only some parameters: a custom species needs all of `sigma_angstrom`, `epsilon_k` \
                         and `mass_g_per_mol` (missing: {}); leave all three out for a catalogue species",
                        s.name,
                        missing.join(", ")
                    ),
                ));
            }
        }
    }
    match &scene.composition {
        Some(c) => check_composition(c, list.len()).map_err(|m| Problem::invalid(path(&["composition"]), m)),
        None => {
            let generated = scene.atoms.iter().any(|f| !matches!(f, Fill::Atoms { .. }));
            ok_or(list.len() == 1 || !generated, || {
                Problem::invalid(
                    path(&["species"]),
                    format!(
                        "lists {} species but the scene has no `composition`: add one giving the fraction of the \
                         generated atoms of each species, e.g. `composition: [{}]`",
                        list.len(),
                        vec![num(1.0 / list.len() as f64); list.len()].join(", ")
                    ),
                )
            })
        }
    }
}

/// The `types` of an `Atoms` fill at `p`: one per position, each an index into `species`.
pub(crate) fn check_types(p: &FieldPath, n: usize, types: Option<&[u32]>, n_species: usize) -> Check {
    let Some(types) = types else { return Ok(()) };
    ok_or(types.len() == n, || {
        Problem::invalid(
            p.clone().field("types"),
            format!(
                "gives {} types for {n} positions: give one species index per atom, or leave `types` out (all \
                 the first species)",
                types.len()
            ),
        )
    })?;
    if let Some((j, &t)) = types.iter().enumerate().find(|(_, t)| **t as usize >= n_species) {
        return Err(Problem::range(
            p.clone().field("types").index(j),
            t.to_string(),
            format!("a species index: 0 to {} (the scene lists {n_species} species)", n_species - 1),
        ));
    }
    Ok(())
}
