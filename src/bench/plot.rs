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

/// Registers the first TrueType font found at the usual system paths as plotters' `sans-serif`
/// (needed before any text is drawn); [`BenchError::NoFont`] listing the paths tried if none loads.
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
