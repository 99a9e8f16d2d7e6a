//! Species and compositions in scene files: catalogue symbols and custom species become the
//! right reduced parameters, compositions are exact and repeatable, explicit atoms keep their
//! types through save and load, the LJ cut-off is per pair (`PerPair(k)`, the default) or one
//! distance (a plain number), and every mistake is an error naming the line, column, field
//! and fix.

use argon_sandbox::physics::cutoff::Cutoff;
use argon_sandbox::physics::params::Species;
use argon_sandbox::scene::{Fill, Scene, SpeciesSpec};

const BASE: &str = "(
    version: 1,
    box: (size: (12.0, 12.0, 8.0), boundaries: (Periodic, Wall, Periodic)),
    temperature_k: 100.0,
    species: [(name: \"Ar\"), (name: \"Kr\")],
    composition: [0.75, 0.25],
    atoms: [Lattice(kind: Fcc, density: 0.7)],
    seed: 3,
)
";

fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from:?} is not in the base scene");
    BASE.replacen(from, to, 1)
}

fn error_of(text: &str) -> String {
    match Scene::from_str(text, "mix.ron") {
        Ok(_) => panic!("accepted a bad scene:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_catalogue_mixture_builds_with_exact_counts_and_masses() {
    let scene = Scene::from_str(BASE, "mix.ron").unwrap();
    let setup = scene.build().unwrap();
    let sp = &setup.params.species;
    assert_eq!(sp.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["Ar", "Kr"]);
    assert_eq!((sp[0].sigma, sp[0].epsilon, sp[0].mass), (1.0, 1.0, 1.0));
    assert!((sp[1].sigma - 3.60 / 3.405).abs() < 1e-15);
    assert!((sp[1].epsilon - 171.0 / 119.8).abs() < 1e-15);
    assert!((sp[1].mass - 83.798 / 39.948).abs() < 1e-15);
    let n = setup.atoms.len();
    let kr = setup.atoms.types.iter().filter(|&&t| t == 1).count();
    assert_eq!(kr, (0.25 * n as f64).round() as usize, "{kr} of {n}");
    // Mixed across the box, not in blocks: both halves hold krypton.
    let half = setup.atoms.types[..n / 2].iter().filter(|&&t| t == 1).count();
    assert!(half > kr / 4 && half < 3 * kr / 4, "{half} of {kr} krypton atoms in the first half");
    // Maxwell-Boltzmann per mass: exactly the scene's temperature, zero momentum.
    let mut twice_ke = 0.0;
    let mut p = [0.0; 3];
    for (v, &t) in setup.atoms.velocities.iter().zip(&setup.atoms.types) {
        let m = sp[t as usize].mass;
        twice_ke += m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        (0..3).for_each(|k| p[k] += m * v[k]);
    }
    let dof = argon_sandbox::analysis::degrees_of_freedom(n, &setup.sim_box, &setup.params, false);
    assert!((twice_ke / dof - 100.0 / 119.8).abs() < 1e-9);
    assert!(p.iter().all(|x| x.abs() < 1e-9), "{p:?}");
    // The same seed gives the same mixture; another seed another arrangement.
    assert_eq!(scene.build().unwrap().atoms.types, setup.atoms.types);
    let other = Scene::from_str(&edit("seed: 3", "seed: 4"), "mix.ron").unwrap().build().unwrap();
    assert_ne!(other.atoms.types, setup.atoms.types);
}

#[test]
fn custom_species_and_explicit_types_round_trip() {
    let text = edit(
        "species: [(name: \"Ar\"), (name: \"Kr\")],",
        "species: [(name: \"Ar\"), (name: \"Q\", sigma_angstrom: 3.9, epsilon_k: 150.0, mass_g_per_mol: 60.0)],",
    )
    .replace(
        "atoms: [Lattice(kind: Fcc, density: 0.7)],",
        "atoms: [Atoms(positions: [(1.0, 2.0, 1.0), (3.0, 2.0, 1.0)], types: [1, 0]), Lattice(kind: Fcc, density: 0.7)],",
    );
    let scene = Scene::from_str(&text, "custom.ron").unwrap();
    let setup = scene.build().unwrap();
    let q = &setup.params.species[1];
    assert_eq!(q.name, "Q");
    assert!((q.sigma - 3.9 / 3.405).abs() < 1e-15 && (q.epsilon - 150.0 / 119.8).abs() < 1e-15);
    assert!((q.mass - 60.0 / 39.948).abs() < 1e-15);
    assert_eq!(&setup.atoms.types[..2], &[1, 0]);
    // Saved and loaded: the document and the running state come back equal.
    let again = Scene::from_str(&scene.to_ron(), "again.ron").unwrap();
    assert_eq!(again, scene);
    let saved = scene.with_atoms(&setup.atoms);
    let text = saved.to_ron();
    assert!(text.contains("types:"), "{text}");
    let loaded = Scene::from_str(&text, "state.ron").unwrap();
    assert_eq!(loaded.build().unwrap().atoms, setup.atoms);
    // A species added while running (catalogue Xe) is written by symbol, with a zero fraction.
    let mut species = setup.params.species.clone();
    species.push(argon_sandbox::physics::species::catalogue_species("Xe").unwrap());
    let grown = scene.with_species(&species);
    assert_eq!(grown.species[2], SpeciesSpec::catalogue("Xe"));
    assert_eq!(grown.species[1].sigma_angstrom, Some(3.9));
    assert_eq!(grown.composition, Some(vec![0.75, 0.25, 0.0]));
    let back: Vec<Species> = grown.species.iter().map(SpeciesSpec::species).collect();
    assert_eq!(back[0], species[0]);
    assert_eq!(back[2], species[2]);
    assert!((back[1].sigma - species[1].sigma).abs() < 1e-15);
    Scene::from_str(&grown.to_ron(), "grown.ron").unwrap();
    // An argon scene that gains krypton keeps building argon only, and still validates.
    let argon = Scene::from_str(
        &BASE
            .replace("    species: [(name: \"Ar\"), (name: \"Kr\")],\n", "")
            .replace("    composition: [0.75, 0.25],\n", ""),
        "ar.ron",
    )
    .unwrap();
    let grown =
        argon.with_species(&[Species::argon(), argon_sandbox::physics::species::catalogue_species("Kr").unwrap()]);
    assert_eq!(grown.composition, Some(vec![1.0, 0.0]));
    assert!(grown.build().unwrap().atoms.types.iter().all(|&t| t == 0));
}

#[test]
fn argon_only_scenes_are_written_as_before() {
    let text = BASE
        .replace("    species: [(name: \"Ar\"), (name: \"Kr\")],\n", "")
        .replace("    composition: [0.75, 0.25],\n", "");
    let scene = Scene::from_str(&text, "ar.ron").unwrap();
    let out = scene.to_ron();
    assert!(!out.contains("species") && !out.contains("composition") && !out.contains("types"), "{out}");
    let setup = scene.build().unwrap();
    assert!(setup.atoms.types.iter().all(|&t| t == 0));
    match &scene.with_atoms(&setup.atoms).atoms[0] {
        Fill::Atoms { types, .. } => assert!(types.is_none()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn species_mistakes_are_located_errors_with_a_fix() {
    let species_line = "species: [(name: \"Ar\"), (name: \"Kr\")],";
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "unknown symbol",
            edit(species_line, "species: [(name: \"Ar\"), (name: \"He\")],"),
            vec!["mix.ron:5:", "species[1].name", "`He` is not in the catalogue", "`Ne`, `Ar`, `Kr`, `Xe`"],
        ),
        (
            "wrong case",
            edit(species_line, "species: [(name: \"Ar\"), (name: \"kr\")],"),
            vec!["mix.ron:5:", "case-sensitive"],
        ),
        (
            "incomplete custom species",
            edit(species_line, "species: [(name: \"Ar\"), (name: \"Q\", sigma_angstrom: 3.9)],"),
            vec!["species[1]", "missing: epsilon_k, mass_g_per_mol"],
        ),
        (
            "custom value out of range",
            edit(
                species_line,
                "species: [(name: \"Ar\"), (name: \"Q\", sigma_angstrom: 3.9, epsilon_k: -5.0, mass_g_per_mol: 60.0)],",
            ),
            vec!["species[1].epsilon_k", "-5", "allowed range is (0, 11980] K"],
        ),
        (
            "duplicate name",
            edit(species_line, "species: [(name: \"Kr\"), (name: \"Kr\")],"),
            vec!["species[1].name", "already species 0"],
        ),
        (
            "name with a space",
            edit(
                species_line,
                "species: [(name: \"Ar\"), (name: \"K r\", sigma_angstrom: 3.9, epsilon_k: 150.0, mass_g_per_mol: 60.0)],",
            ),
            vec!["species[1].name", "not a usable species name"],
        ),
        (
            "unknown field in a species",
            edit(species_line, "species: [(name: \"Ar\"), (name: \"Kr\", sigma: 1.1)],"),
            vec!["mix.ron:5:", "unknown field `sigma` in `species`", "`sigma_angstrom`"],
        ),
        (
            "fractions not summing to 1",
            edit("composition: [0.75, 0.25]", "composition: [0.75, 0.5]"),
            vec!["mix.ron:6:", "composition", "sum to 1.25, not 1"],
        ),
        (
            "a fraction per species",
            edit("composition: [0.75, 0.25]", "composition: [1.0]"),
            vec!["mix.ron:6:", "gives 1 fractions for 2 species"],
        ),
        (
            "negative fraction",
            edit("composition: [0.75, 0.25]", "composition: [1.25, -0.25]"),
            vec!["composition", "[0, 1]"],
        ),
        (
            "composition missing for a mixture",
            edit("    composition: [0.75, 0.25],\n", ""),
            vec!["mix.ron:5:", "field `species`", "no `composition`", "composition: [0.5, 0.5]"],
        ),
        (
            "type beyond the species list",
            edit(
                "atoms: [Lattice(kind: Fcc, density: 0.7)],",
                "atoms: [Atoms(positions: [(1.0, 2.0, 1.0), (3.0, 2.0, 1.0)], types: [0, 2])],",
            ),
            vec!["atoms[0].types[1]", "a species index: 0 to 1"],
        ),
        (
            "types of the wrong length",
            edit(
                "atoms: [Lattice(kind: Fcc, density: 0.7)],",
                "atoms: [Atoms(positions: [(1.0, 2.0, 1.0), (3.0, 2.0, 1.0)], types: [0])],",
            ),
            vec!["atoms[0].types", "gives 1 types for 2 positions"],
        ),
        ("no species", edit(species_line, "species: [],"), vec!["species", "between 1 and 16"]),
    ];
    for (what, text, expected) in cases {
        let message = error_of(&text);
        for e in expected {
            assert!(message.contains(e), "{what}: {e:?} not in:\n{message}");
        }
    }
}

/// `cutoff: 2.5` is one distance for every pair, `cutoff: PerPair(2.5)` 2.5 sigma_ij per pair,
/// and a scene that says nothing gets PerPair(2.5); each survives a save and load, and reaches
/// the parameters' pair radii.
#[test]
fn cutoff_spellings_and_the_per_pair_default() {
    let with = |potential: &str| edit("    seed: 3,", &format!("    {potential}\n    seed: 3,"));
    let kr_sigma = 3.60 / 3.405;
    for (text, want, kr_kr) in [
        (BASE.to_string(), Cutoff::PerPair(2.5), 2.5 * kr_sigma),
        (with("potential: (cutoff: PerPair(2.5)),"), Cutoff::PerPair(2.5), 2.5 * kr_sigma),
        (with("potential: (cutoff: PerPair(3), shift: false),"), Cutoff::PerPair(3.0), 3.0 * kr_sigma),
        (with("potential: (cutoff: 2.5),"), Cutoff::Absolute(2.5), 2.5),
        (with("potential: (cutoff: Absolute(2.8)),"), Cutoff::Absolute(2.8), 2.8),
    ] {
        let scene = Scene::from_str(&text, "mix.ron").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(scene.potential.cutoff, want, "{text}");
        let again = Scene::from_str(&scene.to_ron(), "again.ron").unwrap();
        assert_eq!(again.potential.cutoff, want, "after a save:\n{}", scene.to_ron());
        let p = scene.build().unwrap().params;
        assert_eq!(p.cutoff, want);
        assert!((p.pair_cutoff(1, 1) - kr_kr).abs() < 1e-14 && p.max_cutoff() == p.pair_cutoff(1, 1), "{want}");
        assert_eq!(p.pair_cutoff(0, 0), want.value(), "argon's own pair");
    }
    let saved = Scene::from_str(&with("potential: (cutoff: PerPair(2.5)),"), "mix.ron").unwrap().to_ron();
    assert!(saved.contains("cutoff: PerPair(2.5)"), "{saved}");
    let saved = Scene::from_str(&with("potential: (cutoff: 2.5),"), "mix.ron").unwrap().to_ron();
    assert!(saved.contains("cutoff: 2.5,"), "{saved}");
}

/// The largest pair's cut-off must fit the periodic box: the error names the pair, the value
/// and the box length that would do.
#[test]
fn the_largest_pair_cutoff_must_fit_the_box() {
    let text = edit("species: [(name: \"Ar\"), (name: \"Kr\")]", "species: [(name: \"Ar\"), (name: \"Xe\")]")
        .replace("(12.0, 12.0, 8.0)", "(12.0, 12.0, 5.8)");
    let message = error_of(&text);
    for e in ["mix.ron:3:", "`potential.cutoff` = PerPair(2.5)", "Xe-Xe at 3.01 sigma", "along z", "at least 6.021"] {
        assert!(message.contains(e), "{e:?} not in:\n{message}");
    }
    // One absolute 2.5 sigma fits the same box.
    let absolute = text.replace("    seed: 3,", "    potential: (cutoff: 2.5),\n    seed: 3,");
    Scene::from_str(&absolute, "mix.ron").unwrap();
}
