//! Transport measurements: self-diffusion (mean-squared displacement and velocity
//! autocorrelation against stored time origins) and shear viscosity (Green-Kubo on the
//! pressure tensor). `spec.rs` is the contract with the backends: what they sample
//! ([`TransportSpec`]), on which steps, and the records they hand back
//! ([`TransportSamples`]). The backends keep the per-atom state (origins, unwrapped
//! positions) where the atoms live and return only per-sample sums; everything after that
//! (averaging over origins, fits, correlators, errors, units) is host-side analysis here.

pub mod spec;

pub use spec::{OriginRecord, OriginSpec, StressRecord, TransportSamples, TransportSpec};
