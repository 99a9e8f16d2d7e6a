//! Readers of LAMMPS's averaged-output files: `fix ave/chunk` (per window a header line
//! `Timestep Number-of-chunks Total-count`, then one row per chunk) and `fix ave/time` (one
//! row per output step), each with its `#` header naming the columns. Plain numbers out; a
//! wrong line is an error naming the file, the line and the column.

use std::path::Path;

use super::error::FileError;

/// One window of a `fix ave/chunk` file: the step it was written at and one row of values
/// per chunk (the columns after `Chunk`, in the header's order).
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkWindow {
    pub step: u64,
    /// The 1-based line of the window's header line.
    pub line: u64,
    pub rows: Vec<Vec<f64>>,
}

/// A `fix ave/chunk` file: the value columns (after `Chunk`) and the windows.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkFile {
    pub columns: Vec<String>,
    pub windows: Vec<ChunkWindow>,
}

/// A `fix ave/time` file: the value columns (after `TimeStep`) and (step, values) rows.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeFile {
    pub columns: Vec<String>,
    /// (step, values, 1-based line).
    pub rows: Vec<(u64, Vec<f64>, u64)>,
}

fn read(path: &Path) -> Result<(String, String), FileError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| FileError::io(&name, e))?;
    Ok((name, text))
}

/// The column names of the last `#` header line before the data.
fn header(name: &str, lines: &[(u64, &str)], first: &str) -> Result<Vec<String>, FileError> {
    let cols = lines
        .iter()
        .take_while(|(_, l)| l.trim_start().starts_with('#'))
        .filter_map(|(_, l)| {
            let words: Vec<&str> = l.trim_start().trim_start_matches('#').split_whitespace().collect();
            (words.first() == Some(&first)).then(|| words[1..].iter().map(|w| w.to_string()).collect())
        })
        .last();
    cols.ok_or_else(|| {
        FileError::parse(name, 1, "header", format!("no `# {first} ...` line naming the columns"))
            .with_fix("give the file LAMMPS wrote, with its header")
    })
}

fn number(name: &str, line: u64, field: &str, word: &str) -> Result<f64, FileError> {
    let v: f64 = word.parse().map_err(|_| FileError::parse(name, line, field, format!("{word:?} is not a number")))?;
    if !v.is_finite() {
        return Err(FileError::parse(name, line, field, format!("{word} is not finite")));
    }
    Ok(v)
}

fn step(name: &str, line: u64, field: &str, word: &str) -> Result<u64, FileError> {
    word.parse().map_err(|_| FileError::parse(name, line, field, format!("{word:?} is not a step number")))
}

/// Reads a `fix ave/chunk` file written with `ave one`.
pub fn read_ave_chunk(path: &Path) -> Result<ChunkFile, FileError> {
    let (name, text) = read(path)?;
    let lines: Vec<(u64, &str)> =
        text.lines().enumerate().map(|(i, l)| (i as u64 + 1, l)).filter(|(_, l)| !l.trim().is_empty()).collect();
    let all = header(&name, &lines, "Chunk")?;
    let columns = all.clone();
    let mut windows = Vec::new();
    let mut it = lines.iter().filter(|(_, l)| !l.trim_start().starts_with('#')).peekable();
    while let Some(&(ln, l)) = it.next() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() != 3 {
            return Err(FileError::parse(
                &name,
                ln,
                "Timestep Number-of-chunks Total-count",
                format!("expected a window's 3-number header line, found {} words", w.len()),
            ));
        }
        let s = step(&name, ln, "Timestep", w[0])?;
        let n = step(&name, ln, "Number-of-chunks", w[1])? as usize;
        let mut rows = Vec::with_capacity(n);
        for k in 0..n {
            let Some(&(rl, row)) = it.next() else {
                return Err(FileError::parse(
                    &name,
                    ln,
                    "Number-of-chunks",
                    format!("the window at step {s} announces {n} chunks but the file ends after {k}"),
                )
                .with_fix("the run was cut short: leave out the last window or run LAMMPS to the end"));
            };
            let words: Vec<&str> = row.split_whitespace().collect();
            if words.len() != all.len() + 1 {
                return Err(FileError::parse(
                    &name,
                    rl,
                    "row",
                    format!("expected {} columns (Chunk {}), found {}", all.len() + 1, all.join(" "), words.len()),
                ));
            }
            let id = step(&name, rl, "Chunk", words[0])? as usize;
            if id != k + 1 {
                return Err(FileError::parse(&name, rl, "Chunk", format!("expected chunk {}, found {id}", k + 1)));
            }
            let values =
                words[1..].iter().zip(&all).map(|(v, c)| number(&name, rl, c, v)).collect::<Result<Vec<f64>, _>>()?;
            rows.push(values);
        }
        windows.push(ChunkWindow { step: s, line: ln, rows });
    }
    Ok(ChunkFile { columns, windows })
}

/// Reads a `fix ave/time` file of global scalars (`mode scalar`).
pub fn read_ave_time(path: &Path) -> Result<TimeFile, FileError> {
    let (name, text) = read(path)?;
    let lines: Vec<(u64, &str)> =
        text.lines().enumerate().map(|(i, l)| (i as u64 + 1, l)).filter(|(_, l)| !l.trim().is_empty()).collect();
    let columns = header(&name, &lines, "TimeStep")?;
    let mut rows = Vec::new();
    for &(ln, l) in lines.iter().filter(|(_, l)| !l.trim_start().starts_with('#')) {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() != columns.len() + 1 {
            return Err(FileError::parse(
                &name,
                ln,
                "row",
                format!("expected {} columns (TimeStep {}), found {}", columns.len() + 1, columns.join(" "), w.len()),
            ));
        }
        let s = step(&name, ln, "TimeStep", w[0])?;
        let values =
            w[1..].iter().zip(&columns).map(|(v, c)| number(&name, ln, c, v)).collect::<Result<Vec<f64>, _>>()?;
        rows.push((s, values, ln));
    }
    Ok(TimeFile { columns, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("argon-lammps-ave-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const CHUNKS: &str = "# Chunk-averaged data for fix fields and group all\n\
        # Timestep Number-of-chunks Total-count\n\
        # Chunk Ncount v_a v_b\n\
        100 2 3\n  1 1 0.5 2\n  2 2 1e-3 -4\n\
        200 2 3\n  1 1.5 0.25 1\n  2 1.5 0 0\n";

    #[test]
    fn reads_chunk_windows_and_names_the_bad_line() {
        let f = read_ave_chunk(&file("ok.chunks", CHUNKS)).unwrap();
        assert_eq!(f.columns, ["Ncount", "v_a", "v_b"]);
        assert_eq!(f.windows.len(), 2);
        assert_eq!((f.windows[1].step, f.windows[1].line), (200, 7));
        assert_eq!(f.windows[0].rows[1], vec![2.0, 1e-3, -4.0]);
        let bad = read_ave_chunk(&file("bad.chunks", &CHUNKS.replace("1e-3", "x"))).unwrap_err().to_string();
        assert!(bad.contains("bad.chunks:6: v_a: \"x\" is not a number"), "{bad}");
        let cut = read_ave_chunk(&file("cut.chunks", &CHUNKS[..CHUNKS.len() - 12])).unwrap_err().to_string();
        assert!(cut.contains("cut.chunks:7: Number-of-chunks") && cut.contains("ends after 1"), "{cut}");
        let short = read_ave_chunk(&file("short.chunks", &CHUNKS.replace("  2 2 1e-3 -4", "  2 2 1e-3"))).unwrap_err();
        assert!(short.to_string().contains("short.chunks:6: row: expected 4 columns"), "{short}");
        let none = read_ave_chunk(&file("none.chunks", "1 2 3\n")).unwrap_err().to_string();
        assert!(none.contains("none.chunks:1: header"), "{none}");
    }

    #[test]
    fn reads_time_rows_and_names_the_bad_line() {
        let text = "# Time-averaged data for fix forces_series\n# TimeStep v_fx v_fy\n100 1.5 -2\n200 nan 0\n";
        let err = read_ave_time(&file("f.series", text)).unwrap_err().to_string();
        assert!(err.contains("f.series:4: v_fx: nan is not finite"), "{err}");
        let f = read_ave_time(&file("g.series", &text.replace("nan", "3"))).unwrap();
        assert_eq!(f.columns, ["v_fx", "v_fy"]);
        assert_eq!(f.rows[0], (100, vec![1.5, -2.0], 3));
    }
}
