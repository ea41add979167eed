//! **Cluster faults**: a peer process that disconnects, or a worker that fails, stops the run
//! with one clear line instead of timely's panics.
//!
//! timely's communication threads (`timely:send-K`, `timely:recv-K`, talking to process `K`)
//! panic when the connection to a peer breaks; the workers then panic on the poisoned queues,
//! and joining them panics once more. A [`Supervision`] is one run's record of those panics: the
//! run's worker threads, its communication threads (marked through timely's communication
//! [`Hooks`], whose logger set-up runs on each of them) and the thread that joins them carry the
//! run's identity, and a process-wide panic hook records a panic of a marked thread in its own
//! run's record instead of printing it. What was recorded becomes one [`RunError::Cluster`]
//! naming the peer:
//!
//! ```text
//! ripples: error: process 1 (127.0.0.1:2102) disconnected: reading data: socket closed; the cluster stopped. Restart every process with the same flags to resume from the state directory
//! ```
//!
//! or, for a failure inside a worker, [`RunError::WorkerFailed`] with the panic's message and
//! location. Two runs in one process (two `Job`s, parallel tests) never see each other's panics,
//! and a panic of any thread that no run marked (a host program's own, `timely:*` threads of
//! its own timely computations included) goes to the hook that was installed before, as if
//! ripples were not there.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};

use timely::communication::Hooks;

use super::RunError;

/// One panic: `(thread name, message)`.
type Recorded = Vec<(String, String)>;

/// One supervised run's record: its panics, and its worker threads, which a panic of one of
/// them wakes (a worker parked waiting for a failed peer would wait forever).
#[derive(Default)]
struct Run {
    recorded: Recorded,
    workers: Vec<std::thread::Thread>,
    failed: Arc<AtomicBool>,
}

/// The runs supervised right now.
static RUNS: Mutex<BTreeMap<u64, Run>> = Mutex::new(BTreeMap::new());

thread_local! {
    /// The run whose thread this is (a worker, a communication thread, or the joining thread
    /// while it joins).
    static RUN: Cell<Option<u64>> = const { Cell::new(None) };
    /// Set once a thread of this worker's run failed.
    static FAILED: std::cell::RefCell<Option<Arc<AtomicBool>>> = const { std::cell::RefCell::new(None) };
}

fn runs() -> std::sync::MutexGuard<'static, BTreeMap<u64, Run>> {
    RUNS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Steps `worker`, parking while it has nothing to do; a worker of a run in which another
/// thread failed stops (with a panic its run records, so that joining reports the first
/// failure), instead of parking for ever waiting for the failed one.
pub(super) fn step_or_park(worker: &mut timely::worker::Worker) -> bool {
    let more = worker.step_or_park(None);
    if FAILED.with(|f| f.borrow().as_ref().is_some_and(|f| f.load(Ordering::Relaxed))) {
        panic!("stopped: another worker of the run failed");
    }
    more
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let Some(run) = RUN.with(Cell::get) else {
                return previous(info);
            };
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("").to_string();
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
            let mut runs = runs();
            match runs.get_mut(&run) {
                Some(record) => {
                    record.recorded.push((name, message));
                    record.failed.store(true, Ordering::Relaxed);
                    for worker in &record.workers {
                        worker.unpark();
                    }
                }
                // The run has ended (a thread of it outlived its join): nobody will report it.
                None => {
                    drop(runs);
                    previous(info)
                }
            }
        }));
    });
}

/// The peer process a communication thread talks to: `timely:recv-3` → 3.
fn peer_of(thread: &str) -> Option<usize> {
    thread.strip_prefix("timely:recv-").or_else(|| thread.strip_prefix("timely:send-"))?.parse().ok()
}

/// One run's supervision: from [`Supervision::start`] until [`Supervision::join`], the panics of
/// the threads marked with its identity are recorded for it, not printed.
pub(super) struct Supervision {
    run: u64,
}

impl Supervision {
    /// Starts supervising a new run.
    pub(super) fn start() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        install_hook();
        let run = NEXT.fetch_add(1, Ordering::Relaxed);
        runs().insert(run, Run::default());
        Supervision { run }
    }

    /// Marks the calling thread as one of the run's workers (a worker calls it first thing).
    pub(super) fn marker(&self) -> impl Fn() + Send + Sync + Clone + 'static {
        let run = self.run;
        move || {
            RUN.with(|r| r.set(Some(run)));
            if let Some(record) = runs().get_mut(&run) {
                record.workers.push(std::thread::current());
                FAILED.with(|f| *f.borrow_mut() = Some(record.failed.clone()));
            }
        }
    }

    /// timely's communication hooks with the run's mark on every communication thread.
    pub(super) fn hooks(&self) -> Hooks {
        let run = self.run;
        Hooks {
            log_fn: Arc::new(move |_| {
                RUN.with(|r| r.set(Some(run)));
                None
            }),
            ..Hooks::default()
        }
    }

    /// Joins the workers with `join` (which may panic when a peer has gone) and ends the
    /// supervision. `addresses`: each process's `host:port`; `resumable`: whether a state
    /// directory lets a restart resume.
    pub(super) fn join<T>(
        self,
        join: impl FnOnce() -> T,
        addresses: &[String],
        resumable: bool,
    ) -> Result<T, RunError> {
        let before = RUN.with(|r| r.replace(Some(self.run)));
        let joined = panic::catch_unwind(AssertUnwindSafe(join));
        RUN.with(|r| r.set(before));
        let recorded = runs().remove(&self.run).map(|r| r.recorded).unwrap_or_default();
        if let Some(e) = classify(&recorded, addresses, resumable) {
            return Err(e);
        }
        joined.map_err(|_| RunError::WorkerFailed("the workers could not be joined".into()))
    }
}

impl Drop for Supervision {
    fn drop(&mut self) {
        runs().remove(&self.run);
    }
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

    /// Panics `message` on a new thread named `name`, marked by `mark` if given; returns whether
    /// the thread panicked.
    fn panic_on(name: &str, mark: Option<impl Fn() + Send + 'static>, message: &'static str) -> bool {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                if let Some(mark) = mark {
                    mark();
                }
                panic!("{}", message)
            })
            .expect("spawn")
            .join()
            .is_err()
    }

    #[test]
    fn each_run_records_only_its_own_threads() {
        let (a, b) = (Supervision::start(), Supervision::start());
        assert!(panic_on("timely:work-0", Some(a.marker()), "a's worker failed"));
        // A thread of nobody's, named like timely's: not recorded by either run.
        assert!(panic_on("timely:work-0", None::<fn()>, "the host's own"));
        let addresses = vec!["127.0.0.1:1".to_string()];
        let e = a.join(|| (), &addresses, false).expect_err("a failed");
        assert!(e.to_string().contains("a's worker failed"), "{e}");
        assert!(!e.to_string().contains("host"), "{e}");
        // b saw neither panic.
        b.join(|| (), &addresses, false).expect("b is healthy");
    }

    #[test]
    fn a_communication_thread_is_marked_through_the_hooks() {
        let run = Supervision::start();
        let hooks = run.hooks();
        let setup = timely::communication::logging::CommunicationSetup { process: 0, sender: false, remote: Some(1) };
        let recorded = std::thread::Builder::new()
            .name("timely:recv-1".into())
            .spawn(move || {
                assert!((hooks.log_fn)(setup).is_none());
                panic!("timely communication error: reading data: socket closed")
            })
            .expect("spawn")
            .join()
            .is_err();
        assert!(recorded);
        let addresses = vec!["127.0.0.1:2101".to_string(), "127.0.0.1:2102".to_string()];
        let e = run.join(|| (), &addresses, false).expect_err("the peer's disconnection");
        assert!(
            e.to_string().starts_with("process 1 (127.0.0.1:2102) disconnected: reading data: socket closed"),
            "{e}"
        );
    }
}
