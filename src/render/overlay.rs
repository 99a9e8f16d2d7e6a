//! The 2D overlay on the 3D view: the colour legend (a colour bar, or one swatch per species
//! name when colouring by species) and a scale bar labelled in nm or Å.
//! Painted with egui shapes, so the app draws it with its UI and `record` draws it offscreen
//! through [`OverlayPainter`] (egui's tessellator and wgpu renderer, no window).

use super::colour::species_colour;
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
/// `size` pixels seen through `camera`; `species` names the species (by type) for the legend.
pub fn paint(
    painter: &egui::Painter,
    rect: egui::Rect,
    settings: &ViewSettings,
    camera: &Camera,
    size: [u32; 2],
    species: &[String],
) {
    let text = egui::Color32::from_rgb(225, 230, 240);
    let font = egui::FontId::proportional(13.0);
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
    if settings.show_legend && settings.colour_by == ColourBy::Species {
        species_legend(painter, rect, species, text, font);
    } else if settings.show_legend && settings.colour_by != ColourBy::Single {
        let w = 16.0;
        let h = (rect.height() * 0.35).clamp(60.0, 220.0);
        let x1 = rect.right() - 70.0;
        let y0 = rect.top() + 30.0;
        let palette = settings.colour_by.palette();
        let mut mesh = egui::Mesh::default();
        let steps = 32;
        for i in 0..=steps {
            let t = i as f32 / steps as f32;
            let c = palette.colour(t, settings.single);
            let col = egui::Color32::from(egui::Rgba::from_rgb(c[0], c[1], c[2]));
            let y = y0 + h * (1.0 - t);
            mesh.colored_vertex(egui::pos2(x1, y), col);
            mesh.colored_vertex(egui::pos2(x1 + w, y), col);
            if i > 0 {
                let k = 2 * i as u32;
                mesh.add_triangle(k - 2, k - 1, k);
                mesh.add_triangle(k - 1, k + 1, k);
            }
        }
        painter.add(egui::Shape::mesh(mesh));
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
    ) {
        if !(settings.show_legend || settings.show_scale_bar) {
            return;
        }
        let size = target.size;
        let rect = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0] as f32, size[1] as f32));
        let input = egui::RawInput { screen_rect: Some(rect), ..Default::default() };
        let output = self.ctx.run_ui(input, |ui| {
            paint(ui.painter(), rect, settings, camera, size, species);
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
