//! The user guide holds together: every relative link and image in README.md and docs/*.md
//! names a file that exists, and every `#anchor` into a markdown file (the same one or
//! another) names one of its headings, slugged as GitHub does; docs/README.md, the index,
//! links every page of docs/; README.md stays a front door: at most 260 lines, with the
//! vortex-street picture near the top at 960 px or more when it names a width. External
//! links (http, https, mailto) are not fetched. The checker itself is tested on a small tree
//! with planted breakages, so it is known to fail when a link breaks.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

/// README.md's budget in lines (the brief's "about 250", with a little room).
const README_MAX_LINES: usize = 260;
/// The animated picture the README shows near its top, and the least width it may ask for.
const STREET_GIF: &str = "docs/vortex_street.gif";
const STREET_MIN_WIDTH: u32 = 960;
const STREET_WITHIN_LINES: usize = 30;

/// One link or image target found in a markdown file.
#[derive(Debug, Clone, PartialEq)]
struct Link {
    line: usize,
    target: String,
}

/// The lines of `md` outside fenced code blocks, with their 1-based numbers and inline code
/// spans blanked (a link inside backticks is text, not a link).
fn prose_lines(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    for (i, line) in md.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker: String = trimmed.chars().take_while(|&c| c == '`' || c == '~').collect();
        if marker.len() >= 3 && marker.chars().all(|c| c == marker.chars().next().unwrap()) {
            match &fence {
                None => fence = Some(marker),
                Some(open) if marker.starts_with(open.as_str()) => fence = None,
                Some(_) => {}
            }
            continue;
        }
        if fence.is_none() {
            out.push((i + 1, blank_code_spans(line)));
        }
    }
    out
}

/// `line` with the contents of every inline code span replaced by spaces.
fn blank_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(c);
        } else {
            out.push(if in_code { ' ' } else { c });
        }
    }
    out
}

/// Every link and image target: markdown `[text](target)` and `![alt](target)`,
/// reference definitions `[label]: target`, and HTML `src="..."` / `href="..."`.
fn links(md: &str) -> Vec<Link> {
    let mut out = Vec::new();
    for (line, text) in prose_lines(md) {
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let mut depth = 0usize;
            let end = after.char_indices().find(|&(_, c)| match c {
                '(' => {
                    depth += 1;
                    false
                }
                ')' if depth == 0 => true,
                ')' => {
                    depth -= 1;
                    false
                }
                _ => false,
            });
            let Some((end, _)) = end else { break };
            let raw = after[..end].trim();
            // An optional title: [text](target "title").
            let target = raw.split_once(char::is_whitespace).map_or(raw, |(t, _)| t);
            let target = target.trim_start_matches('<').trim_end_matches('>');
            if !target.is_empty() {
                out.push(Link { line, target: target.to_string() });
            }
            rest = &after[end..];
        }
        let t = text.trim_start();
        if t.starts_with('[')
            && let Some((label, target)) = t.split_once("]:")
            && !label.contains(']')
        {
            let target = target.split_whitespace().next().unwrap_or("");
            if !target.is_empty() {
                out.push(Link { line, target: target.to_string() });
            }
        }
        for attr in ["src=\"", "href=\""] {
            let mut rest = text.as_str();
            while let Some(at) = rest.find(attr) {
                let after = &rest[at + attr.len()..];
                let Some(end) = after.find('"') else { break };
                out.push(Link { line, target: after[..end].to_string() });
                rest = &after[end..];
            }
        }
    }
    out
}

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// The heading anchors of a markdown file, as GitHub makes them: the heading's text without
/// markup, lower-cased, every character but letters, digits, `-`, `_` and spaces dropped,
/// spaces turned into `-`; a repeated slug gets `-1`, `-2`, ...
fn anchors(md: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for (_, line) in prose_lines_keep_code(md) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let text = line[hashes..].trim().trim_end_matches('#').trim();
        let slug = slug(&strip_inline_links(text));
        let mut unique = slug.clone();
        let mut k = 1;
        while seen.contains(&unique) {
            unique = format!("{slug}-{k}");
            k += 1;
        }
        seen.insert(unique);
    }
    seen
}

/// Like `prose_lines`, but keeping inline code (a heading's `code` is part of its slug).
fn prose_lines_keep_code(md: &str) -> Vec<(usize, String)> {
    let blanked = prose_lines(md);
    let raw: Vec<&str> = md.lines().collect();
    blanked.into_iter().map(|(n, _)| (n, raw[n - 1].to_string())).collect()
}

/// `[text](target)` becomes `text`.
fn strip_inline_links(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else { break };
        let Some(close) = rest[open + mid..].find(')') else { break };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    out.push_str(rest);
    out
}

fn slug(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '-' || c == '_' || c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The problems with the links of `files` (paths relative to `root`), one line each.
fn check(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut problems = Vec::new();
    for file in files {
        let path = root.join(file);
        let md = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let dir = path.parent().unwrap();
        for Link { line, target } in links(&md) {
            if is_external(&target) {
                continue;
            }
            let (file_part, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let where_ = format!("{}:{line}: {target}", file.display());
            let linked = if file_part.is_empty() { path.clone() } else { dir.join(file_part) };
            if !linked.exists() {
                problems.push(format!("{where_}: no such file {}", linked.display()));
                continue;
            }
            if let Some(anchor) = anchor
                && linked.extension().is_some_and(|e| e == "md")
            {
                let text = fs::read_to_string(&linked).unwrap();
                if !anchors(&text).contains(anchor) {
                    problems.push(format!("{where_}: no heading with the anchor #{anchor} in {}", linked.display()));
                }
            }
        }
    }
    problems
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every markdown file in docs/, relative to the repository root.
fn guide_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(root).unwrap().to_path_buf())
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn every_relative_link_and_image_resolves() {
    let root = repo();
    let files = guide_files(&root);
    assert!(files.len() > 2, "README.md and the guide in docs/: {files:?}");
    let problems = check(&root, &files);
    assert!(problems.is_empty(), "broken links:\n{}", problems.join("\n"));
}

#[test]
fn the_index_links_every_page_of_the_guide() {
    let root = repo();
    let index = fs::read_to_string(root.join("docs/README.md")).expect("docs/README.md, the guide's index");
    let linked: HashSet<String> =
        links(&index).into_iter().map(|l| l.target.split('#').next().unwrap().to_string()).collect();
    let missing: Vec<String> = guide_files(&root)
        .into_iter()
        .filter_map(|p| p.strip_prefix("docs").ok().map(|p| p.display().to_string()))
        .filter(|page| page != "README.md" && !linked.contains(page))
        .collect();
    assert!(missing.is_empty(), "docs/README.md does not link these pages of docs/: {missing:?}");
}

#[test]
fn readme_is_a_front_door() {
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; keep it at most {README_MAX_LINES} and move detail into docs/"
    );
    let near_top: Vec<(usize, String)> =
        readme.lines().enumerate().take(STREET_WITHIN_LINES).map(|(i, l)| (i + 1, l.to_string())).collect();
    let picture = near_top.iter().find(|(_, l)| l.contains(STREET_GIF));
    let Some((line, text)) = picture else {
        panic!("README.md should show {STREET_GIF} within its first {STREET_WITHIN_LINES} lines");
    };
    if let Some(at) = text.find("width=") {
        let digits: String =
            text[at + 6..].trim_start_matches(['"', '\'']).chars().take_while(|c| c.is_ascii_digit()).collect();
        let width: u32 = digits.parse().unwrap_or(0);
        assert!(
            width >= STREET_MIN_WIDTH,
            "README.md:{line}: the vortex street is shown {width} px wide; at least {STREET_MIN_WIDTH}, or no width"
        );
    }
}

/// The checker on a tree with one good and several broken links of each kind.
#[test]
fn the_checker_catches_broken_links() {
    let root = std::env::temp_dir().join(format!("argon-docs-links-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("docs")).unwrap();
    fs::write(root.join("docs/pic.png"), b"png").unwrap();
    fs::write(
        root.join("docs/guide.md"),
        "# Guide\n\n## Tools: drawing and `editing`\n\n## Tools: drawing and `editing`\n",
    )
    .unwrap();
    let readme = "\
# Top

[ok](docs/guide.md) [ok anchor](docs/guide.md#tools-drawing-and-editing-1) [self](#top)
![ok picture](docs/pic.png) <img src=\"docs/pic.png\" width=\"960\"> [web](https://example.com/x.md)
[gone](docs/missing.md)
![gone picture](docs/missing.gif)
<img src=\"docs/missing.png\">
[bad anchor](docs/guide.md#no-such-heading) [bad self](#nowhere)
`[code](docs/not_a_link.md)`

```
[fenced](docs/not_a_link_either.md)
```

[ref]: docs/missing_ref.md
";
    fs::write(root.join("README.md"), readme).unwrap();
    let problems = check(&root, &[PathBuf::from("README.md")]);
    let _ = fs::remove_dir_all(&root);
    let caught: Vec<&str> = problems.iter().map(|p| p.split(": ").nth(1).unwrap()).collect();
    assert_eq!(
        caught,
        [
            "docs/missing.md",
            "docs/missing.gif",
            "docs/missing.png",
            "docs/guide.md#no-such-heading",
            "#nowhere",
            "docs/missing_ref.md"
        ],
        "{problems:#?}"
    );
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug("Surface friction (no-slip walls and obstacles)"), "surface-friction-no-slip-walls-and-obstacles");
    assert_eq!(slug("Tests say `skipped`"), "tests-say-skipped");
    assert_eq!(slug("I want to..."), "i-want-to");
    assert_eq!(slug("Forces, piston and pressure"), "forces-piston-and-pressure");
    assert_eq!(strip_inline_links("See [the app](app.md) now"), "See the app now");
}
