//! The error every reader in `io` returns: either the file could not be read at all, or a
//! line in it is wrong, shown as `file:line: field: problem (fix)`.

use std::fmt;
use std::io;

/// A file that could not be read, or a line in it that is wrong.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Opening or reading the file failed.
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: io::Error },
    /// The contents are wrong at `line` (1-based).
    #[error("{file}:{line}: {field}: {problem}{}", Fix(.fix))]
    Parse { file: String, line: u64, field: String, problem: String, fix: Option<String> },
}

struct Fix<'a>(&'a Option<String>);

impl fmt::Display for Fix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(fix) => write!(f, " ({fix})"),
            None => Ok(()),
        }
    }
}

impl FileError {
    pub(crate) fn io(file: &str, source: io::Error) -> Self {
        FileError::Io { file: file.to_owned(), source }
    }

    pub(crate) fn parse(file: &str, line: u64, field: impl Into<String>, problem: impl Into<String>) -> Self {
        FileError::Parse { file: file.to_owned(), line, field: field.into(), problem: problem.into(), fix: None }
    }

    /// Adds the hint shown in parentheses after the problem.
    pub(crate) fn with_fix(mut self, hint: impl Into<String>) -> Self {
        if let FileError::Parse { fix, .. } = &mut self {
            *fix = Some(hint.into());
        }
        self
    }

    /// The 1-based line of a parse error.
    pub fn line(&self) -> Option<u64> {
        match self {
            FileError::Parse { line, .. } => Some(*line),
            FileError::Io { .. } => None,
        }
    }

    /// The field a parse error is about (e.g. `column 3 (pos y)`, `Lattice`).
    pub fn field(&self) -> Option<&str> {
        match self {
            FileError::Parse { field, .. } => Some(field),
            FileError::Io { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_fix() {
        let e = FileError::parse("state.xyz", 7, "column 3 (pos y)", "\"abc\" is not a number");
        assert_eq!(e.to_string(), "state.xyz:7: column 3 (pos y): \"abc\" is not a number");
        let e = e.with_fix("write a decimal number");
        assert_eq!(e.to_string(), "state.xyz:7: column 3 (pos y): \"abc\" is not a number (write a decimal number)");
        assert_eq!(e.line(), Some(7));
        assert_eq!(e.field(), Some("column 3 (pos y)"));
    }
}
