//! **The current result** a [`ResultSink`](super::ResultSink) keeps for `--output`: a count per
//! `(key, value)`, indexed by key.
//!
//! A vertex result has one value per key, and a change moves a key from one value to another
//! (`(v, old) -1`, `(v, new) +1`, consecutive in an epoch's sorted changes). Indexed by the pair,
//! such a move touches two hash slots, two cache misses in a table of millions of keys; indexed
//! by key, it is one. A key with a single value (nearly all) keeps it in `one`; a key with
//! several distinct values at once (a multiset result, or a key between two values within a
//! run of changes) keeps them in `many`.
//!
//! ```
//! use ripples::sinks::KeyedState;
//! let mut state = KeyedState::default();
//! // Vertex 2 gets label 1, then moves to label 0; vertex 5 has two values at once.
//! state.apply_run(2, &[(1, 1)]);
//! state.apply_run(2, &[(1, -1), (0, 1)]);
//! state.apply_run(5, &[(7, 1), (8, 2)]);
//! assert_eq!(state.into_sorted(), vec![((2, 0), 1), ((5, 7), 1), ((5, 8), 2)]);
//! ```

use rustc_hash::FxHashMap;

use crate::types::{Diff, Node};

/// A count per `(key, value)`, indexed by key (see the module docs). Counts that reach 0 are
/// dropped.
#[derive(Debug, Default)]
pub struct KeyedState {
    /// Keys with exactly one value of non-zero count.
    one: FxHashMap<Node, (u64, Diff)>,
    /// Keys with several values of non-zero count, sorted by value.
    many: FxHashMap<Node, Vec<(u64, Diff)>>,
    /// Scratch: a key's values while a run is applied.
    scratch: Vec<(u64, Diff)>,
}

impl KeyedState {
    /// Applies the changes `(value, diff)` of one key, in any order.
    pub fn apply_run(&mut self, key: Node, changes: &[(u64, Diff)]) {
        // The common case: one value, moved or recounted, without leaving `one`.
        if self.many.is_empty() || !self.many.contains_key(&key) {
            match self.one.entry(key) {
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    if let [(value, diff)] = changes {
                        let (v, c) = e.get_mut();
                        if *v == *value {
                            *c += diff;
                            if *c == 0 {
                                e.remove();
                            }
                            return;
                        }
                    }
                    if let [(old, minus), (new, plus)] = changes {
                        let (v, c) = *e.get();
                        if v == *old && c + minus == 0 && new != old && *plus != 0 {
                            *e.get_mut() = (*new, *plus);
                            return;
                        }
                    }
                    let current = e.remove();
                    self.scratch.clear();
                    self.scratch.push(current);
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    if let [(value, diff)] = changes {
                        if *diff != 0 {
                            e.insert((*value, *diff));
                        }
                        return;
                    }
                    self.scratch.clear();
                }
            }
        } else {
            self.scratch.clear();
            self.scratch.extend(self.many.remove(&key).unwrap_or_default());
        }
        // The general case: merge the run into the key's values.
        self.scratch.extend_from_slice(changes);
        self.scratch.sort_unstable_by_key(|&(value, _)| value);
        let mut merged: Vec<(u64, Diff)> = Vec::with_capacity(self.scratch.len());
        for &(value, diff) in &self.scratch {
            match merged.last_mut() {
                Some(last) if last.0 == value => last.1 += diff,
                _ => merged.push((value, diff)),
            }
        }
        merged.retain(|&(_, count)| count != 0);
        match merged.len() {
            0 => {}
            1 => {
                self.one.insert(key, merged[0]);
            }
            _ => {
                self.many.insert(key, merged);
            }
        }
    }

    /// Every `(key, value)` with its count, sorted, emptying the state.
    pub fn into_sorted(self) -> Vec<((Node, u64), Diff)> {
        let mut sorted: Vec<((Node, u64), Diff)> = self.one.into_iter().map(|(k, (v, c))| ((k, v), c)).collect();
        sorted.extend(self.many.into_iter().flat_map(|(k, values)| values.into_iter().map(move |(v, c)| ((k, v), c))));
        sorted.sort_unstable_by_key(|x| x.0);
        sorted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    /// Random runs of changes (moves, recounts, several values per key, cancelling runs) against
    /// a map of `(key, value)` counts.
    #[test]
    fn keyed_state_matches_a_map_of_pairs() {
        for seed in 0..50u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut state = KeyedState::default();
            let mut oracle: BTreeMap<(Node, u64), Diff> = BTreeMap::new();
            for _ in 0..2_000 {
                let key = rng.gen_range(0..20);
                let values: Vec<(u64, Diff)> =
                    oracle.range((key, 0)..=(key, u64::MAX)).map(|(&(_, v), &c)| (v, c)).collect();
                let mut run: Vec<(u64, Diff)> = Vec::new();
                match rng.gen_range(0..4) {
                    // A move of one of its values (or of nothing) to another.
                    0 => {
                        if let Some(&(v, c)) = values.first() {
                            run.push((v, -c));
                        }
                        run.push((rng.gen_range(0..6), rng.gen_range(1..3)));
                    }
                    // One change.
                    1 => run.push((rng.gen_range(0..6), if rng.gen_bool(0.5) { 1 } else { -1 })),
                    // Several, any order.
                    2 => {
                        for _ in 0..rng.gen_range(1..5) {
                            run.push((rng.gen_range(0..6), rng.gen_range(-2..3)));
                        }
                    }
                    // Everything the key has goes.
                    _ => run.extend(values.iter().map(|&(v, c)| (v, -c))),
                }
                for &(v, d) in &run {
                    let count = oracle.entry((key, v)).or_insert(0);
                    *count += d;
                    if *count == 0 {
                        oracle.remove(&(key, v));
                    }
                }
                state.apply_run(key, &run);
            }
            let want: Vec<((Node, u64), Diff)> = oracle.into_iter().collect();
            assert_eq!(state.into_sorted(), want, "seed {seed}");
        }
    }
}
