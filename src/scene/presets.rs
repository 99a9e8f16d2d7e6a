//! The preset scenes shipped in `assets/scenes/`, embedded in the binary so that
//! `argon-sandbox run` and the app work from any folder.

/// (name, RON text) of every preset, the default first.
pub const PRESETS: [(&str, &str); 5] = [
    ("default", include_str!("../../assets/scenes/default.ron")),
    ("in_lj", include_str!("../../assets/scenes/in_lj.ron")),
    ("channel_flow", include_str!("../../assets/scenes/channel_flow.ron")),
    ("droplet", include_str!("../../assets/scenes/droplet.ron")),
    ("ar_kr_mixture", include_str!("../../assets/scenes/ar_kr_mixture.ron")),
];

/// The RON text of the preset called `name` (file stem, e.g. "channel_flow").
pub fn preset(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}
