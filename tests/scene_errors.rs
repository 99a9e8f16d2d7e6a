//! Bad scene files, each with the error it must give: the message names the place
//! (`file:line:col`), the field, the value and what is allowed. Nothing here may panic,
//! whatever the input.

use std::path::Path;

use argon_sandbox::scene::{Scene, SceneError};

/// A small valid scene; each case edits it.
const BASE: &str = "(
    version: 1,
    box: (size: (20.0, 20.0, 10.0), boundaries: (Wall, Wall, Periodic)),
    temperature_k: 100.0,
    atoms: [Lattice(kind: Fcc, density: 0.5)],
)
";

/// `BASE` with `from` replaced by `to` (`from` must occur, so cases cannot silently rot).
fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from:?} is not in the base scene");
    BASE.replacen(from, to, 1)
}

/// `BASE` with an extra field line before `atoms`.
fn with_field(line: &str) -> String {
    edit("    atoms:", &format!("    {line}\n    atoms:"))
}

fn error_of(text: &str) -> SceneError {
    match Scene::from_str(text, "bad.ron") {
        Ok(_) => panic!("accepted a bad scene:\n{text}"),
        Err(e) => e,
    }
}

fn build_error(scene: &Scene) -> String {
    match scene.build() {
        Ok(setup) => panic!("built {} atoms from a scene that should fail", setup.atoms.len()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_base_scene_is_valid() {
    let scene = Scene::from_str(BASE, "base.ron").unwrap();
    assert!(scene.build().unwrap().atoms.len() > 1000);
}

#[test]
fn bad_scenes_give_their_expected_errors() {
    let atoms_line = "    atoms: [Lattice(kind: Fcc, density: 0.5)],";
    // (what, text, expected substrings of the message)
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "unknown field",
            edit("temperature_k:", "temperatur_k:"),
            vec!["bad.ron:4:5:", "unknown field `temperatur_k` in the scene", "expected one of", "`temperature_k`"],
        ),
        (
            "unknown field in a nested struct",
            with_field("potential: (cutof: 3.0),"),
            vec!["bad.ron:5:17:", "unknown field `cutof` in `potential`", "`cutoff`, `shift`"],
        ),
        (
            "unknown field in a thermostat",
            with_field("thermostat: Csvr(tau: 0.5, tua: 1.0),"),
            vec!["unknown field `tua`", "`thermostat` entry `Csvr`", "`tau`"],
        ),
        (
            "typo'd enum variant",
            edit("Periodic", "Periodc"),
            vec!["bad.ron:3:62:", "unknown variant `Periodc` in `box.boundaries`", "`Periodic`, `Wall`"],
        ),
        ("typo'd fill", edit("Lattice(", "Latice("), vec!["unknown variant `Latice`", "`Lattice`, `Gas`"]),
        (
            "no steps per frame",
            with_field("steps_per_frame: 0,"),
            vec!["bad.ron:5:22:", "`steps_per_frame` = 0", "1 to 10000"],
        ),
        (
            "too many steps per frame",
            with_field("steps_per_frame: 20000,"),
            vec!["steps_per_frame", "20000", "1 to 10000"],
        ),
        ("missing required field", edit("    temperature_k: 100.0,\n", ""), vec!["missing field `temperature_k`"]),
        (
            "missing version",
            edit("    version: 1,\n", ""),
            vec!["bad.ron:1:1:", "missing field `version`", "version: 1,"],
        ),
        (
            "wrong version",
            edit("version: 1", "version: 2"),
            vec!["bad.ron:2:14:", "scene version 2 is not supported", "reads version 1", "newer"],
        ),
        (
            "syntax error",
            edit("(size: (20.0, 20.0, 10.0),", "(size: (20.0, 20.0, 10.0)"),
            vec!["bad.ron:3:36:", "comma"],
        ),
        ("unclosed bracket", BASE.trim_end().trim_end_matches(')').to_string(), vec!["end of file"]),
        ("trailing text", format!("{BASE} extra"), vec!["trailing"]),
        ("wrong type", edit("density: 0.5", "density: \"dense\""), vec!["bad.ron:5:41:", "float"]),
        ("vector of wrong length", edit("(20.0, 20.0, 10.0)", "(20.0, 20.0)"), vec!["length 3", "(x, y, z)"]),
        ("integer too large", with_field("seed: 123456789012345678901234567890,"), vec!["integer out of range"]),
        ("duplicate field", with_field("temperature_k: 90.0,"), vec!["`temperature_k` appears twice"]),
        (
            "negative radius",
            with_field("obstacles: [Circle(centre: (5.0, 5.0), radius: -1.0)],"),
            vec!["bad.ron:5:52:", "field `obstacles[0].radius` = -1 is out of range", "(0, 1e6] sigma"],
        ),
        (
            "cutoff larger than half the periodic box",
            with_field("potential: (cutoff: 6.0),"),
            vec!["bad.ron:5:25:", "field `potential.cutoff` = 6", "half the periodic box along z", "at least 12"],
        ),
        (
            "per-pair cutoff out of range",
            with_field("potential: (cutoff: PerPair(0.5)),"),
            vec![
                "bad.ron:5:25:",
                "field `potential.cutoff` = PerPair(0.5) is out of range",
                "PerPair(1) to PerPair(10)",
            ],
        ),
        (
            "absolute cutoff out of range",
            with_field("potential: (cutoff: 12),"),
            vec!["bad.ron:5:25:", "field `potential.cutoff` = 12 is out of range", "[1, 10] sigma", "PerPair(2.5)"],
        ),
        (
            "cutoff neither a number nor PerPair",
            with_field("potential: (cutoff: PerPiar(2.5)),"),
            vec!["bad.ron:5:", "the cutoff is a number", "`PerPair(k)`", "cutoff: PerPair(2.5)"],
        ),
        ("cutoff as text", with_field("potential: (cutoff: \"2.5\"),"), vec!["bad.ron:5:", "the cutoff is a number"]),
        (
            "default cutoff larger than half a small periodic box",
            edit("(20.0, 20.0, 10.0)", "(20.0, 20.0, 4.0)"),
            vec![
                "bad.ron:3:17:",
                "`potential.cutoff` = PerPair(2.5)",
                "Ar-Ar at 2.5 sigma",
                "at least 5",
                "default applies",
            ],
        ),
        (
            "overlapping explicit atoms",
            edit(atoms_line, "    atoms: [Atoms(positions: [(1, 1, 1), (5, 5, 5), (1.3, 1, 1)])],"),
            vec!["bad.ron:5:53:", "field `atoms[0].positions[2]`", "overlaps atoms[0].positions[0]", "0.3 sigma apart"],
        ),
        (
            "explicit atoms overlapping through the periodic boundary",
            edit(atoms_line, "    atoms: [Atoms(positions: [(1, 1, 0.1), (1, 1, 9.9)])],"),
            vec!["atoms[0].positions[1]", "0.2 sigma apart", "minimum image"],
        ),
        (
            "explicit atom in a wall",
            edit(atoms_line, "    atoms: [Atoms(positions: [(1, 1, 1), (1, 20.5, 1)])],"),
            vec!["`atoms[0].positions[1]` = (1, 20.5, 1)", "0 < y < 20"],
        ),
        (
            "velocities length mismatch",
            edit(atoms_line, "    atoms: [Atoms(positions: [(1, 1, 1), (3, 3, 3)], velocities: [(0, 0, 0)])],"),
            vec!["atoms[0].velocities", "1 velocities for 2 positions"],
        ),
        (
            "obstacle outside the tank",
            with_field("obstacles: [Circle(centre: (50.0, 5.0), radius: 2.0)],"),
            vec!["bad.ron:5:17:", "field `obstacles[0]`", "entirely outside the tank", "[0, 20] x [0, 20]"],
        ),
        (
            "polygon with two points",
            with_field("obstacles: [Polygon(points: [(1.0, 1.0), (2.0, 2.0)])],"),
            vec!["obstacles[0].points", "between 3 and 1000 points", "has 2"],
        ),
        (
            "polygon without area",
            with_field("obstacles: [Polygon(points: [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)])],"),
            vec!["obstacles[0].points", "no area"],
        ),
        ("empty stroke", with_field("obstacles: [Stroke(points: [], radius: 1.0)],"), vec!["between 1 and"]),
        (
            "density out of range",
            edit("density: 0.5", "density: 2.0"),
            vec!["bad.ron:5:41:", "`atoms[0].density` = 2 is out of range", "(0, 1.5]"],
        ),
        ("zero density", edit("density: 0.5", "density: 0.0"), vec!["`atoms[0].density` = 0", "(0, 1.5]"]),
        (
            "dt out of range",
            with_field("integrator: (dt: 0.5),"),
            vec!["bad.ron:5:22:", "field `integrator.dt` = 0.5 is out of range", "(0, 0.05] tau"],
        ),
        (
            "region outside the box",
            edit("density: 0.5)", "density: 0.5, region: (lo: (0, 0, 0), hi: (10, 25, 10)))"),
            vec!["atoms[0].region.hi[1]", "= 25", "inside the box: [0, 20] sigma along y"],
        ),
        (
            "region upside down",
            edit("density: 0.5)", "density: 0.5, region: Some((lo: (5, 0, 0), hi: (2, 5, 5))))"),
            vec!["atoms[0].region.hi[0]", "lo < hi"],
        ),
        (
            "liquid slab upside down",
            edit(atoms_line, "    atoms: [LiquidSlab(liquid_density: 0.8, vapour_density: 0.0, from: 12, to: 4)],"),
            vec!["atoms[0].to", "not above from = 12"],
        ),
        ("temperature 1e400 reads as infinity", edit("100.0", "1e400"), vec!["`temperature_k` = inf", "11,980 K"]),
        ("temperature NaN", edit("100.0", "NaN"), vec!["`temperature_k` = NaN"]),
        ("temperature zero", edit("100.0", "0.0"), vec!["bad.ron:4:20:", "`temperature_k` = 0 is out of range"]),
        (
            "thermostat time shorter than a step",
            with_field("thermostat: Berendsen(tau: 0.001),"),
            vec!["bad.ron:5:32:", "`thermostat.tau` = 0.001", "at least one time step"],
        ),
        ("gravity too strong", with_field("forces: (gravity: 11.0),"), vec!["`forces.gravity` = 11", "[-10, 10]"]),
        ("wall sigma", with_field("walls: (sigma: 9.0),"), vec!["`walls.sigma` = 9", "[0.1, 5]"]),
        ("obstacle sigma", with_field("obstacle_wall: (sigma: 3.0),"), vec!["`obstacle_wall.sigma` = 3", "[0.1, 2]"]),
        ("box edge zero", edit("(20.0, 20.0, 10.0)", "(0.0, 20.0, 10.0)"), vec!["bad.ron:3:18:", "`box.size[0]` = 0"]),
        (
            "too many atoms",
            edit("(20.0, 20.0, 10.0)", "(1000.0, 1000.0, 100.0)").replace("density: 0.5", "density: 0.6"),
            vec!["field `atoms[0]`", "about 60000000 atoms", "more than the 50000000"],
        ),
        ("no fills", edit("[Lattice(kind: Fcc, density: 0.5)]", "[]"), vec!["`atoms`", "no fills"]),
        ("empty file", String::new(), vec!["bad.ron: the file is empty"]),
        ("struct of another name", format!("Foo{BASE}"), vec!["bad.ron:1:1:", "`Foo`"]),
        ("unclosed comment", format!("{BASE} /* trailing"), vec!["comment"]),
    ];
    assert!(cases.len() >= 15);
    let mut failures = Vec::new();
    for (what, text, expected) in &cases {
        let message = error_of(text).to_string();
        eprintln!("{what}:\n    {message}");
        for e in expected {
            if !message.contains(e) {
                failures.push(format!("{what}: expected {e:?} in\n    {message}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn scene_errors_carry_line_column_and_field() {
    let e = error_of(&with_field("integrator: (dt: 0.5),"));
    assert_eq!(e.line_col(), Some((5, 22)));
    assert_eq!(e.field(), Some("integrator.dt"));
    assert!(matches!(e, SceneError::OutOfRange { .. }));
}

#[test]
fn scenes_that_fit_no_atoms_fail_to_build() {
    let text = with_field("obstacles: [Rectangle(centre: (10.0, 10.0), half_size: (15.0, 15.0), angle_deg: 0.0)],");
    let scene = Scene::from_str(&text, "full.ron").unwrap();
    let e = build_error(&scene);
    assert!(e.contains("no atoms"), "{e}");
}

#[test]
fn scene_with_explicit_atoms_on_a_lattice_fails_to_build() {
    // FCC at density 0.5 has a = 2 sigma, so there is a site at (2, 2, 0).
    let text = edit("density: 0.5)]", "density: 0.5), Atoms(positions: [(2.1, 2.0, 0.0)])]");
    let scene = Scene::from_str(&text, "clash.ron").unwrap();
    let e = build_error(&scene);
    assert!(e.contains("atoms[1]: positions[0]") && e.contains("earlier fill"), "{e}");
}

#[test]
fn scene_with_a_dense_random_gas_is_refused_not_hung() {
    let text = edit("Lattice(kind: Fcc, density: 0.5)", "Gas(density: 1.4)");
    let e = build_error(&Scene::from_str(&text, "gas.ron").unwrap());
    assert!(e.contains("gas atoms fit") && e.contains("Lattice"), "{e}");
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("argon-scene-errors-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn unreadable_scene_files() {
    let dir = temp_dir("files");
    let missing = dir.join("missing.ron");
    let e = Scene::load(&missing).unwrap_err();
    assert!(matches!(e, SceneError::Unreadable { .. }));
    assert!(e.to_string().contains("missing.ron: cannot read the scene file"), "{e}");

    let binary = dir.join("binary.ron");
    std::fs::write(&binary, b"(\n  version: 1,\n  name: \"\xff\xfe\",\n)").unwrap();
    let e = Scene::load(&binary).unwrap_err().to_string();
    assert!(e.contains("binary.ron:3:10:") && e.contains("not UTF-8"), "{e}");

    let e = Scene::load(&dir).unwrap_err().to_string();
    assert!(e.contains("folder"), "{e}");

    let huge = dir.join("huge.ron");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(argon_sandbox::scene::MAX_FILE_BYTES + 1).unwrap();
    let e = Scene::load(&huge).unwrap_err().to_string();
    assert!(e.contains("larger than") && e.contains("256 MiB"), "{e}");

    let good = dir.join("good.ron");
    std::fs::write(&good, format!("\u{feff}{BASE}")).unwrap();
    Scene::load(&good).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn scene_save_into_a_missing_folder_is_an_error() {
    let scene = Scene::from_str(BASE, "base.ron").unwrap();
    let e = scene.save(Path::new("/nonexistent-folder/x.ron")).unwrap_err().to_string();
    assert!(e.contains("cannot save"), "{e}");
}

/// A tiny deterministic generator for the mutation test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
/// 100,000 mutated scenes (deleted, inserted and cut characters, extreme numbers): none
/// panics; the ones that parse also build (small ones) without panicking; the others' errors
/// (syntax aside) write no number longer than 12 characters.
fn mangled_scenes_never_panic() {
    let original =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/default.ron")).unwrap();
    let alphabet: Vec<char> = "(),[]{}:\"'/*#!0123456789.-+eE_ \nSomeNoneWallPeriodicxyzé".chars().collect();
    let numbers = ["0", "-1", "1e308", "-1e308", "1e-308", "1e400", "NaN", "inf", "0.0000001", "9999999"];
    let mut rng = Lcg(42);
    let mut accepted = 0;
    for round in 0..100_000 {
        let mut chars: Vec<char> = original.chars().collect();
        for _ in 0..1 + rng.next(4) {
            let at = rng.next(chars.len());
            match rng.next(4) {
                0 => {
                    chars.remove(at);
                }
                1 => chars.insert(at, alphabet[rng.next(alphabet.len())]),
                2 => {
                    // Replace a number with an extreme one.
                    if chars[at].is_ascii_digit() {
                        let mut end = at;
                        while end < chars.len() && (chars[end].is_ascii_digit() || chars[end] == '.') {
                            end += 1;
                        }
                        let n = numbers[rng.next(numbers.len())];
                        chars.splice(at..end, n.chars());
                    }
                }
                _ => {
                    let end = (at + rng.next(40)).min(chars.len());
                    chars.drain(at..end);
                }
            }
        }
        let text: String = chars.into_iter().collect();
        match Scene::from_str(&text, "mangled.ron") {
            Ok(scene) => {
                accepted += 1;
                if scene.sim_box().volume() < 2e4 && round % 10 == 0 {
                    let _ = scene.build();
                }
            }
            // A value or a number computed from one is never written out in full (a syntax
            // error may quote the text as typed).
            Err(e) if !matches!(e, SceneError::Syntax { .. }) => {
                let msg = e.to_string();
                let longest = numbers_in(&msg).into_iter().next().unwrap_or_default();
                assert!(longest.len() <= 12, "the number {longest} in: {msg}");
            }
            Err(_) => {}
        }
    }
    assert!(accepted > 0, "some mutations (inside comments) leave the scene valid");
}

#[test]
fn deeply_nested_scenes_are_refused_without_overflowing_the_stack() {
    for open in ["(", "[", "Some("] {
        let text = format!("(version: 1, name: {}", open.repeat(100_000));
        let e = error_of(&text).to_string();
        assert!(e.starts_with("bad.ron:1:"), "{e}");
        let text = format!("(version: 1, box: (size: {}", open.repeat(100_000));
        assert!(error_of(&text).line_col().is_some());
    }
}

/// Every run of digits (with its sign, point and exponent) in `text`, longest first.
fn numbers_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        let part = c.is_ascii_digit() || c == '.' || ((c == 'e' || c == '-' || c == '+') && !cur.is_empty());
        if part {
            cur.push(c);
        } else {
            if cur.chars().any(|c| c.is_ascii_digit()) {
                out.push(cur.trim_end_matches(['.', 'e', '-', '+']).to_string());
            }
            cur.clear();
        }
    }
    out.sort_by_key(|n| std::cmp::Reverse(n.len()));
    out
}

/// A wind tunnel streaming at 1e308 sigma/tau: refused under `tunnel.speed`, and no number in
/// the message (the value, the Mach number computed from it, the speed of sound, the fix) is
/// written out in hundreds of digits.
#[test]
fn an_absurd_stream_speed_gives_a_short_error_naming_the_field() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/twin_eddies.ron")).unwrap();
    assert!(text.contains("speed: 2.6,"));
    for speed in ["1e308", "1.7976931348623157e308", "123456789012345678901234567890.5"] {
        let bad = text.replacen("speed: 2.6,", &format!("speed: {speed},"), 1);
        let e = match Scene::from_str(&bad, "fast.ron") {
            Ok(_) => panic!("a stream of {speed} sigma/tau was accepted"),
            Err(e) => e,
        };
        let msg = e.to_string();
        assert_eq!(e.field(), Some("tunnel.speed"), "{msg}");
        assert!(msg.contains("field `tunnel.speed`") && msg.contains("set a speed below"), "{msg}");
        assert!(msg.contains("is Mach "), "{msg}");
        let longest = &numbers_in(&msg)[0];
        assert!(longest.len() <= 12, "{speed}: the number {longest} in: {msg}");
    }
}

/// The vortex street's start spin with bad values: each refused under its field, at its place
/// in the file, with the fix; without surface friction the spin is refused too (it would do
/// nothing). The preset itself is valid with the spin on.
#[test]
fn bad_start_spins_name_their_field() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/vortex_street.ron")).unwrap();
    let spin = "start_spin: Some((spin: 1.0, time: 35.0))";
    assert!(text.contains(spin), "the preset has no start spin");
    let scene = Scene::from_str(&text, "vortex_street.ron").unwrap();
    assert_eq!(scene.tunnel.and_then(|t| t.start_spin).map(|s| (s.spin, s.time)), Some((1.0, 35.0)));
    let line = text.lines().position(|l| l.contains(spin)).unwrap() + 1;
    for (bad, field, fix) in [
        ("spin: 3.5, time: 35.0", "tunnel.start_spin.spin", "[-3, 3]"),
        ("spin: -4.0, time: 35.0", "tunnel.start_spin.spin", "[-3, 3]"),
        ("spin: NaN, time: 35.0", "tunnel.start_spin.spin", "finite"),
        ("spin: 1.0, time: 0.0", "tunnel.start_spin.time", "> 0 tau"),
        ("spin: 1.0, time: -5.0", "tunnel.start_spin.time", "> 0 tau"),
        ("spin: 1.0, time: inf", "tunnel.start_spin.time", "finite"),
    ] {
        let bad_text = text.replacen("spin: 1.0, time: 35.0", bad, 1);
        let e = match Scene::from_str(&bad_text, "spin.ron") {
            Ok(_) => panic!("accepted start_spin: ({bad})"),
            Err(e) => e,
        };
        let msg = e.to_string();
        assert_eq!(e.field(), Some(field), "{bad}: {msg}");
        assert!(msg.contains(&format!("spin.ron:{line}:")), "{bad}: not located on line {line}: {msg}");
        assert!(msg.contains(&format!("field `{field}`")) && msg.contains(fix), "{bad}: {msg}");
    }
    // No surface friction: the spin has nothing to act through.
    let friction = "    surface_friction: (damp: 0.5, range: 1.5),\n";
    assert!(text.contains(friction));
    let e = match Scene::from_str(&text.replacen(friction, "", 1), "spin.ron") {
        Ok(_) => panic!("accepted a start spin without surface friction"),
        Err(e) => e,
    };
    let msg = e.to_string();
    assert_eq!(e.field(), Some("tunnel.start_spin"), "{msg}");
    assert!(msg.contains("surface friction") && msg.contains("add `surface_friction"), "{msg}");
    // The defaults when written `Some(())`: spin 1, 35 tau.
    let e = Scene::from_str(&text.replacen(spin, "start_spin: Some(())", 1), "spin.ron").unwrap();
    assert_eq!(e.tunnel.and_then(|t| t.start_spin).map(|s| (s.spin, s.time)), Some((1.0, 35.0)));
}
