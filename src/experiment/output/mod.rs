//! What `ripples experiment report` writes from `results.jsonl` (the last record of each key):
//!
//! * `results.csv` — tidy: one row per record and metric (failed cells included, with their
//!   status);
//! * `summary.csv` — one row per configuration and metric: n, median, bootstrap 95% CI, CV,
//!   outlier repetitions;
//! * `figures.json` — the exact points of every figure;
//! * `latency.csv` — per configuration, epoch and event-time latency percentiles of the HDR
//!   histograms of all its repetitions pooled (read back from the records);
//! * per dataset and algorithm, `scaling-D-A.svg` (throughput vs worker threads over all
//!   processes, with the ideal-linear line from the fewest, and the COST line: the best
//!   sequential baseline's throughput, [`costs`]), `batch-D-A.svg` (throughput vs batch size) and
//!   `latency_ccdf-D-A.svg` (epoch latency CCDF), `rss-D-A.svg` and `latency_run-D-A.svg`
//!   (RSS after every epoch and every measured epoch's latency, over the run of repetition 0),
//!   all on log axes;
//! * `report.md` — environment, non-default settings, datasets, the summary table, failures and
//!   the figures.
//!
//! One file per concept: the metrics and their per-configuration summaries (`metrics`), the
//! COST figure (`cost`), the figures' points (`figures`) and their drawing (`draw`), the pooled
//! latency percentiles (`latency`), the CSV files (`csv`) and the report (`report`).

mod cost;
mod csv;
mod draw;
mod figures;
mod latency;
mod metrics;
mod report;

pub use cost::{costs, is_baseline, Cost};
pub use csv::{summary_csv, tidy_csv};
pub use draw::draw;
pub use figures::{figures, Panel, Series};
pub use latency::{pooled, Pooled};
pub use metrics::{groups, metrics, summaries, Getter, BOOTSTRAP_SEED};
pub use report::report;
