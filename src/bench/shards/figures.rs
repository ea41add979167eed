//! The figures of a `--shards` run ([`ShardsReport`], the `--json` object): per number of shares
//! K, per phase ([`Phase`]: the initial graph, the churn epochs), the sums over the phase's
//! epochs of the shares' and the union forest's work and of the critical path, against one
//! forest's time on the same epochs. Times are CPU time (see [`Spent`]) unless named `wall`.

use serde::{Deserialize, Serialize};

use super::clock::Spent;
use super::forests::EpochWork;
use crate::bench::Scenario;

/// Seconds as milliseconds rounded to 0.1 µs (the per-epoch series of the JSON).
fn ms(secs: f64) -> f64 {
    (secs * 1e7).round() / 1e4
}

/// One phase's figures for K shares: sums over its epochs, in milliseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Phase {
    /// Epochs in the phase.
    pub epochs: usize,
    /// Records (edge copy changes) the phase fed.
    pub records: u64,
    /// One forest's applies (the baseline).
    pub one_forest_ms: f64,
    /// One forest's applies on the wall clock.
    pub one_forest_wall_ms: f64,
    /// Every share's applies: the shares' total work.
    pub shares_ms: f64,
    /// Each epoch's slowest share, summed.
    pub max_share_ms: f64,
    /// The union forest's applies.
    pub union_ms: f64,
    /// Each epoch's slowest share plus the union, summed: the time with one core per share.
    pub critical_ms: f64,
    /// `one_forest_ms / critical_ms`.
    pub speedup: f64,
    /// The critical path on the wall clock (each epoch's slowest share and union by wall time).
    pub critical_wall_ms: f64,
    /// `one_forest_wall_ms / critical_wall_ms`.
    pub speedup_wall: f64,
    /// `max_share_ms / (shares_ms / K)`: 1 when every epoch's shares take equally long.
    pub imbalance: f64,
    /// Records the union forest received per epoch, on average.
    pub union_records_mean: f64,
    /// Records the largest share received per epoch, on average.
    pub max_share_records_mean: f64,
    /// The shares' fallback rebuilds (a search budget ran out; each O(the share's size)).
    pub share_fallbacks: u64,
    /// The union forest's fallback rebuilds.
    pub union_fallbacks: u64,
}

impl Phase {
    /// The figures of `work` against one forest's times `one` on the same epochs.
    pub fn of(shares: usize, work: &[EpochWork], one: &[Spent]) -> Phase {
        let sum = |f: &dyn Fn(&EpochWork) -> f64| work.iter().map(f).sum::<f64>() * 1e3;
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let epochs = work.len();
        let mean = |total: f64| ratio(total, epochs as f64);
        let one_forest_ms = one.iter().map(|s| s.cpu).sum::<f64>() * 1e3;
        let one_forest_wall_ms = one.iter().map(|s| s.wall).sum::<f64>() * 1e3;
        let shares_ms = sum(&EpochWork::shares_secs);
        let max_share_ms = sum(&EpochWork::max_share_secs);
        let critical_ms = sum(&EpochWork::critical_secs);
        let critical_wall_ms = sum(&EpochWork::critical_wall_secs);
        let max_records = work.iter().map(|w| w.share_records.iter().copied().max().unwrap_or(0)).sum::<usize>();
        Phase {
            epochs,
            records: work.iter().map(|w| w.records as u64).sum(),
            one_forest_ms,
            one_forest_wall_ms,
            shares_ms,
            max_share_ms,
            union_ms: sum(&|w| w.union.cpu),
            critical_ms,
            speedup: ratio(one_forest_ms, critical_ms),
            critical_wall_ms,
            speedup_wall: ratio(one_forest_wall_ms, critical_wall_ms),
            imbalance: ratio(max_share_ms * shares as f64, shares_ms),
            union_records_mean: mean(work.iter().map(|w| w.union_records as f64).sum()),
            max_share_records_mean: mean(max_records as f64),
            share_fallbacks: work.iter().map(|w| w.share_fallbacks).sum(),
            union_fallbacks: work.iter().map(|w| w.union_fallbacks).sum(),
        }
    }
}

/// The figures of one run with K shares.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ShardFigures {
    /// K, the number of shares.
    pub shares: usize,
    /// Epoch 0, the initial graph.
    pub initial: Phase,
    /// The churn epochs (every epoch after the first).
    pub churn: Phase,
    /// Each share's applies over the churn epochs, in share order (milliseconds).
    pub share_churn_ms: Vec<f64>,
    /// Each share's present links at the end, in share order.
    pub share_links: Vec<usize>,
    /// The union forest's present links at the end.
    pub union_links: usize,
    /// Per churn epoch, the slowest share's apply (milliseconds).
    pub churn_max_share_ms: Vec<f64>,
    /// Per churn epoch, the union forest's apply (milliseconds).
    pub churn_union_ms: Vec<f64>,
    /// Per churn epoch, the records the union forest received.
    pub churn_union_records: Vec<usize>,
}

impl ShardFigures {
    /// The figures of a run's epochs `work` (epoch 0 first) against one forest's times
    /// `one` per epoch, with the forests' links at the end.
    pub fn of(shares: usize, work: &[EpochWork], one: &[Spent], share_links: Vec<usize>, union_links: usize) -> Self {
        let split = work.len().min(1);
        let (initial, churn) = work.split_at(split);
        let (one_initial, one_churn) = one.split_at(split.min(one.len()));
        let share_churn_ms =
            (0..shares).map(|s| churn.iter().map(|w| w.shares.get(s).map_or(0.0, |t| t.cpu)).sum::<f64>() * 1e3);
        ShardFigures {
            shares,
            initial: Phase::of(shares, initial, one_initial),
            churn: Phase::of(shares, churn, one_churn),
            share_churn_ms: share_churn_ms.collect(),
            share_links,
            union_links,
            churn_max_share_ms: churn.iter().map(|w| ms(w.max_share_secs())).collect(),
            churn_union_ms: churn.iter().map(|w| ms(w.union.cpu)).collect(),
            churn_union_records: churn.iter().map(|w| w.union_records).collect(),
        }
    }

    /// The largest share's present links at the end.
    pub fn max_share_links(&self) -> usize {
        self.share_links.iter().copied().max().unwrap_or(0)
    }
}

/// One forest over the whole stream: the baseline's figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OneForestFigures {
    /// Epoch 0 (the initial graph), milliseconds.
    pub initial_ms: f64,
    /// The churn epochs, milliseconds.
    pub churn_ms: f64,
    /// The churn epochs on the wall clock, milliseconds.
    pub churn_wall_ms: f64,
    /// The forest's present links at the end.
    pub links: usize,
    /// The forest's fallback rebuilds over the run.
    pub fallbacks: u64,
    /// Label changes `((vertex, label), ±1)` per churn epoch, on average: how much of the
    /// connectivity the churn changes.
    pub churn_label_changes_mean: f64,
    /// Per churn epoch, milliseconds.
    pub churn_epoch_ms: Vec<f64>,
}

impl OneForestFigures {
    /// The figures of one forest's seconds and label changes per epoch (epoch 0 first), its
    /// links at the end and its fallback rebuilds.
    pub fn of(secs: &[Spent], label_changes: &[usize], links: usize, fallbacks: u64) -> Self {
        let (initial, churn) = secs.split_at(secs.len().min(1));
        let churn_changes = label_changes.get(1..).unwrap_or(&[]);
        OneForestFigures {
            churn_label_changes_mean: churn_changes.iter().sum::<usize>() as f64 / churn_changes.len().max(1) as f64,
            initial_ms: initial.iter().map(|s| s.cpu).sum::<f64>() * 1e3,
            churn_ms: churn.iter().map(|s| s.cpu).sum::<f64>() * 1e3,
            churn_wall_ms: churn.iter().map(|s| s.wall).sum::<f64>() * 1e3,
            links,
            fallbacks,
            churn_epoch_ms: churn.iter().map(|s| ms(s.cpu)).collect(),
        }
    }
}

/// What `--shards` measured: the scenario, the baseline, and one run per K.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardsReport {
    /// The scenario whose stream was run.
    pub scenario: Scenario,
    /// One forest over the same stream.
    pub one_forest: OneForestFigures,
    /// One run per number of shares, in the order asked for.
    pub runs: Vec<ShardFigures>,
}
