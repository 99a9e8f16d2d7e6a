//! The preset scenes in `assets/scenes/`: each parses, validates and builds into a sane
//! system (atom count, no overlaps, exact temperature, zero momentum, or the stream's in a
//! wind tunnel), the wind-tunnel presets sit at the Reynolds and Mach numbers they promise,
//! and each survives a save/load round trip unchanged.

use std::path::{Path, PathBuf};

use argon_sandbox::analysis::degrees_of_freedom;
use argon_sandbox::scene::{Scene, SimSetup, find_close_pair};

/// Every preset's name, from the list built into the binary (which the first test below
/// checks against the folder).
fn preset_names() -> Vec<&'static str> {
    argon_sandbox::scene::presets::PRESETS.iter().map(|p| p.name).collect()
}

fn preset_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes").join(format!("{name}.ron"))
}

fn load(name: &str) -> Scene {
    Scene::load(&preset_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn build(name: &str) -> SimSetup {
    load(name).build().unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The kinetic temperature of the motion relative to the tunnel's stream (to the rest frame
/// without a tunnel).
fn kinetic_temperature(setup: &SimSetup) -> f64 {
    let sp = &setup.params.species;
    let u = setup.params.tunnel.map_or(0.0, |t| t.speed);
    let twice_ke: f64 = (setup.atoms.velocities.iter().zip(&setup.atoms.types))
        .map(|(v, &t)| sp[t as usize].mass * ((v[0] - u) * (v[0] - u) + v[1] * v[1] + v[2] * v[2]))
        .sum();
    let dof = degrees_of_freedom(setup.atoms.len(), &setup.sim_box, &setup.params, !setup.shapes.is_empty());
    twice_ke / dof
}

/// The built-in list (the gallery, `examples`, names on the command line) and the files in
/// `assets/scenes/` are the same set, and every preset has its picture: a real image of the
/// scene (not a blank placeholder), at least 240 px wide.
#[test]
fn the_built_in_list_and_the_scene_folder_are_equal_and_each_has_a_picture() {
    use argon_sandbox::scene::presets::PRESETS;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut listed: Vec<String> = preset_names().iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(listed, files, "src/scene/presets.rs PRESETS and assets/scenes/*.ron differ");
    for p in PRESETS {
        let text = std::fs::read_to_string(preset_path(p.name)).unwrap();
        assert_eq!(p.text, text, "{}: the embedded text is the file's", p.name);
        let on_disk = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/thumbnails/{}.png", p.name));
        assert_eq!(std::fs::read(&on_disk).unwrap(), p.thumbnail, "{}", p.name);
        let decoder = png::Decoder::new(std::io::Cursor::new(p.thumbnail));
        let mut reader = decoder.read_info().unwrap_or_else(|e| panic!("{}: thumbnail is no PNG: {e}", p.name));
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert!(info.width >= 240 && info.height >= 100, "{}: {}x{}", p.name, info.width, info.height);
        let px = &buf[..info.buffer_size()];
        let step = info.color_type.samples();
        let mut colours: Vec<&[u8]> = px.chunks_exact(step).step_by(7).collect();
        colours.sort();
        colours.dedup();
        assert!(colours.len() > 200, "{}: the thumbnail has only {} colours: a placeholder?", p.name, colours.len());
        let scene = Scene::from_str(p.text, p.name).unwrap();
        assert!(!scene.name.is_empty() && !scene.description.is_empty(), "{}: the gallery needs both", p.name);
        assert!(!p.shows.is_empty());
    }
}

/// The atom count each preset announces (gallery, `examples`, the too-slow estimate) is what
/// it builds.
#[test]
fn every_preset_builds_the_atoms_it_announces() {
    for p in argon_sandbox::scene::presets::PRESETS {
        assert_eq!(build(p.name).atoms.len(), p.atoms, "{}", p.name);
    }
}

/// `precision`: optional, one of Single / Mixed / Double; round trip; absent, `run` uses
/// double and the app mixed; anything else refused naming the field and the choices.
#[test]
fn the_precision_field_round_trips_defaults_and_refuses_bad_values() {
    use argon_sandbox::physics::real::Precision;
    let base = std::fs::read_to_string(preset_path("droplet")).unwrap();
    let without = base.replace("    precision: Single,\n", "");
    assert_ne!(without, base, "the droplet preset names its precision");
    let scene = Scene::from_str(&without, "without.ron").unwrap();
    assert_eq!(scene.precision, None);
    assert_eq!(scene.sim_params().precision, Precision::Double, "run's default");
    let app = argon_sandbox::app::actions::with_app_defaults(scene.clone());
    assert_eq!(app.sim_params().precision, Precision::Mixed, "the app's default");
    for p in Precision::ALL {
        let name = format!("{p:?}");
        let text = without.replace("    seed:", &format!("    precision: {name},\n    seed:"));
        let s = Scene::from_str(&text, "with.ron").unwrap();
        assert_eq!(s.precision, Some(p));
        assert_eq!(s.sim_params().precision, p);
        let again = Scene::from_str(&s.to_ron(), "again.ron").unwrap();
        assert_eq!(again, s, "{name} round trip");
        let written = s.to_ron();
        assert!(written.lines().any(|l| l.contains("precision") && l.contains(&name)), "{written}");
    }
    assert!(!scene.to_ron().contains("precision"), "absent stays absent");
    for bad in ["Quad", "\"single\"", "2"] {
        let text = without.replace("    seed:", &format!("    precision: {bad},\n    seed:"));
        let e = Scene::from_str(&text, "bad.ron").unwrap_err().to_string();
        assert!(e.contains("bad.ron:") && e.contains("precision"), "{bad}: {e}");
        if bad == "Quad" {
            assert!(e.contains("Single") && e.contains("Mixed") && e.contains("Double"), "{e}");
        }
    }
    // Every preset names the precision it is made for; the tunnels' and pictures' fastest.
    for name in preset_names() {
        let want = if name == "in_lj" { Precision::Double } else { Precision::Single };
        assert_eq!(load(name).precision, Some(want), "{name}");
    }
}

#[test]
fn every_preset_scene_builds_a_sane_system() {
    for (name, lo, hi) in [
        ("default", 8_000, 11_000),
        ("in_lj", 32_000, 32_000),
        ("channel_flow", 4_000, 9_000),
        ("droplet", 1_000, 2_000),
        ("ar_kr_mixture", 2_500, 3_200),
        ("twin_eddies", 34_000, 38_000),
        ("vortex_street", 1_150_000, 1_250_000),
    ] {
        let setup = build(name);
        let n = setup.atoms.len();
        assert!((lo..=hi).contains(&n), "{name}: {n} atoms, expected {lo}..={hi}");
        assert_eq!(setup.atoms.velocities.len(), n);
        if name == "ar_kr_mixture" {
            // 30 % krypton, to the atom.
            let kr = setup.atoms.types.iter().filter(|&&t| t == 1).count();
            assert_eq!(kr, (0.3 * n as f64).round() as usize, "{name}: {kr} krypton atoms of {n}");
            assert_eq!(setup.params.species.len(), 2);
        } else {
            assert_eq!(setup.atoms.types, vec![0; n]);
        }
        if let Some((a, b, d)) = find_close_pair(&setup.sim_box, &setup.atoms.positions, 0.8) {
            panic!("{name}: atoms {a} and {b} are only {d} sigma apart");
        }
        let len = setup.sim_box.length();
        for p in &setup.atoms.positions {
            for k in 0..3 {
                assert!(p[k] >= 0.0 && p[k] < len[k], "{name}: {p:?} outside the box");
                if !setup.sim_box.periodic[k] {
                    let clearance = 0.8 * setup.params.wall.sigma - 1e-12;
                    assert!(p[k] >= clearance && p[k] <= len[k] - clearance, "{name}: {p:?} on a wall");
                }
            }
            for s in &setup.shapes {
                assert!(s.signed_distance([p[0], p[1]]) > 0.7, "{name}: {p:?} inside a {}", s.kind());
            }
        }
        let t = kinetic_temperature(&setup);
        assert!((t - setup.params.temperature).abs() < 1e-9, "{name}: T = {t}, want {}", setup.params.temperature);
        // At rest, or moving with the tunnel's stream (an impulsive start).
        let stream = [setup.params.tunnel.map_or(0.0, |t| t.speed), 0.0, 0.0];
        let sp = &setup.params.species;
        let mass: f64 = setup.atoms.types.iter().map(|&t| sp[t as usize].mass).sum();
        for k in 0..3 {
            let p: f64 =
                setup.atoms.velocities.iter().zip(&setup.atoms.types).map(|(v, &t)| sp[t as usize].mass * v[k]).sum();
            assert!((p - mass * stream[k]).abs() < 1e-9 * mass.max(1.0), "{name}: momentum {p} along axis {k}");
        }
        setup.params.validate(&setup.sim_box).unwrap();
    }
}

#[test]
fn in_lj_scene_is_exactly_the_lammps_benchmark() {
    let setup = build("in_lj");
    assert_eq!(setup.atoms.len(), 32_000);
    let a = (4.0f64 / 0.8442).powf(1.0 / 3.0);
    for l in setup.sim_box.length() {
        assert!((l - 20.0 * a).abs() < 1e-12, "{l}");
    }
    assert!((setup.atoms.len() as f64 / setup.sim_box.volume() - 0.8442).abs() < 1e-12);
    assert!((setup.params.temperature - 1.44).abs() < 1e-12);
    assert!(!setup.params.shift);
    assert_eq!(setup.params.cutoff, argon_sandbox::physics::cutoff::Cutoff::Absolute(2.5));
    assert_eq!(setup.params.dt, 0.005);
    assert_eq!(setup.params.skin, 0.3);
    assert_eq!(setup.params.thermostat, argon_sandbox::physics::params::Thermostat::Nve);
    assert!(setup.sim_box.fully_periodic());
}

#[test]
fn preset_scenes_match_their_descriptions() {
    let default = build("default");
    assert_eq!(default.sim_box.periodic, [false, false, true]);
    assert!(default.params.gravity > 0.0 && default.shapes.len() >= 3);
    assert!((default.params.temperature - 0.75).abs() < 0.01);
    let below = default.atoms.positions.iter().filter(|p| p[1] < 20.0).count();
    assert!(below as f64 > 0.95 * default.atoms.len() as f64, "the liquid is in the lower half");
    let channel = build("channel_flow");
    assert_eq!(channel.sim_box.periodic, [true, false, true]);
    assert!(channel.params.drive > 0.0 && channel.shapes.len() == 1);
    assert!(channel.params.thermostat.relative_to_flow(), "the flow preset thermostats relative to the flow");
    let droplet = build("droplet");
    assert_eq!(droplet.sim_box.periodic, [false; 3]);
    assert!(droplet.params.wall.cutoff > 2.0, "attractive walls");
}

/// The wind-tunnel presets at the numbers their comments promise: twin eddies at Re 10-40
/// (steady recirculation), the vortex street at Re >= 50 (shedding); Re = U D rho / eta with
/// rho the atoms over the free volume, eta the LJTS correlation at that density and T, and
/// both below Mach 0.5 (JZG sound speed).
#[test]
fn wind_tunnel_presets_sit_at_their_reynolds_and_mach_numbers() {
    use argon_sandbox::flow::wake::{lj_viscosity, mach, reynolds};
    use argon_sandbox::physics::jzg::sound_speed;
    for (name, re_lo, re_hi) in [("twin_eddies", 20.0, 30.0), ("vortex_street", 60.0, 80.0)] {
        let setup = build(name);
        let tunnel = setup.params.tunnel.unwrap_or_else(|| panic!("{name}: no tunnel"));
        assert_eq!(setup.sim_box.periodic, [true; 3], "{name}");
        assert_eq!(setup.shapes.len(), 1, "{name}");
        assert!(setup.params.surface_friction.is_some(), "{name}: a no-slip cylinder");
        let (lo, hi) = setup.shapes[0].bounds();
        let d = hi[1] - lo[1];
        let len = setup.sim_box.length();
        let free = setup.sim_box.volume() - std::f64::consts::PI * 0.25 * d * d * len[2];
        let rho = setup.atoms.len() as f64 / free;
        let t = setup.params.temperature;
        let re = reynolds(tunnel.speed, d, rho, lj_viscosity(rho, t).unwrap());
        let ma = mach(tunnel.speed, sound_speed(rho, t, 1.0));
        eprintln!("{name}: rho {rho:.4}, T {t:.3}, U {}, D {d:.2}: Re {re:.1}, Mach {ma:.3}", tunnel.speed);
        assert!((re_lo..=re_hi).contains(&re), "{name}: Re {re}");
        assert!(ma > 0.3 && ma < 0.5, "{name}: Mach {ma}");
        // Blockage D / L_y and the cylinder's distance from the inflow zone.
        assert!(d / len[1] <= 0.2 + 1e-9, "{name}: blockage {}", d / len[1]);
        assert!(lo[0] - tunnel.zone >= 2.5 * d, "{name}: the cylinder is too close to the inflow");
        assert!(setup.fields.is_some(), "{name}: opens in the Flow view");
    }
}

#[test]
fn scene_building_is_deterministic() {
    assert_eq!(build("default"), build("default"));
}

#[test]
fn preset_scenes_round_trip_through_to_ron() {
    for name in preset_names() {
        let scene = load(name);
        let text = scene.to_ron();
        assert!(text.starts_with("// argon-sandbox scene"), "{text}");
        let again = Scene::from_str(&text, name).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_eq!(again, scene, "{name}");
    }
}

#[test]
fn save_and_load_a_running_state_as_a_scene() {
    let scene = load("droplet");
    let setup = scene.build().unwrap();
    let saved = scene.with_atoms(&setup.atoms);
    let dir = std::env::temp_dir().join(format!("argon-scene-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("state.ron");
    saved.save(&path).unwrap();
    let loaded = Scene::load(&path).unwrap();
    assert_eq!(loaded, saved);
    let rebuilt = loaded.build().unwrap();
    assert_eq!(rebuilt.atoms, setup.atoms, "explicit positions and velocities come back exactly");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Save -> load gives the same simulation bit for bit (double precision): a scene document
/// comes back equal and builds the same system; a running state saved as a scene (atoms,
/// step and time) continues exactly as the run it was saved from, thermostat noise included.
#[test]
fn saved_scenes_continue_the_same_simulation_bit_for_bit() {
    use argon_sandbox::physics::obstacles::ObstacleField;
    use argon_sandbox::physics::real::Precision;
    use argon_sandbox::sim::{Backend, BackendChoice, open_backend, start_at};
    use std::sync::Arc;

    let dir = std::env::temp_dir().join(format!("argon-scene-bits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let open = |s: &SimSetup| -> Box<dyn Backend> {
        let mut params = s.params.clone();
        params.precision = Precision::Double;
        let field = ObstacleField::bake(&s.shapes, &s.sim_box, 0.1).map(Arc::new);
        let (mut b, _) = open_backend(BackendChoice::Cpu, s.sim_box, params, &s.atoms, field).unwrap();
        start_at(b.as_mut(), s.step, s.time, s.piston).unwrap();
        b
    };
    for name in preset_names() {
        let scene = load(name);
        let path = dir.join(format!("{name}.ron"));
        scene.save(&path).unwrap();
        let loaded = Scene::load(&path).unwrap();
        assert_eq!(loaded, scene, "{name}: the document");
        assert_eq!(loaded.build().unwrap(), scene.build().unwrap(), "{name}: the built system");

        let mut original = open(&scene.build().unwrap());
        original.advance(30).unwrap();
        let snap = original.snapshot().unwrap();
        let state_path = dir.join(format!("{name}-running.ron"));
        scene.with_state(&snap).save(&state_path).unwrap();
        let resumed_setup = Scene::load(&state_path).unwrap().build().unwrap();
        assert_eq!(resumed_setup.atoms, snap.atoms, "{name}: the saved atoms");
        let mut resumed = open(&resumed_setup);
        assert_eq!(resumed.step(), 30);
        original.advance(40).unwrap();
        resumed.advance(40).unwrap();
        let (a, b) = (original.snapshot().unwrap(), resumed.snapshot().unwrap());
        assert_eq!((a.step, a.time), (b.step, b.time), "{name}: the clock");
        assert!(a.atoms == b.atoms, "{name}: the resumed run differs from the continued one");
        assert_ne!(a.atoms.positions, snap.atoms.positions, "{name}: nothing moved");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
