//! Ctrl+C (and SIGTERM): the first asks whatever is running to stop cleanly (the app closes,
//! `record` finishes its video, `run` finishes its files), a second one ends the process at
//! once. Installed once by `cli::main`.

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
