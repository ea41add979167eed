//! The figures' points: one [`Panel`] per kind of plot, dataset and algorithm, its lines
//! [`Series`] (with COST baselines on the scaling panels).

use std::collections::BTreeMap;

use serde::Serialize;

use super::cost::{costs, Cost};
use super::metrics::groups;
use crate::experiment::record::Record;
use crate::experiment::stats;

/// A line of a figure.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// The legend text: stream, system and the fixed workers `wW` and/or batch `bB` (`churn ripples
    /// w2 b1000`); ideal-linear lines end in ` ideal`.
    pub label: String,
    /// The `(x, y)` points in x order, in the panel's units (see its axes).
    pub points: Vec<(f64, f64)>,
    /// The configuration each point comes from (for a CCDF, the one configuration).
    pub configs: Vec<String>,
    /// Drawn thin and grey (the ideal-linear lines), or dashed red (a COST baseline).
    pub reference: bool,
    /// A COST line: the best sequential baseline's median updates/s, level across the panel.
    #[serde(default)]
    pub baseline: bool,
}

/// One figure: a kind of plot for one dataset and algorithm.
#[derive(Clone, Debug, Serialize)]
pub struct Panel {
    /// `scaling`, `batch` or `latency_ccdf`.
    pub kind: &'static str,
    /// The dataset the figure is for.
    pub dataset: String,
    /// The algorithm the figure is for.
    pub algorithm: String,
    /// The SVG file, beside the report.
    pub file: String,
    /// The lines drawn, one per configuration group (plus reference lines).
    pub series: Vec<Series>,
    /// Scaling panels: the COST of each line that has a baseline ([`costs`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub costs: Vec<Cost>,
}

impl Panel {
    /// The figure's title: dataset, algorithm and what is drawn.
    pub(super) fn title(&self) -> String {
        let what = match self.kind {
            "scaling" => "updates/s vs worker threads (median; grey: ideal linear; red dashed: COST baseline)",
            "batch" => "updates/s vs batch size (median)",
            "rss" => "resident memory over the run (repetition 0)",
            "latency_run" => "epoch latency over the run (repetition 0)",
            _ => "epoch latency CCDF (all repetitions)",
        };
        format!("{} {}: {}", self.dataset, self.algorithm, what)
    }

    /// The x and y axis descriptions.
    pub(super) fn axes(&self) -> (&'static str, &'static str) {
        match self.kind {
            "scaling" => ("worker threads (workers x processes)", "updates/s"),
            "batch" => ("updates per epoch", "updates/s"),
            "rss" => ("epoch + 1", "RSS MiB"),
            "latency_run" => ("measured epoch", "latency ms"),
            _ => ("epoch latency ms", "P(latency >= x)"),
        }
    }
}

/// Line label -> x -> (median updates/s, configuration).
type Lines = BTreeMap<String, BTreeMap<usize, (f64, String)>>;

/// The figures' points: medians of updates/s over workers and over batch sizes, and the CCDF of
/// the pooled epoch latencies of each configuration; one panel per kind, dataset and algorithm
/// (the lines of a panel: stream kind, system and the other parameter).
pub fn figures(records: &[Record]) -> Vec<Panel> {
    let mut by_workers: BTreeMap<(String, String), Lines> = BTreeMap::new();
    let mut by_batch: BTreeMap<(String, String), Lines> = BTreeMap::new();
    let mut ccdf: BTreeMap<(String, String), Vec<Series>> = BTreeMap::new();
    // Over the run: the first repetition's RSS after every epoch and latency of every measured one.
    let mut rss: BTreeMap<(String, String), Vec<Series>> = BTreeMap::new();
    let mut over_run: BTreeMap<(String, String), Vec<Series>> = BTreeMap::new();
    for rs in groups(records).values() {
        let c = &rs[0].cell;
        let tp: Vec<f64> = rs.iter().filter_map(|r| r.metrics.as_ref().map(|m| m.updates_per_sec)).collect();
        let tp = stats::median(&tp);
        let panel = (c.dataset.clone(), c.algorithm.clone());
        let config = c.config();
        let n = if c.processes > 1 { format!(" n{}", c.processes) } else { String::new() };
        // The cell's own line in the latency and memory panels.
        let label = format!("{} {} w{}{n} b{}", c.stream, c.system, c.workers, c.batch);
        let line = format!("{} {}{n} b{}", c.stream, c.system, c.batch);
        let threads = c.total_workers();
        by_workers.entry(panel.clone()).or_default().entry(line).or_default().insert(threads, (tp, config.clone()));
        let line = format!("{} {} w{}{n}", c.stream, c.system, c.workers);
        by_batch.entry(panel.clone()).or_default().entry(line).or_default().insert(c.batch, (tp, config.clone()));
        let mut lat: Vec<f64> =
            rs.iter().flat_map(|r| r.metrics.iter().flat_map(|m| m.latencies_ms.iter().copied())).collect();
        lat.sort_by(f64::total_cmp);
        let count = lat.len();
        if count > 0 {
            let points =
                lat.iter().enumerate().map(|(i, &x)| (x.max(1e-3), (count - i) as f64 / count as f64)).collect();
            ccdf.entry(panel.clone()).or_default().push(Series {
                label: label.clone(),
                points,
                configs: vec![config.clone()],
                reference: false,
                baseline: false,
            });
        }
        if let Some(m) = rs[0].metrics.as_ref() {
            let series = |points: Vec<(f64, f64)>| Series {
                label: label.clone(),
                points,
                configs: vec![config.clone()],
                reference: false,
                baseline: false,
            };
            let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
            let points = m.rss_bytes.iter().enumerate().map(|(i, &b)| ((i + 1) as f64, mib(b))).collect();
            rss.entry(panel.clone()).or_default().push(series(points));
            let points = m.latencies_ms.iter().enumerate().map(|(i, &l)| ((i + 1) as f64, l.max(1e-3))).collect();
            over_run.entry(panel).or_default().push(series(points));
        }
    }
    let mut out = line_panels("scaling", by_workers, true);
    // COST: a level line at each baseline's throughput, across the panel's worker range.
    let all_costs = costs(records);
    for panel in &mut out {
        cost_lines(panel, &all_costs);
    }
    out.extend(line_panels("batch", by_batch, false));
    for (kind, panels) in [("latency_ccdf", ccdf), ("rss", rss), ("latency_run", over_run)] {
        for (key, series) in panels {
            let file = file_name(kind, &key);
            let (dataset, algorithm) = key;
            out.push(Panel { kind, dataset, algorithm, file, series, costs: vec![] });
        }
    }
    out
}

/// A scaling panel's COSTs (those of its dataset and algorithm, [`costs`]) and a level line at
/// each baseline's throughput, across the panel's worker range, labelled with the COSTs of the
/// lines it is the baseline of.
fn cost_lines(panel: &mut Panel, all_costs: &[Cost]) {
    panel.costs =
        all_costs.iter().filter(|c| c.dataset == panel.dataset && c.algorithm == panel.algorithm).cloned().collect();
    let xs = panel.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let mut drawn = Vec::new();
    for c in &panel.costs {
        let key = (c.stream.clone(), c.batch, c.baseline.clone());
        if drawn.contains(&key) {
            continue;
        }
        drawn.push(key);
        let of: Vec<String> = panel
            .costs
            .iter()
            .filter(|d| d.stream == c.stream && d.batch == c.batch)
            .map(|d| {
                let n = if d.processes > 1 { format!(" n{}", d.processes) } else { String::new() };
                let w = d.workers.map_or("not reached".to_string(), |w| w.to_string());
                format!("{}{n}: {w}", d.system)
            })
            .collect();
        panel.series.push(Series {
            label: format!("{} b{} {} (COST {})", c.stream, c.batch, c.baseline, of.join(", ")),
            points: vec![(x0, c.baseline_updates_per_sec), (x1, c.baseline_updates_per_sec)],
            configs: vec![],
            reference: true,
            baseline: true,
        });
    }
}

/// The SVG file of a panel of `kind` for a dataset and algorithm (characters other than ASCII
/// letters, digits and `-` become `_`).
fn file_name(kind: &str, (d, a): &(String, String)) -> String {
    let clean =
        |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect::<String>();
    format!("{kind}-{}-{}.svg", clean(d), clean(a))
}

/// Panels of lines with more than one point; with `ideal`, each line's ideal-linear scaling
/// from its first point.
fn line_panels(kind: &'static str, all: BTreeMap<(String, String), Lines>, ideal: bool) -> Vec<Panel> {
    let mut panels = Vec::new();
    for (key, lines) in all {
        let mut series = Vec::new();
        for (label, pts) in lines.into_iter().filter(|(_, p)| p.len() > 1) {
            let points: Vec<(f64, f64)> = pts.iter().map(|(&x, &(y, _))| (x as f64, y)).collect();
            let configs = pts.into_values().map(|(_, c)| c).collect();
            if ideal {
                let (x0, y0) = points[0];
                let line = points.iter().map(|&(x, _)| (x, y0 * x / x0)).collect();
                series.push(Series {
                    label: format!("{label} ideal"),
                    points: line,
                    configs: vec![],
                    reference: true,
                    baseline: false,
                });
            }
            series.push(Series { label, points, configs, reference: false, baseline: false });
        }
        if !series.is_empty() {
            let file = file_name(kind, &key);
            let (dataset, algorithm) = key;
            panels.push(Panel { kind, dataset, algorithm, file, series, costs: vec![] });
        }
    }
    panels
}
