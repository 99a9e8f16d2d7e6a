//! The Temperature panel: ensemble (thermostats and hybrid Monte Carlo NVT / NPT), target
//! in K, coupling time or trajectory length, pressure, heat / cool ramps, acceptance rates,
//! and the temperature now: in a flow (a wind tunnel, a thermostat relative to the flow) the
//! thermal temperature relative to the local flow, labelled so, with the all-motion one
//! beside it (`temperature_now_ui`).

use super::fields::{count_field, number_field};
use crate::app::App;
use crate::physics::params::{MAX_TRAJECTORY, Thermostat};
use crate::sim::{Telemetry, hmc};
use crate::units;

fn ensemble_label(t: &Thermostat) -> &'static str {
    match t {
        Thermostat::Nve => "NVE (no thermostat)",
        Thermostat::Berendsen { .. } => "Berendsen",
        Thermostat::Csvr { .. } => "Bussi stochastic rescaling",
        Thermostat::Langevin { .. } => "Langevin",
        Thermostat::Hmc { .. } => "Hybrid Monte Carlo (NVT)",
        Thermostat::HmcNpt { .. } => "Hybrid Monte Carlo (NPT)",
    }
}

/// Ramp speed of the heat / cool buttons, K per second.
pub const RAMP_K_PER_S: f64 = 20.0;

pub fn temperature_ui(app: &mut App, ui: &mut egui::Ui) {
    let current = app.params.thermostat;
    let coupling = match current {
        Thermostat::Nve | Thermostat::Hmc { .. } | Thermostat::HmcNpt { .. } => 0.5,
        Thermostat::Berendsen { tau, .. } | Thermostat::Csvr { tau, .. } => tau,
        Thermostat::Langevin { damp } => damp,
    };
    let (trajectory, pressure, max_dlnv) = match current {
        Thermostat::Hmc { trajectory } => (trajectory, 1.0, hmc::DEFAULT_MAX_DLNV),
        Thermostat::HmcNpt { trajectory, pressure, max_dlnv } => (trajectory, pressure, max_dlnv),
        _ => (hmc::DEFAULT_TRAJECTORY, 1.0, hmc::DEFAULT_MAX_DLNV),
    };
    // Switching between Berendsen and CSVR keeps "relative to the flow".
    let relative_to_flow = current.relative_to_flow();
    let mut chosen = current;
    egui::ComboBox::from_label("Ensemble").selected_text(ensemble_label(&current)).show_ui(ui, |ui| {
        for t in [
            Thermostat::Nve,
            Thermostat::Berendsen { tau: coupling, relative_to_flow },
            Thermostat::Csvr { tau: coupling, relative_to_flow },
            Thermostat::Langevin { damp: coupling },
            Thermostat::Hmc { trajectory },
            Thermostat::HmcNpt { trajectory, pressure, max_dlnv },
        ] {
            let selected = std::mem::discriminant(&t) == std::mem::discriminant(&current);
            if ui.selectable_label(selected, ensemble_label(&t)).clicked() {
                chosen = t;
            }
        }
    });
    if chosen != current {
        app.params.thermostat = chosen;
        app.apply_params();
    }
    let kelvin = units::reduced_to_kelvin(app.params.temperature);
    if let Some(v) = number_field(ui, "Target temperature", kelvin, 1.0..=5000.0, "K", 1) {
        app.ramp = None;
        app.set_target_kelvin(v);
    }
    if current.is_monte_carlo() {
        monte_carlo_ui(app, ui, current);
    } else if current != Thermostat::Nve {
        let tau_ps = coupling * units::argon_tau_ps();
        if let Some(v) = number_field(ui, "Coupling time", tau_ps, 0.01..=1000.0, "ps", 3) {
            let reduced = v / units::argon_tau_ps();
            app.params.thermostat = current.with_tau(reduced);
            app.apply_params();
        }
        relative_to_flow_ui(app, ui, current);
    }
    let thermostat = current != Thermostat::Nve;
    ui.add_enabled_ui(thermostat, |ui| {
        ui.horizontal(|ui| {
            let ramp = app.ramp.map(|r| r.k_per_s);
            if ui.selectable_label(ramp.is_some_and(|r| r > 0.0), "Heat").clicked() {
                app.start_ramp(RAMP_K_PER_S);
            }
            if ui.selectable_label(ramp.is_some_and(|r| r < 0.0), "Cool").clicked() {
                app.start_ramp(-RAMP_K_PER_S);
            }
            if ui.add_enabled(ramp.is_some(), egui::Button::new("Hold")).clicked() {
                app.stop_ramp();
            }
        });
    })
    .response
    .on_disabled_hover_text("choose a thermostat (not NVE) to heat or cool");
    if let Some(t) = &app.last_telemetry {
        temperature_now_ui(t, ui);
    }
}

/// The label of the thermal temperature (the motion relative to the local flow).
pub const THERMAL_LABEL: &str = "Thermal T (relative to the flow)";
/// The label of the kinetic temperature of all the motion beside it.
pub const ALL_MOTION_LABEL: &str = "All-motion T (stream counted as heat)";

/// The temperature of the newest record: plainly "Now: ..." without a flow; with one
/// (`Telemetry::thermal`), the thermal temperature first and the all-motion one beside it, so
/// a stream's kinetic energy never reads as heat.
fn temperature_now_ui(t: &Telemetry, ui: &mut egui::Ui) {
    let kelvin = units::reduced_to_kelvin;
    let Some(thermal) = t.thermal else {
        ui.label(format!("Now: {:.1} K", kelvin(t.temperature)));
        return;
    };
    let hover = "The kinetic temperature of the motion relative to the local mean flow: in bins of \
                 about 2 sigma in x-y through the whole depth, each bin's mean velocity removed (3 \
                 degrees of freedom per occupied bin). This is what a thermometer moving with the \
                 fluid would read, and what a thermostat relative to the flow holds at its target.";
    ui.label(format!("{THERMAL_LABEL}: {:.1} K", kelvin(thermal.temperature))).on_hover_text(hover);
    ui.weak(format!("{ALL_MOTION_LABEL}: {:.1} K", kelvin(t.temperature))).on_hover_text(
        "The ordinary kinetic temperature, from sum m v^2 over all atoms: it counts the stream's \
         kinetic energy (about m U^2 / 3 k_B at stream speed U) as if it were heat.",
    );
}

/// The "relative to the flow" switch of the rescaling thermostats (Berendsen, CSVR).
fn relative_to_flow_ui(app: &mut App, ui: &mut egui::Ui, current: Thermostat) {
    let mut relative = match current {
        Thermostat::Berendsen { relative_to_flow, .. } | Thermostat::Csvr { relative_to_flow, .. } => relative_to_flow,
        _ => return,
    };
    let hover = "Measure and rescale velocities relative to the local mean flow (bins of about 2 sigma \
                 in x-y through the whole depth): each bin's mean velocity is removed before the \
                 temperature is measured, and only the thermal part is rescaled, so a driven flow is \
                 not braked by the thermostat. The temperature shown is then this thermal one, \
                 with the ordinary one (which counts the flow's kinetic energy too) beside it; the \
                 flow fields show the relative temperature per bin.";
    if ui.checkbox(&mut relative, "relative to the flow").on_hover_text(hover).changed() {
        app.params.thermostat = match current {
            Thermostat::Berendsen { tau, .. } => Thermostat::Berendsen { tau, relative_to_flow: relative },
            Thermostat::Csvr { tau, .. } => Thermostat::Csvr { tau, relative_to_flow: relative },
            other => other,
        };
        app.apply_params();
    }
}

/// Trajectory length, pressure and volume step of hybrid Monte Carlo, and the acceptance rates.
fn monte_carlo_ui(app: &mut App, ui: &mut egui::Ui, current: Thermostat) {
    let Some(trajectory) = current.trajectory() else { return };
    if let Some(v) = count_field(ui, "Trajectory", trajectory as u64, 1..=MAX_TRAJECTORY as u64, "steps") {
        app.params.thermostat = match current {
            Thermostat::HmcNpt { pressure, max_dlnv, .. } => {
                Thermostat::HmcNpt { trajectory: v as u32, pressure, max_dlnv }
            }
            _ => Thermostat::Hmc { trajectory: v as u32 },
        };
        app.apply_params();
    }
    if let Thermostat::HmcNpt { trajectory, pressure, max_dlnv } = current {
        let mpa = units::reduced_pressure_to_mpa(pressure);
        let max_mpa = units::reduced_pressure_to_mpa(100.0);
        if let Some(v) = number_field(ui, "Pressure", mpa, 0.01..=max_mpa, "MPa", 2) {
            let reduced = v / units::reduced_pressure_to_mpa(1.0);
            app.params.thermostat = Thermostat::HmcNpt { trajectory, pressure: reduced, max_dlnv };
            app.apply_params();
        }
        ui.weak(format!("{pressure:.4} in reduced units"));
        if let Some(v) = number_field(ui, "Largest ln V step", max_dlnv, 0.0001..=0.5, "", 4) {
            app.params.thermostat = Thermostat::HmcNpt { trajectory, pressure, max_dlnv: v };
            app.apply_params();
        }
    }
    ui.label(app.last_telemetry.as_ref().map_or_else(|| hmc::McStats::default().describe(), |t| t.mc.describe()));
}
