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
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::generic::OutputBuilder;
use timely::dataflow::operators::Capability;
use timely::dataflow::StreamVec;

use super::gather::to_first_worker;
use super::time_stash::TimeBatches;
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

/// A time's copies at worker 0, with a capability for the notes' output (the batch holds the
/// result's).
type Copies = (Option<Capability<Time>>, Vec<(Position, Edge, Diff)>);

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
        let mut stash: TimeBatches<Copies> = TimeBatches::new();
        let mut delta = Delta::new();
        let mut noted = Delta::new();
        move |frontiers| {
            input.for_each(|cap, data| {
                let mut records = data.drain(..).peekable();
                while let Some(((position, edge), time, diff)) = records.next() {
                    let (note_cap, batch) = stash.batch(&cap, time);
                    note_cap.get_or_insert_with(|| cap.delayed(&time, 1));
                    batch.push((position, edge, diff));
                    while let Some(((position, edge), _, diff)) = records.next_if(|&(_, t, _)| t == time) {
                        batch.push((position, edge, diff));
                    }
                }
            });
            let mut results = results.activate();
            let mut notes = notes.activate();
            while let Some((t, result_cap, (note_cap, mut records))) = stash.next_complete(&frontiers[0]) {
                records.sort_unstable_by_key(|&(position, edge, _)| (position, edge));
                delta.clear();
                noted.clear();
                for (_, edge, diff) in records {
                    assert!(diff >= 0, "internal error: {} was fed a deletion of {:?}", name_owned, edge);
                    for _ in 0..diff {
                        step(edge, &mut delta, &mut noted);
                    }
                }
                results.session(&result_cap).give_iterator(nonzero(&delta, t));
                if let Some(note_cap) = note_cap {
                    notes.session(&note_cap).give_iterator(nonzero(&noted, t));
                }
            }
        }
    });
    (result_stream.as_collection(), note_stream)
}

/// The nonzero net changes of `changes`, at `t`.
fn nonzero(changes: &Delta, t: Time) -> impl Iterator<Item = ((Node, u64), Time, Diff)> + '_ {
    changes.iter().filter(|&(_, &d)| d != 0).map(move |(&record, &d)| (record, t, d))
}

/// The arrivals of `input`; panics (a driver bug) when the driver did not attach them.
pub fn of<'a>(input: &super::GraphInput<'a>, name: &str) -> ArrivalCollection<'a> {
    input.arrivals.clone().unwrap_or_else(|| {
        panic!("internal error: {} needs the edges in arrival order (GraphInput::with_arrivals)", name)
    })
}
