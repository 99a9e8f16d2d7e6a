//! The drawing and editing tools as a state machine over pointer events in tank coordinates
//! (sigma, on the front plane): what a press, drag, release or double click does with each
//! tool, and the edits that result. Pure logic (no egui, no simulation), so it is tested
//! directly; `ui/view.rs` feeds it events and `app` carries out the [`ToolAction`]s.

use crate::scene::{MAX_POLYGON_POINTS, MAX_STROKE_POINTS};
use crate::shapes::Shape;

/// The active tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Tool {
    /// Click a shape to select it, drag to move it; Delete removes it.
    #[default]
    Select,
    Rectangle,
    Circle,
    /// A straight wall of the set thickness.
    Line,
    /// Click the corners; double click, Enter or a click on the first corner closes it.
    Polygon,
    /// Free-hand stroke (a chain of capsules).
    Brush,
    /// Removes every shape the eraser touches.
    Eraser,
    /// Pull one atom towards the cursor with a spring.
    DragAtom,
    AddAtoms,
    RemoveAtoms,
    /// Drag a rectangle: the region whose atoms are the centres of g(r).
    RdfRegion,
    /// Dye sources ([`DyeMode`]): a rake (drag a line), a region (drag a box) or atoms (click).
    Dye,
}

/// What the dye tool draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum DyeMode {
    /// A line that tags every atom crossing it, continuously (streaklines).
    #[default]
    Rake,
    /// A box whose atoms are tagged once (a blob, a timeline).
    Region,
    /// Clicked atoms, tagged, each with its trail (pathlines).
    Atoms,
}

impl DyeMode {
    pub const ALL: [DyeMode; 3] = [DyeMode::Rake, DyeMode::Region, DyeMode::Atoms];

    pub fn label(self) -> &'static str {
        match self {
            DyeMode::Rake => "rake",
            DyeMode::Region => "region",
            DyeMode::Atoms => "atoms (pathlines)",
        }
    }

    pub fn hint(self) -> &'static str {
        match self {
            DyeMode::Rake => "drag a line: every atom crossing it is dyed, continuously (streaklines)",
            DyeMode::Region => "drag a box: the atoms inside it now are dyed (a blob)",
            DyeMode::Atoms => "click atoms: each is dyed and trails its path (pathlines)",
        }
    }
}

impl Tool {
    pub const ALL: [Tool; 12] = [
        Tool::Select,
        Tool::Rectangle,
        Tool::Circle,
        Tool::Line,
        Tool::Polygon,
        Tool::Brush,
        Tool::Eraser,
        Tool::DragAtom,
        Tool::AddAtoms,
        Tool::RemoveAtoms,
        Tool::RdfRegion,
        Tool::Dye,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Tool::Select => "Select / move",
            Tool::Rectangle => "Rectangle",
            Tool::Circle => "Circle",
            Tool::Line => "Line (wall)",
            Tool::Polygon => "Polygon",
            Tool::Brush => "Free-hand brush",
            Tool::Eraser => "Eraser",
            Tool::DragAtom => "Drag an atom",
            Tool::AddAtoms => "Add atoms",
            Tool::RemoveAtoms => "Remove atoms",
            Tool::RdfRegion => "g(r) region",
            Tool::Dye => "Dye",
        }
    }

    pub fn hint(self) -> &'static str {
        match self {
            Tool::Select => "click a shape to select it, drag to move it, Delete removes it",
            Tool::Rectangle => "drag from one corner to the opposite one",
            Tool::Circle => "press at the centre and drag out the radius",
            Tool::Line => "drag from one end of the wall to the other",
            Tool::Polygon => "click the corners; double click, Enter or the first corner closes, Esc cancels",
            Tool::Brush => "drag to paint an obstacle",
            Tool::Eraser => "drag over shapes to erase them",
            Tool::DragAtom => "press on an atom and drag: a spring pulls it to the cursor",
            Tool::AddAtoms => "press and drag to pour atoms in",
            Tool::RemoveAtoms => "press and drag to remove atoms",
            Tool::RdfRegion => "drag a rectangle over the fluid: g(r) around the atoms inside it (through the depth)",
            Tool::Dye => "dye the fluid: a rake (drag a line), a region (drag a box) or atoms (click them)",
        }
    }

    /// True for tools that edit the obstacle shapes.
    pub fn edits_shapes(self) -> bool {
        matches!(
            self,
            Tool::Select | Tool::Rectangle | Tool::Circle | Tool::Line | Tool::Polygon | Tool::Brush | Tool::Eraser
        )
    }
}

/// Sizes the tools use (sigma).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolSizes {
    pub line_thickness: f64,
    pub brush_radius: f64,
    pub atom_brush_radius: f64,
}

/// A pointer event on the tank's front plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pointer {
    Press([f64; 2]),
    Drag([f64; 2]),
    Release([f64; 2]),
    DoubleClick([f64; 2]),
}

/// What a gesture asks the app to do.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolAction {
    /// A finished edit of the shapes: apply and record one undo step.
    Commit {
        before: Vec<Shape>,
        after: Vec<Shape>,
    },
    /// Shapes in the middle of a drag: apply now, record nothing yet.
    Live(Vec<Shape>),
    /// Start and end of an atom edit (the app snapshots around it for undo).
    AtomEditStart,
    AtomEditEnd,
    RemoveAtoms {
        centre: [f64; 2],
        radius: f64,
    },
    AddAtoms {
        centre: [f64; 2],
        radius: f64,
    },
    /// Grab the atom nearest to this point, then move the spring's end, then let go.
    Grab([f64; 2]),
    MoveGrab([f64; 2]),
    Release,
    /// The g(r) region was drawn between these corners (tank coordinates).
    RdfRegion([f64; 2], [f64; 2]),
    /// A dye rake was drawn from the first point to the second.
    DyeRake([f64; 2], [f64; 2]),
    /// A dye region was drawn between these corners.
    DyeRegion([f64; 2], [f64; 2]),
    /// Dye the atom nearest this point.
    DyePick([f64; 2]),
    /// A shape the tool refused, and why.
    Refused(String),
}

#[derive(Clone, Debug, PartialEq, Default)]
enum Gesture {
    #[default]
    Idle,
    Rect([f64; 2], [f64; 2]),
    Circle([f64; 2], [f64; 2]),
    Line([f64; 2], [f64; 2]),
    Stroke(Vec<[f64; 2]>),
    Move {
        before: Vec<Shape>,
        index: usize,
        from: [f64; 2],
        last: [f64; 2],
    },
    Erase {
        before: Vec<Shape>,
        now: Vec<Shape>,
    },
    Atoms,
    Drag,
}

/// The tool state: which tool, the gesture in progress, the selected shape.
#[derive(Clone, Debug, Default)]
pub struct Tools {
    pub tool: Tool,
    gesture: Gesture,
    /// Polygon corners placed so far.
    polygon: Vec<[f64; 2]>,
    pub selected: Option<usize>,
    /// What the dye tool draws.
    pub dye_mode: DyeMode,
}

/// Smallest size of a drawn shape (sigma); smaller drags are taken as slips.
const MIN_SIZE: f64 = 0.2;
/// How close (sigma) a click must be to a shape to pick it.
const PICK_TOLERANCE: f64 = 0.5;

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

fn twice_area(pts: &[[f64; 2]]) -> f64 {
    (0..pts.len())
        .map(|i| {
            let (a, b) = (pts[i], pts[(i + 1) % pts.len()]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum()
}

/// The topmost (last drawn) shape within reach of `p`.
pub fn shape_at(shapes: &[Shape], p: [f64; 2], tolerance: f64) -> Option<usize> {
    (0..shapes.len()).rev().find(|&i| shapes[i].signed_distance(p) <= tolerance)
}

impl Tools {
    /// Switches tool, dropping any gesture in progress.
    pub fn set_tool(&mut self, tool: Tool) {
        self.tool = tool;
        self.gesture = Gesture::Idle;
        self.polygon.clear();
    }

    /// True while a drag or a polygon is in progress.
    pub fn busy(&self) -> bool {
        self.gesture != Gesture::Idle || !self.polygon.is_empty()
    }

    /// The shape being drawn, for a preview outline.
    pub fn preview(&self, sizes: &ToolSizes) -> Option<Shape> {
        match &self.gesture {
            Gesture::Rect(a, b) => Some(rect(*a, *b)),
            Gesture::Circle(c, e) => Some(Shape::Circle { centre: *c, radius: dist(*c, *e).max(0.01) }),
            Gesture::Line(a, b) if self.tool == Tool::Dye => Some(Shape::Segment { a: *a, b: *b, thickness: 0.0 }),
            Gesture::Line(a, b) => Some(Shape::Segment { a: *a, b: *b, thickness: sizes.line_thickness }),
            Gesture::Stroke(pts) if pts.len() >= 2 => {
                Some(Shape::Stroke { points: pts.clone(), radius: sizes.brush_radius })
            }
            _ => None,
        }
    }

    /// Corners of the polygon in progress.
    pub fn polygon_points(&self) -> &[[f64; 2]] {
        &self.polygon
    }

    /// Feeds one pointer event; returns what to do.
    pub fn pointer(&mut self, ev: Pointer, shapes: &[Shape], sizes: &ToolSizes) -> Vec<ToolAction> {
        use Pointer::*;
        let mut out = Vec::new();
        match (self.tool, ev) {
            (Tool::Polygon, Press(p)) => {
                if self.polygon.len() >= 3 && dist(p, self.polygon[0]) < 0.6 {
                    out.extend(self.close_polygon(shapes));
                } else if self.polygon.last().is_none_or(|&q| dist(p, q) > 0.05) {
                    self.polygon.push(p);
                }
            }
            (Tool::Polygon, DoubleClick(_)) => out.extend(self.close_polygon(shapes)),
            (_, DoubleClick(_)) => {}
            (Tool::Select, Press(p)) => {
                self.selected = shape_at(shapes, p, PICK_TOLERANCE);
                if let Some(index) = self.selected {
                    self.gesture = Gesture::Move { before: shapes.to_vec(), index, from: p, last: p };
                }
            }
            (Tool::Rectangle | Tool::RdfRegion, Press(p)) => self.gesture = Gesture::Rect(p, p),
            (Tool::Dye, Press(p)) => match self.dye_mode {
                DyeMode::Rake => self.gesture = Gesture::Line(p, p),
                DyeMode::Region => self.gesture = Gesture::Rect(p, p),
                DyeMode::Atoms => out.push(ToolAction::DyePick(p)),
            },
            (Tool::Circle, Press(p)) => self.gesture = Gesture::Circle(p, p),
            (Tool::Line, Press(p)) => self.gesture = Gesture::Line(p, p),
            (Tool::Brush, Press(p)) => self.gesture = Gesture::Stroke(vec![p]),
            (Tool::Eraser, Press(p)) => {
                self.gesture = Gesture::Erase { before: shapes.to_vec(), now: shapes.to_vec() };
                out.extend(self.erase(p, sizes));
            }
            (Tool::AddAtoms | Tool::RemoveAtoms, Press(p)) => {
                self.gesture = Gesture::Atoms;
                out.push(ToolAction::AtomEditStart);
                out.push(self.atom_brush(p, sizes));
            }
            (Tool::DragAtom, Press(p)) => {
                self.gesture = Gesture::Drag;
                out.push(ToolAction::Grab(p));
            }
            (_, Drag(p)) => out.extend(self.drag(p, sizes)),
            (_, Release(p)) => {
                out.extend(self.drag(p, sizes));
                out.extend(self.finish(shapes, sizes));
            }
        }
        out
    }

    /// Enter closes a polygon; Escape cancels any gesture.
    pub fn key_enter(&mut self, shapes: &[Shape]) -> Vec<ToolAction> {
        self.close_polygon(shapes)
    }

    pub fn key_escape(&mut self) -> Vec<ToolAction> {
        self.polygon.clear();
        let out = match std::mem::take(&mut self.gesture) {
            Gesture::Move { before, .. } | Gesture::Erase { before, .. } => vec![ToolAction::Live(before)],
            Gesture::Drag => vec![ToolAction::Release],
            Gesture::Atoms => vec![ToolAction::AtomEditEnd],
            _ => vec![],
        };
        self.selected = None;
        out
    }

    /// Delete: removes the selected shape.
    pub fn delete_selected(&mut self, shapes: &[Shape]) -> Vec<ToolAction> {
        match self.selected.take() {
            Some(i) if i < shapes.len() => {
                let mut after = shapes.to_vec();
                after.remove(i);
                vec![ToolAction::Commit { before: shapes.to_vec(), after }]
            }
            _ => vec![],
        }
    }

    fn close_polygon(&mut self, shapes: &[Shape]) -> Vec<ToolAction> {
        let pts = std::mem::take(&mut self.polygon);
        if pts.is_empty() {
            return vec![];
        }
        if pts.len() < 3 || twice_area(&pts).abs() < 2.0 * MIN_SIZE * MIN_SIZE {
            return vec![ToolAction::Refused("a polygon needs at least three corners enclosing an area".into())];
        }
        if pts.len() > MAX_POLYGON_POINTS {
            return vec![ToolAction::Refused(format!("a polygon may have at most {MAX_POLYGON_POINTS} corners"))];
        }
        add(shapes, Shape::Polygon { points: pts })
    }

    fn atom_brush(&self, p: [f64; 2], sizes: &ToolSizes) -> ToolAction {
        let radius = sizes.atom_brush_radius;
        if self.tool == Tool::AddAtoms {
            ToolAction::AddAtoms { centre: p, radius }
        } else {
            ToolAction::RemoveAtoms { centre: p, radius }
        }
    }

    fn erase(&mut self, p: [f64; 2], sizes: &ToolSizes) -> Vec<ToolAction> {
        let Gesture::Erase { now, .. } = &mut self.gesture else { return vec![] };
        let before = now.len();
        now.retain(|s| s.signed_distance(p) > sizes.atom_brush_radius.min(2.0));
        if now.len() != before { vec![ToolAction::Live(now.clone())] } else { vec![] }
    }

    fn drag(&mut self, p: [f64; 2], sizes: &ToolSizes) -> Vec<ToolAction> {
        match &mut self.gesture {
            Gesture::Rect(_, b) | Gesture::Circle(_, b) | Gesture::Line(_, b) => *b = p,
            Gesture::Stroke(pts) => {
                // Keep points about half a radius apart: smooth enough, and few.
                if pts.last().is_none_or(|&q| dist(p, q) >= 0.5 * sizes.brush_radius) && pts.len() < MAX_STROKE_POINTS {
                    pts.push(p);
                }
            }
            Gesture::Move { before, index, from, last } => {
                if dist(p, *last) > 1e-6 {
                    *last = p;
                    let delta = [p[0] - from[0], p[1] - from[1]];
                    let mut now = before.clone();
                    now[*index] = before[*index].translated(delta);
                    return vec![ToolAction::Live(now)];
                }
            }
            Gesture::Erase { .. } => return self.erase(p, sizes),
            Gesture::Atoms => return vec![self.atom_brush(p, sizes)],
            Gesture::Drag => return vec![ToolAction::MoveGrab(p)],
            Gesture::Idle => {}
        }
        vec![]
    }

    fn finish(&mut self, shapes: &[Shape], sizes: &ToolSizes) -> Vec<ToolAction> {
        match std::mem::take(&mut self.gesture) {
            Gesture::Rect(a, b) => {
                if (a[0] - b[0]).abs() < MIN_SIZE || (a[1] - b[1]).abs() < MIN_SIZE {
                    return vec![];
                }
                if self.tool == Tool::RdfRegion {
                    return vec![ToolAction::RdfRegion(a, b)];
                }
                if self.tool == Tool::Dye {
                    return vec![ToolAction::DyeRegion(a, b)];
                }
                add(shapes, rect(a, b))
            }
            Gesture::Circle(c, e) => {
                let radius = dist(c, e);
                if radius < MIN_SIZE {
                    return vec![];
                }
                add(shapes, Shape::Circle { centre: c, radius })
            }
            Gesture::Line(a, b) => {
                if dist(a, b) < MIN_SIZE {
                    return vec![];
                }
                if self.tool == Tool::Dye {
                    return vec![ToolAction::DyeRake(a, b)];
                }
                add(shapes, Shape::Segment { a, b, thickness: sizes.line_thickness })
            }
            Gesture::Stroke(pts) => add(shapes, Shape::Stroke { points: pts, radius: sizes.brush_radius }),
            Gesture::Move { before, index, from, last } => {
                let delta = [last[0] - from[0], last[1] - from[1]];
                let mut after = before.clone();
                after[index] = before[index].translated(delta);
                vec![ToolAction::Commit { before, after }]
            }
            Gesture::Erase { before, now } => vec![ToolAction::Commit { before, after: now }],
            Gesture::Atoms => vec![ToolAction::AtomEditEnd],
            Gesture::Drag => vec![ToolAction::Release],
            Gesture::Idle => vec![],
        }
    }
}

fn rect(a: [f64; 2], b: [f64; 2]) -> Shape {
    Shape::Rectangle {
        centre: [0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])],
        half_size: [0.5 * (a[0] - b[0]).abs().max(0.005), 0.5 * (a[1] - b[1]).abs().max(0.005)],
        angle_deg: 0.0,
    }
}

fn add(shapes: &[Shape], s: Shape) -> Vec<ToolAction> {
    if shapes.len() >= crate::scene::MAX_OBSTACLES {
        return vec![ToolAction::Refused(format!(
            "a scene may hold at most {} obstacles: erase some first",
            crate::scene::MAX_OBSTACLES
        ))];
    }
    let mut after = shapes.to_vec();
    after.push(s);
    vec![ToolAction::Commit { before: shapes.to_vec(), after }]
}

#[cfg(test)]
mod tests;
