//! The CSV files: `results.csv` ([`tidy_csv`]), `summary.csv` ([`summary_csv`]) and
//! `latency.csv` ([`latency_csv`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::latency::Pooled;
use super::metrics::metrics;
use crate::experiment::record::Record;
use crate::experiment::stats::Summary;

/// A CSV field: quoted when it holds a comma, a quote or a newline.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: one row per record and metric.
pub fn tidy_csv(records: &[Record]) -> String {
    let mut out = String::from(
        "key,experiment,dataset,stream,algorithm,system,workers,batch,repetition,seed,status,metric,value\n",
    );
    for r in records {
        let c = &r.cell;
        let head = format!(
            "{},{},{},{},{},{},{},{},{},{},{}",
            r.key,
            csv_field(&r.experiment),
            csv_field(&c.dataset),
            c.stream,
            c.algorithm,
            csv_field(&c.system.to_string()),
            c.workers,
            c.batch,
            c.repetition,
            c.seed,
            r.status.name()
        );
        for (name, get) in metrics() {
            if let Some(v) = get(r) {
                let _ = writeln!(out, "{head},{name},{v}");
            }
        }
    }
    out
}

/// `summary.csv`: one row per configuration and metric.
pub fn summary_csv(s: &BTreeMap<String, BTreeMap<&'static str, Summary>>) -> String {
    let mut out = String::from("config,metric,n,median,ci_low,ci_high,cv,outliers\n");
    for (config, per) in s {
        for (metric, x) in per {
            let outliers: Vec<String> = x.outliers.iter().map(|i| i.to_string()).collect();
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                csv_field(config),
                metric,
                x.n,
                x.median,
                x.ci_low,
                x.ci_high,
                x.cv,
                outliers.join(" ")
            );
        }
    }
    out
}

/// `latency.csv`: one row per configuration and kind of pooled latency.
pub(super) fn latency_csv(pooled: &[Pooled]) -> String {
    let mut csv = String::from("config,kind,count,p50_ms,p90_ms,p99_ms,p999_ms,max_ms\n");
    for p in pooled {
        let l = &p.latency;
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{}",
            csv_field(&p.config),
            p.kind,
            p.count,
            l.p50_ms,
            l.p90_ms.unwrap_or(f64::NAN),
            l.p99_ms,
            l.p999_ms.unwrap_or(f64::NAN),
            l.max_ms
        );
    }
    csv
}
