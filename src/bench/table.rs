//! [`table`]: the text table `ripples bench` prints, one row per system, then how `ripples`
//! compares with the baselines (each system's [`Comparison`] says whether and how).
//!
//! ```
//! use ripples::bench::{table, Latency, SystemResult};
//! let row = SystemResult {
//!     system: "uf-hash".into(),
//!     updates_per_sec: 2e6,
//!     latency: Latency { p50_ms: 0.5, ..Latency::default() },
//!     agrees: Some(true),
//!     ..SystemResult::default()
//! };
//! let text = table(&[row]);
//! let lines: Vec<&str> = text.lines().collect();
//! assert!(lines[0].starts_with("system") && lines[0].contains("updates/s"));
//! assert!(lines[1].starts_with("uf-hash") && lines[1].contains(" 2000000 "));
//! assert!(lines[1].ends_with("result agrees"));
//! ```

use super::system::Comparison;
use super::systems;
use super::SystemResult;

/// The result table.
pub fn table(results: &[SystemResult]) -> String {
    let mut out = format!(
        "{:<16} {:>14} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}  {}\n",
        "system", "updates/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "peak MiB", "B/edge", "wall s", "notes"
    );
    for r in results {
        let mut notes = Vec::new();
        if let Some(n) = r.wcc_fallbacks {
            notes.push(format!("{} fallback rebuild(s)", n));
        }
        if r.partial {
            notes.push(format!("partial: {} updates in the time limit", r.updates));
        }
        if let Some(runs) = &r.runs {
            let (low, high) = runs.iter().fold((f64::INFINITY, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
            notes.push(format!("median of {} runs ({:.0} to {:.0} updates/s)", runs.len(), low, high));
        }
        match r.agrees {
            Some(true) => notes.push("result agrees".to_string()),
            Some(false) => notes.push("RESULT DIFFERS".to_string()),
            None => {}
        }
        let l = &r.latency;
        out.push_str(&format!(
            "{:<16} {:>14.0} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.1} {:>10.1} {:>8.1}  {}\n",
            r.system,
            r.updates_per_sec,
            l.p50_ms,
            l.p95_ms,
            l.p99_ms,
            l.max_ms,
            r.peak_rss_bytes as f64 / (1024.0 * 1024.0),
            r.bytes_per_edge,
            r.wall_seconds,
            notes.join("; ")
        ));
    }
    // Each result's comparison, from the registry (a name it does not know is not compared).
    let comparison = |r: &SystemResult| systems::by_name(&r.system).map(|s| s.comparison()).unwrap_or(Comparison::None);
    let first = |c: Comparison| results.iter().find(|r| comparison(r) == c);
    let Some(reference) = first(Comparison::Reference) else {
        return out;
    };
    let mut throughput: Vec<(u8, &SystemResult)> = Vec::new();
    for r in results {
        if let Comparison::Throughput { line } = comparison(r) {
            if !throughput.iter().any(|(l, _)| *l == line) {
                throughput.push((line, r));
            }
        }
    }
    throughput.sort_by_key(|(line, _)| *line);
    for (_, b) in throughput {
        if b.updates_per_sec > 0.0 {
            out.push_str(&format!(
                "{} / {}: {:.2}x updates/s{}\n",
                reference.system,
                b.system,
                reference.updates_per_sec / b.updates_per_sec,
                if b.partial { " (baseline partial)" } else { "" }
            ));
        }
    }
    if let Some(b) = first(Comparison::Latency) {
        if reference.latency.p50_ms > 0.0 {
            out.push_str(&format!(
                "{} p50 / {} p50: {:.1}x\n",
                b.system,
                reference.system,
                b.latency.p50_ms / reference.latency.p50_ms
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Latency;

    fn result(system: &str, updates_per_sec: f64, p50_ms: f64, partial: bool, agrees: Option<bool>) -> SystemResult {
        SystemResult {
            system: system.into(),
            scenario: "wcc-insert".into(),
            updates: 500,
            updates_per_sec,
            latency: Latency { p50_ms, p95_ms: 2.0 * p50_ms, p99_ms: 3.0 * p50_ms, max_ms: 4.0 * p50_ms },
            peak_rss_bytes: 3 << 20,
            bytes_per_edge: 12.25,
            wall_seconds: 1.25,
            partial,
            agrees,
            ..SystemResult::default()
        }
    }

    /// Rows in the given order; the comparison lines in their fixed order whatever the rows'.
    #[test]
    fn rows_then_comparisons() {
        let results = [
            result("recompute", 10.0, 40.0, false, Some(true)),
            result("ripples-general", 500.0, 2.0, false, Some(true)),
            result("ripples", 1000.0, 1.0, false, Some(false)),
            result("uf-hash", 4000.0, 0.5, true, None),
        ];
        let want = "\
system                updates/s     p50 ms     p95 ms     p99 ms     max ms   peak MiB     B/edge   wall s  notes
recompute                    10     40.000     80.000    120.000    160.000        3.0       12.2      1.2  result agrees
ripples-general             500      2.000      4.000      6.000      8.000        3.0       12.2      1.2  result agrees
ripples                    1000      1.000      2.000      3.000      4.000        3.0       12.2      1.2  RESULT DIFFERS
uf-hash                    4000      0.500      1.000      1.500      2.000        3.0       12.2      1.2  partial: 500 updates in the time limit
ripples / uf-hash: 0.25x updates/s (baseline partial)
ripples / ripples-general: 2.00x updates/s
recompute p50 / ripples p50: 40.0x
";
        assert_eq!(table(&results), want);
        assert!(!table(&results[..2]).contains(" / "), "no comparison without ripples");
    }
}
