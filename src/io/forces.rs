//! The force history of the bodies (`sim::bodies`) as CSV: time (tau), step, then fx, fy, fz
//! of each body in reduced units (epsilon/sigma), one column per body and axis named after the
//! body (`circle_1_fx_eps_per_sigma`). Owns the layout, a streaming writer for `run` (rows
//! flushed as they come, so an interrupted run leaves complete lines) and the whole-file text
//! the app saves atomically.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::sim::bodies::{Body, BodyForce};

/// The header: `time_tau,step` and three columns per body.
pub fn forces_header(bodies: &[Body]) -> String {
    let mut cols = vec!["time_tau".to_string(), "step".to_string()];
    for b in bodies {
        for axis in ["fx", "fy", "fz"] {
            cols.push(format!("{}_{axis}_eps_per_sigma", b.column()));
        }
    }
    cols.join(",")
}

/// One row: time, step and each body's force (as many bodies as the header names; a body
/// missing from `forces` is written as zeros).
pub fn forces_row(time_tau: f64, step: u64, bodies: &[Body], forces: &[BodyForce]) -> String {
    let mut row = format!("{time_tau:?},{step}");
    for b in bodies {
        let f = forces.iter().find(|x| x.body == *b).map_or([0.0; 3], |x| x.force);
        for v in f {
            row.push_str(&format!(",{v:?}"));
        }
    }
    row
}

/// The whole CSV of (time, step, forces) rows.
pub fn forces_csv(bodies: &[Body], rows: &[(f64, u64, Vec<BodyForce>)]) -> String {
    let mut out = forces_header(bodies);
    out.push('\n');
    for (t, s, f) in rows {
        out.push_str(&forces_row(*t, *s, bodies, f));
        out.push('\n');
    }
    out
}

/// Writes rows as they come (each flushed: an interrupted run leaves whole lines).
pub struct ForcesWriter {
    out: BufWriter<File>,
    bodies: Vec<Body>,
    rows: usize,
}

impl ForcesWriter {
    pub fn create(path: &Path, bodies: &[Body]) -> io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(out, "{}", forces_header(bodies))?;
        out.flush()?;
        Ok(ForcesWriter { out, bodies: bodies.to_vec(), rows: 0 })
    }

    pub fn write_row(&mut self, time_tau: f64, step: u64, forces: &[BodyForce]) -> io::Result<()> {
        writeln!(self.out, "{}", forces_row(time_tau, step, &self.bodies, forces))?;
        self.rows += 1;
        self.out.flush()
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_every_body_and_axis_and_rows_match_it() {
        let bodies = [Body::Shape { index: 0, kind: "circle" }, Body::Wall { axis: 1, hi: true }];
        let h = forces_header(&bodies);
        assert_eq!(
            h,
            "time_tau,step,circle_1_fx_eps_per_sigma,circle_1_fy_eps_per_sigma,circle_1_fz_eps_per_sigma,\
             wall_y_hi_fx_eps_per_sigma,wall_y_hi_fy_eps_per_sigma,wall_y_hi_fz_eps_per_sigma"
        );
        let r = forces_row(1.5, 300, &bodies, &[BodyForce { body: bodies[1], force: [0.0, 2.5, 0.0] }]);
        assert_eq!(r, "1.5,300,0.0,0.0,0.0,0.0,2.5,0.0");
    }
}
