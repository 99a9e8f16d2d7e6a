//! Colour maps: what an atom's colour shows (speed, kinetic energy, height, species, dye or
//! one colour), the palette for each (the same polynomial fits, species and dye colours as
//! `shaders/atoms.wgsl`, so the legend matches the atoms), how untagged atoms look under the
//! dye colouring ([`Untagged`]), default ranges, and the legend's labels in argon units.

use crate::sim::ColourScalar;
use crate::units;

/// What the atom colour shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
pub enum ColourBy {
    Speed,
    #[value(name = "kinetic-energy")]
    KineticEnergy,
    Height,
    Species,
    Single,
    /// The dye tag: each source's own colour, untagged atoms as [`Untagged`] says.
    Dye,
}

/// How the dye colouring draws untagged atoms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
pub enum Untagged {
    /// Dark grey, so the dye stands out over the fluid it moves in.
    #[default]
    Dimmed,
    /// Not drawn (no fragments, in the triangle and the splat path).
    Hidden,
    /// Light grey at full brightness.
    Normal,
}

/// Untagged atoms' colour under the dye colouring (linear RGB), dimmed and normal.
pub const UNTAGGED_DIMMED: [f32; 3] = [0.045, 0.045, 0.05];
pub const UNTAGGED_NORMAL: [f32; 3] = [0.40, 0.40, 0.42];

impl Untagged {
    /// The colour untagged atoms are drawn in (hidden ones are not drawn: the dimmed grey).
    pub fn colour(self) -> [f32; 3] {
        match self {
            Untagged::Normal => UNTAGGED_NORMAL,
            Untagged::Dimmed | Untagged::Hidden => UNTAGGED_DIMMED,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Untagged::Dimmed => "dimmed",
            Untagged::Hidden => "hidden",
            Untagged::Normal => "normal",
        }
    }
}

/// Palettes, numbered as in the shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Palette {
    Viridis = 0,
    Warm = 1,
    Single = 2,
    /// Discrete: one colour per species index ([`SPECIES_COLOURS`]).
    Species = 3,
    /// Discrete: one colour per dye source number ([`dye_colour`]), 0 untagged.
    Dye = 4,
}

/// The species colours, linear RGB, repeating after eight: the colour-blind-safe qualitative
/// palette of M. Okabe and K. Ito, "Color Universal Design" (2008) (sky blue, orange, bluish
/// green, reddish purple, yellow, blue, vermillion, grey), converted from sRGB. Mirrored in
/// `species_colour` of `shaders/atoms.wgsl`.
pub const SPECIES_COLOURS: [[f32; 3]; 8] = [
    [0.0931, 0.4564, 0.8148],
    [0.7913, 0.3467, 0.0000],
    [0.0000, 0.3419, 0.1714],
    [0.6038, 0.1912, 0.3864],
    [0.8714, 0.7758, 0.0545],
    [0.0000, 0.1683, 0.4452],
    [0.6654, 0.1119, 0.0000],
    [0.4969, 0.4969, 0.4969],
];

/// The colour of species `index` (linear RGB).
pub fn species_colour(index: usize) -> [f32; 3] {
    SPECIES_COLOURS[index % SPECIES_COLOURS.len()]
}

/// The dye sources' colours, linear RGB, repeating after six: the colour-blind-safe "vibrant"
/// qualitative palette of P. Tol ("Colour schemes", SRON/EPS/TN/09-002, 2021) without its
/// grey (magenta, cyan, orange, teal, blue, red), converted from sRGB; saturated where the
/// species colours are soft, so dye never reads as a species. Mirrored in `dye_colour` of
/// `shaders/atoms.wgsl`.
pub const DYE_COLOURS: [[f32; 3]; 6] = [
    [0.8550, 0.0331, 0.1845],
    [0.0331, 0.4969, 0.8550],
    [0.8550, 0.1845, 0.0331],
    [0.0000, 0.3185, 0.2462],
    [0.0000, 0.1845, 0.4969],
    [0.6038, 0.0331, 0.0056],
];

/// The colour of dye source `number` (1-based; linear RGB); 0, untagged, is the dimmed grey.
pub fn dye_colour(number: u16) -> [f32; 3] {
    match number {
        0 => UNTAGGED_DIMMED,
        n => DYE_COLOURS[(n as usize - 1) % DYE_COLOURS.len()],
    }
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
    /// Linear RGB at `t` in [0, 1] (for `Species`, `t` is the species index).
    pub fn colour(self, t: f32, single: [f32; 3]) -> [f32; 3] {
        match self {
            Palette::Viridis => poly(&VIRIDIS, t),
            Palette::Warm => poly(&WARM, t),
            Palette::Single => single,
            Palette::Species => species_colour(t.max(0.0).round() as usize),
            Palette::Dye => dye_colour(t.clamp(0.0, u16::MAX as f32).round() as u16),
        }
    }
}

/// K. Moreland's cool-warm diverging map ("Diverging color maps for scientific
/// visualization", 2009), sampled every eighth of the range in sRGB: blue below the centre,
/// grey at it, red above.
const COOL_WARM: [[u8; 3]; 9] = [
    [59, 76, 192],
    [98, 130, 234],
    [141, 176, 254],
    [184, 208, 249],
    [221, 221, 221],
    [245, 196, 173],
    [244, 154, 123],
    [222, 96, 77],
    [180, 4, 38],
];

fn srgb_to_linear(c: u8) -> f32 {
    let c = c as f32 / 255.0;
    if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
}

/// The cool-warm diverging map at `t` in [0, 1] (0.5 is the centre), linear RGB.
pub fn diverging(t: f32) -> [f32; 3] {
    let x = t.clamp(0.0, 1.0) * (COOL_WARM.len() - 1) as f32;
    let i = (x.floor() as usize).min(COOL_WARM.len() - 2);
    let f = x - i as f32;
    // Interpolated in sRGB (as the published table is), then made linear.
    std::array::from_fn(|k| {
        let a = COOL_WARM[i][k] as f32;
        let b = COOL_WARM[i + 1][k] as f32;
        srgb_to_linear((a + f * (b - a)).round().clamp(0.0, 255.0) as u8)
    })
}

/// The colour of a flow-field layer at `t` in [0, 1] of its range: signed layers (velocity
/// components, vorticity) diverge about the centre, temperature is warm, magnitudes viridis.
pub fn field_colour(kind: crate::flow::FieldKind, t: f32) -> [f32; 3] {
    if kind.signed() {
        diverging(t)
    } else if kind == crate::flow::FieldKind::Temperature {
        Palette::Warm.colour(t, [0.0; 3])
    } else {
        Palette::Viridis.colour(t, [0.0; 3])
    }
}

impl ColourBy {
    pub fn palette(self) -> Palette {
        match self {
            ColourBy::Speed | ColourBy::Height => Palette::Viridis,
            ColourBy::KineticEnergy => Palette::Warm,
            ColourBy::Single => Palette::Single,
            ColourBy::Species => Palette::Species,
            ColourBy::Dye => Palette::Dye,
        }
    }

    /// The scalar the simulation publishes with each position.
    pub fn scalar(self) -> ColourScalar {
        match self {
            ColourBy::Speed | ColourBy::Single => ColourScalar::Speed,
            ColourBy::KineticEnergy => ColourScalar::KineticEnergy,
            ColourBy::Height => ColourScalar::Height,
            ColourBy::Species => ColourScalar::Species,
            ColourBy::Dye => ColourScalar::Dye,
        }
    }

    /// A range that shows a fluid at reduced temperature `t` in a box of height `y_range`.
    pub fn default_range(self, t: f64, y_range: [f64; 2]) -> [f32; 2] {
        match self {
            ColourBy::Speed | ColourBy::Single => [0.0, (3.0 * t.max(0.05).sqrt()) as f32],
            ColourBy::KineticEnergy => [0.0, (4.0 * t.max(0.05)) as f32],
            ColourBy::Height => [y_range[0] as f32, y_range[1] as f32],
            ColourBy::Species => [0.0, (SPECIES_COLOURS.len() - 1) as f32],
            ColourBy::Dye => [0.0, DYE_COLOURS.len() as f32],
        }
    }

    /// Legend title and the value of a reduced scalar in argon units, as text.
    pub fn legend_label(self, reduced: f32) -> String {
        match self {
            ColourBy::Speed | ColourBy::Single => format!("{:.0}", units::reduced_speed_to_m_per_s(reduced as f64)),
            ColourBy::KineticEnergy => format!("{:.2}", units::reduced_energy_to_kj_per_mol(reduced as f64)),
            ColourBy::Height => format!("{:.1}", units::reduced_length_to_nm(reduced as f64)),
            ColourBy::Species | ColourBy::Dye => format!("{:.0}", reduced),
        }
    }

    pub fn legend_title(self) -> &'static str {
        match self {
            ColourBy::Speed | ColourBy::Single => "speed (m/s)",
            ColourBy::KineticEnergy => "kinetic energy (kJ/mol)",
            ColourBy::Height => "height (nm)",
            ColourBy::Species => "species",
            ColourBy::Dye => "dye",
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

    #[test]
    fn diverging_map_is_blue_grey_red() {
        let (lo, mid, hi) = (diverging(0.0), diverging(0.5), diverging(1.0));
        assert!(lo[2] > 0.5 && lo[0] < 0.1, "{lo:?}");
        assert!((mid[0] - mid[2]).abs() < 1e-6 && mid[0] > 0.6, "{mid:?}");
        assert!(hi[0] > 0.4 && hi[2] < 0.05, "{hi:?}");
    }

    #[test]
    fn species_colours_are_distinct_and_match_the_shader() {
        for (i, a) in SPECIES_COLOURS.iter().enumerate() {
            for b in &SPECIES_COLOURS[i + 1..] {
                let d: f32 = (0..3).map(|k| (a[k] - b[k]).abs()).sum();
                assert!(d > 0.2, "{a:?} and {b:?} are too alike");
            }
        }
        assert_eq!(Palette::Species.colour(1.0, [0.0; 3]), SPECIES_COLOURS[1]);
        assert_eq!(species_colour(9), SPECIES_COLOURS[1]);
        // The shader's table is this one, value for value.
        let wgsl = include_str!("../../shaders/atoms.wgsl");
        for c in SPECIES_COLOURS {
            let entry = format!("vec3<f32>({:.4}, {:.4}, {:.4})", c[0], c[1], c[2]);
            assert!(wgsl.contains(&entry), "{entry} missing from atoms.wgsl");
        }
    }

    #[test]
    fn dye_colours_are_distinct_from_each_other_and_the_untagged_grey_and_match_the_shader() {
        let all: Vec<[f32; 3]> = DYE_COLOURS.iter().copied().chain([UNTAGGED_DIMMED, UNTAGGED_NORMAL]).collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                let d: f32 = (0..3).map(|k| (a[k] - b[k]).abs()).sum();
                assert!(d > 0.2, "{a:?} and {b:?} are too alike");
            }
        }
        // Saturated: every dye colour's channels spread at least 0.3 (the greys' do not).
        for c in DYE_COLOURS {
            let spread = c.iter().fold(0f32, |m, &v| m.max(v)) - c.iter().fold(1f32, |m, &v| m.min(v));
            assert!(spread >= 0.3, "{c:?} is too grey for dye");
        }
        assert_eq!(dye_colour(0), UNTAGGED_DIMMED);
        assert_eq!(dye_colour(1), DYE_COLOURS[0]);
        assert_eq!(dye_colour(7), DYE_COLOURS[0]);
        assert_eq!(Palette::Dye.colour(2.0, [0.0; 3]), DYE_COLOURS[1]);
        let wgsl = include_str!("../../shaders/atoms.wgsl");
        for c in DYE_COLOURS {
            let entry = format!("vec3<f32>({:.4}, {:.4}, {:.4})", c[0], c[1], c[2]);
            assert!(wgsl.contains(&entry), "{entry} missing from atoms.wgsl");
        }
    }
}
