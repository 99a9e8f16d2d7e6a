//! g(r) restricted to a region: the region (an axis-aligned box of centres), its checks,
//! the raw counts a backend returns, and their normalisation by the centres in the region and
//! the density there. The whole-box normalisation is `rdf_from_counts` beside it in
//! `analysis`. Pure functions over counts and boxes; nothing here knows a backend.

use super::Histogram;
use crate::physics::sim_box::SimBox;

/// An axis-aligned box `[lo, hi)` (reduced units) of g(r) centres: only pairs whose first
/// atom lies inside are counted, with partners anywhere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RdfRegion {
    pub lo: [f64; 3],
    pub hi: [f64; 3],
}

impl RdfRegion {
    /// A region spanning `[x0, x1) x [y0, y1)` of the front face and the whole depth of `b`.
    pub fn front(b: &SimBox, x: [f64; 2], y: [f64; 2]) -> RdfRegion {
        RdfRegion { lo: [x[0].min(x[1]), y[0].min(y[1]), b.lo[2]], hi: [x[0].max(x[1]), y[0].max(y[1]), b.hi[2]] }
    }

    /// Whether `p` is a centre: `lo <= p < hi` on every axis (the device kernels test the same).
    #[inline]
    pub fn contains(&self, p: [f64; 3]) -> bool {
        (0..3).all(|k| p[k] >= self.lo[k] && p[k] < self.hi[k])
    }

    pub fn volume(&self) -> f64 {
        (0..3).map(|k| self.hi[k] - self.lo[k]).product()
    }
}

/// Raw g(r) counts from a backend. Over the whole box: pairs, each once, per distance bin.
/// Over a region: ordered pairs (centre in the region, partner anywhere) per bin, and the
/// number of centres.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RdfCounts {
    pub counts: Vec<u64>,
    pub centres: usize,
}

/// Checks a region against the box: finite, `lo < hi` and inside the box on every axis.
/// Errors name the field (`region.lo.x` ...).
pub fn check_rdf_region(b: &SimBox, r: &RdfRegion) -> Result<(), String> {
    for k in 0..3 {
        let axis = ["x", "y", "z"][k];
        if !(r.lo[k].is_finite() && r.hi[k].is_finite()) {
            return Err(format!("g(r) region.lo.{axis} and region.hi.{axis} must be finite"));
        }
        if r.lo[k] < b.lo[k] {
            return Err(format!("g(r) region.lo.{axis} ({}) is below the box's lower edge ({})", r.lo[k], b.lo[k]));
        }
        if r.hi[k] > b.hi[k] {
            return Err(format!("g(r) region.hi.{axis} ({}) is above the box's upper edge ({})", r.hi[k], b.hi[k]));
        }
        if r.hi[k] <= r.lo[k] {
            return Err(format!(
                "g(r) region is empty: region.hi.{axis} ({}) must be above region.lo.{axis} ({})",
                r.hi[k], r.lo[k]
            ));
        }
    }
    Ok(())
}

/// Checks the number of centres a region holds (at least two).
pub fn check_rdf_centres(centres: usize) -> Result<(), String> {
    if centres < 2 {
        return Err(format!("g(r) region holds {centres} atoms; it needs at least 2 (draw it over the fluid)"));
    }
    Ok(())
}

/// Region g(r) from ordered-pair counts: counts / (N_region rho_region shell), with
/// rho_region = N_region / V_region. Inside a uniform fluid it tends to 1 at large r however
/// far the box's other parts are from that density (vapour, walls).
pub fn rdf_region_from_counts(counts: &[u64], centres: usize, region: &RdfRegion, r_max: f64) -> Histogram {
    let n = centres as f64;
    let density = n / region.volume();
    super::per_shell(counts, n * density, r_max)
}

/// g(r) from a backend's counts: over `region` when given (after checking it holds two
/// centres), else over the whole box of `n` atoms and reachable `volume`.
pub fn rdf_from(
    c: &RdfCounts,
    n: usize,
    volume: f64,
    r_max: f64,
    region: Option<&RdfRegion>,
) -> Result<Histogram, String> {
    match region {
        Some(r) => {
            check_rdf_centres(c.centres)?;
            Ok(rdf_region_from_counts(&c.counts, c.centres, r, r_max))
        }
        None => Ok(super::rdf_from_counts(&c.counts, n, volume, r_max)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_checked_by_field() {
        let b = SimBox::new([10.0, 10.0, 10.0], [true; 3]);
        let ok = RdfRegion { lo: [1.0, 1.0, 0.0], hi: [5.0, 5.0, 10.0] };
        assert!(check_rdf_region(&b, &ok).is_ok());
        let e = check_rdf_region(&b, &RdfRegion { lo: [-1.0, 1.0, 0.0], ..ok }).unwrap_err();
        assert!(e.contains("region.lo.x"), "{e}");
        let e = check_rdf_region(&b, &RdfRegion { hi: [5.0, 11.0, 10.0], ..ok }).unwrap_err();
        assert!(e.contains("region.hi.y"), "{e}");
        let e = check_rdf_region(&b, &RdfRegion { hi: [5.0, 5.0, 0.0], ..ok }).unwrap_err();
        assert!(e.contains("empty") && e.contains("region.hi.z"), "{e}");
        let e = check_rdf_region(&b, &RdfRegion { hi: [f64::NAN, 5.0, 10.0], ..ok }).unwrap_err();
        assert!(e.contains("finite"), "{e}");
        assert!(check_rdf_centres(1).unwrap_err().contains("at least 2"));
    }

    #[test]
    fn uniform_ordered_counts_give_one() {
        // N centres in V, each seeing the ideal N / V * shell partners per bin.
        let r = RdfRegion { lo: [0.0; 3], hi: [4.0, 5.0, 6.0] };
        let (n, r_max, bins) = (600usize, 2.0, 4);
        let counts: Vec<u64> = (0..bins)
            .map(|k| {
                let (r0, r1) = (k as f64 * 0.5, (k + 1) as f64 * 0.5);
                let shell = 4.0 / 3.0 * std::f64::consts::PI * (r1.powi(3) - r0.powi(3));
                (n as f64 * n as f64 / r.volume() * shell).round() as u64
            })
            .collect();
        let g = rdf_region_from_counts(&counts, n, &r, r_max);
        assert!(g.values.iter().all(|v| (v - 1.0).abs() < 1e-3), "{:?}", g.values);
    }
}
