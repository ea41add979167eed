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
