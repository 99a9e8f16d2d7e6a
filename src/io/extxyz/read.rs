//! Reads the first frame of an extended XYZ file, checking every line: the atom count is
//! bounded before anything is allocated, the comment line must describe an orthogonal box, and
//! every atom line must have exactly the declared columns of finite numbers.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::comment::parse_pairs;
use super::{XyzError, XyzFrame};
use crate::physics::sim_box::SimBox;

/// The largest atom count the reader accepts.
pub const MAX_ATOMS: u64 = 50_000_000;
/// The shortest possible atom line, `0 0 0` and its newline: bounds the count by the file size.
const MIN_BYTES_PER_ATOM: u64 = 6;
const MAX_LINE_BYTES: usize = 1 << 20;
const MAX_COLUMNS: usize = 10_000;
const AXES: [&str; 3] = ["x", "y", "z"];

/// Reads the first frame of the extended XYZ file at `path`.
pub fn read_extxyz(path: &Path) -> Result<XyzFrame, XyzError> {
    let source = path.display().to_string();
    let file = File::open(path).map_err(|e| XyzError::io(&source, e))?;
    let len = file.metadata().map_err(|e| XyzError::io(&source, e))?.len();
    parse(BufReader::new(file), &source, len)
}

/// Parses the first frame of extended XYZ `text`; `source` names it in errors.
pub fn parse_extxyz(text: &str, source: &str) -> Result<XyzFrame, XyzError> {
    parse(text.as_bytes(), source, text.len() as u64)
}

/// Lines of at most [`MAX_LINE_BYTES`], without their `\n` or `\r\n`, numbered from 1.
struct Lines<R> {
    inner: R,
    buf: Vec<u8>,
    line: u64,
}

impl<R: BufRead> Lines<R> {
    fn next(&mut self, src: &str) -> Result<Option<(u64, &str)>, XyzError> {
        self.buf.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let n = (&mut self.inner).take(limit).read_until(b'\n', &mut self.buf).map_err(|e| XyzError::io(src, e))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        let line = self.line;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        } else if n as u64 == limit {
            return Err(XyzError::parse(src, line, "line", format!("longer than {MAX_LINE_BYTES} bytes"))
                .with_fix("is this a text XYZ file?"));
        }
        match std::str::from_utf8(&self.buf) {
            Ok(text) => Ok(Some((line, text))),
            Err(e) => {
                Err(XyzError::parse(src, line, "text", format!("byte {} is not valid UTF-8", e.valid_up_to() + 1))
                    .with_fix("save the file as plain ASCII or UTF-8 text"))
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Species,
    Pos(usize),
    Vel(usize),
    Dye,
    Skip,
}

/// One `name:type:count` entry of `Properties`, starting at column `start` (0-based).
struct Prop {
    name: String,
    count: usize,
    start: usize,
}

struct Header {
    sim_box: SimBox,
    props: Vec<Prop>,
    properties: String,
    roles: Vec<Role>,
    has_vel: bool,
    has_dye: bool,
    units: Option<String>,
    step: Option<u64>,
    time: Option<f64>,
}

impl Header {
    /// `pos y`, `species`, `charge` or `forces 2`: how column `col` (0-based) is called.
    fn label(&self, col: usize) -> String {
        let Some(p) = self.props.iter().find(|p| col >= p.start && col < p.start + p.count) else {
            return "extra".to_owned();
        };
        let k = col - p.start;
        match self.roles.get(col) {
            _ if p.count == 1 => p.name.clone(),
            Some(Role::Pos(_) | Role::Vel(_)) => format!("{} {}", p.name, AXES[k.min(2)]),
            _ => format!("{} {}", p.name, k + 1),
        }
    }
}

fn parse<R: BufRead>(reader: R, src: &str, byte_len: u64) -> Result<XyzFrame, XyzError> {
    let mut lines = Lines { inner: reader, buf: Vec::new(), line: 0 };
    let count = match lines.next(src)? {
        Some((line, text)) => parse_count(text, src, line, byte_len)?,
        None => return Err(XyzError::parse(src, 1, "atom count", "the file is empty")),
    };
    let header = match lines.next(src)? {
        Some((line, text)) => parse_header(text, src, line)?,
        None => {
            return Err(XyzError::parse(src, 2, "comment line", "missing: the file ends after the atom count")
                .with_fix("line 2 must hold Lattice=\"...\" and Properties=..."));
        }
    };
    let cap = count.min(1 << 16);
    let mut frame = XyzFrame {
        sim_box: header.sim_box,
        species: Vec::with_capacity(cap),
        positions: Vec::with_capacity(cap),
        velocities: header.has_vel.then(|| Vec::with_capacity(cap)),
        units: header.units.clone(),
        step: header.step,
        time: header.time,
        dye: header.has_dye.then(|| Vec::with_capacity(cap)),
    };
    for i in 0..count {
        let Some((line, text)) = lines.next(src)? else {
            return Err(XyzError::parse(
                src,
                lines.line + 1,
                format!("atom {} of {count}", i + 1),
                format!("missing: the file ends after {i} atom lines"),
            )
            .with_fix("the count on line 1 must match the number of atom lines"));
        };
        parse_atom(text, src, line, i, count, &header, &mut frame)?;
    }
    Ok(frame)
}

fn parse_count(text: &str, src: &str, line: u64, byte_len: u64) -> Result<usize, XyzError> {
    let t = text.trim();
    let err = |problem: String| XyzError::parse(src, line, "atom count", problem);
    if t.is_empty() {
        return Err(err("the first line is blank".into()).with_fix("line 1 must hold the number of atoms"));
    }
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(
            err(format!("{t:?} is not a positive integer")).with_fix("line 1 must hold only the number of atoms")
        );
    }
    let n: u64 = t.parse().map_err(|_| err(format!("{t} is too large (at most {MAX_ATOMS})")))?;
    if n == 0 {
        return Err(err("0 atoms; a frame needs at least one".into()));
    }
    if n > MAX_ATOMS {
        return Err(err(format!("{n} is more than the {MAX_ATOMS} atoms this program reads")));
    }
    let room = byte_len / MIN_BYTES_PER_ATOM;
    if n > room {
        return Err(err(format!("{n} atoms cannot fit in a file of {byte_len} bytes (at most {room} atom lines)"))
            .with_fix("the count on line 1 must match the number of atom lines"));
    }
    usize::try_from(n).map_err(|_| err(format!("{n} is too large for this machine")))
}

fn parse_numbers<const N: usize>(value: &str, src: &str, line: u64, key: &str) -> Result<[f64; N], XyzError> {
    let words: Vec<&str> = value.split_whitespace().collect();
    if words.len() != N {
        return Err(XyzError::parse(src, line, key, format!("has {} numbers, expected {N}", words.len())));
    }
    let mut out = [0.0; N];
    for (k, w) in words.iter().enumerate() {
        out[k] = parse_finite(w).map_err(|p| XyzError::parse(src, line, key, format!("number {}: {p}", k + 1)))?;
    }
    Ok(out)
}

/// A finite `f64`, or the problem with `word`.
fn parse_finite(word: &str) -> Result<f64, String> {
    match word.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("{word:?} is not a finite number")),
        Err(_) => Err(format!("{word:?} is not a number")),
    }
}

fn parse_bool(word: &str) -> Option<bool> {
    match word.to_ascii_lowercase().as_str() {
        "t" | "true" | "1" => Some(true),
        "f" | "false" | "0" => Some(false),
        _ => None,
    }
}

fn parse_header(text: &str, src: &str, line: u64) -> Result<Header, XyzError> {
    let pairs = parse_pairs(text).map_err(|e| {
        XyzError::parse(src, line, e.field, e.problem).with_fix("line 2 must be key=value pairs, e.g. Lattice=\"...\"")
    })?;
    let mut known: [Option<&str>; 7] = [None; 7];
    const KEYS: [&str; 7] = ["lattice", "origin", "pbc", "properties", "units", "step", "time"];
    for (key, value) in &pairs {
        if let Some(k) = KEYS.iter().position(|k| key.eq_ignore_ascii_case(k)) {
            if known[k].is_some() {
                return Err(XyzError::parse(src, line, key.as_str(), "appears twice"));
            }
            known[k] = Some(value);
        }
    }
    let [lattice, origin, pbc, properties, units, step, time] = known;
    let Some(lattice) = lattice else {
        return Err(XyzError::parse(
            src,
            line,
            "Lattice",
            "missing: the box is required to start a simulation from a file (--init)",
        )
        .with_fix("add Lattice=\"Lx 0 0 0 Ly 0 0 0 Lz\" to line 2"));
    };
    let m = parse_numbers::<9>(lattice, src, line, "Lattice")?;
    for (k, &v) in m.iter().enumerate() {
        if k % 4 != 0 && v != 0.0 {
            return Err(XyzError::parse(
                src,
                line,
                "Lattice",
                format!("number {} is {v}: only orthogonal boxes are supported", k + 1),
            )
            .with_fix("the off-diagonal numbers 2, 3, 4, 6, 7 and 8 must be 0"));
        }
    }
    let size = [m[0], m[4], m[8]];
    if let Some(k) = size.iter().position(|&l| l <= 0.0) {
        return Err(XyzError::parse(
            src,
            line,
            "Lattice",
            format!("the box length along {} is {}; it must be positive", AXES[k], size[k]),
        ));
    }
    let lo = match origin {
        Some(v) => parse_numbers::<3>(v, src, line, "Origin")?,
        None => [0.0; 3],
    };
    let hi = [lo[0] + size[0], lo[1] + size[1], lo[2] + size[2]];
    if hi.iter().any(|h| !h.is_finite()) {
        return Err(XyzError::parse(src, line, "Lattice", "Origin + Lattice overflows"));
    }
    let periodic = match pbc {
        None => [true; 3],
        Some(v) => {
            let flags: Vec<Option<bool>> = v.split_whitespace().map(parse_bool).collect();
            match flags.as_slice() {
                [Some(a), Some(b), Some(c)] => [*a, *b, *c],
                _ => {
                    return Err(XyzError::parse(src, line, "pbc", format!("{v:?} is not three of T/F"))
                        .with_fix("write e.g. pbc=\"T T F\""));
                }
            }
        }
    };
    let properties = properties.unwrap_or("species:S:1:pos:R:3");
    let (props, roles) = parse_properties(properties, src, line)?;
    let step = match step {
        Some(v) => Some(
            v.parse::<u64>()
                .map_err(|_| XyzError::parse(src, line, "Step", format!("{v:?} is not a non-negative integer")))?,
        ),
        None => None,
    };
    let time = match time {
        Some(v) => Some(parse_finite(v).map_err(|p| XyzError::parse(src, line, "Time", p))?),
        None => None,
    };
    Ok(Header {
        sim_box: SimBox { lo, hi, periodic },
        props,
        properties: properties.to_owned(),
        has_vel: roles.contains(&Role::Vel(0)),
        has_dye: roles.contains(&Role::Dye),
        roles,
        units: units.map(str::to_owned),
        step,
        time,
    })
}

fn parse_properties(value: &str, src: &str, line: u64) -> Result<(Vec<Prop>, Vec<Role>), XyzError> {
    let err = |problem: String| XyzError::parse(src, line, "Properties", problem);
    let fields: Vec<&str> = value.split(':').collect();
    if !fields.len().is_multiple_of(3) {
        return Err(err(format!("{value:?} is not a list of name:type:count triples"))
            .with_fix("e.g. Properties=species:S:1:pos:R:3:velo:R:3"));
    }
    let mut props = Vec::new();
    let mut roles = Vec::new();
    for t in fields.chunks_exact(3) {
        let (name, kind, count) = (t[0], t[1], t[2]);
        if name.is_empty() {
            return Err(err(format!("a property in {value:?} has no name")));
        }
        if !matches!(kind, "S" | "R" | "I" | "L") {
            return Err(err(format!("{name}: type {kind:?} is not one of S, R, I, L")));
        }
        let n: usize = match count.parse() {
            Ok(n) if (1..=MAX_COLUMNS).contains(&n) => n,
            _ => return Err(err(format!("{name}: column count {count:?} is not an integer from 1 to {MAX_COLUMNS}"))),
        };
        if roles.len() + n > MAX_COLUMNS {
            return Err(err(format!("more than {MAX_COLUMNS} columns")));
        }
        let lower = name.to_ascii_lowercase();
        let (role, want, what): (fn(usize) -> Role, &str, &str) = match lower.as_str() {
            "species" => (|_| Role::Species, "S:1", "species"),
            "pos" | "positions" => (Role::Pos, "R:3", "position"),
            "vel" | "velo" | "velocity" | "velocities" => (Role::Vel, "R:3", "velocity"),
            "dye" => (|_| Role::Dye, "I:1", "dye"),
            _ => (|_| Role::Skip, "", ""),
        };
        if !want.is_empty() {
            if format!("{kind}:{n}") != want {
                return Err(err(format!("{name} is {kind}:{n}; it must be {want}")));
            }
            if roles.contains(&role(0)) {
                return Err(err(format!("{name} is a second {what} property")));
            }
        }
        props.push(Prop { name: name.to_owned(), count: n, start: roles.len() });
        roles.extend((0..n).map(role));
    }
    for (role, what, fix) in [(Role::Species, "species", "species:S:1"), (Role::Pos(0), "position", "pos:R:3")] {
        if !roles.contains(&role) {
            return Err(err(format!("{value:?} has no {what} property")).with_fix(format!("add {fix}")));
        }
    }
    Ok((props, roles))
}

fn parse_atom(
    text: &str,
    src: &str,
    line: u64,
    index: usize,
    count: usize,
    h: &Header,
    frame: &mut XyzFrame,
) -> Result<(), XyzError> {
    let n = text.split_ascii_whitespace().count();
    if n != h.roles.len() {
        return Err(XyzError::parse(
            src,
            line,
            format!("atom {} of {count}", index + 1),
            format!("has {n} columns but Properties={} declares {}", h.properties, h.roles.len()),
        ));
    }
    let (mut species, mut pos, mut vel, mut dye) = ("", [0.0; 3], [0.0; 3], 0);
    for (col, word) in text.split_ascii_whitespace().enumerate() {
        let field = || format!("column {} ({})", col + 1, h.label(col));
        match h.roles.get(col) {
            Some(Role::Species) => species = word,
            Some(&Role::Pos(k)) => pos[k] = parse_finite(word).map_err(|p| XyzError::parse(src, line, field(), p))?,
            Some(&Role::Vel(k)) => vel[k] = parse_finite(word).map_err(|p| XyzError::parse(src, line, field(), p))?,
            Some(Role::Dye) => {
                dye = word.parse::<crate::physics::dye::Dye>().map_err(|_| {
                    XyzError::parse(src, line, field(), format!("{word:?} is not a dye tag"))
                        .with_fix("write 0 (untagged) or a source number from 1 to 65535")
                })?
            }
            _ => {}
        }
    }
    let b = &h.sim_box;
    for k in 0..3 {
        if !b.periodic[k] && (pos[k] < b.lo[k] || pos[k] > b.hi[k]) {
            let col = h.roles.iter().position(|&r| r == Role::Pos(k)).unwrap_or(0);
            return Err(XyzError::parse(
                src,
                line,
                format!("column {} ({})", col + 1, h.label(col)),
                format!(
                    "{:?} is outside the box [{:?}, {:?}] along {}, which has walls (pbc F)",
                    pos[k], b.lo[k], b.hi[k], AXES[k]
                ),
            )
            .with_fix("move the atom inside the box or make the axis periodic"));
        }
    }
    frame.species.push(species.to_owned());
    frame.positions.push(pos);
    if let Some(v) = frame.velocities.as_mut() {
        v.push(vel);
    }
    if let Some(d) = frame.dye.as_mut() {
        d.push(dye);
    }
    Ok(())
}
