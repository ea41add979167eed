//! `ripples experiment compare A.jsonl B.jsonl`: per configuration present in both, the ratio
//! B / A of the medians of updates/s and of p99 latency, with a bootstrap 95% CI; a change is
//! flagged only when the CI excludes 1 and the ratio is past the noise threshold.

use std::fmt::Write as _;

use super::output::{groups, metrics, Getter, BOOTSTRAP_SEED};
use super::record::Record;
use super::runner::latest;
use super::stats::ratio_ci;

/// One compared metric of one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The configuration compared ([`Cell::config`](super::config::Cell::config):
    /// dataset/stream/algorithm/system/workers/batch).
    pub config: String,
    /// The metric: `updates_per_sec` or `p99_ms`.
    pub metric: &'static str,
    /// B / A of the medians of the metric over the successful repetitions.
    pub ratio: f64,
    /// The lower end of the ratio's bootstrap 95% confidence interval.
    pub ci_low: f64,
    /// The upper end of the ratio's bootstrap 95% confidence interval.
    pub ci_high: f64,
    /// `better`, `worse`, or `~` (no change past the noise).
    pub verdict: &'static str,
}

/// Compares two sets of records; `threshold` is the relative noise threshold (0.05 = 5%).
pub fn compare(a: &[Record], b: &[Record], threshold: f64) -> Vec<Change> {
    let (a, b) = (latest(a), latest(b));
    let (ga, gb) = (groups(&a), groups(&b));
    let metrics: Vec<(&'static str, Getter)> =
        metrics().into_iter().filter(|(name, _)| *name == "updates_per_sec" || *name == "p99_ms").collect();
    let mut out = Vec::new();
    for (config, ra) in &ga {
        let Some(rb) = gb.get(config) else { continue };
        for &(metric, get) in &metrics {
            let higher_is_better = metric == "updates_per_sec";
            let xa: Vec<f64> = ra.iter().filter_map(|r| get(r)).collect();
            let xb: Vec<f64> = rb.iter().filter_map(|r| get(r)).collect();
            let (ratio, lo, hi) = ratio_ci(&xa, &xb, BOOTSTRAP_SEED);
            let changed = (lo > 1.0 || hi < 1.0) && (ratio - 1.0).abs() > threshold;
            let verdict = match (changed, (ratio > 1.0) == higher_is_better) {
                (false, _) => "~",
                (true, true) => "better",
                (true, false) => "worse",
            };
            out.push(Change { config: config.clone(), metric, ratio, ci_low: lo, ci_high: hi, verdict });
        }
    }
    out
}

/// The comparison as a text table.
pub fn table(changes: &[Change], threshold: f64) -> String {
    let mut out = format!(
        "{:<48} {:<16} {:>9} {:>21}  verdict (noise threshold {:.0}%)\n",
        "configuration",
        "metric",
        "B/A",
        "95% CI",
        threshold * 100.0
    );
    for c in changes {
        let _ = writeln!(
            out,
            "{:<48} {:<16} {:>9.3} {:>21}  {}",
            c.config,
            c.metric,
            c.ratio,
            format!("{:.3} - {:.3}", c.ci_low, c.ci_high),
            c.verdict
        );
    }
    if changes.is_empty() {
        out.push_str("(no configuration has successful records in both files)\n");
    }
    out
}
