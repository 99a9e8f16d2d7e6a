//! The examples gallery: a window of cards, one per built-in preset (its picture, name,
//! one-line description, what it shows, the backend and size it is made for), each opened with
//! one click; and the question asked before opening one far too slow for the active backend.
//! Reached from the top bar's "Examples" button and opened by itself on the first launch.

use crate::app::App;
use crate::app::gallery::{Card, SlowExample};
use crate::scene::presets::{PRESETS, Preset, thousands};

/// Width of a card's picture, points.
const THUMB_W: f32 = 240.0;

/// The gallery window (while open) and the slow-example question (while asked).
pub fn gallery_ui(app: &mut App, ctx: &egui::Context) {
    if let Some(slow) = app.gallery.confirm.clone() {
        slow_example_ui(app, ctx, &slow);
        return;
    }
    if !app.gallery.open {
        return;
    }
    load_cards(app, ctx);
    let mut open = true;
    let mut chosen = None;
    let screen = ctx.content_rect();
    egui::Window::new("Examples")
        .id(egui::Id::unique("examples gallery"))
        .open(&mut open)
        .collapsible(false)
        .resizable(true)
        .default_size(egui::vec2((screen.width() - 80.0).min(3.0 * (THUMB_W + 40.0)), screen.height() - 120.0))
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.label(
                "Built-in scenes: click one to open it. Their names also work on the command line \
                      (`argon-sandbox twin_eddies`, `argon-sandbox run vortex_street`).",
            );
            ui.add_space(6.0);
            egui::ScrollArea::vertical().show(ui, |ui| {
                let columns = ((ui.available_width() / (THUMB_W + 24.0)).floor() as usize).clamp(1, 3);
                egui::Grid::new("gallery cards").num_columns(columns).spacing([12.0, 12.0]).show(ui, |ui| {
                    for (i, p) in PRESETS.iter().enumerate() {
                        if app.gallery.cards.get(i).is_some_and(|c| card_ui(ui, p, c)) {
                            chosen = Some(p.name);
                        }
                        if (i + 1) % columns == 0 {
                            ui.end_row();
                        }
                    }
                });
            });
        });
    if !open {
        app.gallery.open = false;
    }
    if let Some(name) = chosen {
        app.open_example(name);
    }
}

/// One card; true when clicked.
fn card_ui(ui: &mut egui::Ui, p: &Preset, card: &Card) -> bool {
    let frame = egui::Frame::group(ui.style()).inner_margin(8.0);
    let inner = frame.show(ui, |ui| {
        ui.set_width(THUMB_W);
        ui.vertical(|ui| {
            let size = card.thumbnail.size_vec2();
            let h = THUMB_W * size.y / size.x.max(1.0);
            ui.add(egui::Image::new(&card.thumbnail).fit_to_exact_size(egui::vec2(THUMB_W, h)));
            ui.add_space(4.0);
            ui.strong(&card.title);
            ui.label(egui::RichText::new(&card.description).small());
            ui.label(egui::RichText::new(p.shows).small().weak());
            ui.label(
                egui::RichText::new(format!("Made for: {} · {} atoms", p.made_for.label(), thousands(p.atoms)))
                    .small()
                    .italics(),
            );
            ui.add_space(2.0);
            ui.button("Open").on_hover_text(format!("argon-sandbox {}", p.name)).clicked()
        })
        .inner
    });
    let clicked_card =
        inner.response.interact(egui::Sense::click()).on_hover_cursor(egui::CursorIcon::PointingHand).clicked();
    inner.inner || clicked_card
}

/// "This would be slow here": the estimate and what works instead.
fn slow_example_ui(app: &mut App, ctx: &egui::Context, slow: &SlowExample) {
    let mut action = None;
    egui::Window::new("This example is too big for this backend")
        .id(egui::Id::unique("slow example"))
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .show(ctx, |ui| {
            ui.label(format!(
                "`{}` has {} atoms. On the {} backend it would run at about {} steps per second, far below \
                 one step per displayed frame.",
                slow.name,
                thousands(slow.atoms),
                slow.backend,
                steps_text(slow.steps_per_s)
            ));
            if slow.name == "vortex_street" {
                ui.label(format!(
                    "Three shedding periods (177,500 steps) would take about {}; on a GPU they take under two minutes.",
                    duration_text(177_500.0 / slow.steps_per_s.max(1e-9))
                ));
            }
            ui.add_space(6.0);
            ui.horizontal_wrapped(|ui| {
                if let Some(other) = slow.instead
                    && ui.button(format!("Open {other} instead")).clicked()
                {
                    action = Some(Answer::Other(other));
                }
                if let Some(n) = slow.fewer_atoms
                    && ui.button(format!("Open with {} atoms", thousands(n))).clicked()
                {
                    action = Some(Answer::Fewer(n));
                }
                if ui.button("Open it anyway").clicked() {
                    action = Some(Answer::Anyway);
                }
                if ui.button("Cancel").clicked() {
                    action = Some(Answer::Cancel);
                }
            });
        });
    match action {
        Some(Answer::Other(name)) => app.open_example_anyway(name),
        Some(Answer::Fewer(n)) => app.open_example_with_atoms(slow.name, n),
        Some(Answer::Anyway) => app.open_example_anyway(slow.name),
        Some(Answer::Cancel) => app.gallery.confirm = None,
        None => {}
    }
}

enum Answer {
    Other(&'static str),
    Fewer(usize),
    Anyway,
    Cancel,
}

/// Makes the cards (textures, titles) once.
fn load_cards(app: &mut App, ctx: &egui::Context) {
    if !app.gallery.cards.is_empty() {
        return;
    }
    app.gallery.cards = PRESETS
        .iter()
        .map(|p| {
            let image = decode_png(p.thumbnail)
                .unwrap_or_else(|| egui::ColorImage::new([4, 3], vec![egui::Color32::DARK_GRAY; 12]));
            let (title, description) = match crate::scene::preset_scene(p.name) {
                Ok(s) => (s.name, s.description),
                Err(e) => (p.name.to_string(), e.to_string()),
            };
            let thumbnail = ctx.load_texture(format!("example {}", p.name), image, egui::TextureOptions::LINEAR);
            Card { thumbnail, title, description }
        })
        .collect();
}

/// An 8-bit RGB or RGBA PNG as an egui image (None if it is anything else).
pub fn decode_png(bytes: &[u8]) -> Option<egui::ColorImage> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().ok()?;
    let mut buf = vec![0; reader.output_buffer_size()?];
    let info = reader.next_frame(&mut buf).ok()?;
    let (w, h) = (info.width as usize, info.height as usize);
    let pixels = &buf[..info.buffer_size()];
    let rgba: Vec<u8> = match info.color_type {
        png::ColorType::Rgba => pixels.to_vec(),
        png::ColorType::Rgb => pixels.chunks_exact(3).flat_map(|c| [c[0], c[1], c[2], 255]).collect(),
        _ => return None,
    };
    Some(egui::ColorImage::from_rgba_unmultiplied([w, h], &rgba))
}

fn steps_text(s: f64) -> String {
    if s >= 10.0 { format!("{s:.0}") } else { format!("{s:.1}") }
}

fn duration_text(seconds: f64) -> String {
    if seconds >= 2.0 * 3600.0 {
        format!("{:.0} hours", seconds / 3600.0)
    } else if seconds >= 120.0 {
        format!("{:.0} minutes", seconds / 60.0)
    } else {
        format!("{seconds:.0} s")
    }
}
