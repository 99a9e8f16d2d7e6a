//! `run`'s wake readout for a flow past obstacles (`flow::wake::readout`): the first
//! obstacle's force from every telemetry record and the stream from every flow-field window
//! (mean x velocity, or the tunnel's U, density and temperature over the bins with atoms) and
//! the recirculation bubble behind the obstacle over the newest windows and the wake probe's
//! cross-stream velocity (its Strouhal number and its full shedding periods: how many, and
//! when the third completed, empty until then); after each window a
//! row of `wake.csv` in the fields folder (the readout over the run so far, rewritten
//! atomically), and the readout printed at the end. On when the run has obstacles and
//! samples fields (`--fields`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use crate::flow::Fields;
use crate::flow::wake::{BUBBLE_WINDOWS, Freestream, WakeReadout, WakeSeries, freestream_of, readout, stream_of};
use crate::shapes::Shape;
use crate::sim::Telemetry;
use crate::sim::bodies::Body;

pub const WAKE_CSV: &str = "wake.csv";
const HEADER: &str = "time_tau,speed,density,temperature,diameter,reynolds,mach,drag_coefficient,drag_coefficient_stderr,lift_coefficient,lift_coefficient_stderr,lift_rms,strouhal,strouhal_stderr,wake_probe_vy,strouhal_wake_probe,strouhal_wake_probe_stderr,recirculation_length_over_d,recirculation_length_over_d_stderr,recirculation_min_vx,recirculation_min_vx_stderr,shedding_full_periods,third_full_period_tau";

/// The readout's inputs gathered over a run, and its CSV.
pub struct WakeLog {
    body: Body,
    diameter: f64,
    /// The body's centre (x, y): where its recirculation bubble is looked for.
    centre: [f64; 2],
    span: f64,
    mass: f64,
    /// The tunnel's stream speed, which stands for U when there is a tunnel.
    tunnel_speed: Option<f64>,
    path: PathBuf,
    times: Vec<f64>,
    forces: Vec<[f64; 2]>,
    /// The newest window's stream and temperature.
    stream: Option<(Freestream, f64)>,
    /// The newest windows, for the recirculation bubble.
    recent: VecDeque<Fields>,
    /// The wake probe's cross-stream velocity per window.
    probe: WakeSeries,
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
        let (centre, diameter) = shape.centre_and_height();
        Some(WakeLog {
            body: Body::Shape { index: 0, kind: shape.kind() },
            diameter,
            centre,
            span,
            mass,
            tunnel_speed,
            path: dir.join(WAKE_CSV),
            times: Vec::new(),
            forces: Vec::new(),
            stream: None,
            recent: VecDeque::new(),
            probe: WakeSeries::default(),
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
        let (stream, temperature) = self.stream?;
        let recent: Vec<&Fields> = self.recent.iter().collect();
        let r = readout(&self.times, &self.forces, stream, temperature, None);
        Some(r.with_bubble(&recent, self.centre).with_wake_probe(&self.probe))
    }

    /// Takes finished windows: the stream from the newest, a CSV row per window.
    pub fn windows(&mut self, windows: &[Fields]) -> std::io::Result<()> {
        for w in windows {
            // A window without atoms keeps the previous one's stream; one without a stream
            // along +x has no readout.
            if stream_of(w).is_some() {
                self.stream = freestream_of(w, self.tunnel_speed, self.diameter, self.span, self.mass).ok();
            }
            if self.recent.len() >= BUBBLE_WINDOWS {
                self.recent.pop_front();
            }
            self.recent.push_back(w.clone());
            let probe = self.probe.push(w, self.centre, self.diameter);
            let Some(r) = self.readout() else { continue };
            self.rows.push(row(w.time[1], &r, probe));
        }
        if windows.is_empty() || self.rows.is_empty() {
            return Ok(());
        }
        let text = std::iter::once(HEADER.to_string()).chain(self.rows.iter().cloned()).collect::<Vec<_>>().join("\n");
        crate::io::atomic::write_atomic(&self.path, (text + "\n").as_bytes())
    }
}

fn row(time: f64, r: &WakeReadout, probe: Option<f64>) -> String {
    let num = |x: Option<f64>| x.filter(|v| v.is_finite()).map(|v| format!("{v:.6e}")).unwrap_or_default();
    let c = r.coefficients.as_ref().ok();
    let st = r.strouhal.as_ref().ok();
    let sw = r.strouhal_wake.as_ref().and_then(|w| w.as_ref().ok());
    let periods = r.periods.as_ref().and_then(|p| p.as_ref().ok());
    let s = &r.stream;
    let numbers = [
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
        probe,
        sw.map(|s| s.strouhal),
        sw.map(|s| s.strouhal_sem),
        r.recirculation.map(|b| b.length_over_d),
        r.recirculation.map(|b| b.length_over_d_sem),
        r.recirculation.map(|b| b.min_vx),
        r.recirculation.map(|b| b.min_vx_sem),
    ]
    .map(num)
    .join(",");
    // Appended after the older columns, so readers of those keep working.
    let count = periods.map(|p| p.count().to_string()).unwrap_or_default();
    let third = num(periods.and_then(|p| p.third()));
    format!("{numbers},{count},{third}")
}
