//! Colour maps: what an atom's colour shows (speed, kinetic energy, height or one colour),
//! the palette for each (the same polynomial fits as `shaders/atoms.wgsl`, so the legend
//! matches the atoms), default ranges, and the legend's labels in argon units.

use crate::sim::ColourScalar;
use crate::units;

/// What the atom colour shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
pub enum ColourBy {
    Speed,
    #[value(name = "kinetic-energy")]
    KineticEnergy,
    Height,
    Single,
}

/// Palettes, numbered as in the shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Palette {
    Viridis = 0,
    Warm = 1,
    Single = 2,
}

const VIRIDIS: [[f32; 3]; 7] = [
    [0.2777, 0.0054, 0.3341],
    [0.1051, 1.4046, 1.3846],
    [-0.3309, 0.2148, 0.0951],
    [-4.6342, -5.7991, -19.3324],
    [6.2283, 14.1799, 56.6906],
    [4.7764, -13.7451, -65.3530],
    [-5.4355, 4.6459, 26.3124],
];

const WARM: [[f32; 3]; 7] = [
    [0.0587, 0.0233, 0.5433],
    [2.1765, 0.2384, 0.7540],
    [-2.6895, -7.4559, 3.1108],
    [6.1303, 42.3462, -28.5189],
    [-11.1074, -82.6663, 60.1398],
    [10.0231, 71.4136, -54.0722],
    [-3.6587, -22.9315, 18.1919],
];

fn poly(c: &[[f32; 3]; 7], t: f32) -> [f32; 3] {
    let t = t.clamp(0.0, 1.0);
    std::array::from_fn(|k| c.iter().rev().fold(0.0, |acc, row| acc * t + row[k]).clamp(0.0, 1.0))
}

impl Palette {
    /// Linear RGB at `t` in [0, 1].
    pub fn colour(self, t: f32, single: [f32; 3]) -> [f32; 3] {
        match self {
            Palette::Viridis => poly(&VIRIDIS, t),
            Palette::Warm => poly(&WARM, t),
            Palette::Single => single,
        }
    }
}

impl ColourBy {
    pub fn palette(self) -> Palette {
        match self {
            ColourBy::Speed | ColourBy::Height => Palette::Viridis,
            ColourBy::KineticEnergy => Palette::Warm,
            ColourBy::Single => Palette::Single,
        }
    }

    /// The scalar the simulation publishes with each position.
    pub fn scalar(self) -> ColourScalar {
        match self {
            ColourBy::Speed | ColourBy::Single => ColourScalar::Speed,
            ColourBy::KineticEnergy => ColourScalar::KineticEnergy,
            ColourBy::Height => ColourScalar::Height,
        }
    }

    /// A range that shows a fluid at reduced temperature `t` in a box of height `y_range`.
    pub fn default_range(self, t: f64, y_range: [f64; 2]) -> [f32; 2] {
        match self {
            ColourBy::Speed | ColourBy::Single => [0.0, (3.0 * t.max(0.05).sqrt()) as f32],
            ColourBy::KineticEnergy => [0.0, (4.0 * t.max(0.05)) as f32],
            ColourBy::Height => [y_range[0] as f32, y_range[1] as f32],
        }
    }

    /// Legend title and the value of a reduced scalar in argon units, as text.
    pub fn legend_label(self, reduced: f32) -> String {
        match self {
            ColourBy::Speed | ColourBy::Single => format!("{:.0}", units::reduced_speed_to_m_per_s(reduced as f64)),
            ColourBy::KineticEnergy => format!("{:.2}", units::reduced_energy_to_kj_per_mol(reduced as f64)),
            ColourBy::Height => format!("{:.1}", units::reduced_length_to_nm(reduced as f64)),
        }
    }

    pub fn legend_title(self) -> &'static str {
        match self {
            ColourBy::Speed | ColourBy::Single => "speed (m/s)",
            ColourBy::KineticEnergy => "kinetic energy (kJ/mol)",
            ColourBy::Height => "height (nm)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_ends_are_purple_and_yellow() {
        let lo = Palette::Viridis.colour(0.0, [0.0; 3]);
        let hi = Palette::Viridis.colour(1.0, [0.0; 3]);
        assert!(lo[2] > lo[1] && lo[0] > lo[1], "{lo:?}");
        assert!(hi[0] > 0.9 && hi[1] > 0.8 && hi[2] < 0.3, "{hi:?}");
    }
}
