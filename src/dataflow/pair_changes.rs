//! **Sequential maintenance over the pair set**: the skeleton of the algorithms that keep exact
//! state at one worker (triangles, core numbers). Every change of the undirected pair set goes
//! to worker 0; once the input frontier has passed a time, that time's net pair changes are
//! handed to `step`, in time order, which updates its own state and adds the resulting
//! per-vertex changes to `delta`; the nonzero ones are emitted at that time.
//!
//! Cost: the exchange of every pair change to one worker, plus whatever `step` does; the state
//! is `step`'s (linear in the pairs for the algorithms here).

use std::collections::HashMap;

use differential_dataflow::AsCollection;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;

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
    type Change = ((Node, Node), Time, Diff);
    pairs
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<(Node, Time, Diff)>>, _, _, _>(
            Exchange::new(|_x: &Change| 0u64),
            name,
            |_capability, _info| {
                let mut stash: TimeStash<((Node, Node), Diff)> = TimeStash::new();
                let mut delta: HashMap<Node, Diff> = HashMap::new();
                move |(input, frontier), output| {
                    input.for_each(|cap, data| {
                        for (pair, t, diff) in data.drain(..) {
                            stash.stash(&cap, t, (pair, diff));
                        }
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
