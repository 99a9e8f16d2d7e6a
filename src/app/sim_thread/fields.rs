//! Flow fields on the simulation thread: turning sampling on, off or to new settings
//! (`set_fields`, applied again to every new backend), and sending the newest finished window
//! to the UI after each chunk (`send_fields`). Windows are finished by the backend (on CUDA
//! the sums stay on the device until a window fills), so at most one grid per window crosses.

use super::Worker;
use crate::app::commands::SimReport;
use crate::flow::FieldSpec;

impl Worker {
    /// Samples fields with `spec` from now on (None: stops). A spec the box cannot honour is
    /// reported and leaves sampling off.
    pub(super) fn set_fields(&mut self, spec: Option<FieldSpec>) {
        self.fields = spec;
        self.apply_fields();
    }

    /// Gives the backend the current field settings (after a load or a backend switch too).
    pub(super) fn apply_fields(&mut self) {
        let Some(b) = self.backend.as_mut() else { return };
        if let Err(e) = b.set_fields(self.fields.clone()) {
            self.fields = None;
            let _ = b.set_fields(None);
            self.report(SimReport::Error(format!("the flow fields could not start: {e}")));
            self.report(SimReport::FieldsOff);
        }
    }

    /// Sends the newest window finished since the last call, if any.
    pub(super) fn send_fields(&mut self) {
        if self.fields.is_none() {
            return;
        }
        let Some(b) = self.backend.as_mut() else { return };
        match b.take_fields(false) {
            Ok(mut windows) => {
                if let Some(last) = windows.pop() {
                    self.report(SimReport::Fields(Box::new(last)));
                }
            }
            Err(e) => self.report(SimReport::Error(format!("reading the flow fields failed: {e}"))),
        }
    }
}
