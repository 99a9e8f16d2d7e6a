//! `run`'s wake readout for a flow past obstacles (`flow::wake::readout`): the first
//! obstacle's force from every telemetry record and the stream from every flow-field window
//! (mean x velocity, or the tunnel's U, density and temperature over the bins with atoms); after each window a
//! row of `wake.csv` in the fields folder (the readout over the run so far, rewritten
//! atomically), and the readout printed at the end. On when the run has obstacles and
//! samples fields (`--fields`).

use std::path::{Path, PathBuf};

use crate::flow::Fields;
use crate::flow::wake::{Freestream, WakeReadout, readout, stream_of};
use crate::shapes::Shape;
use crate::sim::Telemetry;
use crate::sim::bodies::Body;

pub const WAKE_CSV: &str = "wake.csv";
const HEADER: &str = "time_tau,speed,density,temperature,diameter,reynolds,mach,drag_coefficient,drag_coefficient_stderr,lift_coefficient,lift_coefficient_stderr,lift_rms,strouhal,strouhal_stderr";

/// The readout's inputs gathered over a run, and its CSV.
pub struct WakeLog {
    body: Body,
    diameter: f64,
    span: f64,
    mass: f64,
    /// The tunnel's stream speed, which stands for U when there is a tunnel.
    tunnel_speed: Option<f64>,
    path: PathBuf,
    times: Vec<f64>,
    forces: Vec<[f64; 2]>,
    /// The newest window's stream: (U, density, temperature).
    stream: Option<(f64, f64, f64)>,
    rows: Vec<String>,
}

impl WakeLog {
    /// A log for the first of `shapes` when there is one and fields go to `dir`.
    pub fn new(
        shapes: &[Shape],
        dir: Option<&Path>,
        span: f64,
        mass: f64,
        tunnel_speed: Option<f64>,
    ) -> Option<WakeLog> {
        let (shape, dir) = (shapes.first()?, dir?);
        let (lo, hi) = shape.bounds();
        Some(WakeLog {
            body: Body::Shape { index: 0, kind: shape.kind() },
            diameter: hi[1] - lo[1],
            span,
            mass,
            tunnel_speed,
            path: dir.join(WAKE_CSV),
            times: Vec::new(),
            forces: Vec::new(),
            stream: None,
            rows: Vec::new(),
        })
    }

    pub fn record(&mut self, t: &Telemetry) {
        if let Some(f) = t.body_forces.iter().find(|b| b.body == self.body) {
            self.times.push(t.time);
            self.forces.push([f.force[0], f.force[1]]);
        }
    }

    /// The readout now, when a window has given the stream and it flows along +x.
    pub fn readout(&self) -> Option<WakeReadout> {
        let (measured, density, temperature) = self.stream?;
        let speed = self.tunnel_speed.unwrap_or(measured);
        if speed <= 0.0 {
            return None;
        }
        let stream = Freestream { mass_density: density * self.mass, speed, diameter: self.diameter, span: self.span };
        Some(readout(&self.times, &self.forces, stream, temperature, None))
    }

    /// Takes finished windows: the stream from the newest, a CSV row per window.
    pub fn windows(&mut self, windows: &[Fields]) -> std::io::Result<()> {
        for w in windows {
            self.stream = stream_of(w).or(self.stream);
            let Some(r) = self.readout() else { continue };
            self.rows.push(row(w.time[1], &r));
        }
        if windows.is_empty() || self.rows.is_empty() {
            return Ok(());
        }
        let text = std::iter::once(HEADER.to_string()).chain(self.rows.iter().cloned()).collect::<Vec<_>>().join("\n");
        crate::io::atomic::write_atomic(&self.path, (text + "\n").as_bytes())
    }
}

fn row(time: f64, r: &WakeReadout) -> String {
    let num = |x: Option<f64>| x.filter(|v| v.is_finite()).map(|v| format!("{v:.6e}")).unwrap_or_default();
    let c = r.coefficients.as_ref().ok();
    let st = r.strouhal.as_ref().ok();
    let s = &r.stream;
    [
        Some(time),
        Some(s.speed),
        Some(s.mass_density),
        Some(r.temperature),
        Some(s.diameter),
        r.reynolds,
        Some(r.mach),
        c.map(|c| c.drag),
        c.map(|c| c.drag_sem),
        c.map(|c| c.lift),
        c.map(|c| c.lift_sem),
        c.map(|c| c.lift_rms),
        st.map(|s| s.strouhal),
        st.map(|s| s.strouhal_sem),
    ]
    .map(num)
    .join(",")
}
