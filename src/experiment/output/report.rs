//! `report.md` and every file beside it ([`report`]): the CSV files, `figures.json` and the SVG
//! figures first, then the report, one section per step.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::cost::{costs, Cost};
use super::csv::{latency_csv, summary_csv, tidy_csv};
use super::draw::draw;
use super::figures::{figures, Panel};
use super::latency::{pooled, Pooled};
use super::metrics::{summaries, BOOTSTRAP_SEED, MIN_MEASURED_EPOCHS};
use crate::experiment::config::Experiment;
use crate::experiment::env::Environment;
use crate::experiment::record::{Record, Status};
use crate::experiment::runner::latest;
use crate::experiment::stats::{self, Summary};
use crate::experiment::ExperimentError;

/// A median with three decimals, or `–` where the systems did not measure it.
fn not_measured(v: f64) -> String {
    if v.is_nan() {
        "–".into()
    } else {
        format!("{v:.3}")
    }
}

/// Writes `text` to `path`.
fn write(path: &Path, text: &str) -> Result<(), ExperimentError> {
    std::fs::write(path, text).map_err(|e| ExperimentError::Io(format!("cannot write {}: {}", path.display(), e)))
}

/// Writes every output of the records in `results.jsonl` into `out`; returns the report's path.
pub fn report(exp: Option<&Experiment>, all: &[Record], out: &Path) -> Result<PathBuf, ExperimentError> {
    let records = latest(all);
    let s = summaries(&records);
    let f = figures(&records);
    write(&out.join("results.csv"), &tidy_csv(&records))?;
    write(&out.join("summary.csv"), &summary_csv(&s))?;
    let pooled = pooled(&records)?;
    write(&out.join("latency.csv"), &latency_csv(&pooled))?;
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
        stats::RESAMPLES,
        BOOTSTRAP_SEED
    );
    environment(&mut md, &records);
    if let Some(exp) = exp {
        settings(&mut md, exp);
    }
    datasets(&mut md, &records);
    results(&mut md, &s);
    cost_table(&mut md, &costs(&records));
    pooled_table(&mut md, &pooled);
    if failed > 0 {
        failures(&mut md, &records);
    }
    figure_links(&mut md, &f);
    let path = out.join("report.md");
    write(&path, &md)?;
    Ok(path)
}

/// `## Environment`: the first record's environment, and how many different ones there are.
fn environment(md: &mut String, records: &[Record]) {
    md.push_str("## Environment\n\n| | |\n|---|---|\n");
    let mut envs: Vec<&Environment> = Vec::new();
    for r in records {
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
}

/// `## Settings that differ from the defaults`: the experiment file's non-default settings.
fn settings(md: &mut String, exp: &Experiment) {
    md.push_str("\n## Settings that differ from the defaults\n\n| setting | value |\n|---|---|\n");
    for (k, v) in &exp.non_default {
        let _ = writeln!(md, "| {k} | {} |", v.replace('|', "\\|"));
    }
}

/// `## Datasets`: each dataset's checksum and counts, in the order the records first name them.
fn datasets(md: &mut String, records: &[Record]) {
    md.push_str("\n## Datasets\n\n| dataset | CRC-32 | vertices | edges |\n|---|---|---|---|\n");
    let mut seen = Vec::new();
    for r in records {
        if !seen.contains(&&r.dataset) {
            seen.push(&r.dataset);
            let d = &r.dataset;
            let _ = writeln!(md, "| {} | {} | {} | {} |", d.name, d.checksum, d.vertices, d.edges);
        }
    }
}

/// `## Results`: the summary of every configuration.
fn results(md: &mut String, s: &BTreeMap<String, BTreeMap<&'static str, Summary>>) {
    let _ = write!(
        md,
        "\n## Results\n\n`epochs`: the measured epochs (after the warm-up), median over the repetitions; *too few* \
         below {MIN_MEASURED_EPOCHS}, where updates/s and latencies mean little (– : a command without a stats file, \
         timed as a whole).\n\n\
         | configuration | n | updates/s | 95% CI | CV | p50 ms | p99 ms | p99.9 ms | load s | peak MiB | CPU s | outliers | epochs |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (config, per) in s {
        let tp = &per["updates_per_sec"];
        let outl: Vec<String> = tp.outliers.iter().map(|i| format!("rep {i}")).collect();
        let _ = writeln!(
            md,
            "| {config} | {} | {:.0} | {:.0} – {:.0} | {:.3} | {:.3} | {:.3} | {} | {} | {:.1} | {:.2} | {} | {} |",
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
            outl.join(", "),
            epochs(per.get("measured_epochs"))
        );
    }
}

/// The `epochs` cell of a configuration: its median measured epochs, marked when too few.
fn epochs(measured: Option<&Summary>) -> String {
    match measured.map(|m| m.median) {
        Some(e) if e.is_nan() || e == 0.0 => "–".to_string(),
        Some(e) if e < MIN_MEASURED_EPOCHS => format!("{e:.0} (too few)"),
        Some(e) => format!("{e:.0}"),
        None => "–".to_string(),
    }
}

/// `## COST`, when any line has a baseline.
fn cost_table(md: &mut String, costs: &[Cost]) {
    if costs.is_empty() {
        return;
    }
    md.push_str(
        "\n## COST\n\nThe fewest worker threads (workers x processes) at which a system's median updates/s beats \
         the best sequential baseline's (a sequential `bench:` system or a user's command, one worker) on the same \
         dataset, algorithm, stream and batch size.\n\n\
         | dataset | algorithm | stream | batch | system | processes | best baseline | baseline updates/s | COST |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for c in costs {
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

/// `## Latency over all repetitions`, when any record carries histograms.
fn pooled_table(md: &mut String, pooled: &[Pooled]) {
    if pooled.is_empty() {
        return;
    }
    md.push_str(
        "\n## Latency over all repetitions\n\nPercentiles of each configuration's HDR histograms (kept in the \
         records) merged over its repetitions: `epoch` is the epoch latency, `event` the event-time latency of \
         windowed streams (from handing over the epoch whose event closed windows to their results being final). \
         Also in `latency.csv`.\n\n\
         | configuration | latency | count | p50 ms | p99 ms | p99.9 ms | max ms |\n|---|---|---|---|---|---|---|\n",
    );
    for p in pooled {
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

/// `## Failures`: every failed record's configuration, repetition, status and detail.
fn failures(md: &mut String, records: &[Record]) {
    md.push_str("\n## Failures\n\n| configuration | repetition | status | detail |\n|---|---|---|---|\n");
    for r in records.iter().filter(|r| r.status != Status::Ok) {
        let detail = r.failure.clone().unwrap_or_default().replace('|', "\\|");
        let _ = writeln!(md, "| {} | {} | {} | {} |", r.cell.config(), r.cell.repetition, r.status.name(), detail);
    }
}

/// `## Figures`: every figure, by its title.
fn figure_links(md: &mut String, figures: &[Panel]) {
    md.push_str("\n## Figures\n\n");
    for panel in figures {
        let _ = writeln!(md, "![{}]({})\n", panel.title(), panel.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `epochs` column: the median of the repetitions' measured epochs, marked below the
    /// minimum; a configuration timed as a whole (no epochs) shows a dash.
    #[test]
    fn short_configurations_are_marked() {
        let cell = |xs: &[f64]| epochs(Some(&Summary::of(xs, BOOTSTRAP_SEED)));
        assert_eq!(cell(&[3.0, 2.0, 2.0]), "2 (too few)");
        assert_eq!(cell(&[9.0, 9.0, 30.0]), "9 (too few)");
        assert_eq!(cell(&[10.0, 12.0, 11.0]), "11");
        assert_eq!(cell(&[0.0, 0.0]), "–");
        assert_eq!(cell(&[]), "–");
        assert_eq!(epochs(None), "–");
    }
}
