//! **Cluster faults**: a peer process that disconnects, or a worker that fails, stops the run
//! with one clear line instead of timely's panics.
//!
//! timely's communication threads (`timely:send-K`, `timely:recv-K`, talking to process `K`)
//! panic when the connection to a peer breaks; the workers then panic on the poisoned queues,
//! and joining them panics once more. [`supervise`] runs a job with a panic hook that, for the
//! job's timely threads (and the joining thread while it joins), records the panic instead of
//! printing it, and turns what was recorded into one [`RunError::Cluster`] naming the peer:
//!
//! ```text
//! ripples: error: process 1 (127.0.0.1:2102) disconnected: reading data: socket closed; the cluster stopped. Restart every process with the same flags to resume from the state directory
//! ```
//!
//! or, for a failure inside a worker, [`RunError::WorkerFailed`] with the panic's message and
//! location. Panics of other threads (a library user's own) are printed as before.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use super::RunError;

/// Runs being supervised right now (the hook records timely panics only while one is).
static SUPERVISED: AtomicUsize = AtomicUsize::new(0);
/// Panics recorded: `(thread name, message)`.
static RECORDED: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

thread_local! {
    /// Set on the thread that joins the workers while it joins.
    static JOINING: Cell<bool> = const { Cell::new(false) };
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("");
            let ours = name.starts_with("timely:") || JOINING.with(Cell::get);
            if !ours || SUPERVISED.load(Ordering::SeqCst) == 0 {
                return previous(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let message = match info.location() {
                Some(l) if name.starts_with("timely:work") => format!("{} (at {}:{})", message, l.file(), l.line()),
                _ => message,
            };
            if let Ok(mut recorded) = RECORDED.lock() {
                recorded.push((name.to_string(), message));
            }
        }));
    });
}

/// The peer process a communication thread talks to: `timely:recv-3` → 3.
fn peer_of(thread: &str) -> Option<usize> {
    thread.strip_prefix("timely:recv-").or_else(|| thread.strip_prefix("timely:send-"))?.parse().ok()
}

/// Starts a supervised section: the workers' panics are recorded, not printed.
pub(super) fn start() {
    install_hook();
    SUPERVISED.fetch_add(1, Ordering::SeqCst);
}

/// Joins the workers with `join` (which may panic when a peer has gone) and ends the supervised
/// section. `addresses`: each process's `host:port`; `resumable`: whether a state directory lets
/// a restart resume.
pub(super) fn join<T>(join: impl FnOnce() -> T, addresses: &[String], resumable: bool) -> Result<T, RunError> {
    JOINING.with(|j| j.set(true));
    let joined = panic::catch_unwind(AssertUnwindSafe(join));
    JOINING.with(|j| j.set(false));
    SUPERVISED.fetch_sub(1, Ordering::SeqCst);
    let recorded = std::mem::take(&mut *RECORDED.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some(e) = classify(&recorded, addresses, resumable) {
        return Err(e);
    }
    joined.map_err(|_| RunError::WorkerFailed("the workers could not be joined".into()))
}

/// What the recorded panics mean: a peer's disconnection outranks what it caused.
fn classify(recorded: &[(String, String)], addresses: &[String], resumable: bool) -> Option<RunError> {
    let peer = recorded.iter().find_map(|(thread, message)| {
        let process = peer_of(thread)?;
        let reason = message.strip_prefix("timely communication error: ").unwrap_or(message);
        Some((process, reason.to_string()))
    });
    if let Some((process, reason)) = peer {
        let address = addresses.get(process).cloned().unwrap_or_else(|| "?".into());
        return Some(RunError::Cluster { process, address, reason, resumable });
    }
    recorded.iter().find(|(t, _)| t.starts_with("timely:work")).map(|(_, m)| RunError::WorkerFailed(m.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disconnected_peer_is_named_once() {
        let recorded = vec![
            ("timely:recv-1".to_string(), "timely communication error: reading data: socket closed".to_string()),
            ("timely:work-0".to_string(), "MergeQueue poisoned. (at x.rs:1)".to_string()),
            ("timely:send-1".to_string(), "MergeQueue poisoned.".to_string()),
        ];
        let addresses = vec!["127.0.0.1:2101".to_string(), "127.0.0.1:2102".to_string()];
        let e = classify(&recorded, &addresses, true).expect("an error");
        assert_eq!(
            e.to_string(),
            "process 1 (127.0.0.1:2102) disconnected: reading data: socket closed; the cluster stopped. \
             Restart every process with the same flags to resume from the state directory"
        );
        let e = classify(&recorded[1..2], &addresses, false).expect("an error");
        assert_eq!(e.to_string(), "a worker failed: MergeQueue poisoned. (at x.rs:1)");
        assert!(classify(&[], &addresses, false).is_none());
    }
}
