//! Writes extended XYZ frames with every number in shortest round-trip form. A trajectory is
//! written through [`AtomicFile`]: while a run is going it lives in a temporary file beside the
//! target, and [`ExtXyzWriter::finish`] renames it into place, so the target is never a
//! half-written trajectory.

use std::io::{self, Write};
use std::path::Path;

use super::FrameRef;
use crate::io::atomic::AtomicFile;

/// A multi-frame extended XYZ trajectory being written.
pub struct ExtXyzWriter {
    file: AtomicFile,
    frames: u64,
}

/// Writes one frame to `path` atomically.
pub fn write_extxyz(path: &Path, frame: &FrameRef) -> io::Result<()> {
    let mut w = ExtXyzWriter::create(path)?;
    w.write_frame(frame)?;
    w.finish()
}

impl ExtXyzWriter {
    /// Starts a trajectory that appears at `path` on [`ExtXyzWriter::finish`].
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(ExtXyzWriter { file: AtomicFile::create(path)?, frames: 0 })
    }

    /// Frames written so far.
    pub fn frames_written(&self) -> u64 {
        self.frames
    }

    /// Appends one frame; refuses (InvalidInput) a frame whose slices disagree in length, whose
    /// types have no name, or whose names would break the columns.
    pub fn write_frame(&mut self, f: &FrameRef) -> io::Result<()> {
        check(f)?;
        let w = &mut self.file;
        let b = f.sim_box;
        let l = lattice_lengths(b.lo, b.hi);
        writeln!(w, "{}", f.positions.len())?;
        write!(w, "Lattice=\"{:?} 0.0 0.0 0.0 {:?} 0.0 0.0 0.0 {:?}\"", l[0], l[1], l[2])?;
        write!(w, " Origin=\"{:?} {:?} {:?}\"", b.lo[0], b.lo[1], b.lo[2])?;
        let vel = if f.velocities.is_some() { ":velo:R:3" } else { "" };
        // ASE's velocities: masses and momenta, momenta per ASE time unit for `metal`.
        let ase = f.velocities.and(f.masses).map(|m| (m, if f.units == "metal" { super::ASE_TIME_PS } else { 1.0 }));
        let mom = if ase.is_some() { ":masses:R:1:momenta:R:3" } else { "" };
        let dye = if f.dye.is_some() { ":dye:I:1" } else { "" };
        write!(w, " Properties=species:S:1:pos:R:3{vel}{mom}{dye}")?;
        let tf = |p: bool| if p { 'T' } else { 'F' };
        write!(w, " pbc=\"{} {} {}\"", tf(b.periodic[0]), tf(b.periodic[1]), tf(b.periodic[2]))?;
        writeln!(w, " Time={:?} Step={} units={}", f.time, f.step, f.units)?;
        for (i, (p, &t)) in f.positions.iter().zip(f.types).enumerate() {
            let name = f.species_names.get(t as usize).map(String::as_str).unwrap_or("X");
            write!(w, "{name} {:?} {:?} {:?}", p[0], p[1], p[2])?;
            if let Some(v) = f.velocities.and_then(|v| v.get(i)) {
                write!(w, " {:?} {:?} {:?}", v[0], v[1], v[2])?;
                if let Some((masses, per_ase_time)) = ase {
                    let m = masses[t as usize];
                    let p = v.map(|x| m * (x * per_ase_time));
                    write!(w, " {m:?} {:?} {:?} {:?}", p[0], p[1], p[2])?;
                }
            }
            if let Some(d) = f.dye.and_then(|d| d.get(i)) {
                write!(w, " {d}")?;
            }
            w.write_all(b"\n")?;
        }
        self.frames += 1;
        Ok(())
    }

    /// Flushes, syncs and renames the trajectory into place.
    pub fn finish(self) -> io::Result<()> {
        self.file.commit()
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn check(f: &FrameRef) -> io::Result<()> {
    let n = f.positions.len();
    if f.types.len() != n {
        return Err(invalid(format!("{} types for {n} positions", f.types.len())));
    }
    if let Some(v) = f.velocities.filter(|v| v.len() != n) {
        return Err(invalid(format!("{} velocities for {n} positions", v.len())));
    }
    if let Some(d) = f.dye.filter(|d| d.len() != n) {
        return Err(invalid(format!("{} dye tags for {n} positions", d.len())));
    }
    if let Some(m) = f.masses
        && (m.len() != f.species_names.len() || !m.iter().all(|x| x.is_finite() && *x > 0.0))
    {
        return Err(invalid(format!(
            "{} masses for {} species: give one finite positive mass per species",
            m.len(),
            f.species_names.len()
        )));
    }
    if let Some(&t) = f.types.iter().find(|&&t| t as usize >= f.species_names.len()) {
        return Err(invalid(format!("type {t} has no species name ({} names)", f.species_names.len())));
    }
    let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_graphic() && !matches!(c, '"' | '=' | ':'));
    if let Some(s) = f.species_names.iter().find(|s| !plain(s)) {
        return Err(invalid(format!("species name {s:?} must be non-empty without spaces, quotes, '=' or ':'")));
    }
    if !plain(f.units) {
        return Err(invalid(format!("units {:?} must be non-empty without spaces, quotes, '=' or ':'", f.units)));
    }
    Ok(())
}

/// Box lengths `l` chosen so that a reader computing `lo + l` gets `hi` back bit for bit
/// (`hi - lo` alone can be off by one rounding when `lo` is not 0).
pub(crate) fn lattice_lengths(lo: [f64; 3], hi: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|k| {
        let d = hi[k] - lo[k];
        let mut up = d;
        let mut down = d;
        for _ in 0..8 {
            if lo[k] + up == hi[k] {
                return up;
            }
            if lo[k] + down == hi[k] {
                return down;
            }
            up = up.next_up();
            down = down.next_down();
        }
        d
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lattice_lengths_reproduce_hi() {
        let lo = [0.1, -3.3, 1e-3];
        let hi = [0.7, 5.123456789, 16.795961913825074];
        let l = lattice_lengths(lo, hi);
        for k in 0..3 {
            assert_eq!((lo[k] + l[k]).to_bits(), hi[k].to_bits(), "axis {k}");
        }
    }
}
