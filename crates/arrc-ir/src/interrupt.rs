//! A request to stop the running statement (Ctrl-C in the REPL). A signal handler
//! sets it; the reference interpreter and the host's loops (dfn calls, hosted
//! statements, folds of the reference) check it and stop with an `INTERRUPT` error.
//! The flag is process-wide: one REPL per process.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks the running statement to stop (safe to call from a signal handler).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Forgets a request (before a new statement starts).
pub fn clear() {
    REQUESTED.store(false, Ordering::SeqCst);
}

/// Whether a stop was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// `INTERRUPT` at `span` if a stop was requested.
pub fn check(span: &arrc_syntax::Span) -> crate::Result<()> {
    if requested() {
        return Err(crate::Error::new(
            crate::ErrorClass::Interrupt,
            "interrupted (Ctrl-C)",
            span.clone(),
        ));
    }
    Ok(())
}
