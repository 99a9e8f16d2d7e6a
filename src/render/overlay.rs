//! The 2D overlay on the 3D view: the colour legend (a colour bar, or one swatch per species
//! name when colouring by species) and a scale bar labelled in nm or Å.
//! Painted with egui shapes, so the app draws it with its UI and `record` draws it offscreen
//! through [`OverlayPainter`] (egui's tessellator and wgpu renderer, no window).

use super::colour::{field_colour, species_colour};
use super::flow_layer::{AtomsShown, FlowLegend};
use super::offscreen::{COLOUR_FORMAT, Gpu, Offscreen};
use super::{Camera, ColourBy, ViewSettings};
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

/// Paints the legend (top right) and scale bar (bottom left) into `rect`, a view of
/// `size` pixels seen through `camera`; `species` names the species (by type) for the legend;
/// `flow` is the flow layer's legend when it draws (its colour bar takes the atoms' place
/// unless the atoms show at full brightness, and an arrow scale sits above the scale bar).
pub fn paint(
    painter: &egui::Painter,
    rect: egui::Rect,
    settings: &ViewSettings,
    camera: &Camera,
    size: [u32; 2],
    species: &[String],
    flow: Option<&FlowLegend>,
) {
    let text = egui::Color32::from_rgb(225, 230, 240);
    let font = egui::FontId::proportional(13.0);
    let mut atom_legend = settings.show_legend;
    if let Some(f) = flow.filter(|_| settings.flow.on && settings.show_legend) {
        let normal_atoms = settings.flow.atoms == AtomsShown::Normal;
        let x1 = rect.right() - if normal_atoms { 200.0 } else { 90.0 };
        flow_legend(painter, rect, x1, f, camera, size, text, &font);
        atom_legend = normal_atoms;
    }
    if settings.show_scale_bar {
        let sigma_per_px = camera.sigma_per_pixel(size) as f64;
        let points_per_px = rect.width() as f64 / size[0].max(1) as f64;
        let max_nm = units::reduced_length_to_nm(sigma_per_px * 0.25 * size[0] as f64);
        let nm = nice_length_nm(max_nm);
        let len_pts = (nm / units::reduced_length_to_nm(sigma_per_px)) * points_per_px;
        let y = rect.bottom() - 18.0;
        let x0 = rect.left() + 16.0;
        let bar = egui::Rect::from_min_max(egui::pos2(x0, y - 3.0), egui::pos2(x0 + len_pts as f32, y + 3.0));
        painter.rect_filled(bar, 1.0, text);
        painter.text(egui::pos2(x0, y - 8.0), egui::Align2::LEFT_BOTTOM, scale_label(nm), font.clone(), text);
    }
    if atom_legend && settings.colour_by == ColourBy::Species {
        species_legend(painter, rect, species, text, font);
    } else if atom_legend && settings.colour_by != ColourBy::Single {
        let w = 16.0;
        let h = (rect.height() * 0.35).clamp(60.0, 220.0);
        let x1 = rect.right() - 70.0;
        let y0 = rect.top() + 30.0;
        let palette = settings.colour_by.palette();
        colour_bar(painter, egui::Rect::from_min_size(egui::pos2(x1, y0), egui::vec2(w, h)), |t| {
            palette.colour(t, settings.single)
        });
        let by = settings.colour_by;
        painter.text(
            egui::pos2(x1 + w + 4.0, y0),
            egui::Align2::LEFT_CENTER,
            by.legend_label(settings.range[1]),
            font.clone(),
            text,
        );
        painter.text(
            egui::pos2(x1 + w + 4.0, y0 + h),
            egui::Align2::LEFT_CENTER,
            by.legend_label(settings.range[0]),
            font.clone(),
            text,
        );
        painter.text(egui::pos2(x1 + w, y0 - 8.0), egui::Align2::RIGHT_BOTTOM, by.legend_title(), font, text);
    }
}

/// A vertical colour bar in `r`, `colour(t)` from t = 0 at the bottom to 1 at the top.
fn colour_bar(painter: &egui::Painter, r: egui::Rect, colour: impl Fn(f32) -> [f32; 3]) {
    let mut mesh = egui::Mesh::default();
    let steps = 32;
    for i in 0..=steps {
        let t = i as f32 / steps as f32;
        let c = colour(t);
        let col = egui::Color32::from(egui::Rgba::from_rgb(c[0], c[1], c[2]));
        let y = r.top() + r.height() * (1.0 - t);
        mesh.colored_vertex(egui::pos2(r.left(), y), col);
        mesh.colored_vertex(egui::pos2(r.right(), y), col);
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

/// The flow layer's legend: its colour bar (in argon units) with the window it averages over,
/// and the arrow scale (a reference arrow labelled in m/s) above the scale bar.
#[allow(clippy::too_many_arguments)]
fn flow_legend(
    painter: &egui::Painter,
    rect: egui::Rect,
    x1: f32,
    f: &FlowLegend,
    camera: &Camera,
    size: [u32; 2],
    text: egui::Color32,
    font: &egui::FontId,
) {
    let y0 = rect.top() + 30.0;
    let h = (rect.height() * 0.35).clamp(60.0, 220.0);
    // A dark backing, sized once the labels are laid out, keeps the text legible over the
    // coloured plane.
    let backing = painter.add(egui::Shape::Noop);
    let mut used = egui::Rect::NOTHING;
    if let Some((kind, range)) = f.layer {
        let w = 16.0;
        let bar = egui::Rect::from_min_size(egui::pos2(x1, y0), egui::vec2(w, h));
        colour_bar(painter, bar, |t| field_colour(kind, t));
        used = used.union(bar);
        let si = kind.to_si();
        let mut labels = vec![(legend_number(range[1] as f64 * si), y0), (legend_number(range[0] as f64 * si), y0 + h)];
        if kind.signed() {
            labels.push(("0".into(), y0 + 0.5 * h));
        }
        for (label, y) in labels {
            used = used.union(painter.text(
                egui::pos2(x1 + w + 4.0, y),
                egui::Align2::LEFT_CENTER,
                label,
                font.clone(),
                text,
            ));
        }
        let title = format!("{} ({})", kind.label(), kind.unit_si());
        used = used.union(painter.text(
            egui::pos2(x1 + w, y0 - 8.0),
            egui::Align2::RIGHT_BOTTOM,
            title,
            font.clone(),
            text,
        ));
    }
    let note = format!("{:.1} τ, {} samples", f.window_tau, f.samples);
    used = used.union(painter.text(
        egui::pos2(x1 + 16.0, y0 + h + 10.0),
        egui::Align2::RIGHT_TOP,
        note,
        font.clone(),
        text,
    ));
    painter.set(backing, egui::Shape::rect_filled(used.expand(6.0), 4.0, egui::Color32::from_black_alpha(150)));
    if let Some(scale) = f.arrow_scale {
        // The reference arrow: a round speed whose arrow is at most 70 points long.
        let points_per_px = rect.width() / size[0].max(1) as f32;
        let points_per_sigma = camera.pixels_per_sigma(size[1]) * points_per_px;
        let points_per_speed = scale * points_per_sigma;
        if points_per_speed > 0.0 && points_per_speed.is_finite() {
            let max_m_s = units::reduced_speed_to_m_per_s((70.0 / points_per_speed) as f64);
            let m_s = nice_length_nm(max_m_s);
            let len = (m_s / units::reduced_speed_to_m_per_s(1.0)) as f32 * points_per_speed;
            let (x0, y) = (rect.left() + 16.0, rect.bottom() - 44.0);
            let backing = painter.add(egui::Shape::Noop);
            let stroke = egui::Stroke::new(2.0, text);
            painter.arrow(egui::pos2(x0, y), egui::vec2(len, 0.0), stroke);
            let label = painter.text(
                egui::pos2(x0 + len + 6.0, y),
                egui::Align2::LEFT_CENTER,
                format!("{m_s:.0} m/s"),
                font.clone(),
                text,
            );
            let used = label.union(egui::Rect::from_min_max(egui::pos2(x0, y - 5.0), egui::pos2(x0 + len, y + 5.0)));
            painter.set(backing, egui::Shape::rect_filled(used.expand(5.0), 4.0, egui::Color32::from_black_alpha(150)));
        }
    }
}

/// One coloured swatch and name per species, top right.
fn species_legend(
    painter: &egui::Painter,
    rect: egui::Rect,
    species: &[String],
    text: egui::Color32,
    font: egui::FontId,
) {
    let x1 = rect.right() - 70.0;
    let y0 = rect.top() + 30.0;
    painter.text(egui::pos2(x1 + 16.0, y0 - 8.0), egui::Align2::RIGHT_BOTTOM, "species", font.clone(), text);
    for (i, name) in species.iter().enumerate() {
        let c = species_colour(i);
        let col = egui::Color32::from(egui::Rgba::from_rgb(c[0], c[1], c[2]));
        let y = y0 + 18.0 * i as f32;
        painter.rect_filled(egui::Rect::from_min_size(egui::pos2(x1, y), egui::vec2(16.0, 12.0)), 2.0, col);
        painter.text(egui::pos2(x1 + 20.0, y + 6.0), egui::Align2::LEFT_CENTER, name, font.clone(), text);
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

    /// Paints the overlay over what `target` holds.
    pub fn draw(
        &mut self,
        gpu: &Gpu,
        target: &Offscreen,
        settings: &ViewSettings,
        camera: &Camera,
        species: &[String],
        flow: Option<&FlowLegend>,
    ) {
        if !(settings.show_legend || settings.show_scale_bar) {
            return;
        }
        let size = target.size;
        let rect = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0] as f32, size[1] as f32));
        let input = egui::RawInput { screen_rect: Some(rect), ..Default::default() };
        let output = self.ctx.run_ui(input, |ui| {
            paint(ui.painter(), rect, settings, camera, size, species, flow);
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
