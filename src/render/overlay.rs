//! The 2D overlay on the 3D view: the colour legend (a colour bar, or one swatch per species
//! name when colouring by species; the flow layer's colour bar and arrow scale) and a scale
//! bar labelled in nm or Å, laid out clear of the tank by `overlay_layout` (a column beside the
//! tank or a row under it) and drawn there in the column's or the row's form.
//! Painted with egui shapes, so the app draws it with its UI and `record` draws it offscreen
//! through [`OverlayPainter`] (egui's tessellator and wgpu renderer, no window).

use egui::{Align2, Color32, FontId, Painter, Rect, pos2, vec2};

use super::colour::{dye_colour, field_colour, species_colour};
use super::flow_layer::FlowLegend;
use super::offscreen::{COLOUR_FORMAT, Gpu, Offscreen};
use super::overlay_layout::{
    self, ARROW_MAX, BAR_THICK, Content, FONT_SIZE, LINE, Legend, Placement, ROW_BAR_THICK, Strip,
};
use super::{Camera, ViewSettings};
use crate::physics::sim_box::SimBox;
use crate::units;

/// A "nice" length (1, 2 or 5 times a power of ten) in nm not longer than `max_nm`.
pub fn nice_length_nm(max_nm: f64) -> f64 {
    if !(max_nm.is_finite() && max_nm > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(max_nm.log10().floor());
    [5.0, 2.0, 1.0].iter().map(|m| m * p).find(|&l| l <= max_nm).unwrap_or(p)
}

/// Text for a scale bar of `nm` nanometres (Å below 1 nm).
pub fn scale_label(nm: f64) -> String {
    if nm < 1.0 { format!("{:.0} Å", nm * 10.0) } else { format!("{nm:.0} nm") }
}

/// Colours and font of the overlay.
struct Style {
    text: Color32,
    dim: Color32,
    font: FontId,
    /// Dark backings behind each block (only when the overlay lies over the view).
    backed: bool,
}

/// Paints the overlay into `rect`, a view of `size` pixels seen through `camera` that shows the
/// tank `sim_box`: the legends and the scale bar where [`overlay_layout::place`] puts them, clear
/// of the tank where a strip is. `species` names the species (by type) for the legend; `flow`
/// is the flow layer's legend once a window is drawn (its colour bar takes the atoms' place
/// unless the atoms show at full brightness, and an arrow scale sits above the scale bar).
/// Returns the placement it painted (the app keeps it; tests check it).
#[allow(clippy::too_many_arguments)]
pub fn paint(
    painter: &Painter,
    rect: Rect,
    settings: &ViewSettings,
    camera: &Camera,
    size: [u32; 2],
    species: &[String],
    dye: &[(u16, String)],
    flow: Option<&FlowLegend>,
    sim_box: &SimBox,
) -> Placement {
    let content = Content::of(settings, species, dye);
    let tank = overlay_layout::tank_rect(camera, sim_box, size, rect, settings.radius);
    let place = overlay_layout::place(rect, &content, tank);
    let style = Style {
        text: Color32::from_rgb(225, 230, 240),
        dim: Color32::from_rgb(170, 178, 192),
        font: FontId::proportional(FONT_SIZE),
        backed: place.strip == Strip::Over,
    };
    let row = place.strip == Strip::Below;
    for (legend, r) in content.legends.iter().zip(&place.legends) {
        let backing = painter.add(egui::Shape::Noop);
        match legend {
            Legend::Flow { title } => {
                flow_legend(painter, *r, row, place.bar_len, title.as_deref(), flow, settings, &style)
            }
            Legend::Atoms { by } => {
                let labels = [by.legend_label(settings.range[0]), by.legend_label(settings.range[1])];
                let palette = by.palette();
                let bar = Bar { title: by.legend_title(), labels: Some(labels), zero: false, note: None };
                bar.paint(painter, *r, row, place.bar_len, &style, |t| palette.colour(t, settings.single));
            }
            Legend::Species(names) => {
                let entries: Vec<([f32; 3], &str)> =
                    names.iter().enumerate().map(|(i, n)| (species_colour(i), n.as_str())).collect();
                swatch_legend(painter, *r, row, "species", &entries, &style)
            }
            Legend::Dye(sources) => {
                let names = super::overlay_layout::dye_names(sources);
                let colours = sources.iter().map(|(n, _)| dye_colour(*n)).chain([settings.untagged.colour()]);
                let entries: Vec<([f32; 3], &str)> = colours.zip(names.iter().map(String::as_str)).collect();
                swatch_legend(painter, *r, row, "dye", &entries, &style)
            }
        }
        back(painter, backing, *r, &style);
    }
    let points_per_px = rect.width() / size[0].max(1) as f32;
    if let Some(r) = place.scale {
        let backing = painter.add(egui::Shape::Noop);
        let sigma_per_px = camera.sigma_per_pixel(size) as f64;
        let nm_per_point = units::reduced_length_to_nm(sigma_per_px) / points_per_px as f64;
        let nm = nice_length_nm(nm_per_point * r.width() as f64);
        let len = (nm / nm_per_point) as f32;
        let y = r.bottom() - 3.0;
        let bar = Rect::from_min_max(pos2(r.left(), y - 3.0), pos2(r.left() + len, y + 3.0));
        painter.rect_filled(bar, 1.0, style.text);
        let label =
            painter.text(pos2(r.left(), y - 8.0), Align2::LEFT_BOTTOM, scale_label(nm), style.font.clone(), style.text);
        back(painter, backing, bar.union(label), &style);
    }
    if let (Some(r), Some(scale)) = (place.arrow, flow.and_then(|f| f.arrow_scale)) {
        // The reference arrow: a round speed whose arrow is at most ARROW_MAX points long.
        let points_per_sigma = camera.pixels_per_sigma(size[1]) * points_per_px;
        let points_per_speed = scale * points_per_sigma;
        if points_per_speed > 0.0 && points_per_speed.is_finite() {
            let max_m_s = units::reduced_speed_to_m_per_s((ARROW_MAX / points_per_speed) as f64);
            let m_s = nice_length_nm(max_m_s);
            let len = (m_s / units::reduced_speed_to_m_per_s(1.0)) as f32 * points_per_speed;
            let (x0, y) = (r.left(), r.center().y);
            let backing = painter.add(egui::Shape::Noop);
            painter.arrow(pos2(x0, y), vec2(len, 0.0), egui::Stroke::new(2.0, style.text));
            let label = painter.text(
                pos2(x0 + len + 6.0, y),
                Align2::LEFT_CENTER,
                format!("{m_s:.0} m/s"),
                style.font.clone(),
                style.text,
            );
            let used = label.union(Rect::from_min_max(pos2(x0, y - 5.0), pos2(x0 + len, y + 5.0)));
            back(painter, backing, used, &style);
        }
    }
    place
}

/// Fills `slot` with a dark backing behind `r` when the overlay lies over the view.
fn back(painter: &Painter, slot: egui::layers::ShapeIdx, r: Rect, style: &Style) {
    if style.backed && r.is_positive() {
        painter.set(slot, egui::Shape::rect_filled(r.expand(6.0), 4.0, Color32::from_black_alpha(150)));
    }
}

/// A colour bar with its title, end labels (the zero in the middle of a signed layer) and an
/// optional note, in a column (vertical bar, labels at its right, the note under it) or a row
/// (horizontal bar under the title and note, labels under its ends).
struct Bar<'a> {
    title: &'a str,
    /// Labels at the low and high ends; None: no values yet.
    labels: Option<[String; 2]>,
    zero: bool,
    note: Option<String>,
}

impl Bar<'_> {
    /// Paints into `r` (the legend's rectangle): the bar `len` points along its colours,
    /// `colour(t)` from t = 0 (bottom, left) to 1 (top, right).
    fn paint(&self, painter: &Painter, r: Rect, row: bool, len: f32, style: &Style, colour: impl Fn(f32) -> [f32; 3]) {
        let (text, font) = (style.text, style.font.clone());
        let title = painter.text(r.left_top(), Align2::LEFT_TOP, self.title, font.clone(), text);
        if row {
            if let Some(note) = &self.note {
                painter.text(pos2(title.right() + 12.0, r.top()), Align2::LEFT_TOP, note, font.clone(), style.dim);
            }
            let bar = Rect::from_min_size(pos2(r.left(), r.top() + LINE + 4.0), vec2(len, ROW_BAR_THICK));
            colour_bar(painter, bar, false, colour);
            let y = bar.bottom() + 2.0;
            if let Some([lo, hi]) = &self.labels {
                painter.text(pos2(bar.left(), y), Align2::LEFT_TOP, lo, font.clone(), text);
                painter.text(pos2(bar.right(), y), Align2::RIGHT_TOP, hi, font.clone(), text);
                if self.zero {
                    painter.text(pos2(bar.center().x, y), Align2::CENTER_TOP, "0", font, text);
                }
            }
        } else {
            let bar = Rect::from_min_size(pos2(r.left(), r.top() + LINE + 8.0), vec2(BAR_THICK, len));
            colour_bar(painter, bar, true, colour);
            let x = bar.right() + 4.0;
            if let Some([lo, hi]) = &self.labels {
                painter.text(pos2(x, bar.top()), Align2::LEFT_CENTER, hi, font.clone(), text);
                painter.text(pos2(x, bar.bottom()), Align2::LEFT_CENTER, lo, font.clone(), text);
                if self.zero {
                    painter.text(pos2(x, bar.center().y), Align2::LEFT_CENTER, "0", font.clone(), text);
                }
            }
            if let Some(note) = &self.note {
                painter.text(pos2(r.left(), bar.bottom() + 12.0), Align2::LEFT_TOP, note, font, style.dim);
            }
        }
    }
}

/// A colour bar in `r`, `colour(t)` from t = 0 at the bottom (vertical) or left to 1 at the
/// top or right.
fn colour_bar(painter: &Painter, r: Rect, vertical: bool, colour: impl Fn(f32) -> [f32; 3]) {
    let mut mesh = egui::Mesh::default();
    let steps = 32;
    for i in 0..=steps {
        let t = i as f32 / steps as f32;
        let c = colour(t);
        let col = Color32::from(egui::Rgba::from_rgb(c[0], c[1], c[2]));
        if vertical {
            let y = r.top() + r.height() * (1.0 - t);
            mesh.colored_vertex(pos2(r.left(), y), col);
            mesh.colored_vertex(pos2(r.right(), y), col);
        } else {
            let x = r.left() + r.width() * t;
            mesh.colored_vertex(pos2(x, r.top()), col);
            mesh.colored_vertex(pos2(x, r.bottom()), col);
        }
        if i > 0 {
            let k = 2 * i as u32;
            mesh.add_triangle(k - 2, k - 1, k);
            mesh.add_triangle(k - 1, k + 1, k);
        }
    }
    painter.add(egui::Shape::mesh(mesh));
}

/// A value for a legend, with as many digits as its size needs.
pub fn legend_number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 1e-3 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// The flow layer's colour bar (in argon units) with the window it averages over; before the
/// first window, the map and title with a note that it is sampling.
#[allow(clippy::too_many_arguments)]
fn flow_legend(
    painter: &Painter,
    r: Rect,
    row: bool,
    len: f32,
    title: Option<&str>,
    f: Option<&FlowLegend>,
    settings: &ViewSettings,
    style: &Style,
) {
    let note = match f {
        Some(f) => format!("{:.1} τ, {} samples", f.window_tau, f.samples),
        None => "sampling the first window".into(),
    };
    let (Some(title), Some(kind)) = (title, settings.flow.layer) else {
        painter.text(r.left_top(), Align2::LEFT_TOP, note, style.font.clone(), style.text);
        return;
    };
    let range = f.and_then(|f| f.layer).filter(|(k, _)| *k == kind).map(|(_, range)| range);
    let si = kind.to_si();
    let labels = range.map(|range| [legend_number(range[0] as f64 * si), legend_number(range[1] as f64 * si)]);
    let bar = Bar { title, zero: kind.signed() && labels.is_some(), labels, note: Some(note) };
    bar.paint(painter, r, row, len, style, |t| field_colour(kind, t));
}

/// Under `title`, one coloured swatch and name per entry (species, dye sources): a list in a
/// column, a line in a row.
fn swatch_legend(painter: &Painter, r: Rect, row: bool, title: &str, entries: &[([f32; 3], &str)], style: &Style) {
    painter.text(r.left_top(), Align2::LEFT_TOP, title, style.font.clone(), style.text);
    let mut x = r.left();
    for (i, &(c, name)) in entries.iter().enumerate() {
        let col = Color32::from(egui::Rgba::from_rgb(c[0], c[1], c[2]));
        let at =
            if row { pos2(x, r.top() + LINE + 5.0) } else { pos2(r.left(), r.top() + LINE + 4.0 + 18.0 * i as f32) };
        painter.rect_filled(Rect::from_min_size(at, vec2(16.0, 12.0)), 2.0, col);
        let label = painter.text(at + vec2(20.0, 6.0), Align2::LEFT_CENTER, name, style.font.clone(), style.text);
        x = label.right() + 12.0;
    }
}

/// Draws the overlay onto offscreen frames: an egui context and egui's wgpu renderer.
pub struct OverlayPainter {
    ctx: egui::Context,
    renderer: egui_wgpu::Renderer,
}

impl OverlayPainter {
    pub fn new(gpu: &Gpu) -> OverlayPainter {
        let renderer = egui_wgpu::Renderer::new(&gpu.device, COLOUR_FORMAT, egui_wgpu::RendererOptions::PREDICTABLE);
        OverlayPainter { ctx: egui::Context::default(), renderer }
    }

    /// Paints the overlay over what `target` holds (a view of the tank `sim_box`).
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        &mut self,
        gpu: &Gpu,
        target: &Offscreen,
        settings: &ViewSettings,
        camera: &Camera,
        species: &[String],
        dye: &[(u16, String)],
        flow: Option<&FlowLegend>,
        sim_box: &SimBox,
    ) {
        if !(settings.show_legend || settings.show_scale_bar) {
            return;
        }
        let size = target.size;
        let rect = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0] as f32, size[1] as f32));
        let input = egui::RawInput { screen_rect: Some(rect), ..Default::default() };
        let output = self.ctx.run_ui(input, |ui| {
            paint(ui.painter(), rect, settings, camera, size, species, dye, flow, sim_box);
        });
        let jobs = self.ctx.tessellate(output.shapes, 1.0);
        let screen = egui_wgpu::ScreenDescriptor { size_in_pixels: size, pixels_per_point: 1.0 };
        for (id, deltas) in &output.textures_delta.set {
            for delta in deltas {
                self.renderer.update_texture(&gpu.device, &gpu.queue, *id, delta);
            }
        }
        let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("overlay") });
        let extra = self.renderer.update_buffers(&gpu.device, &gpu.queue, &mut encoder, &jobs, &screen);
        {
            let pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("overlay pass"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &target.colour_view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations { load: wgpu::LoadOp::Load, store: wgpu::StoreOp::Store },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            self.renderer.render(&mut pass.forget_lifetime(), &jobs, &screen);
        }
        gpu.queue.submit(extra.into_iter().chain(Some(encoder.finish())));
        for id in &output.textures_delta.free {
            self.renderer.free_texture(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_lengths() {
        assert_eq!(nice_length_nm(7.3), 5.0);
        assert_eq!(nice_length_nm(2.4), 2.0);
        assert_eq!(nice_length_nm(0.15), 0.1);
        assert_eq!(scale_label(0.5), "5 Å");
        assert_eq!(scale_label(20.0), "20 nm");
    }
}
