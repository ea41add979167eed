//! `ripples bench wcc-churn --shards K[,K…]`: the critical path of the fully dynamic WCC path's
//! *local sparsification* layout ([`ForestLayout::Shares`](crate::dataflow::wcc_dynamic::ForestLayout)),
//! measured on one core rather than guessed.
//!
//! **The layout.** With K workers, every worker keeps the forest of its share of the vertex pairs
//! (the share [`pair_share`](crate::dataflow::wcc_dynamic::pair_share) names, as the dataflow's
//! exchange routes records) in summary mode, whose output per epoch is the net change of its
//! forest edges and of its vertices' presence; worker 0 keeps the forest of the union of these
//! forests, which has the components of the whole graph, and emits the labels. An epoch on K
//! cores takes at least its slowest share's work plus the union forest's (the union starts when
//! the last share's output is in), and costs the sum of all of them.
//!
//! **What this measures.** A machine with fewer cores than shares (this project's has 2) cannot
//! show that by running K workers. So [`run_shards`] runs the K shares *one after another in one
//! thread* ([`ShardedForests`]), timing each share's apply and then the union forest's apply on
//! the shares' concatenated outputs, per epoch (epoch 0 is the initial graph, then the stream's
//! churn epochs), and runs one forest ([`OneForest`], the default layout) over the same epochs:
//!
//! * critical path of an epoch = its slowest share + the union; total work = all shares + union;
//! * speedup = one forest's time / the critical path, summed over the epochs of a phase (the
//!   initial graph and the churn epochs are reported apart: the churn epochs are what a
//!   long-running computation spends its time on).
//!
//! Each apply is timed on this thread's CPU clock (the figures) and on the wall clock (beside
//! them): on a shared machine the wall clock also counts waiting for a core. The forests' work
//! is all it counts: not routing records to shares, the exchange, timely's progress tracking,
//! nor what K cores would contend for (memory bandwidth, the shared cache). So its speedup bounds
//! what K workers can get from this layout from above, but for the private caches: here a
//! share's data is cold when its turn comes (the other shares ran since). The union forest's
//! label changes are kept, and must end equal to one forest's ([`BenchError::Shards`] if not).
//!
//! **Parts.** `forests.rs` (the forests, their composition, the labels, a stream's epochs),
//! `clock.rs` (the two clocks),
//! `figures.rs` (the figures, the `--json` object), `table.rs` (the text tables) and `plot.rs`
//! (`--plot`).
//!
//! # Example
//!
//! ```
//! use ripples::bench::shards::{run_shards, table};
//! use ripples::bench::Scenario;
//! // A tiny wcc-churn: 2^6 vertex ids, 4 * 2^6 edges, then 3 epochs of 20 deletions + 20 insertions.
//! let scenario = Scenario { scale: 6, edge_factor: 4, batch: 20, epochs: 3, ..Scenario::new("wcc-churn").unwrap() };
//! let report = run_shards(&scenario, &[1, 4]).unwrap();
//! assert_eq!(report.runs.len(), 2);
//! let four = &report.runs[1];
//! assert_eq!((four.shares, four.initial.epochs, four.churn.epochs, four.churn.records), (4, 1, 3, 120));
//! // Each share's time over the churn epochs, and each share's links at the end.
//! assert_eq!((four.share_churn_ms.len(), four.share_links.len()), (4, 4));
//! assert!(table(&report).contains("churn epochs"));
//! ```

mod clock;
mod figures;
mod forests;
mod plot;
mod table;

pub use clock::Spent;
pub use figures::{OneForestFigures, Phase, ShardFigures, ShardsReport};
pub use forests::{epochs, EpochWork, Labels, OneForest, Record, ShardedForests};
pub use plot::plot;
pub use table::table;

use crate::bench::{BenchError, Scenario};
use crate::dataflow::wcc_dynamic::DEFAULT_BUDGET;

/// Runs `scenario`'s stream (a WCC scenario) through one forest, then through K shares and their
/// union forest for each K of `shares` (each ≥ 1), in this thread; checks that each union forest
/// ends with one forest's labels. Progress goes to stderr.
pub fn run_shards(scenario: &Scenario, shares: &[usize]) -> Result<ShardsReport, BenchError> {
    if scenario.algorithm() != "wcc" {
        return Err(BenchError::Shards(format!("{} is not a WCC scenario", scenario.name)));
    }
    if shares.is_empty() || shares.contains(&0) {
        return Err(BenchError::Shards(format!("shares must be at least 1, got {:?}", shares)));
    }
    let stream = scenario.stream();
    eprintln!(
        "ripples bench --shards: one forest on {} (scale {}, batch {})",
        scenario.name, scenario.scale, scenario.batch
    );
    let mut one = OneForest::new(DEFAULT_BUDGET);
    let (mut one_secs, mut label_changes) = (Vec::new(), Vec::new());
    for records in epochs(&stream) {
        one_secs.push(one.apply(records)?);
        label_changes.push(one.last_changes());
    }
    let one_forest = OneForestFigures::of(&one_secs, &label_changes, one.links(), one.fallbacks());
    let want = one.into_labels();
    let mut runs = Vec::new();
    for &k in shares {
        let mut forests = ShardedForests::new(k, DEFAULT_BUDGET);
        let mut work = Vec::new();
        for records in epochs(&stream) {
            work.push(forests.apply(records)?);
        }
        if let Some((v, one, union)) = want.first_difference(forests.labels()) {
            return Err(BenchError::Shards(format!(
                "with {k} shares the union forest ends with vertex {v} labelled {union:?}, one forest with {one:?}"
            )));
        }
        let figures = ShardFigures::of(k, &work, &one_secs, forests.share_links(), forests.union_links());
        drop(forests);
        eprintln!(
            "ripples bench --shards: {k} shares: churn critical path {:.1} ms ({:.2}x one forest), initial {:.1} ms ({:.2}x)",
            figures.churn.critical_ms, figures.churn.speedup, figures.initial.critical_ms, figures.initial.speedup
        );
        runs.push(figures);
    }
    Ok(ShardsReport { scenario: scenario.clone(), one_forest, runs })
}

#[cfg(test)]
mod tests;
