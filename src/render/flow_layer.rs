//! The flow layer of the 3D view: what a person chose to see of the fluid's averaged fields
//! (`FlowView`: the colour layer and its range and opacity, velocity arrows, streamlines, how
//! the atoms show beneath) and the geometry drawn for it (`FlowMesh`, built on the CPU from a
//! finished `flow::Fields` whenever a window or a choice changes): a coloured plane over the
//! front (x-y) grid, arrows on a coarser grid and evenly spaced streamlines, as flat
//! triangles and lines at one depth, with what the legend needs (`FlowLegend`).

use serde::{Deserialize, Serialize};

use super::colour::field_colour;
use super::geometry::{self, FlatVertex};
use crate::flow::{FieldKind, Fields, probe, streamlines};
use crate::shapes::Shape;

/// How the atoms show while the flow layer is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AtomsShown {
    Normal,
    /// Drawn darker, so the flow layer stands out.
    Dimmed,
    Hidden,
}

impl AtomsShown {
    /// The factor the atoms' shading is multiplied by.
    pub fn brightness(self) -> f32 {
        match self {
            AtomsShown::Normal => 1.0,
            AtomsShown::Dimmed => 0.3,
            AtomsShown::Hidden => 0.0,
        }
    }
}

/// What the flow layer shows. Off by default; the "Flow" preset ([`FlowView::flow_preset`])
/// shows vorticity and streamlines over dimmed atoms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FlowView {
    /// Fields are sampled and the layer drawn.
    pub on: bool,
    /// The layer shown in colour (None: no colour plane, only arrows or streamlines).
    pub layer: Option<FieldKind>,
    /// Fit the colour range to each window's values (signed layers symmetric about zero);
    /// else use `range`.
    pub auto_range: bool,
    /// The fixed colour range, in the layer's reduced unit.
    pub range: [f32; 2],
    /// Opacity of the colour plane, 0 to 1.
    pub opacity: f32,
    /// Interpolate colours between bins (else one flat colour per bin).
    pub smooth: bool,
    pub arrows: bool,
    /// Bins per arrow along each axis.
    pub arrow_every: u32,
    pub streamlines: bool,
    /// Distance between neighbouring streamlines, sigma.
    pub streamline_spacing: f32,
    pub atoms: AtomsShown,
}

impl Default for FlowView {
    fn default() -> Self {
        FlowView {
            on: false,
            layer: Some(FieldKind::Vorticity),
            auto_range: true,
            range: [-1.0, 1.0],
            opacity: 0.85,
            smooth: true,
            arrows: false,
            arrow_every: 2,
            streamlines: true,
            streamline_spacing: 3.0,
            atoms: AtomsShown::Dimmed,
        }
    }
}

impl FlowView {
    /// The one-click "Flow" view: vorticity in colour, streamlines, atoms dimmed.
    pub fn flow_preset() -> FlowView {
        FlowView { on: true, ..FlowView::default() }
    }

    /// The brightness of the atoms under this view.
    pub fn atom_brightness(&self) -> f32 {
        if self.on { self.atoms.brightness() } else { 1.0 }
    }
}

/// What the legend shows for a flow mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowLegend {
    /// The colour layer and its range (reduced units), when there is one.
    pub layer: Option<(FieldKind, [f32; 2])>,
    /// Arrow length in sigma per sigma/tau of speed, when arrows are drawn.
    pub arrow_scale: Option<f32>,
    /// Samples and the window (tau) the field averages over.
    pub samples: u64,
    pub window_tau: f64,
}

/// The colour plane: `size` bins of texels (row j = bin row j, premultiplied sRGB), spanning
/// `lo`..`hi` in x and y at depth `z`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowPlane {
    pub size: [u32; 2],
    pub texels: Vec<[u8; 4]>,
    pub lo: [f32; 2],
    pub hi: [f32; 2],
    pub z: f32,
    /// Filter linearly between bin centres (else one flat colour per bin).
    pub smooth: bool,
    /// The grid wraps along x / y (the texture repeats there).
    pub periodic: [bool; 2],
}

/// The flow layer's geometry: the colour plane (an image on one quad), the obstacles' caps
/// just in front of it (so a cylinder shows round, not as the bins it empties), and lines of
/// arrows and streamlines.
#[derive(Clone, Debug, Default)]
pub struct FlowMesh {
    pub plane: Option<FlowPlane>,
    pub covers: Vec<FlatVertex>,
    pub lines: Vec<FlatVertex>,
    pub legend: Option<FlowLegend>,
}

/// Colour of arrows and streamlines: near-white, slightly translucent.
pub const LINE_COLOUR: [f32; 4] = [0.97, 0.97, 0.97, 0.85];

/// Whether bin `b` has data for `kind`.
fn has(f: &Fields, kind: FieldKind, b: usize) -> bool {
    probe::usable(f, f.layer(kind), b)
}

/// A colour range for `kind` that shows its values in `f`: robust ends (the 2nd and 98th
/// percentiles) for magnitudes, symmetric about zero (98th percentile of |v|) for signed
/// layers. A layer with no spread gets a small range about its value.
pub fn auto_range(f: &Fields, kind: FieldKind) -> [f32; 2] {
    let layer = f.layer(kind);
    let mut v: Vec<f64> = (0..layer.len()).filter(|&b| has(f, kind, b)).map(|b| layer[b]).collect();
    if v.is_empty() {
        return [0.0, 1.0];
    }
    let pick = |v: &mut Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    };
    if kind.signed() {
        let mut a: Vec<f64> = v.iter().map(|x| x.abs()).collect();
        let m = pick(&mut a, 0.98).max(1e-6) as f32;
        [-m, m]
    } else {
        let lo = pick(&mut v, 0.02);
        let hi = pick(&mut v, 0.98);
        if hi - lo > 1e-9 * hi.abs().max(1.0) {
            [lo as f32, hi as f32]
        } else {
            let pad = (0.05 * lo.abs()).max(1e-6);
            [(lo - pad) as f32, (hi + pad) as f32]
        }
    }
}

/// Streamlines are spread so that at most this many fit across the tank's longer side.
pub const MAX_STREAMLINES_ACROSS: f64 = 100.0;

/// The flow geometry of the front grid of `f` as `view` asks, in the plane z = `z`, with the
/// obstacle `shapes` and the lines a hair in front of it. A 3D grid gives an empty mesh.
pub fn build(f: &Fields, view: &FlowView, z: f32, shapes: &[Shape]) -> FlowMesh {
    let g = &f.grid;
    if g.is_3d() || !view.on {
        return FlowMesh::default();
    }
    let mut mesh = FlowMesh::default();
    let mut legend = FlowLegend { layer: None, arrow_scale: None, samples: f.samples, window_tau: f.span() };
    if let Some(kind) = view.layer {
        let range = if view.auto_range { auto_range(f, kind) } else { view.range };
        mesh.plane = Some(colour_plane(f, kind, range, view.opacity.clamp(0.0, 1.0), view.smooth, z));
        legend.layer = Some((kind, range));
    }
    // Lines a hair in front of the plane, the obstacles' caps in front of both.
    let zl = z + 0.03;
    mesh.covers = geometry::obstacle_prisms(shapes, z + 0.06, z + 0.08);
    if view.streamlines {
        // At least a quarter bin apart, and at most MAX_STREAMLINES_ACROSS lines across the
        // tank's longer side, so a large tank is not drawn solid with lines.
        let extent = (g.n[0] as f64 * g.cell[0]).max(g.n[1] as f64 * g.cell[1]);
        let spacing =
            (view.streamline_spacing as f64).max(0.25 * g.cell[0].min(g.cell[1])).max(extent / MAX_STREAMLINES_ACROSS);
        for line in streamlines::trace(f, spacing) {
            streamline_lines(&line, spacing, zl, &mut mesh.lines);
        }
    }
    if view.arrows {
        legend.arrow_scale = arrows(f, view.arrow_every.max(1) as usize, zl, &mut mesh.lines);
    }
    mesh.legend = Some(legend);
    mesh
}

/// The colour plane as an image: one premultiplied sRGB texel per bin (transparent where a
/// bin has no data), drawn on one quad with linear (smooth) or nearest (flat) filtering, so
/// a grid of any size is a single draw. Linear filtering between bin centres gives each
/// corner the mean of the bins around it, as a smooth plane should; along periodic axes the
/// texture wraps.
fn colour_plane(f: &Fields, kind: FieldKind, range: [f32; 2], alpha: f32, smooth: bool, z: f32) -> FlowPlane {
    let g = &f.grid;
    let (nx, ny) = (g.n[0], g.n[1]);
    let layer = f.layer(kind);
    let span = if (range[1] - range[0]).abs() < 1e-12 { 1e-12 } else { range[1] - range[0] };
    let mut texels = vec![[0u8; 4]; nx * ny];
    for j in 0..ny {
        for i in 0..nx {
            let b = g.index([i, j, 0]);
            if !has(f, kind, b) {
                continue;
            }
            let t = ((layer[b] as f32 - range[0]) / span).clamp(0.0, 1.0);
            let c = field_colour(kind, t);
            texels[j * nx + i] = premultiplied_srgb8([c[0], c[1], c[2], alpha]);
        }
    }
    let lo = [g.origin[0] as f32, g.origin[1] as f32];
    let hi = [(g.origin[0] + nx as f64 * g.cell[0]) as f32, (g.origin[1] + ny as f64 * g.cell[1]) as f32];
    FlowPlane { size: [nx as u32, ny as u32], texels, lo, hi, z, smooth, periodic: [g.periodic[0], g.periodic[1]] }
}

/// A linear RGBA colour with straight alpha as an `Rgba8UnormSrgb` texel with premultiplied
/// alpha (the sampler decodes to linear before filtering, so filtering stays linear).
pub fn premultiplied_srgb8(c: [f32; 4]) -> [u8; 4] {
    let a = c[3].clamp(0.0, 1.0);
    let enc = |v: f32| {
        let v = (v.clamp(0.0, 1.0)) * a;
        let s = if v <= 0.003_130_8 { 12.92 * v } else { 1.055 * v.powf(1.0 / 2.4) - 0.055 };
        (s * 255.0).round() as u8
    };
    [enc(c[0]), enc(c[1]), enc(c[2]), (a * 255.0).round() as u8]
}

/// Decodes an `Rgba8UnormSrgb` channel to linear (for tests and read-backs).
pub fn srgb8_to_linear(v: u8) -> f32 {
    let s = v as f32 / 255.0;
    if s <= 0.040_45 { s / 12.92 } else { ((s + 0.055) / 1.055).powf(2.4) }
}

fn line(out: &mut Vec<FlatVertex>, a: [f64; 2], b: [f64; 2], z: f32) {
    out.push(FlatVertex { pos: [a[0] as f32, a[1] as f32, z], colour: LINE_COLOUR });
    out.push(FlatVertex { pos: [b[0] as f32, b[1] as f32, z], colour: LINE_COLOUR });
}

/// The two barbs of an arrow head at `tip` pointing along unit `d`, `len` long.
fn head(out: &mut Vec<FlatVertex>, tip: [f64; 2], d: [f64; 2], len: f64, z: f32) {
    let (s, c) = 0.45f64.sin_cos();
    for sign in [1.0, -1.0] {
        let back = [-(d[0] * c - sign * d[1] * s), -(sign * d[0] * s + d[1] * c)];
        line(out, tip, [tip[0] + len * back[0], tip[1] + len * back[1]], z);
    }
}

/// A streamline's pieces as lines, with an arrow head every few spacings along it.
fn streamline_lines(pieces: &streamlines::Streamline, spacing: f64, z: f32, out: &mut Vec<FlatVertex>) {
    let every = 3.0 * spacing;
    let mut arc = 0.5 * every;
    for piece in pieces {
        for w in piece.windows(2) {
            line(out, w[0], w[1], z);
            let d = [w[1][0] - w[0][0], w[1][1] - w[0][1]];
            let len = d[0].hypot(d[1]);
            arc += len;
            if arc >= every && len > 0.0 {
                arc = 0.0;
                head(out, w[1], [d[0] / len, d[1] / len], 0.3 * spacing, z);
            }
        }
    }
}

/// Arrows of the mean velocity averaged over blocks of `every` x `every` bins, the fastest
/// block's arrow 0.9 of a block long; returns the scale (sigma per sigma/tau), None without
/// flow.
fn arrows(f: &Fields, every: usize, z: f32, out: &mut Vec<FlatVertex>) -> Option<f32> {
    let g = &f.grid;
    let (bx, by) = (g.n[0].div_ceil(every), g.n[1].div_ceil(every));
    let mut blocks = Vec::new();
    for j in 0..by {
        for i in 0..bx {
            let (mut u, mut k) = ([0.0; 2], 0);
            let (mut cx, mut cy) = (0.0, 0.0);
            for jj in j * every..((j + 1) * every).min(g.n[1]) {
                for ii in i * every..((i + 1) * every).min(g.n[0]) {
                    let b = g.index([ii, jj, 0]);
                    if has(f, FieldKind::Vx, b) && f.vy[b].is_finite() {
                        u[0] += f.vx[b];
                        u[1] += f.vy[b];
                        let c = g.centre(b);
                        cx += c[0];
                        cy += c[1];
                        k += 1;
                    }
                }
            }
            if k > 0 {
                let k = k as f64;
                blocks.push(([cx / k, cy / k], [u[0] / k, u[1] / k]));
            }
        }
    }
    let fastest = blocks.iter().map(|(_, u)| u[0].hypot(u[1])).fold(0.0, f64::max);
    if fastest <= 0.0 {
        return None;
    }
    let block = every as f64 * g.cell[0].min(g.cell[1]);
    let scale = 0.9 * block / fastest;
    for (c, u) in blocks {
        let s = u[0].hypot(u[1]);
        let len = s * scale;
        if len < 0.05 * block {
            continue;
        }
        let d = [u[0] / s, u[1] / s];
        let tail = [c[0] - 0.5 * len * d[0], c[1] - 0.5 * len * d[1]];
        let tip = [c[0] + 0.5 * len * d[0], c[1] + 0.5 * len * d[1]];
        line(out, tail, tip, z);
        head(out, tip, d, (0.3 * len).min(0.25 * block), z);
    }
    Some(scale as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Accumulator, FieldSpec, Grid, finish};
    use crate::physics::sim_box::SimBox;

    fn uniform(l: f64, value: f64) -> Fields {
        let b = SimBox::new([l, l, 2.0], [true, true, true]);
        let grid = Grid::new(&FieldSpec { bin: 1.0, ..FieldSpec::default() }, &b).unwrap();
        let mut f = finish(&Accumulator::new(&grid), &grid, [0.0, 2.0]);
        for bin in 0..grid.len() {
            f.count[bin] = 5.0;
            f.vx[bin] = 1.0;
            f.vy[bin] = 0.0;
            f.speed[bin] = 1.0;
            f.vorticity[bin] = value;
        }
        f
    }

    #[test]
    fn a_large_tank_caps_the_streamlines_across_it() {
        // A uniform stream along x through a 400-sigma tank asked for lines 1 sigma apart:
        // spread to 4 sigma (100 across), each line one straight piece, so the mesh holds
        // lines at about 100 distinct heights instead of 400.
        let f = uniform(400.0, 0.0);
        let view = FlowView { layer: None, streamline_spacing: 1.0, ..FlowView::flow_preset() };
        let mesh = build(&f, &view, 0.0, &[]);
        // The lines' bodies are horizontal segments; arrow-head barbs are not.
        let mut heights: Vec<i64> = mesh
            .lines
            .chunks(2)
            .filter(|s| (s[0].pos[1] - s[1].pos[1]).abs() < 1e-4)
            .map(|s| (s[0].pos[1] * 100.0).round() as i64)
            .collect();
        heights.sort_unstable();
        heights.dedup();
        let bodies = heights.len();
        assert!((90..=101).contains(&bodies), "{bodies} line heights");
    }

    #[test]
    fn plane_colours_are_the_colour_map_of_the_values() {
        let mut f = uniform(8.0, 0.5);
        f.count[3] = 0.0;
        let view = FlowView {
            layer: Some(FieldKind::Vorticity),
            auto_range: false,
            range: [-1.0, 1.0],
            ..FlowView::flow_preset()
        };
        let mesh = build(&f, &view, 1.0, &[]);
        // One texel per bin: 63 with data in the colour map's colour at the opacity, the empty
        // bin transparent.
        let plane = mesh.plane.as_ref().expect("a colour plane");
        assert_eq!(plane.size, [8, 8]);
        assert_eq!((plane.lo, plane.hi, plane.z), ([0.0, 0.0], [8.0, 8.0], 1.0));
        let want = field_colour(FieldKind::Vorticity, 0.75);
        let a = view.opacity;
        for (b, t) in plane.texels.iter().enumerate() {
            if b == 3 {
                assert_eq!(*t, [0, 0, 0, 0]);
                continue;
            }
            assert!((t[3] as f32 / 255.0 - a).abs() < 0.5 / 255.0 + 1e-6);
            for k in 0..3 {
                // Premultiplied: the texel decodes to colour x opacity.
                let got = srgb8_to_linear(t[k]);
                assert!((got - want[k] * a).abs() < 0.01 * (want[k] * a) + 2e-4, "{t:?} vs {want:?} x {a}");
            }
        }
        assert!(!mesh.lines.is_empty(), "streamlines of a uniform flow");
        assert_eq!(mesh.legend.unwrap().layer, Some((FieldKind::Vorticity, [-1.0, 1.0])));
    }

    #[test]
    fn auto_range_is_symmetric_for_signed_layers_and_spans_magnitudes() {
        let mut f = uniform(10.0, 0.0);
        for b in 0..f.grid.len() {
            f.vorticity[b] = b as f64 / 100.0 - 0.2;
            f.density[b] = 0.5 + b as f64 / 1000.0;
        }
        let r = auto_range(&f, FieldKind::Vorticity);
        assert!((r[0] + r[1]).abs() < 1e-6 && r[1] > 0.7 && r[1] <= 0.79, "{r:?}");
        let d = auto_range(&f, FieldKind::Density);
        assert!(d[0] > 0.5 && d[0] < 0.505 && d[1] > 0.59 && d[1] < 0.6, "{d:?}");
    }

    #[test]
    fn arrows_scale_to_the_fastest_block() {
        let f = uniform(8.0, 0.0);
        let view =
            FlowView { layer: None, streamlines: false, arrows: true, arrow_every: 2, ..FlowView::flow_preset() };
        let mesh = build(&f, &view, 0.0, &[]);
        assert!(mesh.plane.is_none());
        // 16 blocks, a shaft and two barbs each.
        assert_eq!(mesh.lines.len(), 16 * 6);
        let scale = mesh.legend.unwrap().arrow_scale.unwrap();
        assert!((scale - 1.8).abs() < 1e-6, "{scale}");
        let shaft = mesh.lines[1].pos[0] - mesh.lines[0].pos[0];
        assert!((shaft - 1.8).abs() < 1e-5, "{shaft}");
    }
}
