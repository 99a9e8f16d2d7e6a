//! The wind-tunnel readout in the app: the first obstacle's drag, lift, Strouhal, Reynolds
//! and Mach numbers (`flow::wake::readout`) from the force records the plots keep and the
//! stream as the flow fields see it (mean velocity along x, or the tunnel's U, density and
//! temperature of the newest window), D the obstacle's extent across the stream (y), the span
//! the box's depth, the recirculation bubble behind it over the newest windows, and the Strouhal
//! number and the full shedding periods (how many, when the third completed) of the wake probe
//! behind it.

use super::App;
use crate::flow::wake::{WakeReadout, freestream_of, readout};
use crate::sim::bodies::Body;

impl App {
    /// The readout for the first obstacle, or why there is none yet.
    pub fn wake_readout(&self) -> Result<WakeReadout, String> {
        let shape = self.shapes.first().ok_or("draw an obstacle in the stream")?;
        let body = Body::Shape { index: 0, kind: shape.kind() };
        let fields =
            self.flow.fields.as_ref().ok_or("turn on the Flow view: the stream is measured from its fields")?;
        let (centre, diameter) = shape.centre_and_height();
        let span = self.sim_box().length()[2];
        let mass = self.params.species.first().map_or(1.0, |s| s.mass);
        let (stream, temperature) = freestream_of(fields, self.params.tunnel.map(|t| t.speed), diameter, span, mass)?;
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
        let recent: Vec<&crate::flow::Fields> = self.probe.recent.iter().map(|f| f.as_ref()).collect();
        Ok(readout(&times, &forces, stream, temperature, measured)
            .with_bubble(&recent, centre)
            .with_wake_probe(&self.flow.wake))
    }
}
