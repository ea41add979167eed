//! **Sequential maintenance over the pair set**: the skeleton of the algorithms that keep exact
//! state at one worker (triangles, core numbers). Every change of the undirected pair set goes
//! to worker 0; once the input frontier has passed a time, that time's net pair changes are
//! handed to `step`, in time order, which updates its own state and adds the resulting
//! per-vertex changes to `delta`; the nonzero ones are emitted at that time.
//!
//! Cost: the exchange of every pair change to one worker, plus whatever `step` does; the state
//! is `step`'s (linear in the pairs for the algorithms here).
//!
//! # Example
//!
//! ```
//! use std::collections::HashMap;
//! use ripples::dataflow::{custom, pair_changes::at_one_worker};
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::types::Update;
//! // Degrees kept at one worker: every pair change moves both endpoints' multiplicity.
//! let degrees = custom("pair-degree", |input| {
//!     let pairs = input.edge_set(true).filter(|&(a, b)| a < b);
//!     at_one_worker(pairs, "PairDegree", |changes, delta: &mut HashMap<u64, isize>| {
//!         for ((a, b), d) in changes {
//!             *delta.entry(a).or_insert(0) += d;
//!             *delta.entry(b).or_insert(0) += d;
//!         }
//!     })
//!     .count()
//!     .map(|(v, n)| (v, n as u64))
//! });
//! // A triangle with a parallel copy of 0 - 1 (one pair); then 2 - 3 appears and 0 - 1 goes.
//! let stream = MemoryStream {
//!     initial: vec![(0, 1, None), (1, 0, None), (1, 2, None), (2, 0, None)],
//!     updates: vec![Update::insert(2, 3), Update::delete(0, 1), Update::delete(1, 0)],
//!     batch: 3,
//!     ..MemoryStream::default()
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 2) };
//! let report = driver::run(options, degrees).unwrap().unwrap();
//! assert_eq!(report.final_state.unwrap(), vec![(0, 1), (1, 1), (2, 3), (3, 1)]);
//! ```

use std::collections::HashMap;

use differential_dataflow::AsCollection;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::generic::operator::Operator;

use super::gather::to_first_worker;
use super::time_stash::TimeStash;
use super::{NodeCollection, PairCollection};
use crate::types::{Diff, Node, Time};

/// The net changes of the pairs at one time.
pub type PairChanges = HashMap<(Node, Node), Diff>;

/// Runs `step` at worker 0 over each time's net pair changes (see the module docs).
pub fn at_one_worker<'a, F>(pairs: PairCollection<'a>, name: &str, mut step: F) -> NodeCollection<'a>
where
    F: FnMut(PairChanges, &mut HashMap<Node, Diff>) + 'static,
{
    pairs
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<(Node, Time, Diff)>>, _, _, _>(
            to_first_worker(),
            name,
            |_capability, _info| {
                let mut stash: TimeStash<((Node, Node), Diff)> = TimeStash::new();
                let mut delta: HashMap<Node, Diff> = HashMap::new();
                move |(input, frontier), output| {
                    input.for_each(|cap, data| {
                        stash.stash_all(&cap, data.drain(..).map(|(pair, t, diff)| (t, (pair, diff))));
                    });
                    while let Some((t, cap, records)) = stash.next_complete(frontier) {
                        let mut changes = PairChanges::new();
                        for (pair, diff) in records {
                            *changes.entry(pair).or_insert(0) += diff;
                        }
                        delta.clear();
                        step(changes, &mut delta);
                        let mut session = output.session(&cap);
                        for (&v, &d) in delta.iter() {
                            if d != 0 {
                                session.give((v, t, d));
                            }
                        }
                    }
                }
            },
        )
        .as_collection()
}
