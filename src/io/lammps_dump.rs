//! LAMMPS text dump trajectories (`dump custom ... id type x y z vx vy vz`), which LAMMPS's
//! `read_dump`/`rerun`, OVITO and VMD read. Ids and types are 1-based as LAMMPS wants; walls
//! are written as fixed (`ff`) bounds. Numbers are in shortest round-trip form. Like the XYZ
//! writer, the dump lives in a temporary file until [`LammpsDumpWriter::finish`].

use std::io::{self, Write};
use std::path::Path;

use crate::io::atomic::AtomicFile;
use crate::io::extxyz::FrameRef;

/// A multi-frame LAMMPS dump being written.
pub struct LammpsDumpWriter {
    file: AtomicFile,
}

/// Writes one frame to `path` atomically.
pub fn write_lammps_dump(path: &Path, frame: &FrameRef) -> io::Result<()> {
    let mut w = LammpsDumpWriter::create(path)?;
    w.write_frame(frame)?;
    w.finish()
}

impl LammpsDumpWriter {
    /// Starts a dump that appears at `path` on [`LammpsDumpWriter::finish`].
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(LammpsDumpWriter { file: AtomicFile::create(path)? })
    }

    /// Appends one frame (`species_names`, `time` and `units` are not part of the format).
    pub fn write_frame(&mut self, f: &FrameRef) -> io::Result<()> {
        let n = f.positions.len();
        let bad = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
        if f.types.len() != n {
            return bad(format!("{} types for {n} positions", f.types.len()));
        }
        if let Some(v) = f.velocities.filter(|v| v.len() != n) {
            return bad(format!("{} velocities for {n} positions", v.len()));
        }
        let w = &mut self.file;
        let b = f.sim_box;
        let kind = |k: usize| if b.periodic[k] { "pp" } else { "ff" };
        writeln!(w, "ITEM: TIMESTEP\n{}\nITEM: NUMBER OF ATOMS\n{n}", f.step)?;
        writeln!(w, "ITEM: BOX BOUNDS {} {} {}", kind(0), kind(1), kind(2))?;
        for k in 0..3 {
            writeln!(w, "{:?} {:?}", b.lo[k], b.hi[k])?;
        }
        let vel = if f.velocities.is_some() { " vx vy vz" } else { "" };
        writeln!(w, "ITEM: ATOMS id type x y z{vel}")?;
        for (i, (p, &t)) in f.positions.iter().zip(f.types).enumerate() {
            write!(w, "{} {} {:?} {:?} {:?}", i + 1, u64::from(t) + 1, p[0], p[1], p[2])?;
            if let Some(v) = f.velocities.and_then(|v| v.get(i)) {
                write!(w, " {:?} {:?} {:?}", v[0], v[1], v[2])?;
            }
            w.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Flushes, syncs and renames the dump into place.
    pub fn finish(self) -> io::Result<()> {
        self.file.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::sim_box::SimBox;

    #[test]
    fn format_matches_lammps() {
        let dir = std::env::temp_dir().join(format!("argon-dump-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.dump");
        let b = SimBox { lo: [0.0, -1.5, 0.0], hi: [10.0, 1.5, 4.25], periodic: [true, true, false] };
        let names = ["Ar".to_string(), "Kr".to_string()];
        let frame = |step, vel: Option<&'static [[f64; 3]]>| FrameRef {
            sim_box: &b,
            species_names: &names,
            types: &[0, 1],
            positions: &[[1.0, 0.5, 2.0], [9.5, -1.25, 0.1]],
            velocities: vel,
            step,
            time: 0.0,
            units: "lj",
            masses: None,
            dye: None,
        };
        let mut w = LammpsDumpWriter::create(&path).unwrap();
        w.write_frame(&frame(0, Some(&[[0.1, -0.2, 0.3], [1e-7, 0.0, -4.0]]))).unwrap();
        w.write_frame(&frame(100, None)).unwrap();
        w.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let want = "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS pp pp ff\n0.0 10.0\n-1.5 1.5\n0.0 4.25\n\
                    ITEM: ATOMS id type x y z vx vy vz\n1 1 1.0 0.5 2.0 0.1 -0.2 0.3\n2 2 9.5 -1.25 0.1 1e-7 0.0 -4.0\n\
                    ITEM: TIMESTEP\n100\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS pp pp ff\n0.0 10.0\n-1.5 1.5\n0.0 4.25\n\
                    ITEM: ATOMS id type x y z\n1 1 1.0 0.5 2.0\n2 2 9.5 -1.25 0.1\n";
        assert_eq!(text, want);
        let short = FrameRef { types: &[0], ..frame(0, None) };
        assert!(LammpsDumpWriter::create(&path).unwrap().write_frame(&short).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
