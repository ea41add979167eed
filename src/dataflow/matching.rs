//! **Streaming weighted matching** of an insert-only edge stream, with gelly-streaming's
//! semantics (its `CentralizedWeightedMatching`: the one-pass algorithm of Feigenbaum et al.,
//! a 1/6-approximation of the maximum-weight matching).
//!
//! **Semantics.** The stream is read as undirected weighted edges, in arrival order; an edge
//! without a weight has weight 1. The matching starts empty. An arriving edge `{u, v}` of
//! weight `w` **collides** with the matched edges that share an endpoint with it (at most two:
//! the one at `u` and the one at `v`, or one when `{u, v}` itself is matched). If `w` exceeds
//! twice the sum of their weights (`w > 2 * sum`, compared in `f64`; the sum is 0 without
//! collisions), the colliding edges leave the matching and `{u, v}` enters; otherwise the edge
//! is dropped. So an edge of weight `<= 0` (or NaN) is never matched, and a parallel copy of a
//! matched edge replaces it only if it is more than twice as heavy (the output does not
//! change). **Self-loops are ignored** (they neither enter nor collide; gelly-streaming would
//! match one, which is not a matching).
//!
//! **Arrival order** ([`super::Position`]): epoch order, and within an epoch the order of the
//! input (the line order of the edge file for epoch 0 and of the update file, or the order in
//! which live input closed the epoch's updates). The stream must be insert-only and unwindowed:
//! the driver refuses deletions and windows before anything runs.
//!
//! **Output.** Per matched vertex, `(vertex, partner)`: a matched edge `{u, v}` is the two
//! records `(u, v)` and `(v, u)`. Unmatched vertices do not appear. Integers (the matched
//! edge's weight is not part of the output).
//!
//! **Cost.** Every inserted copy that may change the matching goes to one worker
//! ([`super::arrivals`]), which keeps one entry per matched vertex (partner and weight); an
//! arriving edge costs two hash lookups and changes at most six output records (two colliding
//! edges out, itself in).
//!
//! **Parallel drops.** A copy that worker 0 would drop changes nothing there, so any worker may
//! drop it instead. With more than one worker, every worker keeps a *snapshot* of the matched
//! vertices' weights: worker 0's notes of each time (a vertex entering at weight `a`, leaving)
//! come back to all workers one time later, and a time's notes are applied once all of them
//! are in, so the snapshot is the matching as of the end of some time `s`. A vertex `x`
//! matched at weight `a` stays matched, by the same edge, until a copy heavier than `2a`
//! arrives at `x` or at its partner. So each worker also sends every other worker the weight of
//! its heaviest copy of each time, and a copy of time `t` with an endpoint matched at `a` in
//! the snapshot waits until every worker's heaviest copy of time `t` is known: if no copy of
//! the times after `s` up to `t` weighs more than `2a`, the endpoint is still matched at `a`
//! when the copy reaches worker 0, which drops it (`w <= 2a <= 2 * sum`). Self-loops and
//! copies of weight `<= 0` are dropped on the spot. On an unweighted stream a matched vertex
//! stays matched for good, and once most vertices are matched nearly every copy is dropped by
//! the worker that fed it (R-MAT 16 inserted in epochs of 10,000 at `-w 2`: about 97% of the
//! copies). The price: each worker holds a snapshot of the matched vertices, a copy with a
//! matched endpoint waits one exchange of the workers' heaviest weights, and epoch 0 (the
//! initial graph) meets an empty snapshot. With one worker there is no snapshot.

use std::collections::BTreeMap;

use differential_dataflow::AsCollection;
use rustc_hash::FxHashMap;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::generic::OutputBuilder;
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{ConnectLoop, Feedback};
use timely::dataflow::StreamVec;
use timely::progress::Antichain;

use super::arrivals::{self, Delta};
use super::time_stash::{TimeBatches, TimeStash};
use super::{Algorithm, ArrivalCollection, GraphInput, Position, ResultCollection};
use crate::types::{Diff, Edge, Node, Time};

/// Streaming weighted matching (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Matching;

impl Algorithm for Matching {
    fn name(&self) -> String {
        "matching".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        let arrivals = arrivals::of(&input, "matching");
        let scope = arrivals.inner.scope();
        // With several workers, the notes of time `t` (the matched vertices' weights) come back
        // to every worker at `t + 1`: the snapshots (one worker has none).
        let snapshots = (scope.peers() > 1).then(|| scope.feedback::<Vec<((Node, u64), Time, Diff)>>(1));
        let candidates = match &snapshots {
            Some((_, notes)) => held_dropped(arrivals, notes.clone()),
            None => arrivals,
        };
        let mut matched = Matched { noting: snapshots.is_some(), ..Matched::default() };
        let (result, notes) = arrivals::in_order_noting(candidates, "Matching", move |edge, delta, notes| {
            matched.arrive(edge, delta, notes)
        });
        if let Some((handle, _)) = snapshots {
            notes.broadcast().connect_loop(handle);
        }
        result
    }
    fn arrival_order(&self) -> bool {
        true
    }
}

/// The matching's plain sequential form, the same code the dataflow runs on its one worker
/// (`ripples bench`'s `sequential` baseline of `matching-insert`).
///
/// ```
/// use ripples::dataflow::matching::MatchingState;
/// let mut m = MatchingState::default();
/// m.arrive(1, 2, 1.0);
/// m.arrive(2, 3, 5.0); // 5 > 2 * 1: replaces {1, 2}
/// assert_eq!(m.matched(), vec![(2, 3)]);
/// ```
#[derive(Default)]
pub struct MatchingState {
    matched: Matched,
}

impl MatchingState {
    /// The edge `{u, v}` of weight `w` arrives.
    pub fn arrive(&mut self, u: Node, v: Node, w: f64) {
        let mut delta = arrivals::Delta::new();
        let mut notes = arrivals::Delta::new();
        self.matched.arrive((u, v, crate::types::weight_bits(Some(w))), &mut delta, &mut notes);
    }

    /// The matched edges `(u, v)` with `u < v`, sorted.
    pub fn matched(&self) -> Vec<(Node, Node)> {
        let mut out: Vec<(Node, Node)> =
            self.matched.partner.iter().filter(|(u, (v, _))| u < &v).map(|(u, (v, _))| (*u, *v)).collect();
        out.sort_unstable();
        out
    }
}

/// The matching so far: each matched vertex's partner and the matched edge's weight.
#[derive(Default)]
struct Matched {
    partner: FxHashMap<Node, (Node, f64)>,
    /// Whether to write notes: `(vertex, weight bits)` `+1` when a vertex is matched by an edge
    /// of that weight, `-1` when it leaves (for the workers' snapshots).
    noting: bool,
}

impl Matched {
    fn arrive(&mut self, (u, v, bits): Edge, delta: &mut Delta, notes: &mut Delta) {
        if u == v {
            return;
        }
        let w = f64::from_bits(bits);
        let at_u = self.partner.get(&u).copied();
        let at_v = self.partner.get(&v).copied().filter(|&(p, _)| p != u);
        let sum = at_u.map_or(0.0, |(_, x)| x) + at_v.map_or(0.0, |(_, x)| x);
        // (NaN compares false: never matched.)
        if w.partial_cmp(&(2.0 * sum)) != Some(std::cmp::Ordering::Greater) {
            return;
        }
        for (x, (y, a)) in [(u, at_u), (v, at_v)].into_iter().filter_map(|(x, e)| e.map(|e| (x, e))) {
            self.partner.remove(&x);
            self.partner.remove(&y);
            *delta.entry((x, y)).or_insert(0) -= 1;
            *delta.entry((y, x)).or_insert(0) -= 1;
            if self.noting {
                *notes.entry((x, a.to_bits())).or_insert(0) -= 1;
                *notes.entry((y, a.to_bits())).or_insert(0) -= 1;
            }
        }
        self.partner.insert(u, (v, w));
        self.partner.insert(v, (u, w));
        *delta.entry((u, v)).or_insert(0) += 1;
        *delta.entry((v, u)).or_insert(0) += 1;
        if self.noting {
            *notes.entry((u, bits)).or_insert(0) += 1;
            *notes.entry((v, bits)).or_insert(0) += 1;
        }
    }
}

/// Whether a copy of weight `w` from `u` to `v` can ever change the matching: a self-loop, a
/// weight `<= 0` or NaN never enters it (and so never collides with anything).
fn may_match(u: Node, v: Node, w: f64) -> bool {
    u != v && w > 0.0
}

/// The copies worker 0 might match, at every worker (see the module docs' *Parallel drops*): a
/// copy that cannot match is dropped on the spot; one with an endpoint matched in the worker's
/// snapshot waits for its time's bound (the heaviest copy of the time, over all workers) and is
/// dropped if the bound is at most twice that endpoint's weight; the rest go on to worker 0.
fn held_dropped<'a>(arrivals: ArrivalCollection<'a>, notes: arrivals::Notes<'a>) -> ArrivalCollection<'a> {
    type Arrival = ((Position, Edge), Time, Diff);
    let (copies, bounds) = heaviest_per_time(arrivals);
    let bounds = bounds.broadcast();
    let mut builder = OperatorBuilder::new("MatchingSnapshot".to_string(), copies.scope());
    let mut input = builder.new_input(copies, Pipeline);
    // Added before the output: the bounds and the notes hold back no output time (the copies
    // wait for their time's bound while holding its capability).
    let mut bounds = builder.new_input(bounds, Pipeline);
    let mut notes = builder.new_input(notes, Pipeline);
    let (output, candidates) = builder.new_output_connection([(0, Antichain::from_elem(Default::default()))]);
    let mut output = OutputBuilder::<_, CapacityContainerBuilder<Vec<Arrival>>>::from(output);
    builder.build(move |_capabilities| {
        let mut snapshot = Snapshot::default();
        // Each time's heaviest copy over all workers, for the times after the snapshot's.
        let mut heaviest: BTreeMap<Time, f64> = BTreeMap::new();
        // Notes by result time, applied once their time is complete.
        let mut pending: BTreeMap<Time, Vec<(Node, u64, Diff)>> = BTreeMap::new();
        // Copies waiting for their time's bound.
        let mut waiting: TimeStash<Arrival> = TimeStash::new();
        move |frontiers| {
            bounds.for_each(|_cap, data| {
                for (bits, t, _) in data.drain(..) {
                    let w = f64::from_bits(bits);
                    let entry = heaviest.entry(t).or_insert(w);
                    *entry = entry.max(w);
                }
            });
            notes.for_each(|_cap, data| {
                for ((x, bits), t, diff) in data.drain(..) {
                    pending.entry(t).or_default().push((x, bits, diff));
                }
            });
            // A note of result time `s` comes back at `s + 1`: the times `s` with `s + 1` behind
            // the notes' frontier are complete.
            while let Some((&s, _)) = pending.first_key_value() {
                if frontiers[2].less_equal(&(s + 1)) {
                    break;
                }
                if let Some((_, changes)) = pending.pop_first() {
                    snapshot.apply(changes);
                }
            }
            snapshot.through = match frontiers[2].frontier().first() {
                None => Some(Time::MAX),
                Some(&f) => f.checked_sub(2),
            };
            let mut output = output.activate();
            input.for_each(|cap, data| {
                let mut session = output.session(&cap);
                for ((position, (u, v, bits)), t, diff) in data.drain(..) {
                    if !may_match(u, v, f64::from_bits(bits)) {
                        continue;
                    }
                    if snapshot.weight(u).is_none() && snapshot.weight(v).is_none() {
                        session.give(((position, (u, v, bits)), t, diff));
                    } else {
                        waiting.stash(&cap, t, ((position, (u, v, bits)), t, diff));
                    }
                }
            });
            while let Some((t, cap, copies)) = waiting.next_complete(&frontiers[1]) {
                // The heaviest copy that can reach worker 0 after the snapshot's state and up
                // to this time's last copy.
                let after = snapshot.through.map_or(0, |s| s.saturating_add(1));
                let bound = heaviest.range(after..=t).map(|(_, &w)| w).fold(0.0f64, f64::max);
                let mut session = output.session(&cap);
                for copy in copies {
                    let ((_, (u, v, _)), _, _) = copy;
                    let holds = |x: Node| snapshot.weight(x).is_some_and(|a| bound <= 2.0 * a);
                    if !holds(u) && !holds(v) {
                        session.give(copy);
                    }
                }
            }
            if let Some(s) = snapshot.through {
                heaviest.retain(|&t, _| t > s);
            }
        }
    });
    candidates.as_collection()
}

/// A worker's snapshot of the matching: each matched vertex's weight as of the end of time
/// `through` (every note of that time and before applied, none after).
#[derive(Default)]
struct Snapshot {
    weight: FxHashMap<Node, f64>,
    through: Option<Time>,
}

impl Snapshot {
    /// Applies one complete time's net notes: the leaving weights first, then the entering.
    fn apply(&mut self, mut changes: Vec<(Node, u64, Diff)>) {
        changes.sort_unstable_by_key(|&(_, _, diff)| diff);
        for (x, bits, diff) in changes {
            if diff < 0 {
                self.weight.remove(&x);
            } else {
                self.weight.insert(x, f64::from_bits(bits));
            }
        }
    }

    fn weight(&self, x: Node) -> Option<f64> {
        self.weight.get(&x).copied()
    }
}

/// The arriving copies as a stream.
type Copies<'a> = StreamVec<'a, Time, ((Position, Edge), Time, Diff)>;

/// Passes the copies through unchanged, and emits at each time, once the copies' frontier has
/// passed it, the weight bits of this worker's heaviest copy that may match (none if it has no
/// such copy).
fn heaviest_per_time<'a>(arrivals: ArrivalCollection<'a>) -> (Copies<'a>, StreamVec<'a, Time, (u64, Time, Diff)>) {
    let mut builder = OperatorBuilder::new("MatchingBound".to_string(), arrivals.inner.scope());
    let mut input = builder.new_input(arrivals.inner, Pipeline);
    let (bounds, bound_stream) = builder.new_output();
    let (copies, copy_stream) = builder.new_output();
    let mut copies = OutputBuilder::<_, CapacityContainerBuilder<Vec<((Position, Edge), Time, Diff)>>>::from(copies);
    let mut bounds = OutputBuilder::<_, CapacityContainerBuilder<Vec<(u64, Time, Diff)>>>::from(bounds);
    builder.build(move |_capabilities| {
        // Each time's heaviest weight (the copies that may match weigh more than 0).
        let mut heaviest: TimeBatches<f64> = TimeBatches::new();
        move |frontiers| {
            let mut copies = copies.activate();
            input.for_each(|cap, data| {
                for &((_, (u, v, bits)), t, _) in data.iter() {
                    let w = f64::from_bits(bits);
                    if may_match(u, v, w) {
                        let heaviest = heaviest.batch(&cap, t);
                        *heaviest = heaviest.max(w);
                    }
                }
                copies.session(&cap).give_container(data);
            });
            let mut bounds = bounds.activate();
            while let Some((t, cap, w)) = heaviest.next_complete(&frontiers[0]) {
                bounds.session(&cap).give((w.to_bits(), t, 1));
            }
        }
    });
    (copy_stream, bound_stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::weight_bits;
    use differential_dataflow::AsCollection;

    #[test]
    fn heavier_edges_replace_what_they_collide_with() {
        let mut m = Matched::default();
        let mut delta = Delta::new();
        let mut notes = Delta::new();
        let w = |x: f64| weight_bits(Some(x));
        m.arrive((1, 2, w(1.0)), &mut delta, &mut notes); // matched
        m.arrive((2, 3, w(2.0)), &mut delta, &mut notes); // 2 > 2 * 1 fails: dropped
        m.arrive((3, 4, w(1.5)), &mut delta, &mut notes); // matched
        m.arrive((2, 3, w(5.1)), &mut delta, &mut notes); // 5.1 > 2 * (1 + 1.5): replaces both
        m.arrive((5, 5, w(9.0)), &mut delta, &mut notes); // self-loop: ignored
        m.arrive((3, 2, w(10.0)), &mut delta, &mut notes); // the same pair, 10 <= 2 * 5.1: dropped
        let mut got: Vec<_> = delta.into_iter().filter(|&(_, d)| d != 0).collect();
        got.sort();
        assert_eq!(got, vec![((2, 3), 1), ((3, 2), 1)]);
        assert_eq!(m.partner[&2], (3, 5.1));
    }

    /// Runs [`held_dropped`] on one worker over `copies` (time, edge), with the notes of result
    /// time 0 back (`x` matched at weight 1) and no later notes: the snapshot stays at time 0
    /// while the copies of times 1 and 2 pass, as when worker 0 lags epochs behind. The copies
    /// that go on to worker 0.
    fn passed(copies: &[(Time, Edge)]) -> Vec<Edge> {
        use std::cell::RefCell;
        use std::rc::Rc;
        use timely::dataflow::operators::{Input, Inspect};
        use timely::dataflow::InputHandleVec;
        let copies = copies.to_vec();
        timely::execute_directly(move |worker| {
            let passed = Rc::new(RefCell::new(Vec::new()));
            let out = passed.clone();
            let mut arrivals: InputHandleVec<Time, ((Position, Edge), Time, Diff)> = InputHandleVec::new();
            let mut notes: InputHandleVec<Time, ((Node, u64), Time, Diff)> = InputHandleVec::new();
            worker.dataflow::<Time, _, _>(|scope| {
                let copies = scope.input_from(&mut arrivals).as_collection();
                let notes = scope.input_from(&mut notes);
                held_dropped(copies, notes).inner.inspect(move |((_, edge), _, _)| out.borrow_mut().push(*edge));
            });
            notes.advance_to(1);
            for x in [1, 2] {
                notes.send(((x, weight_bits(Some(1.0))), 0, 1));
            }
            notes.advance_to(2);
            // The snapshot takes the notes (a copy meeting an empty snapshot would pass at once).
            for _ in 0..100 {
                worker.step();
            }
            for (i, &(t, edge)) in copies.iter().enumerate() {
                arrivals.advance_to(t);
                arrivals.send((((t, 0, i as u64), edge), t, 1));
            }
            arrivals.advance_to(3);
            for _ in 0..100 {
                worker.step();
            }
            let got = passed.borrow().clone();
            got
        })
    }

    #[test]
    fn a_snapshot_drops_only_what_no_copy_since_could_have_unmatched() {
        let w = |x: f64| weight_bits(Some(x));
        // {1, 2} matched at weight 1 as of time 0. At time 2, {1, 5} collides with it and is
        // dropped: no copy since could steal 1 or 2. A self-loop and a weightless copy go too.
        let got = passed(&[(1, (3, 4, w(1.0))), (2, (1, 5, w(1.0))), (2, (6, 6, w(9.0))), (2, (7, 8, w(0.0)))]);
        assert_eq!(got, vec![(3, 4, w(1.0))]);
        // {2, 3} of weight 3 at time 1 may steal 2 (3 > 2 * 1), so {1, 5} at time 2 may match 1.
        let got = passed(&[(1, (2, 3, w(3.0))), (2, (1, 5, w(1.0)))]);
        assert_eq!(got, vec![(2, 3, w(3.0)), (1, 5, w(1.0))]);
        // Likewise within time 2 itself, in either order of the copies.
        let got = passed(&[(2, (1, 5, w(1.0))), (2, (2, 3, w(3.0)))]);
        assert_eq!(got, vec![(1, 5, w(1.0)), (2, 3, w(3.0))]);
        // A copy of weight exactly 2 cannot steal (2 > 2 * 1 fails): {1, 5} is dropped.
        let got = passed(&[(1, (2, 3, w(2.0))), (2, (1, 5, w(1.0)))]);
        assert_eq!(got, Vec::<Edge>::new());
    }
}
