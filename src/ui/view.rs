//! The 3D view: the renderer through an egui-wgpu paint callback, the legend and scale bar,
//! outlines of the shape being drawn and of the selection, the brush cursor, the dye rakes
//! (and regions while the dye tool is on) and the picked atoms' pathlines; pointer input
//! goes to the tools (left button) and the camera (right button drag, wheel).

use egui::{Color32, Pos2, Stroke};

use crate::app::App;
use crate::app::tools::{Pointer, Tool};
use crate::flow::probe::ProbeLine;
use crate::render::CameraMode;
use crate::render::view::ViewCallback;
use crate::shapes::Shape;

/// Where tank point `p` appears in the app's view last frame, in egui points (for tests).
pub fn tank_to_point(app: &App, p: [f64; 2]) -> Pos2 {
    Frame { rect: app.view_rect, ppp: app.view_ppp, size: app.view_size }.to_screen(app, p)
}

/// The tank point under egui point `pos` in the app's view last frame, as the tools get it
/// (for tests); the view's centre when it maps to no tank point.
pub fn point_to_tank(app: &App, pos: Pos2) -> [f64; 2] {
    let rect = app.view_rect;
    // The same pixels per point as the view's own frame: a ratio of the rounded pixel size
    // to the rect's width is off by up to half a pixel, enough to pick a different atom of a
    // lattice column whose atoms lie on the same line of sight.
    let f = Frame { rect, ppp: app.view_ppp, size: app.view_size };
    f.to_tank(app, pos).or_else(|| f.to_tank(app, rect.center())).unwrap_or([0.0; 2])
}

/// Converts between egui points in `rect` and tank coordinates through the app's camera.
struct Frame {
    rect: egui::Rect,
    ppp: f32,
    size: [u32; 2],
}

impl Frame {
    fn to_tank(&self, app: &App, pos: Pos2) -> Option<[f64; 2]> {
        let px = [(pos.x - self.rect.left()) * self.ppp, (pos.y - self.rect.top()) * self.ppp];
        app.camera.screen_to_tank(px, self.size).map(|p| [p[0] as f64, p[1] as f64])
    }

    fn to_screen(&self, app: &App, p: [f64; 2]) -> Pos2 {
        let s = app.camera.tank_to_screen([p[0] as f32, p[1] as f32], self.size);
        Pos2::new(self.rect.left() + s[0] / self.ppp, self.rect.top() + s[1] / self.ppp)
    }

    /// Points per sigma at the drawing plane.
    fn scale(&self, app: &App) -> f32 {
        1.0 / (app.camera.sigma_per_pixel(self.size) * self.ppp)
    }
}

/// Outline points of a shape (closed for areas), in tank coordinates, and a stroke width in
/// sigma for capsules (0 for areas).
fn outline(shape: &Shape) -> (Vec<[f64; 2]>, f64) {
    match shape {
        Shape::Circle { centre, radius } => (
            (0..48)
                .map(|i| {
                    let a = std::f64::consts::TAU * i as f64 / 48.0;
                    [centre[0] + radius * a.cos(), centre[1] + radius * a.sin()]
                })
                .collect(),
            0.0,
        ),
        Shape::Rectangle { centre, half_size, angle_deg } => {
            let (s, c) = angle_deg.to_radians().sin_cos();
            let corners = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];
            (
                corners
                    .iter()
                    .map(|k| {
                        let (x, y) = (k[0] * half_size[0], k[1] * half_size[1]);
                        [centre[0] + c * x - s * y, centre[1] + s * x + c * y]
                    })
                    .collect(),
                0.0,
            )
        }
        Shape::Segment { a, b, thickness } => (vec![*a, *b], *thickness),
        Shape::Polygon { points } => (points.clone(), 0.0),
        Shape::Stroke { points, radius } => (points.clone(), 2.0 * radius),
    }
}

fn draw_outline(painter: &egui::Painter, f: &Frame, app: &App, shape: &Shape, colour: Color32) {
    let (pts, width) = outline(shape);
    let pts: Vec<Pos2> = pts.iter().map(|&p| f.to_screen(app, p)).collect();
    if width > 0.0 {
        let w = (width as f32 * f.scale(app)).max(1.0);
        painter.add(egui::Shape::line(pts, Stroke::new(w, colour.gamma_multiply(0.5))));
    } else {
        painter.add(egui::Shape::closed_line(pts, Stroke::new(2.0, colour)));
    }
}

/// While the probe tool is on, a primary drag draws the probe line (press: one end, release:
/// the other); a line too short to measure along is refused with a message. True when the
/// input was the probe's.
fn probe_input(app: &mut App, ui: &egui::Ui, resp: &egui::Response, f: &Frame) -> bool {
    if !app.probe.drawing {
        return false;
    }
    let pointer = |pos: Option<Pos2>| pos.and_then(|p| f.to_tank(app, p));
    if resp.dragged_by(egui::PointerButton::Primary)
        && let (Some(a), Some(b)) =
            (pointer(ui.input(|i| i.pointer.press_origin())), pointer(resp.interact_pointer_pos()))
    {
        app.probe.line = Some(ProbeLine { a, b });
    }
    if resp.drag_stopped_by(egui::PointerButton::Primary) {
        app.probe.drawing = false;
        if let Some(line) = app.probe.line
            && let Err(e) = line.validate()
        {
            app.probe.line = None;
            app.notify(e.to_string(), true);
        }
    }
    resp.dragged_by(egui::PointerButton::Primary) || resp.drag_stopped_by(egui::PointerButton::Primary)
}

pub fn view_ui(app: &mut App, ui: &mut egui::Ui) {
    let rect = ui.available_rect_before_wrap();
    let resp = ui.allocate_rect(rect, egui::Sense::click_and_drag());
    let ppp = ui.ctx().pixels_per_point();
    let size = [((rect.width() * ppp).round() as u32).max(1), ((rect.height() * ppp).round() as u32).max(1)];
    let screen = ui.ctx().content_rect();
    app.window_size_px = [(screen.width() * ppp).round() as u32, (screen.height() * ppp).round() as u32];
    app.view_rect = rect;
    app.view_ppp = ppp;
    if size != app.view_size {
        app.view_resized(size);
    }
    app.refit_for_overlay();
    let f = Frame { rect, ppp, size };
    handle_input(app, ui, &resp, &f);

    let painter = ui.painter_at(rect);
    let (positions, scene, external) = app.view_data();
    let flow = app.flow_geometry();
    let legend = flow.1.as_ref().and_then(|m| m.legend);
    let callback =
        ViewCallback { camera: app.camera, settings: app.settings.view, size, positions, scene, external, flow };
    painter.add(egui_wgpu::Callback::new_paint_callback(rect, callback));
    let species: Vec<String> = app.params.species.iter().map(|s| s.name.clone()).collect();
    let b = app.sim_box();
    let placed = crate::render::overlay::paint(
        &painter,
        rect,
        &app.settings.view,
        &app.camera,
        size,
        &species,
        &app.dye.legend(),
        legend.as_ref(),
        &b,
    );
    app.overlay = Some(placed);
    draw_dye(&painter, &f, app);

    if let Some(line) = app.probe.line {
        let (a, b) = (f.to_screen(app, line.a), f.to_screen(app, line.b));
        let colour = Color32::from_rgb(255, 220, 90);
        painter.line_segment([a, b], Stroke::new(2.0, colour));
        painter.circle_filled(a, 3.5, colour);
        painter.circle_filled(b, 3.5, colour);
    }
    let sizes = app.tool_sizes();
    if let Some(t) = app.params.tunnel {
        // The inflow zone: the slab x in [lo, lo + zone) at the upstream end.
        let b = app.sim_box();
        let (x0, x1) = (b.lo[0], b.lo[0] + t.zone);
        let (a, c) = (f.to_screen(app, [x0, b.lo[1]]), f.to_screen(app, [x1, b.hi[1]]));
        let colour = Color32::from_rgb(120, 200, 255);
        let zone = egui::Rect::from_two_pos(a, c);
        painter.rect_filled(zone, 0.0, colour.gamma_multiply(0.25));
        painter.rect_stroke(zone, 0.0, Stroke::new(1.5, colour), egui::StrokeKind::Middle);
        // The label just above the tank, clear of the atoms.
        painter.text(
            egui::pos2(zone.left(), zone.top() - 3.0),
            egui::Align2::LEFT_BOTTOM,
            format!("inflow zone: U = {:.2} σ/τ along +x", t.speed),
            egui::FontId::proportional(13.0),
            colour,
        );
    }
    if let (true, Some(r)) = (app.rdf_use_region, app.rdf_region) {
        let corners = [[r.lo[0], r.lo[1]], [r.hi[0], r.lo[1]], [r.hi[0], r.hi[1]], [r.lo[0], r.hi[1]]];
        let pts: Vec<Pos2> = corners.iter().map(|&p| f.to_screen(app, p)).collect();
        let colour = Color32::from_rgb(140, 240, 140);
        painter.add(egui::Shape::dashed_line(
            &[pts[0], pts[1], pts[2], pts[3], pts[0]],
            Stroke::new(1.5, colour),
            6.0,
            4.0,
        ));
        painter.text(
            pts[3] + egui::vec2(4.0, 2.0),
            egui::Align2::LEFT_TOP,
            "g(r)",
            egui::FontId::proportional(12.0),
            colour,
        );
    }
    if let Some(s) = app.tools.preview(&sizes) {
        draw_outline(&painter, &f, app, &s, Color32::from_rgb(120, 220, 255));
    }
    let poly: Vec<Pos2> = app.tools.polygon_points().iter().map(|&p| f.to_screen(app, p)).collect();
    if !poly.is_empty() {
        let mut line = poly.clone();
        if let Some(h) = resp.hover_pos() {
            line.push(h);
        }
        painter.add(egui::Shape::line(line, Stroke::new(2.0, Color32::from_rgb(120, 220, 255))));
        for p in poly {
            painter.circle_filled(p, 3.0, Color32::from_rgb(120, 220, 255));
        }
    }
    if let Some(i) = app.tools.selected
        && let Some(s) = app.shapes.get(i)
    {
        draw_outline(&painter, &f, app, s, Color32::from_rgb(255, 210, 80));
    }
    if matches!(app.tools.tool, Tool::AddAtoms | Tool::RemoveAtoms | Tool::Eraser)
        && let Some(h) = resp.hover_pos()
    {
        let r = sizes.atom_brush_radius as f32 * f.scale(app);
        painter.circle_stroke(h, r, Stroke::new(1.5, Color32::from_white_alpha(160)));
    }
    if let (Some(t), Some(frame)) = (&app.params.tether, &app.frame)
        && let Some(a) = frame.get(t.atom as usize)
    {
        let from = f.to_screen(app, [a[0] as f64, a[1] as f64]);
        let to = f.to_screen(app, t.target);
        painter.line_segment([from, to], Stroke::new(2.0, Color32::from_rgb(255, 160, 60)));
        painter.circle_stroke(from, 6.0, Stroke::new(2.0, Color32::from_rgb(255, 160, 60)));
    }
    if let Some(r) = &app.capture.recording {
        painter.circle_filled(rect.right_top() + egui::vec2(-18.0, 18.0), 7.0, Color32::from_rgb(230, 40, 40));
        let _ = r;
    }
    if app.ui_hidden && resp.hovered() {
        painter.text(
            rect.left_bottom() + egui::vec2(8.0, -8.0),
            egui::Align2::LEFT_BOTTOM,
            "H shows the UI",
            egui::FontId::proportional(11.0),
            Color32::from_white_alpha(90),
        );
    }
}

/// The dye rakes as lines in their colours, the regions as dashed boxes while the dye tool is
/// on, and each picked atom's pathline (broken where it wraps across a periodic edge).
fn draw_dye(painter: &egui::Painter, f: &Frame, app: &App) {
    use crate::app::dye::DyeKind;
    let colour = |n: u16| {
        let c = crate::render::colour::dye_colour(n);
        Color32::from(egui::Rgba::from_rgb(c[0], c[1], c[2]))
    };
    for e in &app.dye.sources {
        match e.kind {
            DyeKind::Rake { a, b } => {
                let (a, b) = (f.to_screen(app, a), f.to_screen(app, b));
                painter.line_segment([a, b], Stroke::new(3.0, colour(e.number)));
                painter.line_segment([a, b], Stroke::new(1.0, Color32::from_white_alpha(200)));
            }
            DyeKind::Region { min, max } if app.tools.tool == Tool::Dye => {
                let corners = [min, [max[0], min[1]], max, [min[0], max[1]], min];
                let pts: Vec<Pos2> = corners.iter().map(|&p| f.to_screen(app, p)).collect();
                painter.add(egui::Shape::dashed_line(&pts, Stroke::new(1.5, colour(e.number)), 6.0, 4.0));
            }
            _ => {}
        }
    }
    let b = app.sim_box();
    let half = b.length().map(|l| 0.5 * l);
    for (n, trail) in &app.dye.trails {
        let stroke = Stroke::new(2.0, colour(*n));
        let mut line: Vec<Pos2> = Vec::new();
        let mut last: Option<[f64; 2]> = None;
        for &(_, p) in &trail.points {
            if last.is_some_and(|q| (0..2).any(|k| (p[k] - q[k]).abs() > half[k])) {
                painter.add(egui::Shape::line(std::mem::take(&mut line), stroke));
            }
            line.push(f.to_screen(app, p));
            last = Some(p);
        }
        painter.add(egui::Shape::line(line, stroke));
    }
}

/// How close (sigma) to the piston a left-button drag must start to grab it.
pub const PISTON_GRAB: f64 = 0.75;

/// Grabbing the piston (a left drag starting at its rim, whatever the tool): while held it
/// follows the cursor's height (the backend sets its velocity from the motion); released, it
/// is free again. Returns true while the pointer belongs to the piston.
fn piston_input(app: &mut App, ui: &egui::Ui, resp: &egui::Response, f: &Frame) -> bool {
    let primary = egui::PointerButton::Primary;
    let height = app.params.piston.and(app.last_telemetry.as_ref().and_then(|t| t.piston)).map(|p| p.height);
    let at = |pos: Option<Pos2>| pos.and_then(|p| f.to_tank(app, p));
    if !app.piston_drag
        && resp.drag_started_by(primary)
        && let (Some(h), Some(p)) = (height, at(ui.input(|i| i.pointer.press_origin())))
        && (p[1] - h).abs() < PISTON_GRAB
    {
        app.drag_piston(Some(p[1]));
        return true;
    }
    if !app.piston_drag {
        return false;
    }
    let now = at(resp.interact_pointer_pos());
    if resp.drag_stopped_by(primary) || !ui.input(|i| i.pointer.primary_down()) || height.is_none() {
        app.drag_piston(None);
    } else if resp.dragged_by(primary)
        && let Some(p) = now
    {
        app.drag_piston(Some(p[1]));
    }
    true
}

fn handle_input(app: &mut App, ui: &egui::Ui, resp: &egui::Response, f: &Frame) {
    // Camera: right-button drag rotates (orbit) or pans (front); the wheel zooms.
    if resp.dragged_by(egui::PointerButton::Secondary) {
        let d = resp.drag_delta() * f.ppp;
        match app.camera.mode {
            CameraMode::Orbit => app.camera.orbit(d.x, d.y),
            CameraMode::Front => {
                let s = app.camera.sigma_per_pixel(f.size);
                app.camera.target[0] -= d.x * s;
                app.camera.target[1] += d.y * s;
            }
        }
    }
    if resp.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            app.camera.zoom_by((-scroll * 0.002).exp());
        }
    }
    if piston_input(app, ui, resp, f) || probe_input(app, ui, resp, f) {
        return;
    }
    let sizes = app.tool_sizes();
    let mut events = Vec::new();
    let pointer = |pos: Option<Pos2>| pos.and_then(|p| f.to_tank(app, p));
    if resp.drag_started_by(egui::PointerButton::Primary)
        && let Some(p) = pointer(ui.input(|i| i.pointer.press_origin()))
    {
        events.push(Pointer::Press(p));
    }
    if resp.dragged_by(egui::PointerButton::Primary)
        && let Some(p) = pointer(resp.interact_pointer_pos())
    {
        events.push(Pointer::Drag(p));
    }
    if resp.drag_stopped_by(egui::PointerButton::Primary)
        && let Some(p) = pointer(resp.interact_pointer_pos().or(resp.hover_pos()))
    {
        events.push(Pointer::Release(p));
    }
    if resp.clicked_by(egui::PointerButton::Primary)
        && let Some(p) = pointer(resp.interact_pointer_pos())
    {
        events.push(Pointer::Press(p));
        if app.tools.tool != Tool::Polygon {
            events.push(Pointer::Release(p));
        }
    }
    if resp.double_clicked()
        && let Some(p) = pointer(resp.interact_pointer_pos())
    {
        events.push(Pointer::DoubleClick(p));
    }
    for ev in events {
        let shapes = app.shapes.clone();
        let actions = app.tools.pointer(ev, &shapes, &sizes);
        app.tool_actions(actions);
    }
}
