//! The wind-tunnel readout in the app: the first obstacle's drag, lift, Strouhal, Reynolds
//! and Mach numbers (`flow::wake::readout`) from the force records the plots keep and the
//! stream as the flow fields see it (mean velocity along x, density and temperature of the
//! newest window), D the obstacle's extent across the stream (y), the span the box's depth.

use super::App;
use crate::flow::wake::{Freestream, WakeReadout, readout};
use crate::sim::bodies::Body;

/// The stream as the newest window sees it: mass-weighted mean x velocity, mean density and
/// mean temperature over the bins with atoms; None without a window.
fn stream_of(f: &crate::flow::Fields) -> Option<(f64, f64, f64)> {
    let (mut n, mut u, mut rho, mut t, mut bins) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for b in 0..f.density.len() {
        let c = f.count[b];
        if !(c > 0.0 && f.vx[b].is_finite() && f.density[b].is_finite() && f.temperature[b].is_finite()) {
            continue;
        }
        n += c;
        u += c * f.vx[b];
        t += c * f.temperature[b];
        rho += f.density[b];
        bins += 1.0;
    }
    (n > 0.0).then(|| (u / n, rho / bins, t / n))
}

impl App {
    /// The readout for the first obstacle, or why there is none yet.
    pub fn wake_readout(&self) -> Result<WakeReadout, String> {
        let shape = self.shapes.first().ok_or("draw an obstacle in the stream")?;
        let body = Body::Shape { index: 0, kind: shape.kind() };
        let fields =
            self.flow.fields.as_ref().ok_or("turn on the Flow view: the stream is measured from its fields")?;
        let (speed, density, temperature) = stream_of(fields).ok_or("the newest flow window has no atoms")?;
        if speed <= 0.0 {
            return Err(format!("no stream along +x yet (mean x velocity {speed:.3} sigma/tau)"));
        }
        let (lo, hi) = shape.bounds();
        let span = self.sim_box().length()[2];
        let mass = self.params.species.first().map_or(1.0, |s| s.mass);
        let stream = Freestream { mass_density: density * mass, speed, diameter: hi[1] - lo[1], span };
        let (times, forces): (Vec<f64>, Vec<[f64; 2]>) = self
            .plots
            .records
            .iter()
            .filter_map(|t| {
                let f = t.body_forces.iter().find(|b| b.body == body)?;
                Some((t.time, [f.force[0], f.force[1]]))
            })
            .unzip();
        if times.is_empty() {
            return Err("no force records on the obstacle yet".into());
        }
        let measured = self.viscosity_readout().ok().map(|v| v.fit.viscosity);
        Ok(readout(&times, &forces, stream, temperature, measured))
    }
}
