//! The wind tunnel's readout in one place, as the Flow panel and `run` show it: from the
//! force of the fluid on one body over time and the stream (U, density, D, span,
//! temperature), the drag and lift coefficients, the Strouhal number of the lift, the
//! Reynolds number (viscosity measured from the flow profile when there is one, else the
//! LJTS correlation) and the Mach number (JZG sound speed); from the wake probe, its
//! Strouhal number and the full shedding periods it has seen (and when the third
//! completed). Pure: numbers in, numbers out.

use super::{
    ForceCoefficients, Freestream, Recirculation, SheddingPeriods, StrouhalEstimate, WakeError, drag_lift_coefficients,
    lj_viscosity, mach, recirculation, reynolds, shedding_periods, strouhal,
};
use crate::flow::Fields;

/// Blocks the coefficients' standard errors are taken over (fewer for short series).
pub const READOUT_BLOCKS: usize = 10;

/// Where the viscosity in the Reynolds number comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ViscositySource {
    /// The app's own measurement (the driven channel's velocity profile).
    Measured,
    /// `lj_viscosity` (Lautenschlaeger and Hasse 2019) at the stream's density and temperature.
    Correlation,
}

impl ViscositySource {
    pub fn label(self) -> &'static str {
        match self {
            ViscositySource::Measured => "measured from the flow profile",
            ViscositySource::Correlation => "LJTS correlation (Lautenschlaeger & Hasse 2019)",
        }
    }
}

/// Everything the tunnel reports at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct WakeReadout {
    pub stream: Freestream,
    /// Kinetic temperature of the stream, epsilon / k_B.
    pub temperature: f64,
    /// eta (epsilon tau / sigma^3) and where it comes from; None outside the correlation's
    /// range with nothing measured.
    pub viscosity: Option<(f64, ViscositySource)>,
    /// Re = U D rho / eta, when the viscosity is known.
    pub reynolds: Option<f64>,
    /// Ma = U / c (JZG sound speed at the stream's density and temperature).
    pub mach: f64,
    pub coefficients: Result<ForceCoefficients, WakeError>,
    /// From the lift (y force) over the series.
    pub strouhal: Result<StrouhalEstimate, WakeError>,
    /// From the wake probe's cross-stream velocity (one value per field window), when a
    /// series was given ([`WakeReadout::with_wake_probe`]).
    pub strouhal_wake: Option<Result<StrouhalEstimate, WakeError>>,
    /// The full shedding periods in the same probe signal ([`shedding_periods`]), when a
    /// series was given.
    pub periods: Option<Result<SheddingPeriods, WakeError>>,
    /// The recirculation bubble on the centre line behind the body over the newest windows
    /// (None: no reverse flow attached to the body, or no window given).
    pub recirculation: Option<Recirculation>,
}

/// The readout for the body whose force is `forces[i]` = [fx, fy] at `times[i]` in `stream`
/// at `temperature`, with `measured_viscosity` when the app has one.
pub fn readout(
    times: &[f64],
    forces: &[[f64; 2]],
    stream: Freestream,
    temperature: f64,
    measured_viscosity: Option<f64>,
) -> WakeReadout {
    let viscosity = match measured_viscosity.filter(|v| v.is_finite() && *v > 0.0) {
        Some(v) => Some((v, ViscositySource::Measured)),
        None => lj_viscosity(stream.mass_density, temperature).map(|v| (v, ViscositySource::Correlation)),
    };
    let reynolds = viscosity.map(|(eta, _)| reynolds(stream.speed, stream.diameter, stream.mass_density, eta));
    let c = crate::physics::jzg::sound_speed(stream.mass_density, temperature, 1.0);
    let blocks = READOUT_BLOCKS.min(forces.len() / 4).max(2);
    let lift: Vec<f64> = forces.iter().map(|f| f[1]).collect();
    WakeReadout {
        stream,
        temperature,
        viscosity,
        reynolds,
        mach: mach(stream.speed, c),
        coefficients: drag_lift_coefficients(times, forces, &stream, blocks),
        strouhal: strouhal(times, &lift, stream.speed, stream.diameter),
        strouhal_wake: None,
        periods: None,
        recirculation: None,
    }
}

impl WakeReadout {
    /// The readout with the Strouhal number and the full shedding periods of the wake probe's
    /// signal `series`.
    pub fn with_wake_probe(mut self, series: &super::WakeSeries) -> WakeReadout {
        self.strouhal_wake = Some(strouhal(&series.times, &series.vy, self.stream.speed, self.stream.diameter));
        self.periods = Some(shedding_periods(&series.times, &series.vy));
        self
    }

    /// The readout with the recirculation bubble behind a body centred at `centre` (x, y) over
    /// the newest of `windows` ([`recirculation`]).
    pub fn with_bubble<F: std::borrow::Borrow<Fields>>(mut self, windows: &[F], centre: [f64; 2]) -> WakeReadout {
        self.recirculation = recirculation(windows, centre, self.stream.diameter);
        self
    }

    /// The readout as text lines ("U = ...", "Re = ...", ...), for the CLI and "copy".
    pub fn lines(&self) -> Vec<String> {
        let s = &self.stream;
        let mut out = vec![format!(
            "stream U = {:.4} sigma/tau, rho = {:.4} sigma^-3, T = {:.4}, D = {:.3} sigma, span {:.3} sigma, Mach {:.3}",
            s.speed, s.mass_density, self.temperature, s.diameter, s.span, self.mach
        )];
        out.push(match (self.reynolds, self.viscosity) {
            (Some(re), Some((eta, src))) => {
                format!("Re = {re:.2} (eta = {eta:.3} epsilon tau/sigma^3, {})", src.label())
            }
            _ => "Re: no viscosity for this state (outside the correlation; drive a channel to measure one)".into(),
        });
        out.push(match &self.coefficients {
            Ok(c) => format!(
                "C_d = {:.4} +- {:.4}, C_L = {:.4} +- {:.4}, C_L rms {:.4} ({} samples)",
                c.drag, c.drag_sem, c.lift, c.lift_sem, c.lift_rms, c.samples
            ),
            Err(e) => format!("C_d, C_L: {e}"),
        });
        out.push(match &self.strouhal {
            Ok(st) => format!(
                "St (lift) = {:.4} +- {:.4} (lift frequency {:.5} +- {:.5} / tau over {:.1} periods)",
                st.strouhal, st.strouhal_sem, st.frequency, st.frequency_sem, st.periods
            ),
            Err(e) => format!("St (lift): {e}"),
        });
        if let Some(w) = &self.strouhal_wake {
            let at = super::PROBE_BEHIND_D;
            out.push(match w {
                Ok(st) => format!(
                    "St (wake probe, v_y {at} D behind the centre) = {:.4} +- {:.4} (frequency {:.5} / tau over {:.1} \
                     periods)",
                    st.strouhal, st.strouhal_sem, st.frequency, st.periods
                ),
                Err(e) => format!("St (wake probe, v_y {at} D behind the centre): {e}"),
            });
        }
        if let Some(p) = &self.periods {
            out.push(match p {
                Ok(p) => format!("shedding (wake probe): {}", p.describe("sigma/tau")),
                Err(e) => format!("shedding (wake probe): {e}"),
            });
        }
        out.push(match &self.recirculation {
            Some(b) => format!(
                "recirculation bubble: L/D = {:.3} +- {:.3} (L = {:.2} sigma from the rear; reverse flow down to {:.3} \
                 +- {:.3} sigma/tau at {:.2} sigma; mean of {} windows)",
                b.length_over_d, b.length_over_d_sem, b.length, b.min_vx, b.min_vx_sem, b.min_at, b.windows
            ),
            None => "recirculation bubble: none on the centre line behind the body in the newest windows".into(),
        });
        out
    }
}

/// The stream that a body `diameter` across, in a slab `span` deep, of atoms of mass `mass`,
/// sees in window `f`, and its temperature: U the tunnel's `tunnel_speed` where there is a
/// tunnel, else the window's mean x velocity; the density and temperature the window's
/// ([`stream_of`]). Why not, when the window has no atoms or nothing flows along +x.
pub fn freestream_of(
    f: &Fields,
    tunnel_speed: Option<f64>,
    diameter: f64,
    span: f64,
    mass: f64,
) -> Result<(Freestream, f64), String> {
    let (measured, density, temperature) = stream_of(f).ok_or("the newest flow window has no atoms")?;
    let speed = tunnel_speed.unwrap_or(measured);
    if speed.is_nan() || speed <= 0.0 {
        return Err(format!("no stream along +x yet (mean x velocity {speed:.3} sigma/tau)"));
    }
    Ok((Freestream { mass_density: density * mass, speed, diameter, span }, temperature))
}

/// The stream a finished window sees: (mass-weighted mean x velocity, mean number density,
/// mass-weighted mean temperature) over the bins with atoms; None when no bin has any.
pub fn stream_of(f: &crate::flow::Fields) -> Option<(f64, f64, f64)> {
    let (mut n, mut u, mut rho, mut t, mut bins) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for b in 0..f.density.len() {
        let c = f.count[b];
        if !(c > 0.0 && f.vx[b].is_finite() && f.density[b].is_finite() && f.temperature[b].is_finite()) {
            continue;
        }
        n += c;
        u += c * f.vx[b];
        t += c * f.temperature[b];
        rho += f.density[b];
        bins += 1.0;
    }
    (n > 0.0).then(|| (u / n, rho / bins, t / n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> Freestream {
        Freestream { mass_density: 0.8, speed: 0.5, diameter: 6.0, span: 7.0 }
    }

    /// A shedding cylinder: constant drag, lift oscillating at St = 0.2.
    #[test]
    fn shedding_body_reads_its_coefficients_strouhal_and_reynolds() {
        let s = stream();
        let q = s.reference_force();
        let f = 0.2 * s.speed / s.diameter;
        let times: Vec<f64> = (0..2000).map(|i| i as f64 * 0.5).collect();
        let forces: Vec<[f64; 2]> =
            times.iter().map(|t| [1.3 * q, 0.4 * q * (2.0 * std::f64::consts::PI * f * t).sin()]).collect();
        let r = readout(&times, &forces, s, 1.0, None);
        let c = r.coefficients.as_ref().unwrap();
        assert!((c.drag - 1.3).abs() < 1e-12 && c.lift.abs() < 0.01, "{c:?}");
        let st = r.strouhal.as_ref().unwrap();
        assert!((st.strouhal - 0.2).abs() < 0.002, "{st:?}");
        let (eta, src) = r.viscosity.unwrap();
        assert_eq!(src, ViscositySource::Correlation);
        assert!((r.reynolds.unwrap() - 0.5 * 6.0 * 0.8 / eta).abs() < 1e-12);
        assert!(r.mach > 0.05 && r.mach < 0.3, "Mach {}", r.mach);
        // A measured viscosity takes precedence.
        let m = readout(&times, &forces, s, 1.0, Some(2.0));
        assert_eq!(m.viscosity, Some((2.0, ViscositySource::Measured)));
        assert!((m.reynolds.unwrap() - 1.2).abs() < 1e-12);
        assert_eq!(r.lines().len(), 5);
    }

    /// The wake probe's full periods reach the readout's lines, which the Flow panel and `run`
    /// show: a clean sine of period 140 tau sampled every 10 tau from 5 to 995 tau has whole
    /// rises (the first sample is no turning point) through 140, 280, ..., 840 tau: 5 periods.
    #[test]
    fn the_wake_probe_periods_read_as_a_line() {
        let times: Vec<f64> = (0..200).map(|i| i as f64 * 0.5).collect();
        let mut probe = crate::flow::wake::WakeSeries::default();
        probe.times = (0..100).map(|i| 5.0 + 10.0 * i as f64).collect();
        probe.vy = probe.times.iter().map(|t| (std::f64::consts::TAU * t / 140.0).sin()).collect();
        let r = readout(&times, &[[1.0, 0.0]; 200], stream(), 1.0, None).with_wake_probe(&probe);
        let p = r.periods.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(p.count(), 5, "{p:?}");
        let line = r.lines().into_iter().find(|l| l.starts_with("shedding (wake probe): ")).unwrap();
        assert!(line.contains("5 full periods at half the running amplitude"), "{line}");
        assert!(line.ends_with("the third completed at 560.0 tau"), "{line}");
        // Without a probe series, no such line.
        let plain = readout(&times, &[[1.0, 0.0]; 200], stream(), 1.0, None);
        assert!(plain.periods.is_none() && !plain.lines().iter().any(|l| l.contains("full period")));
    }

    /// Too short a series: the readout says why instead of numbers, and nothing panics.
    #[test]
    fn a_short_series_reads_as_reasons() {
        let r = readout(&[0.0, 1.0, 2.0], &[[1.0, 0.0]; 3], stream(), 1.0, None);
        assert!(r.strouhal.is_err());
        assert!(r.lines().iter().any(|l| l.starts_with("St (lift): ")));
        let gas = readout(&[0.0, 1.0], &[[1.0, 0.0]; 2], Freestream { mass_density: 0.05, ..stream() }, 1.0, None);
        assert!(gas.reynolds.is_none());
    }
}
