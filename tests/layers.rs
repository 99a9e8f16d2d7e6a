//! The house's import direction (ARCHITECTURE.md): every `crate::` path in a module's code
//! (unit tests aside) points to a module in a lower layer, for the top-level modules and for
//! the files of `physics`. An import that points up, or one from a module missing from the
//! table, fails with the file and the path.

use std::collections::BTreeSet;
use std::path::Path;

/// Top-level modules, lowest layer first. `app` and `ui` share a layer (one app split by
/// role); otherwise a module may import only from a lower layer.
const LAYERS: &[&[&str]] = &[
    &["units", "numfmt", "rng", "shapes", "interrupt"],
    &["physics"],
    &["analysis"],
    &["flow"],
    &["transport"],
    &["sim"],
    &["io", "interop"],
    &["scene"],
    &["export", "eos"],
    &["render"],
    &["record"],
    &["app", "ui"],
    &["cli"],
];

/// The files of `physics`, lowest layer first.
const PHYSICS: &[&[&str]] = &[
    &["real", "jzg", "cutoff"],
    &["sim_box", "wall", "friction"],
    &["obstacles", "piston", "init", "tunnel", "dye"],
    &["params"],
    &["species", "lj"],
];

fn layer_of(table: &[&[&str]], name: &str) -> Option<usize> {
    table.iter().position(|l| l.contains(&name))
}

/// The code of a file before its unit tests.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Module names that follow `prefix` in `text` (`crate::sim::...` -> `sim`).
fn targets(text: &str, prefix: &str) -> BTreeSet<String> {
    text.match_indices(prefix)
        .map(|(i, _)| {
            text[i + prefix.len()..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>()
        })
        .filter(|t| !t.is_empty())
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn imports_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let top = rel.iter().next().unwrap().to_str().unwrap().trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let Some(own) = layer_of(LAYERS, &top) else {
            wrong.push(format!("{}: module `{top}` is not in tests/layers.rs's table", rel.display()));
            continue;
        };
        let text = code(f);
        for t in targets(&text, "crate::") {
            if t == top {
                continue;
            }
            match layer_of(LAYERS, &t) {
                Some(l) if l < own || (l == own && LAYERS[own].contains(&"app")) => {}
                Some(_) => {
                    wrong.push(format!("{}: `{top}` imports `crate::{t}`, which is not below it", rel.display()))
                }
                None => wrong.push(format!("{}: `crate::{t}` is not in tests/layers.rs's table", rel.display())),
            }
        }
        if top == "physics" && rel.components().count() == 2 {
            let name = rel.file_stem().unwrap().to_str().unwrap();
            if name == "mod" {
                continue;
            }
            let own = layer_of(PHYSICS, name).unwrap_or_else(|| panic!("physics/{name}.rs is not in PHYSICS"));
            let used: BTreeSet<String> =
                targets(&text, "crate::physics::").into_iter().chain(targets(&text, "super::")).collect();
            for t in used.iter().filter(|t| *t != name) {
                match layer_of(PHYSICS, t) {
                    Some(l) if l < own => {}
                    _ => wrong.push(format!("physics/{name}.rs imports `{t}`, which is not below it")),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports that point up:\n{}", wrong.join("\n"));
    assert!(files.len() > 100, "found only {} source files", files.len());
}
