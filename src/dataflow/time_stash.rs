//! **Records by time** for the operators that keep exact state and must see all of time `t`
//! before time `t + 1` (WCC's forests, triangles, core numbers): records are stashed under their
//! time with a capability for it, and handed back a whole time at a time, in time order.
//!
//! * [`TimeStash::ready`]: the times the frontier has reached (`<=` its least element) — for an
//!   operator that may act on the frontier's own time (the insert-only WCC path, which only
//!   ever sees insertions at that time);
//! * [`TimeStash::next_complete`]: the next time the frontier has passed — complete, nothing
//!   more can arrive for it.
//!
//! [`TimeBatches`] is the same by time, but each time's records go into a batch of the
//! operator's own making (say, one that keeps them compact and consolidated while they arrive).

use std::collections::BTreeMap;

use timely::dataflow::operators::{Capability, InputCapability};
use timely::progress::frontier::MutableAntichain;

use crate::types::Time;

/// Records waiting for their time (see the module docs): a [`TimeBatches`] of plain vectors.
pub(crate) struct TimeStash<D>(TimeBatches<Vec<D>>);

impl<D> TimeStash<D> {
    pub(crate) fn new() -> Self {
        TimeStash(TimeBatches::new())
    }

    /// Stashes `record` under `time`, holding a capability for it (output port 0).
    pub(crate) fn stash(&mut self, cap: &InputCapability<Time>, time: Time, record: D) {
        self.0.batch(cap, time).push(record);
    }

    /// Stashes every `(time, record)` of `records`, one map lookup per run of equal times (a
    /// container's records usually share its time).
    pub(crate) fn stash_all(&mut self, cap: &InputCapability<Time>, records: impl IntoIterator<Item = (Time, D)>) {
        let mut records = records.into_iter().peekable();
        while let Some((time, first)) = records.next() {
            let batch = self.0.batch(cap, time);
            batch.push(first);
            while let Some((_, record)) = records.next_if(|&(t, _)| t == time) {
                batch.push(record);
            }
        }
    }

    /// Stashed times the frontier has reached (`<=` its least element), in order.
    pub(crate) fn ready(&mut self, frontier: &MutableAntichain<Time>) -> Vec<(Capability<Time>, Vec<D>)> {
        self.0.ready(frontier)
    }

    /// The earliest stashed time the frontier has passed (complete), with its capability and
    /// records; `None` when there is none.
    pub(crate) fn next_complete(
        &mut self,
        frontier: &MutableAntichain<Time>,
    ) -> Option<(Time, Capability<Time>, Vec<D>)> {
        self.0.next_complete(frontier)
    }
}

/// A batch per time, with a capability for it, handed back a whole time at a time, in time order
/// (see the module docs).
pub(crate) struct TimeBatches<B> {
    pending: BTreeMap<Time, (Capability<Time>, B)>,
}

impl<B: Default> TimeBatches<B> {
    pub(crate) fn new() -> Self {
        TimeBatches { pending: BTreeMap::new() }
    }

    /// The batch of `time` (empty if new), holding a capability for it (output port 0).
    pub(crate) fn batch(&mut self, cap: &InputCapability<Time>, time: Time) -> &mut B {
        &mut self.pending.entry(time).or_insert_with(|| (cap.delayed(&time, 0), B::default())).1
    }

    /// Batched times the frontier has reached (`<=` its least element), in order.
    pub(crate) fn ready(&mut self, frontier: &MutableAntichain<Time>) -> Vec<(Capability<Time>, B)> {
        let least = frontier.frontier().iter().min().copied();
        let mut out = Vec::new();
        while let Some((&t, _)) = self.pending.first_key_value() {
            if least.map(|l| t > l).unwrap_or(false) {
                break;
            }
            out.extend(self.pending.pop_first().map(|(_, entry)| entry));
        }
        out
    }

    /// The earliest time the frontier has passed (complete), with its capability and batch;
    /// `None` when there is none.
    pub(crate) fn next_complete(&mut self, frontier: &MutableAntichain<Time>) -> Option<(Time, Capability<Time>, B)> {
        let (&t, _) = self.pending.first_key_value()?;
        if frontier.less_equal(&t) {
            return None;
        }
        let (cap, batch) = self.pending.pop_first()?.1;
        Some((t, cap, batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::sync::{Arc, Mutex};
    use timely::container::CapacityContainerBuilder;
    use timely::dataflow::channels::pact::Pipeline;
    use timely::dataflow::operators::generic::operator::Operator;
    use timely::dataflow::operators::vec::ToStream;

    /// `stash_all` hands back each time's records in the order they came, every time once,
    /// times in order: against records grouped by time one at a time into a map.
    #[test]
    fn stash_all_groups_runs_of_times_like_one_record_at_a_time() {
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            // Runs of equal times, in no particular order of times.
            let mut records: Vec<(Time, u64)> = Vec::new();
            while records.len() < 300 {
                let t = rng.gen_range(0..8);
                for _ in 0..rng.gen_range(1..20) {
                    records.push((t, records.len() as u64));
                }
            }
            let mut expected: BTreeMap<Time, Vec<u64>> = BTreeMap::new();
            for &(t, x) in &records {
                expected.entry(t).or_default().push(x);
            }
            let got = Arc::new(Mutex::new(Vec::new()));
            let out = got.clone();
            let input = records.clone();
            timely::execute_directly(move |worker| {
                worker.dataflow::<Time, _, _>(|scope| {
                    input.to_stream(scope).unary_frontier::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                        Pipeline,
                        "Stash",
                        |_cap, _info| {
                            let mut stash: TimeStash<u64> = TimeStash::new();
                            move |(input, frontier), _output| {
                                input.for_each(|cap, data| stash.stash_all(&cap, data.drain(..)));
                                while let Some((t, _cap, records)) = stash.next_complete(frontier) {
                                    out.lock().expect("not poisoned").push((t, records));
                                }
                            }
                        },
                    );
                });
            });
            let got: Vec<(Time, Vec<u64>)> = got.lock().expect("not poisoned").clone();
            assert_eq!(got, expected.into_iter().collect::<Vec<_>>(), "seed {}", seed);
        }
    }
}
