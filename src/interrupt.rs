//! The process-wide stop request: Ctrl+C (and SIGTERM). The first asks whatever is running
//! to stop cleanly (the app closes, `record` finishes its video, `run` and `eos` finish their
//! files), a second one ends the process at once. `cli` installs the handler once; the long
//! loops (`cli`, `record`, the app's window loop) poll [`interrupted`]. Knows nothing else.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler (a failure to install only loses the clean stop).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\ninterrupted: stopping cleanly (Ctrl+C again to quit at once)");
    });
}

/// True once Ctrl+C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
