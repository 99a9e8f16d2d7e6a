//! What the wgpu backend does not run, and why, naming the backends that do: the piston, the
//! tether, hybrid Monte Carlo, and mixed or double precision on a device without 64-bit
//! floats in shaders (`device::f64_missing`). Used before a system is built (`GpuBackend`,
//! Auto's choice, the app's scene loading) and for a running one (`unsupported_on`, from its
//! `BackendInfo`).

use crate::physics::params::SimParams;
use crate::physics::real::Precision;
use crate::sim::BackendInfo;

/// Why the wgpu backend cannot run `precision` on a device without 64-bit floats for the
/// reason `f64_missing` (None: it has them), naming the backends that can; None when it can.
pub fn unsupported_precision(precision: Precision, f64_missing: Option<&str>) -> Option<String> {
    match (precision, f64_missing) {
        (Precision::Single, _) | (_, None) => None,
        (p, Some(why)) => Some(format!("{why}; the CPU and CUDA backends run {} precision", p.name())),
    }
}

/// Why `params` cannot run on this backend, naming the backends that can; None when it can.
/// `f64_missing`: why the device has no 64-bit floats for mixed and double precision
/// (`SimDevice::f64_missing`, `device::f64_missing_on`), None where it has them.
pub fn unsupported(params: &SimParams, f64_missing: Option<&str>) -> Option<String> {
    let both = "the CPU and CUDA backends run it";
    if let Some(why) = f64_missing.filter(|_| params.precision != Precision::Single) {
        return Some(format!(
            "the wgpu backend does not run {} precision on this GPU: {why}; {both}: choose --backend cpu or cuda",
            params.precision.name()
        ));
    }
    let what = if params.piston.is_some() {
        format!("the piston ({both})")
    } else if params.tether.is_some() {
        format!("the tether ({both})")
    } else if params.thermostat.is_monte_carlo() {
        format!("hybrid Monte Carlo ({both})")
    } else {
        return None;
    };
    Some(format!("the wgpu backend does not run {what} yet: choose --backend cpu or cuda"))
}

/// Why a running wgpu backend described by `info` (whose precisions say what its device runs)
/// cannot run `params`; None when it can.
pub fn unsupported_on(params: &SimParams, info: &BackendInfo) -> Option<String> {
    if let Some(why) = info.refuses(params.precision) {
        return Some(format!("the wgpu backend does not run {} precision on this GPU: {why}", params.precision.name()));
    }
    unsupported(params, None)
}
