//! **The graph's census** for `--stats`: at every epoch, how many vertices and edges are present,
//! and, when `triangles` runs, how many triangles the graph has.
//!
//! * `vertices`: the vertex set ([`GraphInput::vertex_set`]: vertex-file vertices ∪ endpoints of
//!   present edges);
//! * `edges`: the edges of the undirected simple graph — distinct present pairs `{u, v}` with
//!   `u != v` (direction, parallel copies, weights and self-loops ignored), what degree,
//!   triangles and kcore see: the sum of all degrees is twice it;
//! * `triangles`: the sum of the `triangles` output's values divided by 3.
//!
//! How: the changes of the shared vertex set and edge set, when an algorithm of the run built
//! them (most differential ones do), and the `triangles` output's changes weighted by their
//! value, are summed per time at worker 0 into a buffer the writer drains as epochs complete.
//! When an algorithm counts both already (the fully dynamic WCC path: with one forest, its
//! present vertices and links after every time it applies; with per-worker shares, the union
//! forest's present vertices and the sum of the links each share reports at each time), it
//! records them in the process's [`AlgorithmCounts`], and the census reads them there (nothing
//! is built for it). Any other run
//! whose algorithms build neither set (WCC's insert-only path keeps no edges at all) counts them
//! with `distinct_counts` instead: a count per vertex and per vertex pair in a
//! hash map at the worker the key hashes to, and per time only the number of keys whose count
//! became positive or zero. Building the sets for `--stats` alone (two `distinct`s, their
//! arrangements holding every edge) made `run wcc --stats` on R-MAT 20 churn ~20× slower and
//! ~3.5× larger than `run wcc`, so that every experiment (they all write `--stats`) measured the
//! census rather than the algorithm. Counted per key it costs WCC about a third of its
//! throughput and ~50 bytes per edge (1.40 M against 2.14 M updates/s, 1.9 GB against 0.94 GB,
//! `-w 2`); read from the forest it costs nothing measurable. Over a stream without deletions
//! (WCC's insert-only path) a key is present from the first time it comes, so each worker sends a
//! vertex on only the first time it sees it, and the keys' first times are kept in a table filled
//! a container at a time with its slots prefetched (`first_times`), applied as records arrive.
//! The census still costs such a run most of its speed, since the algorithm touches only the
//! vertices and the census every pair: R-MAT 18 inserted in epochs of 1,000, `-w 2`, about
//! 6 M updates/s with `--stats` against 45 M without.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::vec::Map;
use timely::dataflow::operators::{Concat, Probe};
use timely::dataflow::{ProbeHandle, StreamVec};

use super::first_times::FirstTimes;
use crate::dataflow::gather::to_first_worker;
use crate::dataflow::time_stash::TimeStash;
use crate::dataflow::{AlgorithmCounts, GraphInput, ResultCollection};
use crate::types::Node;
use crate::types::{Diff, Time};

/// The counts after an epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphCounts {
    /// Vertices of the vertex set.
    pub vertices: u64,
    /// Distinct undirected vertex pairs without self-loops.
    pub edges: u64,
    /// `None` unless `triangles` runs.
    pub triangles: Option<u64>,
}

/// Changes of (vertices, edges, triangle corners) by time, filled at worker 0.
type Buffer = Rc<RefCell<BTreeMap<Time, [i64; 3]>>>;

/// The census of one worker's dataflow (only worker 0's receives anything).
pub struct Census {
    buffer: Buffer,
    totals: [i64; 3],
    triangles: bool,
    /// An algorithm's own census, when it sees the whole graph.
    reported: Option<AlgorithmCounts>,
}

impl Census {
    /// Builds the census over `input`, with the `triangles` output if that algorithm runs; its
    /// sink is probed with `probe`.
    pub fn build<'a>(
        input: &GraphInput<'a>,
        triangles: Option<ResultCollection<'a>>,
        probe: &ProbeHandle<Time>,
    ) -> Self {
        let buffer: Buffer = Rc::default();
        let has_triangles = triangles.is_some();
        // An algorithm that sees the whole graph counts both already.
        let reported = input.counts().filter(|counts| counts.census_active()).cloned();
        let (vertices, edges) = if reported.is_some() {
            (None, None)
        } else {
            let vertices = if input.has_vertex_set() {
                input.vertex_set().map(|_| 0u8).inner
            } else {
                let ends =
                    input.edges.inner.clone().flat_map(|((s, d, _), t, diff)| [((s, 0), t, diff), ((d, 0), t, diff)]);
                let ends = ends.concat(input.vertices.inner.clone().map(|(v, t, diff)| ((v, 0), t, diff)));
                // Without deletions a vertex, once present, stays: each worker sends it on once.
                let ends = if input.insert_only { first_sights(ends) } else { ends };
                count_keys(ends, 0, input.insert_only)
            };
            let edges = if input.has_edge_set(true) {
                input.edge_set(true).filter(|(s, d)| s < d).map(|_| 1u8).inner
            } else {
                let pairs = input
                    .edges
                    .inner
                    .clone()
                    .flat_map(|((s, d, _), t, diff)| (s != d).then(|| ((s.min(d), s.max(d)), t, diff)));
                count_keys(pairs, 1, input.insert_only)
            };
            (Some(vertices), Some(edges))
        };
        let triangles = triangles.map(|t| t.explode(|(_, corners)| Some((2u8, corners as Diff))).inner);
        let Some(all) = [vertices, edges, triangles].into_iter().flatten().reduce(|a, b| a.concat(b)) else {
            return Census { buffer, totals: [0; 3], triangles: has_triangles, reported };
        };
        let sink = buffer.clone();
        all.unary_frontier::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
            to_first_worker(),
            "Census",
            move |_capability, _info| {
                move |(input, _frontier), _output| {
                    input.for_each(|_time, data| {
                        let mut sink = sink.borrow_mut();
                        for (kind, t, d) in data.drain(..) {
                            sink.entry(t).or_default()[kind as usize] += d as i64;
                        }
                    });
                }
            },
        )
        .probe_with(probe);
        Census { buffer, totals: [0; 3], triangles: has_triangles, reported }
    }

    /// Declares that [`Census::below`] will be called with `frontier` (the writer declares each
    /// epoch's before the epoch is fed), so that an algorithm's own census keeps only the last
    /// record before each such frontier ([`AlgorithmCounts::expect_census_below`]).
    pub fn expect(&self, frontier: Time) {
        if let Some(counts) = &self.reported {
            counts.expect_census_below(frontier);
        }
    }

    /// The counts once every time below `frontier` is applied (the writer calls it as each
    /// epoch completes).
    pub fn below(&mut self, frontier: Time) -> GraphCounts {
        let mut buffer = self.buffer.borrow_mut();
        while let Some(entry) = buffer.first_entry().filter(|e| *e.key() < frontier) {
            for (total, d) in self.totals.iter_mut().zip(entry.remove()) {
                *total += d;
            }
        }
        if let Some((vertices, edges)) = self.reported.as_ref().and_then(|counts| counts.census_below(frontier)) {
            self.totals[0] = vertices as i64;
            self.totals[1] = edges as i64;
        }
        let count = |i: usize| u64::try_from(self.totals[i]).unwrap_or(0);
        GraphCounts { vertices: count(0), edges: count(1), triangles: self.triangles.then(|| count(2) / 3) }
    }
}

/// The distinct keys' changes per time: [`first_times`] over a stream without deletions,
/// [`distinct_counts`] otherwise.
fn count_keys<'a>(
    keys: StreamVec<'a, Time, ((Node, Node), Time, Diff)>,
    kind: u8,
    insert_only: bool,
) -> StreamVec<'a, Time, (u8, Time, Diff)> {
    if insert_only {
        first_times(keys, kind)
    } else {
        distinct_counts(keys, kind)
    }
}

/// For a stream without deletions: each key only the first time this worker sees it, and again
/// if it comes with an earlier time than the one sent (the records of two concatenated inputs
/// need not arrive in time order), so that [`first_times`] receives a few records per key and
/// worker instead of one per edge endpoint, and still finds each key present from its earliest
/// time.
fn first_sights<'a>(
    keys: StreamVec<'a, Time, ((Node, Node), Time, Diff)>,
) -> StreamVec<'a, Time, ((Node, Node), Time, Diff)> {
    let mut sent: FxHashMap<(Node, Node), Time> = FxHashMap::default();
    keys.unary::<CapacityContainerBuilder<Vec<((Node, Node), Time, Diff)>>, _, _, _>(
        timely::dataflow::channels::pact::Pipeline,
        "CensusFirstSights",
        move |_capability, _info| {
            move |input, output| {
                input.for_each(|cap, data| {
                    let mut session = output.session(&cap);
                    for (key, t, diff) in data.drain(..) {
                        // A key not sent yet counts as sent at the end of time.
                        let sent_at = sent.entry(key).or_insert(Time::MAX);
                        if t < *sent_at {
                            *sent_at = t;
                            session.give((key, t, diff));
                        }
                    }
                });
            }
        },
    )
}

/// [`distinct_counts`] for a stream without deletions: a key is present from the earliest time
/// it comes with, so each record is applied as it arrives (no stash until the frontier passes
/// its time): a new key adds 1 at its time; a key seen again with an earlier time moves its 1
/// there (the later time is not complete either, since the record's own is not). Per input
/// container, the net change of each time goes out.
fn first_times<'a>(
    keys: StreamVec<'a, Time, ((Node, Node), Time, Diff)>,
    kind: u8,
) -> StreamVec<'a, Time, (u8, Time, Diff)> {
    keys.unary::<CapacityContainerBuilder<Vec<(u8, Time, Diff)>>, _, _, _>(
        Exchange::new(route_key),
        "CensusFirstTimes",
        move |_capability, _info| {
            let mut first = FirstTimes::default();
            let mut records: Vec<((Node, Node), Time)> = Vec::new();
            let mut deltas: Vec<(Time, Diff)> = Vec::new();
            move |input, output| {
                input.for_each(|cap, data| {
                    records.extend(data.drain(..).map(|(key, t, _)| (key, t)));
                    first.insert_all(&records, &mut deltas);
                    records.clear();
                    differential_dataflow::consolidation::consolidate(&mut deltas);
                    for (t, delta) in deltas.drain(..) {
                        output.session(&cap.delayed(&t, 0)).give((kind, t, delta));
                    }
                });
            }
        },
    )
}

/// The worker a census key is counted at: a hash of the key.
fn route_key(x: &((Node, Node), Time, Diff)) -> u64 {
    let (a, b) = x.0;
    (a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b).wrapping_mul(0xC2B2_AE3D_27D4_EB4F) >> 32
}

/// Per time, how many distinct keys became present (count > 0) minus how many stopped being,
/// as `(kind, time, delta)` records: a count per key at the worker the key hashes to. The records
/// of a time are applied once every earlier time is complete (the frontier has reached it), in
/// as many pieces as they arrive in: the deltas of the pieces telescope to the time's own, so
/// an initial graph is counted as it is fed, never stashed whole.
fn distinct_counts<'a>(
    keys: StreamVec<'a, Time, ((Node, Node), Time, Diff)>,
    kind: u8,
) -> StreamVec<'a, Time, (u8, Time, Diff)> {
    keys.unary_frontier::<CapacityContainerBuilder<Vec<(u8, Time, Diff)>>, _, _, _>(
        Exchange::new(route_key),
        "CensusCount",
        move |_capability, _info| {
            let mut stash: TimeStash<((Node, Node), Diff)> = TimeStash::new();
            let mut counts: FxHashMap<(Node, Node), i64> = FxHashMap::default();
            move |(input, frontier), output| {
                input.for_each(|cap, data| {
                    stash.stash_all(&cap, data.drain(..).map(|(key, t, diff)| (t, (key, diff))));
                });
                for (cap, records) in stash.ready(frontier) {
                    let mut delta = 0;
                    for (key, diff) in records {
                        let count = counts.entry(key).or_insert(0);
                        let before = *count > 0;
                        *count += diff as i64;
                        delta += (*count > 0) as Diff - before as Diff;
                        if *count == 0 {
                            counts.remove(&key);
                        }
                    }
                    if delta != 0 {
                        output.session(&cap).give((kind, *cap.time(), delta));
                    }
                }
            }
        },
    )
}
