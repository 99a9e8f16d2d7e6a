//! Dye: a per-atom tag carried with the flow (issue 47). A tag is a [`Dye`], 0 for an untagged
//! atom, else the number (1-based, in order) of the source that tagged it. Sources are regions
//! ([`DyeRegion`]: the atoms inside are tagged once, at step 0) and rakes ([`DyeRake`]: a line
//! segment in the x-y plane, through the whole depth, that tags every atom crossing it, every
//! step). This module owns the geometry, the checks with their messages and the host-side
//! tagging of a region; the CPU backend's step applies rakes (`sim/cpu/state/dye.rs`).

use crate::numfmt::short;
use crate::physics::sim_box::SimBox;

/// One atom's tag: 0 untagged, else the source's number.
pub type Dye = u16;

/// The most sources a system can number (the tag type's range).
pub const MAX_SOURCES: usize = Dye::MAX as usize;

/// A box in x-y (through the depth) whose atoms are tagged once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DyeRegion {
    pub min: [f64; 2],
    pub max: [f64; 2],
}

/// A line segment from `a` to `b` in x-y (through the depth) that tags the atoms crossing it
/// with `tag`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DyeRake {
    pub a: [f64; 2],
    pub b: [f64; 2],
    pub tag: Dye,
}

const AXES: [&str; 2] = ["x", "y"];

/// The tank's extent in x and y, for messages.
fn tank_extent(sim_box: &SimBox) -> String {
    format!(
        "the tank spans x {}..{}, y {}..{}",
        short(sim_box.lo[0]),
        short(sim_box.hi[0]),
        short(sim_box.lo[1]),
        short(sim_box.hi[1])
    )
}

/// Why `p` is not a point of the tank's x-y extent (edges included), or None.
fn outside(p: [f64; 2], sim_box: &SimBox) -> Option<String> {
    for k in 0..2 {
        if !p[k].is_finite() {
            return Some(format!("{} = {} is not a finite number", AXES[k], p[k]));
        }
        if p[k] < sim_box.lo[k] || p[k] > sim_box.hi[k] {
            return Some(format!(
                "{} = {} lies outside the tank: {}; move it inside",
                AXES[k],
                short(p[k]),
                tank_extent(sim_box)
            ));
        }
    }
    None
}

/// Checks that source number `number` fits the tag type.
pub fn check_number(number: usize) -> Result<Dye, String> {
    if number == 0 || number > MAX_SOURCES {
        return Err(format!(
            "source number {number} is outside 1..={MAX_SOURCES}, the tags' range; use at most {MAX_SOURCES} dye sources"
        ));
    }
    Ok(number as Dye)
}

impl DyeRegion {
    /// Refuses an empty box (min >= max on an axis) or one reaching outside the tank, saying
    /// what to change.
    pub fn validate(&self, sim_box: &SimBox) -> Result<(), String> {
        for k in 0..2 {
            if self.min[k] >= self.max[k] {
                return Err(format!(
                    "the box is empty: its {} range {}..{} needs min < max; give the lower edge first",
                    AXES[k],
                    short(self.min[k]),
                    short(self.max[k])
                ));
            }
        }
        for p in [self.min, self.max] {
            if let Some(why) = outside(p, sim_box) {
                return Err(format!("the box corner ({}, {}): {why}", short(p[0]), short(p[1])));
            }
        }
        Ok(())
    }

    /// Whether `p` (x, y, z) lies in the box (min inclusive, max exclusive).
    pub fn contains(&self, p: &[f64; 3]) -> bool {
        (0..2).all(|k| p[k] >= self.min[k] && p[k] < self.max[k])
    }

    /// Tags with `tag` every atom of `positions` inside the box (`dye` one per atom); returns
    /// how many.
    pub fn tag(&self, positions: &[[f64; 3]], dye: &mut [Dye], tag: Dye) -> usize {
        let mut count = 0;
        for (p, d) in positions.iter().zip(dye.iter_mut()) {
            if self.contains(p) {
                *d = tag;
                count += 1;
            }
        }
        count
    }
}

/// Twice the signed area of the triangle (o, a, b): positive when b lies left of o -> a.
fn cross(o: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
}

impl DyeRake {
    /// Refuses a rake of zero length or with an end outside the tank.
    pub fn validate(&self, sim_box: &SimBox) -> Result<(), String> {
        for (name, p) in [("a", self.a), ("b", self.b)] {
            if let Some(why) = outside(p, sim_box) {
                return Err(format!("end {name} ({}, {}): {why}", short(p[0]), short(p[1])));
            }
        }
        let (dx, dy) = (self.b[0] - self.a[0], self.b[1] - self.a[1]);
        if dx * dx + dy * dy == 0.0 {
            return Err(format!(
                "the rake has zero length (a = b = ({}, {})); give two different ends",
                short(self.a[0]),
                short(self.a[1])
            ));
        }
        Ok(())
    }

    /// Whether the move from `p0` to `p1` (x, y) crosses the rake: the two segments meet (an
    /// end touching the other segment counts; a move along the rake's own line does not).
    pub fn crossed(&self, p0: [f64; 2], p1: [f64; 2]) -> bool {
        let d1 = cross(self.a, self.b, p0);
        let d2 = cross(self.a, self.b, p1);
        if (d1 > 0.0 && d2 > 0.0) || (d1 < 0.0 && d2 < 0.0) || (d1 == 0.0 && d2 == 0.0) {
            return false;
        }
        let d3 = cross(p0, p1, self.a);
        let d4 = cross(p0, p1, self.b);
        !((d3 > 0.0 && d4 > 0.0) || (d3 < 0.0 && d4 < 0.0))
    }
}

impl DyeRake {
    /// Whether `p` (x, y) lies within `reach` of the rake's bounding box: a move of at most
    /// `reach` ending at `p` can cross the rake only then (a cheap test before [`DyeRake::crossed`]).
    #[inline]
    pub fn near(&self, p: [f64; 2], reach: f64) -> bool {
        (0..2).all(|k| p[k] >= self.a[k].min(self.b[k]) - reach && p[k] <= self.a[k].max(self.b[k]) + reach)
    }
}

/// The tag of an atom that moved from `p0` to `p1` (x, y) past `rakes`: the last rake
/// crossed, else `old`.
pub fn after_move(rakes: &[DyeRake], p0: [f64; 2], p1: [f64; 2], old: Dye) -> Dye {
    rakes.iter().rev().find(|r| r.crossed(p0, p1)).map_or(old, |r| r.tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tank() -> SimBox {
        SimBox::new([20.0, 10.0, 4.0], [true, false, true])
    }

    #[test]
    fn rake_crossing_needs_both_segments_to_meet() {
        let r = DyeRake { a: [5.0, 2.0], b: [5.0, 8.0], tag: 3 };
        assert!(r.crossed([4.9, 5.0], [5.1, 5.0]));
        assert!(r.crossed([5.1, 5.0], [4.9, 5.0]));
        assert!(!r.crossed([4.0, 5.0], [4.9, 5.0]), "stops short of the line");
        assert!(!r.crossed([4.9, 9.0], [5.1, 9.0]), "passes beyond end b");
        assert!(!r.crossed([4.9, 1.0], [5.1, 1.0]), "passes beyond end a");
        assert!(!r.crossed([5.0, 1.0], [5.0, 1.5]), "moves along the line, outside it");
        assert!(r.crossed([4.9, 5.0], [5.0, 5.0]), "ends on the line");
        assert_eq!(after_move(&[r], [4.9, 5.0], [5.1, 5.0], 1), 3);
        assert_eq!(after_move(&[r], [4.0, 5.0], [4.1, 5.0], 1), 1);
    }

    #[test]
    fn bad_sources_are_refused_with_the_fix() {
        let b = tank();
        let empty = DyeRegion { min: [3.0, 1.0], max: [3.0, 4.0] };
        assert!(empty.validate(&b).unwrap_err().contains("empty"));
        let out = DyeRegion { min: [3.0, 1.0], max: [25.0, 4.0] };
        assert!(out.validate(&b).unwrap_err().contains("outside the tank"));
        assert!(DyeRegion { min: [0.0, 0.0], max: [20.0, 10.0] }.validate(&b).is_ok());
        let zero = DyeRake { a: [1.0, 1.0], b: [1.0, 1.0], tag: 1 };
        assert!(zero.validate(&b).unwrap_err().contains("zero length"));
        let far = DyeRake { a: [1.0, -1.0], b: [1.0, 1.0], tag: 1 };
        assert!(far.validate(&b).unwrap_err().contains("outside the tank"));
        assert!(check_number(MAX_SOURCES + 1).unwrap_err().contains("at most 65535"));
        assert_eq!(check_number(MAX_SOURCES), Ok(Dye::MAX));
        assert!(check_number(0).is_err());
    }

    #[test]
    fn a_region_tags_only_the_atoms_inside() {
        let r = DyeRegion { min: [1.0, 1.0], max: [2.0, 2.0] };
        let pos = [[1.5, 1.5, 0.0], [2.5, 1.5, 3.0], [1.0, 1.99, 9.0], [2.0, 1.5, 0.0]];
        let mut dye = vec![7; 4];
        assert_eq!(r.tag(&pos, &mut dye, 2), 2);
        assert_eq!(dye, vec![2, 7, 2, 7]);
    }
}
