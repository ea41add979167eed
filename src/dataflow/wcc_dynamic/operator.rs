//! The forests as timely operators. A forest operator keeps each time's records
//! ([`TimeBatch`]) until the input frontier has passed the time, then applies the times in
//! order and emits their changes at their times as they are found. [`dataflow`] composes them:
//! one forest at worker 0, or with per-worker shares a summary forest at every worker whose
//! forest-edge and presence changes feed the forest at worker 0.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use differential_dataflow::AsCollection;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::vec::Map;
use timely::dataflow::operators::Concat;

use super::consolidate::{consolidate_edges, FREE_AS_APPLIED};
use super::pipeline::{Lookahead, LOOKAHEAD};
use super::{DynamicForest, ForestLayout, ForestParams};
use crate::dataflow::time_stash::TimeBatches;
use crate::dataflow::{AlgorithmCounts, GraphInput, ResultCollection};
use crate::types::{Diff, Node, Time};

/// An edge copy `(a, b, 0)` or a vertex-file vertex `(a, a, 1)`, with its time and diff.
type Event = ((Node, Node, u8), Time, Diff);
/// A forest's output: label changes (or, in summary mode, forest-edge and presence changes).
type Output = ((Node, u64), Time, Diff);

/// A hash of a vertex pair, either way round (which worker keeps its link: [`super::pair_share`]).
pub(super) fn pair_worker(a: Node, b: Node) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    (lo.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ hi.rotate_left(29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 17
}

/// The fully dynamic path as a dataflow (see [`super::wcc_dynamic`]).
pub(super) fn dataflow<'a>(
    input: GraphInput<'a>,
    params: ForestParams,
    fallbacks: Option<Arc<AtomicU64>>,
) -> ResultCollection<'a> {
    let factor = params.budget;
    let peers = input.edges.scope().peers();
    let shares = params.layout == ForestLayout::Shares && peers > 1;
    let counts = input.counts().cloned();
    let input_lifetime = input.edge_lifetime;
    if let Some(counts) = &counts {
        counts.activate_fallbacks();
        // The forest at worker 0 knows the census: one forest sees every record of the graph;
        // with shares, the union forest has every present vertex and the shares report their
        // links to it (a pair's records all go to one share).
        counts.activate_census();
    }
    let edges = input.edges.inner.map(|((s, d, _w), t, diff)| ((s, d, 0u8), t, diff));
    let vertices = input.vertices.inner.map(|(v, t, diff)| ((v, v, 1u8), t, diff));
    let census = if shares { CensusRole::Union } else { CensusRole::Whole };
    let edges = if shares {
        let share = DynamicForest::summary(factor).with_counter(fallbacks.clone());
        // Timely sends a record to worker `hash % peers`: the pair's `pair_share`.
        let pact = Exchange::new(|x: &Event| pair_worker(x.0 .0, x.0 .1));
        forest_operator(edges, pact, "WccDynamicShare", share, counts.clone(), CensusRole::Share).map(
            |((a, b), t, diff)| {
                if (a, b) == LINKS_CHANGE {
                    ((0, 0, LINKS_KIND), t, diff)
                } else {
                    ((a, b, 0u8), t, diff)
                }
            },
        )
    } else {
        edges
    };
    // Edges that leave in the order they came (a window's): renew the forest newest first.
    let renew = (input_lifetime.is_some() && !shares && params.renew_min > 0).then_some(params.renew_min);
    let forest = DynamicForest::new(factor).with_counter(fallbacks).with_renewal(renew);
    // Whole containers to worker 0 (no per-record exchange).
    forest_operator(
        edges.concat(vertices),
        crate::dataflow::gather::to_first_worker(),
        "WccDynamicForest",
        forest,
        counts,
        census,
    )
    .as_collection()
}

/// A share's output record that carries, as its diff, the change of the share's present links
/// at its time (summary records are pairs `(a, b)` with `a <= b`, so this one is no pair).
const LINKS_CHANGE: (Node, u64) = (1, 0);
/// The event kind of a share's links change at the union forest.
const LINKS_KIND: u8 = 2;

/// What a forest operator contributes to the `--stats` census ([`AlgorithmCounts`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum CensusRole {
    /// One forest sees the whole graph: its present vertices and links are the census.
    Whole,
    /// A share: it sends the change of its present links at each time to the union forest.
    Share,
    /// The union of the shares' forests: its present vertices are the graph's, and the graph's
    /// links are the sum of the shares' changes it receives.
    Union,
}

/// Records of one time below this many are applied without consolidating them on arrival.
pub(super) const SMALL: usize = 1 << 14;

/// One time's records at a forest operator: vertex-file changes, and edge copy changes as
/// `(a, b, diff)` with `a <= b` (24 bytes each), consolidated in place whenever the vector is
/// full, so that the copies of an initial graph do not pile up (duplicates and `+1 -1` pairs
/// cancel while they arrive). [`DynamicForest::apply`] consolidates once more, so the result
/// does not depend on when this happened.
#[derive(Default)]
pub(super) struct TimeBatch {
    fixed: Vec<(Node, Diff)>,
    pub(super) edges: Vec<(Node, Node, Diff)>,
    /// At the union forest: the shares' changes of their present links at this time.
    links_change: Diff,
}

impl TimeBatch {
    pub(super) fn push_edge(&mut self, a: Node, b: Node, diff: Diff) {
        let edges = &mut self.edges;
        if edges.len() == edges.capacity() && edges.len() >= SMALL {
            consolidate_edges(edges);
            // At least as many pushes again before the next consolidation.
            if edges.len() * 2 > edges.capacity() {
                edges.reserve(edges.len());
            }
        }
        edges.push((a.min(b), a.max(b), diff));
    }
}

/// Returns the allocator's free pages to the system, before a large time (an initial graph) is
/// applied. The time's records reached this worker through the exchange in buffers that the
/// other workers allocated, so with glibc they were freed into those threads' arenas, where a
/// few live blocks among them keep their pages resident and this worker's forest, about to grow by the time, cannot reuse them. glibc's
/// `malloc_trim` releases the free pages of every arena (once per large time); elsewhere this
/// does nothing.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: `malloc_trim` takes no pointers; it only returns free pages of the C
        // allocator's heaps to the system (nothing live moves).
        unsafe {
            malloc_trim(0);
        }
    }
}

/// `forest` as an operator: records travel by `pact`, each time is applied once the frontier
/// has passed it, in time order, and its output emitted at that time; its fallback rebuilds are
/// recorded in `counts` at that time (and, for a forest that sees the whole graph, its census).
fn forest_operator<'a>(
    events: timely::dataflow::StreamVec<'a, Time, Event>,
    pact: impl timely::dataflow::channels::pact::ParallelizationContract<Time, Vec<Event>>,
    name: &str,
    forest: DynamicForest,
    counts: Option<AlgorithmCounts>,
    role: CensusRole,
) -> timely::dataflow::StreamVec<'a, Time, Output> {
    events.unary_frontier::<timely::container::CapacityContainerBuilder<Vec<Output>>, _, _, _>(
        pact,
        name,
        move |_capability, _info| {
            let mut forest = forest;
            let mut stash: TimeBatches<TimeBatch> = TimeBatches::new();
            let mut complete = std::collections::VecDeque::new();
            // The census last recorded: a time that leaves it as it was records nothing (the
            // census keeps the last figure), which spares most event times of a window a lock.
            let mut census_recorded = None;
            // Only when the driver reads it (`--stats`): a census per event time, unread, would
            // pile up for the whole run.
            let census_wanted = counts.as_ref().is_some_and(|counts| counts.census_wanted());
            // A share: its present links when it last reported them. The union: the graph's.
            let mut links: Diff = 0;
            move |(input, frontier), output| {
                input.for_each(|cap, data| {
                    for ((a, b, kind), t, diff) in data.drain(..) {
                        let batch = stash.batch(&cap, t);
                        if kind == 1 {
                            batch.fixed.push((a, diff));
                        } else if kind == LINKS_KIND {
                            batch.links_change += diff;
                        } else {
                            batch.push_edge(a, b, diff);
                        }
                    }
                });
                // Times the frontier has passed are complete: apply them in order (the batch
                // is freed once applied), prefetching for the times ahead of each.
                complete.extend(std::iter::from_fn(|| stash.next_complete(frontier)));
                let cross = complete.len() > 1;
                if cross {
                    for (_, _, later) in complete.iter().skip(1).take(LOOKAHEAD) {
                        forest.prefetch_ahead(&later.edges, Lookahead::Far);
                    }
                    for (_, _, later) in complete.iter().skip(1).take(LOOKAHEAD / 2) {
                        forest.prefetch_ahead(&later.edges, Lookahead::Near);
                    }
                }
                // One session for all of them, at the earliest one's capability (each change
                // carries its own time): a window's thousand event times an epoch then leave in a
                // few containers, not one each.
                let Some(first) = complete.front().map(|(_, cap, _)| cap.clone()) else { return };
                let mut session = output.session(&first);
                while let Some((t, _cap, mut batch)) = complete.pop_front() {
                    if cross {
                        if let Some((_, _, far)) = complete.get(LOOKAHEAD - 1) {
                            forest.prefetch_ahead(&far.edges, Lookahead::Far);
                        }
                        if let Some((_, _, near)) = complete.get(LOOKAHEAD / 2 - 1) {
                            forest.prefetch_ahead(&near.edges, Lookahead::Near);
                        }
                    }
                    let before = forest.fallbacks();
                    if batch.edges.len() >= FREE_AS_APPLIED {
                        // Before the forest grows by it: see `release_free_memory`.
                        release_free_memory();
                    }
                    // The changes go out as they are found (never listed whole).
                    forest.apply_with(&batch.fixed, &mut batch.edges, &mut |record, diff| {
                        session.give((record, t, diff))
                    });
                    let links_change = batch.links_change;
                    drop(batch);
                    if let Some(counts) = &counts {
                        counts.record_fallbacks(t, forest.fallbacks() - before);
                        if census_wanted {
                            let census = match role {
                                CensusRole::Whole => Some(forest.links() as Diff),
                                CensusRole::Union => {
                                    links += links_change;
                                    Some(links)
                                }
                                CensusRole::Share => {
                                    let now = forest.links() as Diff;
                                    if now != links {
                                        session.give((LINKS_CHANGE, t, now - links));
                                        links = now;
                                    }
                                    None
                                }
                            };
                            if let Some(links) = census {
                                let census = (forest.store.present as u64, links.max(0) as u64);
                                if census_recorded != Some(census) {
                                    counts.record_census(t, census.0, census.1);
                                    census_recorded = Some(census);
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}
