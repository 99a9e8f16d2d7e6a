//! The floating-point abstraction the force loops and integrators are generic over, and the
//! three precision modes as type-level choices (state, force and accumulator types).
//!
//! Owns these traits and [`Precision`], the user-facing name of each mode; every numeric kernel on the CPU is written once over them.

use std::fmt::Debug;
use std::ops::{AddAssign, MulAssign, SubAssign};

use serde::{Deserialize, Serialize};

/// Floating-point precision of the force and integration arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
pub enum Precision {
    /// f32 throughout.
    Single,
    /// f32 forces; f64 positions, velocities and energy/virial accumulation.
    Mixed,
    /// f64 throughout.
    Double,
}

impl Precision {
    pub const ALL: [Precision; 3] = [Precision::Single, Precision::Mixed, Precision::Double];

    pub fn name(&self) -> &'static str {
        match self {
            Precision::Single => "single",
            Precision::Mixed => "mixed",
            Precision::Double => "double",
        }
    }
}

/// f32 or f64.
pub trait Real:
    num_traits::Float + AddAssign + SubAssign + MulAssign + Default + Debug + Send + Sync + bytemuck::Pod + 'static
{
    fn of(x: f64) -> Self;
    fn f64(self) -> f64;
    /// Round to nearest, ties to even, for |x| < 2^22: adding and subtracting 1.5 * 2^(p-1)
    /// (p = mantissa bits) rounds in the default rounding mode. Plain adds vectorise on every
    /// x86-64, where `round_ties_even` would be a library call without SSE4.1.
    fn rint(self) -> Self;
}

impl Real for f32 {
    #[inline(always)]
    fn of(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn rint(self) -> Self {
        const MAGIC: f32 = 12_582_912.0; // 1.5 * 2^23
        (self + MAGIC) - MAGIC
    }
}

impl Real for f64 {
    #[inline(always)]
    fn of(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn rint(self) -> Self {
        const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 * 2^52
        (self + MAGIC) - MAGIC
    }
}

/// A precision mode: the type of the integration state, of the force arithmetic, and of
/// energy/virial accumulation.
pub trait PrecisionMode: Send + Sync + 'static {
    type State: Real;
    type Force: Real;
    type Accum: Real;
    const MODE: Precision;
}

/// f32 throughout.
pub struct Single;
/// f32 forces, f64 state and accumulation.
pub struct Mixed;
/// f64 throughout.
pub struct Double;

impl PrecisionMode for Single {
    type State = f32;
    type Force = f32;
    type Accum = f32;
    const MODE: Precision = Precision::Single;
}

impl PrecisionMode for Mixed {
    type State = f64;
    type Force = f32;
    type Accum = f64;
    const MODE: Precision = Precision::Mixed;
}

impl PrecisionMode for Double {
    type State = f64;
    type Force = f64;
    type Accum = f64;
    const MODE: Precision = Precision::Double;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rint_rounds_half_to_even() {
        for (x, r) in [(0.5, 0.0), (1.5, 2.0), (-0.5, 0.0), (-1.5, -2.0), (0.49, 0.0), (-0.51, -1.0), (3.7, 4.0)] {
            assert_eq!(Real::rint(x), r);
            assert_eq!(Real::rint(x as f32), r as f32);
        }
    }
}
