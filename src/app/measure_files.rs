//! What leaves the Measure panel: the result as text (the lines `measure` prints, for "Copy as
//! text") and the CSV export: the plotted curves in reduced units (diffusion: one row per
//! species and lag with the MSD, its standard error over origins and the fitted line over the
//! fit range; viscosity: the stress autocorrelation and its running integral), the result and
//! the run in `#` header lines. Written atomically off the UI thread, like the app's other
//! exports.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::App;
use super::measure::{Live, Measurement};
use crate::io::atomic::write_atomic;
use crate::transport::Curves;

impl App {
    /// The result as `measure` prints it, one line each; None before there is one.
    pub fn measurement_text(&self) -> Option<String> {
        let live = self.measure.run.as_ref()?.live.as_ref()?;
        live.result.as_ref().ok().map(|r| r.lines().join("\n"))
    }

    pub fn save_measurement_dialog(&mut self) {
        let name = self.measure.run.as_ref().map_or("measure", |m| m.request.quantity.name());
        let dialog = rfd::FileDialog::new().add_filter("CSV", &["csv"]).set_file_name(format!("{name}.csv"));
        if let Some(path) = dialog.save_file() {
            self.save_measurement_csv(path);
        }
    }

    /// Writes the measurement's curves and result (see the module doc) to `path`, atomically,
    /// in the background.
    pub fn save_measurement_csv(&mut self, path: PathBuf) {
        let Some((m, live)) = self.measure.run.as_ref().and_then(|m| Some((m, m.live.clone()?))) else {
            self.notify("no measurement to save yet: start one and let it sample", true);
            return;
        };
        let text = measurement_csv(m, &live);
        let rows = text.lines().filter(|l| !l.starts_with('#')).count().saturating_sub(1);
        self.spawn_task("saving the measurement", move || {
            write_atomic(&path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(format!("wrote the measurement ({rows} rows) to {}", path.display()))
        });
    }
}

/// The CSV text of measurement `m` with its analysis `live`.
pub fn measurement_csv(m: &Measurement, live: &Live) -> String {
    let mut out = String::new();
    let what = match m.request.quantity {
        crate::transport::Quantity::Diffusion => "self-diffusion (Einstein, mean-squared displacement)",
        crate::transport::Quantity::Viscosity => "shear viscosity (Green-Kubo, pressure-tensor autocorrelation)",
    };
    let _ = writeln!(out, "# argon-sandbox measurement: {what}");
    let since = m.since.unwrap_or(0);
    let _ = writeln!(
        out,
        "# steps {since} to {} ({} of {} production steps), dt = {} tau, {} backend, {} thermostat",
        since + live.steps,
        live.steps,
        m.request.steps,
        m.params.dt,
        m.backend,
        m.params.thermostat.name()
    );
    match &live.result {
        Ok(r) => r.lines().iter().for_each(|l| {
            let _ = writeln!(out, "# {}", l.trim_start());
        }),
        Err(e) => {
            let _ = writeln!(out, "# no result yet: {e}");
        }
    }
    let _ = writeln!(out, "# reduced LJ units: sigma, tau, epsilon (argon: 1 sigma = 0.3405 nm, 1 tau = 2.156 ps)");
    match &live.curves {
        Curves::Diffusion(plots) => {
            out.push_str("species,t_tau,msd_sigma2,msd_stderr_sigma2,origins,fit_sigma2\n");
            for p in plots {
                let c = &p.curve;
                for i in 0..c.lag.len() {
                    let t = c.lag[i];
                    let fit = p
                        .fit
                        .filter(|f| t >= f.from - 1e-12 && t <= f.to + 1e-12)
                        .map_or(String::new(), |f| format!("{:?}", f.intercept + f.slope * t));
                    let _ =
                        writeln!(out, "{},{:?},{:?},{:?},{},{fit}", p.species, t, c.mean[i], c.stderr[i], c.origins[i]);
                }
            }
        }
        Curves::Viscosity { running, .. } => {
            out.push_str("t_tau,acf_eps2_per_sigma6,eta_eps_tau_per_sigma3\n");
            for i in 0..running.lag.len() {
                let _ = writeln!(out, "{:?},{:?},{:?}", running.lag[i], running.acf[i], running.eta[i]);
            }
        }
    }
    out
}
