//! Finding a field in scene text: given a path such as `integrator.dt` or
//! `obstacles[2].radius`, the line and column where that field's value starts, so errors
//! found after parsing (range checks, overlaps) still point into the file.
//!
//! A small RON-aware scanner: it tracks nesting of `()`, `[]`, `{}`, skips strings, chars and
//! (nested) comments, looks through `Some(...)` and struct or variant names. It runs only on
//! text that already parsed, uses no recursion, and never panics: when part of a path is not
//! in the text (a default was used) it returns the deepest part it found.

use std::fmt;

/// One step of a path into a scene: a named field or a list/tuple index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Field(&'static str),
    Index(usize),
}

/// A path into a scene, e.g. `atoms[0].region.lo[1]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Seg>);

impl FieldPath {
    #[cfg(test)]
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }

    /// A path from dotted field names (no indices), e.g. `"integrator.dt"`.
    pub fn fields(names: &[&'static str]) -> Self {
        FieldPath(names.iter().map(|&n| Seg::Field(n)).collect())
    }

    pub fn field(mut self, name: &'static str) -> Self {
        self.0.push(Seg::Field(name));
        self
    }

    pub fn index(mut self, i: usize) -> Self {
        self.0.push(Seg::Index(i));
        self
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Field(name) if i == 0 => write!(f, "{name}")?,
                Seg::Field(name) => write!(f, ".{name}")?,
                Seg::Index(k) => write!(f, "[{k}]")?,
            }
        }
        Ok(())
    }
}

/// Where a path was found: the byte offset of the value, and whether the whole path was
/// found (false: the offset is that of the deepest ancestor present in the text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    pub offset: usize,
    pub complete: bool,
}

/// 1-based line and column (in characters, as `ron` counts them) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = 1 + before.bytes().filter(|&b| b == b'\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, 1 + before[line_start..].chars().count())
}

/// Finds where the value at `path` starts in `text`.
pub fn locate(text: &str, path: &FieldPath) -> Found {
    let s = text.as_bytes();
    let mut pos = skip_header(s);
    let mut found = Found { offset: pos, complete: path.0.is_empty() };
    for (depth, seg) in path.0.iter().enumerate() {
        let next = match seg {
            Seg::Field(name) => find_field(s, pos, name),
            Seg::Index(k) => find_index(s, pos, *k),
        };
        match next {
            Some(p) => {
                pos = p;
                found = Found { offset: p, complete: depth + 1 == path.0.len() };
            }
            None => break,
        }
    }
    found
}

/// The byte offset of 1-based (line, column in characters), clamped to the text.
pub fn offset_of(text: &str, line: usize, col: usize) -> usize {
    let start = if line <= 1 { 0 } else { text.match_indices('\n').nth(line - 2).map_or(text.len(), |(i, _)| i + 1) };
    let rest = &text[start..];
    start + rest.char_indices().nth(col.saturating_sub(1)).map_or(rest.len(), |(i, _)| i)
}

/// The offset of the next token at or after `offset` (past whitespace and comments).
pub fn next_token(text: &str, offset: usize) -> usize {
    skip_trivia(text.as_bytes(), offset)
}

fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Skips whitespace and comments (`//`, nested `/* */`).
fn skip_trivia(s: &[u8], mut i: usize) -> usize {
    loop {
        match (at(s, i), at(s, i + 1)) {
            (b' ' | b'\t' | b'\n' | b'\r', _) => i += 1,
            (b'/', b'/') => {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
            }
            (b'/', b'*') => {
                let mut depth = 0usize;
                while i < s.len() {
                    if at(s, i) == b'/' && at(s, i + 1) == b'*' {
                        depth += 1;
                        i += 2;
                    } else if at(s, i) == b'*' && at(s, i + 1) == b'/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            _ => return i.min(s.len()),
        }
    }
}

/// Skips leading trivia and `#![enable(...)]` attributes.
fn skip_header(s: &[u8]) -> usize {
    let mut i = skip_trivia(s, 0);
    while at(s, i) == b'#' && at(s, i + 1) == b'!' {
        let mut j = i + 2;
        while j < s.len() && s[j] != b'[' {
            j += 1;
        }
        i = skip_trivia(s, skip_value(s, j + 1).saturating_add(1));
    }
    i
}

/// If a string or char literal starts at `i`, the index just past it.
fn skip_literal(s: &[u8], i: usize) -> Option<usize> {
    match at(s, i) {
        b'"' => {
            let mut j = i + 1;
            while j < s.len() {
                match s[j] {
                    b'\\' => j += 2,
                    b'"' => return Some(j + 1),
                    _ => j += 1,
                }
            }
            Some(s.len())
        }
        b'\'' => {
            let mut j = i + 1;
            if at(s, j) == b'\\' {
                j += 2;
            } else {
                j += 1;
                while j < s.len() && (s[j] & 0xC0) == 0x80 {
                    j += 1;
                }
            }
            while j < s.len() && s[j] != b'\'' && j < i + 12 {
                j += 1;
            }
            Some((j + 1).min(s.len()))
        }
        b'r' if i == 0 || !is_ident(at(s, i - 1)) => {
            let mut j = i + 1;
            while at(s, j) == b'#' {
                j += 1;
            }
            if at(s, j) != b'"' {
                return None;
            }
            let hashes = j - i - 1;
            j += 1;
            while j < s.len() {
                if s[j] == b'"' && (1..=hashes).all(|h| at(s, j + h) == b'#') {
                    return Some(j + 1 + hashes);
                }
                j += 1;
            }
            Some(s.len())
        }
        _ => None,
    }
}

/// The index just past the value starting at `i`: the next `,` or unmatched closer at depth 0.
fn skip_value(s: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < s.len() {
        if let Some(j) = skip_literal(s, i) {
            i = j;
            continue;
        }
        match s[i] {
            b'/' if matches!(at(s, i + 1), b'/' | b'*') => {
                i = skip_trivia(s, i);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
            }
            b',' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    s.len()
}

/// Reads an identifier (with an optional `r#`) at `i`: (start, end) of its name.
fn ident(s: &[u8], i: usize) -> Option<(usize, usize)> {
    let start = if at(s, i) == b'r' && at(s, i + 1) == b'#' { i + 2 } else { i };
    let mut j = start;
    while j < s.len() && is_ident(s[j]) {
        j += 1;
    }
    (j > start && !at(s, start).is_ascii_digit()).then_some((start, j))
}

/// Moves from the start of a value into its opening bracket, looking through `Some(` and a
/// struct or variant name. Returns the index just past the opener and the opener itself.
fn open(s: &[u8], mut i: usize) -> Option<(usize, u8)> {
    for _ in 0..2 {
        i = skip_trivia(s, i);
        if let Some((a, b)) = ident(s, i) {
            i = skip_trivia(s, b);
            if at(s, i) != b'(' {
                return None;
            }
            if &s[a..b] == b"Some" {
                let inner = skip_trivia(s, i + 1);
                if matches!(at(s, inner), b'(' | b'[' | b'{') || ident(s, inner).is_some() {
                    i = inner;
                    continue;
                }
            }
        }
        break;
    }
    match at(s, i) {
        c @ (b'(' | b'[' | b'{') => Some((i + 1, c)),
        _ => None,
    }
}

fn find_field(s: &[u8], pos: usize, name: &str) -> Option<usize> {
    let (mut i, opener) = open(s, pos)?;
    if opener != b'(' {
        return None;
    }
    loop {
        i = skip_trivia(s, i);
        let (a, b) = ident(s, i)?;
        i = skip_trivia(s, b);
        if at(s, i) != b':' {
            return None;
        }
        i = skip_trivia(s, i + 1);
        if &s[a..b] == name.as_bytes() {
            return Some(i);
        }
        i = skip_trivia(s, skip_value(s, i));
        if at(s, i) != b',' {
            return None;
        }
        i += 1;
    }
}

fn find_index(s: &[u8], pos: usize, k: usize) -> Option<usize> {
    let (mut i, _) = open(s, pos)?;
    for _ in 0..k {
        i = skip_trivia(s, i);
        if matches!(at(s, i), b')' | b']' | b'}' | 0) {
            return None;
        }
        i = skip_trivia(s, skip_value(s, i));
        if at(s, i) != b',' {
            return None;
        }
        i += 1;
    }
    i = skip_trivia(s, i);
    if matches!(at(s, i), b')' | b']' | b'}' | 0) { None } else { Some(i) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "#![enable(implicit_some)]\n// a comment with ( and [\nScene(\n  version: 1,\n  name: \"a, (b\",\n  integrator: (dt: 0.005, /* skin: 9 */ skin: 0.3),\n  atoms: [\n    Lattice(kind: Fcc, density: 0.8, region: Some((lo: (0, 0, 0), hi: (1, 2, 3)))),\n    Atoms(positions: [(1, 2, 3), (4, 5, 6)]),\n  ],\n)";

    fn lc(path: FieldPath) -> (usize, usize, bool) {
        let f = locate(TEXT, &path);
        let (l, c) = line_col(TEXT, f.offset);
        (l, c, f.complete)
    }

    #[test]
    fn finds_nested_fields_through_comments_strings_and_some() {
        assert_eq!(lc(FieldPath::fields(&["version"])), (4, 12, true));
        assert_eq!(lc(FieldPath::fields(&["integrator", "skin"])), (6, 47, true));
        assert_eq!(lc(FieldPath::fields(&["atoms"]).index(0).field("density")), (8, 33, true));
        assert_eq!(lc(FieldPath::fields(&["atoms"]).index(0).field("region").field("hi").index(2)), (8, 78, true));
        assert_eq!(lc(FieldPath::fields(&["atoms"]).index(1).field("positions").index(1)), (9, 34, true));
    }

    #[test]
    fn missing_parts_give_the_deepest_ancestor() {
        assert_eq!(lc(FieldPath::fields(&["integrator", "nothing"])), (6, 15, false));
        assert_eq!(lc(FieldPath::fields(&["atoms"]).index(7)), (7, 10, false));
        assert_eq!(lc(FieldPath::fields(&["potential", "cutoff"])), (3, 1, false));
    }

    #[test]
    fn garbage_never_panics() {
        for t in ["", "(", "Some(", "r#\"", "'", "(a: /*", "(a: 1, b", "(a: [1, 2", "é(ü: 1)"] {
            let f = locate(t, &FieldPath::fields(&["a"]).index(3).field("b"));
            let _ = line_col(t, f.offset);
        }
        assert_eq!(FieldPath::fields(&["atoms"]).index(2).field("region").to_string(), "atoms[2].region");
        for (line, col) in [(1, 1), (4, 12), (8, 78), (99, 1), (1, 999)] {
            let o = offset_of(TEXT, line, col);
            if line < 12 && col < 100 {
                assert_eq!(line_col(TEXT, o), (line, col));
            }
        }
    }
}
