//! Transport measurements: self-diffusion (mean-squared displacement and velocity
//! autocorrelation against stored time origins) and shear viscosity (Green-Kubo on the
//! pressure tensor). `spec.rs` is the contract with the backends: what they sample
//! ([`TransportSpec`]), on which steps, and the records they hand back
//! ([`TransportSamples`]). The backends keep the per-atom state (origins, unwrapped
//! positions) where the atoms live and return only per-sample sums; everything after that
//! is host-side analysis here, pure functions of records: `diffusion.rs` (MSD and VACF
//! averaged over origins, Einstein and Green-Kubo D with block errors, the Yeh-Hummer
//! correction), `viscosity.rs` (Green-Kubo eta through the multiple-tau correlator, plateau
//! rule, block errors), `plan.rs` (the sampling a measurement asks for, the steps it
//! needs), `request.rs` (what a measurement asks for and the checks it must pass) and
//! `report.rs` (the result as `measure` prints it and the app's Measure panel shows it).
//! Must not import `sim` (which imports `spec`).

pub mod diffusion;
pub mod plan;
pub mod report;
pub mod request;
pub mod spec;
pub mod viscosity;

pub use report::{Curves, Inputs, Report};
pub use request::{Quantity, Refusal, Request};
pub use spec::{OriginRecord, OriginSpec, StressRecord, TransportSamples, TransportSpec};
