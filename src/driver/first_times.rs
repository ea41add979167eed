//! **First times**: for the census of a stream without deletions, the earliest time each key
//! (a vertex or a vertex pair) came with, in an open-addressing table that is filled a batch at
//! a time with its slots prefetched ahead.
//!
//! Counting the distinct pairs of a stream is one random access per record into a table of every
//! pair, far larger than the caches (R-MAT 18: 3.8 M pairs). One access at a time, each waits
//! for its cache miss, and the census cost more than the algorithm it counted (`run wcc` over
//! insertions with `--stats`). Here a batch's slots are computed first and each probe prefetches
//! the slot of the record [`AHEAD`] places later, so that many misses are in flight at once.
//! A record whose key is held at a later time moves the key to its own time, so the table is
//! the same in any arrival order, and the moves it reports, summed per time, are the changes of
//! the number of keys present (the unit test checks both against a map of earliest times).

use crate::dataflow::id_index::prefetch_ptr;
use crate::types::{Diff, Node, Time};

/// How many records ahead a probe prefetches.
const AHEAD: usize = 16;

/// A key no record has: pairs are `(a, b)` with `a < b`, vertices `(v, 0)`.
const EMPTY: (Node, Node) = (Node::MAX, Node::MAX);

/// The earliest time of each key seen (see the module docs).
#[derive(Default)]
pub(crate) struct FirstTimes {
    /// `(key, time)`; a power of two in length (or empty); `EMPTY` marks a free slot.
    slots: Vec<((Node, Node), Time)>,
    len: usize,
    /// The slots a batch's keys hash to (kept to spare an allocation per batch).
    at: Vec<usize>,
}

impl FirstTimes {
    /// Keys held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The time `key` is held at.
    #[cfg(test)]
    fn get(&self, key: (Node, Node)) -> Option<Time> {
        if self.slots.is_empty() {
            return None;
        }
        let mut at = self.slot_of(key);
        while self.slots[at].0 != EMPTY {
            if self.slots[at].0 == key {
                return Some(self.slots[at].1);
            }
            at = (at + 1) & (self.slots.len() - 1);
        }
        None
    }

    fn slot_of(&self, key: (Node, Node)) -> usize {
        let h = (key.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key.1.rotate_left(31)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        (h >> 20) as usize & (self.slots.len() - 1)
    }

    /// Room for `more` keys at most 3/4 full.
    fn reserve(&mut self, more: usize) {
        let need = (self.len + more) * 4 / 3 + 1;
        if need <= self.slots.len() {
            return;
        }
        let old = std::mem::replace(&mut self.slots, vec![(EMPTY, 0); need.next_power_of_two().max(1024)]);
        for (key, t) in old.into_iter().filter(|(key, _)| *key != EMPTY) {
            let mut at = self.slot_of(key);
            while self.slots[at].0 != EMPTY {
                at = (at + 1) & (self.slots.len() - 1);
            }
            self.slots[at] = (key, t);
        }
    }

    /// Applies `records` (`(key, time)`, any order): a new key is held at its time (`(time, 1)`
    /// goes to `moved`); a key held at a later time moves to the earlier one (`(later, -1)`,
    /// `(time, 1)`); any other record changes nothing.
    pub(crate) fn insert_all(&mut self, records: &[((Node, Node), Time)], moved: &mut Vec<(Time, Diff)>) {
        self.reserve(records.len());
        let mask = self.slots.len() - 1;
        let mut at = std::mem::take(&mut self.at);
        at.clear();
        at.extend(records.iter().map(|&(key, _)| self.slot_of(key)));
        for (i, &(key, t)) in records.iter().enumerate() {
            debug_assert!(key != EMPTY, "the empty key in the census");
            if let Some(&ahead) = at.get(i + AHEAD) {
                prefetch_ptr(self.slots.as_ptr().wrapping_add(ahead));
            }
            let mut slot = at[i];
            loop {
                let held = &mut self.slots[slot];
                if held.0 == key {
                    if t < held.1 {
                        moved.push((held.1, -1));
                        moved.push((t, 1));
                        held.1 = t;
                    }
                    break;
                }
                if held.0 == EMPTY {
                    *held = (key, t);
                    self.len += 1;
                    moved.push((t, 1));
                    break;
                }
                slot = (slot + 1) & mask;
            }
        }
        self.at = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    /// The table against a map of earliest times, and the moves against the changes of the
    /// number of keys held per time: random keys (few distinct, so that they repeat, with times
    /// out of order), in random batches, through several growths.
    #[test]
    fn first_times_match_a_map_of_earliest_times() {
        for seed in 0..12u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let distinct = [10u64, 1_000, 20_000][seed as usize % 3];
            let mut table = FirstTimes::default();
            let mut want: BTreeMap<(Node, Node), Time> = BTreeMap::new();
            let mut net: BTreeMap<Time, Diff> = BTreeMap::new();
            for _ in 0..40 {
                let batch: Vec<((Node, Node), Time)> = (0..rng.gen_range(0..3_000))
                    .map(|_| {
                        let a = rng.gen_range(0..distinct);
                        let key = if rng.gen_bool(0.3) { (a, 0) } else { (a, a + 1 + rng.gen_range(0..3)) };
                        (key, rng.gen_range(0..100))
                    })
                    .collect();
                let mut moved = Vec::new();
                table.insert_all(&batch, &mut moved);
                for &(key, t) in &batch {
                    let first = want.entry(key).or_insert(t);
                    *first = (*first).min(t);
                }
                for (t, d) in moved {
                    *net.entry(t).or_insert(0) += d;
                }
            }
            assert_eq!(table.len(), want.len(), "seed {seed}: keys held");
            for (&key, &t) in &want {
                assert_eq!(table.get(key), Some(t), "seed {seed}: key {key:?}");
            }
            let mut per_time: BTreeMap<Time, Diff> = BTreeMap::new();
            for &t in want.values() {
                *per_time.entry(t).or_insert(0) += 1;
            }
            net.retain(|_, d| *d != 0);
            assert_eq!(net, per_time, "seed {seed}: the moves do not add up to the keys' first times");
        }
    }
}
