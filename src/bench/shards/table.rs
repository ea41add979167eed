//! The text tables `--shards` prints: the baseline, then one row per number of shares for the
//! initial graph (epoch 0) and one for the churn epochs ([`Phase`]'s figures): the shares' total
//! work (`Σ shares`), the slowest share per epoch summed (`Σ max`), the union forest, the
//! critical path and the speedup over one forest (CPU time; then both on the wall clock), the
//! imbalance, the records the union and the
//! largest share received per epoch, the largest share's and the union's links at the end, and
//! the shares' and the union's fallback rebuilds (`shares+union`).

use super::figures::{Phase, ShardFigures, ShardsReport};

/// Which phase of a run a table shows.
type PhaseOf = fn(&ShardFigures) -> &Phase;

/// The tables of `report`.
pub fn table(report: &ShardsReport) -> String {
    let one = &report.one_forest;
    let mut out = format!(
        "one forest: initial graph {:.1} ms, {} churn epochs {:.1} ms (wall {:.1}; {:.3} ms/epoch, {:.1} label changes/epoch), {} links at the end, {} fallback rebuild(s)\n",
        one.initial_ms,
        one.churn_epoch_ms.len(),
        one.churn_ms,
        one.churn_wall_ms,
        one.churn_ms / one.churn_epoch_ms.len().max(1) as f64,
        one.churn_label_changes_mean,
        one.links,
        one.fallbacks
    );
    let phases: [(&str, PhaseOf); 2] = [("initial graph (epoch 0)", |r| &r.initial), ("churn epochs", |r| &r.churn)];
    for (name, phase) in phases {
        let Some(first) = report.runs.first() else { break };
        let p = phase(first);
        out.push_str(&format!(
            "\n{}: {} epoch(s), {} records, one forest {:.1} ms (wall {:.1})\n",
            name, p.epochs, p.records, p.one_forest_ms, p.one_forest_wall_ms
        ));
        out.push_str(&format!(
            "{:>6} {:>12} {:>12} {:>12} {:>12} {:>8} {:>12} {:>8} {:>9} {:>14} {:>14} {:>12} {:>12} {:>10}\n",
            "shares",
            "Σ shares ms",
            "Σ max ms",
            "union ms",
            "critical ms",
            "speedup",
            "wall crit ms",
            "wall x",
            "imbalance",
            "union rec/ep",
            "max share rec",
            "share links",
            "union links",
            "rebuilds"
        ));
        for r in &report.runs {
            let p = phase(r);
            out.push_str(&format!(
                "{:>6} {:>12.1} {:>12.1} {:>12.1} {:>12.1} {:>7.2}x {:>12.1} {:>7.2}x {:>9.2} {:>14.1} {:>14.1} {:>12} {:>12} {:>10}\n",
                r.shares,
                p.shares_ms,
                p.max_share_ms,
                p.union_ms,
                p.critical_ms,
                p.speedup,
                p.critical_wall_ms,
                p.speedup_wall,
                p.imbalance,
                p.union_records_mean,
                p.max_share_records_mean,
                r.max_share_links(),
                r.union_links,
                format!("{}+{}", p.share_fallbacks, p.union_fallbacks)
            ));
        }
    }
    out
}
