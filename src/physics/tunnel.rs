//! The wind tunnel's inflow zone: its settings ([`Tunnel`]), the per-atom arithmetic both
//! backends use (mirrored in `kernels/tunnel.cu`), the bookkeeping of what the zone gives the
//! atoms ([`ZoneSums`]) and the speed of sound its Mach number is measured against.
//!
//! Along a periodic x the zone is the slab lo_x <= x < lo_x + `zone` (wrapped positions). At
//! the end of every step (after the second half kick and any thermostat) each atom inside it
//! gets a fresh Maxwell-Boltzmann velocity at the target temperature T around the stream
//! velocity (U, 0, 0):
//!
//! v = (U, 0, 0) + sqrt(T / m) (g1, g2, g3),
//!
//! so the wake that leaves at the outlet (x = hi_x) is erased before the flow re-enters the
//! test section, and the heat the flow makes is removed there. The rest of the fluid is left
//! alone (optionally under a thermostat relative to the flow).
//!
//! Noise: `rng::normal4(seed, Stream::TunnelInflow, id, step)`, `id` the atom's canonical
//! index and `step` the step that just ended; components 0, 1 and 2 drive x, y and z. A
//! stream of its own, so the numbers never repeat the Langevin thermostat's or the surface
//! friction's.
//!
//! The start spin ([`StartSpin`], optional): for the first `time` tau of a run the obstacles'
//! surfaces move tangentially at `spin` times the stream speed, counter-clockwise, through the
//! surface friction (`physics::friction`, [`crate::physics::friction::Spin`]), which breaks
//! the wake's symmetry at once instead of waiting for thermal noise to do it; afterwards the
//! friction is exactly the plain one.

use serde::{Deserialize, Serialize};

use crate::physics::jzg;
use crate::physics::sim_box::SimBox;
use crate::rng::{Stream, normal4};

/// Speeds above this Mach number are refused: the tunnel is meant for subsonic flow.
pub const MAX_MACH: f64 = 1.0;
/// Above this Mach number a warning says that compressibility matters.
pub const WARN_MACH: f64 = 0.3;

/// Largest |spin| of the start spin accepted (surface speed over stream speed).
pub const MAX_SPIN: f64 = 3.0;

/// The tunnel's settings (reduced units): the stream speed U along +x (sigma/tau), the
/// width of the inflow zone along x (sigma) and the optional start spin of the obstacles.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tunnel {
    pub speed: f64,
    pub zone: f64,
    /// Absent from saved scenes when off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_spin: Option<StartSpin>,
}

impl Default for Tunnel {
    fn default() -> Self {
        Tunnel { speed: 0.5, zone: 4.0, start_spin: None }
    }
}

/// A short spin of the obstacles at the start of a run, which starts a wake's shedding
/// instead of waiting for noise: for the steps with step * dt < `time` (tau, counted from the
/// scene's step 0) the obstacle surfaces move tangentially, counter-clockwise, at `spin`
/// times the stream speed, through the surface friction (which must be on).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StartSpin {
    pub spin: f64,
    pub time: f64,
}

impl Default for StartSpin {
    fn default() -> Self {
        StartSpin { spin: 1.0, time: 35.0 }
    }
}

impl StartSpin {
    /// The first step at which the spin is over with time step `dt`: the smallest s with
    /// s * dt >= time in f64 (so a step s spins exactly when s < this).
    pub fn end_step(&self, dt: f64) -> u64 {
        if !(self.time > 0.0 && dt > 0.0) {
            return 0;
        }
        let mut s = (self.time / dt).ceil().min(u64::MAX as f64 / 2.0) as u64;
        while s > 0 && ((s - 1) as f64) * dt >= self.time {
            s -= 1;
        }
        while (s as f64) * dt < self.time {
            s += 1;
        }
        s
    }
}

impl Tunnel {
    /// The zone along x in `sim_box`: `[lo, hi)` with hi = lo_x + zone.
    pub fn bounds(&self, sim_box: &SimBox) -> (f64, f64) {
        (sim_box.lo[0], sim_box.lo[0] + self.zone)
    }
}

/// Whether a wrapped x coordinate lies in the zone `[lo, hi)`.
#[inline]
pub fn in_zone(x: f64, lo: f64, hi: f64) -> bool {
    x >= lo && x < hi
}

/// The new velocity of atom `id` (mass `mass`) in the zone after step `step`: Maxwell-Boltzmann
/// at temperature `t` around (`speed`, 0, 0).
#[inline]
pub fn inflow_velocity(seed: u64, step: u64, id: u32, mass: f64, t: f64, speed: f64) -> [f64; 3] {
    let g = normal4(seed, Stream::TunnelInflow, id, step);
    let s = (t / mass).sqrt();
    [speed + s * g[0], s * g[1], s * g[2]]
}

/// What the zone gave the atoms over some steps: momentum, sum of m (v_new - v_old), and
/// kinetic energy, sum of m (|v_new|^2 - |v_old|^2) / 2 (negative: heat removed).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ZoneSums {
    pub momentum: [f64; 3],
    pub heat: f64,
}

impl ZoneSums {
    /// One atom of mass `m` going from `old` to `new`.
    #[inline]
    pub fn of_atom(m: f64, old: [f64; 3], new: [f64; 3]) -> ZoneSums {
        let sq = |v: [f64; 3]| v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        ZoneSums { momentum: std::array::from_fn(|k| m * (new[k] - old[k])), heat: 0.5 * m * (sq(new) - sq(old)) }
    }

    pub fn add(&mut self, o: &ZoneSums) {
        for k in 0..3 {
            self.momentum[k] += o.momentum[k];
        }
        self.heat += o.heat;
    }
}

/// The state a Mach number is measured against: the system's mean number density (atoms per
/// sigma^3 of the box) and mean atomic mass (argon masses).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanFluid {
    pub density: f64,
    pub mass: f64,
}

impl MeanFluid {
    /// `n_atoms` atoms of total mass `total_mass` in `sim_box`.
    pub fn new(sim_box: &SimBox, n_atoms: usize, total_mass: f64) -> MeanFluid {
        let n = n_atoms as f64;
        MeanFluid { density: n / sim_box.volume(), mass: if n_atoms > 0 { total_mass / n } else { 1.0 } }
    }
}

/// The speed of sound (sigma/tau) of `fluid` at temperature `t`, and whether it is the
/// equation of state's: the adiabatic sound speed of the full LJ fluid from the JZG fit
/// (`jzg::sound_speed`, as the flow fields' Mach layer uses). Where the fit gives none (inside
/// the vapour-liquid spinodal, at solid-like densities, a cold dilute state), the ideal
/// monatomic gas's sqrt(5 T / 3 m) stands in: the mean density of a two-phase system says
/// little about the sound in either phase, and the gas's is the slower one.
pub fn sound_speed(fluid: &MeanFluid, t: f64) -> (f64, bool) {
    let c = jzg::sound_speed(fluid.density, t, fluid.mass);
    if c.is_finite() && c > 0.0 { (c, true) } else { ((5.0 * t / (3.0 * fluid.mass)).sqrt(), false) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_reproducible_and_keyed_by_step_and_atom() {
        let a = inflow_velocity(7, 100, 3, 1.0, 1.0, 0.5);
        assert_eq!(a, inflow_velocity(7, 100, 3, 1.0, 1.0, 0.5));
        // The per-atom key: (seed, TunnelInflow, id, step), components 0-2.
        let g = normal4(7, Stream::TunnelInflow, 3, 100);
        assert_eq!(a, [0.5 + g[0], g[1], g[2]]);
        for other in [
            inflow_velocity(7, 101, 3, 1.0, 1.0, 0.5),
            inflow_velocity(7, 100, 4, 1.0, 1.0, 0.5),
            inflow_velocity(8, 100, 3, 1.0, 1.0, 0.5),
        ] {
            assert_ne!(a, other);
        }
        // Never the Langevin thermostat's or the surface friction's numbers.
        assert_ne!(g, normal4(7, Stream::Langevin, 3, 100));
        assert_ne!(g, normal4(7, Stream::SurfaceFriction, 3, 100));
        // The width scales as sqrt(T / m) around U.
        let b = inflow_velocity(7, 100, 3, 4.0, 2.0, 1.5);
        let s = (2.0f64 / 4.0).sqrt();
        assert_eq!(b, [1.5 + s * g[0], s * g[1], s * g[2]]);
    }

    /// Many atoms in the zone: mean velocity (U, 0, 0) and kinetic temperature T, each
    /// within 4 standard errors.
    #[test]
    fn many_draws_have_the_stream_velocity_and_the_temperature() {
        let (t, u, m) = (1.3, 0.7, 2.0);
        let n = 200_000u32;
        let (mut sum, mut sq) = ([0.0; 3], [0.0; 3]);
        let mut temps = Vec::with_capacity(n as usize);
        for id in 0..n {
            let v = inflow_velocity(11, 5 + id as u64 / 1000, id, m, t, u);
            let mut tk = 0.0;
            for k in 0..3 {
                sum[k] += v[k];
                sq[k] += v[k] * v[k];
                let c = v[k] - if k == 0 { u } else { 0.0 };
                tk += m * c * c / 3.0;
            }
            temps.push(tk);
        }
        let nf = n as f64;
        let sd = (t / m).sqrt();
        for k in 0..3 {
            let mean = sum[k] / nf;
            let want = if k == 0 { u } else { 0.0 };
            let se = sd / nf.sqrt();
            assert!((mean - want).abs() < 4.0 * se, "axis {k}: mean {mean}, want {want} +- {se}");
        }
        let mean_t = temps.iter().sum::<f64>() / nf;
        let var_t = temps.iter().map(|x| (x - mean_t).powi(2)).sum::<f64>() / (nf - 1.0);
        let se_t = (var_t / nf).sqrt();
        assert!((mean_t - t).abs() < 4.0 * se_t, "T {mean_t}, want {t} +- {se_t}");
    }

    #[test]
    fn zone_sums_are_the_momentum_and_energy_given() {
        let s = ZoneSums::of_atom(2.0, [1.0, 0.0, -1.0], [0.5, 1.0, -1.0]);
        assert_eq!(s.momentum, [-1.0, 2.0, 0.0]);
        assert_eq!(s.heat, 0.5 * 2.0 * (2.25 - 2.0));
        let mut t = ZoneSums::default();
        t.add(&s);
        t.add(&s);
        assert_eq!(t.momentum, [-2.0, 4.0, 0.0]);
        assert!(in_zone(0.0, 0.0, 4.0) && in_zone(3.999, 0.0, 4.0) && !in_zone(4.0, 0.0, 4.0));
        assert!(!in_zone(-1e-12, 0.0, 4.0) && !in_zone(f64::NAN, 0.0, 4.0));
    }

    #[test]
    fn sound_speed_comes_from_the_equation_of_state_or_the_ideal_gas() {
        let b = SimBox::new([10.0; 3], [true; 3]);
        let liquid = MeanFluid::new(&b, 800, 800.0);
        let (c, eos) = sound_speed(&liquid, 1.0);
        assert!(eos && c > 3.0, "{c}");
        assert_eq!(c, jzg::sound_speed(0.8, 1.0, 1.0));
        // Inside the spinodal (rho 0.4, T 0.8) the fit has none: the ideal gas stands in.
        let two_phase = MeanFluid::new(&b, 400, 400.0);
        let (c, eos) = sound_speed(&two_phase, 0.8);
        assert!(!eos);
        assert!((c - (5.0 * 0.8 / 3.0f64).sqrt()).abs() < 1e-12);
        // Heavier atoms: slower sound.
        let heavy = MeanFluid::new(&b, 800, 3200.0);
        assert!((sound_speed(&heavy, 1.0).0 - sound_speed(&liquid, 1.0).0 / 2.0).abs() < 1e-9);
    }
}
