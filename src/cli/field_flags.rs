//! The flow-field flags `run` and `export-lammps` share (`--field-bin`, `--field-every`,
//! `--field-window`, `--field-3d`): how they override a scene's `fields`, and which flag a
//! field setting's error belongs to.

use clap::Args;

use crate::flow::FieldSpec;

/// Field settings given on the command line; each overrides the scene's (or the default).
#[derive(Args, Clone, Debug, Default)]
pub struct FieldFlags {
    /// Field bin edge in sigma (default: the scene's `fields`, else 2).
    #[arg(long, value_name = "SIGMA")]
    pub field_bin: Option<f64>,
    /// Sample the fields every this many steps (default: the scene's, else 10).
    #[arg(long, value_name = "STEPS")]
    pub field_every: Option<u64>,
    /// Average the fields over windows of this many tau (default: the scene's, else 50).
    #[arg(long, value_name = "TAU")]
    pub field_window: Option<f64>,
    /// Bin the fields in 3D (layers along z) instead of through the depth.
    #[arg(long)]
    pub field_3d: bool,
}

/// The flags, in the order messages list them.
pub const FLAGS: [&str; 4] = ["--field-bin", "--field-every", "--field-window", "--field-3d"];

impl FieldFlags {
    /// The first flag given, if any.
    pub fn first_given(&self) -> Option<&'static str> {
        let given = [self.field_bin.is_some(), self.field_every.is_some(), self.field_window.is_some(), self.field_3d];
        FLAGS.into_iter().zip(given).find_map(|(f, g)| g.then_some(f))
    }

    /// `spec` with the given flags applied.
    pub fn apply(&self, mut spec: FieldSpec) -> FieldSpec {
        spec.bin = self.field_bin.unwrap_or(spec.bin);
        spec.every = self.field_every.unwrap_or(spec.every);
        spec.window_tau = self.field_window.unwrap_or(spec.window_tau);
        spec.three_d |= self.field_3d;
        spec
    }
}

/// The flag that sets the field setting `field` of [`FieldSpec`] (as its errors name it).
pub fn flag_of(field: &str) -> Option<&'static str> {
    match field {
        "bin" => Some("--field-bin"),
        "every" => Some("--field-every"),
        "window_tau" => Some("--field-window"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_scene_and_the_first_given_is_named() {
        let scene = FieldSpec { bin: 3.0, every: 20, window_tau: 40.0, three_d: false, ..FieldSpec::default() };
        let none = FieldFlags::default();
        assert_eq!(none.first_given(), None);
        assert_eq!(none.apply(scene.clone()), scene);
        let some = FieldFlags { field_every: Some(5), field_3d: true, ..FieldFlags::default() };
        assert_eq!(some.first_given(), Some("--field-every"));
        let s = some.apply(scene.clone());
        assert_eq!((s.bin, s.every, s.window_tau, s.three_d), (3.0, 5, 40.0, true));
        assert_eq!(FieldFlags { field_3d: true, ..FieldFlags::default() }.first_given(), Some("--field-3d"));
        assert_eq!(flag_of("window_tau"), Some("--field-window"));
        assert_eq!(flag_of("slab"), None);
    }
}
