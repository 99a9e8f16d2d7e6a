//! The app's dye (issue 47): the Dye tool through its state machine and the app's actions on
//! the CPU backend, read back from the published frames (coloured by dye, the fourth value of
//! each atom is its tag, in canonical order). A rake tags exactly the atoms whose move of each
//! step crosses it (the CPU rule, checked step by step from consecutive frames); a region tags
//! exactly the atoms inside it; picked atoms are tagged and trail their path; clearing one
//! source or all removes their tags, undo and redo bring them back and take them away; opening
//! a scene with dye sources tags its regions, runs its rakes and colours by dye; the legend
//! lists the sources in their colours; dye added on the wgpu backend (which does not carry it
//! yet) moves the system to the CPU with its tags.

mod app_common;

use app_common::{app_on, harness_of, loaded, until};
use argon_sandbox::app::App;
use argon_sandbox::app::tools::{DyeMode, Pointer, Tool};
use argon_sandbox::physics::dye::{DyeRake, DyeRegion};
use argon_sandbox::render::ColourBy;
use argon_sandbox::render::overlay_layout::Legend;
use argon_sandbox::scene::DyeSource;
use argon_sandbox::sim::BackendChoice;
use egui_kittest::Harness;

/// The newest frame's (x, y, tag) per atom.
fn tags(app: &App) -> Vec<([f64; 2], u16)> {
    let f = app.frame.as_ref().expect("a frame");
    f.iter().map(|a| ([a[0] as f64, a[1] as f64], a[3].round() as u16)).collect()
}

/// Drags the active tool from `a` to `b` (press, a midway drag, release).
fn drag(h: &mut Harness<'_, App>, a: [f64; 2], b: [f64; 2]) {
    let app = h.state_mut();
    let (shapes, sizes) = (app.shapes.clone(), app.tool_sizes());
    for ev in [Pointer::Press(a), Pointer::Drag([(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0]), Pointer::Release(b)] {
        let actions = app.tools.pointer(ev, &shapes, &sizes);
        app.tool_actions(actions);
    }
}

/// The middle of the atoms (medians of x and y): where the fluid is.
fn middle(app: &App) -> [f64; 2] {
    let t = tags(app);
    let mut xs: Vec<f64> = t.iter().map(|(p, _)| p[0]).collect();
    let mut ys: Vec<f64> = t.iter().map(|(p, _)| p[1]).collect();
    xs.sort_by(f64::total_cmp);
    ys.sort_by(f64::total_cmp);
    [xs[xs.len() / 2], ys[ys.len() / 2]]
}

fn paused_app() -> Harness<'static, App> {
    let mut h = harness_of(app_on(BackendChoice::Cpu, true, 3000), [1200.0, 800.0]);
    loaded(&mut h);
    h
}

/// Whether the frame tags exactly the atoms inside `region` with `tag` (and no others with
/// it), skipping atoms within 1e-3 of its edges (f32 positions of the f64 state).
fn region_exact(app: &App, region: &DyeRegion, tag: u16) -> bool {
    let edge = |p: [f64; 2]| (0..2).any(|k| (p[k] - region.min[k]).abs() < 1e-3 || (p[k] - region.max[k]).abs() < 1e-3);
    tags(app).iter().all(|(p, t)| edge(*p) || (*t == tag) == region.contains(&[p[0], p[1], 0.0]))
}

#[test]
fn a_rake_drawn_with_the_tool_tags_the_atoms_crossing_it_each_step() {
    let mut h = paused_app();
    h.state_mut().set_tool(Tool::Dye);
    assert_eq!(h.state().settings.view.colour_by, ColourBy::Dye, "choosing the dye tool colours by dye");
    until(&mut h, 30.0, "frames coloured by dye", |a| a.frame.as_ref().is_some_and(|f| f.iter().all(|x| x[3] == 0.0)));
    let m = middle(h.state());
    // Off the median atom's own x, so no atom starts on the rake.
    let (a, b) = ([m[0] + 0.0123, m[1] - 4.0], [m[0] + 0.0123, m[1] + 4.0]);
    h.state_mut().tools.dye_mode = DyeMode::Rake;
    drag(&mut h, a, b);
    assert_eq!(h.state().dye.sources.len(), 1);
    let rake = DyeRake { a, b, tag: 1 };
    h.state_mut().set_steps_per_frame(1);
    let mut before = tags(h.state());
    let mut newly = 0;
    let bx = h.state().sim_box();
    let half = bx.length().map(|l| 0.5 * l);
    for _ in 0..60 {
        let step = h.state().frame_step;
        h.state_mut().single_step();
        until(&mut h, 30.0, "one step", |a| a.frame_step == step + 1);
        let now = tags(h.state());
        for (i, ((p0, t0), (p1, t1))) in before.iter().zip(&now).enumerate() {
            if (0..2).any(|k| (p1[k] - p0[k]).abs() > half[k]) {
                continue; // wrapped across a periodic edge this step
            }
            // The move crosses the (vertical) rake clearly or clearly not: no end within 1e-4
            // of its line, and the move's y range not within 1e-4 of its ends (f32 positions of
            // the f64 state). Then the tag must follow the CPU rule.
            let near = |v: f64, w: f64| (v - w).abs() < 1e-4;
            let (ylo, yhi) = (p0[1].min(p1[1]), p0[1].max(p1[1]));
            let at_end = [a[1], b[1]].iter().any(|&e| ylo - 1e-4 <= e && e <= yhi + 1e-4);
            if near(p0[0], a[0]) || near(p1[0], a[0]) || at_end {
                continue;
            }
            let cross = rake.crossed(*p0, *p1);
            let want = if cross { 1 } else { *t0 };
            assert_eq!(*t1, want, "atom {i} moved {p0:?} -> {p1:?} (crosses: {cross}), tagged {t0} -> {t1}");
            newly += usize::from(*t0 == 0 && *t1 == 1);
        }
        before = now;
    }
    assert!(newly > 0, "no atom crossed the rake in 60 steps: the test's rake misses the fluid");
}

#[test]
fn regions_and_picked_atoms_tag_clear_undo_and_redo() {
    let mut h = paused_app();
    h.state_mut().set_tool(Tool::Dye);
    let m = middle(h.state());
    let region = DyeRegion { min: [m[0] - 3.0, m[1] - 3.0], max: [m[0] + 3.0, m[1] + 3.0] };
    h.state_mut().tools.dye_mode = DyeMode::Region;
    drag(&mut h, region.min, region.max);
    until(&mut h, 30.0, "the region's tags", |a| region_exact(a, &region, 1));
    let inside = tags(h.state()).iter().filter(|t| t.1 == 1).count();
    assert!(inside > 20, "only {inside} atoms in a 6 x 6 sigma box of fluid");

    // A picked atom outside the region: the nearest to a point beside it.
    h.state_mut().tools.dye_mode = DyeMode::Atoms;
    let p = [m[0] + 5.0, m[1]];
    let atom = h.state().atom_near(p, 1.5).expect("an atom near the point") as usize;
    let (shapes, sizes) = (h.state().shapes.clone(), h.state().tool_sizes());
    let actions = h.state_mut().tools.pointer(Pointer::Press(p), &shapes, &sizes);
    h.state_mut().tool_actions(actions);
    until(&mut h, 30.0, "the picked atom's tag", |a| tags(a)[atom].1 == 2);
    assert_eq!(h.state().dye.legend(), vec![(1, "1: region".to_string()), (2, format!("2: atom {atom}"))]);

    // Its pathline grows while the simulation runs.
    h.state_mut().set_steps_per_frame(5);
    for _ in 0..4 {
        let step = h.state().frame_step;
        h.state_mut().single_step();
        until(&mut h, 30.0, "five steps", |a| a.frame_step == step + 5);
    }
    let trail = &h.state().dye.trails[0];
    assert_eq!(trail.0, 2);
    assert!(trail.1.points.len() >= 4, "the pathline has {} points after 4 frames", trail.1.points.len());
    let last = trail.1.points.back().unwrap().1;
    assert_eq!(last, tags(h.state())[atom].0, "the pathline ends where its atom is");

    let count = |a: &App, tag: u16| tags(a).iter().filter(|t| t.1 == tag).count();
    // Clear the region: its atoms untagged, the picked atom kept.
    h.state_mut().clear_dye(Some(1));
    until(&mut h, 30.0, "the region's dye to clear", |a| count(a, 1) == 0 && tags(a)[atom].1 == 2);
    // Undo brings the region back (tagging the atoms inside it now), redo clears it again.
    h.state_mut().undo();
    until(&mut h, 30.0, "the region back after undo", |a| count(a, 1) > 20 && region_exact(a, &region, 1));
    assert_eq!(h.state().dye.sources.len(), 2);
    h.state_mut().redo();
    until(&mut h, 30.0, "the region cleared again after redo", |a| count(a, 1) == 0);
    // Clear all, then undo.
    h.state_mut().clear_dye(None);
    until(&mut h, 30.0, "all dye cleared", |a| count(a, 1) + count(a, 2) == 0);
    assert!(h.state().dye.trails.is_empty());
    h.state_mut().undo();
    until(&mut h, 30.0, "the picked atom back after undo", |a| tags(a)[atom].1 == 2);
}

#[test]
fn a_scene_with_dye_opens_tagged_coloured_by_dye_with_its_rakes_running_and_its_legend() {
    let mut h = paused_app();
    let legends = h.state().overlay_content().legends;
    assert!(!legends.iter().any(|l| matches!(l, Legend::Dye(_))), "a dye legend before colouring by dye");
    // The default scene with a region and a rake through the middle of its fluid.
    let m = middle(h.state());
    let mut scene = h.state().document();
    let (min, max) = ([m[0] - 6.0, m[1] - 2.0], [m[0] - 2.0, m[1] + 2.0]);
    // Through an atom's own x (the fluid starts from a lattice: its atoms cross their own
    // planes at once, a plane between two only as it melts).
    let x = tags(h.state())[h.state().atom_near([m[0] + 3.0, m[1]], 1.5).expect("an atom") as usize].0[0] + 0.0123;
    let (a, b) = ([x, m[1] - 4.0], [x, m[1] + 4.0]);
    scene.dye = vec![DyeSource::Region { min, max }, DyeSource::Rake { a, b }];
    let dir = std::env::temp_dir().join(format!("argon-app-dye-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("dyed.ron");
    scene.save(&path).unwrap();
    h.state_mut().open_scene(&path);
    until(&mut h, 60.0, "the dyed scene to load", |a| a.dye.sources.len() == 2 && a.frame_step == 0);
    assert_eq!(h.state().settings.view.colour_by, ColourBy::Dye, "a scene with dye opens coloured by dye");
    let region = DyeRegion { min, max };
    until(&mut h, 30.0, "the region's tags at step 0", |a| {
        a.frame.as_ref().is_some_and(|f| f.iter().any(|x| x[3] == 1.0)) && region_exact(a, &region, 1)
    });
    // The legend lists both sources in number order.
    let legends = h.state().overlay_content().legends;
    assert!(
        legends.contains(&Legend::Dye(vec![(1, "1: region".into()), (2, "2: rake".into())])),
        "legends: {legends:?}"
    );
    // The rake runs: atoms take its tag, each first tagged within a step's move of it.
    h.state_mut().set_steps_per_frame(2);
    let rake = DyeRake { a, b, tag: 2 };
    let dist = |p: [f64; 2]| {
        let t = ((p[1] - a[1]) / (b[1] - a[1])).clamp(0.0, 1.0);
        ((p[0] - a[0]).powi(2) + (p[1] - (a[1] + t * (b[1] - a[1]))).powi(2)).sqrt()
    };
    let mut before = tags(h.state());
    let mut tagged = 0;
    for _ in 0..60 {
        let step = h.state().frame_step;
        h.state_mut().single_step();
        until(&mut h, 30.0, "two steps", |a| a.frame_step == step + 2);
        let now = tags(h.state());
        for ((_, t0), (p1, t1)) in before.iter().zip(&now) {
            if *t0 != 2 && *t1 == 2 {
                tagged += 1;
                assert!(dist(*p1) < 0.1, "an atom took the rake's tag {:.3} sigma from it", dist(*p1));
            }
        }
        before = now;
    }
    assert!(tagged > 0, "the scene's rake tagged nothing in 120 steps ({rake:?})");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Dye added while the wgpu backend runs (on lavapipe in CI) stays on it: no switch, and
/// exactly the atoms inside the region are tagged there, with the rake running from then on.
/// Skipped without a wgpu adapter.
#[test]
fn dye_on_the_wgpu_backend_tags_there_without_a_switch() {
    use argon_sandbox::app::commands::{DyeEdit, Pace, SimCommand, SimReport, SnapshotPurpose};
    use argon_sandbox::app::sim_thread::SimHandle;
    use argon_sandbox::physics::real::Precision;
    use argon_sandbox::scene::reinit::{InitialState, reinitialise};
    use argon_sandbox::sim::ColourScalar;
    use std::time::{Duration, Instant};
    if let Err(e) = argon_sandbox::render::offscreen::Gpu::headless() {
        assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
        eprintln!("skipped: no wgpu adapter ({e})");
        return;
    }
    let mut scene = reinitialise(&argon_sandbox::scene::default_scene(), 600, InitialState::LiquidSlab).unwrap();
    scene.obstacles.clear();
    scene.precision = Some(Precision::Single);
    let h = SimHandle::spawn(scene, BackendChoice::Wgpu, Pace::unlimited(10), ColourScalar::Dye, false);
    let wait = |what: &str, pick: &mut dyn FnMut(SimReport) -> bool| {
        let end = Instant::now() + Duration::from_secs(60);
        while Instant::now() < end {
            if let Some(r) = h.wait(Duration::from_millis(200)) {
                if let SimReport::Error(e) = &r {
                    panic!("waiting for {what}: {e}");
                }
                if pick(r) {
                    return;
                }
            }
        }
        panic!("no {what} within a minute");
    };
    wait("the wgpu backend", &mut |r| matches!(r, SimReport::Status(s) if s.info.kind == "wgpu"));
    h.send(SimCommand::Step(10));
    let b = argon_sandbox::scene::default_scene().sim_box();
    let region = DyeRegion { min: [2.0, 1.0], max: [0.5 * b.hi[0], 6.0] };
    let rake = DyeRake { a: [0.75 * b.hi[0], 1.0], b: [0.75 * b.hi[0], 6.0], tag: 2 };
    h.send(SimCommand::Dye(DyeEdit { rakes: vec![rake], regions: vec![(region, 1)], ..DyeEdit::default() }));
    h.send(SimCommand::TakeSnapshot(SnapshotPurpose::Undo(1)));
    let mut snap = None;
    let mut switched = Vec::new();
    wait("a snapshot", &mut |r| match r {
        SimReport::Snapshot { snapshot, .. } => {
            snap = Some(snapshot);
            true
        }
        SimReport::Notice(m) if m.contains("Switched") => {
            switched.push(m);
            false
        }
        _ => false,
    });
    assert!(switched.is_empty(), "the wgpu backend carries dye, yet: {switched:?}");
    let snap = snap.unwrap();
    assert_eq!(snap.step, 10, "the state as it was when dyed");
    h.send(SimCommand::Step(5));
    wait(
        "the wgpu backend still running",
        &mut |r| matches!(r, SimReport::Status(s) if s.info.kind == "wgpu" && s.step >= 15),
    );
    let inside = snap.atoms.positions.iter().filter(|p| region.contains(p)).count();
    assert!(inside > 10, "only {inside} atoms in the region");
    for (p, d) in snap.atoms.positions.iter().zip(&snap.atoms.dye) {
        assert_eq!(*d, u16::from(region.contains(p)), "the atom at {p:?}");
    }
}
