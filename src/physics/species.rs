//! The noble-gas catalogue (Ne, Ar, Kr, Xe): Lennard-Jones parameters in physical units and
//! their conversion to reduced [`Species`] relative to argon. Owns the catalogue, the
//! composition arithmetic (how many atoms of each species, assigned from a seed) and nothing
//! else.
//!
//! Source of sigma and epsilon/k_B, all four from one table: J. O. Hirschfelder,
//! C. F. Curtiss and R. B. Bird, *Molecular Theory of Gases and Liquids* (Wiley, New York,
//! 1954), Table I-A, Lennard-Jones (12-6) parameters fitted to second virial coefficients.
//! Its argon, sigma = 3.405 Å and epsilon/k_B = 119.8 K, is this project's argon (the
//! reduced units), so argon's reduced parameters are exactly 1 and no rescaling is needed.
//! Masses are the standard atomic weights (IUPAC: J. Meija et al., "Atomic weights of the
//! elements 2013", Pure Appl. Chem. 88, 265-291 (2016); argon's conventional 39.948).

use super::params::Species;
use crate::rng::{Sequence, Stream};
use crate::units::{ARGON_EPSILON_K, ARGON_MASS_U, ARGON_SIGMA_ANGSTROM};

/// One catalogue entry in physical units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Element {
    /// Chemical symbol, as in extended XYZ files and scene files.
    pub symbol: &'static str,
    pub name: &'static str,
    pub sigma_angstrom: f64,
    pub epsilon_k: f64,
    pub mass_g_per_mol: f64,
}

/// Ne, Ar, Kr, Xe (Hirschfelder, Curtiss & Bird 1954, Table I-A; IUPAC 2013 masses).
pub const CATALOGUE: [Element; 4] = [
    Element { symbol: "Ne", name: "neon", sigma_angstrom: 2.749, epsilon_k: 35.60, mass_g_per_mol: 20.1797 },
    Element {
        symbol: "Ar",
        name: "argon",
        sigma_angstrom: ARGON_SIGMA_ANGSTROM,
        epsilon_k: ARGON_EPSILON_K,
        mass_g_per_mol: ARGON_MASS_U,
    },
    Element { symbol: "Kr", name: "krypton", sigma_angstrom: 3.60, epsilon_k: 171.0, mass_g_per_mol: 83.798 },
    Element { symbol: "Xe", name: "xenon", sigma_angstrom: 4.100, epsilon_k: 221.0, mass_g_per_mol: 131.293 },
];

impl Element {
    /// The reduced species (sigma, epsilon and mass relative to argon).
    pub fn species(&self) -> Species {
        reduced(self.symbol, self.sigma_angstrom, self.epsilon_k, self.mass_g_per_mol)
    }
}

/// A species from physical parameters, reduced by argon's.
pub fn reduced(name: &str, sigma_angstrom: f64, epsilon_k: f64, mass_g_per_mol: f64) -> Species {
    Species {
        name: name.into(),
        sigma: sigma_angstrom / ARGON_SIGMA_ANGSTROM,
        epsilon: epsilon_k / ARGON_EPSILON_K,
        mass: mass_g_per_mol / ARGON_MASS_U,
    }
}

/// The catalogue entry whose symbol is `symbol` (exact case, e.g. "Kr").
pub fn element(symbol: &str) -> Option<&'static Element> {
    CATALOGUE.iter().find(|e| e.symbol == symbol)
}

/// The reduced catalogue species `symbol`, if it is one.
pub fn catalogue_species(symbol: &str) -> Option<Species> {
    element(symbol).map(Element::species)
}

/// "`Ne`, `Ar`, `Kr`, `Xe`": for messages.
pub fn catalogue_names() -> String {
    CATALOGUE.iter().map(|e| format!("`{}`", e.symbol)).collect::<Vec<_>>().join(", ")
}

/// Fractions may differ from 1 in sum by this much.
pub const FRACTION_TOLERANCE: f64 = 1e-6;

/// Why a composition cannot be used (the message names the fix).
pub fn check_composition(fractions: &[f64], n_species: usize) -> Result<(), String> {
    if fractions.len() != n_species {
        return Err(format!(
            "gives {} fractions for {n_species} species: give one fraction per species, in the order of `species`",
            fractions.len()
        ));
    }
    if let Some((i, f)) = fractions.iter().enumerate().find(|(_, f)| !(f.is_finite() && (0.0..=1.0).contains(*f))) {
        return Err(format!("fraction {i} is {f}: each fraction must lie in [0, 1]"));
    }
    let sum: f64 = fractions.iter().sum();
    if (sum - 1.0).abs() > FRACTION_TOLERANCE {
        return Err(format!("the fractions sum to {sum}, not 1: make them add up to 1 (e.g. [0.5, 0.5])"));
    }
    Ok(())
}

/// Atom counts per species for `n` atoms at `fractions` (which sum to 1): the largest
/// remainder method, so the counts sum to `n` exactly and each is within one of n f_k.
pub fn counts(n: usize, fractions: &[f64]) -> Vec<usize> {
    let exact: Vec<f64> = fractions.iter().map(|f| f * n as f64).collect();
    let mut counts: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let mut order: Vec<usize> = (0..fractions.len()).collect();
    // Largest remainder first; ties to the earlier species.
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b)));
    let mut left = n.saturating_sub(counts.iter().sum());
    for &k in order.iter().cycle().take(left.min(fractions.len() * 2)) {
        if left == 0 {
            break;
        }
        counts[k] += 1;
        left -= 1;
    }
    counts
}

/// Species types for `n` atoms at `fractions`: exact counts ([`counts`]) in a random order
/// drawn from `seed` (a Fisher-Yates shuffle), so a scene builds the same mixture every time.
pub fn assign_types(n: usize, fractions: &[f64], seed: u64) -> Vec<u32> {
    let mut types: Vec<u32> = Vec::with_capacity(n);
    for (t, &c) in counts(n, fractions).iter().enumerate() {
        types.extend(std::iter::repeat_n(t as u32, c));
    }
    let mut rng = Sequence::new(seed, Stream::Composition, 0, 0);
    for i in (1..types.len()).rev() {
        let j = ((rng.uniform() * (i + 1) as f64) as usize).min(i);
        types.swap(i, j);
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argon_is_the_unit() {
        let ar = catalogue_species("Ar").unwrap();
        assert_eq!((ar.sigma, ar.epsilon, ar.mass), (1.0, 1.0, 1.0));
        let kr = catalogue_species("Kr").unwrap();
        assert!((kr.sigma - 3.60 / 3.405).abs() < 1e-15 && (kr.epsilon - 171.0 / 119.8).abs() < 1e-15);
        assert!(catalogue_species("kr").is_none() && catalogue_species("He").is_none());
    }

    #[test]
    fn counts_sum_exactly_and_round_fairly() {
        assert_eq!(counts(10, &[0.5, 0.5]), vec![5, 5]);
        assert_eq!(counts(7, &[0.5, 0.5]), vec![4, 3]);
        assert_eq!(counts(10, &[0.25, 0.25, 0.5]), vec![3, 2, 5]);
        assert_eq!(counts(3, &[1.0 / 3.0; 3]), vec![1, 1, 1]);
        assert_eq!(counts(5, &[1.0, 0.0]), vec![5, 0]);
        let t = assign_types(1001, &[0.3, 0.7], 9);
        assert_eq!(t.iter().filter(|&&x| x == 0).count(), 300);
        assert_eq!(t, assign_types(1001, &[0.3, 0.7], 9));
        assert_ne!(t, assign_types(1001, &[0.3, 0.7], 10));
    }

    #[test]
    fn bad_compositions_name_the_fix() {
        assert!(check_composition(&[0.5], 2).unwrap_err().contains("one fraction per species"));
        assert!(check_composition(&[0.5, 0.6], 2).unwrap_err().contains("sum to"));
        assert!(check_composition(&[-0.5, 1.5], 2).unwrap_err().contains("[0, 1]"));
        assert!(check_composition(&[f64::NAN, 1.0], 2).is_err());
        assert!(check_composition(&[0.25, 0.75], 2).is_ok());
    }
}
