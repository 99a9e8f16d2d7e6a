//! The LAMMPS deck's wind tunnel (`physics::tunnel`), beside `lammps.rs`: the inflow zone
//! becomes a dynamic group of the zone's slab under `fix langevin` at the target temperature
//! with a short damping time ([`damp`]: 10 steps) and the stream as its bias (`compute
//! temp/ramp` with the same velocity at both ends of the ramp: a constant (U, 0, 0)), so every
//! atom in the slab relaxes within a few steps to a Maxwell-Boltzmann velocity around the
//! stream, where argon-sandbox draws it afresh at every step.
//!
//! Not `fix wall/flow` (EXTRA-FIX, in the PyPI build): its flow boundary conditions re-draw an
//! atom's velocity when it crosses a plane, from the flux-weighted distribution, which holds
//! for atoms that fly freely past the plane; in this dense fluid (rho 0.6) atoms rattle back
//! and forth across it, and the stream it makes was measured 3 to 6 % too fast and 3 to 7 %
//! too cold (one to four planes in the twin eddies' 4 sigma zone, 936 atoms, 20 tau), while
//! the Langevin zone gives U and T within their statistical errors (tests/lammps_export.rs).
//! Text generation only.

use std::fmt::Write as _;

use super::lammps::{ExportInput, Scale, num};
use crate::physics::tunnel::Tunnel;

/// Time steps in the zone's Langevin damping time.
pub const DAMP_STEPS: f64 = 10.0;

/// The zone's damping time (tau): [`DAMP_STEPS`] time steps, the shortest that `fix
/// langevin`'s velocity Verlet integrates accurately (gamma dt = 0.1).
pub fn damp(dt: f64) -> f64 {
    DAMP_STEPS * dt
}

/// Writes the tunnel's lines (after the thermostat, in the deck's fix order).
pub(super) fn tunnel(script: &mut String, inp: &ExportInput, s: &Scale, t: &Tunnel) {
    let p = inp.params;
    let ly = inp.sim_box.length()[1];
    let seed = (p.seed % 900_000_000) + 3;
    let (u, zone, temp) = (num(t.speed * s.velocity), num(t.zone * s.length), num(p.temperature * s.temperature));
    let d = num(damp(p.dt) * s.time);
    let _ = writeln!(
        script,
        "\n# Wind tunnel: a stream of {u} along +x, the inflow zone 0 <= x < {zone} (the box's upstream end).\n\
         # argon-sandbox gives every atom inside the zone a fresh Maxwell-Boltzmann velocity around (U, 0, 0)\n\
         # at the target temperature at the end of every step; LAMMPS has no such fix. Here the zone is a\n\
         # dynamic group under fix langevin at that temperature with a damping time of {steps} steps ({d})\n\
         # and the stream as its bias (compute temp/ramp with U at both ends of the ramp: (U, 0, 0)\n\
         # everywhere), so each atom in the zone relaxes to the same distribution within a few steps\n\
         # instead of at once. What that changes: an atom crossing the zone keeps a little of its old\n\
         # velocity (exp(-t/damp)) and the heat is removed over the zone, not at its entry; the stream\n\
         # leaving the zone has the same mean velocity and temperature (measured). fix wall/flow\n\
         # (EXTRA-FIX) was measured and not used: in a dense fluid its stream is some 5 % too fast and\n\
         # too cold. Other random numbers (per rank).",
        steps = DAMP_STEPS,
    );
    let _ = writeln!(script, "region          tunnel_zone block INF {zone} INF INF INF INF units box");
    let _ = writeln!(script, "group           tunnel_zone dynamic all region tunnel_zone every 1");
    let _ = writeln!(
        script,
        "compute         tunnel_stream tunnel_zone temp/ramp vx {u} {u} y 0.0 {} units box",
        num(ly * s.length)
    );
    let _ = writeln!(script, "fix             tunnel tunnel_zone langevin {temp} {temp} {d} {seed}");
    let _ = writeln!(script, "fix_modify      tunnel temp tunnel_stream");
}
