//! What a transport measurement asks for and the checks it must pass before it starts:
//! the quantity ([`Quantity`]), the production length and lags ([`Request`], with the
//! sampling plan and the fewest steps it needs), and [`check`], whose refusals
//! ([`Refusal`]) `measure` words with its flags and the app with its fields. Shared by both so
//! they refuse the same things in the same order.

use super::spec::TransportSpec;
use super::{plan, viscosity};
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::sim_box::SimBox;
use crate::units;

/// What is measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Quantity {
    /// Self-diffusion coefficient (Einstein, from the mean-squared displacement).
    #[default]
    Diffusion,
    /// Shear viscosity (Green-Kubo, from the off-diagonal pressure tensor).
    Viscosity,
}

impl Quantity {
    /// The lower-case name (`measure`'s argument and JSON `quantity`).
    pub fn name(self) -> &'static str {
        match self {
            Quantity::Diffusion => "diffusion",
            Quantity::Viscosity => "viscosity",
        }
    }

    /// The SI unit of the result.
    pub fn si_units(self) -> &'static str {
        match self {
            Quantity::Diffusion => "m^2/s",
            Quantity::Viscosity => "mPa s",
        }
    }

    /// A reduced value in SI ([`Quantity::si_units`]).
    pub fn to_si(self, reduced: f64) -> f64 {
        match self {
            Quantity::Diffusion => units::reduced_diffusion_to_m2_per_s(reduced),
            Quantity::Viscosity => units::reduced_viscosity_to_mpa_s(reduced),
        }
    }
}

/// What a measurement asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    pub quantity: Quantity,
    /// Production steps sampled.
    pub steps: u64,
    /// Diffusion: the longest MSD lag (tau); the VACF reaches half of it.
    pub lag: f64,
    /// Viscosity: where the Green-Kubo integral is read (tau).
    pub t_cut: f64,
    /// Production under a weak CSVR with this coupling time instead of the system's own
    /// thermostat (`measure --hold`).
    pub hold: Option<f64>,
    /// Diffusion: a measured shear viscosity (reduced) for the Yeh-Hummer correction.
    pub viscosity: Option<f64>,
}

impl Request {
    /// The sampling this request asks of the backend at time step `dt`.
    pub fn spec(&self, dt: f64) -> TransportSpec {
        match self.quantity {
            Quantity::Diffusion => plan::diffusion(dt, self.lag),
            Quantity::Viscosity => plan::viscosity(dt),
        }
    }

    /// The fewest production steps that give a standard error at time step `dt`.
    pub fn min_steps(&self, dt: f64) -> u64 {
        match self.quantity {
            Quantity::Diffusion => plan::diffusion_min_steps(dt, self.lag),
            Quantity::Viscosity => viscosity::min_steps(self.t_cut, dt),
        }
    }
}

/// Why a measurement cannot run. Each front end words it: `measure` names its flags, the app
/// its fields.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// Fewer than two atoms (the count).
    TooFewAtoms(usize),
    /// Zero production steps.
    NoSteps,
    /// A thermostat that changes the dynamics (Langevin, the Monte Carlo ones).
    Thermostat(Thermostat),
    /// A coupling time for `hold` that is not a positive number.
    BadHold(f64),
    /// A Yeh-Hummer viscosity that is not a positive number.
    BadViscosity(f64),
    /// The sampling plan breaks the backends' contract (why).
    BadSampling(String),
    /// The longest lag is shorter than 10 time steps (`min`, tau).
    LagTooShort { min: f64 },
    /// The Green-Kubo cut is not a positive time.
    BadTCut,
    /// Fewer production steps than a standard error needs (`needed`).
    TooShort { needed: u64 },
    /// Viscosity asked in a box with walls.
    Walls,
}

/// Checks `req` against a system of `atoms` atoms with `params` in `sim_box`, in the order
/// `measure` reports them; Ok gives the sampling to ask of the backend.
pub fn check(req: &Request, params: &SimParams, atoms: usize, sim_box: &SimBox) -> Result<TransportSpec, Refusal> {
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if atoms < 2 {
        return Err(Refusal::TooFewAtoms(atoms));
    }
    if req.steps == 0 {
        return Err(Refusal::NoSteps);
    }
    let t = params.thermostat;
    if (t.is_monte_carlo() || matches!(t, Thermostat::Langevin { .. })) && req.hold.is_none() {
        return Err(Refusal::Thermostat(t));
    }
    if let Some(h) = req.hold.filter(|&h| !positive(h)) {
        return Err(Refusal::BadHold(h));
    }
    if let Some(v) = req.viscosity.filter(|&v| !positive(v)) {
        return Err(Refusal::BadViscosity(v));
    }
    let spec = req.spec(params.dt);
    spec.validate(params.dt).map_err(Refusal::BadSampling)?;
    match req.quantity {
        Quantity::Diffusion if !(req.lag.is_finite() && req.lag >= 10.0 * params.dt) => {
            return Err(Refusal::LagTooShort { min: 10.0 * params.dt });
        }
        Quantity::Viscosity if !positive(req.t_cut) => return Err(Refusal::BadTCut),
        _ => {}
    }
    let needed = req.min_steps(params.dt);
    if req.steps < needed {
        return Err(Refusal::TooShort { needed });
    }
    if req.quantity == Quantity::Viscosity && !sim_box.fully_periodic() {
        return Err(Refusal::Walls);
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(quantity: Quantity, steps: u64) -> Request {
        Request { quantity, steps, lag: 2.0, t_cut: 0.5, hold: None, viscosity: None }
    }

    #[test]
    fn check_refuses_in_measures_order_and_plans_the_sampling() {
        let p = SimParams::default();
        let periodic = SimBox::new([10.0; 3], [true; 3]);
        let walls = SimBox::new([10.0; 3], [true, false, true]);
        let d = req(Quantity::Diffusion, 100_000);
        assert_eq!(check(&d, &p, 1000, &periodic), Ok(plan::diffusion(p.dt, 2.0)));
        assert_eq!(check(&d, &p, 1, &periodic), Err(Refusal::TooFewAtoms(1)));
        assert_eq!(check(&req(Quantity::Diffusion, 0), &p, 1000, &periodic), Err(Refusal::NoSteps));
        let langevin = SimParams { thermostat: Thermostat::Langevin { damp: 1.0 }, ..p.clone() };
        assert_eq!(check(&d, &langevin, 1000, &periodic), Err(Refusal::Thermostat(langevin.thermostat)));
        // `measure --hold` replaces the thermostat, so it may be anything then.
        assert!(check(&Request { hold: Some(10.0), ..d }, &langevin, 1000, &periodic).is_ok());
        assert_eq!(check(&Request { hold: Some(-1.0), ..d }, &p, 1000, &periodic), Err(Refusal::BadHold(-1.0)));
        assert_eq!(check(&Request { lag: 0.01, ..d }, &p, 1000, &periodic), Err(Refusal::LagTooShort { min: 0.05 }));
        let needed = plan::diffusion_min_steps(p.dt, 2.0);
        assert_eq!(
            check(&req(Quantity::Diffusion, needed - 1), &p, 1000, &periodic),
            Err(Refusal::TooShort { needed })
        );
        // Diffusion is measured between walls too; viscosity is not, after the other checks.
        assert!(check(&d, &p, 1000, &walls).is_ok());
        let v = req(Quantity::Viscosity, 100_000);
        assert_eq!(check(&v, &p, 1000, &periodic), Ok(plan::viscosity(p.dt)));
        assert_eq!(check(&v, &p, 1000, &walls), Err(Refusal::Walls));
        assert_eq!(check(&req(Quantity::Viscosity, 10), &p, 1000, &walls), Err(Refusal::TooShort { needed: 1500 }));
        assert_eq!(check(&Request { t_cut: 0.0, ..v }, &p, 1000, &periodic), Err(Refusal::BadTCut));
        assert_eq!(v.min_steps(p.dt), viscosity::min_steps(0.5, p.dt));
        assert_eq!(Quantity::Viscosity.to_si(1.0), units::reduced_viscosity_to_mpa_s(1.0));
    }
}
