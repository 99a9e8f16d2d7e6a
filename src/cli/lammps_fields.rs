//! `argon-sandbox lammps-fields DIR --out FIELDS`: turns what an exported LAMMPS deck wrote
//! (its `fields.json` description, `fix ave/chunk`'s `fields.chunks` and `fix ave/time`'s
//! `forces.series`; see `export::lammps_fields`) into the files `run --fields` writes:
//! `fields_NNNN.vti` and `fields.pvd` (each window's per-bin sums rebuilt and finished by
//! `flow::finish`, in argon-sandbox's coordinates and reduced units), `forces_series.csv`,
//! `forces.csv` and `wake.csv` (the same writers as `run`), so ParaView opens a LAMMPS run
//! and ours side by side.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use crate::cli::run_forces::ForceFiles;
use crate::cli::run_wake::WakeLog;
use crate::export::lammps_fields::{FORMAT, FieldsMeta, META_FILE};
use crate::flow::sample::{COUNT, MASS, MOMENTUM, MV2, STRIDE};
use crate::flow::{Accumulator, Fields, Grid, finish};
use crate::io::lammps_ave::{ChunkFile, read_ave_chunk, read_ave_time};
use crate::io::vtk::VtkSeries;
use crate::sim::Telemetry;
use crate::sim::bodies::{Body, BodyForce};

#[derive(Args, Debug, Clone)]
pub struct LammpsFieldsArgs {
    /// The folder LAMMPS ran the exported deck in (holding fields.json, fields.chunks and, with
    /// obstacles, forces.series), or the path of its fields.json.
    pub input: PathBuf,
    /// Folder for the .vti/.pvd and CSV files (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// No summary on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// The value columns the deck's `fix ave/chunk` writes, in order.
const CHUNK_COLUMNS: [&str; 6] = ["Ncount", "v_fld_m", "v_fld_px", "v_fld_py", "v_fld_pz", "v_fld_mv2"];

fn meta(input: &Path) -> Result<(FieldsMeta, PathBuf)> {
    let (path, dir) = if input.is_dir() {
        (input.join(META_FILE), input.to_path_buf())
    } else {
        (input.to_path_buf(), input.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf))
    };
    if !path.is_file() {
        bail!(
            "{}: not found: export the deck with its fields (argon-sandbox export-lammps SCENE --out DIR --fields) and \
             give the folder LAMMPS ran it in",
            path.display()
        );
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let m: FieldsMeta = serde_json::from_str(&text).map_err(|e| {
        anyhow!("{}:{}: {e} (the description export-lammps wrote; export the deck again)", path.display(), e.line())
    })?;
    if m.format != FORMAT {
        bail!("{}: format: {:?} is not {FORMAT:?} (export the deck again with this version)", path.display(), m.format);
    }
    Ok((m, dir))
}

/// The finished fields of every window in `chunks`.
fn windows(m: &FieldsMeta, grid: &Grid, chunks: &ChunkFile, file: &Path) -> Result<Vec<Fields>> {
    let name = file.display();
    if chunks.columns != CHUNK_COLUMNS {
        bail!(
            "{name}:3: columns: {:?}, expected {:?} (the deck's fix ave/chunk; export the deck again)",
            chunks.columns.join(" "),
            CHUNK_COLUMNS.join(" ")
        );
    }
    let s = &m.scale;
    let samples = m.samples_per_window as f64;
    let span = (m.samples_per_window - 1) as f64 * m.spec.every as f64 * m.dt;
    let mut out = Vec::with_capacity(chunks.windows.len());
    for w in &chunks.windows {
        if w.rows.len() != grid.len() {
            bail!(
                "{name}:{}: Number-of-chunks: {} chunks, but the grid of fields.json has {} bins (was the deck edited?)",
                w.line,
                w.rows.len(),
                grid.len()
            );
        }
        let mut data = vec![0.0; grid.len() * STRIDE];
        for (b, r) in w.rows.iter().enumerate() {
            // Ncount is the mean count per sample; the others are means per atom-sample.
            let n = r[0] * samples;
            let rec = &mut data[b * STRIDE..(b + 1) * STRIDE];
            rec[COUNT] = n.round();
            rec[MASS] = r[1] * n / s.mass;
            for k in 0..3 {
                rec[MOMENTUM + k] = r[2 + k] * n / (s.mass * s.velocity);
            }
            rec[MV2] = r[5] * n / (s.mass * s.velocity * s.velocity);
        }
        let acc = Accumulator::from_raw(grid, data, m.samples_per_window).map_err(|e| anyhow!("{name}: {e}"))?;
        let end = w.step as f64 * m.dt;
        out.push(finish(&acc, grid, [end - span, end]));
    }
    Ok(out)
}

/// Telemetry records holding the obstacles' forces from the `fix ave/time` file.
fn records(m: &FieldsMeta, bodies: &[Body], file: &Path) -> Result<Vec<Telemetry>> {
    let f = read_ave_time(file)?;
    let want: Vec<String> =
        (0..bodies.len()).flat_map(|i| ["x", "y", "z"].map(|a| format!("v_body{i}_f{a}"))).collect();
    if f.columns != want {
        bail!(
            "{}:2: columns: {:?}, expected {:?} (export the deck again)",
            file.display(),
            f.columns.join(" "),
            want.join(" ")
        );
    }
    Ok(f.rows
        .iter()
        .map(|(step, v, _)| Telemetry {
            step: *step,
            time: *step as f64 * m.dt,
            body_forces: bodies
                .iter()
                .enumerate()
                .map(|(i, b)| BodyForce { body: *b, force: std::array::from_fn(|k| v[3 * i + k] / m.scale.force) })
                .collect(),
            ..Telemetry::default()
        })
        .collect())
}

pub fn run(args: &LammpsFieldsArgs) -> Result<()> {
    let (m, dir) = meta(&args.input)?;
    let grid = Grid::new(&m.spec, &m.sim_box).map_err(|e| anyhow!("fields.json: spec: {e}"))?;
    let chunk_path = dir.join(&m.chunks_file);
    let chunks = read_ave_chunk(&chunk_path)?;
    let fields = windows(&m, &grid, &chunks, &chunk_path)?;
    let bodies: Vec<Body> =
        m.shapes.iter().enumerate().map(|(i, s)| Body::Shape { index: i, kind: s.kind() }).collect();
    let recs = match &m.forces_series_file {
        Some(f) if !bodies.is_empty() => records(&m, &bodies, &dir.join(f))?,
        _ => Vec::new(),
    };
    let mut series =
        VtkSeries::create(&args.out).with_context(|| format!("creating the fields folder {}", args.out.display()))?;
    let forces_dir = (!bodies.is_empty()).then_some(args.out.as_path());
    let mut forces = ForceFiles::create(None, forces_dir, &bodies, 0)?;
    let mut wake = WakeLog::new(&m.shapes, forces_dir, m.sim_box.length()[2], m.mass, m.tunnel_speed);
    let mut next = 0;
    for w in &fields {
        let end = w.time[1] + 1e-9 * w.time[1].abs().max(1.0);
        while next < recs.len() && recs[next].time <= end {
            if let Some(f) = forces.as_mut() {
                f.record(&recs[next])?;
            }
            if let Some(l) = wake.as_mut() {
                l.record(&recs[next]);
            }
            next += 1;
        }
        let one = std::slice::from_ref(w);
        if let Some(f) = forces.as_mut() {
            f.windows(one)?;
        }
        if let Some(l) = wake.as_mut() {
            l.windows(one)?;
        }
        series.write(w).with_context(|| format!("writing the fields into {}", args.out.display()))?;
    }
    for r in &recs[next..] {
        if let Some(f) = forces.as_mut() {
            f.record(r)?;
        }
    }
    if let Some(f) = forces {
        f.finish()?;
    }
    if !args.quiet {
        eprintln!(
            "fields: {} window(s) of {} x {} x {} bins from {} into {}",
            series.len(),
            grid.n[0],
            grid.n[1],
            grid.n[2],
            chunk_path.display(),
            args.out.display()
        );
        if let Some(r) = wake.as_ref().and_then(WakeLog::readout) {
            eprintln!("wake of obstacle 1 (over the whole run; also {}):", crate::cli::run_wake::WAKE_CSV);
            for l in r.lines() {
                eprintln!("  {l}");
            }
        }
    }
    Ok(())
}
