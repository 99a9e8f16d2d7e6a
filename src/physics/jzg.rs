//! The Johnson-Zollweg-Gubbins (1993) equation of state of the full (untruncated) LJ fluid:
//! the modified Benedict-Webb-Rubin form of Mol. Phys. 78, 591 (1993), eqs. (5)-(9) with
//! the a_i, b_i, c_i, d_i of Tables 5 and 6, the G_i integrals of Table 6 and the 32 fitted
//! x_i of Table 10 with gamma = 3. Pressure, internal energy and residual Helmholtz energy
//! per atom in reduced units. The fit covers 0.7 <= T <= 6 and densities up to about 1.2
//! (good to 1-2% there); outside it the formula still evaluates but means little.
//!
//! The x_i are those of the paper's Table 10 as carried (identically, to every digit) by
//! independent codes (e.g. a C Lennard-Jones MC code's `lj_eos3d` and teqp's
//! `LJ126Johnson1993`). Pure arithmetic: nothing here knows about simulations.

/// The nonlinear parameter gamma.
pub const GAMMA: f64 = 3.0;

/// Temperatures the fit was made over.
pub const T_RANGE: std::ops::RangeInclusive<f64> = 0.7..=6.0;
/// Densities the fit was made over.
pub const RHO_RANGE: std::ops::RangeInclusive<f64> = 0.0..=1.2;

/// x_1 .. x_32 (Table 10).
#[allow(clippy::excessive_precision)]
pub const X: [f64; 32] = [
    0.8623085097507421,
    2.976218765822098,
    -8.402230115796038,
    0.1054136629203555,
    -0.8564583828174598,
    1.582759470107601,
    0.7639421948305453,
    1.753173414312048,
    2.798291772190376e3,
    -4.8394220260857657e-2,
    0.9963265197721935,
    -3.698000291272493e1,
    2.084012299434647e1,
    8.305402124717285e1,
    -9.574799715203068e2,
    -1.477746229234994e2,
    6.398607852471505e1,
    1.603993673294834e1,
    6.805916615864377e1,
    -2.791293578795945e3,
    -6.245128304568454,
    -8.116836104958410e3,
    1.488735559561229e1,
    -1.059346754655084e4,
    -1.131607632802822e2,
    -8.867771540418822e3,
    -3.986982844450543e1,
    -4.689270299917261e3,
    2.593535277438717e2,
    -2.694523589434903e3,
    -7.218487631550215e2,
    1.721802063863269e2,
];

/// x_i with the paper's 1-based index.
fn x(i: usize) -> f64 {
    X[i - 1]
}

/// a_1 .. a_8 (Table 5).
fn a(t: f64) -> [f64; 8] {
    let (t2, st) = (t * t, t.sqrt());
    [
        x(1) * t + x(2) * st + x(3) + x(4) / t + x(5) / t2,
        x(6) * t + x(7) + x(8) / t + x(9) / t2,
        x(10) * t + x(11) + x(12) / t,
        x(13),
        x(14) / t + x(15) / t2,
        x(16) / t,
        x(17) / t + x(18) / t2,
        x(19) / t2,
    ]
}

/// b_1 .. b_6 (Table 5).
fn b(t: f64) -> [f64; 6] {
    let (t2, t3, t4) = (t * t, t * t * t, t * t * t * t);
    [
        x(20) / t2 + x(21) / t3,
        x(22) / t2 + x(23) / t4,
        x(24) / t2 + x(25) / t3,
        x(26) / t2 + x(27) / t4,
        x(28) / t2 + x(29) / t3,
        x(30) / t2 + x(31) / t3 + x(32) / t4,
    ]
}

/// c_i = a_i - T da_i/dT (Table 6), for the energy.
fn c(t: f64) -> [f64; 8] {
    let (t2, st) = (t * t, t.sqrt());
    [
        x(2) * st / 2.0 + x(3) + 2.0 * x(4) / t + 3.0 * x(5) / t2,
        x(7) + 2.0 * x(8) / t + 3.0 * x(9) / t2,
        x(11) + 2.0 * x(12) / t,
        x(13),
        2.0 * x(14) / t + 3.0 * x(15) / t2,
        2.0 * x(16) / t,
        2.0 * x(17) / t + 3.0 * x(18) / t2,
        3.0 * x(19) / t2,
    ]
}

/// d_i = b_i - T db_i/dT (Table 6).
fn d(t: f64) -> [f64; 6] {
    let (t2, t3, t4) = (t * t, t * t * t, t * t * t * t);
    [
        3.0 * x(20) / t2 + 4.0 * x(21) / t3,
        3.0 * x(22) / t2 + 5.0 * x(23) / t4,
        3.0 * x(24) / t2 + 4.0 * x(25) / t3,
        3.0 * x(26) / t2 + 5.0 * x(27) / t4,
        3.0 * x(28) / t2 + 4.0 * x(29) / t3,
        3.0 * x(30) / t2 + 4.0 * x(31) / t3 + 5.0 * x(32) / t4,
    ]
}

/// G_1 .. G_6 (Table 6): G_1 = (1 - F) / (2 gamma), G_k = -(F rho^(2(k-1)) - 2 (k-1) G_(k-1)) / (2 gamma),
/// F = exp(-gamma rho^2).
fn g(rho: f64) -> [f64; 6] {
    let f = (-GAMMA * rho * rho).exp();
    let mut out = [0.0; 6];
    out[0] = (1.0 - f) / (2.0 * GAMMA);
    let mut rho_pow = 1.0;
    for k in 1..6 {
        rho_pow *= rho * rho;
        out[k] = -(f * rho_pow - 2.0 * k as f64 * out[k - 1]) / (2.0 * GAMMA);
    }
    out
}

/// Pressure P(rho, T) (eq. 7): rho T + sum a_i rho^(i+1) + F sum b_i rho^(2i+1).
pub fn pressure(rho: f64, t: f64) -> f64 {
    let f = (-GAMMA * rho * rho).exp();
    let pa: f64 = a(t).iter().enumerate().map(|(i, ai)| ai * rho.powi(i as i32 + 2)).sum();
    let pb: f64 = b(t).iter().enumerate().map(|(i, bi)| bi * rho.powi(2 * i as i32 + 3)).sum();
    rho * t + pa + f * pb
}

/// Configurational (residual) internal energy per atom U/N (eq. 9): sum c_i rho^i / i + sum d_i G_i.
pub fn energy_per_atom(rho: f64, t: f64) -> f64 {
    let uc: f64 = c(t).iter().enumerate().map(|(i, ci)| ci * rho.powi(i as i32 + 1) / (i + 1) as f64).sum();
    let ud: f64 = d(t).iter().zip(g(rho)).map(|(di, gi)| di * gi).sum();
    uc + ud
}

/// Residual Helmholtz energy per atom A_res/N (eq. 5): sum a_i rho^i / i + sum b_i G_i.
pub fn helmholtz_residual_per_atom(rho: f64, t: f64) -> f64 {
    let fa: f64 = a(t).iter().enumerate().map(|(i, ai)| ai * rho.powi(i as i32 + 1) / (i + 1) as f64).sum();
    let fb: f64 = b(t).iter().zip(g(rho)).map(|(bi, gi)| bi * gi).sum();
    fa + fb
}

/// Whether (rho, T) lies inside the range the fit was made over.
pub fn in_fit_range(rho: f64, t: f64) -> bool {
    T_RANGE.contains(&t) && RHO_RANGE.contains(&rho)
}

/// The adiabatic speed of sound c(rho, T) of the LJ fluid from this fit, in sigma/tau for atoms
/// of `mass` (in argon masses; c scales as 1/sqrt(mass)):
///
/// c^2 = [ (dP/drho)_T + T (dP/dT)_rho^2 / (rho^2 c_v) ] / mass,   c_v = 3/2 + d(U_res/N)/dT,
///
/// the derivatives taken by five-point central differences of [`pressure`] and
/// [`energy_per_atom`] (step 1e-3 in rho and T: truncation ~1e-11 and round-off ~1e-10
/// relative, so states a round-off apart get sound speeds a round-off apart). As rho -> 0 it
/// tends to the ideal monatomic gas, sqrt(5 T / (3 mass)).
///
/// Outside the fit (`RHO_RANGE`, `T_RANGE`) the state is clamped into it (rho to [0, 1.2], T to
/// [0.7, 6]) for the fluid's departure from the ideal gas only: c^2 mass = 5 T / 3 +
/// [bracket at the clamped state - 5 T_clamped / 3]. Inside the fit that is the formula above;
/// outside it the ideal-gas part stays exact at every temperature (so the dilute limit holds
/// everywhere) while the rest is the fit's value at its edge, a guess good only near the fit.
/// NaN for a NaN input, a mass that is not positive, where the fit's state is not a stable
/// fluid (c_v <= 0 or (dP/drho)_T <= 0: inside the vapour-liquid spinodal, or at solid-like
/// densities the fluid fit does not cover, such as rho >= 1 at T = 0.7), or where c^2 <= 0
/// (a cold dilute state).
///
/// Accuracy: within 1 % of Thol et al. (2016) for T >= 1 at liquid densities, within 4 % at
/// T = 0.8, but about 10 % high near the triple point (T ~ 0.72, rho 0.8-0.9), where the fit's
/// heat capacity is too low (c_v 1.99 against Thol's 2.63 at rho 0.8442).
pub fn sound_speed(rho: f64, t: f64, mass: f64) -> f64 {
    if rho.is_nan() || t.is_nan() || mass.is_nan() || mass <= 0.0 {
        return f64::NAN;
    }
    let r = rho.clamp(*RHO_RANGE.start(), *RHO_RANGE.end());
    let tc = t.clamp(*T_RANGE.start(), *T_RANGE.end());
    // P and U_res are polynomials times exp(-3 rho^2) in rho, so the rho stencil may dip below 0.
    let dp_drho = derivative(|x| pressure(x, tc), r);
    let dp_dt = derivative(|x| pressure(r, x), tc);
    let cv = 1.5 + derivative(|x| energy_per_atom(r, x), tc);
    // (dP/dT)^2 / rho^2 -> 1 as rho -> 0; at rho = 0 exactly take that limit.
    let thermal = if r > 0.0 { tc * (dp_dt / r).powi(2) / cv } else { tc / 1.5 };
    if !(cv > 0.0 && dp_drho > 0.0) {
        return f64::NAN;
    }
    let c2 = (5.0 * t / 3.0 + (dp_drho + thermal - 5.0 * tc / 3.0)) / mass;
    if c2 > 0.0 { c2.sqrt() } else { f64::NAN }
}

/// df/dx at `x` by the five-point central difference with step 1e-3 (error O(h^4)).
fn derivative(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-3;
    (f(x - 2.0 * h) - 8.0 * f(x - h) + 8.0 * f(x + h) - f(x + 2.0 * h)) / (12.0 * h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// States a round-off apart get sound speeds a round-off apart (the finite differences'
    /// own round-off stays near 1e-10), so two backends' fields agree in the Mach number too.
    #[test]
    fn sound_speed_is_smooth_at_round_off() {
        for (rho, t) in [(0.8, 0.62), (0.75, 0.7), (0.8, 1.0), (0.3, 2.0), (0.05, 1.5)] {
            let c = sound_speed(rho, t, 1.0);
            for e in [1e-13, 1e-12, 1e-11] {
                for (r, tt) in [(rho * (1.0 + e), t), (rho, t * (1.0 + e))] {
                    let d = (sound_speed(r, tt, 1.0) / c - 1.0).abs();
                    assert!(d < 2e-9, "rho {rho}, T {t}, relative step {e}: c changes by {d:.1e}");
                }
            }
        }
    }

    /// Every row of the validation table, made from this fit, to its printed 5 decimals.
    #[test]
    fn reproduces_the_validation_table() {
        let path = crate::io::validation_dir().join("jzg1993_eos.csv");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut rows = 0;
        let (mut worst_p, mut worst_u) = (0.0f64, 0.0f64);
        for line in text.lines().filter(|l| !l.starts_with('#') && !l.starts_with("T,") && !l.trim().is_empty()) {
            let v: Vec<f64> = line.split(',').map(|s| s.trim().parse().unwrap()).collect();
            let (t, rho, p, u) = (v[0], v[1], v[2], v[3]);
            let (dp, du) = ((pressure(rho, t) - p).abs(), (energy_per_atom(rho, t) - u).abs());
            worst_p = worst_p.max(dp);
            worst_u = worst_u.max(du);
            // The table prints 5 decimals: half a unit of the last digit, plus round-off.
            assert!(dp <= 5.0e-6 + 1e-12, "T={t} rho={rho}: P {} vs table {p}", pressure(rho, t));
            assert!(du <= 5.0e-6 + 1e-12, "T={t} rho={rho}: U/N {} vs table {u}", energy_per_atom(rho, t));
            rows += 1;
        }
        assert_eq!(rows, 27);
        println!("worst |dP| = {worst_p:.2e}, worst |dU| = {worst_u:.2e}");
    }

    /// Thermodynamic consistency: P = rho T + rho^2 dA/drho and U = d(A/T)/d(1/T), by central
    /// differences of the Helmholtz energy (independent of the P and U formulas' coefficients).
    #[test]
    fn pressure_and_energy_are_derivatives_of_the_helmholtz_energy() {
        for (rho, t) in [(0.3, 1.5), (0.7, 2.0), (0.9, 3.0), (1.1, 4.5)] {
            let h = 1e-5;
            let da = (helmholtz_residual_per_atom(rho + h, t) - helmholtz_residual_per_atom(rho - h, t)) / (2.0 * h);
            let p = rho * t + rho * rho * da;
            assert!((p - pressure(rho, t)).abs() < 1e-7 * pressure(rho, t).abs().max(1.0), "P at {rho}, {t}");
            let beta = 1.0 / t;
            let a_over_t = |b: f64| helmholtz_residual_per_atom(rho, 1.0 / b) * b;
            let u = (a_over_t(beta + h) - a_over_t(beta - h)) / (2.0 * h);
            assert!((u - energy_per_atom(rho, t)).abs() < 1e-6, "U at {rho}, {t}: {u} vs {}", energy_per_atom(rho, t));
        }
    }

    /// At low density P = rho T (1 + B2 rho): the fit's B2 = a_1 / T must be the LJ second
    /// virial coefficient, -2 pi int (exp(-u/T) - 1) r^2 dr, integrated here numerically
    /// (it is within 0.1% at T = 1.5 and 2, 0.5% at T = 3). U/N -> 0 too.
    #[test]
    fn low_density_limit_is_the_lj_second_virial_coefficient() {
        for t in [1.5, 2.0, 3.0] {
            let n = 400_000;
            let h = 40.0 / n as f64;
            let integrand = |r: f64| {
                let u = 4.0 * (r.powi(-12) - r.powi(-6));
                ((-u / t).exp() - 1.0) * r * r
            };
            let sum: f64 = (1..n).map(|i| integrand(i as f64 * h)).sum();
            let b2_lj = -2.0 * std::f64::consts::PI * sum * h;
            let rho = 1e-6;
            let b2_fit = (pressure(rho, t) / (rho * t) - 1.0) / rho;
            assert!((b2_fit - b2_lj).abs() < 3e-3, "T = {t}: B2 fit {b2_fit}, LJ {b2_lj}");
            assert!(energy_per_atom(rho, t).abs() < 1e-4);
        }
    }

    /// The dilute limit is the ideal monatomic gas, c = sqrt(5 T / (3 m)), to the fit's
    /// second-virial correction, of order |B2| rho with |B2| < 10 sigma^3 here: a few 1e-6 at
    /// rho = 1e-6 (teqp's JZG gives 1.290991 against 1.2909944 at T = 1), about 1e-9 at
    /// rho = 1e-10; also outside the fit's temperatures, and with c scaling as 1/sqrt(m).
    #[test]
    fn sound_speed_tends_to_the_ideal_gas() {
        for t in [0.3f64, 0.7, 1.0, 2.0, 5.0, 10.0] {
            for m in [1.0f64, 2.1] {
                let ideal = (5.0 * t / (3.0 * m)).sqrt();
                let c = sound_speed(1e-6, t, m);
                assert!((c / ideal - 1.0).abs() < 2e-5, "T = {t}, m = {m}: {c} vs {ideal}");
                let c = sound_speed(1e-10, t, m);
                assert!((c / ideal - 1.0).abs() < 1e-8, "T = {t}, m = {m}: {c} vs {ideal}");
            }
        }
        assert!((sound_speed(1e-6, 1.0, 1.0) - 1.290991).abs() < 1e-6);
        assert!((sound_speed(0.0, 1.5, 1.0) / (2.5f64).sqrt() - 1.0).abs() < 1e-6);
        assert!(sound_speed(f64::NAN, 1.0, 1.0).is_nan());
        assert!(sound_speed(0.5, f64::NAN, 1.0).is_nan());
        assert!(sound_speed(0.5, 1.0, 0.0).is_nan());
        // Inside the vapour-liquid spinodal at T = 0.8 the fit's isotherm has dP/drho < 0; at
        // T = 0.7 and rho = 1 (a solid in truth) the fit has c_v < 0 (teqp's JZG: -2.72).
        assert!(sound_speed(0.4, 0.8, 1.0).is_nan());
        assert!(sound_speed(1.0, 0.7, 1.0).is_nan());
        assert!(sound_speed(1.5, 0.0, 1.0).is_nan());
    }

    /// The dense liquid against the Thol et al. equation of state (J. Phys. Chem. Ref. Data 45,
    /// 023101 (2016), a later and independent fit to newer simulation data, including speeds of
    /// sound), evaluated with teqp 0.23.2 (`LJ126_TholJPCRD2016`; w^2 / T = 1 + 2 A01 + A02 +
    /// (1 + A01 - A11)^2 / (3/2 - A20)): 7.0781 at rho = 0.8, T = 2; 6.4181 at T = 1.5;
    /// 5.5491 at T = 1. Each fit is good to 1-2% there, so they must agree to 2%.
    /// The same formula over teqp's own JZG (`LJ126_Johnson1993`) gives 7.078187, 6.452774 and
    /// 5.503929: that checks the derivatives here to 1e-5.
    #[test]
    fn sound_speed_of_the_dense_liquid_matches_thol_2016() {
        for (t, thol, jzg_teqp) in [(2.0, 7.0781, 7.078187), (1.5, 6.4181, 6.452774), (1.0, 5.5491, 5.503929)] {
            let c = sound_speed(0.8, t, 1.0);
            assert!((c / thol - 1.0).abs() < 0.02, "T = {t}: {c} vs Thol {thol}");
            assert!((c / jzg_teqp - 1.0).abs() < 1e-5, "T = {t}: {c} vs teqp's JZG {jzg_teqp}");
            assert!((sound_speed(0.8, t, 4.0) - c / 2.0).abs() < 1e-12);
        }
    }
}
