//! The app driven through its real UI with egui_kittest: typed values reach the simulation
//! (and bad ones are refused with a message), drawing a rectangle adds an obstacle that acts
//! on the atoms, undo restores, pause stops steps, switching algorithm and precision keeps N
//! and the energy continuous, the g(r) plot fills; and snapshot images of the panels.
//! The simulation runs on the CPU backend on its own thread, as in the app.

mod app_common;

use std::time::{Duration, Instant};

use argon_sandbox::app::App;
use argon_sandbox::sim::BackendChoice;
use argon_sandbox::units;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use app_common::*;

fn app(paused: bool, atoms: usize) -> App {
    app_on(BackendChoice::Cpu, paused, atoms)
}

/// Tall enough that the Tools panel's Undo row is on screen below the open panels above it
/// (a click on a row scrolled out of the panel does not reach it).
fn harness(app: App) -> Harness<'static, App> {
    harness_of(app, [1400.0, 1300.0])
}

#[test]
fn typed_target_temperature_reaches_the_simulation_and_bad_values_are_refused() {
    let mut h = harness(app(false, 3000));
    loaded(&mut h);
    type_into(&mut h, "Target temperature", "150");
    let want = units::kelvin_to_reduced(150.0);
    until(&mut h, 20.0, "the new target temperature", |a| {
        a.status.as_ref().is_some_and(|s| (s.params.temperature - want).abs() < 1e-9)
    });
    // A bad value is refused with a message naming the field and the range; nothing is sent.
    type_into(&mut h, "Target temperature", "-40");
    h.get_by_label_contains("Target temperature: \"-40\" is not allowed; enter a number from 1 to 5000 K");
    type_into(&mut h, "Time step", "abc");
    h.get_by_label_contains("Time step: \"abc\" is not allowed");
    for _ in 0..20 {
        h.step();
    }
    let s = h.state().status.clone().unwrap();
    assert!((s.params.temperature - want).abs() < 1e-9);
    assert!((s.params.dt - 0.005).abs() < 1e-12, "dt changed to {}", s.params.dt);
}

#[test]
fn drawing_a_rectangle_adds_an_obstacle_that_acts_and_undo_restores() {
    let mut h = harness(app(false, 3000));
    loaded(&mut h);
    let before = h.state().shapes.len();
    let n0 = h.state().status.as_ref().unwrap().n_atoms;
    let b = h.state().status.as_ref().unwrap().sim_box;
    let (w, ht) = (b.hi[0] - b.lo[0], b.hi[1] - b.lo[1]);
    // A rectangle in the liquid (lower half): atoms inside are removed, the rest kept out.
    let (a, c) = ([0.45 * w, 0.12 * ht], [0.60 * w, 0.30 * ht]);
    h.get_by_label("Rectangle").click();
    h.step();
    let pa = argon_sandbox::ui::view::tank_to_point(h.state(), a);
    let pc = argon_sandbox::ui::view::tank_to_point(h.state(), c);
    h.hover_at(pa);
    h.step();
    h.drag_at(pa);
    h.step();
    for k in 1..=4 {
        h.hover_at(pa + (pc - pa) * (k as f32 / 4.0));
        h.step();
    }
    h.drop_at(pc);
    h.step();
    h.step();
    assert_eq!(h.state().shapes.len(), before + 1, "the rectangle was not added");
    until(&mut h, 20.0, "the simulation to take the obstacle", |app| {
        app.status.as_ref().is_some_and(|s| s.n_obstacles == before + 1 && s.n_atoms < n0)
    });
    // After some steps no atom centre is inside the rectangle: its force acts.
    let step0 = h.state().frame_step;
    until(&mut h, 30.0, "steps with the obstacle", |app| app.frame_step > step0 + 100);
    let frame = h.state().frame.clone().unwrap();
    let inside = frame
        .iter()
        .filter(|p| {
            let (x, y) = (p[0] as f64, p[1] as f64);
            x > a[0] + 0.3 && x < c[0] - 0.3 && y > a[1] + 0.3 && y < c[1] - 0.3
        })
        .count();
    assert_eq!(inside, 0, "{inside} atoms inside the obstacle");
    // Undo (Ctrl+Z) restores the shapes here and in the simulation; redo brings it back.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.step();
    assert_eq!(h.state().shapes.len(), before);
    until(&mut h, 20.0, "undo to reach the simulation", |app| {
        app.status.as_ref().is_some_and(|s| s.n_obstacles == before)
    });
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Y);
    h.step();
    assert_eq!(h.state().shapes.len(), before + 1);
}

/// Single steps (the "." key, a frame of 10 steps each) up to the next telemetry record
/// (every 100 steps), checking each leaves the simulation paused.
/// The largest change of the energy per atom over the next three telemetry intervals, from
/// `e_last` (left at the last record's energy).
fn unswitched_fluctuation(h: &mut Harness<'_, App>, e_last: &mut f64) -> f64 {
    let mut most = 0.0f64;
    for _ in 0..3 {
        step_to_next_record(h);
        let e = h.state().last_telemetry.as_ref().unwrap().etotal_per_atom();
        most = most.max((e - *e_last).abs());
        *e_last = e;
    }
    most
}

fn step_to_next_record(h: &mut Harness<'_, App>) {
    let t0 = h.state().last_telemetry.as_ref().unwrap().step;
    for _ in 0..12 {
        if h.state().last_telemetry.as_ref().is_some_and(|t| t.step > t0) {
            return;
        }
        let at = h.state().status.as_ref().unwrap().step;
        h.key_press(egui::Key::Period);
        until(h, 20.0, "a single step", |a| a.status.as_ref().is_some_and(|s| s.step == at + 10));
        assert!(!h.state().running(), "a single step must leave the simulation paused");
    }
    panic!("no telemetry after 120 steps");
}

#[test]
fn pause_stops_steps_and_switching_algorithm_or_precision_keeps_n_and_energy() {
    let mut h = harness(app(false, 3000));
    loaded(&mut h);
    until(&mut h, 30.0, "some steps", |a| a.frame_step >= 1000 && a.last_telemetry.is_some());
    h.get_by_label("Pause").click();
    h.step();
    until(&mut h, 10.0, "the pause", |a| a.status.as_ref().is_some_and(|s| !s.running));
    std::thread::sleep(Duration::from_millis(200));
    h.step();
    let paused_at = h.state().status.as_ref().unwrap().step;
    for _ in 0..30 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(h.state().status.as_ref().unwrap().step, paused_at, "steps were taken while paused");
    let n = h.state().status.as_ref().unwrap().n_atoms;
    // Constant energy (no thermostat), so a jump at a switch would stand out.
    choose(&mut h, "Ensemble", "NVE (no thermostat)");
    until(&mut h, 10.0, "NVE", |a| {
        a.status.as_ref().is_some_and(|s| s.params.thermostat == argon_sandbox::physics::params::Thermostat::Nve)
    });
    step_to_next_record(&mut h);
    // The integrator's own fluctuation, for scale: the largest energy change over three
    // telemetry intervals (100 steps each) without a switch, measured in the settings on both
    // sides of each switch (single precision fluctuates several times more than double: one
    // switch measured against double's intervals alone was 4.2 times them). A switch may move
    // the energy by no more than 3 times that.
    let mut e_last = h.state().last_telemetry.as_ref().unwrap().etotal_per_atom();
    let mut before = unswitched_fluctuation(&mut h, &mut e_last);
    for (combo, option) in [("Precision", "single"), ("Algorithm", "Cell list"), ("Precision", "mixed")] {
        choose(&mut h, combo, option);
        step_to_next_record(&mut h);
        let s = h.state().status.clone().unwrap();
        assert_eq!(s.n_atoms, n, "{combo} -> {option} changed N");
        let e = h.state().last_telemetry.as_ref().unwrap().etotal_per_atom();
        let jump = e - e_last;
        e_last = e;
        let after = unswitched_fluctuation(&mut h, &mut e_last);
        let scale = before.max(after);
        eprintln!(
            "{combo} -> {option}: dE/N {jump:.3e} (unswitched before {before:.3e}, after {after:.3e}, E/N {e:.5})"
        );
        assert!(
            jump.abs() <= 3.0 * scale,
            "{combo} -> {option}: energy per atom jumped by {jump} (100 steps without a switch: up to {before} before, \
             {after} after)"
        );
        before = after;
    }
    let s = h.state().status.clone().unwrap();
    assert_eq!(s.params.precision, argon_sandbox::physics::real::Precision::Mixed);
    assert_eq!(s.params.algorithm, argon_sandbox::physics::params::Algorithm::Cells);
    // Space resumes.
    h.key_press(egui::Key::Space);
    let at = s.step;
    until(&mut h, 20.0, "running again", |a| a.status.as_ref().is_some_and(|s| s.running && s.step > at + 20));
}

#[test]
fn the_rdf_plot_fills_after_a_run() {
    let mut h = harness(app(false, 3000));
    loaded(&mut h);
    until(&mut h, 60.0, "g(r) frames", |a| a.plots.rdf_frames() >= 3);
    let rdf = h.state().plots.rdf();
    let (r_peak, g_peak) = rdf.iter().fold((0.0, 0.0), |m, p| if p[1] > m.1 { (p[0], p[1]) } else { m });
    // The first peak of liquid argon: near 0.37 nm (1.1 sigma), well above 1.
    assert!((0.33..0.42).contains(&r_peak) && g_peak > 1.8, "peak g = {g_peak} at {r_peak} nm");
    assert!(!h.state().plots.temperature_k.points.is_empty());
    assert!(!h.state().plots.speed.is_empty() && !h.state().plots.density.is_empty());
}

/// Drags the primary button from tank point `a` to `b` over `frames` frames, holding at `b`
/// for `hold` more frames before letting go.
fn drag_in_view(h: &mut Harness<'_, App>, a: [f64; 2], b: [f64; 2], frames: usize, hold: usize) {
    let pa = argon_sandbox::ui::view::tank_to_point(h.state(), a);
    let pb = argon_sandbox::ui::view::tank_to_point(h.state(), b);
    h.hover_at(pa);
    h.step();
    h.drag_at(pa);
    h.step();
    for k in 1..=frames {
        h.hover_at(pa + (pb - pa) * (k as f32 / frames as f32));
        h.step();
    }
    for _ in 0..hold {
        h.hover_at(pb);
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    h.drop_at(pb);
    h.step();
}

#[test]
fn dragging_an_atom_pulls_it_and_letting_go_releases_it() {
    let mut h = harness(app(false, 3000));
    loaded(&mut h);
    h.get_by_label("Drag an atom").click();
    h.step();
    let b = h.state().status.as_ref().unwrap().sim_box;
    // Paused while the atom is picked and grabbed, so the frame the app grabs from is the one
    // the atom was picked in: the grabbed atom must be that atom, by index. (Running, the
    // fluid moves under the cursor between the two.)
    h.state_mut().set_running(false);
    until(&mut h, 10.0, "the pause", |a| a.status.as_ref().is_some_and(|s| !s.running));
    let mut last = (h.state().frame_step, Instant::now());
    until(&mut h, 10.0, "the last frame", |a| {
        if a.frame_step != last.0 {
            last = (a.frame_step, Instant::now());
        }
        last.1.elapsed() > Duration::from_millis(300)
    });
    // An atom in the liquid, away from the walls.
    let frame = h.state().frame.clone().unwrap();
    let (i, p) = frame
        .iter()
        .enumerate()
        .find(|(_, p)| (p[0] as f64) > 0.3 * b.hi[0] && (p[0] as f64) < 0.7 * b.hi[0] && (p[1] as f64) < 0.3 * b.hi[1])
        .map(|(i, p)| (i, [p[0] as f64, p[1] as f64]))
        .unwrap();
    let target = [p[0], b.hi[1] * 0.8];
    let pa = argon_sandbox::ui::view::tank_to_point(h.state(), p);
    h.hover_at(pa);
    h.step();
    h.drag_at(pa);
    h.step();
    let pb = argon_sandbox::ui::view::tank_to_point(h.state(), target);
    // The first steps of the drag, still paused: the grab happens as the drag starts.
    for k in 1..=3 {
        h.hover_at(pa + (pb - pa) * (k as f32 / 10.0));
        h.step();
    }
    let grabbed = h.state().grabbed;
    assert!(grabbed.is_some(), "no atom grabbed: {:?}", h.state().messages);
    assert_eq!(h.state().frame_step, last.0, "a frame arrived while paused");
    // The pick is the atom nearest the cursor in the front plane: atom i, unless another one
    // lies as near to the point the cursor's pixel maps back to.
    let at = argon_sandbox::ui::view::point_to_tank(h.state(), pa);
    let nearest = h.state().atom_near(at, 1.5);
    assert_eq!(grabbed, nearest, "grabbed {grabbed:?}, nearest to the cursor {nearest:?}");
    let d = |k: usize| ((frame[k][0] as f64 - at[0]).powi(2) + (frame[k][1] as f64 - at[1]).powi(2)).sqrt();
    assert!(d(grabbed.unwrap() as usize) <= d(i) + 1e-6, "grabbed atom farther than atom {i}");
    h.state_mut().set_running(true);
    for k in 4..=10 {
        h.hover_at(pa + (pb - pa) * (k as f32 / 10.0));
        h.step();
    }
    until(&mut h, 10.0, "the tether", |a| {
        a.status.as_ref().and_then(|s| s.params.tether).is_some_and(|t| (t.target[1] - target[1]).abs() < 0.5)
    });
    let tether = h.state().status.as_ref().unwrap().params.tether.unwrap();
    assert_eq!(Some(tether.atom), grabbed, "the simulation holds another atom than the one grabbed");
    let i = tether.atom as usize;
    // Held: the atom climbs out of the liquid towards the cursor.
    let dist = |app: &App| {
        let q = app.frame.as_ref().unwrap()[i];
        ((q[0] as f64 - target[0]).powi(2) + (q[1] as f64 - target[1]).powi(2)).sqrt()
    };
    let d0 = dist(h.state());
    until(&mut h, 30.0, "the atom to be pulled", |a| dist(a) < 0.5 * d0);
    h.drop_at(pb);
    h.step();
    until(&mut h, 10.0, "the release", |a| a.status.as_ref().is_some_and(|s| s.params.tether.is_none()));
}

#[test]
fn atom_brushes_add_and_remove_atoms_and_undo_restores_the_count() {
    let mut h = harness(app(false, 3000));
    loaded(&mut h);
    let b = h.state().status.as_ref().unwrap().sim_box;
    let n0 = h.state().status.as_ref().unwrap().n_atoms;
    h.get_by_label("Add atoms").click();
    h.step();
    // Pour into the vapour above the liquid, right of the default circle obstacle.
    drag_in_view(&mut h, [0.75 * b.hi[0], 0.6 * b.hi[1]], [0.85 * b.hi[0], 0.6 * b.hi[1]], 5, 0);
    until(&mut h, 20.0, "atoms to be added", |a| a.status.as_ref().is_some_and(|s| s.n_atoms > n0 + 20));
    // Every brush event's atoms are in once the count holds still for a second of statuses.
    let mut last = (0, Instant::now());
    until(&mut h, 20.0, "the pouring to end", |a| {
        let n = a.status.as_ref().map_or(0, |s| s.n_atoms);
        if n != last.0 {
            last = (n, Instant::now());
        }
        last.1.elapsed() > Duration::from_secs(1)
    });
    let n1 = h.state().status.as_ref().unwrap().n_atoms;
    assert!(h.state().history.can_undo());
    h.get_by_label("Undo").click();
    h.step();
    until(&mut h, 20.0, "undo of the added atoms", |a| a.status.as_ref().is_some_and(|s| s.n_atoms == n0));
    h.get_by_label("Redo").click();
    h.step();
    until(&mut h, 20.0, "redo of the added atoms", |a| a.status.as_ref().is_some_and(|s| s.n_atoms == n1));
    h.get_by_label("Remove atoms").click();
    h.step();
    drag_in_view(&mut h, [0.3 * b.hi[0], 0.2 * b.hi[1]], [0.4 * b.hi[0], 0.2 * b.hi[1]], 5, 0);
    until(&mut h, 20.0, "atoms to be removed", |a| a.status.as_ref().is_some_and(|s| s.n_atoms + 30 < n1));
}

#[test]
fn hybrid_monte_carlo_is_chosen_in_the_panel_and_reports_acceptance() {
    use argon_sandbox::physics::params::Thermostat;
    let mut h = harness(app(false, 2000));
    loaded(&mut h);
    choose(&mut h, "Ensemble", "Hybrid Monte Carlo (NVT)");
    until(&mut h, 20.0, "HMC in the simulation", |a| {
        a.status.as_ref().is_some_and(|s| matches!(s.params.thermostat, Thermostat::Hmc { .. }))
    });
    type_into(&mut h, "Trajectory", "10");
    until(&mut h, 60.0, "accepted trajectories", |a| {
        a.status.as_ref().is_some_and(|s| s.params.thermostat == Thermostat::Hmc { trajectory: 10 })
            && a.last_telemetry.as_ref().is_some_and(|t| t.mc.trials >= 3)
    });
    h.get_by_label_contains("trajectories");
    type_into(&mut h, "Trajectory", "0");
    h.get_by_label_contains("Trajectory: \"0\" is not allowed");
    // The default tank has walls: constant-pressure Monte Carlo, which scales the box, is
    // refused with the reason, and the simulation keeps its ensemble.
    choose(&mut h, "Ensemble", "Hybrid Monte Carlo (NPT)");
    h.get_by_label_contains("every axis must be periodic");
    for _ in 0..10 {
        h.step();
    }
    assert_eq!(h.state().status.as_ref().unwrap().params.thermostat, Thermostat::Hmc { trajectory: 10 });
}

/// Atoms whose published colour scalar is species index `t` (colouring by species).
fn of_species(app: &App, t: f32) -> usize {
    app.frame.as_ref().map_or(0, |f| f.iter().filter(|p| p[3] == t).count())
}

#[test]
fn choosing_krypton_in_the_brush_adds_krypton_atoms_and_undo_removes_them() {
    let mut h = harness(app(false, 3000));
    loaded(&mut h);
    let b = h.state().status.as_ref().unwrap().sim_box;
    let n0 = h.state().status.as_ref().unwrap().n_atoms;
    h.get_by_label("Add atoms").click();
    h.step();
    choose(&mut h, "Add species", "Kr");
    assert_eq!(h.state().settings.brush_species, "Kr");
    drag_in_view(&mut h, [0.75 * b.hi[0], 0.6 * b.hi[1]], [0.85 * b.hi[0], 0.6 * b.hi[1]], 5, 0);
    // Krypton joins the simulation's species, the view colours by species, and the new atoms
    // are krypton (type 1): the published colour scalar is the type.
    until(&mut h, 20.0, "krypton atoms in the simulation", |a| {
        a.status.as_ref().is_some_and(|s| s.params.species.iter().map(|x| x.name.as_str()).eq(["Ar", "Kr"]))
            && of_species(a, 1.0) > 20
    });
    assert_eq!(h.state().settings.view.colour_by, argon_sandbox::render::ColourBy::Species);
    let mut last = (0, Instant::now());
    until(&mut h, 20.0, "the pouring to end", |a| {
        let n = a.status.as_ref().map_or(0, |s| s.n_atoms);
        if n != last.0 {
            last = (n, Instant::now());
        }
        last.1.elapsed() > Duration::from_secs(1) && a.frame.as_ref().is_some_and(|f| f.len() == n)
    });
    let n1 = h.state().status.as_ref().unwrap().n_atoms;
    until(&mut h, 10.0, "a frame with every added atom", |a| of_species(a, 1.0) == n1 - n0);
    assert_eq!(of_species(h.state(), 0.0), n0, "the argon atoms stay argon");
    // Mixed masses: the measured temperature stays finite and near the target.
    let t = h.state().last_telemetry.as_ref().unwrap().temperature;
    assert!(t.is_finite() && t > 0.3 && t < 2.0, "T* = {t}");
    h.get_by_label("Undo").click();
    h.step();
    until(&mut h, 20.0, "undo of the krypton atoms", |a| {
        a.status.as_ref().is_some_and(|s| s.n_atoms == n0) && of_species(a, 1.0) == 0
    });
}

#[test]
fn composition_for_reinitialising_is_checked_and_builds_the_mixture() {
    let mut h = harness(app(false, 2000));
    loaded(&mut h);
    assert_eq!(h.state().reinit_composition, "Ar 1");
    type_into(&mut h, "Composition", "Ar 0.7, Kr 0.4");
    h.get_by_label("Re-initialise").click();
    h.step();
    let e = h.state().last_error().unwrap_or_default().to_string();
    assert!(e.starts_with("Composition:") && e.contains("sum to"), "{e}");
    type_into(&mut h, "Composition", "Ar 0.5, He 0.5");
    h.get_by_label("Re-initialise").click();
    h.step();
    let e = h.state().last_error().unwrap_or_default().to_string();
    assert!(e.contains("\"He\" is not a species here nor in the catalogue"), "{e}");
    assert_eq!(h.state().status.as_ref().unwrap().params.species.len(), 1, "nothing was sent");
    type_into(&mut h, "Composition", "Ar 0.75, Kr 0.25");
    h.get_by_label("Re-initialise").click();
    h.step();
    until(&mut h, 30.0, "the mixture", |a| {
        a.status.as_ref().is_some_and(|s| s.params.species.len() == 2)
            && a.frame.as_ref().is_some_and(|f| f.len() == a.status.as_ref().unwrap().n_atoms)
            && of_species(a, 1.0) > 0
    });
    let n = h.state().status.as_ref().unwrap().n_atoms;
    let kr = of_species(h.state(), 1.0);
    assert_eq!(kr, (0.25 * n as f64).round() as usize, "{kr} krypton atoms of {n}");
    assert_eq!(h.state().reinit_composition, "Ar 0.75, Kr 0.25");
}

/// The camera follows the view's size while it is where a fit left it (the panels settling
/// in the first frames, a resized window: so the first frames' layout cannot decide the
/// framing), and keeps where the user moved it.
#[test]
fn a_resized_view_is_fitted_again_until_the_camera_is_moved() {
    let mut a = app(true, 500);
    a.view_resized([800, 600]);
    let first = a.camera;
    a.view_resized([1200, 600]);
    assert_ne!(a.camera, first, "a fitted camera follows the new aspect");
    a.fit_camera();
    let fitted = a.camera;
    a.view_resized([800, 600]);
    assert_eq!(a.camera, first, "and back: the same fit as for that size");
    a.camera.zoom_by(0.5);
    let moved = a.camera;
    a.view_resized([1200, 600]);
    assert_eq!(a.camera, moved, "a camera the user moved stays where it is");
    a.fit_camera();
    assert_eq!(a.camera, fitted);
}
