//! Observables computed from state: degrees of freedom, temperature, pressure, and the
//! normalisation of g(r), speed histograms and density profiles. Shared by every backend,
//! so the conventions (LAMMPS's where one exists) are written once. `tail.rs`: the LJ
//! tail corrections beyond r_c; `blocks.rs`: block averages with standard errors;
//! `correlator.rs`: a multiple-tau time correlator (for Green-Kubo transport); `rdf.rs`:
//! g(r) over a region of centres (the region, its checks, its normalisation). Pure
//! functions over plain data (slices, boxes, counts): nothing here knows a backend, and `sim`
//! calls in, never the other way.

pub mod blocks;
pub mod correlator;
pub mod rdf;
pub mod tail;

pub use rdf::{RdfCounts, RdfRegion};

use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::sim_box::SimBox;

/// A histogram over `[lo, hi)` with equal bins; `values` are already normalised as described
/// by the function that made it.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    pub lo: f64,
    pub hi: f64,
    pub values: Vec<f64>,
}

impl Histogram {
    pub fn bin_width(&self) -> f64 {
        (self.hi - self.lo) / self.values.len() as f64
    }

    pub fn bin_centre(&self, i: usize) -> f64 {
        self.lo + (i as f64 + 0.5) * self.bin_width()
    }
}

/// Degrees of freedom for the temperature: 3N minus one for each axis whose total momentum
/// is conserved and was zeroed (periodic, no body force along it, no obstacle or active
/// tether breaking the symmetry in x and y, no Langevin noise). A fully periodic NVE box gets
/// LAMMPS's 3N - 3.
pub fn degrees_of_freedom(n_atoms: usize, sim_box: &SimBox, params: &SimParams, has_obstacles: bool) -> f64 {
    let langevin = matches!(params.thermostat, Thermostat::Langevin { .. });
    let conserved = (0..3)
        .filter(|&k| {
            let body = (k == 0 && params.drive != 0.0) || (k == 1 && params.gravity != 0.0);
            let obstacle = has_obstacles && k < 2;
            let tether = k < 2 && params.tether.is_some_and(|t| t.is_active(n_atoms));
            sim_box.periodic[k] && !body && !obstacle && !tether && !langevin
        })
        .count();
    (3 * n_atoms).saturating_sub(conserved).max(1) as f64
}

/// Temperature from twice the kinetic energy (sum of m v^2).
pub fn temperature(twice_kinetic: f64, dof: f64) -> f64 {
    twice_kinetic / dof
}

/// Virial pressure, LAMMPS convention: P = (2 KE + W) / (3 V), where W = sum r . f over
/// pairs plus the wall and obstacle terms (distance times outward force).
pub fn pressure(twice_kinetic: f64, virial: f64, volume: f64) -> f64 {
    (twice_kinetic + virial) / (3.0 * volume)
}

/// Distance from a wall or obstacle surface that atoms effectively cannot reach (in units of
/// the wall's sigma): where the repulsive 9-3 wall is about 1.5 epsilon high.
const EXCLUDED_LAYER: f64 = 0.7;

/// The volume the fluid can reach: the box minus the excluded layer at each wall, times the
/// fraction of the x-y face not inside (or too close to) an obstacle.
pub fn reachable_volume(b: &SimBox, params: &SimParams, field: Option<&ObstacleField>) -> f64 {
    let len = b.length();
    let mut v = 1.0;
    for k in 0..3 {
        let l = if b.periodic[k] { len[k] } else { (len[k] - 2.0 * EXCLUDED_LAYER * params.wall.sigma).max(0.0) };
        v *= l;
    }
    if let Some(f) = field {
        v *= f.free_fraction(EXCLUDED_LAYER * params.obstacle.sigma);
    }
    v
}

/// Checks a g(r) request: bins in 1..=100000, 0 < r_max <= half of every periodic edge.
pub fn check_rdf_request(b: &SimBox, bins: usize, r_max: f64) -> Result<(), String> {
    if bins == 0 || bins > 100_000 || !(r_max.is_finite() && r_max > 0.0) {
        return Err(format!("g(r) needs 1 to 100000 bins and a positive r_max (got {bins} bins, r_max {r_max})"));
    }
    let len = b.length();
    for k in 0..3 {
        if b.periodic[k] && r_max > 0.5 * len[k] {
            return Err(format!(
                "g(r) r_max {r_max} is more than half the periodic box along {} ({}); use at most {}",
                ["x", "y", "z"][k],
                len[k],
                0.5 * len[k]
            ));
        }
    }
    Ok(())
}

/// g(r) from counts of pairs (each pair once) per distance bin up to `r_max`, normalised by
/// the ideal-gas count N (N - 1) / 2 / V per shell volume, with V the volume the atoms can
/// reach (the box when fully periodic, exactly).
pub fn rdf_from_counts(counts: &[u64], n: usize, volume: f64, r_max: f64) -> Histogram {
    let pairs = n as f64 * (n as f64 - 1.0) / 2.0;
    per_shell(counts, pairs / volume, r_max)
}

/// g(r) from pair counts per distance bin up to `r_max`: each count over the ideal-gas count
/// `per_volume` x the bin's shell volume (0 where that is 0).
pub(crate) fn per_shell(counts: &[u64], per_volume: f64, r_max: f64) -> Histogram {
    let bins = counts.len();
    let dr = r_max / bins as f64;
    let values = counts
        .iter()
        .enumerate()
        .map(|(k, &c)| {
            let (r0, r1) = (k as f64 * dr, (k + 1) as f64 * dr);
            let shell = 4.0 / 3.0 * std::f64::consts::PI * (r1.powi(3) - r0.powi(3));
            let ideal = per_volume * shell;
            if ideal > 0.0 { c as f64 / ideal } else { 0.0 }
        })
        .collect();
    Histogram { lo: 0.0, hi: r_max, values }
}

/// Checks a histogram request: bins in 1..=100000 and a positive finite upper edge.
pub fn check_histogram_request(what: &str, bins: usize, hi: f64) -> Result<(), String> {
    if bins == 0 || bins > 100_000 || !(hi.is_finite() && hi > 0.0) {
        return Err(format!("{what} needs 1 to 100000 bins and a positive range (got {bins}, {hi})"));
    }
    Ok(())
}

/// Speed bin of a velocity, if below `v_max`.
pub fn speed_bin(v: [f64; 3], bins: usize, v_max: f64) -> Option<usize> {
    let s = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let k = (s / v_max * bins as f64) as usize;
    (k < bins).then_some(k)
}

/// Probability density of the speed from bin counts (integrates to one over all speeds).
pub fn speed_from_counts(counts: &[u64], n: usize, v_max: f64) -> Histogram {
    let norm = n.max(1) as f64 * v_max / counts.len() as f64;
    Histogram { lo: 0.0, hi: v_max, values: counts.iter().map(|&c| c as f64 / norm).collect() }
}

/// Height bin (along y) of a position, clamped into the box.
pub fn height_bin(y: f64, b: &SimBox, bins: usize) -> usize {
    let u = (y - b.lo[1]) / b.length()[1];
    ((u * bins as f64).floor().max(0.0) as usize).min(bins - 1)
}

/// Number density along y from slab counts.
pub fn density_from_counts(counts: &[u64], b: &SimBox) -> Histogram {
    let len = b.length();
    let slab = len[0] * len[2] * len[1] / counts.len() as f64;
    Histogram { lo: b.lo[1], hi: b.hi[1], values: counts.iter().map(|&c| c as f64 / slab).collect() }
}

/// Speed histogram of host-side velocities.
pub fn speed_histogram(velocities: &[[f64; 3]], bins: usize, v_max: f64) -> Result<Histogram, String> {
    check_histogram_request("speed histogram", bins, v_max)?;
    let mut counts = vec![0u64; bins];
    for v in velocities {
        if let Some(k) = speed_bin(*v, bins, v_max) {
            counts[k] += 1;
        }
    }
    Ok(speed_from_counts(&counts, velocities.len(), v_max))
}

/// Density profile along y of host-side positions in box `b`.
pub fn density_profile(positions: &[[f64; 3]], b: &SimBox, bins: usize) -> Result<Histogram, String> {
    check_histogram_request("density profile", bins, 1.0)?;
    let mut counts = vec![0u64; bins];
    for p in positions {
        counts[height_bin(p[1], b, bins)] += 1;
    }
    Ok(density_from_counts(&counts, b))
}
