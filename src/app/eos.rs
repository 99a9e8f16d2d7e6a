//! The app's equation-of-state sweep: the panel's settings, the worker thread that runs
//! [`crate::eos::run_sweep`] with its own small backend (never the main simulation's), and
//! the points and progress it reports back over a channel. The UI thread only polls.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use super::App;
use crate::eos::{EosEnsemble, EosError, EosEvent, EosPoint, EosSpec, grid};
use crate::sim::BackendChoice;

/// What the worker sends.
enum Report {
    Event(EosEvent),
    Done(Result<(), String>),
}

/// A sweep in progress.
struct Job {
    cancel: Arc<AtomicBool>,
    rx: mpsc::Receiver<Report>,
    total_steps: u64,
}

/// The panel's settings and the latest sweep's results.
pub struct EosState {
    /// Temperature, ensemble, atoms, steps and backend of the next sweep (its densities
    /// come from the three fields below).
    pub spec: EosSpec,
    pub rho_from: f64,
    pub rho_to: f64,
    pub rho_step: f64,
    /// Points of the running or last sweep, and the temperature they were run at.
    pub points: Vec<EosPoint>,
    pub points_temperature: f64,
    /// Fraction of the running sweep done.
    pub progress: f64,
    /// The last outcome or refusal, and whether it is an error.
    pub note: Option<(String, bool)>,
    job: Option<Job>,
}

impl EosState {
    /// Defaults sized for the app: 256 atoms and 1,000 + 10,000 steps per density (seconds on a CPU).
    pub fn new(backend: BackendChoice) -> EosState {
        let spec = EosSpec { atoms: 256, equilibration: 1_000, production: 10_000, backend, ..EosSpec::default() };
        EosState {
            points_temperature: spec.temperature,
            spec,
            rho_from: 0.1,
            rho_to: 0.9,
            rho_step: 0.1,
            points: Vec::new(),
            progress: 0.0,
            note: None,
            job: None,
        }
    }

    pub fn is_running(&self) -> bool {
        self.job.is_some()
    }

    /// The settings of a sweep from the fields, or the refusal naming the field.
    pub fn spec_to_run(&self) -> Result<EosSpec, String> {
        let label = |field: &str| {
            match field {
                "densities" => "Densities",
                "temperature" => "Temperature",
                "atoms" => "Atoms",
                "production" | "equilibration" => "Steps per density",
                "trajectory" => "HMC trajectory",
                other => other,
            }
            .to_string()
        };
        let refuse = |e: EosError| match e {
            EosError::Invalid { field, message } => format!("{}: {message}", label(field)),
            other => other.to_string(),
        };
        let densities = grid::densities(self.rho_from, self.rho_to, self.rho_step).map_err(refuse)?;
        let spec = EosSpec { densities, ..self.spec.clone() };
        spec.validate().map_err(refuse)?;
        Ok(spec)
    }

    /// Starts a sweep on its own thread (refused, with a note, while one runs or when a field is bad).
    pub fn start(&mut self) {
        if self.job.is_some() {
            return;
        }
        let spec = match self.spec_to_run() {
            Ok(s) => s,
            Err(e) => {
                self.note = Some((e, true));
                return;
            }
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let (flag, job_spec) = (cancel.clone(), spec.clone());
        let spawned = std::thread::Builder::new().name("eos sweep".into()).spawn(move || {
            let events = tx.clone();
            let result = crate::eos::run_sweep(&job_spec, &flag, &mut |e| {
                let _ = events.send(Report::Event(e));
            });
            let _ = tx.send(Report::Done(result.map(|_| ()).map_err(|e| e.to_string())));
        });
        if let Err(e) = spawned {
            self.note = Some((format!("could not start the sweep's thread: {e}"), true));
            return;
        }
        self.points.clear();
        self.points_temperature = spec.temperature;
        self.progress = 0.0;
        self.note = Some((format!("running {} densities…", spec.densities.len()), false));
        self.job = Some(Job { cancel, rx, total_steps: spec.total_steps() });
    }

    /// Asks the running sweep to stop (it ends within one chunk of steps).
    pub fn cancel(&mut self) {
        if let Some(j) = &self.job {
            j.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Takes what the worker reported since the last call.
    pub fn poll(&mut self) {
        let Some(job) = &self.job else { return };
        let mut done = None;
        loop {
            match job.rx.try_recv() {
                Ok(Report::Event(EosEvent::Progress { steps_done, .. })) => {
                    self.progress = steps_done as f64 / job.total_steps.max(1) as f64;
                }
                Ok(Report::Event(EosEvent::Point(p))) => self.points.push(p),
                Ok(Report::Done(r)) => {
                    done = Some(r);
                    break;
                }
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    done = Some(Err("the sweep's thread ended without a result".into()));
                    break;
                }
            }
        }
        if let Some(r) = done {
            self.job = None;
            self.note = Some(match r {
                Ok(()) => (format!("done: {} densities", self.points.len()), false),
                Err(e) if e == EosError::Cancelled.to_string() => {
                    (format!("cancelled after {} densities", self.points.len()), false)
                }
                Err(e) => (format!("the sweep failed: {e}"), true),
            });
        }
    }
}

impl Drop for EosState {
    fn drop(&mut self) {
        self.cancel();
    }
}

impl App {
    pub fn save_eos_dialog(&mut self) {
        let dialog = rfd::FileDialog::new().add_filter("CSV", &["csv"]).set_file_name("eos.csv");
        if let Some(path) = dialog.save_file() {
            self.save_eos_csv(path);
        }
    }

    /// Writes the sweep's points (`rho,P,P_err,U,U_err`) to `path`, atomically, in the background.
    pub fn save_eos_csv(&mut self, path: PathBuf) {
        if self.eos.points.is_empty() {
            self.notify("no equation-of-state points to save yet: run a sweep first", true);
            return;
        }
        let points = self.eos.points.clone();
        self.spawn_task("saving the equation of state", move || {
            crate::eos::table::write_csv(&path, &points).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(format!("wrote {} densities to {}", points.len(), path.display()))
        });
    }
}

/// The ensembles offered, with their labels.
pub const ENSEMBLES: [(EosEnsemble, &str); 2] = [(EosEnsemble::Nvt, "NVT (CSVR)"), (EosEnsemble::Hmc, "HMC")];
