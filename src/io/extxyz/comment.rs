//! Splits an extended XYZ comment line into `key=value` pairs. Values may be bare, quoted with
//! `"..."` (backslash escapes `\"` and `\\`), or wrapped in `{...}` / `[...]` as ASE allows; a
//! key without `=` is a flag with value `T`. Spaces around `=` are allowed.

/// A problem found while splitting, described for the person who wrote the line.
pub(super) struct CommentError {
    pub field: String,
    pub problem: String,
}

fn err(field: impl Into<String>, problem: impl Into<String>) -> CommentError {
    CommentError { field: field.into(), problem: problem.into() }
}

/// The pairs of `line` in order of appearance.
pub(super) fn parse_pairs(line: &str) -> Result<Vec<(String, String)>, CommentError> {
    let chars: Vec<char> = line.chars().collect();
    let mut pairs = Vec::new();
    let mut i = 0;
    let skip_ws = |mut i: usize| {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        i
    };
    loop {
        i = skip_ws(i);
        if i >= chars.len() {
            return Ok(pairs);
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() && chars[i] != '=' {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        if key.is_empty() {
            return Err(err("comment line", format!("'=' at character {} has no key before it", start + 1)));
        }
        if let Some(c) = key.chars().find(|c| matches!(c, '"' | '{' | '}' | '[' | ']')) {
            return Err(err(key.clone(), format!("unexpected '{c}' in a key")));
        }
        let after_key = skip_ws(i);
        if chars.get(after_key) != Some(&'=') {
            pairs.push((key, "T".to_owned()));
            continue;
        }
        i = skip_ws(after_key + 1);
        let value = match chars.get(i) {
            None => return Err(err(key, "has '=' but no value")),
            Some('"') => {
                let mut v = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(err(key, "the quoted value has no closing '\"'")),
                        Some('"') => break,
                        Some('\\') if matches!(chars.get(i + 1), Some('"') | Some('\\')) => {
                            v.push(chars[i + 1]);
                            i += 2;
                        }
                        Some(&c) => {
                            v.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
                v
            }
            Some(&open @ ('{' | '[')) => {
                let close = if open == '{' { '}' } else { ']' };
                let from = i + 1;
                let Some(len) = chars[from..].iter().position(|&c| c == close) else {
                    return Err(err(key, format!("the value has no closing '{close}'")));
                };
                i = from + len + 1;
                chars[from..from + len].iter().collect()
            }
            Some(_) => {
                let from = i;
                while i < chars.len() && !chars[i].is_whitespace() {
                    i += 1;
                }
                chars[from..i].iter().collect()
            }
        };
        pairs.push((key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> Vec<(String, String)> {
        parse_pairs(line).unwrap_or_else(|e| panic!("{}: {}", e.field, e.problem))
    }

    #[test]
    fn quoted_bare_braced_and_flags() {
        let p = ok(r#"Lattice="1 0 0  0 1 0 0 0 1" units=lj  Time = 2.5 flag name="a \"b\" c" v={1 2} w=[3]"#);
        let want = [
            ("Lattice", "1 0 0  0 1 0 0 0 1"),
            ("units", "lj"),
            ("Time", "2.5"),
            ("flag", "T"),
            ("name", "a \"b\" c"),
            ("v", "1 2"),
            ("w", "3"),
        ];
        assert_eq!(p.len(), want.len());
        for ((k, v), (wk, wv)) in p.iter().zip(want) {
            assert_eq!((k.as_str(), v.as_str()), (wk, wv));
        }
    }

    #[test]
    fn broken_lines_are_errors() {
        for line in [r#"Lattice="1 2 3"#, "a=", "=b", "a={1 2", r#"x"y=1"#] {
            assert!(parse_pairs(line).is_err(), "{line}");
        }
        assert!(ok("").is_empty());
    }
}
