//! **Stdin**: the local producer of a pipeline such as `producer | ripples --live -`.
//!
//! One thread reads stdin as it comes; there is nobody to answer, so a rejected line stops the
//! stream (or is skipped with `--skip-bad-lines`). End of input means `end`. Stdin cannot be
//! re-read, so a restarted run simply continues with whatever stdin brings next.

use std::io;
use std::sync::mpsc::SyncSender;

use super::{pump, Event, LOCAL};
use crate::live::error::TransportError;

/// The stdin thread's body.
pub(super) fn read(events: SyncSender<Event>) {
    match pump(io::stdin(), LOCAL, &events) {
        Ok(true) => {
            let _ = events.send(Event::Eof);
        }
        Ok(false) => {}
        Err(source) => {
            let _ = events.send(Event::Failed(TransportError::Stdin { source }));
        }
    }
}
