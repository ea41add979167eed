//! The records of a **profile**: where a run's time and memory went, per worker, per operator,
//! per channel and per arrangement, as timely's and differential's logging reported them.
//!
//! The driver fills them ([`crate::driver::profile`]); `--profile FILE` writes one [`Profile`] as
//! JSON (this module's serde form is its schema), `--http` serves it at `/api/profile` and as
//! Prometheus metrics, and `--serve` as SQL tables.
//!
//! Times are seconds of wall clock on the worker's thread. An operator's *inclusive* time is the
//! time between its scheduling and its return, summed over its invocations; a scope's includes
//! its operators'; its *self* time is its inclusive time less its children's. A worker's busy time
//! is its wall time less its parked time.
//!
//! ```
//! use ripples::types::profile::{OperatorProfile, Profile};
//! let op = |addr: Vec<usize>, inclusive: f64| OperatorProfile {
//!     worker: 0, id: addr.len(), addr, name: "op".into(), inclusive_seconds: inclusive,
//!     ..OperatorProfile::default()
//! };
//! let mut profile = Profile { operators: vec![op(vec![0], 3.0), op(vec![0, 1], 1.0), op(vec![0, 2], 0.5)], ..Profile::default() };
//! profile.compute_self_times();
//! assert_eq!(profile.operators[0].self_seconds, 1.5); // the scope, less its two operators
//! assert_eq!(profile.operators[1].self_seconds, 1.0);
//! ```

use serde::{Deserialize, Serialize};

/// One run's profile (`--profile FILE`'s JSON).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Profile {
    /// The schema's version: 1.
    pub version: u32,
    /// Per worker: wall, busy and parked time.
    pub workers: Vec<WorkerProfile>,
    /// Per worker and operator (dataflow scopes included).
    pub operators: Vec<OperatorProfile>,
    /// Per worker and channel: what crossed it.
    pub channels: Vec<ChannelProfile>,
    /// Per worker and arrangement: what its trace holds at the end.
    pub arrangements: Vec<ArrangementProfile>,
}

/// One worker's time.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WorkerProfile {
    /// The worker's index in the cluster.
    pub worker: usize,
    /// Seconds since the worker's logging started.
    pub wall_seconds: f64,
    /// Seconds the worker was parked (nothing to do, waiting for data or a wake-up).
    pub parked_seconds: f64,
    /// `wall_seconds - parked_seconds`.
    pub busy_seconds: f64,
    /// Seconds inside operators (the top-level dataflows' inclusive time).
    pub operator_seconds: f64,
}

/// One operator on one worker.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OperatorProfile {
    /// The worker's index.
    pub worker: usize,
    /// The operator's worker-unique identifier (timely's).
    pub id: usize,
    /// Its address: the path of scope indices from the worker's root.
    pub addr: Vec<usize>,
    /// Its name.
    pub name: String,
    /// Seconds scheduled, its children's included.
    pub inclusive_seconds: f64,
    /// Seconds scheduled less its children's (equal to inclusive for an operator without any).
    pub self_seconds: f64,
    /// Times scheduled.
    pub invocations: u64,
    /// Records received on its inputs.
    pub records_in: u64,
    /// Records sent on its outputs.
    pub records_out: u64,
    /// Messages (batches of records) received.
    pub batches_in: u64,
    /// Messages sent.
    pub batches_out: u64,
}

/// One channel on one worker.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ChannelProfile {
    /// The worker's index.
    pub worker: usize,
    /// The channel's worker-unique identifier.
    pub id: usize,
    /// Address of the operator it leaves (the scope itself when it enters the scope's input).
    pub source: Vec<usize>,
    /// Address of the operator it enters.
    pub target: Vec<usize>,
    /// Records this worker sent on it.
    pub records: u64,
    /// Messages this worker sent on it.
    pub messages: u64,
}

/// One arrangement (a trace of differential's) on one worker.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ArrangementProfile {
    /// The worker's index.
    pub worker: usize,
    /// The arranging operator's identifier (as in [`OperatorProfile::id`]).
    pub operator: usize,
    /// The arranging operator's name.
    pub name: String,
    /// Updates in the trace's batches.
    pub records: i64,
    /// Batches in the trace.
    pub batches: i64,
    /// Bytes the arrangement's batcher holds (updates not yet in a batch).
    pub batcher_bytes: i64,
}

impl Profile {
    /// Sets every operator's self time: its inclusive time less its direct children's (the
    /// operators whose address extends its own by one index, on the same worker).
    pub fn compute_self_times(&mut self) {
        use std::collections::HashMap;
        let mut children: HashMap<(usize, &[usize]), f64> = HashMap::new();
        for op in &self.operators {
            if let Some((_, parent)) = op.addr.split_last() {
                *children.entry((op.worker, parent)).or_insert(0.0) += op.inclusive_seconds;
            }
        }
        let selfs: Vec<f64> = self
            .operators
            .iter()
            .map(|op| {
                let inner = children.get(&(op.worker, op.addr.as_slice())).copied().unwrap_or(0.0);
                (op.inclusive_seconds - inner).max(0.0)
            })
            .collect();
        for (op, s) in self.operators.iter_mut().zip(selfs) {
            op.self_seconds = s;
        }
    }

    /// The operators' figures summed over workers, one entry per address, by inclusive time,
    /// largest first: `(addr, name, inclusive, self, invocations, records_in, records_out)`.
    pub fn by_operator(&self) -> Vec<OperatorTotal> {
        use std::collections::BTreeMap;
        let mut totals: BTreeMap<&[usize], OperatorTotal> = BTreeMap::new();
        for op in &self.operators {
            let t = totals.entry(&op.addr).or_insert_with(|| OperatorTotal {
                addr: op.addr.clone(),
                name: op.name.clone(),
                ..OperatorTotal::default()
            });
            t.inclusive_seconds += op.inclusive_seconds;
            t.self_seconds += op.self_seconds;
            t.invocations += op.invocations;
            t.records_in += op.records_in;
            t.records_out += op.records_out;
            t.workers += 1;
        }
        let mut all: Vec<OperatorTotal> = totals.into_values().collect();
        all.sort_by(|a, b| b.inclusive_seconds.total_cmp(&a.inclusive_seconds).then(a.addr.cmp(&b.addr)));
        all
    }
}

/// One operator's figures summed over the workers that run it ([`Profile::by_operator`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OperatorTotal {
    /// Its address.
    pub addr: Vec<usize>,
    /// Its name.
    pub name: String,
    /// Inclusive seconds, all workers.
    pub inclusive_seconds: f64,
    /// Self seconds, all workers.
    pub self_seconds: f64,
    /// Invocations, all workers.
    pub invocations: u64,
    /// Records in, all workers.
    pub records_in: u64,
    /// Records out, all workers.
    pub records_out: u64,
    /// Workers that run it.
    pub workers: usize,
}
