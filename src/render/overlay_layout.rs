//! Where the 2D overlay (legends, arrow scale, scale bar) goes, so that it never covers the
//! tank: what the overlay shows for a view's settings ([`Content`], measured in egui's default
//! font), the two places it may take, a column down the right of the view ([`Strip::Side`]) or
//! a row along its bottom ([`Strip::Below`]), the one clear of the tank's projected rectangle
//! ([`place`]), and a camera fit that leaves one of them clear ([`fit_camera`]).
//!
//! The choice: the fit frames the tank in what is left of the view once a strip is kept for
//! the overlay, trying both strips and keeping the one that leaves the tank largest. A wide
//! tank in a landscape view is limited by the view's width, so a row under it costs nothing;
//! a tall or square one is limited by the height, so a column beside it costs nothing; only
//! where the tank would fill both directions does the fit shrink it by the strip's size.
//! Painting does not trust the fit: each frame it projects the tank (the box grown by an
//! atom's radius) and takes a strip that the tank's rectangle does not touch, so a panned or
//! zoomed-out view keeps its legend clear where it can. Where neither strip is clear (the
//! person zoomed in, or turned the orbit camera so the box reaches the strips), the overlay
//! lies over the view in the right column, on dark backings, as it always did; F refits.
//!
//! Sizes come from the settings alone (titles, species names and templates for the widest
//! numbers a label can show), never from the data, so a legend's values changing never moves
//! the tank. Everything is in egui points, the view's top-left at the view rectangle's corner.

use std::cell::RefCell;

use egui::{Rect, pos2, vec2};

use super::flow_layer::AtomsShown;
use super::{Camera, CameraMode, ColourBy, ViewSettings};
use crate::physics::sim_box::SimBox;

/// Size of the overlay's text (points).
pub const FONT_SIZE: f32 = 13.0;
/// Height of one line of overlay text.
pub const LINE: f32 = 16.0;
/// Thickness of a colour bar in a column (vertical) and in a row (horizontal).
pub const BAR_THICK: f32 = 16.0;
pub const ROW_BAR_THICK: f32 = 12.0;
/// The longest reference arrow of the flow layer's arrow scale.
pub const ARROW_MAX: f32 = 70.0;
/// Height of the scale bar with its label above it.
pub const SCALE_H: f32 = LINE + 5.0 + 6.0;
/// Between the view's edge and what the overlay draws.
const EDGE: f32 = 14.0;
/// Between two blocks.
const GAP: f32 = 18.0;
/// The widest value a colour bar's label can show (`overlay::legend_number`,
/// `ColourBy::legend_label`), the flow legend's note and the arrow scale's label.
const LABEL_TEMPLATE: &str = "-8.88e-8";
const NOTE_TEMPLATE: &str = "888.8 τ, 88888 samples";
const ARROW_TEMPLATE: &str = "8888 m/s";

/// One legend of the overlay.
#[derive(Clone, Debug, PartialEq)]
pub enum Legend {
    /// The flow layer's colour bar titled `title` with the window note under it (`None`: no
    /// colour layer, the note alone).
    Flow { title: Option<String> },
    /// The atoms' colour bar.
    Atoms { by: ColourBy },
    /// One swatch per species name.
    Species(Vec<String>),
    /// One swatch per dye source: its number (its colour, `colour::dye_colour`) and name; an
    /// empty list says there are no sources yet.
    Dye(Vec<(u16, String)>),
}

/// The dye legend's line when there are no sources.
pub const NO_DYE: &str = "no sources: draw one with the Dye tool";

/// What the overlay shows, from the view's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Content {
    pub legends: Vec<Legend>,
    pub scale_bar: bool,
    /// The flow layer's reference arrow (drawn above the scale bar).
    pub arrow_scale: bool,
}

impl Content {
    /// The overlay of a view drawn with `settings`, the run's species named `species` and
    /// its dye sources `dye` (number and name): the flow layer's legend while the flow layer
    /// is on (with the atoms' legend too when the atoms show at full brightness), else the
    /// atoms' (a colour bar, the species, or the dye sources).
    pub fn of(settings: &ViewSettings, species: &[String], dye: &[(u16, String)]) -> Content {
        let mut legends = Vec::new();
        let flow = settings.flow.on && settings.show_legend;
        if flow {
            let title = settings.flow.layer.map(|k| format!("{} ({})", k.label(), k.unit_si()));
            legends.push(Legend::Flow { title });
        }
        let atoms = settings.show_legend && (!flow || settings.flow.atoms == AtomsShown::Normal);
        if atoms {
            match settings.colour_by {
                ColourBy::Single => {}
                ColourBy::Species => legends.push(Legend::Species(species.to_vec())),
                ColourBy::Dye => legends.push(Legend::Dye(dye.to_vec())),
                by => legends.push(Legend::Atoms { by }),
            }
        }
        Content { legends, scale_bar: settings.show_scale_bar, arrow_scale: flow && settings.flow.arrows }
    }

    pub fn is_empty(&self) -> bool {
        self.legends.is_empty() && !self.scale_bar && !self.arrow_scale
    }

    fn bars(&self) -> usize {
        self.legends.iter().filter(|l| matches!(l, Legend::Flow { title: Some(_) } | Legend::Atoms { .. })).count()
    }
}

/// Where the overlay lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strip {
    /// A column down the right edge, legends at its top, scale bar at its bottom.
    Side,
    /// A row along the bottom edge, scale bar at its left, legends at its right.
    Below,
    /// The right column laid over the view (neither strip is clear of the tank).
    Over,
}

/// The overlay laid out in a view (points).
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    pub strip: Strip,
    /// The strip the overlay keeps to.
    pub area: Rect,
    /// Each legend's rectangle, in the order of [`Content::legends`].
    pub legends: Vec<Rect>,
    /// Colour bars' length along their colours: height in a column, width in a row.
    pub bar_len: f32,
    /// The scale bar's rectangle (its label above, the bar along the bottom edge); the bar
    /// is at most as long as the rectangle is wide.
    pub scale: Option<Rect>,
    /// The arrow scale's rectangle (the arrow starts at its left edge, at mid-height).
    pub arrow: Option<Rect>,
}

impl Placement {
    /// Everything drawn: the union of the legends, the scale bar and the arrow scale.
    pub fn drawn(&self) -> Rect {
        self.legends.iter().chain(&self.scale).chain(&self.arrow).fold(Rect::NOTHING, |a, r| a.union(*r))
    }
}

thread_local! {
    /// egui's default fonts, for measuring text without a context (the camera is fitted
    /// before anything is painted, and `record` has no window).
    static FONTS: RefCell<Option<egui::epaint::text::Fonts>> = const { RefCell::new(None) };
}

/// Width (points) of `text` in the overlay's font, plus a little for other pixel densities'
/// rounding.
pub fn text_width(text: &str) -> f32 {
    FONTS.with(|cell| {
        let mut cell = cell.borrow_mut();
        let fonts = cell.get_or_insert_with(|| {
            egui::epaint::text::Fonts::new(egui::epaint::text::TextOptions::default(), egui::FontDefinitions::default())
        });
        let font = egui::FontId::proportional(FONT_SIZE);
        let galley = fonts.with_pixels_per_point(1.0).layout_no_wrap(text.to_owned(), font, egui::Color32::WHITE);
        galley.size().x.ceil() + 2.0
    })
}

/// A legend's size in a column, its colour bar `bar` points tall.
fn column_size(legend: &Legend, bar: f32) -> egui::Vec2 {
    let label = BAR_THICK + 4.0 + text_width(LABEL_TEMPLATE);
    match legend {
        Legend::Flow { title: Some(t) } => {
            vec2(text_width(t).max(label).max(text_width(NOTE_TEMPLATE)), LINE + 8.0 + bar + 12.0 + LINE)
        }
        Legend::Flow { title: None } => vec2(text_width(NOTE_TEMPLATE), LINE),
        Legend::Atoms { by } => vec2(text_width(by.legend_title()).max(label), LINE + 8.0 + bar + 8.0),
        Legend::Species(names) => {
            let widest = names.iter().map(|n| text_width(n)).fold(0.0, f32::max);
            vec2(text_width("species").max(20.0 + widest), LINE + 4.0 + 18.0 * names.len() as f32)
        }
        Legend::Dye(sources) => {
            let names = dye_names(sources);
            let widest = names.iter().map(|n| text_width(n)).fold(0.0, f32::max);
            vec2(text_width("dye").max(20.0 + widest), LINE + 4.0 + 18.0 * names.len() as f32)
        }
    }
}

/// The dye legend's lines: one per source, or [`NO_DYE`].
pub fn dye_names(sources: &[(u16, String)]) -> Vec<String> {
    match sources.is_empty() {
        true => vec![NO_DYE.to_string()],
        false => sources.iter().map(|(_, name)| name.clone()).collect(),
    }
}

/// A legend's size in a row, its colour bar `bar` points long.
fn row_size(legend: &Legend, bar: f32) -> egui::Vec2 {
    let barred = LINE + 4.0 + ROW_BAR_THICK + 2.0 + LINE;
    match legend {
        Legend::Flow { title: Some(t) } => vec2((text_width(t) + 12.0 + text_width(NOTE_TEMPLATE)).max(bar), barred),
        Legend::Flow { title: None } => vec2(text_width(NOTE_TEMPLATE), LINE),
        Legend::Atoms { by } => vec2(text_width(by.legend_title()).max(bar), barred),
        Legend::Species(names) => {
            let row: f32 =
                names.iter().map(|n| 20.0 + text_width(n)).sum::<f32>() + 12.0 * names.len().saturating_sub(1) as f32;
            vec2(text_width("species").max(row), LINE + 4.0 + 14.0)
        }
        Legend::Dye(sources) => {
            let names = dye_names(sources);
            let row: f32 =
                names.iter().map(|n| 20.0 + text_width(n)).sum::<f32>() + 12.0 * names.len().saturating_sub(1) as f32;
            vec2(text_width("dye").max(row), LINE + 4.0 + 14.0)
        }
    }
}

/// Width of the arrow scale: the longest arrow and its label.
fn arrow_width() -> f32 {
    ARROW_MAX + 6.0 + text_width(ARROW_TEMPLATE)
}

/// The overlay in a column down the right of `view`; None when it does not fit the height.
fn column(view: Rect, content: &Content) -> Option<Placement> {
    let bottom_h = if content.scale_bar { SCALE_H } else { 0.0 } + if content.arrow_scale { LINE + 10.0 } else { 0.0 };
    let gaps = GAP * content.legends.len().saturating_sub(1) as f32 + if bottom_h > 0.0 { GAP } else { 0.0 };
    let fixed = |bar: f32| content.legends.iter().map(|l| column_size(l, bar).y).sum::<f32>();
    let avail = view.height() - 2.0 * EDGE - bottom_h - gaps;
    let wanted = if content.bars() <= 1 {
        (view.height() * 0.3).clamp(60.0, 200.0)
    } else {
        (view.height() * 0.2).clamp(50.0, 140.0)
    };
    let bars = content.bars() as f32;
    // Shorter bars where the view is low, down to 30 points.
    let bar = if bars > 0.0 { wanted.min((avail - fixed(0.0)) / bars) } else { wanted };
    if (bars > 0.0 && bar < 30.0) || fixed(bar.max(0.0)) > avail + 1e-3 {
        return None;
    }
    let widest = content.legends.iter().map(|l| column_size(l, bar).x).fold(0.0, f32::max);
    let inner = widest.max(if content.arrow_scale { arrow_width() } else { 0.0 }).max(80.0);
    let area = Rect::from_min_max(pos2(view.right() - inner - 2.0 * EDGE, view.top()), view.right_bottom());
    let x0 = area.left() + EDGE;
    let mut y = view.top() + EDGE;
    let mut legends = Vec::new();
    for l in &content.legends {
        let s = column_size(l, bar);
        legends.push(Rect::from_min_size(pos2(x0, y), s));
        y += s.y + GAP;
    }
    let (scale, arrow) = scale_and_arrow(content, x0, view.bottom() - EDGE, inner);
    Some(Placement { strip: Strip::Side, area, legends, bar_len: bar, scale, arrow })
}

/// The scale bar (`width` wide, its bottom at `bottom`) and the arrow scale above it, both
/// from the left edge `x0`, for the ones `content` shows.
fn scale_and_arrow(content: &Content, x0: f32, bottom: f32, width: f32) -> (Option<Rect>, Option<Rect>) {
    let scale = content.scale_bar.then(|| Rect::from_min_max(pos2(x0, bottom - SCALE_H), pos2(x0 + width, bottom)));
    let arrow_y = bottom - if content.scale_bar { SCALE_H + 10.0 } else { 0.0 } - 0.5 * LINE;
    let arrow = content
        .arrow_scale
        .then(|| Rect::from_center_size(pos2(x0 + 0.5 * arrow_width(), arrow_y), vec2(arrow_width(), LINE)));
    (scale, arrow)
}

/// The overlay in a row along the bottom of `view`; None when it does not fit the width.
fn row(view: Rect, content: &Content) -> Option<Placement> {
    for (scale_frac, bar) in [(0.25, (view.width() * 0.18).clamp(100.0, 220.0)), (0.15, 100.0)] {
        let scale_w = if content.scale_bar { (view.width() * scale_frac).max(60.0) } else { 0.0 };
        let left_w = scale_w.max(if content.arrow_scale { arrow_width() } else { 0.0 });
        let sizes: Vec<egui::Vec2> = content.legends.iter().map(|l| row_size(l, bar)).collect();
        let legends_w = sizes.iter().map(|s| s.x).sum::<f32>() + GAP * sizes.len().saturating_sub(1) as f32;
        let between = if left_w > 0.0 && !sizes.is_empty() { GAP } else { 0.0 };
        if 2.0 * EDGE + left_w + between + legends_w > view.width() {
            continue;
        }
        let left_h = if content.scale_bar { SCALE_H } else { 0.0 }
            + if content.arrow_scale { LINE + if content.scale_bar { 10.0 } else { 0.0 } } else { 0.0 };
        let inner_h = sizes.iter().map(|s| s.y).fold(left_h, f32::max);
        let area = Rect::from_min_max(pos2(view.left(), view.bottom() - inner_h - 2.0 * EDGE), view.right_bottom());
        let mid = area.center().y;
        let mut x = view.right() - EDGE;
        let mut legends: Vec<Rect> = sizes
            .iter()
            .rev()
            .map(|s| {
                let r = Rect::from_min_size(pos2(x - s.x, mid - 0.5 * s.y), *s);
                x -= s.x + GAP;
                r
            })
            .collect();
        legends.reverse();
        let x0 = view.left() + EDGE;
        let (scale, arrow) = scale_and_arrow(content, x0, view.bottom() - EDGE, scale_w);
        return Some(Placement { strip: Strip::Below, area, legends, bar_len: bar, scale, arrow });
    }
    None
}

/// The part of `view` left for the tank when `strip` is kept, as fractions of the view
/// (`[x0, y0, x1, y1]`, origin top-left; what [`Camera::fit_in`] takes).
fn free_fraction(view: Rect, p: &Placement) -> [f32; 4] {
    match p.strip {
        Strip::Side => [0.0, 0.0, ((p.area.left() - view.left()) / view.width()).clamp(0.05, 1.0), 1.0],
        Strip::Below => [0.0, 0.0, 1.0, ((p.area.top() - view.top()) / view.height()).clamp(0.05, 1.0)],
        Strip::Over => [0.0, 0.0, 1.0, 1.0],
    }
}

/// How wide (points) a tank of aspect `aspect` (width / height) can be drawn in what
/// `p` leaves of `view`.
fn room(view: Rect, p: &Placement, aspect: f32) -> f32 {
    let f = free_fraction(view, p);
    ((f[2] - f[0]) * view.width()).min((f[3] - f[1]) * view.height() * aspect)
}

/// The overlay of `content` in `view`, clear of `tank` (the tank's rectangle on screen, as
/// [`tank_rect`] gives it) where a strip is: of two clear strips the one that leaves the
/// tank's shape more room (what [`fit_camera`] chose); neither clear, the column over the view.
pub fn place(view: Rect, content: &Content, tank: Option<Rect>) -> Placement {
    let (side, below) = (column(view, content), row(view, content));
    let clear = |p: &Placement| tank.is_none_or(|t| !overlaps(p.area, t));
    let aspect = tank.map(|t| t.width() / t.height().max(1e-3)).unwrap_or(view.width() / view.height().max(1e-3));
    let mut best: Option<Placement> = None;
    for p in [side.clone(), below.clone()].into_iter().flatten().filter(clear) {
        // Ties go to the first (the column), as in the fit.
        if best.as_ref().is_none_or(|b| room(view, &p, aspect) > room(view, b, aspect) * 1.001) {
            best = Some(p);
        }
    }
    best.unwrap_or_else(|| {
        let mut p = side.or(below).unwrap_or_else(|| column_anyway(view, content));
        p.strip = Strip::Over;
        p
    })
}

/// The column in a view too low for it (legends from the top, the bars 30 points tall).
fn column_anyway(view: Rect, content: &Content) -> Placement {
    let tall = Rect::from_min_size(view.min, vec2(view.width(), 4000.0));
    let mut p = column(tall, content).expect("a column fits 4000 points");
    let dy = view.bottom() - tall.bottom();
    p.area = Rect::from_min_max(p.area.min, pos2(p.area.right(), view.bottom()));
    p.scale = p.scale.map(|r| r.translate(vec2(0.0, dy)));
    p.arrow = p.arrow.map(|r| r.translate(vec2(0.0, dy)));
    p
}

/// Whether two rectangles share more than an edge.
fn overlaps(a: Rect, b: Rect) -> bool {
    a.left() < b.right() && b.left() < a.right() && a.top() < b.bottom() && b.top() < a.bottom()
}

/// `b` grown by `pad` sigma on every side (atoms drawn at the faces reach past them).
fn grown(b: &SimBox, pad: f64) -> SimBox {
    SimBox { lo: b.lo.map(|x| x - pad), hi: b.hi.map(|x| x + pad), periodic: b.periodic }
}

/// The rectangle (points, in `view`) the tank covers on screen through `camera` in a view of
/// `size` pixels: the bounding rectangle of the box's eight corners, the box grown by `radius`
/// sigma (the atoms' drawn radius). None when a corner is behind the camera.
pub fn tank_rect(camera: &Camera, b: &SimBox, size: [u32; 2], view: Rect, radius: f32) -> Option<Rect> {
    let g = grown(b, radius.max(0.0) as f64);
    let points_per_px = view.width() / size[0].max(1) as f32;
    let mut r = Rect::NOTHING;
    for k in 0..8 {
        let c = [
            if k & 1 == 0 { g.lo[0] } else { g.hi[0] } as f32,
            if k & 2 == 0 { g.lo[1] } else { g.hi[1] } as f32,
            if k & 4 == 0 { g.lo[2] } else { g.hi[2] } as f32,
        ];
        let px = camera.project(c, size)?;
        r.extend_with(view.min + vec2(px[0], px[1]) * points_per_px);
    }
    Some(r)
}

/// A camera of `mode` framing the tank `b` (grown by the atoms' `radius`) in `view` (points;
/// `size` pixels), leaving the strip for `content` clear: of the column and the row, the one
/// that leaves the tank larger (the column on a tie). Without an overlay, or in a view too
/// small for either strip, the plain fit to the whole view.
pub fn fit_camera(mode: CameraMode, b: &SimBox, view: Rect, size: [u32; 2], content: &Content, radius: f32) -> Camera {
    let aspect = size[0].max(1) as f32 / size[1].max(1) as f32;
    let g = grown(b, radius.max(0.0) as f64);
    let plain = Camera::fit(mode, &g, aspect);
    if content.is_empty() || !(view.width() > 1.0 && view.height() > 1.0) {
        return plain;
    }
    let mut best: Option<(f32, Camera)> = None;
    for p in [column(view, content), row(view, content)].into_iter().flatten() {
        let cam = Camera::fit_in(mode, &g, aspect, free_fraction(view, &p));
        let scale = cam.pixels_per_sigma(size[1]);
        if best.as_ref().is_none_or(|(s, _)| scale > s * 1.001) {
            best = Some((scale, cam));
        }
    }
    best.map_or(plain, |(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::flow_layer::FlowView;

    fn flow_settings() -> ViewSettings {
        ViewSettings { flow: FlowView::flow_preset(), ..ViewSettings::default() }
    }

    /// For tanks of several shapes in landscape and portrait views, front and orbit: the fit
    /// leaves the chosen strip clear of the tank's rectangle, the legends lie inside the
    /// strip and the view, and the tank is not left small.
    #[test]
    fn the_fitted_tank_never_meets_the_overlay() {
        let species = vec!["Ar".to_string(), "Kr".to_string()];
        let mut mixture = ViewSettings { colour_by: ColourBy::Species, ..ViewSettings::default() };
        mixture.flow.arrows = true;
        let arrows =
            ViewSettings { flow: FlowView { arrows: true, ..FlowView::flow_preset() }, ..ViewSettings::default() };
        let both = ViewSettings {
            flow: FlowView { atoms: AtomsShown::Normal, ..FlowView::flow_preset() },
            ..ViewSettings::default()
        };
        for dims in [[60.8, 20.0, 7.2], [147.0, 72.0, 5.6], [30.0, 20.0, 6.0], [20.0, 40.0, 10.0], [25.0, 25.0, 25.0]] {
            let b = SimBox::new(dims, [true, false, true]);
            for size in [[1280u32, 720u32], [650, 820], [1200, 440], [960, 470], [1920, 1080]] {
                let view = Rect::from_min_size(pos2(340.0, 8.0), vec2(size[0] as f32, size[1] as f32));
                for settings in [ViewSettings::default(), flow_settings(), mixture, arrows, both] {
                    let content = Content::of(&settings, &species, &[]);
                    for mode in [CameraMode::Front, CameraMode::Orbit] {
                        let cam = fit_camera(mode, &b, view, size, &content, settings.radius);
                        let tank = tank_rect(&cam, &b, size, view, settings.radius).unwrap();
                        let p = place(view, &content, Some(tank));
                        let what = format!("{dims:?} in {size:?}, {mode:?}, {:?}", content.legends);
                        assert_ne!(p.strip, Strip::Over, "{what}: no clear strip");
                        assert!(!overlaps(p.area, tank), "{what}: strip {:?} meets the tank {tank:?}", p.area);
                        assert!(view.contains_rect(tank), "{what}: the tank {tank:?} leaves the view");
                        for r in p.legends.iter().chain(&p.scale).chain(&p.arrow) {
                            assert!(
                                p.area.contains_rect(*r) && !overlaps(*r, tank),
                                "{what}: {r:?} outside {:?}",
                                p.area
                            );
                        }
                        // Not left small: at least 60% of the view along one axis (half in
                        // the orbit camera, whose box turns inside a margin for its corners).
                        let fill = (tank.width() / view.width()).max(tank.height() / view.height());
                        let least = if mode == CameraMode::Front { 0.6 } else { 0.5 };
                        assert!(fill > least, "{what}: the tank fills only {fill}");
                    }
                }
            }
        }
    }

    #[test]
    fn content_follows_the_settings() {
        let s = ViewSettings::default();
        assert_eq!(Content::of(&s, &[], &[]).legends, vec![Legend::Atoms { by: ColourBy::Speed }]);
        let f = flow_settings();
        assert_eq!(Content::of(&f, &[], &[]).legends, vec![Legend::Flow { title: Some("vorticity (1/ps)".into()) }]);
        let none = ViewSettings { show_legend: false, show_scale_bar: false, ..f };
        assert!(Content::of(&none, &[], &[]).is_empty());
        // A wide tank in a landscape view keeps the row under it; a square one the column.
        let view = Rect::from_min_size(pos2(0.0, 0.0), vec2(1280.0, 720.0));
        let c = Content::of(&f, &[], &[]);
        for (dims, strip) in [([60.8, 20.0, 7.2], Strip::Below), ([25.0, 25.0, 6.0], Strip::Side)] {
            let b = SimBox::new(dims, [true; 3]);
            let cam = fit_camera(CameraMode::Front, &b, view, [1280, 720], &c, 0.5);
            let p = place(view, &c, tank_rect(&cam, &b, [1280, 720], view, 0.5));
            assert_eq!(p.strip, strip, "{dims:?}");
        }
        // Zoomed in far: no strip is clear, the overlay lies over the view.
        let b = SimBox::new([25.0, 25.0, 6.0], [true; 3]);
        let mut cam = fit_camera(CameraMode::Front, &b, view, [1280, 720], &c, 0.5);
        cam.zoom_by(0.3);
        assert_eq!(place(view, &c, tank_rect(&cam, &b, [1280, 720], view, 0.5)).strip, Strip::Over);
    }
}
