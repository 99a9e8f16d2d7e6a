//! The data behind the live plots, already in the units they are shown in: time series of
//! temperature (K; in flows also the thermal temperature relative to the local flow, which
//! the panels show first), energies per atom (kJ/mol), pressure (MPa) against time (ps); g(r)
//! averaged over a window of frames; the latest speed histogram (m/s) with the
//! Maxwell-Boltzmann density at the measured temperature; the density profile along y (nm).
//! Data only: `ui/plots.rs` draws it.

use std::collections::VecDeque;

use super::commands::Analysis;
use crate::analysis::Histogram;
use crate::sim::Telemetry;
use crate::units;

/// Points kept per series; older halves are thinned when full.
const MAX_POINTS: usize = 4096;

/// A time series of (t, y) points.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub points: Vec<[f64; 2]>,
}

/// Appends `x`; when full, keeps every other item of the older half first: long runs stay
/// visible, memory stays bounded.
fn push_thinned<T: Clone>(v: &mut Vec<T>, x: T) {
    if v.len() >= MAX_POINTS {
        let half = v.len() / 2;
        let old: Vec<T> = v[..half].iter().step_by(2).cloned().collect();
        v.splice(..half, old);
    }
    v.push(x);
}

impl Series {
    fn push(&mut self, t: f64, y: f64) {
        push_thinned(&mut self.points, [t, y]);
    }
}

/// Everything the plot panel draws.
#[derive(Clone, Debug, Default)]
pub struct Plots {
    /// The ordinary kinetic temperature, all motion (a stream's too).
    pub temperature_k: Series,
    /// The thermal temperature relative to the local flow, from the records that have one
    /// (`Telemetry::thermal`: a wind tunnel or a thermostat relative to the flow).
    pub thermal_k: Series,
    pub kinetic: Series,
    pub potential: Series,
    pub total: Series,
    pub pressure_mpa: Series,
    /// The telemetry records behind the series (thinned the same way): the thermo CSV export.
    pub records: Vec<Telemetry>,
    /// Last few g(r) curves (r in nm), averaged for display.
    rdf_frames: VecDeque<Vec<[f64; 2]>>,
    pub rdf_window: usize,
    /// The region the averaged g(r) frames are over (None: the whole box), and why the last
    /// region g(r) could not be computed.
    pub rdf_region: Option<crate::analysis::RdfRegion>,
    pub rdf_error: Option<String>,
    /// Speed density per (m/s) against speed (m/s), and the Maxwell-Boltzmann curve.
    pub speed: Vec<[f64; 2]>,
    pub maxwell: Vec<[f64; 2]>,
    /// Atoms per nm^3 against height (nm).
    pub density: Vec<[f64; 2]>,
    pub analysis_step: u64,
    last_time: f64,
    /// The Forces plot shows the wall faces' normal forces too.
    pub show_wall_forces: bool,
}

/// Energy per atom in kJ/mol.
fn per_atom_kj(e: f64, n: usize) -> f64 {
    units::reduced_energy_to_kj_per_mol(if n == 0 { 0.0 } else { e / n as f64 })
}

impl Plots {
    pub fn new(rdf_window: usize) -> Plots {
        Plots { rdf_window: rdf_window.max(1), ..Plots::default() }
    }

    /// Appends telemetry records. A step that goes back (reset, undo, load) starts the series over.
    pub fn add_telemetry(&mut self, records: &[Telemetry]) {
        for t in records {
            let time_ps = units::reduced_time_to_ps(t.time);
            if time_ps < self.last_time {
                self.clear_series();
            }
            self.last_time = time_ps;
            let n = t.n_atoms;
            push_thinned(&mut self.records, t.clone());
            self.temperature_k.push(time_ps, units::reduced_to_kelvin(t.temperature));
            if let Some(thermal) = t.thermal_temperature() {
                self.thermal_k.push(time_ps, units::reduced_to_kelvin(thermal));
            }
            self.kinetic.push(time_ps, per_atom_kj(t.kinetic_energy, n));
            self.potential.push(time_ps, per_atom_kj(t.potential_energy(), n));
            self.total.push(time_ps, per_atom_kj(t.total_energy(), n));
            self.pressure_mpa.push(time_ps, units::reduced_pressure_to_mpa(t.pressure));
        }
    }

    /// Forgets the time series (not the histograms).
    pub fn clear_series(&mut self) {
        for s in [
            &mut self.temperature_k,
            &mut self.thermal_k,
            &mut self.kinetic,
            &mut self.potential,
            &mut self.total,
            &mut self.pressure_mpa,
        ] {
            s.points.clear();
        }
        self.records.clear();
        self.last_time = 0.0;
    }

    /// Takes new histograms.
    pub fn add_analysis(&mut self, a: &Analysis) {
        self.analysis_step = a.step;
        if a.rdf_region != self.rdf_region {
            self.rdf_frames.clear();
            self.rdf_region = a.rdf_region;
        }
        self.rdf_error = a.rdf_error.clone();
        if let Some(rdf) = &a.rdf {
            let curve: Vec<[f64; 2]> = (0..rdf.values.len())
                .map(|i| [units::reduced_length_to_nm(rdf.bin_centre(i)), rdf.values[i]])
                .collect();
            if self.rdf_frames.front().is_some_and(|f| f.len() != curve.len()) {
                self.rdf_frames.clear();
            }
            self.rdf_frames.push_back(curve);
            while self.rdf_frames.len() > self.rdf_window {
                self.rdf_frames.pop_front();
            }
        }
        if let Some(h) = &a.speed {
            self.speed = speed_curve(h);
            let v_max = units::reduced_speed_to_m_per_s(h.hi);
            self.maxwell = maxwell_curve(a.temperature, &a.masses, v_max, 120);
        }
        if let Some(d) = &a.density {
            let nm3 = units::reduced_length_to_nm(1.0).powi(3);
            self.density = (0..d.values.len())
                .map(|i| [units::reduced_length_to_nm(d.bin_centre(i)), d.values[i] / nm3])
                .collect();
        }
    }

    /// g(r) averaged over the frames in the window.
    pub fn rdf(&self) -> Vec<[f64; 2]> {
        let Some(first) = self.rdf_frames.front() else { return Vec::new() };
        let k = self.rdf_frames.len() as f64;
        (0..first.len()).map(|i| [first[i][0], self.rdf_frames.iter().map(|f| f[i][1]).sum::<f64>() / k]).collect()
    }

    /// Frames currently averaged in g(r).
    pub fn rdf_frames(&self) -> usize {
        self.rdf_frames.len()
    }

    pub fn reset_rdf(&mut self) {
        self.rdf_frames.clear();
    }

    pub fn set_rdf_window(&mut self, w: usize) {
        self.rdf_window = w.max(1);
        while self.rdf_frames.len() > self.rdf_window {
            self.rdf_frames.pop_front();
        }
    }
}

/// A speed histogram (probability density per sigma/tau) as density per (m/s) against m/s.
fn speed_curve(h: &Histogram) -> Vec<[f64; 2]> {
    let per = units::reduced_speed_to_m_per_s(1.0);
    (0..h.values.len()).map(|i| [h.bin_centre(i) * per, h.values[i] / per]).collect()
}

/// The Maxwell-Boltzmann speed density at reduced temperature `t`, per (m/s), of a mixture
/// whose species have (mass, fraction) `masses` (argon alone when empty): the
/// fraction-weighted sum of each species' density.
pub fn maxwell_curve(t: f64, masses: &[(f64, f64)], v_max_m_s: f64, points: usize) -> Vec<[f64; 2]> {
    let per = units::reduced_speed_to_m_per_s(1.0);
    if t.is_nan() || t <= 0.0 {
        return Vec::new();
    }
    let argon = [(1.0, 1.0)];
    let masses = if masses.is_empty() { &argon[..] } else { masses };
    (0..=points)
        .map(|i| {
            let v_ms = v_max_m_s * i as f64 / points as f64;
            let v = v_ms / per;
            let f: f64 = masses
                .iter()
                .map(|&(m, x)| {
                    let a = t / m;
                    x * 4.0
                        * std::f64::consts::PI
                        * (1.0 / (2.0 * std::f64::consts::PI * a)).powf(1.5)
                        * v
                        * v
                        * (-v * v / (2.0 * a)).exp()
                })
                .sum();
            [v_ms, f / per]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maxwell_curve_is_a_density() {
        let c = maxwell_curve(1.0, &[], units::reduced_speed_to_m_per_s(8.0), 2000);
        let dv = c[1][0] - c[0][0];
        let integral: f64 = c.iter().map(|p| p[1] * dv).sum();
        assert!((integral - 1.0).abs() < 1e-3, "{integral}");
        // A mixture: still a density, and krypton (heavier) pulls the peak to lower speeds.
        let mix = maxwell_curve(1.0, &[(1.0, 0.5), (2.0977, 0.5)], units::reduced_speed_to_m_per_s(8.0), 2000);
        let integral: f64 = mix.iter().map(|p| p[1] * dv).sum();
        assert!((integral - 1.0).abs() < 1e-3, "{integral}");
        let peak = |c: &[[f64; 2]]| c.iter().fold([0.0, 0.0], |m, p| if p[1] > m[1] { *p } else { m })[0];
        assert!(peak(&mix) < peak(&c));
    }

    #[test]
    fn series_are_bounded_and_restart_when_time_goes_back() {
        let mut p = Plots::new(3);
        let rec = |step: u64| Telemetry {
            step,
            time: step as f64 * 0.005,
            n_atoms: 10,
            temperature: 1.0,
            ..Default::default()
        };
        let many: Vec<Telemetry> = (0..10_000).map(rec).collect();
        p.add_telemetry(&many);
        assert!(p.temperature_k.points.len() <= MAX_POINTS);
        assert_eq!(p.records.len(), p.temperature_k.points.len());
        assert_eq!(p.records.last().unwrap().step, 9999);
        assert!((p.temperature_k.points.last().unwrap()[1] - 119.8).abs() < 1e-9);
        p.add_telemetry(&[rec(5)]);
        assert_eq!(p.temperature_k.points.len(), 1);
        assert!(p.thermal_k.points.is_empty(), "no record had a thermal temperature");
    }

    #[test]
    fn records_with_a_thermal_temperature_fill_its_series_beside_the_ordinary_one() {
        let mut p = Plots::new(3);
        let thermal = crate::sim::ThermalTelemetry { temperature: 3.0, ..Default::default() };
        let rec = |step: u64, thermal| Telemetry {
            step,
            time: step as f64 * 0.005,
            n_atoms: 10,
            temperature: 5.25,
            thermal,
            ..Default::default()
        };
        p.add_telemetry(&[rec(100, Some(thermal)), rec(200, Some(thermal)), rec(300, None)]);
        assert_eq!(p.temperature_k.points.len(), 3);
        assert_eq!(p.thermal_k.points.len(), 2);
        assert!((p.thermal_k.points[1][1] - 3.0 * 119.8).abs() < 1e-9);
        assert!((p.temperature_k.points[1][1] - 5.25 * 119.8).abs() < 1e-9);
        assert_eq!(p.thermal_k.points[1][0], p.temperature_k.points[1][0]);
        p.clear_series();
        assert!(p.thermal_k.points.is_empty());
    }

    #[test]
    fn rdf_window_averages() {
        let mut p = Plots::new(2);
        for v in [1.0, 2.0, 4.0] {
            let rdf = Histogram { lo: 0.0, hi: 1.0, values: vec![v; 4] };
            p.add_analysis(&Analysis {
                step: 0,
                temperature: 1.0,
                rdf: Some(rdf),
                rdf_region: None,
                rdf_error: None,
                speed: None,
                density: None,
                masses: vec![],
                cost: Default::default(),
            });
        }
        assert_eq!(p.rdf_frames(), 2);
        assert!((p.rdf()[0][1] - 3.0).abs() < 1e-12);
        // A frame over another region starts the average afresh.
        let region = crate::analysis::RdfRegion { lo: [0.0; 3], hi: [1.0; 3] };
        let rdf = Histogram { lo: 0.0, hi: 1.0, values: vec![5.0; 4] };
        let a = Analysis {
            step: 1,
            temperature: 1.0,
            rdf: Some(rdf),
            rdf_region: Some(region),
            rdf_error: None,
            speed: None,
            density: None,
            masses: vec![],
            cost: Default::default(),
        };
        p.add_analysis(&a);
        assert_eq!((p.rdf_frames(), p.rdf_region), (1, Some(region)));
        p.reset_rdf();
        assert!(p.rdf().is_empty());
    }
}
