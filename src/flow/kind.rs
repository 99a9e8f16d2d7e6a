//! The layers a finished field has (`FieldKind`): each one's name, its unit in reduced LJ units
//! and in argon's SI units with the factor between them, and whether it is signed (drawn with
//! a diverging colour map centred on zero) or a magnitude (a perceptually uniform one).

use crate::units;

use super::spec::FieldError;

/// One scalar layer of a finished field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FieldKind {
    /// Number density, atoms per sigma^3 (0 in a bin no atom visited).
    Density,
    /// Mean (mass-weighted) velocity components, sigma/tau.
    Vx,
    Vy,
    Vz,
    /// |u|, the magnitude of the full 3D mean velocity.
    Speed,
    /// Kinetic temperature relative to the bin's own mean velocity, epsilon/k_B.
    Temperature,
    /// omega_z = du_y/dx - du_x/dy, 1/tau.
    Vorticity,
    /// |u| / c with c the JZG speed of sound at the bin's density and temperature.
    Mach,
    /// Atom-samples in the bin over the window (how much data backs the other layers).
    Count,
    /// The share of the bin's atom-samples that carry dye (0 to 1; issue 47), where the sums
    /// count them (every backend's; not a LAMMPS run's rebuilt sums; not in [`FieldKind::ALL`]).
    Dye,
}

impl FieldKind {
    /// Every layer, in the order files list them.
    pub const ALL: [FieldKind; 9] = [
        FieldKind::Density,
        FieldKind::Vx,
        FieldKind::Vy,
        FieldKind::Vz,
        FieldKind::Speed,
        FieldKind::Temperature,
        FieldKind::Vorticity,
        FieldKind::Mach,
        FieldKind::Count,
    ];

    /// Layers not every source of sums gives ([`crate::flow::Fields::dye_sampled`]: every
    /// backend counts dye, a LAMMPS run's rebuilt sums do not).
    pub const OPTIONAL: [FieldKind; 1] = [FieldKind::Dye];

    /// Every layer and then the optional ones (layer menus, names).
    pub fn every() -> impl Iterator<Item = FieldKind> {
        FieldKind::ALL.into_iter().chain(FieldKind::OPTIONAL)
    }

    /// The layer's name in files, scenes and the command line.
    pub fn name(self) -> &'static str {
        match self {
            FieldKind::Density => "density",
            FieldKind::Vx => "vx",
            FieldKind::Vy => "vy",
            FieldKind::Vz => "vz",
            FieldKind::Speed => "speed",
            FieldKind::Temperature => "temperature",
            FieldKind::Vorticity => "vorticity",
            FieldKind::Mach => "mach",
            FieldKind::Count => "count",
            FieldKind::Dye => "dye",
        }
    }

    /// A name for people (legends, colour bars).
    pub fn label(self) -> &'static str {
        match self {
            FieldKind::Density => "number density",
            FieldKind::Vx => "velocity x",
            FieldKind::Vy => "velocity y",
            FieldKind::Vz => "velocity z",
            FieldKind::Speed => "speed",
            FieldKind::Temperature => "temperature",
            FieldKind::Vorticity => "vorticity",
            FieldKind::Mach => "Mach number",
            FieldKind::Count => "atom-samples",
            FieldKind::Dye => "dye fraction",
        }
    }

    /// The unit in reduced LJ units.
    pub fn unit_lj(self) -> &'static str {
        match self {
            FieldKind::Density => "sigma^-3",
            FieldKind::Vx | FieldKind::Vy | FieldKind::Vz | FieldKind::Speed => "sigma/tau",
            FieldKind::Temperature => "epsilon/k_B",
            FieldKind::Vorticity => "1/tau",
            FieldKind::Mach | FieldKind::Count | FieldKind::Dye => "1",
        }
    }

    /// The unit for argon in SI(-prefixed) units.
    pub fn unit_si(self) -> &'static str {
        match self {
            FieldKind::Density => "nm^-3",
            FieldKind::Vx | FieldKind::Vy | FieldKind::Vz | FieldKind::Speed => "m/s",
            FieldKind::Temperature => "K",
            FieldKind::Vorticity => "1/ps",
            FieldKind::Mach | FieldKind::Count | FieldKind::Dye => "1",
        }
    }

    /// The factor from the reduced unit to [`FieldKind::unit_si`] for argon (sigma 3.405 A,
    /// epsilon/k_B 119.8 K, tau about 2.156 ps): value_si = value_lj * factor.
    pub fn to_si(self) -> f64 {
        match self {
            FieldKind::Density => units::reduced_length_to_nm(1.0).powi(-3),
            FieldKind::Vx | FieldKind::Vy | FieldKind::Vz | FieldKind::Speed => units::reduced_speed_to_m_per_s(1.0),
            FieldKind::Temperature => units::reduced_to_kelvin(1.0),
            FieldKind::Vorticity => 1.0 / units::argon_tau_ps(),
            FieldKind::Mach | FieldKind::Count | FieldKind::Dye => 1.0,
        }
    }

    /// Whether the layer takes both signs (a diverging colour map centred on zero: red
    /// positive, blue negative) rather than being a magnitude.
    pub fn signed(self) -> bool {
        matches!(self, FieldKind::Vx | FieldKind::Vy | FieldKind::Vz | FieldKind::Vorticity)
    }

    /// The layer called `name` (as [`FieldKind::name`] writes it); the error lists the names.
    pub fn from_name(name: &str) -> Result<FieldKind, FieldError> {
        let wanted = name.trim();
        FieldKind::every().find(|k| k.name().eq_ignore_ascii_case(wanted)).ok_or_else(|| FieldError {
            field: "field",
            value: format!("{name:?}"),
            reason: format!(
                "no such field layer; the layers are {}",
                FieldKind::every().map(FieldKind::name).collect::<Vec<_>>().join(", ")
            ),
        })
    }
}

impl std::fmt::Display for FieldKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for FieldKind {
    type Err = FieldError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FieldKind::from_name(s)
    }
}
