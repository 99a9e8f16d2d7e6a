//! Standard errors across windows: consecutive windows of a steady flow are the blocks of a
//! block average (`crate::analysis::blocks`), so keeping each window's `Fields` (or a profile
//! of them) gives a mean and a standard error per bin.

use crate::analysis::blocks::block_mean_sem;

use super::finish::Fields;
use super::kind::FieldKind;

/// Per index, the mean and standard error of the mean over `windows` (each one window's
/// values: a layer, or a [`Fields::profile`]), each window one block. The windows must be
/// longer than the flow's correlation time for the error to be honest. (NaN, NaN) where a
/// window has no value (NaN) or there are fewer than 2 windows.
///
/// # Panics
/// If the windows differ in length.
pub fn windows_mean_sem<V: AsRef<[f64]>>(windows: &[V]) -> Vec<(f64, f64)> {
    let Some(first) = windows.first() else { return Vec::new() };
    let len = first.as_ref().len();
    assert!(windows.iter().all(|w| w.as_ref().len() == len), "windows of different lengths");
    let mut column = Vec::with_capacity(windows.len());
    (0..len)
        .map(|i| {
            column.clear();
            column.extend(windows.iter().map(|w| w.as_ref()[i]));
            if column.iter().any(|v| v.is_nan()) {
                return (f64::NAN, f64::NAN);
            }
            block_mean_sem(&column, column.len()).unwrap_or((f64::NAN, f64::NAN))
        })
        .collect()
}

/// The mean and standard error of a line profile of `kind` along `axis` over consecutive
/// windows (see [`windows_mean_sem`]).
pub fn profile_mean_sem<F: std::borrow::Borrow<Fields>>(
    windows: &[F],
    kind: FieldKind,
    axis: usize,
) -> Vec<(f64, f64)> {
    let profiles: Vec<Vec<f64>> = windows.iter().map(|f| f.borrow().profile(kind, axis)).collect();
    windows_mean_sem(&profiles)
}
