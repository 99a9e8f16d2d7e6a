//! The tools' state machine, event by event.

use super::*;

const SIZES: ToolSizes = ToolSizes { line_thickness: 1.0, brush_radius: 0.5, atom_brush_radius: 2.0 };

fn drag(t: &mut Tools, shapes: &[Shape], a: [f64; 2], b: [f64; 2]) -> Vec<ToolAction> {
    let mut out = t.pointer(Pointer::Press(a), shapes, &SIZES);
    out.extend(t.pointer(Pointer::Drag([(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0]), shapes, &SIZES));
    out.extend(t.pointer(Pointer::Release(b), shapes, &SIZES));
    out
}

fn committed(actions: &[ToolAction]) -> Vec<Shape> {
    match actions.last() {
        Some(ToolAction::Commit { after, .. }) => after.clone(),
        other => panic!("expected a commit, got {other:?}"),
    }
}

#[test]
fn drawing_each_shape() {
    let mut t = Tools::default();
    t.set_tool(Tool::Rectangle);
    let s = committed(&drag(&mut t, &[], [1.0, 1.0], [5.0, 3.0]));
    assert_eq!(s, vec![Shape::Rectangle { centre: [3.0, 2.0], half_size: [2.0, 1.0], angle_deg: 0.0 }]);
    t.set_tool(Tool::Circle);
    let s = committed(&drag(&mut t, &s, [10.0, 10.0], [13.0, 14.0]));
    assert_eq!(s[1], Shape::Circle { centre: [10.0, 10.0], radius: 5.0 });
    t.set_tool(Tool::Line);
    let s = committed(&drag(&mut t, &s, [0.0, 0.0], [0.0, 4.0]));
    assert!(matches!(s[2], Shape::Segment { thickness: 1.0, .. }));
    t.set_tool(Tool::Brush);
    let s = committed(&drag(&mut t, &s, [20.0, 0.0], [24.0, 0.0]));
    assert!(matches!(&s[3], Shape::Stroke { points, radius: 0.5 } if points.len() == 3));
    // A slip (tiny drag) adds nothing.
    t.set_tool(Tool::Rectangle);
    assert!(drag(&mut t, &s, [1.0, 1.0], [1.05, 1.05]).is_empty());
}

#[test]
fn polygon_closes_on_double_click_or_first_corner_and_refuses_no_area() {
    let mut t = Tools::default();
    t.set_tool(Tool::Polygon);
    for p in [[0.0, 0.0], [4.0, 0.0], [4.0, 4.0]] {
        assert!(t.pointer(Pointer::Press(p), &[], &SIZES).is_empty());
    }
    let s = committed(&t.pointer(Pointer::Press([0.1, 0.1]), &[], &SIZES));
    assert!(matches!(&s[0], Shape::Polygon { points } if points.len() == 3));
    for p in [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]] {
        t.pointer(Pointer::Press(p), &[], &SIZES);
    }
    let out = t.pointer(Pointer::DoubleClick([2.0, 2.0]), &[], &SIZES);
    assert!(matches!(&out[0], ToolAction::Refused(m) if m.contains("area")));
    assert!(!t.busy());
}

#[test]
fn select_moves_and_delete_removes() {
    let shapes = vec![Shape::Circle { centre: [5.0, 5.0], radius: 1.0 }];
    let mut t = Tools::default();
    let out = drag(&mut t, &shapes, [5.0, 5.0], [8.0, 9.0]);
    assert!(out.iter().any(|a| matches!(a, ToolAction::Live(_))));
    let moved = committed(&out);
    assert_eq!(moved, vec![Shape::Circle { centre: [8.0, 9.0], radius: 1.0 }]);
    assert_eq!(t.selected, Some(0));
    assert_eq!(committed(&t.delete_selected(&moved)), vec![]);
    // Clicking empty space selects nothing and moves nothing.
    assert!(drag(&mut t, &moved, [30.0, 30.0], [31.0, 31.0]).is_empty());
}

#[test]
fn the_rdf_region_tool_gives_its_corners_and_no_shape() {
    let mut t = Tools::default();
    t.set_tool(Tool::RdfRegion);
    let out = drag(&mut t, &[], [1.0, 2.0], [5.0, 6.0]);
    assert_eq!(out, vec![ToolAction::RdfRegion([1.0, 2.0], [5.0, 6.0])]);
}

#[test]
fn the_dye_tool_draws_rakes_regions_and_picks_atoms() {
    let mut t = Tools::default();
    t.set_tool(Tool::Dye);
    assert_eq!(drag(&mut t, &[], [1.0, 2.0], [1.0, 8.0]), vec![ToolAction::DyeRake([1.0, 2.0], [1.0, 8.0])]);
    // A slip draws no rake.
    assert!(drag(&mut t, &[], [1.0, 2.0], [1.05, 2.0]).is_empty());
    t.dye_mode = DyeMode::Region;
    assert_eq!(drag(&mut t, &[], [1.0, 2.0], [5.0, 6.0]), vec![ToolAction::DyeRegion([1.0, 2.0], [5.0, 6.0])]);
    t.dye_mode = DyeMode::Atoms;
    assert_eq!(t.pointer(Pointer::Press([3.0, 4.0]), &[], &SIZES), vec![ToolAction::DyePick([3.0, 4.0])]);
    assert!(t.pointer(Pointer::Release([3.0, 4.0]), &[], &SIZES).is_empty());
    assert!(!t.busy());
}

#[test]
fn eraser_and_atom_tools() {
    let shapes =
        vec![Shape::Circle { centre: [5.0, 5.0], radius: 1.0 }, Shape::Circle { centre: [20.0, 5.0], radius: 1.0 }];
    let mut t = Tools::default();
    t.set_tool(Tool::Eraser);
    assert_eq!(committed(&drag(&mut t, &shapes, [5.0, 7.0], [5.0, 8.0])), vec![shapes[1].clone()]);
    t.set_tool(Tool::RemoveAtoms);
    let out = drag(&mut t, &shapes, [1.0, 1.0], [3.0, 1.0]);
    assert_eq!(out.first(), Some(&ToolAction::AtomEditStart));
    assert_eq!(out.last(), Some(&ToolAction::AtomEditEnd));
    assert!(out.contains(&ToolAction::RemoveAtoms { centre: [3.0, 1.0], radius: 2.0 }));
    t.set_tool(Tool::DragAtom);
    let out = drag(&mut t, &shapes, [1.0, 1.0], [3.0, 1.0]);
    assert_eq!(
        out,
        vec![
            ToolAction::Grab([1.0, 1.0]),
            ToolAction::MoveGrab([2.0, 1.0]),
            ToolAction::MoveGrab([3.0, 1.0]),
            ToolAction::Release
        ]
    );
}
