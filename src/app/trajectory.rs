//! The simulation thread's trajectory recorder: snapshots go through a one-deep channel to a
//! writer thread that formats and writes them (a million-atom frame takes a while to format),
//! so the simulation waits only when the writer is a whole frame behind. Finishing joins the
//! writer, which renames the file into place; dropping the recorder finishes it too, so a
//! trajectory survives closing the app.

use std::path::PathBuf;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use super::commands::{TrajectorySpec, TrajectoryStatus};
use crate::io::trajectory::TrajectoryWriter;
use crate::sim::Snapshot;

pub struct Recorder {
    tx: Option<SyncSender<Snapshot>>,
    join: Option<JoinHandle<Result<u64, String>>>,
    path: PathBuf,
    pub every: u64,
    /// The next step that gets a frame.
    pub next: u64,
    frames: u64,
}

impl Recorder {
    /// Creates the file and the writer thread; `first` (the current state) is the first frame when
    /// its step is a multiple of the interval, else the first frame is the next such step.
    pub fn start(
        spec: &TrajectorySpec,
        species: &[crate::physics::params::Species],
        first: Snapshot,
    ) -> Result<Recorder, String> {
        if spec.every == 0 {
            return Err("a trajectory needs a frame interval of at least 1 step".into());
        }
        let shown = spec.path.display().to_string();
        let names = species.iter().map(|s| s.name.clone()).collect();
        let masses = species.iter().map(|s| s.mass).collect();
        let mut writer = TrajectoryWriter::create(&spec.path, spec.format, spec.units, names, masses)
            .map_err(|e| format!("{shown}: {e}"))?;
        let (tx, rx) = sync_channel::<Snapshot>(1);
        let label = shown.clone();
        let join = std::thread::Builder::new()
            .name("trajectory".into())
            .spawn(move || {
                for snap in rx {
                    writer.write(&snap).map_err(|e| format!("{label}: {e}"))?;
                }
                let frames = writer.frames();
                writer.finish().map_err(|e| format!("{label}: {e}"))?;
                Ok(frames)
            })
            .map_err(|e| format!("could not start the trajectory writer: {e}"))?;
        let step = first.step;
        let mut r = Recorder {
            tx: Some(tx),
            join: Some(join),
            path: spec.path.clone(),
            every: spec.every,
            next: (step / spec.every + 1) * spec.every,
            frames: 0,
        };
        // Frames on the multiples of `every`, as LAMMPS's `dump N` writes them: the state at
        // the start is the first frame only when it is on one (the app's pace stops anywhere).
        if step.is_multiple_of(spec.every) {
            r.send(first)?;
        }
        Ok(r)
    }

    /// Queues a frame (waits while the writer is a frame behind) and moves `next` on.
    pub fn send(&mut self, snap: Snapshot) -> Result<(), String> {
        self.next = (snap.step / self.every + 1) * self.every;
        let tx = self.tx.as_ref().ok_or("the trajectory is finished")?;
        if tx.send(snap).is_err() {
            // The writer stopped on an error: finishing reports it.
            return Err(self.finish().err().unwrap_or_else(|| "the trajectory writer stopped".into()));
        }
        self.frames += 1;
        Ok(())
    }

    pub fn status(&self) -> TrajectoryStatus {
        TrajectoryStatus { path: self.path.clone(), every: self.every, frames: self.frames }
    }

    /// Closes the channel and waits for the writer to finish the file. A sentence for the
    /// person either way.
    pub fn finish(&mut self) -> Result<String, String> {
        self.tx = None;
        let Some(join) = self.join.take() else { return Err("the trajectory was already finished".into()) };
        match join.join() {
            Ok(Ok(frames)) => Ok(format!("wrote {frames} trajectory frames to {}", self.path.display())),
            Ok(Err(e)) => Err(format!("the trajectory stopped: {e}")),
            Err(_) => Err(format!("the trajectory writer for {} crashed", self.path.display())),
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if self.join.is_some() {
            let _ = self.finish();
        }
    }
}
