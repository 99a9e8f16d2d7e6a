//! Hybrid Monte Carlo over any backend (placeholder constants; the driver follows).

/// Default steps per trajectory.
pub const DEFAULT_TRAJECTORY: u32 = 20;
/// Default largest ln V step of a volume move.
pub const DEFAULT_MAX_DLNV: f64 = 0.02;
