//! The Simulation panel: play / pause / step / reset, backend, algorithm, precision, CUDA
//! block size, time step, steps per frame, and re-initialising with another atom count,
//! initial state or composition (species and fractions).

use super::fields::{count_field, number_field};
use crate::app::App;
use crate::physics::params::Algorithm;
use crate::physics::real::Precision;
use crate::scene::MAX_ATOMS;
use crate::scene::reinit::{InitialState, MIN_ATOMS};
use crate::sim::BackendChoice;
use crate::units;

pub fn algorithm_label(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Auto => "Auto (cheapest where lists fit)",
        Algorithm::AllPairsGlobal => "All-pairs (global memory)",
        Algorithm::AllPairsTiled => "All-pairs (shared-memory tiles)",
        Algorithm::Cells => "Cell list",
        Algorithm::Neighbors => "Neighbour list",
    }
}

fn backend_label(b: BackendChoice) -> &'static str {
    match b {
        BackendChoice::Auto => "Auto (CUDA if usable)",
        BackendChoice::Cuda => "CUDA",
        BackendChoice::Cpu => "CPU",
        BackendChoice::Wgpu => "GPU (wgpu: Vulkan, Metal, DX12)",
    }
}

/// CUDA block sizes offered.
pub const BLOCK_SIZES: [u32; 6] = [32, 64, 128, 256, 512, 1024];

pub fn simulation_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let running = app.running();
        if ui.button(if running { "Pause" } else { "Play" }).on_hover_text("Space").clicked() {
            app.toggle_running();
        }
        if ui.button("Step").on_hover_text("advance one frame's steps, then pause (.)").clicked() {
            app.single_step();
        }
        if ui.button("Reset").on_hover_text("start over from the scene, keeping parameters and obstacles").clicked() {
            app.reset();
        }
    });
    let mut backend = app.settings.backend;
    egui::ComboBox::from_label("Backend").selected_text(backend_label(backend)).show_ui(ui, |ui| {
        for b in [BackendChoice::Auto, BackendChoice::Cuda, BackendChoice::Wgpu, BackendChoice::Cpu] {
            ui.selectable_value(&mut backend, b, backend_label(b));
        }
    });
    if backend != app.settings.backend {
        app.switch_backend(backend);
    }
    let mut algorithm = app.params.algorithm;
    egui::ComboBox::from_label("Algorithm").selected_text(algorithm_label(algorithm)).show_ui(ui, |ui| {
        for a in [
            Algorithm::Auto,
            Algorithm::AllPairsGlobal,
            Algorithm::AllPairsTiled,
            Algorithm::Cells,
            Algorithm::Neighbors,
        ] {
            ui.selectable_value(&mut algorithm, a, algorithm_label(a));
        }
    });
    if algorithm != app.params.algorithm {
        app.params.algorithm = algorithm;
        app.apply_params();
    }
    let mut precision = app.params.precision;
    // What the running backend runs on its device (the wgpu backend: mixed and double only
    // where the adapter has 64-bit floats); the others are greyed out with the reason.
    let refused = |p: Precision| app.status.as_ref().and_then(|s| s.info.refuses(p).map(String::from));
    egui::ComboBox::from_label("Precision").selected_text(precision.name()).show_ui(ui, |ui| {
        for p in Precision::ALL {
            match refused(p) {
                None => {
                    ui.selectable_value(&mut precision, p, p.name());
                }
                Some(why) => {
                    ui.add_enabled(false, egui::Button::selectable(precision == p, p.name()))
                        .on_disabled_hover_text(why);
                }
            }
        }
    });
    if precision != app.params.precision {
        app.params.precision = precision;
        app.apply_params();
    }
    let on_cuda = app.status.as_ref().is_some_and(|s| s.info.kind == "cuda");
    let mut block = app.params.block_size;
    ui.add_enabled_ui(on_cuda, |ui| {
        egui::ComboBox::from_label("CUDA block size").selected_text(block.to_string()).show_ui(ui, |ui| {
            for b in BLOCK_SIZES {
                ui.selectable_value(&mut block, b, b.to_string());
            }
        });
    })
    .response
    .on_disabled_hover_text("the CPU backend has no blocks");
    if block != app.params.block_size {
        app.params.block_size = block;
        app.apply_params();
    }
    let dt_fs = app.params.dt * units::argon_tau_ps() * 1000.0;
    if let Some(v) = number_field(ui, "Time step", dt_fs, 0.1..=100.0, "fs", 2) {
        app.params.dt = v / 1000.0 / units::argon_tau_ps();
        app.apply_params();
    }
    pace_ui(app, ui);
    ui.separator();
    if let Some(n) = count_field(ui, "Atoms", app.reinit_atoms as u64, MIN_ATOMS as u64..=MAX_ATOMS as u64, "") {
        app.reinit_atoms = n as usize;
    }
    egui::ComboBox::from_label("Initial state").selected_text(app.reinit_state.label()).show_ui(ui, |ui| {
        for s in InitialState::ALL {
            ui.selectable_value(&mut app.reinit_state, s, s.label());
        }
    });
    ui.horizontal(|ui| {
        let label = ui.label("Composition");
        ui.add(
            egui::TextEdit::singleline(&mut app.reinit_composition).desired_width(150.0).hint_text("Ar 0.7, Kr 0.3"),
        )
        .labelled_by(label.id)
        .on_hover_text("species (Ne, Ar, Kr, Xe or the scene's own) and the fraction of each, summing to 1");
    });
    if ui.button("Re-initialise").on_hover_text("rebuild the tank with this many atoms of these species").clicked() {
        app.reinitialise();
    }
}

/// The pace: as fast as the display allows (the default), or a fixed number of steps per
/// displayed frame (slow motion).
fn pace_ui(app: &mut App, ui: &mut egui::Ui) {
    use crate::app::commands::PaceMode;
    let mode = app.pace.mode;
    ui.horizontal(|ui| {
        ui.label("Pace");
        if ui
            .radio(mode != PaceMode::Fixed, "Fastest")
            .on_hover_text(
                "The display keeps its rate and the simulation gets all the time drawing does not need \
                 (it gives way only while the display falls below 92 % of its rate)",
            )
            .clicked()
        {
            app.set_pace_mode(PaceMode::Fill);
        }
        if ui
            .radio(mode == PaceMode::Fixed, "Fixed")
            .on_hover_text("A set number of steps per displayed frame: slow motion")
            .clicked()
        {
            app.set_pace_mode(PaceMode::Fixed);
        }
    });
    if mode == PaceMode::Fixed {
        ui.horizontal(|ui| {
            if let Some(n) = count_field(ui, "Steps per frame", app.pace.steps_per_frame, 1..=10_000, "") {
                app.set_steps_per_frame(n);
            }
        });
    } else if let Some(s) = &app.status
        && app.fps.fps > 0.0
        && s.running
    {
        ui.weak(format!("{:.0} steps per frame at {:.0} frames/s", s.steps_per_s / app.fps.fps, app.fps.fps));
    }
}
