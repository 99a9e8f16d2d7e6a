//! The one error type of the scene module, [`SceneError`]: every message starts with
//! `file:line:column` (where the problem has a place in the text), names the field, its value
//! and what would be accepted, so a person can fix the file without reading code.

use std::fmt;

/// A place in a scene text: `file:line:column` (1-based, columns count characters), or just
/// the file when the problem has no single place (a scene built in memory, an empty file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    /// 0 when unknown.
    pub line: usize,
    pub col: usize,
}

impl Location {
    pub fn new(file: &str, line: usize, col: usize) -> Self {
        Location { file: file.to_string(), line, col }
    }

    /// A location naming only the file.
    pub fn file_only(file: &str) -> Self {
        Location::new(file, 0, 0)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 { write!(f, "{}", self.file) } else { write!(f, "{}:{}:{}", self.file, self.line, self.col) }
    }
}

/// Everything that can be wrong with a scene file or a scene.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SceneError {
    /// The file could not be opened or read, or is larger than [`super::MAX_FILE_BYTES`].
    #[error("{path}: cannot read the scene file: {reason}")]
    Unreadable { path: String, reason: String },
    /// The text is not a well-formed scene: bad RON, an unknown or missing field, a wrong type,
    /// an unsupported version, text that is not UTF-8.
    #[error("{at}: {message}")]
    Syntax { at: Location, message: String },
    /// A value outside its allowed range; `allowed` says what is accepted.
    #[error("{at}: field `{field}` = {value} is out of range: {allowed}")]
    OutOfRange { at: Location, field: String, value: String, allowed: String },
    /// A value that is not acceptable for another reason (overlapping atoms, an obstacle
    /// outside the tank, a degenerate polygon); `message` says why and what to do.
    #[error("{at}: field `{field}`: {message}")]
    Invalid { at: Location, field: String, message: String },
    /// The scene is valid but cannot be turned into a system (no atoms fit, a fill cannot
    /// be placed).
    #[error("{at}: {message}")]
    Build { at: Location, message: String },
    /// The scene could not be written.
    #[error("{path}: cannot save the scene: {reason}")]
    Save { path: String, reason: String },
}

impl SceneError {
    /// Line and column (1-based) of the problem in the text, when it has one.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        match self {
            SceneError::Syntax { at, .. }
            | SceneError::OutOfRange { at, .. }
            | SceneError::Invalid { at, .. }
            | SceneError::Build { at, .. } => (at.line > 0).then_some((at.line, at.col)),
            SceneError::Unreadable { .. } | SceneError::Save { .. } => None,
        }
    }

    /// The scene field the error is about (`potential.cutoff`, `atoms[0].density`), if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            SceneError::OutOfRange { field, .. } | SceneError::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// A number as a person reads it in a message: [`crate::numfmt::short`] (as written when short,
/// else 4 significant digits, exponent notation for very large or small magnitudes; f64's
/// `Display` would print 300 zeros for 1e-300).
pub fn num(x: f64) -> String {
    crate::numfmt::short(x)
}

/// A vector as RON writes it: `(1, 2.5, 3)`.
pub fn tuple(xs: &[f64]) -> String {
    let parts: Vec<String> = xs.iter().map(|&x| num(x)).collect();
    format!("({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_reads_like_a_compiler_message() {
        let e = SceneError::OutOfRange {
            at: Location::new("scenes/x.ron", 12, 5),
            field: "potential.cutoff".into(),
            value: num(0.3),
            allowed: "allowed range is [1, 10] sigma".into(),
        };
        assert_eq!(
            e.to_string(),
            "scenes/x.ron:12:5: field `potential.cutoff` = 0.3 is out of range: allowed range is [1, 10] sigma"
        );
        assert_eq!(e.line_col(), Some((12, 5)));
        assert_eq!(Location::file_only("a.ron").to_string(), "a.ron");
    }

    #[test]
    fn numbers_stay_short() {
        assert_eq!(num(1e-300), "1e-300");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(f64::INFINITY), "inf");
        assert_eq!(tuple(&[1.0, 2.5]), "(1, 2.5)");
    }
}
