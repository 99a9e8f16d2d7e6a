//! The Measure panel's state: a transport measurement (self-diffusion or shear viscosity) of
//! the running simulation, without disturbing it. The settings (quantity, longest lag or
//! t_cut, production steps, a viscosity for the Yeh-Hummer correction), checked by
//! `transport::request::check` as `measure` is and worded with the panel's fields; the
//! records from `SimReport::Transport` of the sampling that started last (a restart by an edit
//! voids the earlier ones and is said in the panel), the mean temperature from the telemetry,
//! progress and time left, finishing (sampling stops) at the asked steps; and the result,
//! recomputed on a worker thread at most twice a second (`transport::report`, the text
//! `measure` prints). "Copy as text" and the CSV export are in `measure_files.rs`.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::App;
use super::commands::{SimCommand, SimStatus};
use crate::physics::params::SimParams;
use crate::sim::Telemetry;
use crate::transport::report::{self, Curves, Inputs, Names, Report, Run};
use crate::transport::request::{self, Quantity, Refusal, Request};
use crate::transport::viscosity::GreenKubo;
use crate::transport::{TransportSamples, TransportSpec, viscosity};

/// The result is recomputed at most this often while records arrive.
const ANALYSE_EVERY: Duration = Duration::from_millis(500);

/// How the texts name a viscosity for the Yeh-Hummer correction given in the panel.
pub const APP_NAMES: Names = Names {
    viscosity_from: "the viscosity entered",
    give_viscosity: "enter a measured η* under \"Yeh-Hummer with η*\"",
};

/// Where a measurement is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Asked for; the simulation thread has not said where sampling starts yet.
    Starting,
    Sampling,
    /// The asked steps were reached; sampling is off.
    Finished,
    /// Stopped early, by the person or a refusal; sampling is off.
    Stopped,
}

/// One analysis of the records so far: the curves and the result, or why there is none yet.
#[derive(Debug)]
pub struct Live {
    pub curves: Curves,
    pub result: Result<Report, String>,
    /// Production steps behind it.
    pub steps: u64,
}

/// A measurement: what was asked, its records and its newest analysis.
pub struct Measurement {
    pub request: Request,
    pub spec: TransportSpec,
    /// The parameters it runs with (time step, species, cut-off).
    pub params: SimParams,
    /// The backend it runs on (kept current from the status reports).
    pub backend: String,
    /// The step sampling (re)started at (None until the simulation thread says).
    pub since: Option<u64>,
    /// The newest step the simulation is known to have reached.
    pub reached: u64,
    pub phase: Phase,
    /// Times an edit restarted it.
    pub restarts: u32,
    chunks: Vec<Arc<TransportSamples>>,
    temperature_sum: f64,
    temperatures: usize,
    pub live: Option<Arc<Live>>,
    job: Option<mpsc::Receiver<Live>>,
    analysed: Option<Instant>,
    /// Records arrived since the last analysis began; the final one is still due.
    fresh: bool,
    final_due: bool,
}

impl Measurement {
    /// Production steps done, at most the asked ones.
    pub fn done(&self) -> u64 {
        self.since.map_or(0, |s| self.reached.saturating_sub(s).min(self.request.steps))
    }

    /// The last production step (None until sampling started).
    fn end(&self) -> Option<u64> {
        self.since.map(|s| s + self.request.steps)
    }

    /// Records kept (MSD, VACF and stress).
    pub fn records(&self) -> usize {
        self.chunks.iter().map(|c| c.msd.len() + c.vacf.len() + c.stress.len()).sum()
    }

    /// Mean temperature of the production telemetry so far.
    pub fn temperature(&self) -> Option<f64> {
        (self.temperatures > 0).then(|| self.temperature_sum / self.temperatures as f64)
    }

    /// Whether the simulation is sampling for it (or about to).
    pub fn is_running(&self) -> bool {
        matches!(self.phase, Phase::Starting | Phase::Sampling)
    }

    /// Whether an analysis is being computed.
    pub fn analysing(&self) -> bool {
        self.job.is_some() || self.final_due
    }

    /// Forgets the records: sampling starts again at `step`.
    fn restart(&mut self, step: u64) {
        self.since = Some(step);
        self.reached = step;
        self.chunks.clear();
        (self.temperature_sum, self.temperatures) = (0.0, 0);
        self.live = None;
        self.job = None;
        self.fresh = false;
    }
}

/// The panel's settings and the current or last measurement.
pub struct MeasureState {
    pub quantity: Quantity,
    /// Diffusion: the longest MSD lag (tau).
    pub lag: f64,
    /// Viscosity: where the Green-Kubo integral is read (tau).
    pub t_cut: f64,
    /// Production steps typed; None follows the fewest the settings need.
    pub steps: Option<u64>,
    /// A shear viscosity (reduced) for the Yeh-Hummer correction of D; None: the
    /// Lautenschlaeger-Hasse correlation where it applies.
    pub viscosity: Option<f64>,
    /// The last shear viscosity measured here (offered for the correction, and shown beside
    /// the flow profile's in a driven channel).
    pub last_viscosity: Option<GreenKubo>,
    /// What the panel says: a refusal, a restart or an outcome, and whether it is an error.
    pub note: Option<(String, bool)>,
    pub run: Option<Measurement>,
}

impl Default for MeasureState {
    fn default() -> Self {
        MeasureState {
            quantity: Quantity::Diffusion,
            lag: 20.0,
            t_cut: viscosity::DEFAULT_T_CUT,
            steps: None,
            viscosity: None,
            last_viscosity: None,
            note: None,
            run: None,
        }
    }
}

impl MeasureState {
    /// Whether a measurement is sampling (or about to).
    pub fn is_running(&self) -> bool {
        self.run.as_ref().is_some_and(Measurement::is_running)
    }

    /// Analyses a finished or stopped measurement again (after the Yeh-Hummer viscosity
    /// changed, say).
    pub fn reanalyse(&mut self) {
        if let Some(m) = self.run.as_mut().filter(|m| !m.is_running() && m.since.is_some()) {
            m.final_due = true;
        }
    }

    /// The request of the panel's settings at time step `dt` (the fewest steps unless typed).
    pub fn request(&self, dt: f64) -> Request {
        let mut r = Request {
            quantity: self.quantity,
            steps: 0,
            lag: self.lag,
            t_cut: self.t_cut,
            hold: None,
            viscosity: self.viscosity.filter(|_| self.quantity == Quantity::Diffusion),
        };
        r.steps = self.steps.unwrap_or_else(|| r.min_steps(dt));
        r
    }
}

/// A refusal worded with the panel's fields.
pub fn refusal_text(r: &Refusal, req: &Request) -> String {
    match r {
        Refusal::TooFewAtoms(n) => format!("the system has {n} atom(s): measuring transport needs at least 2"),
        Refusal::NoSteps => "Production: 0 steps; give the number of steps to sample".into(),
        Refusal::Thermostat(t) => format!(
            "the {} thermostat changes the dynamics transport is measured from: choose Bussi stochastic rescaling \
             (CSVR) or NVE under Temperature > Ensemble",
            t.name()
        ),
        Refusal::BadHold(h) => format!("hold {h}: the coupling time must be a positive number of τ"),
        Refusal::BadViscosity(v) => format!("Yeh-Hummer η* {v}: the shear viscosity must be a positive number"),
        Refusal::BadSampling(e) => format!("Longest lag {} τ: {e}", req.lag),
        Refusal::LagTooShort { min } => {
            format!("Longest lag {} τ: it must be at least 10 time steps ({min} τ)", req.lag)
        }
        Refusal::BadTCut => {
            format!("t_cut {} τ: the cut of the Green-Kubo integral must be a positive time", req.t_cut)
        }
        Refusal::TooShort { needed } => {
            let what = match req.quantity {
                Quantity::Diffusion => format!("lags to {} τ and enough time origins for a standard error", req.lag),
                Quantity::Viscosity => format!(
                    "{} blocks of {} × t_cut = {} τ for a standard error",
                    viscosity::MIN_BLOCKS,
                    viscosity::BLOCK_CUTS,
                    req.t_cut
                ),
            };
            format!("Production: {} steps are too few for {what}: at least {needed} steps are needed", req.steps)
        }
        Refusal::Walls => "viscosity by Green-Kubo needs a box periodic along every axis, and this one has walls: \
                           open a periodic scene (e.g. in_lj.ron)"
            .into(),
    }
}

impl App {
    /// The panel's request for the current parameters, checked: the sampling to ask for, or
    /// the refusal worded with the panel's fields.
    pub fn measure_check(&self) -> Result<(Request, TransportSpec), String> {
        let req = self.measure.request(self.params.dt);
        let atoms = self.status.as_ref().map_or(0, |s| s.n_atoms);
        request::check(&req, &self.params, atoms, &self.sim_box())
            .map(|spec| (req, spec))
            .map_err(|r| refusal_text(&r, &req))
    }

    /// Starts a measurement from the current step (refused, with the reason in the panel, when
    /// the settings or the system do not allow one).
    pub fn start_measurement(&mut self) {
        let (request, spec) = match self.measure_check() {
            Ok(r) => r,
            Err(e) => {
                self.measure.note = Some((e, true));
                return;
            }
        };
        self.sim.send(SimCommand::Transport(Some(spec)));
        let backend = self.status.as_ref().map_or_else(String::new, |s| s.info.kind.to_string());
        self.measure.note = None;
        self.measure.run = Some(Measurement {
            request,
            spec,
            params: self.params.clone(),
            backend,
            since: None,
            reached: 0,
            phase: Phase::Starting,
            restarts: 0,
            chunks: Vec::new(),
            temperature_sum: 0.0,
            temperatures: 0,
            live: None,
            job: None,
            analysed: None,
            fresh: false,
            final_due: false,
        });
    }

    /// Stops the measurement early; its result so far is analysed once more.
    pub fn stop_measurement(&mut self) {
        let Some(m) = self.measure.run.as_mut().filter(|m| m.is_running()) else { return };
        self.sim.send(SimCommand::Transport(None));
        m.phase = Phase::Stopped;
        m.final_due = m.since.is_some();
        let (done, asked) = (m.done(), m.request.steps);
        self.measure.note = Some((format!("stopped after {done} of {asked} steps"), false));
    }

    /// Sampling (re)started at `step`; `why` says what restarted it.
    pub(super) fn transport_started(&mut self, step: u64, why: Option<String>) {
        let Some(m) = self.measure.run.as_mut().filter(|m| m.is_running()) else { return };
        m.restart(step);
        m.phase = Phase::Sampling;
        let Some(why) = why else { return };
        m.restarts += 1;
        // The edit may have changed what the measurement needs (a time step) or allows.
        match self.measure_check() {
            Ok((request, spec)) => {
                let text = format!("{why} at step {step}: measurement restarted");
                self.notify(text.clone(), false);
                self.measure.note = Some((text, false));
                let params = self.params.clone();
                let Some(m) = self.measure.run.as_mut() else { return };
                m.params = params;
                if spec != m.spec {
                    self.sim.send(SimCommand::Transport(Some(spec)));
                    (m.spec, m.phase, m.since) = (spec, Phase::Starting, None);
                }
                m.request = request;
            }
            Err(e) => {
                self.sim.send(SimCommand::Transport(None));
                if let Some(m) = self.measure.run.as_mut() {
                    m.phase = Phase::Stopped;
                }
                let text = format!("{why} at step {step}: the measurement stopped: {e}");
                self.notify(text.clone(), true);
                self.measure.note = Some((text, true));
            }
        }
    }

    /// Records of the sampling that started at `since`.
    pub(super) fn transport_arrived(&mut self, since: u64, samples: TransportSamples) {
        let Some(m) = self.measure.run.as_mut() else { return };
        if m.phase != Phase::Sampling || m.since != Some(since) {
            return;
        }
        let last = [samples.msd.last(), samples.vacf.last()].into_iter().flatten().map(|r| r.step);
        let newest = last.chain(samples.stress.last().map(|r| r.step)).max().unwrap_or(0);
        m.reached = m.reached.max(newest);
        m.chunks.push(Arc::new(samples));
        m.fresh = true;
    }

    /// Sampling was refused or failed: the measurement stops with the backend's reason.
    pub(super) fn transport_off(&mut self, why: String) {
        let Some(m) = self.measure.run.as_mut().filter(|m| m.is_running()) else { return };
        m.phase = Phase::Stopped;
        m.final_due = m.since.is_some();
        let backend = self.status.as_ref().map_or("", |s| s.info.kind);
        let hint =
            if backend == "cpu" { "" } else { "; switch the backend to CPU (Simulation panel) to measure there" };
        let text = format!("the {backend} backend cannot run this measurement: {why}{hint}");
        self.notify(text.clone(), true);
        self.measure.note = Some((text, true));
    }

    /// The production run's temperatures, and how far the simulation got.
    pub(super) fn measure_telemetry(&mut self, t: &[Telemetry]) {
        let Some(m) = self.measure.run.as_mut().filter(|m| m.phase == Phase::Sampling) else { return };
        let (Some(since), Some(end)) = (m.since, m.end()) else { return };
        for r in t.iter().filter(|r| r.step > since && r.step <= end) {
            // In a flow, the thermal temperature: the stream is not heat.
            m.temperature_sum += r.thermal_temperature().unwrap_or(r.temperature);
            m.temperatures += 1;
        }
    }

    /// A status report (sent after a chunk's records): how far the simulation got, and on
    /// which backend.
    pub(super) fn measure_status(&mut self, s: &SimStatus) {
        if let Some(m) = self.measure.run.as_mut().filter(|m| m.phase == Phase::Sampling) {
            m.reached = m.reached.max(s.step);
            if m.backend != s.info.kind {
                m.backend = s.info.kind.to_string();
            }
        }
    }

    /// Per frame: finishes at the asked steps, takes a finished analysis, starts the next one.
    pub(super) fn poll_measurement(&mut self) {
        let Some(m) = self.measure.run.as_mut() else { return };
        if m.phase == Phase::Sampling && m.done() >= m.request.steps {
            self.sim.send(SimCommand::Transport(None));
            m.phase = Phase::Finished;
            m.final_due = true;
            let (since, end) = (m.since.unwrap_or(0), m.end().unwrap_or(0));
            self.measure.note = Some((format!("finished: steps {since} to {end}"), false));
        }
        let Some(m) = self.measure.run.as_mut() else { return };
        if let Some(rx) = &m.job {
            match rx.try_recv() {
                Ok(live) => {
                    m.job = None;
                    if !m.is_running()
                        && m.request.quantity == Quantity::Viscosity
                        && let Ok(r) = &live.result
                    {
                        let state = self.status.as_ref().map(|s| {
                            (s.n_atoms as f64 / s.sim_box.volume().max(f64::MIN_POSITIVE), s.params.temperature)
                        });
                        self.measure.last_viscosity = Some(GreenKubo {
                            value: r.value,
                            stderr: r.stderr,
                            density: state.map_or(f64::NAN, |s| s.0),
                            temperature: state.map_or(f64::NAN, |s| s.1),
                        });
                    }
                    m.live = Some(Arc::new(live));
                }
                Err(mpsc::TryRecvError::Empty) => return,
                Err(mpsc::TryRecvError::Disconnected) => m.job = None,
            }
        }
        let due = m.analysed.is_none_or(|t| t.elapsed() >= ANALYSE_EVERY);
        if m.final_due || (m.fresh && due && m.phase == Phase::Sampling) {
            self.spawn_analysis();
        }
    }

    /// Analyses the records so far on a worker thread.
    fn spawn_analysis(&mut self) {
        let sim_box = self.sim_box();
        let viscosity = self.measure.viscosity;
        let fallback_t = self.last_telemetry.as_ref().map(|t| t.thermal_temperature().unwrap_or(t.temperature));
        let Some(m) = self.measure.run.as_mut() else { return };
        let Some(since) = m.since else { return };
        let end = since + m.request.steps;
        let chunks = m.chunks.clone();
        let (mut request, params, backend) = (m.request, m.params.clone(), m.backend.clone());
        request.viscosity = viscosity.filter(|_| request.quantity == Quantity::Diffusion);
        let stress_every = m.spec.stress_every;
        let temperature = m.temperature().or(fallback_t).unwrap_or(params.temperature);
        let steps = m.done();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new().name("measure analysis".into()).spawn(move || {
            let samples = merge(&chunks, end);
            let atoms: usize = samples.species_counts.iter().sum();
            let inputs = Inputs {
                request: &request,
                params: &params,
                samples: &samples,
                stress_every,
                temperature,
                atoms,
                density: atoms as f64 / sim_box.volume(),
                sim_box,
                run: Run { backend: &backend, equilibrate: 0, thermostat: params.thermostat.name() },
                names: &APP_NAMES,
            };
            let result = report::report(&inputs);
            let curves = match &result {
                Ok(r) => r.curves.clone(),
                Err(_) => report::curves(&inputs),
            };
            let _ = tx.send(Live { curves, result, steps });
        });
        if spawned.is_ok() {
            m.job = Some(rx);
            m.analysed = Some(Instant::now());
            m.fresh = false;
            m.final_due = false;
        }
    }

    /// Time left at the measured step rate (None while paused or unknown).
    pub fn measure_time_left(&self) -> Option<Duration> {
        let m = self.measure.run.as_ref().filter(|m| m.is_running())?;
        let s = self.status.as_ref().filter(|s| s.running && s.steps_per_s > 0.0)?;
        let left = m.request.steps.saturating_sub(m.done()) as f64;
        Some(Duration::from_secs_f64(left / s.steps_per_s))
    }
}

/// The records of `chunks` up to step `end`, with the newest species counts.
fn merge(chunks: &[Arc<TransportSamples>], end: u64) -> TransportSamples {
    let mut all = TransportSamples::default();
    for c in chunks {
        all.msd.extend(c.msd.iter().filter(|r| r.step <= end).cloned());
        all.vacf.extend(c.vacf.iter().filter(|r| r.step <= end).cloned());
        all.stress.extend(c.stress.iter().filter(|r| r.step <= end).copied());
        if !c.species_counts.is_empty() {
            all.species_counts.clone_from(&c.species_counts);
        }
    }
    all
}
