//! The status bar: backend and device (for the wgpu backend its adapter and API: "GPU,
//! Vulkan: NVIDIA H200"), atom count, steps/s and atom-steps/s, FPS, precision, how pairs
//! are found (the algorithm after any fallback), the position path (zero-copy, zero-copy on
//! the same device, or host staging), step and simulated time; hovered, why this backend
//! runs and why the others were not taken, and why positions take their path.

use crate::app::App;
use crate::units;

/// Status bar text (also used by tests and the headless bench).
pub fn status_text(app: &App) -> String {
    let Some(s) = &app.status else { return "starting the simulation…".into() };
    format!(
        "{} · {} · N = {} · {:.0} steps/s · {:.2e} atom-steps/s · {:.0} FPS · {} · {} · positions: {} · step {} · {:.1} ps{}",
        s.info.kind.to_uppercase(),
        s.info.device,
        s.n_atoms,
        s.steps_per_s,
        s.steps_per_s * s.n_atoms as f64,
        app.fps.fps,
        s.params.precision.name(),
        s.pair_search,
        s.position_path,
        s.step,
        units::reduced_time_to_ps(s.time),
        if s.running { "" } else { " · paused" },
    )
}

pub fn status_ui(app: &mut App, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let why = app.status.as_ref().map(|s| s.why.as_str()).unwrap_or("");
        ui.label(status_text(app)).on_hover_text(format!("{why}\npositions: {}", app.interop_note));
    });
}
