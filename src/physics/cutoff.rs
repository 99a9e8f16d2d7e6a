//! The LJ cut-off setting: one absolute distance for every species pair (in argon sigmas; a
//! scene's plain `cutoff: 2.5`), or a multiple of each pair's sigma_ij, the way LAMMPS is given
//! a cut-off per pair in `pair_coeff` (`cutoff: PerPair(2.5)`, the default). Owns the setting,
//! its spelling in files, the radius of one pair, the largest radius over a set of species, and
//! the checks of the number and of the largest radius against a periodic box.
//! `SimParams::pair_cutoff` and `SimParams::max_cutoff` apply it to a simulation's species;
//! nothing here knows species, backends or files.

use std::fmt;

use crate::numfmt::short;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where the pair potential of species pair (i, j) ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cutoff {
    /// r_c (sigma_Ar) for every pair; written as a plain number.
    Absolute(f64),
    /// r_c,ij = k sigma_ij for each pair, k in units of the pair's own sigma; written
    /// `PerPair(k)`. For one species of sigma 1 (argon) the same as `Absolute(k)`.
    PerPair(f64),
}

impl Default for Cutoff {
    fn default() -> Self {
        Cutoff::DEFAULT
    }
}

impl Cutoff {
    /// 2.5 sigma_ij for every pair (LAMMPS's usual per-pair choice).
    pub const DEFAULT: Cutoff = Cutoff::PerPair(2.5);
    /// The number may be from 1 to 10 (sigma, or sigma_ij per pair).
    pub const RANGE: std::ops::RangeInclusive<f64> = 1.0..=10.0;

    /// The number as written: sigma_Ar for `Absolute`, sigma_ij for `PerPair`.
    pub fn value(self) -> f64 {
        match self {
            Cutoff::Absolute(x) | Cutoff::PerPair(x) => x,
        }
    }

    /// r_c (sigma_Ar) of a pair whose Lorentz-Berthelot sigma is `sigma_ij`.
    pub fn radius(self, sigma_ij: f64) -> f64 {
        match self {
            Cutoff::Absolute(rc) => rc,
            Cutoff::PerPair(k) => k * sigma_ij,
        }
    }

    /// The largest r_c over every pair of species with these sigmas: (sigma_i + sigma_j) / 2
    /// never exceeds the larger of the two, so it is the radius of the largest species' pair
    /// with itself (bit for bit: (s + s) / 2 = s). Argon's sigma when there are none.
    pub fn largest(self, sigmas: impl IntoIterator<Item = f64>) -> f64 {
        let widest = sigmas.into_iter().fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
        self.radius(widest.unwrap_or(1.0))
    }

    /// Checks the number: why not, with the fix, when it is outside [1, 10].
    pub fn check_value(self) -> Result<(), String> {
        let x = self.value();
        if x.is_finite() && Self::RANGE.contains(&x) {
            return Ok(());
        }
        Err(match self {
            Cutoff::Absolute(_) => "allowed range is [1, 10] sigma; 2.5 is the usual choice, or PerPair(2.5) for \
                                    2.5 sigma_ij per species pair"
                .into(),
            Cutoff::PerPair(_) => "allowed range is PerPair(1) to PerPair(10), in units of each pair's sigma_ij; \
                                   PerPair(2.5) is the usual choice"
                .into(),
        })
    }

    /// Checks the largest radius `largest` (that of `pair`, e.g. `Xe-Xe`) against half a
    /// periodic edge `half` along `axis`: why not, with the fix.
    pub fn check_box(self, largest: f64, pair: &str, axis: &str, half: f64) -> Result<(), String> {
        if largest <= half {
            return Ok(());
        }
        let what = match self {
            Cutoff::Absolute(_) => String::from("larger"),
            Cutoff::PerPair(k) => {
                format!(
                    "the largest pair cut-off, {pair} at {} sigma ({} sigma_ij), is larger",
                    short(largest),
                    short(k)
                )
            }
        };
        Err(format!(
            "{what} than half the periodic box along {axis} ({} sigma): make the box at least {} sigma long or \
             the cutoff smaller",
            short(half),
            short(2.0 * largest)
        ))
    }
}

impl fmt::Display for Cutoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cutoff::Absolute(rc) => write!(f, "{}", short(*rc)),
            Cutoff::PerPair(k) => write!(f, "PerPair({})", short(*k)),
        }
    }
}

/// The plain number is `Absolute`; the other spellings are the variants by name.
impl Serialize for Cutoff {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Cutoff::Absolute(rc) => s.serialize_f64(rc),
            Cutoff::PerPair(k) => s.serialize_newtype_variant("Cutoff", 1, "PerPair", &k),
        }
    }
}

/// `Absolute(r)` is accepted too, though the plain number is the way to write it.
#[derive(Deserialize)]
#[serde(rename = "Cutoff")]
enum Named {
    Absolute(f64),
    PerPair(f64),
}

#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "the cutoff is a number (one distance for every pair, in argon sigmas, e.g. `cutoff: 2.5`) or \
                 `PerPair(k)` (k times each species pair's sigma_ij, e.g. `cutoff: PerPair(2.5)`)"
)]
enum Written {
    Plain(f64),
    Named(Named),
}

impl<'de> Deserialize<'de> for Cutoff {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Written::deserialize(d)? {
            Written::Plain(rc) | Written::Named(Named::Absolute(rc)) => Cutoff::Absolute(rc),
            Written::Named(Named::PerPair(k)) => Cutoff::PerPair(k),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radius_and_largest() {
        assert_eq!(Cutoff::Absolute(2.5).radius(1.2), 2.5);
        assert_eq!(Cutoff::PerPair(2.5).radius(1.2), 2.5 * 1.2);
        let sigmas = [0.8073, 1.0, 1.2041, 1.0573];
        assert_eq!(Cutoff::PerPair(2.5).largest(sigmas), 2.5 * 1.2041);
        assert_eq!(Cutoff::Absolute(3.0).largest(sigmas), 3.0);
        assert_eq!(Cutoff::PerPair(2.0).largest([]), 2.0);
        for s in sigmas {
            assert_eq!(0.5 * (s + s), s, "the like pair's sigma is the species' own");
        }
    }

    #[test]
    fn checks_name_the_fix() {
        assert!(Cutoff::PerPair(2.5).check_value().is_ok());
        assert!(Cutoff::PerPair(0.5).check_value().unwrap_err().contains("PerPair(2.5)"));
        assert!(Cutoff::Absolute(f64::NAN).check_value().unwrap_err().contains("[1, 10] sigma"));
        let e = Cutoff::PerPair(2.5).check_box(3.01, "Xe-Xe", "z", 2.0).unwrap_err();
        assert!(e.contains("Xe-Xe at 3.01 sigma") && e.contains("at least 6.02 sigma"), "{e}");
        assert!(Cutoff::Absolute(2.5).check_box(2.5, "", "x", 2.5).is_ok());
    }

    #[test]
    fn spellings_round_trip_through_ron() {
        for (text, want) in [
            ("2.5", Cutoff::Absolute(2.5)),
            ("3", Cutoff::Absolute(3.0)),
            ("PerPair(2.5)", Cutoff::PerPair(2.5)),
            ("Absolute(2.0)", Cutoff::Absolute(2.0)),
        ] {
            let got: Cutoff = ron::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got, want, "{text}");
            let back: Cutoff = ron::from_str(&ron::to_string(&got).unwrap()).unwrap();
            assert_eq!(back, want);
        }
        assert_eq!(ron::to_string(&Cutoff::PerPair(2.5)).unwrap(), "PerPair(2.5)");
        assert_eq!(ron::to_string(&Cutoff::Absolute(2.5)).unwrap(), "2.5");
        let e = ron::from_str::<Cutoff>("PerPiar(2.5)").unwrap_err().to_string();
        assert!(e.contains("PerPair(k)"), "{e}");
        let j: Cutoff = serde_json::from_str(&serde_json::to_string(&Cutoff::PerPair(2.0)).unwrap()).unwrap();
        assert_eq!(j, Cutoff::PerPair(2.0));
    }
}
