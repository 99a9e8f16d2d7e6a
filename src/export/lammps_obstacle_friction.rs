//! The LAMMPS deck's surface friction at the obstacles (`physics::friction`, no-slip
//! cylinders), beside `lammps_friction.rs` (the walls'): for each circle (and each periodic
//! image the deck has), a dynamic group of the atoms within `range` of its surface and `fix
//! addforce` with atom-style variables that write argon-sandbox's force exactly,
//!
//! F = -gamma m v_t + sqrt(2 gamma m k_B T / dt) xi_t,   v_t = v - (v.n) n,  n = (x - c) / |x - c|,
//!
//! the noise drawn as one normal number along the in-plane tangent (-n_y, n_x) (stored per
//! atom by `fix store/state` so the x and y components share it) and one along z. Why not
//! `fix langevin` on the shell: it has no bias compute that removes a radial component (only
//! `temp/partial`'s fixed axes), so it would also damp the normal motion, and it reports no
//! force, so the friction's share of the drag would be lost; `fix addforce`'s variables give
//! both exactly (`reaction` names the deterministic part, whose sum over the shell is the
//! friction's mean reaction on the body: the noise averages to zero). Rectangles, segments,
//! strokes and polygons stay smooth (a warning). Text generation only.

use std::fmt::Write as _;

use super::lammps::{ExportInput, Scale, num};
use crate::physics::friction::SurfaceFriction;

/// One circle (an obstacle or a periodic image of one), in deck coordinates (LAMMPS units).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct FrictionCircle {
    /// The obstacle's index in the scene.
    pub shape: usize,
    pub centre: [f64; 2],
    pub radius: f64,
}

/// What the friction lines define for the obstacle forces: per circle, its shape index and
/// the compute whose vector (1, 2, 3) is the sum of the friction's deterministic part over
/// the shell (the force on the atoms; its negative is the mean reaction on the body).
pub(super) struct FrictionReaction {
    pub shape: usize,
    pub compute: String,
}

/// Writes the friction lines for `circles` and returns the reaction computes. `zlo`, `zhi`:
/// the z extent the obstacle regions use (beyond the box).
pub(super) fn obstacle_friction(
    script: &mut String,
    inp: &ExportInput,
    s: &Scale,
    f: &SurfaceFriction,
    circles: &[FrictionCircle],
    zspan: (&str, &str),
) -> Vec<FrictionReaction> {
    if circles.is_empty() {
        return Vec::new();
    }
    let p = inp.params;
    // Reduced coefficients, then in LAMMPS units: F_lmp = (E / L) F*, m* = m / M, v* = v / V.
    let gamma = 1.0 / f.damp;
    let force = s.energy / s.length;
    let drag = force * gamma / (s.mass * s.velocity);
    let noise = force * (2.0 * gamma * p.temperature / p.dt).sqrt() / s.mass.sqrt();
    let seed = (p.seed % 900_000_000) + 11;
    let _ = writeln!(
        script,
        "\n# Surface friction at the obstacles (no slip): argon-sandbox's tangential Langevin force, exactly,\n\
         # for atoms within {range} of each cylinder's surface (a dynamic group of the shell):\n\
         #   F = -gamma m v_t + sqrt(2 gamma m k_B T / dt) xi_t, gamma = 1/{damp}, v_t = v - (v.n) n,\n\
         # through fix addforce with atom-style variables (fix langevin has no bias that removes the radial\n\
         # component alone, and reports no force). The in-plane noise is one normal number per atom and\n\
         # step along the tangent (-n_y, n_x), stored by fix store/state so x and y share it, and one along z.\n\
         # Not a potential: no energy or virial. Statistics agree, not trajectories (other random numbers).",
        range = num(f.range * s.length),
        damp = num(f.damp * s.time),
    );
    let _ = writeln!(script, "variable        ofric_xi atom normal(0.0,1.0,{seed})");
    let _ = writeln!(script, "fix             ofric_xi all store/state 1 v_ofric_xi");
    let (zlo, zhi) = zspan;
    let mut out = Vec::new();
    for (i, c) in circles.iter().enumerate() {
        let name = format!("ofric{i}");
        let (cx, cy) = (num(c.centre[0]), num(c.centre[1]));
        let dx = format!("(x-{cx})");
        let dy = format!("(y-{cy})");
        let _ = writeln!(script, "# obstacles[{}]: circle of radius {} at ({cx}, {cy})", c.shape, num(c.radius));
        let _ = writeln!(
            script,
            "region          {name} cylinder z {cx} {cy} {} {zlo} {zhi} units box",
            num(c.radius + f.range * s.length)
        );
        let _ = writeln!(script, "group           {name} dynamic all region {name} every 1");
        let _ = writeln!(script, "variable        {name}_nx atom {dx}/sqrt({dx}^2+{dy}^2)");
        let _ = writeln!(script, "variable        {name}_ny atom {dy}/sqrt({dx}^2+{dy}^2)");
        let _ = writeln!(script, "variable        {name}_vn atom vx*v_{name}_nx+vy*v_{name}_ny");
        let (g, a) = (num(drag), num(noise));
        let _ = writeln!(script, "variable        {name}_dx atom -{g}*mass*(vx-v_{name}_vn*v_{name}_nx)");
        let _ = writeln!(script, "variable        {name}_dy atom -{g}*mass*(vy-v_{name}_vn*v_{name}_ny)");
        let _ = writeln!(script, "variable        {name}_dz atom -{g}*mass*vz");
        let _ = writeln!(script, "variable        {name}_fx atom v_{name}_dx-{a}*sqrt(mass)*f_ofric_xi*v_{name}_ny");
        let _ = writeln!(script, "variable        {name}_fy atom v_{name}_dy+{a}*sqrt(mass)*f_ofric_xi*v_{name}_nx");
        let _ = writeln!(
            script,
            "variable        {name}_fz atom v_{name}_dz+{a}*sqrt(mass)*normal(0.0,1.0,{})",
            seed + 1 + i as u64
        );
        let _ = writeln!(script, "fix             {name} {name} addforce v_{name}_fx v_{name}_fy v_{name}_fz");
        let _ =
            writeln!(script, "compute         {name}_reaction {name} reduce sum v_{name}_dx v_{name}_dy v_{name}_dz");
        out.push(FrictionReaction { shape: c.shape, compute: format!("{name}_reaction") });
    }
    out
}
