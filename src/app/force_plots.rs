//! The data behind the Forces plot: from the telemetry records the plots keep, the drag (x,
//! the drive's direction) and lift (y) on each obstacle and the normal force on each wall face
//! against time (ps), in reduced units (epsilon/sigma), their means with standard errors from
//! block averages, and the force history as CSV. Data only: `ui/plots.rs` draws it.

use crate::analysis::blocks::block_mean_sem;
use crate::io::forces::forces_csv;
use crate::sim::Telemetry;
use crate::sim::bodies::Body;
use crate::units;

/// Blocks the time averages are split into for their standard errors.
pub const BLOCKS: usize = 10;

/// One curve of the Forces plot: its label and (time ps, force epsilon/sigma) points.
pub struct ForceCurve {
    pub label: String,
    pub points: Vec<[f64; 2]>,
}

/// The bodies of the newest record (the records since the bodies last changed share them).
fn bodies(records: &[Telemetry]) -> Vec<Body> {
    records.last().map(|t| t.body_forces.iter().map(|b| b.body).collect()).unwrap_or_default()
}

/// (body, axis, label) of each curve: drag and lift per obstacle, the normal force per wall
/// face when `walls`.
fn curves_of(bodies: &[Body], walls: bool) -> Vec<(Body, usize, String)> {
    let mut out = Vec::new();
    for b in bodies {
        match b {
            Body::Shape { .. } => {
                out.push((*b, 0, format!("{} drag", b.name())));
                out.push((*b, 1, format!("{} lift", b.name())));
            }
            Body::Wall { axis, .. } if walls => out.push((*b, *axis, b.name())),
            Body::Wall { .. } => {}
        }
    }
    out
}

/// The values of `body`'s force along `axis` over the records that have it: (time ps, force).
fn values(records: &[Telemetry], body: Body, axis: usize) -> Vec<[f64; 2]> {
    records
        .iter()
        .filter_map(|t| {
            let f = t.body_forces.iter().find(|f| f.body == body)?;
            Some([units::reduced_time_to_ps(t.time), f.force[axis]])
        })
        .collect()
}

/// The curves to draw.
pub fn force_curves(records: &[Telemetry], walls: bool) -> Vec<ForceCurve> {
    curves_of(&bodies(records), walls)
        .into_iter()
        .map(|(b, axis, label)| ForceCurve { label, points: values(records, b, axis) })
        .collect()
}

/// (label, mean, standard error) of each curve over the records shown, by block averages
/// (None where there are too few records).
pub fn force_means(records: &[Telemetry], walls: bool) -> Vec<(String, Option<(f64, f64)>)> {
    curves_of(&bodies(records), walls)
        .into_iter()
        .map(|(b, axis, label)| {
            let ys: Vec<f64> = values(records, b, axis).iter().map(|p| p[1]).collect();
            (label, block_mean_sem(&ys, BLOCKS))
        })
        .collect()
}

/// The force history of the records as CSV (time tau, step, fx fy fz per body); None when
/// there are no body forces.
pub fn force_history_csv(records: &[Telemetry]) -> Option<String> {
    let bodies = bodies(records);
    if bodies.is_empty() {
        return None;
    }
    let rows: Vec<_> =
        records.iter().filter(|t| !t.body_forces.is_empty()).map(|t| (t.time, t.step, t.body_forces.clone())).collect();
    Some(forces_csv(&bodies, &rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::bodies::BodyForce;

    #[test]
    fn curves_means_and_csv_from_records() {
        let c = Body::Shape { index: 0, kind: "circle" };
        let w = Body::Wall { axis: 1, hi: false };
        let records: Vec<Telemetry> = (1..=40)
            .map(|k| Telemetry {
                step: k * 100,
                time: k as f64 * 0.5,
                body_forces: vec![
                    BodyForce { body: c, force: [2.0 + (k % 2) as f64, -1.0, 0.0] },
                    BodyForce { body: w, force: [0.0, -30.0, 0.0] },
                ],
                ..Default::default()
            })
            .collect();
        let curves = force_curves(&records, false);
        assert_eq!(curves.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(), ["circle 1 drag", "circle 1 lift"]);
        assert_eq!(curves[0].points.len(), 40);
        let means = force_means(&records, true);
        assert_eq!(means.len(), 3);
        let (m, sem) = means[0].1.unwrap();
        assert!((m - 2.5).abs() < 1e-12 && sem < 0.1, "{m} {sem}");
        assert_eq!(means[2].0, "wall y-lo");
        assert!((means[2].1.unwrap().0 + 30.0).abs() < 1e-12);
        let csv = force_history_csv(&records).unwrap();
        assert_eq!(csv.lines().count(), 41);
        assert!(csv.starts_with("time_tau,step,circle_1_fx_eps_per_sigma"));
    }
}
