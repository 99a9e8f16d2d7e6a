//! The shear viscosity from the velocity profile of a fluid driven between walls (plane
//! Poiseuille flow): with a body acceleration `g` along the flow and mass density `rho`, the
//! Navier-Stokes equation gives eta u''(y) = -rho g, so a parabola u = a + b y + c y^2 fitted
//! across the channel's central part (away from the layered fluid at the walls) gives
//! eta = -rho g / (2 c), with its uncertainty from the fit (weighted by the profile's standard
//! errors where there are any).

/// A parabola fitted to a channel's stream-wise velocity profile and the viscosity it implies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoiseuilleFit {
    /// Shear viscosity, reduced units (epsilon tau / sigma^3), and its standard error.
    pub viscosity: f64,
    pub sem: f64,
    /// The fitted parabola u(y) = a + b (y - mid) + c (y - mid)^2 around the channel's middle.
    pub coefficients: [f64; 3],
    pub mid: f64,
    /// The y range the fit used, and how many profile points fell in it.
    pub y_range: [f64; 2],
    pub points: usize,
    /// Chi-squared per degree of freedom (1 for a fit as good as the errors say; NaN when the
    /// profile had no errors).
    pub chi2_dof: f64,
}

/// Fits the profile `u` (mean and standard error at each `y`) of a channel with walls at
/// `walls` (y of the two walls), driven by acceleration `accel` along the flow in a fluid of
/// mass density `mass_density`, over the central fraction `central` (0 to 1) of the channel.
/// Standard errors that are all finite and positive weigh the points; otherwise the scatter
/// about the fit sets the uncertainty. Errors say what is missing.
pub fn fit_poiseuille(
    y: &[f64],
    u: &[(f64, f64)],
    accel: f64,
    mass_density: f64,
    walls: [f64; 2],
    central: f64,
) -> Result<PoiseuilleFit, String> {
    if y.len() != u.len() {
        return Err("the profile's positions and values differ in number".into());
    }
    if !(accel.is_finite() && accel != 0.0) {
        return Err("the fluid is not driven (drive 0): a viscosity needs a driven channel".into());
    }
    if !(mass_density.is_finite() && mass_density > 0.0) {
        return Err(format!("mass density {mass_density}: the channel holds no fluid"));
    }
    if !(central > 0.0 && central <= 1.0) {
        return Err(format!("central fraction {central}: use a fraction from 0 to 1"));
    }
    let mid = 0.5 * (walls[0] + walls[1]);
    let half = 0.5 * central * (walls[1] - walls[0]).abs();
    let pts: Vec<(f64, f64, f64)> = y
        .iter()
        .zip(u)
        .filter(|(yy, (m, _))| (**yy - mid).abs() <= half && m.is_finite())
        .map(|(yy, (m, e))| (yy - mid, *m, *e))
        .collect();
    if pts.len() < 4 {
        return Err(format!(
            "only {} profile points with data in the central {:.0} % of the channel: use smaller bins or a wider channel",
            pts.len(),
            central * 100.0
        ));
    }
    let weighted = pts.iter().all(|p| p.2.is_finite() && p.2 > 0.0);
    // Normal equations for u = a + b x + c x^2.
    let mut m = [[0.0; 3]; 3];
    let mut r = [0.0; 3];
    for &(x, v, e) in &pts {
        let w = if weighted { 1.0 / (e * e) } else { 1.0 };
        let basis = [1.0, x, x * x];
        for i in 0..3 {
            r[i] += w * basis[i] * v;
            for j in 0..3 {
                m[i][j] += w * basis[i] * basis[j];
            }
        }
    }
    let inv = invert3(&m).ok_or("the profile points do not determine a parabola")?;
    let coef: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| inv[i][j] * r[j]).sum());
    let resid: f64 = pts
        .iter()
        .map(|&(x, v, e)| {
            let d = v - (coef[0] + coef[1] * x + coef[2] * x * x);
            if weighted { (d / e).powi(2) } else { d * d }
        })
        .sum();
    let dof = (pts.len() - 3).max(1) as f64;
    // Unweighted: the scatter sets the variance. Weighted: the errors do, scaled up when the
    // points scatter more than their errors say.
    let scale = if weighted { (resid / dof).max(1.0) } else { resid / dof };
    let c = coef[2];
    let c_sem = (inv[2][2] * scale).sqrt();
    let viscosity = -mass_density * accel / (2.0 * c);
    if !(viscosity.is_finite() && viscosity > 0.0) {
        return Err(format!(
            "the profile is not the parabola of a driven channel (curvature {c:.3e} has the wrong sign or is zero): \
             are the walls no-slip, and has the flow reached its steady state?"
        ));
    }
    Ok(PoiseuilleFit {
        viscosity,
        sem: viscosity * c_sem / c.abs(),
        coefficients: coef,
        mid,
        y_range: [mid - half, mid + half],
        points: pts.len(),
        chi2_dof: if weighted { resid / dof } else { f64::NAN },
    })
}

fn invert3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if !(det.is_finite() && det.abs() > 1e-300) {
        return None;
    }
    let c = |r0: usize, c0: usize, r1: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let adj = [
        [c(1, 1, 2, 2), -c(0, 1, 2, 2), c(0, 1, 1, 2)],
        [-c(1, 0, 2, 2), c(0, 0, 2, 2), -c(0, 0, 1, 2)],
        [c(1, 0, 2, 1), -c(0, 0, 2, 1), c(0, 0, 1, 1)],
    ];
    Some(adj.map(|row| row.map(|v| v / det)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plane Poiseuille profile between walls at 0 and h for viscosity eta.
    fn poiseuille(eta: f64, rho: f64, g: f64, h: f64, y: f64) -> f64 {
        rho * g / (2.0 * eta) * y * (h - y)
    }

    #[test]
    fn an_exact_parabola_gives_its_viscosity() {
        let (eta, rho, g, h) = (2.3, 0.8, 0.02, 20.0);
        let y: Vec<f64> = (0..20).map(|i| 0.5 + i as f64).collect();
        let u: Vec<(f64, f64)> = y.iter().map(|&y| (poiseuille(eta, rho, g, h, y), 0.01)).collect();
        let fit = fit_poiseuille(&y, &u, g, rho, [0.0, h], 0.7).unwrap();
        assert!((fit.viscosity - eta).abs() < 1e-9, "{fit:?}");
        assert_eq!(fit.points, 14);
        assert!(fit.chi2_dof < 1e-12);
        // Exact points: the error comes from the stated errors alone, small against eta.
        assert!(fit.sem > 0.0 && fit.sem < 0.1 * eta, "{fit:?}");
        // Without errors the scatter (none) sets the uncertainty.
        let bare: Vec<(f64, f64)> = u.iter().map(|&(m, _)| (m, f64::NAN)).collect();
        let fit = fit_poiseuille(&y, &bare, g, rho, [0.0, h], 0.7).unwrap();
        assert!((fit.viscosity - eta).abs() < 1e-9 && fit.sem < 1e-9);
    }

    #[test]
    fn noisy_profiles_give_honest_errors() {
        let (eta, rho, g, h) = (1.5, 0.8, 0.05, 16.0);
        let y: Vec<f64> = (0..32).map(|i| 0.25 + 0.5 * i as f64).collect();
        let mut rng = crate::rng::Sequence::new(7, crate::rng::Stream::GasPlacement, 0, 0);
        let mut pulls = Vec::new();
        for _ in 0..200 {
            let u: Vec<(f64, f64)> =
                y.iter().map(|&y| (poiseuille(eta, rho, g, h, y) + 0.02 * rng.normal(), 0.02)).collect();
            let fit = fit_poiseuille(&y, &u, g, rho, [0.0, h], 0.8).unwrap();
            pulls.push((fit.viscosity - eta) / fit.sem);
        }
        let rms = (pulls.iter().map(|p| p * p).sum::<f64>() / pulls.len() as f64).sqrt();
        assert!((0.75..1.3).contains(&rms), "pulls rms {rms}: the stated errors are not honest");
    }

    #[test]
    fn a_flat_or_undriven_profile_is_refused() {
        let y: Vec<f64> = (0..10).map(|i| i as f64).collect();
        let flat: Vec<(f64, f64)> = y.iter().map(|_| (1.0, 0.01)).collect();
        assert!(fit_poiseuille(&y, &flat, 0.05, 0.8, [0.0, 10.0], 0.8).unwrap_err().contains("parabola"));
        assert!(fit_poiseuille(&y, &flat, 0.0, 0.8, [0.0, 10.0], 0.8).unwrap_err().contains("not driven"));
        assert!(fit_poiseuille(&y[..3], &flat[..3], 0.05, 0.8, [0.0, 10.0], 0.8).unwrap_err().contains("only"));
    }
}
