//! The forests `--shards` times: [`ShardedForests`] (K summary forests and their union forest,
//! composed as the dataflow composes them), [`OneForest`] (the single forest they are compared
//! with), the [`Labels`] their label changes describe, and a stream's [`epochs`].

use std::collections::HashMap;

use super::clock::{Spent, Stamp};
use crate::bench::{BenchError, Stream};
use crate::dataflow::wcc_dynamic::{pair_share, DynamicForest};
use crate::types::{Diff, Node};

/// An edge copy change `(src, dst, diff)`.
pub type Record = (Node, Node, Diff);

/// A forest's output record: `((vertex, label), ±1)`, or in summary mode `((a, b), ±1)`.
type Change = ((Node, u64), Diff);

/// The records of a stream's epochs, in order: epoch 0 is the initial graph (every edge
/// inserted), then `batch` updates each (as the bench's systems feed them).
pub fn epochs(stream: &Stream) -> impl Iterator<Item = Vec<Record>> + '_ {
    let initial = std::iter::once(stream.initial.iter().map(|&(s, d)| (s, d, 1)).collect());
    let updates =
        stream.updates.chunks(stream.batch.max(1)).map(|c| c.iter().map(|u| (u.src, u.dst, u.diff as Diff)).collect());
    initial.chain(updates)
}

/// A forest's records as the forest operator batches them: `(a, b, diff)` with `a <= b`.
fn ordered((a, b, d): Record) -> Record {
    (a.min(b), a.max(b), d)
}

/// The labels a forest's label changes describe: vertex → the smallest id of its component.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    map: HashMap<Node, Node>,
}

impl Labels {
    /// Applies one time's net label changes `((vertex, label), ±1)`: a vertex loses at most the
    /// label it has and gains at most one; anything else is an error naming `who`.
    pub fn absorb(&mut self, changes: &[Change], who: &str) -> Result<(), BenchError> {
        for &((v, l), d) in changes.iter().filter(|c| c.1 < 0) {
            if d != -1 || self.map.get(&v) != Some(&l) {
                return Err(BenchError::Shards(format!(
                    "{who} retracts ({v}, {l}) {} times, which it does not hold",
                    -d
                )));
            }
            self.map.remove(&v);
        }
        for &((v, l), d) in changes.iter().filter(|c| c.1 > 0) {
            if d != 1 || self.map.contains_key(&v) {
                return Err(BenchError::Shards(format!("{who} gives vertex {v} a second label {l}")));
            }
            self.map.insert(v, l);
        }
        Ok(())
    }

    /// Vertex → label.
    pub fn map(&self) -> &HashMap<Node, Node> {
        &self.map
    }

    /// The smallest vertex whose label differs between `self` and `other` (or that only one of
    /// them labels), with both labels; `None` if they are equal.
    pub fn first_difference(&self, other: &Labels) -> Option<(Node, Option<Node>, Option<Node>)> {
        let differs = |v: &Node| self.map.get(v) != other.map.get(v);
        let mine = self.map.keys().filter(|v| differs(v));
        let theirs = other.map.keys().filter(|v| differs(v));
        mine.chain(theirs).min().map(|&v| (v, self.map.get(&v).copied(), other.map.get(&v).copied()))
    }
}

/// One epoch of a sharded run: what each forest's apply took, and what it was given.
#[derive(Clone, Debug, Default)]
pub struct EpochWork {
    /// Each share's apply, in share order (one entry per share).
    pub shares: Vec<Spent>,
    /// The union forest's apply.
    pub union: Spent,
    /// Records (edge copy changes) the epoch fed.
    pub records: usize,
    /// Records each share received, in share order.
    pub share_records: Vec<usize>,
    /// Records the union forest received: the shares' forest-edge and presence changes.
    pub union_records: usize,
    /// The shares' fallback rebuilds in the epoch (their search budget ran out).
    pub share_fallbacks: u64,
    /// The union forest's fallback rebuilds in the epoch (0 or 1).
    pub union_fallbacks: u64,
}

impl EpochWork {
    /// The slowest share's apply, in CPU seconds.
    pub fn max_share_secs(&self) -> f64 {
        self.shares.iter().map(|s| s.cpu).fold(0.0, f64::max)
    }

    /// The shares' applies, in CPU seconds.
    pub fn shares_secs(&self) -> f64 {
        self.shares.iter().map(|s| s.cpu).sum()
    }

    /// The epoch's critical path with one core per share, in CPU seconds: the slowest share,
    /// then the union.
    pub fn critical_secs(&self) -> f64 {
        self.max_share_secs() + self.union.cpu
    }

    /// [`EpochWork::critical_secs`] on the wall clock.
    pub fn critical_wall_secs(&self) -> f64 {
        self.shares.iter().map(|s| s.wall).fold(0.0, f64::max) + self.union.wall
    }

    /// The epoch's total work, in CPU seconds: every share and the union.
    pub fn work_secs(&self) -> f64 {
        self.shares_secs() + self.union.cpu
    }
}

/// K summary forests and their union forest, one epoch at a time, in one thread: an epoch's
/// records go to the share [`pair_share`] names (as the dataflow's exchange routes them); each
/// share applies its records ([`DynamicForest::summary`]: its output is the net change of its
/// forest edges `((a, b), ±1)` and of its vertices' presence `((v, v), ±1)`), timed alone; then
/// the union forest ([`DynamicForest::new`]) applies the shares' outputs, in share order, as
/// edge copy changes `(a, b, ±1)`, a presence change being a self-loop `(v, v, ±1)`, timed alone
/// (on both clocks, see [`Spent`]).
/// Its label changes are kept in [`Labels`].
pub struct ShardedForests {
    shares: Vec<DynamicForest>,
    union: DynamicForest,
    labels: Labels,
    /// Each share's records of the open epoch.
    routed: Vec<Vec<Record>>,
    /// The shares' outputs of the open epoch: the union forest's records.
    forwarded: Vec<Record>,
    /// The union forest's label changes of the open epoch.
    changes: Vec<Change>,
}

impl ShardedForests {
    /// `shares` (≥ 1) empty summary forests and an empty union forest, each with the fallback
    /// budget factor `budget` (see [`DynamicForest::new`]).
    pub fn new(shares: usize, budget: f64) -> Self {
        assert!(shares > 0, "ShardedForests: no shares");
        ShardedForests {
            shares: (0..shares).map(|_| DynamicForest::summary(budget)).collect(),
            union: DynamicForest::new(budget),
            labels: Labels::default(),
            routed: vec![Vec::new(); shares],
            forwarded: Vec::new(),
            changes: Vec::new(),
        }
    }

    /// Applies one epoch's records (edge copy changes, any order) and returns its figures; an
    /// error if the union forest's label changes do not fit the labels it gave before.
    pub fn apply(&mut self, records: impl IntoIterator<Item = Record>) -> Result<EpochWork, BenchError> {
        let k = self.shares.len();
        let mut fed = 0;
        for r in records {
            self.routed[pair_share(r.0, r.1, k)].push(ordered(r));
            fed += 1;
        }
        let share_records: Vec<usize> = self.routed.iter().map(Vec::len).collect();
        let mut spent = Vec::with_capacity(k);
        let fallbacks = |forests: &[DynamicForest]| forests.iter().map(DynamicForest::fallbacks).sum::<u64>();
        let (shares_before, union_before) = (fallbacks(&self.shares), self.union.fallbacks());
        let forwarded = &mut self.forwarded;
        forwarded.clear();
        // Room for the usual output, so the shares' timed applies rarely grow it.
        forwarded.reserve(fed);
        for (share, batch) in self.shares.iter_mut().zip(&mut self.routed) {
            let start = Stamp::now();
            // The operator hands each change to the output session as it is found: the same.
            share.apply_with(&[], batch, &mut |(a, b), d| forwarded.push((a, b, d)));
            spent.push(start.spent());
            // Freed as the operator frees an applied time's batch (an initial graph's is large).
            *batch = Vec::new();
        }
        let union_records = forwarded.len();
        self.changes.clear();
        let start = Stamp::now();
        self.union.apply(&[], forwarded, &mut self.changes);
        let union = start.spent();
        *forwarded = Vec::new();
        self.labels.absorb(&self.changes, "the union forest")?;
        Ok(EpochWork {
            shares: spent,
            union,
            records: fed,
            share_records,
            union_records,
            share_fallbacks: fallbacks(&self.shares) - shares_before,
            union_fallbacks: self.union.fallbacks() - union_before,
        })
    }

    /// The labels the union forest has given so far.
    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    /// Each share's present links (vertex pairs with a positive count), in share order.
    pub fn share_links(&self) -> Vec<usize> {
        self.shares.iter().map(DynamicForest::links).collect()
    }

    /// The union forest's present links.
    pub fn union_links(&self) -> usize {
        self.union.links()
    }
}

/// One forest over the whole stream (the default layout, one worker): the baseline.
pub struct OneForest {
    forest: DynamicForest,
    labels: Labels,
    changes: Vec<Change>,
}

impl OneForest {
    /// An empty forest with the fallback budget factor `budget`.
    pub fn new(budget: f64) -> Self {
        OneForest { forest: DynamicForest::new(budget), labels: Labels::default(), changes: Vec::new() }
    }

    /// Applies one epoch's records and returns the time the forest's apply took.
    pub fn apply(&mut self, records: impl IntoIterator<Item = Record>) -> Result<Spent, BenchError> {
        let mut batch: Vec<Record> = records.into_iter().map(ordered).collect();
        self.changes.clear();
        let start = Stamp::now();
        self.forest.apply(&[], &mut batch, &mut self.changes);
        let spent = start.spent();
        drop(batch);
        self.labels.absorb(&self.changes, "the one forest")?;
        Ok(spent)
    }

    /// The labels the forest has given so far.
    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    /// The label changes `((vertex, label), ±1)` of the last epoch applied: how much of the
    /// graph's connectivity it changed.
    pub fn last_changes(&self) -> usize {
        self.changes.len()
    }

    /// The labels, the forest dropped.
    pub fn into_labels(self) -> Labels {
        self.labels
    }

    /// The forest's present links.
    pub fn links(&self) -> usize {
        self.forest.links()
    }

    /// The forest's fallback rebuilds so far.
    pub fn fallbacks(&self) -> u64 {
        self.forest.fallbacks()
    }
}
