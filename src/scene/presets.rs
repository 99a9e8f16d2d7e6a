//! The preset scenes shipped in `assets/scenes/`, embedded in the binary (with their gallery
//! pictures from `assets/thumbnails/`) so that the app and every command work from any
//! folder, and a preset's name works wherever a scene file does (`argon-sandbox twin_eddies`,
//! `run vortex_street`, ...). `tests/scene_presets.rs` keeps this list and the folder equal.
//!
//! Also what a preset is made for (backend, size) and the estimate of how fast a scene would
//! run on a backend, behind the app's warning before it opens a scene far too big to watch.

/// Where a preset is meant to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MadeFor {
    /// Small enough for any backend, a laptop's CPU included.
    Any,
    /// Made to show on a CPU (a few tens of thousands of atoms).
    Cpu,
    /// Made for a GPU backend (a million atoms or more).
    Gpu,
}

impl MadeFor {
    pub fn label(self) -> &'static str {
        match self {
            MadeFor::Any => "any backend",
            MadeFor::Cpu => "CPU or GPU",
            MadeFor::Gpu => "GPU (CUDA)",
        }
    }
}

/// One preset scene.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The file stem in `assets/scenes/` (what the command line takes).
    pub name: &'static str,
    /// The scene file's text (RON).
    pub text: &'static str,
    /// What a person sees in it, in a sentence or two (the gallery's card).
    pub shows: &'static str,
    pub made_for: MadeFor,
    /// Atoms the scene builds (a test checks it against the build).
    pub atoms: usize,
    /// A small picture of the scene (PNG, made by `record` from the scene itself by
    /// `assets/thumbnails/make.sh`).
    pub thumbnail: &'static [u8],
}

macro_rules! preset {
    ($name:literal, $made_for:expr, $atoms:expr, $shows:expr) => {
        Preset {
            name: $name,
            text: include_str!(concat!("../../assets/scenes/", $name, ".ron")),
            shows: $shows,
            made_for: $made_for,
            atoms: $atoms,
            thumbnail: include_bytes!(concat!("../../assets/thumbnails/", $name, ".png")),
        }
    };
}

/// Every preset, the default first, then in the order the gallery shows them.
pub const PRESETS: [Preset; 7] = [
    preset!(
        "default",
        MadeFor::Any,
        9_573,
        "Liquid argon settling under gravity in a closed tank, with obstacles to draw around. \
         The place to start: pour, heat, cool, draw walls and watch it flow."
    ),
    preset!(
        "twin_eddies",
        MadeFor::Cpu,
        34_887,
        "A wind tunnel at Reynolds number 24: the fluid separates behind a cylinder into a pair \
         of standing eddies (the Flow view shows them; the wake readout gives their length)."
    ),
    preset!(
        "vortex_street",
        MadeFor::Gpu,
        1_174_416,
        "A Karman vortex street at Reynolds number 70, made of 1.2 million atoms: vortices \
         shed in turn from a cylinder, with the Strouhal number measured live."
    ),
    preset!(
        "channel_flow",
        MadeFor::Any,
        5_484,
        "A dense fluid driven through a channel with no-slip walls past a cylinder: a \
         Poiseuille profile (probe it) and the viscosity from the flow."
    ),
    preset!(
        "droplet",
        MadeFor::Any,
        1_344,
        "A block of liquid argon on an attractive floor spreads into a wetting film; weaken the \
         walls to watch it bead up."
    ),
    preset!(
        "ar_kr_mixture",
        MadeFor::Any,
        2_738,
        "A liquid slab of argon and krypton with its vapour, coloured by species: the vapour is \
         mostly argon."
    ),
    preset!(
        "in_lj",
        MadeFor::Any,
        32_000,
        "The LAMMPS in.lj benchmark (32,000 atoms, NVE): compare the numbers and the speed with \
         LAMMPS, switch algorithm and precision and watch steps/s change."
    ),
];

/// The RON text of the preset called `name` (file stem, e.g. "channel_flow").
pub fn preset(name: &str) -> Option<&'static str> {
    find(name).map(|p| p.text)
}

/// The preset called `name`, with or without the `.ron` extension.
pub fn find(name: &str) -> Option<&'static Preset> {
    let stem = name.strip_suffix(".ron").unwrap_or(name);
    PRESETS.iter().find(|p| p.name == stem)
}

/// The presets' names, comma-separated (for errors that list them).
pub fn names() -> String {
    PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// Atom-steps per second a backend is assumed to manage before it has run anything:
/// the CPU backend about 7e6 per core (twin eddies: 36,000 atoms at about 400 steps/s on two
/// AVX-512 cores), a GPU about 1e9 (the vortex street: 1.17M atoms at 2,468 steps/s on an
/// H200; a laptop GPU a few times less).
pub fn assumed_atom_steps_per_s(gpu: bool, cores: usize) -> f64 {
    if gpu { 1.0e9 } else { 7.0e6 * cores.max(1) as f64 }
}

/// Below this many steps per second a scene is far too slow to watch (less than one step
/// per displayed frame).
pub const WATCHABLE_STEPS_PER_S: f64 = 60.0;

/// The steps per second a scene of `atoms` atoms is estimated to run at, from a backend's
/// atom-steps per second (measured on the running system, else assumed).
pub fn estimated_steps_per_s(atoms: usize, atom_steps_per_s: f64) -> f64 {
    atom_steps_per_s / atoms.max(1) as f64
}

/// 1174416 -> "1,174,416" (atom counts in listings and the gallery).
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups_digits() {
        assert_eq!(super::thousands(1_174_416), "1,174,416");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(32_000), "32,000");
        assert_eq!(super::thousands(0), "0");
    }
}
