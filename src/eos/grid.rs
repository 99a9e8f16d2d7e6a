//! The density grid of a sweep: `a:b:step` (inclusive, end found without float drift) or a
//! single density, and the checks that name the flag and the fix.

use super::EosError;

/// Most densities one sweep may have.
pub const MAX_POINTS: usize = 200;
/// Highest density accepted (the LJ solid is denser than about 1.0 at the temperatures here).
pub const MAX_DENSITY: f64 = 1.5;

fn invalid(message: String) -> EosError {
    EosError::Invalid { field: "densities", message }
}

fn number(text: &str, what: &str) -> Result<f64, EosError> {
    let v: f64 = text.trim().parse().map_err(|_| {
        invalid(format!("{what} `{}` is not a number; write the grid as a:b:step, e.g. 0.3:0.7:0.2", text.trim()))
    })?;
    if !v.is_finite() {
        return Err(invalid(format!("{what} `{}` is not a finite number", text.trim())));
    }
    Ok(v)
}

/// Densities `a, a + step, ...` up to and including `b` (within 1e-6 of a step, so
/// `0.1:0.3:0.1` has three points although 0.1 + 2 * 0.1 is not 0.3 in floating point).
pub fn densities(a: f64, b: f64, step: f64) -> Result<Vec<f64>, EosError> {
    if step <= 0.0 {
        return Err(invalid(format!("the step {step} must be positive; write a:b:step with step > 0")));
    }
    if a > b {
        return Err(invalid(format!(
            "the first density {a} is above the last {b}; write the smaller first (a:b:step with a <= b)"
        )));
    }
    let intervals = ((b - a) / step + 1e-6).floor();
    if intervals + 1.0 > MAX_POINTS as f64 {
        return Err(invalid(format!(
            "{a}:{b}:{step} has {} points; at most {MAX_POINTS}: use a larger step",
            intervals as u64 + 1
        )));
    }
    let grid: Vec<f64> = (0..=intervals as usize).map(|i| ((a + i as f64 * step) * 1e12).round() / 1e12).collect();
    for &rho in &grid {
        if !(rho > 0.0 && rho <= MAX_DENSITY) {
            return Err(invalid(format!(
                "density {rho} is outside (0, {MAX_DENSITY}]: choose densities in that range"
            )));
        }
    }
    Ok(grid)
}

/// Parses `a:b:step` or a single density.
pub fn parse_densities(text: &str) -> Result<Vec<f64>, EosError> {
    let parts: Vec<&str> = text.split(':').collect();
    match parts.as_slice() {
        [one] => {
            let rho = number(one, "the density")?;
            densities(rho, rho, 1.0)
        }
        [a, b, step] => {
            densities(number(a, "the first density")?, number(b, "the last density")?, number(step, "the step")?)
        }
        _ => Err(invalid(format!("`{text}` is not a:b:step (e.g. 0.3:0.7:0.2) or a single density"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inclusive_ends_without_float_drift() {
        assert_eq!(parse_densities("0.1:0.3:0.1").unwrap(), vec![0.1, 0.2, 0.3]);
        assert_eq!(parse_densities("0.3:0.7:0.2").unwrap(), vec![0.3, 0.5, 0.7]);
        assert_eq!(parse_densities("0.5:0.9:0.2").unwrap(), vec![0.5, 0.7, 0.9]);
        assert_eq!(parse_densities("0.1:0.35:0.1").unwrap(), vec![0.1, 0.2, 0.3]);
        assert_eq!(parse_densities("0.6").unwrap(), vec![0.6]);
        assert_eq!(parse_densities("0.01:1:0.01").unwrap().len(), 100);
    }

    #[test]
    fn bad_grids_name_the_problem() {
        let msg = |t: &str| parse_densities(t).unwrap_err().to_string();
        assert!(msg("0.3:0.7:0").contains("must be positive"), "{}", msg("0.3:0.7:0"));
        assert!(msg("0.3:0.7:-0.1").contains("must be positive"));
        assert!(msg("0.7:0.3:0.1").contains("smaller first"));
        assert!(msg("0.001:1:0.001").contains("at most 200"));
        assert!(msg("0:0.5:0.1").contains("outside (0, 1.5]"));
        assert!(msg("0.5:2:0.5").contains("outside (0, 1.5]"));
        assert!(msg("a:0.5:0.1").contains("not a number"));
        assert!(msg("0.1:0.5").contains("not a:b:step"));
        assert!(msg("nan").contains("not a finite number"));
    }
}
