//! The LAMMPS deck's surface friction (`physics::friction`, no-slip walls), beside
//! `lammps.rs`: per walled axis, `fix langevin` on a dynamic group of the atoms near either
//! face, with a `temp/partial` bias that leaves out the normal axis, so only the tangential
//! components are thermostatted, as here. The obstacles' friction is
//! `lammps_obstacle_friction.rs`. Text generation only.

use std::fmt::Write as _;

use super::lammps::{ExportInput, Scale, num};

/// Surface friction (no-slip walls): per walled axis, a dynamic group of the atoms within
/// `range` of either face and `fix langevin` on it with a `temp/partial` bias that leaves out
/// the normal axis, so LAMMPS thermostats only the tangential components (it zeroes the
/// random force on a component the bias removed).
pub(super) fn surface_friction(
    script: &mut String,
    inp: &ExportInput,
    s: &Scale,
    f: &crate::physics::friction::SurfaceFriction,
) {
    let (b, p) = (&inp.sim_box, &inp.params);
    let t = num(p.temperature * s.temperature);
    let damp = num(f.damp * s.time);
    let seed = (p.seed % 900_000_000) + 2;
    if b.periodic.iter().all(|&q| q) {
        return;
    }
    let _ = writeln!(
        script,
        "\n# Surface friction (no-slip walls): Langevin on the velocity tangential to each walled face,\n\
         # for atoms within {} of it (a dynamic group; temp/partial removes the normal component, which\n\
         # fix langevin then leaves alone). Not a potential: no energy or virial. Statistics agree, not\n\
         # trajectories (other random numbers).",
        num(f.range * s.length)
    );
    for k in (0..3).filter(|&k| !b.periodic[k]) {
        let axis = ["x", "y", "z"][k];
        let bound = |lo: String, hi: String| {
            let mut v = [
                "INF".to_string(),
                "INF".to_string(),
                "INF".to_string(),
                "INF".to_string(),
                "INF".to_string(),
                "INF".to_string(),
            ];
            v[2 * k] = lo;
            v[2 * k + 1] = hi;
            v.join(" ")
        };
        let lo_end = num((b.lo[k] + f.range) * s.length);
        let hi_start = num((b.hi[k] - f.range) * s.length);
        let flags: Vec<&str> = (0..3).map(|j| if j == k { "0" } else { "1" }).collect();
        let _ = writeln!(script, "region          fric_{axis}lo block {} units box", bound("INF".into(), lo_end));
        let _ = writeln!(script, "region          fric_{axis}hi block {} units box", bound(hi_start, "INF".into()));
        let _ = writeln!(script, "region          fric_{axis} union 2 fric_{axis}lo fric_{axis}hi");
        let _ = writeln!(script, "group           fric_{axis} dynamic all region fric_{axis} every 1");
        let _ = writeln!(script, "compute         fric_{axis}_t fric_{axis} temp/partial {}", flags.join(" "));
        let _ = writeln!(script, "fix             fric_{axis} fric_{axis} langevin {t} {t} {damp} {}", seed + k as u64);
        let _ = writeln!(script, "fix_modify      fric_{axis} temp fric_{axis}_t");
    }
}
