//! Reading and writing scene files: [`Scene::load`] and [`Scene::from_str`] (size limit,
//! UTF-8, version, strict RON, then validation, every failure a located [`SceneError`]), and
//! [`Scene::to_ron`] / [`Scene::save`] (pretty RON with a header, written atomically).

use std::io::Read;
use std::path::Path;

use ron::error::{Error as RonError, SpannedError};
use ron::extensions::Extensions;

use super::error::{Location, SceneError};
use super::locate::{FieldPath, line_col, locate, next_token, offset_of};
use super::{SCENE_VERSION, Scene, validate};

/// Scene files larger than this are refused before they are read.
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Scene files accept `Some(x)` or plain `x` for optional values.
fn options() -> ron::Options {
    ron::Options::default().with_default_extension(Extensions::IMPLICIT_SOME)
}

/// Only the version, read first so a file from a newer build gets a version error rather than
/// an unknown-field error.
#[derive(serde::Deserialize)]
#[serde(rename = "Scene")]
struct VersionProbe {
    #[serde(default)]
    version: Option<u64>,
}

/// The scene field a schema type stands for, for messages.
fn describe(type_name: &str) -> String {
    let field = match type_name {
        "Scene" => return "the scene".into(),
        "TankSpec" => "box",
        "PotentialSpec" => "potential",
        "WallSpec" => "walls",
        "IntegratorSpec" => "integrator",
        "ForcesSpec" => "forces",
        "ObstacleSpec" => "obstacle_wall",
        "Tunnel" => "tunnel",
        "Region" => "region",
        "SpeciesSpec" => "species",
        "Boundary" => "box.boundaries",
        "Thermostat" | "Nve" | "Berendsen" | "Csvr" | "Langevin" | "Hmc" | "HmcNpt" => "thermostat",
        "LatticeKind" => "kind",
        "Precision" => "precision",
        "Fill" | "Lattice" | "Gas" | "LiquidSlab" | "Atoms" => "atoms",
        "Shape" | "Circle" | "Rectangle" | "Segment" | "Polygon" | "Stroke" => "obstacles",
        other => return format!("`{other}`"),
    };
    if matches!(
        type_name,
        "Lattice"
            | "Gas"
            | "LiquidSlab"
            | "Atoms"
            | "Circle"
            | "Rectangle"
            | "Segment"
            | "Polygon"
            | "Stroke"
            | "Berendsen"
            | "Csvr"
            | "Langevin"
    ) {
        format!("`{field}` entry `{type_name}`")
    } else {
        format!("`{field}`")
    }
}

fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}

/// A `ron` error as a scene error with a friendlier message.
fn syntax_error(e: &SpannedError, file: &str, text: &str) -> SceneError {
    let message = match &e.code {
        RonError::NoSuchStructField { expected, found, outer } => format!(
            "unknown field `{found}` in {}; expected one of: {}",
            describe(outer.as_deref().unwrap_or("")),
            one_of(expected)
        ),
        RonError::NoSuchEnumVariant { expected, found, outer } => format!(
            "unknown variant `{found}` in {}; expected one of: {}",
            describe(outer.as_deref().unwrap_or("")),
            one_of(expected)
        ),
        RonError::MissingStructField { field, outer } => format!(
            "missing field `{field}` in {}: it has no default, so it must be written",
            describe(outer.as_deref().unwrap_or(""))
        ),
        RonError::DuplicateStructField { field, outer } => {
            format!("field `{field}` appears twice in {}", describe(outer.as_deref().unwrap_or("")))
        }
        RonError::IntegerOutOfBounds => "integer out of range for this field".into(),
        RonError::Eof => "unexpected end of file: a `(`, `[` or `\"` is not closed".into(),
        RonError::ExpectedDifferentLength { expected, found } => {
            format!("expected {expected} but found {found} (write vectors as `(x, y, z)`, 2D points as `(x, y)`)")
        }
        other => {
            let said = other.to_string();
            let mut chars = said.chars();
            let said: String = chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or(said);
            // Name the field whose value is wrong (`precision: "single"`: expected identifier).
            let start = offset_of(text, e.span.start.line, e.span.start.col);
            match field_before(text, next_token(text, start)) {
                Some(field) => format!("field `{field}`: {said}"),
                None => said,
            }
        }
    };
    let at = if text.trim().is_empty() {
        Location::file_only(file)
    } else {
        // ron's span may start on the whitespace before the offending token.
        let start = offset_of(text, e.span.start.line, e.span.start.col);
        let token = next_token(text, start);
        let (line, col) = if token < text.len() { line_col(text, token) } else { line_col(text, start) };
        Location::new(file, line, col)
    };
    SceneError::Syntax { at, message }
}

/// The field written just before the value at byte `token` on the same line (`name:`), if any.
fn field_before(text: &str, token: usize) -> Option<&str> {
    let before = text.get(..token.min(text.len()))?;
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let head = line.trim_end().strip_suffix(':')?.trim_end();
    let start = head.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let name = &head[start..];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

impl Scene {
    /// Reads, parses and validates the scene file at `path`.
    pub fn load(path: &Path) -> Result<Scene, SceneError> {
        let name = path.display().to_string();
        let unreadable = |reason: String| SceneError::Unreadable { path: name.clone(), reason };
        let meta = std::fs::metadata(path).map_err(|e| unreadable(e.to_string()))?;
        if meta.is_dir() {
            return Err(unreadable("it is a folder, not a file".into()));
        }
        let too_large = |bytes: u64| {
            unreadable(format!(
                "it is {bytes} bytes, larger than the {MAX_FILE_BYTES} bytes (256 MiB) a scene file may be; \
                 save large states as extended XYZ and load them with `--init`"
            ))
        };
        if meta.len() > MAX_FILE_BYTES {
            return Err(too_large(meta.len()));
        }
        let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| unreadable(e.to_string()))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(too_large(bytes.len() as u64));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            let good = e.utf8_error().valid_up_to();
            let valid = std::str::from_utf8(&e.as_bytes()[..good]).unwrap_or("");
            let (line, col) = line_col(valid, valid.len());
            SceneError::Syntax {
                at: Location::new(&name, line, col),
                message: "the file is not UTF-8 text (scene files are UTF-8 RON; was a binary file given?)".into(),
            }
        })?;
        Scene::from_str(&text, &name)
    }

    /// Parses and validates scene text; `source` names it in messages (usually the file name).
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, source: &str) -> Result<Scene, SceneError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return Err(SceneError::Syntax {
                at: Location::file_only(source),
                message: format!("the file is empty: a scene starts with `(version: {SCENE_VERSION}, box: ...`"),
            });
        }
        let probe: VersionProbe = options().from_str(text).map_err(|e| syntax_error(&e, source, text))?;
        match probe.version {
            None => {
                return Err(SceneError::Syntax {
                    at: Location::new(source, 1, 1),
                    message: format!(
                        "missing field `version`: write `version: {SCENE_VERSION},` as the scene's first field"
                    ),
                });
            }
            Some(v) if v != SCENE_VERSION as u64 => {
                let found = locate(text, &FieldPath::fields(&["version"]));
                let (line, col) = line_col(text, found.offset);
                return Err(SceneError::Syntax {
                    at: Location::new(source, line, col),
                    message: format!(
                        "scene version {v} is not supported: this build reads version {SCENE_VERSION} only{}",
                        if v > SCENE_VERSION as u64 { " (the file comes from a newer argon-sandbox)" } else { "" }
                    ),
                });
            }
            Some(_) => {}
        }
        let scene: Scene = options().from_str(text).map_err(|e| syntax_error(&e, source, text))?;
        validate::check(&scene).map_err(|p| p.into_error(source, Some(text)))?;
        Ok(scene)
    }

    /// Checks every value of a scene made in memory (files are checked when parsed). Errors
    /// name the scene by its `name` and carry no line numbers.
    pub fn validate(&self) -> Result<(), SceneError> {
        validate::check(self).map_err(|p| p.into_error(&self.label(), None))
    }

    /// How messages name a scene that has no file.
    pub(crate) fn label(&self) -> String {
        if self.name.is_empty() { "scene".into() } else { format!("scene `{}`", self.name) }
    }

    /// The scene as pretty RON with a header comment; [`Scene::from_str`] reads it back equal.
    pub fn to_ron(&self) -> String {
        self.try_to_ron().unwrap_or_else(|e| format!("// this scene could not be written as RON: {e}\n"))
    }

    fn try_to_ron(&self) -> Result<String, SceneError> {
        let config = ron::ser::PrettyConfig::new().depth_limit(4);
        let body = ron::ser::to_string_pretty(self, config)
            .map_err(|e| SceneError::Save { path: self.label(), reason: e.to_string() })?;
        Ok(format!(
            "// argon-sandbox scene, format version {SCENE_VERSION}.\n\
             // Units: lengths in sigma (3.405 Å), times in tau (2.156 ps), accelerations in sigma/tau^2,\n\
             // densities in atoms per sigma^3, temperature in kelvin. Every field is explained in\n\
             // assets/scenes/default.ron.\n{body}\n"
        ))
    }

    /// Writes the scene to `path` atomically (temporary file, fsync, rename).
    pub fn save(&self, path: &Path) -> Result<(), SceneError> {
        let name = path.display().to_string();
        let text = self.try_to_ron().map_err(|e| SceneError::Save { path: name.clone(), reason: e.to_string() })?;
        crate::io::atomic::write_atomic(path, text.as_bytes())
            .map_err(|e| SceneError::Save { path: name, reason: e.to_string() })
    }
}
