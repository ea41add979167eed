//! **Profiling**: per operator, channel, arrangement and worker, where a run's time goes, from
//! timely's and differential's logging.
//!
//! A [`Profiler`] in [`RunOptions::profiler`](super::RunOptions::profiler) makes every worker
//! register two loggers before it builds its dataflow (timely's `"timely"` events: operators,
//! channels, scheduling, messages, parking; differential's `"differential/arrange"`: batches,
//! merges, drops, batcher sizes). Each worker folds its events into figures on its own thread
//! (no event is kept), under a lock that a reader ([`Profiler::snapshot`], the `--http` metrics)
//! takes to see this process's workers' figures as of their last step.
//! At the end of the run every worker's figures are gathered at the writing worker, and
//! [`Profiler::final_profile`] is the whole cluster's [`Profile`].
//!
//! Cost: one log record per operator invocation and per message, folded into hash maps on the
//! worker's thread (measured in the book's chapter on metrics and profiles, `book/src/monitoring.md`).
//!
//! ```
//! use ripples::driver::{self, profile::Profiler, MemoryStream, RunOptions};
//! use ripples::dataflow::wcc::Wcc;
//! let profiler = Profiler::new();
//! let stream = MemoryStream { initial: vec![(1, 2, None), (2, 3, None)], batch: 1, ..Default::default() };
//! let options = RunOptions { profiler: Some(profiler.clone()), ..RunOptions::memory(stream, 2) };
//! driver::run(options, Wcc).unwrap();
//! let profile = profiler.final_profile().expect("the run ended");
//! assert_eq!(profile.workers.len(), 2);
//! // Every operator of both workers, each worker's dataflows inside its busy time.
//! assert!(profile.operators.iter().any(|op| op.worker == 1 && op.name == "Input"));
//! for w in &profile.workers {
//!     assert!(w.operator_seconds <= w.busy_seconds + 1e-3);
//! }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use differential_dataflow::logging::{DifferentialEvent, DifferentialEventBuilder};
use timely::logging::{ParkEvent, StartStop, TimelyEvent, TimelyEventBuilder};
use timely::worker::Worker;

pub use crate::types::profile::{
    ArrangementProfile, ChannelProfile, OperatorProfile, OperatorTotal, Profile, WorkerProfile,
};

/// Collects a run's profile (see the [module documentation](self)). Cloning shares it.
#[derive(Clone, Default)]
pub struct Profiler {
    shared: Arc<Mutex<Shared>>,
}

#[derive(Default)]
struct Shared {
    /// The figures of each worker of this process, as its logging folds them.
    workers: Vec<Arc<Mutex<Local>>>,
    /// The cluster's profile, once the run ended.
    last: Option<Profile>,
}

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Profiler")
    }
}

impl Profiler {
    /// A profiler with nothing collected yet.
    pub fn new() -> Profiler {
        Profiler::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// This process's workers' figures as of their last step (the run's final profile, the whole
    /// cluster's, once it ended).
    pub fn snapshot(&self) -> Profile {
        let workers = {
            let shared = self.lock();
            if let Some(last) = &shared.last {
                return last.clone();
            }
            shared.workers.clone()
        };
        let mut profiles: Vec<Profile> = workers.iter().map(|w| lock(w).profile()).collect();
        profiles.sort_by_key(|p| p.workers.first().map(|w| w.worker));
        merge(profiles)
    }

    /// The whole cluster's profile, once the run ended (in the writing process).
    pub fn final_profile(&self) -> Option<Profile> {
        self.lock().last.clone()
    }

    pub(crate) fn set_final(&self, profile: Profile) {
        self.lock().last = Some(profile);
    }

    /// Registers this worker's loggers (before its dataflows are built). `None` when the worker
    /// has no log registry.
    pub(crate) fn install(&self, worker: &mut Worker) -> Option<WorkerProfiler> {
        let mut registry = worker.log_register()?;
        let local = Arc::new(Mutex::new(Local { worker: worker.index(), ..Local::default() }));
        let index = worker.index();
        {
            // A restarted run's workers replace the previous attempt's.
            let mut shared = self.lock();
            shared.workers.retain(|w| lock(w).worker != index);
            shared.workers.push(local.clone());
            shared.last = None;
        }
        let timely_local = local.clone();
        registry.insert::<TimelyEventBuilder, _>("timely", move |time, data| {
            let mut local = lock(&timely_local);
            if let Some(events) = data {
                for (at, event) in events.iter() {
                    local.timely(*at, event);
                }
            }
            local.now = local.now.max(*time);
        });
        let diff_local = local.clone();
        registry.insert::<DifferentialEventBuilder, _>("differential/arrange", move |_time, data| {
            if let Some(events) = data {
                let mut local = lock(&diff_local);
                for (_, event) in events.iter() {
                    local.differential(event);
                }
            }
        });
        Some(WorkerProfiler { local, shared: self.clone() })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One worker's collection, held by the worker while it runs.
pub(crate) struct WorkerProfiler {
    local: Arc<Mutex<Local>>,
    shared: Profiler,
}

impl WorkerProfiler {
    /// Keeps the arrangements' figures as they are now (the last epoch complete): closing the
    /// input drops the traces, and the profile reports what they held, not that they are gone.
    pub(crate) fn keep_arrangements(&self, worker: &mut Worker) {
        if let Some(mut registry) = worker.log_register() {
            registry.flush();
        }
        let mut local = lock(&self.local);
        local.kept_arrangements = Some(local.arrangements.iter().map(|(k, v)| (*k, v.clone())).collect());
    }

    /// Flushes the worker's logs and returns its figures.
    pub(crate) fn finish(&self, worker: &mut Worker) -> Profile {
        if let Some(mut registry) = worker.log_register() {
            registry.flush();
        }
        lock(&self.local).profile()
    }

    /// The profiler this worker reports to.
    pub(crate) fn profiler(&self) -> &Profiler {
        &self.shared
    }
}

/// Merges workers' profiles into one (their lists concatenated, by worker) and computes the
/// self times.
pub(crate) fn merge(profiles: impl IntoIterator<Item = Profile>) -> Profile {
    let mut all = Profile { version: 1, ..Profile::default() };
    for p in profiles {
        all.workers.extend(p.workers);
        all.operators.extend(p.operators);
        all.channels.extend(p.channels);
        all.arrangements.extend(p.arrangements);
    }
    all.compute_self_times();
    all
}

#[derive(Default)]
struct OperatorAcc {
    addr: Vec<usize>,
    name: String,
    inclusive: Duration,
    invocations: u64,
}

#[derive(Default)]
struct ChannelAcc {
    scope: Vec<usize>,
    source: usize,
    target: usize,
    sent_records: u64,
    sent_messages: u64,
    received_records: u64,
    received_messages: u64,
}

#[derive(Default, Clone)]
struct ArrangementAcc {
    records: i64,
    batches: i64,
    batcher_bytes: i64,
}

/// A worker's figures, folded from its log events.
#[derive(Default)]
struct Local {
    worker: usize,
    operators: HashMap<usize, OperatorAcc>,
    channels: HashMap<usize, ChannelAcc>,
    arrangements: HashMap<usize, ArrangementAcc>,
    /// The arrangements as the last epoch left them (see `keep_arrangements`).
    kept_arrangements: Option<HashMap<usize, ArrangementAcc>>,
    /// Operators being scheduled, innermost last, with their start.
    running: Vec<(usize, Duration)>,
    parked: Duration,
    parked_since: Option<Duration>,
    now: Duration,
}

impl Local {
    fn timely(&mut self, at: Duration, event: &TimelyEvent) {
        match event {
            TimelyEvent::Operates(op) => {
                let acc = self.operators.entry(op.id).or_default();
                acc.addr = op.addr.clone();
                acc.name = op.name.clone();
            }
            TimelyEvent::Channels(ch) => {
                self.channels.insert(
                    ch.id,
                    ChannelAcc {
                        scope: ch.scope_addr.clone(),
                        source: ch.source.0,
                        target: ch.target.0,
                        ..ChannelAcc::default()
                    },
                );
            }
            TimelyEvent::Schedule(s) => match s.start_stop {
                StartStop::Start => self.running.push((s.id, at)),
                StartStop::Stop => {
                    // Scheduling nests: the innermost running operator is the one stopping.
                    if let Some(pos) = self.running.iter().rposition(|(id, _)| *id == s.id) {
                        let (_, start) = self.running.remove(pos);
                        let acc = self.operators.entry(s.id).or_default();
                        acc.inclusive += at.saturating_sub(start);
                        acc.invocations += 1;
                    }
                }
            },
            TimelyEvent::Messages(m) => {
                if let Some(ch) = self.channels.get_mut(&m.channel) {
                    let records = m.record_count.max(0) as u64;
                    if m.is_send {
                        ch.sent_records += records;
                        ch.sent_messages += 1;
                    } else {
                        ch.received_records += records;
                        ch.received_messages += 1;
                    }
                }
            }
            TimelyEvent::Park(ParkEvent::Park(_)) => self.parked_since = Some(at),
            TimelyEvent::Park(ParkEvent::Unpark) => {
                if let Some(since) = self.parked_since.take() {
                    self.parked += at.saturating_sub(since);
                }
            }
            _ => {}
        }
        self.now = self.now.max(at);
    }

    fn differential(&mut self, event: &DifferentialEvent) {
        match event {
            DifferentialEvent::Batch(b) => {
                let a = self.arrangements.entry(b.operator).or_default();
                a.records += b.length as i64;
                a.batches += 1;
            }
            DifferentialEvent::Merge(m) => {
                if let Some(merged) = m.complete {
                    let a = self.arrangements.entry(m.operator).or_default();
                    a.records += merged as i64 - m.length1 as i64 - m.length2 as i64;
                    a.batches -= 1;
                }
            }
            DifferentialEvent::Drop(d) => {
                let a = self.arrangements.entry(d.operator).or_default();
                a.records -= d.length as i64;
                a.batches -= 1;
            }
            DifferentialEvent::Batcher(b) => {
                self.arrangements.entry(b.operator).or_default().batcher_bytes += b.size_diff as i64;
            }
            _ => {}
        }
    }

    /// The figures as records (self times are computed when workers' profiles are merged).
    fn profile(&self) -> Profile {
        let by_addr: HashMap<&[usize], usize> =
            self.operators.iter().map(|(id, op)| (op.addr.as_slice(), *id)).collect();
        let mut operators: HashMap<usize, OperatorProfile> = self
            .operators
            .iter()
            .map(|(id, op)| {
                (
                    *id,
                    OperatorProfile {
                        worker: self.worker,
                        id: *id,
                        addr: op.addr.clone(),
                        name: op.name.clone(),
                        inclusive_seconds: op.inclusive.as_secs_f64(),
                        invocations: op.invocations,
                        ..OperatorProfile::default()
                    },
                )
            })
            .collect();
        // A channel's endpoint index is an operator of its scope; 0 is the scope itself.
        let address = |scope: &[usize], index: usize| {
            let mut addr = scope.to_vec();
            if index != 0 {
                addr.push(index);
            }
            addr
        };
        let mut channels = Vec::with_capacity(self.channels.len());
        for (id, ch) in &self.channels {
            let (source, target) = (address(&ch.scope, ch.source), address(&ch.scope, ch.target));
            if let Some(op) = by_addr.get(source.as_slice()).and_then(|id| operators.get_mut(id)) {
                op.records_out += ch.sent_records;
                op.batches_out += ch.sent_messages;
            }
            if let Some(op) = by_addr.get(target.as_slice()).and_then(|id| operators.get_mut(id)) {
                op.records_in += ch.received_records;
                op.batches_in += ch.received_messages;
            }
            channels.push(ChannelProfile {
                worker: self.worker,
                id: *id,
                source,
                target,
                records: ch.sent_records,
                messages: ch.sent_messages,
            });
        }
        channels.sort_by_key(|c| c.id);
        let mut operators: Vec<OperatorProfile> = operators.into_values().collect();
        operators.sort_by_key(|o| o.id);
        let mut arrangements: Vec<ArrangementProfile> = self
            .kept_arrangements
            .as_ref()
            .unwrap_or(&self.arrangements)
            .iter()
            .map(|(op, a)| ArrangementProfile {
                worker: self.worker,
                operator: *op,
                name: self.operators.get(op).map(|o| o.name.clone()).unwrap_or_default(),
                records: a.records,
                batches: a.batches,
                batcher_bytes: a.batcher_bytes,
            })
            .collect();
        arrangements.sort_by_key(|a| a.operator);
        let mut parked = self.parked;
        if let Some(since) = self.parked_since {
            parked += self.now.saturating_sub(since);
        }
        let wall = self.now.as_secs_f64();
        let operator_seconds: f64 = operators.iter().filter(|o| o.addr.len() == 1).map(|o| o.inclusive_seconds).sum();
        Profile {
            version: 1,
            workers: vec![WorkerProfile {
                worker: self.worker,
                wall_seconds: wall,
                parked_seconds: parked.as_secs_f64(),
                busy_seconds: (wall - parked.as_secs_f64()).max(0.0),
                operator_seconds,
            }],
            operators,
            channels,
            arrangements,
        }
    }
}
