//! **Sequential processing in arrival order**: the skeleton of the insert-only, order-dependent
//! algorithms (`spanner`, `matching`). Every edge copy of [`GraphInput::arrivals`] goes to
//! worker 0 with its [`Position`]; once the input frontier has passed a time, that time's
//! copies are sorted by position (epoch, then the feeding worker, then its index there: the
//! stream's order) and handed to `step` one at a time, which updates its own state and adds
//! the resulting output changes to `delta`; the nonzero net changes are emitted at that time.
//! The result is therefore the same on any number of workers and processes.
//!
//! Cost: every inserted copy moved to worker 0 (whole containers, [`super::gather`]) and an
//! `O(n log n)` sort of each time's `n` copies, plus whatever `step` does; no differential
//! arrangement is built (the copies are dropped once processed), the state is `step`'s.
//!
//! [`GraphInput::arrivals`]: super::GraphInput::arrivals
//! [`Position`]: super::Position

use std::collections::HashMap;

use differential_dataflow::AsCollection;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::generic::operator::Operator;

use super::gather::to_first_worker;
use super::time_stash::TimeStash;
use super::{ArrivalCollection, Position, ResultCollection};
use crate::types::{Diff, Edge, Node, Time};

/// Output changes of one time, by `(key, value)`.
pub type Delta = HashMap<(Node, u64), Diff>;

/// Runs `step` at worker 0 over every inserted edge copy in arrival order (see the module docs).
pub fn in_order<'a, F>(arrivals: ArrivalCollection<'a>, name: &str, mut step: F) -> ResultCollection<'a>
where
    F: FnMut(Edge, &mut Delta) + 'static,
{
    let name_owned = name.to_string();
    arrivals
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<((Node, u64), Time, Diff)>>, _, _, _>(
            to_first_worker(),
            name,
            move |_capability, _info| {
                let mut stash: TimeStash<(Position, Edge, Diff)> = TimeStash::new();
                let mut delta = Delta::new();
                move |(input, frontier), output| {
                    input.for_each(|cap, data| {
                        stash.stash_all(
                            &cap,
                            data.drain(..).map(|((position, edge), t, diff)| (t, (position, edge, diff))),
                        );
                    });
                    while let Some((t, cap, mut records)) = stash.next_complete(frontier) {
                        records.sort_unstable_by_key(|&(position, edge, _)| (position, edge));
                        delta.clear();
                        for (_, edge, diff) in records {
                            assert!(diff >= 0, "internal error: {} was fed a deletion of {:?}", name_owned, edge);
                            for _ in 0..diff {
                                step(edge, &mut delta);
                            }
                        }
                        let mut session = output.session(&cap);
                        for (&record, &d) in delta.iter() {
                            if d != 0 {
                                session.give((record, t, d));
                            }
                        }
                    }
                }
            },
        )
        .as_collection()
}

/// The arrivals of `input`; panics (a driver bug) when the driver did not attach them.
pub fn of<'a>(input: &super::GraphInput<'a>, name: &str) -> ArrivalCollection<'a> {
    input.arrivals.clone().unwrap_or_else(|| {
        panic!("internal error: {} needs the edges in arrival order (GraphInput::with_arrivals)", name)
    })
}
