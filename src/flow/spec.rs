//! What a person asks for when they ask to see the flow: the bin size, the z slab, how often
//! to sample and how long to average (`FieldSpec`, read from scene files), and the checks that
//! turn a bad request into an error naming the field and the fix (`FieldError`).

use serde::{Deserialize, Serialize};

use crate::numfmt::{Shown, short};
use crate::physics::sim_box::SimBox;

/// The most bins a grid may have (2D or 3D): 4 Mi bins are 192 MiB of accumulators, already
/// far more than a screen or a file wants; a smaller `bin` than that is a typo.
pub const MAX_BINS: usize = 1 << 22;

/// How continuum fields are sampled from the atoms. Lengths in sigma, times in tau.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FieldSpec {
    /// The bin edge in sigma (default 2). Rounded per axis so the bins tile the box exactly:
    /// nx = max(1, round(Lx / bin)) bins of Lx / nx each (likewise y, and z for 3D grids).
    pub bin: f64,
    /// The z range `[z0, z1]` (in box coordinates) the front x-y grid averages over; None: the
    /// whole depth of the box. Atoms outside the slab are not sampled.
    pub slab: Option<[f64; 2]>,
    /// Sample every `every` steps (default 10).
    pub every: u64,
    /// The averaging window in tau (default 50): a field is finished and handed on at the end
    /// of each window, then the accumulators start again.
    pub window_tau: f64,
    /// Bin along z as well (for the 3D grids written to files): round(depth / bin) layers over
    /// the slab or the whole depth. False (the default): one layer, the 2D front grid.
    pub three_d: bool,
}

impl Default for FieldSpec {
    fn default() -> Self {
        FieldSpec { bin: 2.0, slab: None, every: 10, window_tau: 50.0, three_d: false }
    }
}

/// A field specification the box or the time step cannot honour.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field} = {value}: {reason}")]
pub struct FieldError {
    /// The field at fault: `bin`, `slab`, `every`, `window_tau` (`field` for a layer name,
    /// `data` for device sums of the wrong size).
    pub field: &'static str,
    pub value: String,
    /// What is wrong and how to fix it.
    pub reason: String,
}

pub(crate) fn check(
    ok: bool,
    field: &'static str,
    value: impl Shown,
    reason: impl Into<String>,
) -> Result<(), FieldError> {
    if ok { Ok(()) } else { Err(FieldError { field, value: value.shown(), reason: reason.into() }) }
}

impl FieldSpec {
    /// Checks the whole specification against the box and the time step `dt` (tau).
    pub fn validate(&self, b: &SimBox, dt: f64) -> Result<(), FieldError> {
        self.validate_geometry(b)?;
        check(
            self.every >= 1,
            "every",
            self.every,
            "sample at least every step: every must be 1 or more (10 is usual)",
        )?;
        let interval = self.every as f64 * dt;
        check(
            self.window_tau.is_finite() && self.window_tau > 0.0,
            "window_tau",
            self.window_tau,
            "the averaging window must be a positive number of tau (50 is usual)",
        )?;
        check(
            self.window_tau >= interval,
            "window_tau",
            self.window_tau,
            format!(
                "the window is shorter than one sampling interval (every x dt = {} tau): \
                 make window_tau at least {}, or sample more often (smaller every)",
                short(interval),
                short(interval)
            ),
        )
    }

    /// The checks that concern the box alone: the bin and the slab (what [`super::Grid::new`] needs).
    pub fn validate_geometry(&self, b: &SimBox) -> Result<(), FieldError> {
        let l = b.length();
        check(
            self.bin.is_finite() && self.bin > 0.0,
            "bin",
            self.bin,
            "the bin edge must be a positive length in sigma (2 is usual)",
        )?;
        for (k, axis) in [(0, 'x'), (1, 'y')] {
            check(
                self.bin <= l[k] * (1.0 + 1e-12),
                "bin",
                self.bin,
                format!(
                    "the bin is larger than the box along {axis} ({} sigma): make bin at most {}",
                    short(l[k]),
                    short(l[k])
                ),
            )?;
        }
        if let Some([z0, z1]) = self.slab {
            let value = format!("[{}, {}]", short(z0), short(z1));
            let (lo, hi) = (b.lo[2], b.hi[2]);
            check(z0.is_finite() && z1.is_finite(), "slab", &value, "both ends of the slab must be numbers (sigma)")?;
            check(
                z0 < z1,
                "slab",
                &value,
                "the slab is empty: write it as [low z, high z] with low < high, or leave it out for the whole depth",
            )?;
            let tol = 1e-9 * (hi - lo).abs().max(1.0);
            check(
                z0 >= lo - tol && z1 <= hi + tol,
                "slab",
                &value,
                format!(
                    "the slab reaches outside the box, whose z runs from {} to {}: keep both ends inside",
                    short(lo),
                    short(hi)
                ),
            )?;
        }
        let bins = self.bin_counts(b).iter().map(|&n| n as f64).product::<f64>();
        check(
            bins <= MAX_BINS as f64,
            "bin",
            self.bin,
            format!("{} bins is more than the {MAX_BINS} allowed: make the bin larger", short(bins)),
        )
    }

    /// The z range the grid covers: the slab, or the whole depth.
    pub fn z_range(&self, b: &SimBox) -> [f64; 2] {
        self.slab.unwrap_or([b.lo[2], b.hi[2]])
    }

    /// Bins along x, y, z (nz = 1 unless `three_d`); at least 1 each, even for bad input.
    pub fn bin_counts(&self, b: &SimBox) -> [usize; 3] {
        let l = b.length();
        let [z0, z1] = self.z_range(b);
        let n = |len: f64| {
            let r = (len / self.bin).round();
            // NaN and negative ratios give 1; huge ones are capped (validate refuses them).
            if r >= 1.0 { r.min(1e12) as usize } else { 1 }
        };
        [n(l[0]), n(l[1]), if self.three_d { n(z1 - z0) } else { 1 }]
    }

    /// Samples in one window at time step `dt`: window_tau / (every dt), rounded, at least 1.
    pub fn samples_per_window(&self, dt: f64) -> u64 {
        let s = (self.window_tau / (self.every.max(1) as f64 * dt)).round();
        if s >= 1.0 { s.min(u64::MAX as f64) as u64 } else { 1 }
    }
}
