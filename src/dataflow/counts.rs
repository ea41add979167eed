//! Per-time counters that an algorithm reports to the driver for `--stats`, through
//! [`AlgorithmCounts`]: the driver hands one to the dataflows of a process
//! ([`super::GraphInput::with_counts`]), an algorithm that keeps such counts writes them there at
//! every time it applies, and the driver's writer and census read them as epochs complete.
//!
//! **Why.** Some algorithms know numbers about the run for free that the driver would otherwise
//! have to compute or could not see at all: how often a bounded-work algorithm fell back to a
//! rebuild from scratch (the fully dynamic WCC forest, [`super::wcc_dynamic`]), or, when an
//! operator knows the whole graph's present vertices and edges, those (the census that
//! `--stats` reports). The channel is generic, so the driver needs to know no algorithm to read it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::types::Time;

/// Counters by time that the algorithms of one process report (see the module docs): fallback
/// rebuilds, and the graph's census when an algorithm knows it. Cloning shares the counters.
#[derive(Clone, Debug, Default)]
pub struct AlgorithmCounts(Arc<Mutex<Record>>);

#[derive(Debug, Default)]
struct Record {
    /// An algorithm that counts fallback rebuilds runs in this process.
    fallbacks_active: bool,
    fallbacks: BTreeMap<Time, u64>,
    /// An algorithm records the graph's census: per time applied, the present vertices and
    /// edges after it (see [`AlgorithmCounts::census_below`]), in time order. A list, not a
    /// map: the times come in order (one forest applies them).
    census_active: bool,
    /// The driver reads the census (`--stats`): without a reader nothing is recorded (a
    /// windowed run records a census per event time, which would pile up for the whole run).
    census_wanted: bool,
    census: VecDeque<(Time, (u64, u64))>,
    /// The frontiers the reader will query, in rising order, each declared before any time
    /// at or after the one before it is recorded: a record may replace the one before it
    /// when no query frontier lies between them, so the list holds about one record per epoch
    /// in flight, not one per time (a window's first fill applies a million event times in one
    /// epoch).
    boundaries: VecDeque<Time>,
}

impl AlgorithmCounts {
    fn lock(&self) -> MutexGuard<'_, Record> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Marks the fallback counts as reported: an algorithm that counts its fallback rebuilds
    /// (the fully dynamic WCC path) runs in this process, so every epoch has a count (0 too).
    pub fn activate_fallbacks(&self) {
        self.lock().fallbacks_active = true;
    }

    /// Whether an algorithm reports fallback rebuilds in this process.
    pub fn fallbacks_active(&self) -> bool {
        self.lock().fallbacks_active
    }

    /// Records `rebuilds` fallback rebuilds at time `t`.
    pub fn record_fallbacks(&self, t: Time, rebuilds: u64) {
        if rebuilds > 0 {
            *self.lock().fallbacks.entry(t).or_insert(0) += rebuilds;
        }
    }

    /// Removes the fallback rebuilds of the times below `frontier` and returns their sum.
    pub fn take_fallbacks_below(&self, frontier: Time) -> u64 {
        let mut record = self.lock();
        let later = record.fallbacks.split_off(&frontier);
        let done = std::mem::replace(&mut record.fallbacks, later);
        done.values().sum()
    }

    /// Marks the counts as holding the graph's census: an algorithm knows the graph's present
    /// vertices and edges at every time it applies (the fully dynamic WCC path: its forest at
    /// worker 0, told the links of the other workers' shares in the shares layout), and they
    /// are the `--stats` counts (`"vertices"`: the vertex set; `"edges"`: the present pairs
    /// `{u, v}`, `u != v`), for free.
    pub fn activate_census(&self) {
        self.lock().census_active = true;
    }

    /// Whether an algorithm records the graph's census here.
    pub fn census_active(&self) -> bool {
        self.lock().census_active
    }

    /// Marks the census as read (the driver's `--stats`): an algorithm that keeps one records it
    /// only then ([`AlgorithmCounts::census_wanted`], asked when its dataflow is built).
    pub fn want_census(&self) {
        self.lock().census_wanted = true;
    }

    /// Whether the driver reads the census.
    pub fn census_wanted(&self) -> bool {
        self.lock().census_wanted
    }

    /// Declares that the census will be queried at `frontier` ([`AlgorithmCounts::census_below`]),
    /// before any time at or after the frontier declared before it is recorded. Records between
    /// two declared frontiers then replace each other (only the last before a frontier is ever
    /// read). A frontier not above the last one declared adds nothing.
    pub fn expect_census_below(&self, frontier: Time) {
        let boundaries = &mut self.lock().boundaries;
        if boundaries.back().is_none_or(|&last| last < frontier) {
            boundaries.push_back(frontier);
        }
    }

    /// Records the census after time `t`: `vertices` present, `edges` present.
    pub fn record_census(&self, t: Time, vertices: u64, edges: u64) {
        let Record { census, boundaries, .. } = &mut *self.lock();
        match census.back_mut() {
            Some(last) if last.0 == t => last.1 = (vertices, edges),
            // A later time replaces the last record when every query frontier up to `t` is
            // declared and none lies in `(last, t]`: no query can read the last record then.
            Some(last)
                if last.0 < t
                    && boundaries.back().is_some_and(|&end| t < end)
                    && !boundaries.iter().any(|&b| last.0 < b && b <= t) =>
            {
                *last = (t, (vertices, edges))
            }
            Some(last) if last.0 > t => {
                // Not in time order: its place (the census stays sorted by time).
                let at = census.partition_point(|e| e.0 < t);
                if census[at].0 == t {
                    census[at].1 = (vertices, edges);
                } else {
                    census.insert(at, (t, (vertices, edges)));
                }
            }
            _ => census.push_back((t, (vertices, edges))),
        }
    }

    /// The census after the last time below `frontier` that changed the graph (`None`: none
    /// did since the last call), forgetting the times before it.
    pub fn census_below(&self, frontier: Time) -> Option<(u64, u64)> {
        let Record { census, boundaries, .. } = &mut *self.lock();
        let below = census.partition_point(|e| e.0 < frontier);
        let last = below.checked_sub(1).map(|i| census[i].1);
        census.drain(..below);
        while boundaries.front().is_some_and(|&b| b <= frontier) {
            boundaries.pop_front();
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The census against a map of every recorded time: in order, out of order, repeated times,
    /// queried at rising frontiers.
    #[test]
    fn census_below_is_the_last_recorded_time_below_the_frontier() {
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let counts = AlgorithmCounts::default();
            let mut oracle: BTreeMap<Time, (u64, u64)> = BTreeMap::new();
            let mut frontier = 0;
            for _ in 0..200 {
                let t = frontier + rng.gen_range(0..30);
                let census = (rng.gen_range(0..100), rng.gen_range(0..100));
                counts.record_census(t, census.0, census.1);
                oracle.insert(t, census);
                if rng.gen_bool(0.2) {
                    frontier += rng.gen_range(0..20);
                    let later = oracle.split_off(&frontier);
                    let want = std::mem::replace(&mut oracle, later).into_values().next_back();
                    assert_eq!(counts.census_below(frontier), want, "seed {seed}: frontier {frontier}");
                }
            }
        }
    }

    /// With the query frontiers declared ahead (as the driver declares each epoch's before
    /// feeding it), the census answers every query as a map of every recorded time does, and
    /// holds about one record per declared frontier, not one per time.
    #[test]
    fn declared_frontiers_keep_one_record_per_epoch_with_the_same_answers() {
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let counts = AlgorithmCounts::default();
            let mut oracle: BTreeMap<Time, (u64, u64)> = BTreeMap::new();
            // Epoch frontiers, declared up to two epochs ahead of the one queried.
            let mut frontiers: Vec<Time> = Vec::new();
            let mut end = 0;
            for _ in 0..60 {
                end += rng.gen_range(1..40);
                frontiers.push(end);
            }
            let (mut declared, mut next_time, mut most) = (0, 0, 0);
            for (queried, &frontier) in frontiers.iter().enumerate() {
                while declared < frontiers.len() && declared <= queried + 2 {
                    counts.expect_census_below(frontiers[declared]);
                    declared += 1;
                }
                // Times up to the last declared frontier may be applied (in order, some skipped).
                let limit = frontiers[declared - 1];
                while next_time < limit && rng.gen_bool(0.9) {
                    if rng.gen_bool(0.7) {
                        let census = (rng.gen_range(0..100), rng.gen_range(0..100));
                        counts.record_census(next_time, census.0, census.1);
                        oracle.insert(next_time, census);
                    }
                    next_time += 1;
                }
                most = most.max(counts.lock().census.len());
                let later = oracle.split_off(&frontier);
                let want = std::mem::replace(&mut oracle, later).into_values().next_back();
                assert_eq!(counts.census_below(frontier), want, "seed {seed}: frontier {frontier}");
            }
            // At most a record per declared, unqueried frontier, and one after the last.
            assert!(most <= 4, "seed {seed}: {most} records held at once");
        }
    }
}
