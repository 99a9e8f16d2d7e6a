//! Hybrid Monte Carlo over any backend: the Markov chain of [`Thermostat::Hmc`] and
//! [`Thermostat::HmcNpt`].
//!
//! A cycle draws fresh Maxwell-Boltzmann velocities at the target temperature (Philox, per
//! canonical atom index and cycle, so every backend draws the same numbers), integrates an NVE
//! trajectory of L velocity-Verlet steps with the backend's own `advance_md`, and accepts it
//! with min(1, exp(-beta dH)), H the total energy as the backend measures it (Duane, Kennedy,
//! Pendleton & Roweth, Phys. Lett. B 195, 216 (1987); Mehlig, Heermann & Forrest, Phys. Rev.
//! B 45, 679 (1992)). A rejected trajectory restores the copy saved before it: the move is
//! never integrated backwards, which single precision could not do exactly. The step clock
//! counts every trajectory's L steps whether accepted or not.
//!
//! At constant pressure each cycle then tries one volume move: ln V changes by a uniform
//! amount in [-max_dlnv, max_dlnv], every coordinate is scaled about the box origin, and the
//! move is accepted with min(1, exp(-beta [dU + P dV] + (N + 1) dlnV)) (Frenkel & Smit,
//! *Understanding Molecular Simulation*, 2nd ed., section 5.4). U there includes the analytic
//! tail correction of the truncated potential, so the chain samples the full Lennard-Jones
//! fluid at pressure P, as the Johnson-Zollweg-Gubbins equation describes it.
//!
//! Cycles may straddle `advance` calls; a pending cycle is forgotten (its trajectory kept as
//! it is) when the state is edited between calls. Telemetry reports chain states: one record
//! at each cycle end whose steps crossed a multiple of `telemetry_every`.

use super::{Backend, SimError, Snapshot, Telemetry};
use crate::analysis::tail;
use crate::physics::params::{SimParams, Thermostat};
use crate::rng::{Stream, normal4, uniform4};

/// Default steps per trajectory.
pub const DEFAULT_TRAJECTORY: u32 = 20;
/// Default largest ln V step of a volume move.
pub const DEFAULT_MAX_DLNV: f64 = 0.02;

/// Acceptance counts of the chain since the backend was made (they survive snapshots).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct McStats {
    pub trials: u64,
    pub accepted: u64,
    pub volume_trials: u64,
    pub volume_accepted: u64,
}

impl McStats {
    /// Fraction of trajectories accepted (None before the first).
    pub fn acceptance(&self) -> Option<f64> {
        (self.trials > 0).then(|| self.accepted as f64 / self.trials as f64)
    }

    /// Fraction of volume moves accepted (None before the first).
    pub fn volume_acceptance(&self) -> Option<f64> {
        (self.volume_trials > 0).then(|| self.volume_accepted as f64 / self.volume_trials as f64)
    }

    /// "Accepted 84.0% of 2100 trajectories; 45.1% of 2100 volume moves".
    pub fn describe(&self) -> String {
        let Some(a) = self.acceptance() else { return "no trajectory finished yet".into() };
        let mut s = format!("accepted {:.1}% of {} trajectories", 100.0 * a, self.trials);
        if let Some(v) = self.volume_acceptance() {
            s += &format!("; {:.1}% of {} volume moves", 100.0 * v, self.volume_trials);
        }
        s
    }
}

/// A trajectory under way: the state it started from (with its fresh velocities) and H there.
#[derive(Clone, Debug)]
struct Pending {
    start: Snapshot,
    start_telemetry: Telemetry,
    done: u64,
}

/// What a backend keeps for the chain between `advance` calls.
#[derive(Clone, Debug, Default)]
pub struct HmcState {
    pub stats: McStats,
    /// Cycles begun: the counter of the random streams.
    cycle: u64,
    pending: Option<Pending>,
}

impl HmcState {
    /// Drops a trajectory under way (the state was edited): it is kept as it is.
    pub fn forget(&mut self) {
        self.pending = None;
    }
}

/// Fresh Maxwell-Boltzmann velocities at `temperature` for cycle `cycle` (no momentum
/// removal: with walls or body forces momentum is not conserved, and detailed balance needs
/// the plain Gaussian).
fn draw_velocities(snap: &mut Snapshot, params: &SimParams, cycle: u64) {
    let t = params.temperature;
    let atoms = &mut snap.atoms;
    for (i, (v, &ty)) in atoms.velocities.iter_mut().zip(&atoms.types).enumerate() {
        let sd = (t / params.species[ty as usize].mass).sqrt();
        let g = normal4(params.seed, Stream::HmcVelocities, i as u32, cycle);
        *v = [g[0] * sd, g[1] * sd, g[2] * sd];
    }
}

/// A uniform number in (0, 1) for a decision of `stream` in `cycle`.
fn uniform(params: &SimParams, stream: Stream, cycle: u64) -> f64 {
    uniform4(params.seed, stream, 0, cycle)[0]
}

/// min(1, exp(arg)) against a uniform number; a non-finite argument rejects.
fn metropolis(arg: f64, u: f64) -> bool {
    arg.is_finite() && (arg >= 0.0 || u < arg.exp())
}

/// Advances `steps` steps of the chain: the body of `Backend::advance` when the thermostat is
/// a hybrid Monte Carlo one.
pub fn advance<B: Backend + ?Sized>(b: &mut B, steps: u64) -> Result<(), SimError> {
    let params = b.params().clone();
    let Some(len) = params.thermostat.trajectory() else { return b.advance_md(steps) };
    let len = len as u64;
    let earlier = std::mem::take(b.hmc_parts().1);
    let started = std::time::Instant::now();
    let mut records = Vec::new();
    let result = run(b, &params, len, steps, &mut records);
    let rate = steps as f64 / started.elapsed().as_secs_f64().max(1e-9);
    let queue = b.hmc_parts().1;
    // The trajectories' own MD telemetry is not the chain's: only the records made here count.
    queue.clear();
    queue.extend(earlier);
    queue.extend(records.into_iter().map(|t| Telemetry { steps_per_s: rate, ..t }));
    result
}

fn run<B: Backend + ?Sized>(
    b: &mut B,
    p: &SimParams,
    len: u64,
    steps: u64,
    out: &mut Vec<Telemetry>,
) -> Result<(), SimError> {
    let mut left = steps;
    while left > 0 {
        if b.hmc_parts().0.pending.is_none() {
            begin(b, p)?;
        }
        let done = b.hmc_parts().0.pending.as_ref().map_or(0, |c| c.done);
        let k = (len - done).min(left);
        b.advance_md(k)?;
        left -= k;
        let Some(c) = b.hmc_parts().0.pending.as_mut() else { continue };
        c.done += k;
        if c.done == len {
            finish(b, p, len, out)?;
        }
    }
    Ok(())
}

/// Starts a cycle: fresh velocities, the state saved, H measured.
fn begin<B: Backend + ?Sized>(b: &mut B, p: &SimParams) -> Result<(), SimError> {
    let cycle = b.hmc_parts().0.cycle;
    let mut start = b.copy_state()?;
    draw_velocities(&mut start, p, cycle);
    b.restore(&start)?;
    let start_telemetry = b.measure()?;
    let st = b.hmc_parts().0;
    st.cycle += 1;
    st.pending = Some(Pending { start, start_telemetry, done: 0 });
    Ok(())
}

/// Ends a cycle: accept or restore, then (NPT) a volume move, then the chain's telemetry.
fn finish<B: Backend + ?Sized>(b: &mut B, p: &SimParams, len: u64, out: &mut Vec<Telemetry>) -> Result<(), SimError> {
    let st = b.hmc_parts().0;
    let Some(c) = st.pending.take() else { return Ok(()) };
    let cycle = st.cycle - 1;
    let beta = 1.0 / p.temperature;
    let end = b.measure()?;
    let dh = end.total_energy() - c.start_telemetry.total_energy();
    let accept = metropolis(-beta * dh, uniform(p, Stream::HmcAccept, cycle));
    let mut state = if accept {
        end
    } else {
        let mut back = c.start;
        back.step += len;
        back.time += len as f64 * p.dt;
        b.restore(&back)?;
        Telemetry { step: back.step, time: back.time, ..c.start_telemetry }
    };
    let st = b.hmc_parts().0;
    st.stats.trials += 1;
    st.stats.accepted += accept as u64;
    if let Thermostat::HmcNpt { pressure, max_dlnv, .. } = p.thermostat {
        state = volume_move(b, p, pressure, max_dlnv, cycle, state)?;
    }
    let every = p.telemetry_every.max(1);
    if state.step / every > (state.step - len) / every {
        state.mc = b.hmc_parts().0.stats;
        out.push(state);
    }
    Ok(())
}

/// One ln V move with scaled coordinates; returns the chain state's telemetry after it.
fn volume_move<B: Backend + ?Sized>(
    b: &mut B,
    p: &SimParams,
    pressure: f64,
    max_dlnv: f64,
    cycle: u64,
    now: Telemetry,
) -> Result<Telemetry, SimError> {
    let before = b.copy_state()?;
    let n = before.atoms.len() as f64;
    let v0 = before.sim_box.volume();
    let dlnv = (2.0 * uniform(p, Stream::HmcVolume, 2 * cycle) - 1.0) * max_dlnv;
    let v1 = v0 * dlnv.exp();
    let f = (dlnv / 3.0).exp();
    let mut scaled = before.clone();
    let lo = scaled.sim_box.lo;
    for k in 0..3 {
        scaled.sim_box.hi[k] = lo[k] + f * (scaled.sim_box.hi[k] - lo[k]);
    }
    for x in scaled.atoms.positions.iter_mut() {
        for k in 0..3 {
            x[k] = lo[k] + f * (x[k] - lo[k]);
        }
    }
    let u0 = now.potential_energy() + tail::tail_energy(p, &before.atoms.types, v0);
    let st = b.hmc_parts().0;
    st.stats.volume_trials += 1;
    let trial = match b.restore(&scaled) {
        // A box too small for the cutoff: the move is refused like any rejected one.
        Err(SimError::Param(_)) => None,
        Err(e) => return Err(e),
        Ok(()) => Some(b.measure()?),
    };
    if let Some(t) = trial {
        let u1 = t.potential_energy() + tail::tail_energy(p, &scaled.atoms.types, v1);
        let arg = -(u1 - u0 + pressure * (v1 - v0)) / p.temperature + (n + 1.0) * dlnv;
        if metropolis(arg, uniform(p, Stream::HmcVolume, 2 * cycle + 1)) {
            b.hmc_parts().0.stats.volume_accepted += 1;
            return Ok(t);
        }
        b.restore(&before)?;
    }
    Ok(now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::params::Species;

    #[test]
    fn stats_describe_their_rates() {
        assert_eq!(McStats::default().describe(), "no trajectory finished yet");
        let m = McStats { trials: 200, accepted: 150, volume_trials: 200, volume_accepted: 90 };
        assert_eq!(m.describe(), "accepted 75.0% of 200 trajectories; 45.0% of 200 volume moves");
    }

    #[test]
    fn metropolis_accepts_downhill_and_rejects_nan() {
        assert!(metropolis(0.5, 0.999));
        assert!(metropolis(-1.0, 0.3));
        assert!(!metropolis(-1.0, 0.4));
        assert!(!metropolis(f64::NAN, 0.0));
        assert!(!metropolis(f64::NEG_INFINITY, 0.0));
    }

    #[test]
    fn drawn_velocities_have_the_target_temperature_per_species_mass() {
        let heavy = Species { name: "X".into(), sigma: 1.0, epsilon: 1.0, mass: 4.0 };
        let p = SimParams { temperature: 2.0, species: vec![Species::argon(), heavy], ..SimParams::default() };
        let n = 40_000;
        let mut snap = Snapshot {
            sim_box: crate::physics::sim_box::SimBox::new([10.0; 3], [true; 3]),
            atoms: super::super::AtomState {
                positions: vec![[0.0; 3]; n],
                velocities: vec![[0.0; 3]; n],
                types: (0..n as u32).map(|i| i % 2).collect(),
                ..Default::default()
            },
            step: 0,
            time: 0.0,
            piston: None,
        };
        draw_velocities(&mut snap, &p, 3);
        for ty in 0..2u32 {
            let m = p.species[ty as usize].mass;
            let (sum, count) = snap
                .atoms
                .velocities
                .iter()
                .zip(&snap.atoms.types)
                .filter(|(_, t)| **t == ty)
                .fold((0.0, 0.0), |(s, c), (v, _)| (s + m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), c + 3.0));
            let t = sum / count;
            // 60,000 squared Gaussians: standard error of the mean 2 T sqrt(2 / 60000) ~ 0.012.
            assert!((t - 2.0).abs() < 0.05, "species {ty}: T = {t}");
        }
        let again = {
            let mut s = snap.clone();
            draw_velocities(&mut s, &p, 3);
            s
        };
        assert_eq!(again.atoms.velocities, snap.atoms.velocities, "the same cycle draws the same numbers");
        let other = {
            let mut s = snap.clone();
            draw_velocities(&mut s, &p, 4);
            s
        };
        assert_ne!(other.atoms.velocities, snap.atoms.velocities);
    }
}
