//! Profiles in the app: the probe line drawn in the tank, the chosen layer's profile along it
//! over the recent windows (means with standard errors, each window one block), its CSV, and
//! the "viscosity from the flow profile" readout of a fluid driven between walls in y (a
//! parabola fitted to the stream-wise velocity across the channel's central part).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use super::App;
use crate::flow::probe::{ProbeLine, ProfilePoint, profile_along};
use crate::flow::viscosity::{PoiseuilleFit, fit_poiseuille};
use crate::flow::{FieldKind, Fields, profile_mean_sem};

/// Windows kept for profiles and the viscosity fit (each one block of the average).
pub const KEEP_WINDOWS: usize = 20;
/// Points along a probe line.
pub const PROBE_POINTS: usize = 100;
/// The part of the channel the viscosity fit uses, away from the layered fluid at the walls.
pub const CENTRAL: f64 = 0.7;

/// The probe line and the windows behind profiles.
pub struct ProbeState {
    pub line: Option<ProbeLine>,
    /// The next drag in the view draws the line.
    pub drawing: bool,
    pub kind: FieldKind,
    /// The most recent finished windows, oldest first.
    pub recent: VecDeque<Arc<Fields>>,
}

impl Default for ProbeState {
    fn default() -> Self {
        ProbeState { line: None, drawing: false, kind: FieldKind::Vx, recent: VecDeque::new() }
    }
}

impl ProbeState {
    /// Keeps a new window (dropping the oldest beyond [`KEEP_WINDOWS`], and all of them when
    /// the grid changed).
    pub fn push(&mut self, f: Arc<Fields>) {
        if self.recent.back().is_some_and(|last| last.grid != f.grid) {
            self.recent.clear();
        }
        if self.recent.len() >= KEEP_WINDOWS {
            self.recent.pop_front();
        }
        self.recent.push_back(f);
    }
}

/// The viscosity readout: the fit, the windows it used, and the mass density of the centre.
#[derive(Clone, Copy, Debug)]
pub struct ViscosityReadout {
    pub fit: PoiseuilleFit,
    pub windows: usize,
    pub density: f64,
}

impl App {
    /// The profile of the chosen layer along the probe line over the recent windows.
    pub fn probe_profile(&self) -> Option<Result<Vec<ProfilePoint>, String>> {
        let line = self.probe.line?;
        if self.probe.recent.is_empty() {
            return None;
        }
        let windows: Vec<&Fields> = self.probe.recent.iter().map(|f| f.as_ref()).collect();
        Some(profile_along(&windows, self.probe.kind, &line, PROBE_POINTS).map_err(|e| e.to_string()))
    }

    /// Whether the system is a fluid driven between walls in y (the viscosity readout applies).
    pub fn driven_channel(&self) -> bool {
        let b = self.sim_box();
        !b.periodic[1] && b.periodic[0] && self.params.drive != 0.0
    }

    /// The shear viscosity from the stream-wise velocity profile across the channel (x-averaged
    /// profiles of the recent windows), or why there is none yet.
    pub fn viscosity_readout(&self) -> Result<ViscosityReadout, String> {
        if !self.driven_channel() {
            return Err("drive a fluid along x between walls in y to measure its viscosity".into());
        }
        let windows: Vec<&Fields> = self.probe.recent.iter().map(|f| f.as_ref()).collect();
        if windows.len() < 2 {
            return Err(format!("{} of at least 2 windows so far", windows.len()));
        }
        let g = &windows[0].grid;
        let y: Vec<f64> = (0..g.n[1]).map(|j| g.origin[1] + (j as f64 + 0.5) * g.cell[1]).collect();
        let u = profile_mean_sem(&windows, FieldKind::Vx, 1);
        let rho = profile_mean_sem(&windows, FieldKind::Density, 1);
        let b = self.sim_box();
        let mid = 0.5 * (b.lo[1] + b.hi[1]);
        let half = 0.5 * CENTRAL * (b.hi[1] - b.lo[1]);
        let central: Vec<f64> = y
            .iter()
            .zip(&rho)
            .filter(|(yy, r)| (**yy - mid).abs() <= half && r.0.is_finite())
            .map(|(_, r)| r.0)
            .collect();
        if central.is_empty() {
            return Err("no density in the channel's centre".into());
        }
        let number_density = central.iter().sum::<f64>() / central.len() as f64;
        let species = &self.params.species;
        let mass =
            if species.is_empty() { 1.0 } else { species.iter().map(|s| s.mass).sum::<f64>() / species.len() as f64 };
        let density = number_density * mass;
        let fit = fit_poiseuille(&y, &u, self.params.drive, density, [b.lo[1], b.hi[1]], CENTRAL)?;
        Ok(ViscosityReadout { fit, windows: windows.len(), density: number_density })
    }

    /// Asks where to save the probe profile as CSV.
    pub fn save_profile_dialog(&mut self) {
        let dialog = rfd::FileDialog::new().add_filter("CSV", &["csv"]).set_file_name("profile.csv");
        if let Some(path) = dialog.save_file() {
            self.save_profile_csv(path);
        }
    }

    /// Writes the probe profile (`s, x, y, value, stderr`, reduced units) to `path`, atomically.
    pub fn save_profile_csv(&mut self, path: PathBuf) {
        let (Some(line), Some(Ok(points))) = (self.probe.line, self.probe_profile()) else {
            self.notify("no profile to save yet: draw a probe line and let a window finish", true);
            return;
        };
        let kind = self.probe.kind;
        let windows = self.probe.recent.len();
        let window_tau = self.probe.recent.back().map(|f| f.span()).unwrap_or(f64::NAN);
        let mut text = format!(
            "# probe line from ({:.4}, {:.4}) to ({:.4}, {:.4}) sigma; {} in {} (reduced units); mean and standard error over {} windows of {:.3} tau\n",
            line.a[0],
            line.a[1],
            line.b[0],
            line.b[1],
            kind.label(),
            kind.unit_lj(),
            windows,
            window_tau
        );
        text.push_str(&format!("s_sigma,x_sigma,y_sigma,{0},{0}_stderr\n", kind.name()));
        for p in &points {
            text.push_str(&format!("{:.6},{:.6},{:.6},{:.9e},{:.9e}\n", p.s, p.at[0], p.at[1], p.mean, p.sem));
        }
        match crate::io::atomic::write_atomic(&path, text.as_bytes()) {
            Ok(()) => self.notify(format!("wrote the {} profile to {}", kind.name(), path.display()), false),
            Err(e) => self.notify(format!("{}: {e}", path.display()), true),
        }
    }
}
