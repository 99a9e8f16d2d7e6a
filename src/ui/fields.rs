//! Number fields that take typed text and refuse bad values with a message naming the field
//! and the allowed range (the value is kept), instead of silently clamping. The text being
//! typed lives in egui's memory until Enter or focus loss commits it.

use std::ops::RangeInclusive;

#[derive(Clone, Default)]
struct FieldState {
    text: String,
    editing: bool,
    error: Option<String>,
}

/// A labelled number field. Returns the new value when a valid one was committed.
pub fn number_field(
    ui: &mut egui::Ui,
    label: &str,
    current: f64,
    range: RangeInclusive<f64>,
    unit: &str,
    decimals: usize,
) -> Option<f64> {
    let id = ui.make_persistent_id(("number field", label));
    let mut state: FieldState = ui.data_mut(|d| d.get_temp(id)).unwrap_or_default();
    let mut committed = None;
    ui.horizontal(|ui| {
        let label_resp = ui.label(label);
        if !state.editing {
            state.text = format_value(current, decimals);
        }
        let edit = egui::TextEdit::singleline(&mut state.text).desired_width(80.0).id(id.with("edit"));
        let resp = ui.add(edit).labelled_by(label_resp.id);
        if !unit.is_empty() {
            ui.label(unit);
        }
        if resp.gained_focus() || resp.changed() {
            state.editing = true;
        }
        let enter = resp.lost_focus() || (resp.has_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)));
        if enter && state.editing {
            state.editing = false;
            match parse(&state.text, &range) {
                Ok(v) => {
                    state.error = None;
                    if v != current {
                        committed = Some(v);
                    }
                }
                Err(()) => {
                    state.error = Some(format!(
                        "{label}: \"{}\" is not allowed; enter a number from {} to {}{}",
                        state.text.trim(),
                        format_value(*range.start(), decimals),
                        format_value(*range.end(), decimals),
                        if unit.is_empty() { String::new() } else { format!(" {unit}") }
                    ));
                }
            }
        }
    });
    if let Some(e) = &state.error {
        ui.colored_label(egui::Color32::from_rgb(255, 120, 110), e);
    }
    ui.data_mut(|d| d.insert_temp(id, state));
    committed
}

/// A whole-number field (same behaviour).
pub fn count_field(
    ui: &mut egui::Ui,
    label: &str,
    current: u64,
    range: RangeInclusive<u64>,
    unit: &str,
) -> Option<u64> {
    let r = (*range.start() as f64)..=(*range.end() as f64);
    number_field(ui, label, current as f64, r, unit, 0).and_then(|v| (v.fract() == 0.0).then_some(v as u64))
}

fn parse(text: &str, range: &RangeInclusive<f64>) -> Result<f64, ()> {
    let v: f64 = text.trim().replace('_', "").parse().map_err(|_| ())?;
    if v.is_finite() && range.contains(&v) { Ok(v) } else { Err(()) }
}

fn format_value(v: f64, decimals: usize) -> String {
    if decimals == 0 {
        format!("{}", v.round() as i64)
    } else if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e7) {
        format!("{v:.3e}")
    } else {
        let s = format!("{v:.decimals$}");
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_and_formatting() {
        assert_eq!(parse(" 12.5 ", &(0.0..=20.0)), Ok(12.5));
        assert_eq!(parse("1_000", &(0.0..=2000.0)), Ok(1000.0));
        assert!(parse("abc", &(0.0..=20.0)).is_err());
        assert!(parse("25", &(0.0..=20.0)).is_err());
        assert!(parse("NaN", &(0.0..=20.0)).is_err());
        assert_eq!(format_value(90.0, 1), "90");
        assert_eq!(format_value(10.78, 2), "10.78");
        assert_eq!(format_value(1048576.0, 0), "1048576");
    }
}
