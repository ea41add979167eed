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

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;
use serde::Serialize;

use super::config::Experiment;
use super::record::{Record, Status};
use super::runner::latest;
use super::stats::Summary;
use super::ExperimentError;

/// The seed of every bootstrap in the report (the figures are reproducible).
pub const BOOTSTRAP_SEED: u64 = 1;

/// A metric's value in a record.
pub type Getter = fn(&Record) -> Option<f64>;

/// The metrics summarised per configuration: name and value of a record.
pub fn metrics() -> Vec<(&'static str, Getter)> {
    fn m(r: &Record) -> Option<&super::record::Metrics> {
        r.metrics.as_ref()
    }
    vec![
        ("updates_per_sec", |r| m(r).map(|m| m.updates_per_sec)),
        ("p50_ms", |r| m(r).map(|m| m.latency.p50_ms)),
        ("p90_ms", |r| m(r).and_then(|m| m.latency.p90_ms)),
        ("p99_ms", |r| m(r).map(|m| m.latency.p99_ms)),
        ("p999_ms", |r| m(r).and_then(|m| m.latency.p999_ms)),
        ("event_p50_ms", |r| m(r).and_then(|m| m.event_latency.as_ref()).map(|l| l.p50_ms)),
        ("event_p99_ms", |r| m(r).and_then(|m| m.event_latency.as_ref()).map(|l| l.p99_ms)),
        ("max_ms", |r| m(r).map(|m| m.latency.max_ms)),
        ("load_seconds", |r| m(r).and_then(|m| m.load_seconds)),
        ("peak_rss_mib", |r| m(r).map(|m| m.peak_rss_bytes as f64 / (1024.0 * 1024.0))),
        ("cpu_seconds", |r| m(r).map(|m| m.cpu_user_seconds + m.cpu_system_seconds)),
        ("wall_seconds", |r| Some(r.wall_seconds)),
    ]
}

/// One configuration's successful repetitions, in repetition order.
pub fn groups(records: &[Record]) -> BTreeMap<String, Vec<&Record>> {
    let mut out: BTreeMap<String, Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        out.entry(r.cell.config()).or_default().push(r);
    }
    for v in out.values_mut() {
        v.sort_by_key(|r| r.cell.repetition);
    }
    out
}

/// `summary[config][metric]`.
pub fn summaries(records: &[Record]) -> BTreeMap<String, BTreeMap<&'static str, Summary>> {
    let mut out = BTreeMap::new();
    for (config, rs) in groups(records) {
        let mut per = BTreeMap::new();
        for (name, get) in metrics() {
            let xs: Vec<f64> = rs.iter().filter_map(|r| get(r)).collect();
            per.insert(name, Summary::of(&xs, BOOTSTRAP_SEED));
        }
        out.insert(config, per);
    }
    out
}

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
    pub system: String,
    /// Its processes.
    pub processes: usize,
    /// The best baseline: the sequential `bench:` system or `[commands.NAME]` system run with one
    /// worker and one process whose median updates/s is highest.
    pub baseline: String,
    /// That baseline's median updates/s.
    pub baseline_updates_per_sec: f64,
    /// The system's median updates/s at each worker-thread total measured, in order.
    pub points: Vec<(usize, f64)>,
    /// The fewest worker threads beating the baseline; `None`: not reached in the sweep.
    pub workers: Option<usize>,
}

/// Whether a system is a baseline of the COST figure: a sequential `bench:` system, or a user's
/// command (its one-worker cells).
pub fn is_baseline(system: &str) -> bool {
    super::systems::sequential(system) || (system != super::config::RIPPLES && !system.starts_with("bench:"))
}

/// The COST of every line (dataset, algorithm, stream, batch, system, processes) of a system
/// that is not a baseline, where the same dataset, algorithm, stream and batch have a baseline.
pub fn costs(records: &[Record]) -> Vec<Cost> {
    type Group = (String, String, String, usize);
    let median_tp = |rs: &[&Record]| {
        let tp: Vec<f64> = rs.iter().filter_map(|r| r.metrics.as_ref().map(|m| m.updates_per_sec)).collect();
        super::stats::median(&tp)
    };
    let mut best: BTreeMap<Group, (f64, String)> = BTreeMap::new();
    let mut lines: BTreeMap<(Group, String, usize), BTreeMap<usize, f64>> = BTreeMap::new();
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
    fn title(&self) -> String {
        let what = match self.kind {
            "scaling" => "updates/s vs worker threads (median; grey: ideal linear; red dashed: COST baseline)",
            "batch" => "updates/s vs batch size (median)",
            "rss" => "resident memory over the run (repetition 0)",
            "latency_run" => "epoch latency over the run (repetition 0)",
            _ => "epoch latency CCDF (all repetitions)",
        };
        format!("{} {}: {}", self.dataset, self.algorithm, what)
    }

    fn axes(&self) -> (&'static str, &'static str) {
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
        let tp = super::stats::median(&tp);
        let panel = (c.dataset.clone(), c.algorithm.clone());
        let config = c.config();
        let n = if c.processes > 1 { format!(" n{}", c.processes) } else { String::new() };
        let line = format!("{} {}{n} b{}", c.stream, c.system, c.batch);
        let threads = c.total_workers();
        by_workers.entry(panel.clone()).or_default().entry(line).or_default().insert(threads, (tp, config.clone()));
        let line = format!("{} {} w{}{n}", c.stream, c.system, c.workers);
        by_batch.entry(panel.clone()).or_default().entry(line).or_default().insert(c.batch, (tp, config.clone()));
        let mut lat: Vec<f64> =
            rs.iter().flat_map(|r| r.metrics.iter().flat_map(|m| m.latencies_ms.iter().copied())).collect();
        lat.sort_by(f64::total_cmp);
        let n = lat.len();
        if n > 0 {
            let points = lat.iter().enumerate().map(|(i, &x)| (x.max(1e-3), (n - i) as f64 / n as f64)).collect();
            let label = format!("{} {} w{}{n} b{}", c.stream, c.system, c.workers, c.batch);
            ccdf.entry(panel.clone()).or_default().push(Series {
                label,
                points,
                configs: vec![config.clone()],
                reference: false,
                baseline: false,
            });
        }
        if let Some(m) = rs[0].metrics.as_ref() {
            let label = format!("{} {} w{}{n} b{}", c.stream, c.system, c.workers, c.batch);
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
        panel.costs = all_costs
            .iter()
            .filter(|c| c.dataset == panel.dataset && c.algorithm == panel.algorithm)
            .cloned()
            .collect();
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

/// Latency percentiles of one configuration, from the HDR histograms of all its repetitions
/// pooled (`kind`: `epoch` or `event`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Pooled {
    /// The configuration.
    pub config: String,
    /// `epoch` (epoch latency) or `event` (event-time latency of windowed streams).
    pub kind: &'static str,
    /// Values pooled (epochs, or window-closing epochs) over the repetitions.
    pub count: u64,
    /// The percentiles of the merged histogram, the max the largest repetition's max.
    pub latency: super::record::Percentiles,
}

/// Pooled latency percentiles of every configuration whose records carry histograms.
pub fn pooled(records: &[Record]) -> Result<Vec<Pooled>, ExperimentError> {
    let mut out = Vec::new();
    for (config, rs) in groups(records) {
        type Pick = fn(&super::record::Metrics) -> (Option<&String>, f64);
        let kinds: [(&'static str, Pick); 2] = [
            ("epoch", |m| (m.latency_histogram.as_ref(), m.latency.max_ms)),
            ("event", |m| (m.event_latency_histogram.as_ref(), m.event_latency.as_ref().map_or(0.0, |l| l.max_ms))),
        ];
        for (kind, pick) in kinds {
            let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
            let mut max_ms: f64 = 0.0;
            for m in rs.iter().filter_map(|r| r.metrics.as_ref()) {
                let (Some(text), max) = pick(m) else { continue };
                let h = super::record::decode_histogram(text)
                    .map_err(|e| ExperimentError::Input(format!("{config}: {e}")))?;
                max_ms = max_ms.max(max);
                match merged.as_mut() {
                    None => merged = Some(h),
                    Some(all) => all.add(&h).map_err(|e| ExperimentError::Input(format!("{config}: {e:?}")))?,
                }
            }
            if let Some(h) = merged {
                let latency = super::record::histogram_percentiles(&h, max_ms);
                out.push(Pooled { config: config.clone(), kind, count: h.len(), latency });
            }
        }
    }
    Ok(out)
}

/// A median with three decimals, or `–` where the systems did not measure it.
fn not_measured(v: f64) -> String {
    if v.is_nan() {
        "–".into()
    } else {
        format!("{v:.3}")
    }
}

/// A tick label: up to three decimals, trailing zeros dropped; large values in e-notation.
fn tick(v: f64) -> String {
    if v >= 1e5 {
        return format!("{v:.1e}");
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn write(path: &Path, text: &str) -> Result<(), ExperimentError> {
    std::fs::write(path, text).map_err(|e| ExperimentError::Io(format!("cannot write {}: {}", path.display(), e)))
}

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
            csv_field(&c.system),
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

/// Draws `series` on log-log axes into an SVG file.
pub fn draw(path: &Path, panel: &Panel) -> Result<(), ExperimentError> {
    let (title, series) = (panel.title(), &panel.series);
    let (x_desc, y_desc) = panel.axes();
    crate::bench::plot::register_font().map_err(|e| ExperimentError::Io(e.to_string()))?;
    let err = |e: DrawingAreaErrorKind<std::io::Error>| ExperimentError::Io(format!("{}: {e:?}", path.display()));
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts.filter(|(x, y)| *x > 0.0 && *y > 0.0) {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (1.0, 10.0, 1.0, 10.0);
    }
    // A log axis gets tick labels when it spans a factor of 10 at least.
    let widen = |lo: f64, hi: f64| {
        if hi / lo >= 10.0 {
            (lo, hi)
        } else {
            let mid = (lo * hi).sqrt();
            (mid / 10f64.sqrt(), mid * 10f64.sqrt())
        }
    };
    let ((x0, x1), (y0, y1)) = (widen(x0, x1), widen(y0, y1));
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d((x0 / 1.5..x1 * 1.5).log_scale(), (y0 / 1.5..y1 * 1.5).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|x| tick(*x))
        .y_label_formatter(&|y| tick(*y))
        .draw()
        .map_err(err)?;
    let mut colour = 0;
    for s in series {
        let points: Vec<(f64, f64)> = s.points.iter().copied().filter(|(x, y)| *x > 0.0 && *y > 0.0).collect();
        if s.baseline {
            let style = RED.mix(0.8).stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(points, 8, 5, style))
                .map_err(err)?
                .label(s.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
            continue;
        }
        if s.reference {
            chart.draw_series(LineSeries::new(points, BLACK.mix(0.35).stroke_width(1))).map_err(err)?;
            continue;
        }
        let c = Palette99::pick(colour).to_rgba();
        colour += 1;
        chart
            .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled()))).map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(if panel.kind == "latency_ccdf" {
            SeriesLabelPosition::LowerLeft
        } else {
            SeriesLabelPosition::LowerRight
        })
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// Writes every output of the records in `results.jsonl` into `out`; returns the report's path.
pub fn report(exp: Option<&Experiment>, all: &[Record], out: &Path) -> Result<std::path::PathBuf, ExperimentError> {
    let records = latest(all);
    let s = summaries(&records);
    let f = figures(&records);
    write(&out.join("results.csv"), &tidy_csv(&records))?;
    write(&out.join("summary.csv"), &summary_csv(&s))?;
    let pooled = pooled(&records)?;
    let mut csv = String::from("config,kind,count,p50_ms,p90_ms,p99_ms,p999_ms,max_ms\n");
    for p in &pooled {
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
    write(&out.join("latency.csv"), &csv)?;
    let json = serde_json::to_string_pretty(&f).map_err(|e| ExperimentError::Io(e.to_string()))?;
    write(&out.join("figures.json"), &json)?;
    for panel in &f {
        draw(&out.join(&panel.file), panel)?;
    }

    let name =
        exp.map(|e| e.name.clone()).or_else(|| records.first().map(|r| r.experiment.clone())).unwrap_or_default();
    let mut md = format!("# Experiment `{name}`\n\n");
    let failed = records.iter().filter(|r| r.status != Status::Ok).count();
    let _ = writeln!(
        md,
        "{} cell(s) recorded: {} ok, {} failed. Medians over repetitions with bootstrap 95% confidence intervals \
         ({} resamples, seed {}); outliers (modified z-score > 3.5) are flagged, never dropped. Data: `results.jsonl`, \
         `results.csv`, `summary.csv`, `figures.json`.\n",
        records.len(),
        records.len() - failed,
        failed,
        super::stats::RESAMPLES,
        BOOTSTRAP_SEED
    );
    md.push_str("## Environment\n\n| | |\n|---|---|\n");
    let mut envs: Vec<&super::env::Environment> = Vec::new();
    for r in &records {
        if !envs.contains(&&r.env) {
            envs.push(&r.env);
        }
    }
    if let Some(env) = envs.first() {
        for (k, v) in env.rows() {
            let _ = writeln!(md, "| {k} | {v} |");
        }
    }
    if envs.len() > 1 {
        let _ = writeln!(md, "\nThe records come from {} different environments (see `results.jsonl`).", envs.len());
    }
    if let Some(exp) = exp {
        md.push_str("\n## Settings that differ from the defaults\n\n| setting | value |\n|---|---|\n");
        for (k, v) in &exp.non_default {
            let _ = writeln!(md, "| {k} | {} |", v.replace('|', "\\|"));
        }
    }
    md.push_str("\n## Datasets\n\n| dataset | CRC-32 | vertices | edges |\n|---|---|---|---|\n");
    let mut seen = Vec::new();
    for r in &records {
        if !seen.contains(&&r.dataset) {
            seen.push(&r.dataset);
            let d = &r.dataset;
            let _ = writeln!(md, "| {} | {} | {} | {} |", d.name, d.checksum, d.vertices, d.edges);
        }
    }
    md.push_str(
        "\n## Results\n\n| configuration | n | updates/s | 95% CI | CV | p50 ms | p99 ms | p99.9 ms | load s | peak MiB | CPU s | outliers |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (config, per) in &s {
        let tp = &per["updates_per_sec"];
        let outl: Vec<String> = tp.outliers.iter().map(|i| format!("rep {i}")).collect();
        let _ = writeln!(
            md,
            "| {config} | {} | {:.0} | {:.0} – {:.0} | {:.3} | {:.3} | {:.3} | {} | {} | {:.1} | {:.2} | {} |",
            tp.n,
            tp.median,
            tp.ci_low,
            tp.ci_high,
            tp.cv,
            per["p50_ms"].median,
            per["p99_ms"].median,
            not_measured(per["p999_ms"].median),
            not_measured(per["load_seconds"].median),
            per["peak_rss_mib"].median,
            per["cpu_seconds"].median,
            outl.join(", ")
        );
    }
    let costs = costs(&records);
    if !costs.is_empty() {
        md.push_str(
            "\n## COST\n\nThe fewest worker threads (workers x processes) at which a system's median updates/s beats \
             the best sequential baseline's (a sequential `bench:` system or a user's command, one worker) on the same \
             dataset, algorithm, stream and batch size.\n\n\
             | dataset | algorithm | stream | batch | system | processes | best baseline | baseline updates/s | COST |\n\
             |---|---|---|---|---|---|---|---|---|\n",
        );
        for c in &costs {
            let cost = c.workers.map_or("not reached".to_string(), |w| w.to_string());
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {:.0} | {} |",
                c.dataset,
                c.algorithm,
                c.stream,
                c.batch,
                c.system,
                c.processes,
                c.baseline,
                c.baseline_updates_per_sec,
                cost
            );
        }
    }
    if !pooled.is_empty() {
        md.push_str(
            "\n## Latency over all repetitions\n\nPercentiles of each configuration's HDR histograms (kept in the \
             records) merged over its repetitions: `epoch` is the epoch latency, `event` the event-time latency of \
             windowed streams (from handing over the epoch whose event closed windows to their results being final). \
             Also in `latency.csv`.\n\n\
             | configuration | latency | count | p50 ms | p99 ms | p99.9 ms | max ms |\n|---|---|---|---|---|---|---|\n",
        );
        for p in &pooled {
            let l = &p.latency;
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.3} | {:.3} | {} | {:.3} |",
                p.config,
                p.kind,
                p.count,
                l.p50_ms,
                l.p99_ms,
                not_measured(l.p999_ms.unwrap_or(f64::NAN)),
                l.max_ms
            );
        }
    }
    if failed > 0 {
        md.push_str("\n## Failures\n\n| configuration | repetition | status | detail |\n|---|---|---|---|\n");
        for r in records.iter().filter(|r| r.status != Status::Ok) {
            let detail = r.failure.clone().unwrap_or_default().replace('|', "\\|");
            let _ = writeln!(md, "| {} | {} | {} | {} |", r.cell.config(), r.cell.repetition, r.status.name(), detail);
        }
    }
    md.push_str("\n## Figures\n\n");
    for panel in &f {
        let _ = writeln!(md, "![{}]({})\n", panel.title(), panel.file);
    }
    let path = out.join("report.md");
    write(&path, &md)?;
    Ok(path)
}
