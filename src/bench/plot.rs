//! `--plot FILE.svg|.png`: throughput and epoch-latency percentiles per system (plotters).
//!
//! Both panels use a logarithmic axis: systems differ by orders of magnitude. PNG output needs a
//! TrueType font (DejaVu Sans or Liberation Sans from the system's font directory); SVG output
//! does not embed fonts.
//!
//! # Example
//!
//! ```
//! use ripples::bench::{plot::plot, BenchError, Latency, SystemResult};
//! let results = vec![SystemResult {
//!     system: "ripples".into(),
//!     updates_per_sec: 1e6,
//!     latency: Latency { p50_ms: 1.0, p95_ms: 2.0, p99_ms: 3.0, max_ms: 4.0 },
//!     ..SystemResult::default()
//! }];
//! let dir = tempfile::tempdir().unwrap();
//! let svg = dir.path().join("bench.svg");
//! match plot(&results, "wcc-insert", &svg) {
//!     // Text needs a TrueType font; a machine without one gets this error, nothing else.
//!     Err(BenchError::NoFont(looked_for)) => assert!(looked_for.contains("DejaVuSans.ttf")),
//!     drawn => {
//!         drawn.unwrap();
//!         assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
//!     }
//! }
//! // The file name says the format: anything but .svg or .png is refused.
//! assert!(plot(&results, "wcc-insert", &dir.path().join("bench.pdf")).is_err());
//! ```

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{BenchError, SystemResult};

const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/Library/Fonts/Arial.ttf",
];

/// Registers the first system font found among the usual places with plotters (its text
/// needs one); an error names the places tried.
pub fn register_font() -> Result<(), BenchError> {
    for path in FONT_CANDIDATES {
        if let Ok(bytes) = std::fs::read(path) {
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return Ok(());
            }
        }
    }
    Err(BenchError::NoFont(FONT_CANDIDATES.join(", ")))
}

/// Draws the plot into `path` (`.svg` or `.png`).
pub fn plot(results: &[SystemResult], title: &str, path: &Path) -> Result<(), BenchError> {
    register_font()?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let size = (1200, 520);
    match ext.as_str() {
        "svg" => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            draw(&root, results, title)?;
            root.present().map_err(|e| cannot_write(path, e))?;
        }
        "png" => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw(&root, results, title)?;
            root.present().map_err(|e| cannot_write(path, e))?;
        }
        _ => return Err(BenchError::PlotFormat(path.to_path_buf())),
    }
    Ok(())
}

/// The system name under the middle of its bar (bars span `i..i + 1`), nothing elsewhere.
fn system_label(labels: &[String], x: f64) -> String {
    let i = (x - 0.5).round();
    if (x - 0.5 - i).abs() < 0.01 && i >= 0.0 && (i as usize) < labels.len() {
        labels[i as usize].clone()
    } else {
        String::new()
    }
}

/// plotters' error when presenting the file, as an I/O error on `path`.
fn cannot_write<E: std::error::Error + Send + Sync + 'static>(path: &Path, e: DrawingAreaErrorKind<E>) -> BenchError {
    BenchError::file("cannot write", path)(std::io::Error::other(e))
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    results: &[SystemResult],
    title: &str,
) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| BenchError::Draw(format!("{:?}", e));
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(err)?;
    let (left, right) = root.split_horizontally(480);
    let n = results.len().max(1);
    let names: Vec<String> =
        results.iter().map(|r| if r.partial { format!("{}*", r.system) } else { r.system.clone() }).collect();

    // Throughput.
    let max_tp = results.iter().map(|r| r.updates_per_sec).fold(1.0, f64::max) * 3.0;
    let mut chart = ChartBuilder::on(&left)
        .margin(15)
        .caption("updates/s (log; * = partial)", ("sans-serif", 16))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, (1.0f64..max_tp).log_scale())
        .map_err(err)?;
    let labels = names.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&|x| system_label(&labels, *x))
        .y_label_formatter(&|y| format!("{:.0e}", y))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(results.iter().enumerate().map(|(i, r)| {
            let x = i as f64;
            Rectangle::new([(x + 0.15, 1.0), (x + 0.85, r.updates_per_sec.max(1.0))], BLUE.mix(0.7).filled())
        }))
        .map_err(err)?;

    // Latency percentiles.
    let max_ms = results.iter().map(|r| r.latency.max_ms).fold(0.01, f64::max) * 3.0;
    let min_ms = results.iter().flat_map(|r| r.latency.percentiles()).filter(|v| *v > 0.0).fold(max_ms, f64::min) / 3.0;
    let mut chart = ChartBuilder::on(&right)
        .margin(15)
        .caption("epoch latency ms (log): p50, p95, p99, max", ("sans-serif", 16))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, (min_ms.max(1e-4)..max_ms).log_scale())
        .map_err(err)?;
    let labels = names;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&|x| system_label(&labels, *x))
        .y_label_formatter(&|y| format!("{:.0e}", y))
        .draw()
        .map_err(err)?;
    let colours = [GREEN, BLUE, MAGENTA, RED];
    let names = ["p50", "p95", "p99", "max"];
    for (k, (colour, name)) in colours.into_iter().zip(names).enumerate() {
        let floor = min_ms.max(1e-4);
        chart
            .draw_series(results.iter().enumerate().map(move |(i, r)| {
                let v = r.latency.percentiles()[k].max(floor);
                let x = i as f64 + 0.1 + 0.2 * k as f64;
                Rectangle::new([(x, floor), (x + 0.18, v)], colour.mix(0.75).filled())
            }))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(err)?;
    Ok(())
}

/// A profile (`--profile FILE`, `ripples bench --profile DIR`): the JSON at `path` and the chart
/// of the operators by self time beside it (`path.svg`).
pub fn write_profile(path: &Path, profile: &crate::types::profile::Profile) -> Result<(), String> {
    let text = serde_json::to_string_pretty(profile).map_err(|e| e.to_string())?;
    // Whole or not at all (`--profile-every` rewrites it while readers may look).
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text + "\n")
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {}", path.display(), e))?;
    let svg = svg_path(path);
    profile_chart(&svg, profile).map_err(|e| format!("cannot write {}: {}", svg.display(), e))
}

fn svg_path(path: &Path) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".svg");
    std::path::PathBuf::from(s)
}

/// A horizontal bar chart of the operators with the most self time (all workers), with the
/// workers' parked time for scale.
fn profile_chart(path: &Path, profile: &crate::types::profile::Profile) -> Result<(), String> {
    register_font().map_err(|e| e.to_string())?;
    let mut ops = profile.by_operator();
    ops.sort_by(|a, b| b.self_seconds.total_cmp(&a.self_seconds));
    ops.truncate(25);
    let busy: f64 = profile.workers.iter().map(|w| w.busy_seconds).sum();
    let parked: f64 = profile.workers.iter().map(|w| w.parked_seconds).sum();
    let label = |op: &crate::types::profile::OperatorTotal| {
        let addr: Vec<String> = op.addr.iter().map(|i| i.to_string()).collect();
        let mut name = op.name.clone();
        if name.chars().count() > 48 {
            name = name.chars().take(47).collect::<String>() + "…";
        }
        format!("{} [{}]", name, addr.join("."))
    };
    let rows: Vec<(String, f64)> = ops.iter().map(|op| (label(op), op.self_seconds)).collect();
    let height = 120 + 22 * rows.len().max(1) as u32;
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max).max(1e-9);
    let title = format!(
        "Operators by self time, all workers ({:.3} s busy, {:.3} s parked, {} workers)",
        busy,
        parked,
        profile.workers.len()
    );
    let (top, body) = root.split_vertically(40);
    top.titled(&title, ("sans-serif", 16)).map_err(|e| e.to_string())?;
    let (labels, bars) = body.split_horizontally(430);
    let n = rows.len().max(1);
    let row_h = (height - 80) as f64 / n as f64;
    for (i, (name, secs)) in rows.iter().enumerate() {
        let y = (i as f64 * row_h) as i32 + 4;
        labels.draw(&Text::new(name.clone(), (4, y), ("sans-serif", 12).into_font())).map_err(|e| e.to_string())?;
        let w = ((secs / max) * 440.0).max(1.0) as i32;
        bars.draw(&Rectangle::new([(0, y), (w, y + (row_h * 0.7) as i32)], RGBColor(74, 123, 208).filled()))
            .map_err(|e| e.to_string())?;
        let share = if busy > 0.0 { 100.0 * secs / busy } else { 0.0 };
        bars.draw(&Text::new(format!("{secs:.3} s ({share:.1}%)"), (w + 6, y), ("sans-serif", 12).into_font()))
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}
