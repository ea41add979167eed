//! The COST figure ([`Cost`], [`costs`]): where a system's median throughput beats the best
//! sequential baseline's.

use std::collections::BTreeMap;

use serde::Serialize;

use super::metrics::groups;
use crate::experiment::record::Record;
use crate::experiment::stats;
use crate::experiment::systems::System;

/// The COST of one line of a scaling panel (McSherry, Isard and Murray, "Scalability! But at what
/// COST?"): the fewest worker threads (over all processes) at which the system's median
/// throughput beats the best sequential baseline's on the same dataset, stream kind, algorithm
/// and batch size.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Cost {
    /// The dataset.
    pub dataset: String,
    /// The algorithm.
    pub algorithm: String,
    /// The stream kind.
    pub stream: String,
    /// Updates per epoch.
    pub batch: usize,
    /// The system measured (not a baseline).
    pub system: System,
    /// Its processes.
    pub processes: usize,
    /// The best baseline: the sequential `bench:` system or `[commands.NAME]` system run with one
    /// worker and one process whose median updates/s is highest.
    pub baseline: System,
    /// That baseline's median updates/s.
    pub baseline_updates_per_sec: f64,
    /// The system's median updates/s at each worker-thread total measured, in order.
    pub points: Vec<(usize, f64)>,
    /// The fewest worker threads beating the baseline; `None`: not reached in the sweep.
    pub workers: Option<usize>,
}

/// Whether a system is a baseline of the COST figure: a sequential `bench:` system, or a user's
/// command (its one-worker cells).
pub fn is_baseline(system: &System) -> bool {
    system.sequential() || matches!(system, System::Command(_))
}

/// The COST of every line (dataset, algorithm, stream, batch, system, processes) of a system
/// that is not a baseline, where the same dataset, algorithm, stream and batch have a baseline.
pub fn costs(records: &[Record]) -> Vec<Cost> {
    type Group = (String, String, String, usize);
    let median_tp = |rs: &[&Record]| {
        let tp: Vec<f64> = rs.iter().filter_map(|r| r.metrics.as_ref().map(|m| m.updates_per_sec)).collect();
        stats::median(&tp)
    };
    let mut best: BTreeMap<Group, (f64, System)> = BTreeMap::new();
    let mut lines: BTreeMap<(Group, System, usize), BTreeMap<usize, f64>> = BTreeMap::new();
    for rs in groups(records).values() {
        let c = &rs[0].cell;
        let group = (c.dataset.clone(), c.algorithm.clone(), c.stream.clone(), c.batch);
        let tp = median_tp(rs);
        if is_baseline(&c.system) {
            if c.workers == 1 && c.processes == 1 && best.get(&group).is_none_or(|(b, _)| tp > *b) {
                best.insert(group, (tp, c.system.clone()));
            }
        } else {
            lines.entry((group, c.system.clone(), c.processes)).or_default().insert(c.total_workers(), tp);
        }
    }
    let mut out = Vec::new();
    for ((group, system, processes), points) in lines {
        let Some((base, baseline)) = best.get(&group) else { continue };
        let (dataset, algorithm, stream, batch) = group;
        let workers = points.iter().find(|(_, &tp)| tp > *base).map(|(&w, _)| w);
        out.push(Cost {
            dataset,
            algorithm,
            stream,
            batch,
            system,
            processes,
            baseline: baseline.clone(),
            baseline_updates_per_sec: *base,
            points: points.into_iter().collect(),
            workers,
        });
    }
    out
}
