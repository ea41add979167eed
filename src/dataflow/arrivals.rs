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

use std::collections::{BTreeMap, HashMap};

use differential_dataflow::AsCollection;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::generic::OutputBuilder;
use timely::dataflow::operators::Capability;
use timely::dataflow::StreamVec;

use super::gather::to_first_worker;
use super::{ArrivalCollection, Position, ResultCollection};
use crate::types::{Diff, Edge, Node, Time};

/// Output changes of one time, by `(key, value)`.
pub type Delta = HashMap<(Node, u64), Diff>;

/// Runs `step` at worker 0 over every inserted edge copy in arrival order (see the module docs).
pub fn in_order<'a, F>(arrivals: ArrivalCollection<'a>, name: &str, mut step: F) -> ResultCollection<'a>
where
    F: FnMut(Edge, &mut Delta) + 'static,
{
    in_order_noting(arrivals, name, move |edge, delta, _notes| step(edge, delta)).0
}

/// A time's copies waiting for the time to complete, with a capability for each output.
type Waiting = (Capability<Time>, Capability<Time>, Vec<(Position, Edge, Diff)>);

/// A stream of `((key, value), time, diff)` changes: [`in_order_noting`]'s notes.
pub type Notes<'a> = StreamVec<'a, Time, ((Node, u64), Time, Diff)>;

/// [`in_order`] whose `step` also writes *notes*: changes of its own (say, the weights of the
/// matched vertices) that are not part of the result, emitted at worker 0 with the result's
/// times on a stream of their own, for the workers' snapshots of `step`'s state. A time's
/// nonzero net notes are emitted with its result changes.
pub fn in_order_noting<'a, F>(
    arrivals: ArrivalCollection<'a>,
    name: &str,
    mut step: F,
) -> (ResultCollection<'a>, Notes<'a>)
where
    F: FnMut(Edge, &mut Delta, &mut Delta) + 'static,
{
    let name_owned = name.to_string();
    let mut builder = OperatorBuilder::new(name.to_string(), arrivals.inner.scope());
    let mut input = builder.new_input(arrivals.inner, to_first_worker());
    let (results, result_stream) = builder.new_output();
    let (notes, note_stream) = builder.new_output();
    let mut results = OutputBuilder::<_, CapacityContainerBuilder<Vec<((Node, u64), Time, Diff)>>>::from(results);
    let mut notes = OutputBuilder::<_, CapacityContainerBuilder<Vec<((Node, u64), Time, Diff)>>>::from(notes);
    builder.build(move |_capabilities| {
        // Each time's copies, with a capability for each output.
        let mut stash: BTreeMap<Time, Waiting> = BTreeMap::new();
        let mut delta = Delta::new();
        let mut noted = Delta::new();
        move |frontiers| {
            input.for_each(|cap, data| {
                let mut records = data.drain(..).peekable();
                while let Some(((position, edge), time, diff)) = records.next() {
                    let entry =
                        stash.entry(time).or_insert_with(|| (cap.delayed(&time, 0), cap.delayed(&time, 1), Vec::new()));
                    entry.2.push((position, edge, diff));
                    while let Some(((position, edge), _, diff)) = records.next_if(|&(_, t, _)| t == time) {
                        entry.2.push((position, edge, diff));
                    }
                }
            });
            let frontier = &frontiers[0];
            let mut results = results.activate();
            let mut notes = notes.activate();
            while let Some((&t, _)) = stash.first_key_value() {
                if frontier.less_equal(&t) {
                    break;
                }
                let Some((_, (result_cap, note_cap, mut records))) = stash.pop_first() else { break };
                records.sort_unstable_by_key(|&(position, edge, _)| (position, edge));
                delta.clear();
                noted.clear();
                for (_, edge, diff) in records {
                    assert!(diff >= 0, "internal error: {} was fed a deletion of {:?}", name_owned, edge);
                    for _ in 0..diff {
                        step(edge, &mut delta, &mut noted);
                    }
                }
                let mut session = results.session(&result_cap);
                for (&record, &d) in delta.iter() {
                    if d != 0 {
                        session.give((record, t, d));
                    }
                }
                let mut session = notes.session(&note_cap);
                for (&record, &d) in noted.iter() {
                    if d != 0 {
                        session.give((record, t, d));
                    }
                }
            }
        }
    });
    (result_stream.as_collection(), note_stream)
}

/// The arrivals of `input`; panics (a driver bug) when the driver did not attach them.
pub fn of<'a>(input: &super::GraphInput<'a>, name: &str) -> ArrivalCollection<'a> {
    input.arrivals.clone().unwrap_or_else(|| {
        panic!("internal error: {} needs the edges in arrival order (GraphInput::with_arrivals)", name)
    })
}
