//! `run`'s force files: the force on each body (`sim::bodies`) per telemetry record
//! (`--forces FILE`, or `forces_series.csv` beside the fields) and per flow-field window
//! (`forces.csv` in the `--fields` folder). A window's row averages the records whose step
//! lies in it (record time in the window's (start, end], each weighted by the steps it
//! covers) and is stamped with the window's end time and its last record's step; when
//! `telemetry_every` divides the window's steps the rows cover exactly the window. Rows are
//! flushed as written, so an interrupted run leaves complete files.

use std::io;
use std::path::Path;

use anyhow::{Context, Result};

use crate::flow::Fields;
use crate::io::forces::ForcesWriter;
use crate::sim::Telemetry;
use crate::sim::bodies::{Body, BodyForce};

/// The open force files of one run.
pub struct ForceFiles {
    series: Option<ForcesWriter>,
    windows: Option<ForcesWriter>,
    /// Records not yet given to a window: (time, step, steps covered, forces).
    pending: Vec<(f64, u64, u64, Vec<BodyForce>)>,
    last_step: u64,
}

impl ForceFiles {
    /// The files asked for: `forces` (the per-record series), and with a fields folder
    /// `DIR/forces.csv` (per window) and `DIR/forces_series.csv` (per record, unless `forces`
    /// names the series file). None when neither is asked for.
    pub fn create(
        forces: Option<&Path>,
        fields_dir: Option<&Path>,
        bodies: &[Body],
        start_step: u64,
    ) -> Result<Option<ForceFiles>> {
        if forces.is_none() && fields_dir.is_none() {
            return Ok(None);
        }
        let open = |p: &Path| ForcesWriter::create(p, bodies).with_context(|| format!("creating {}", p.display()));
        let series_path = forces.map(Path::to_path_buf).or_else(|| fields_dir.map(|d| d.join("forces_series.csv")));
        let series = series_path.as_deref().map(open).transpose()?;
        let windows = fields_dir.map(|d| open(&d.join("forces.csv"))).transpose()?;
        Ok(Some(ForceFiles { series, windows, pending: Vec::new(), last_step: start_step }))
    }

    /// Takes one telemetry record: a series row, and kept for its window.
    pub fn record(&mut self, t: &Telemetry) -> io::Result<()> {
        let covered = t.step.saturating_sub(self.last_step);
        self.last_step = t.step;
        if t.body_forces.is_empty() || covered == 0 {
            return Ok(());
        }
        if let Some(w) = self.series.as_mut() {
            w.write_row(t.time, t.step, &t.body_forces)?;
        }
        if self.windows.is_some() {
            self.pending.push((t.time, t.step, covered, t.body_forces.clone()));
        }
        Ok(())
    }

    /// Writes one row per finished flow-field window from the records inside it.
    pub fn windows(&mut self, windows: &[Fields]) -> io::Result<()> {
        let Some(w) = self.windows.as_mut() else { return Ok(()) };
        for f in windows {
            let end = f.time[1] + 1e-9 * f.time[1].abs().max(1.0);
            let inside = self.pending.iter().take_while(|r| r.0 <= end).count();
            let rows: Vec<_> = self.pending.drain(..inside).collect();
            let Some(last) = rows.last() else { continue };
            let total: u64 = rows.iter().map(|r| r.2).sum();
            let mut mean: Vec<BodyForce> = last.3.iter().map(|b| BodyForce { body: b.body, force: [0.0; 3] }).collect();
            for (_, _, covered, forces) in &rows {
                let weight = *covered as f64 / total as f64;
                for (m, b) in mean.iter_mut().zip(forces) {
                    for k in 0..3 {
                        m.force[k] += weight * b.force[k];
                    }
                }
            }
            w.write_row(f.time[1], last.1, &mean)?;
        }
        Ok(())
    }

    /// (series rows, window rows) written.
    pub fn rows(&self) -> (usize, usize) {
        (self.series.as_ref().map_or(0, |w| w.rows()), self.windows.as_ref().map_or(0, |w| w.rows()))
    }

    pub fn finish(self) -> io::Result<()> {
        for w in [self.series, self.windows].into_iter().flatten() {
            w.finish()?;
        }
        Ok(())
    }
}
