//! The LAMMPS deck's pair potential, beside `lammps.rs`: `pair_style lj/cut` at the largest
//! pair cut-off, the shift, and one `pair_coeff i j epsilon sigma r_c` per species pair
//! (Lorentz-Berthelot written out, each pair at its own cut-off, `SimParams::pair_cutoff`,
//! and shifted there, as `pair_modify shift yes` does per pair). Text generation only.

use std::fmt::Write as _;

use super::lammps::{Scale, num};
use crate::physics::cutoff::Cutoff;
use crate::physics::params::SimParams;

/// The pair potential's lines, for argon-sandbox's parameters `p` in units `s`.
pub(super) fn pair_potential(script: &mut String, p: &SimParams, s: &Scale) {
    let cut = match p.cutoff {
        Cutoff::Absolute(rc) => format!("cut at {} sigma for every pair", num(rc)),
        Cutoff::PerPair(k) => {
            format!("cut at {} sigma_ij for each pair (at most {} sigma)", num(k), num(p.max_cutoff()))
        }
    };
    let shift = if p.shift { "shifted to zero there" } else { "not shifted" };
    let _ = writeln!(script, "\n# 12-6 LJ {cut}, {shift}; Lorentz-Berthelot pairs written out.");
    let _ = writeln!(script, "pair_style      lj/cut {}", num(p.max_cutoff() * s.length));
    let _ = writeln!(script, "pair_modify     shift {}", if p.shift { "yes" } else { "no" });
    for i in 0..p.species.len() {
        for j in i..p.species.len() {
            let (sigma, eps) = p.species[i].mixed(&p.species[j]);
            let rc = p.pair_cutoff(i, j);
            let _ = writeln!(
                script,
                "pair_coeff      {} {} {} {} {}",
                i + 1,
                j + 1,
                num(eps * s.energy),
                num(sigma * s.length),
                num(rc * s.length)
            );
        }
    }
}
