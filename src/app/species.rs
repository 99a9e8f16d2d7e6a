//! Species in the app: the composition typed for re-initialising ("Ar 0.7, Kr 0.3", checked
//! before anything is sent), the species the add-atoms brush pours (a catalogue species not
//! yet in the simulation is added to its parameters first), and colouring by species when a
//! mixture appears. Owns no simulation state: it edits `App::params` and the scene document.

use super::App;
use super::commands::SimCommand;
use crate::physics::params::Species;
use crate::physics::species::{catalogue_names, catalogue_species, check_composition};
use crate::render::ColourBy;
use crate::scene::{Scene, SpeciesSpec};

/// Most species a simulation may hold (as `SimParams::validate` allows).
const MAX_SPECIES: usize = 16;

/// Parses "Ar 0.7, Kr 0.3" into species (those of `current` by name, else the catalogue's)
/// and their fractions. Errors start with "Composition:" and say what to type.
pub fn parse_composition(text: &str, current: &[Species]) -> Result<(Vec<Species>, Vec<f64>), String> {
    let fail = |why: String| Err(format!("Composition: {why}; type species and fractions, e.g. \"Ar 0.7, Kr 0.3\""));
    let mut species: Vec<Species> = Vec::new();
    let mut fractions = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let [name, value] = words[..] else {
            return fail(format!("\"{part}\" is not a species and a fraction"));
        };
        let Ok(x) = value.parse::<f64>() else {
            return fail(format!("\"{value}\" (for {name}) is not a number"));
        };
        let Some(s) = current.iter().find(|s| s.name == name).cloned().or_else(|| catalogue_species(name)) else {
            return fail(format!("\"{name}\" is not a species here nor in the catalogue ({})", catalogue_names()));
        };
        if species.iter().any(|o| o.name == s.name) {
            return fail(format!("{name} is listed twice"));
        }
        species.push(s);
        fractions.push(x);
    }
    if species.is_empty() {
        return fail("it is empty".into());
    }
    if species.len() > MAX_SPECIES {
        return fail(format!("{} species; at most {MAX_SPECIES}", species.len()));
    }
    match check_composition(&fractions, species.len()) {
        Ok(()) => Ok((species, fractions)),
        Err(why) => fail(why),
    }
}

/// The composition of a scene as text ("Ar 1" for one species).
pub fn composition_text(scene: &Scene) -> String {
    let first_only: Vec<f64> = (0..scene.species.len()).map(|k| if k == 0 { 1.0 } else { 0.0 }).collect();
    let fractions = scene.composition.as_deref().unwrap_or(&first_only);
    let parts: Vec<String> = (scene.species.iter().zip(fractions))
        .filter(|(_, x)| **x > 0.0)
        .map(|(s, x)| format!("{} {}", s.name, (x * 1e6).round() / 1e6))
        .collect();
    parts.join(", ")
}

/// `doc` holding `species` at `fractions` (its explicit atoms keep their types only when the
/// species keep their places: re-initialising replaces the fills anyway).
pub fn with_composition(doc: &Scene, species: &[Species], fractions: Vec<f64>) -> Scene {
    let mut out = doc.clone();
    out.species = species.iter().map(SpeciesSpec::of).collect();
    out.composition = (species.len() > 1).then_some(fractions);
    out
}

/// Names offered by the brush: the catalogue, then the simulation's own custom species.
pub fn brush_choices(params: &[Species]) -> Vec<String> {
    let mut names: Vec<String> = crate::physics::species::CATALOGUE.iter().map(|e| e.symbol.to_string()).collect();
    names.extend(params.iter().filter(|s| !names.contains(&s.name)).map(|s| s.name.clone()).collect::<Vec<_>>());
    names
}

impl App {
    /// The type index of the brush's species, adding a catalogue species to the parameters
    /// (sent before the atoms) when the simulation does not have it yet.
    pub(super) fn brush_type(&mut self) -> Option<u32> {
        let name = self.settings.brush_species.clone();
        if let Some(t) = self.params.species.iter().position(|s| s.name == name) {
            return Some(t as u32);
        }
        let Some(s) = catalogue_species(&name) else {
            self.notify(format!("Brush species: \"{name}\" is not in the catalogue ({})", catalogue_names()), true);
            return None;
        };
        if self.params.species.len() >= MAX_SPECIES {
            self.notify(format!("Brush species: the simulation already holds {MAX_SPECIES} species"), true);
            return None;
        }
        self.params.species.push(s);
        if !self.apply_params() {
            return None;
        }
        self.colour_mixture();
        Some(self.params.species.len() as u32 - 1)
    }

    /// Colours the atoms by `colour` (with its default range), asking the simulation for its
    /// scalar.
    pub fn set_colour_by(&mut self, colour: ColourBy) {
        let b = self.sim_box();
        let v = &mut self.settings.view;
        v.colour_by = colour;
        v.range = colour.default_range(self.params.temperature, [b.lo[1], b.hi[1]]);
        self.sim.send(SimCommand::SetColour(colour.scalar()));
    }

    /// Colours by species when the simulation holds a mixture and another map is shown.
    pub(super) fn colour_mixture(&mut self) {
        if self.params.species.len() > 1 && self.settings.view.colour_by != ColourBy::Species {
            self.settings.view.colour_by = ColourBy::Species;
            self.sim.send(SimCommand::SetColour(ColourBy::Species.scalar()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compositions_parse_and_bad_ones_say_why() {
        let ar = [Species::argon()];
        let (s, x) = parse_composition(" Ar 0.7,Kr 0.3 ", &ar).unwrap();
        assert_eq!((s[0].name.as_str(), s[1].name.as_str()), ("Ar", "Kr"));
        assert_eq!(x, vec![0.7, 0.3]);
        for (text, why) in [
            ("Ar 0.7, Kr 0.4", "sum to"),
            ("He 1", "not a species here nor in the catalogue"),
            ("Ar", "not a species and a fraction"),
            ("Ar x", "not a number"),
            ("Ar 0.5, Ar 0.5", "listed twice"),
            ("", "empty"),
            ("Ar 1.5, Kr -0.5", "[0, 1]"),
        ] {
            let e = parse_composition(text, &ar).unwrap_err();
            assert!(e.starts_with("Composition:") && e.contains(why), "{text:?}: {e}");
        }
        let custom = [Species::argon(), Species { name: "Q".into(), sigma: 1.1, epsilon: 1.2, mass: 1.5 }];
        let (s, _) = parse_composition("Q 1", &custom).unwrap();
        assert_eq!(s[0], custom[1]);
    }
}
