//! `--shards … --plot FILE.svg|.png`: the churn epochs' critical path and its parts against the
//! number of shares (left), and the speedup over one forest (right), both on log axes (x: log2
//! of the shares); CPU time, with the critical path on the wall clock beside it. Fonts as
//! [`crate::bench::plot`] handles them.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::figures::ShardsReport;
use crate::bench::plot::register_font;
use crate::bench::BenchError;

/// Draws `report` into `path` (`.svg` or `.png`) under `title`.
pub fn plot(report: &ShardsReport, title: &str, path: &Path) -> Result<(), BenchError> {
    register_font()?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let size = (1200, 520);
    let cannot_write = |e: String| BenchError::file("cannot write", path)(std::io::Error::other(e));
    match ext.as_str() {
        "svg" => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            draw(&root, report, title)?;
            root.present().map_err(|e| cannot_write(e.to_string()))?;
        }
        "png" => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw(&root, report, title)?;
            root.present().map_err(|e| cannot_write(e.to_string()))?;
        }
        _ => return Err(BenchError::PlotFormat(path.to_path_buf())),
    }
    Ok(())
}

/// `2^x` under integer ticks of the log2 axis, nothing elsewhere.
fn shares_label(x: f64) -> String {
    if (x - x.round()).abs() < 0.01 {
        format!("{}", 2f64.powf(x.round()) as u64)
    } else {
        String::new()
    }
}

/// A series of `(log2 shares, value)` points.
type Series = (&'static str, RGBColor, Vec<(f64, f64)>);

/// One panel: `series` as lines with points, on a log2 x axis and a log y axis.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    x: (f64, f64),
    series: &[Series],
) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| BenchError::Draw(format!("{:?}", e));
    let values = series.iter().flat_map(|s| s.2.iter().map(|p| p.1)).filter(|v| *v > 0.0);
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if lo <= hi { (lo / 2.0, hi * 2.0) } else { (0.1, 10.0) };
    let mut chart = ChartBuilder::on(area)
        .margin(15)
        .caption(caption, ("sans-serif", 16))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x.0..x.1, (lo..hi).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("shares")
        .x_labels(((x.1 - x.0) * 4.0) as usize + 1)
        .x_label_formatter(&|x| shares_label(*x))
        .y_label_formatter(&|y| format!("{}", y))
        .draw()
        .map_err(err)?;
    for (name, colour, points) in series {
        let colour = *colour;
        let points: Vec<(f64, f64)> = points.iter().copied().filter(|p| p.1 > 0.0).collect();
        chart
            .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
            .map_err(err)?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2)));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled()))).map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, report: &ShardsReport, title: &str) -> Result<(), BenchError>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| BenchError::Draw(format!("{:?}", e));
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(err)?;
    let (left, right) = root.split_horizontally(600);
    let runs = &report.runs;
    let x = |k: usize| (k.max(1) as f64).log2();
    let (x0, x1) = runs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(x(r.shares)), hi.max(x(r.shares))));
    let range = if x0 <= x1 { (x0 - 0.3, x1 + 0.3) } else { (-0.3, 0.3) };
    let line = |f: &dyn Fn(&super::figures::ShardFigures) -> f64| runs.iter().map(|r| (x(r.shares), f(r))).collect();
    let one = report.one_forest.churn_ms;
    let times: Vec<Series> = vec![
        ("critical path (max share + union)", RED, line(&|r| r.churn.critical_ms)),
        ("critical path, wall clock", RGBColor(255, 160, 160), line(&|r| r.churn.critical_wall_ms)),
        ("slowest share", BLUE, line(&|r| r.churn.max_share_ms)),
        ("union forest", MAGENTA, line(&|r| r.churn.union_ms)),
        ("all shares (work)", GREEN, line(&|r| r.churn.shares_ms)),
        ("one forest", BLACK, vec![(range.0, one), (range.1, one)]),
    ];
    panel(&left, "churn epochs: sum of epoch times, CPU ms (log)", range, &times)?;
    let speedups: Vec<Series> = vec![
        ("churn epochs", RED, line(&|r| r.churn.speedup)),
        ("churn epochs, wall clock", RGBColor(255, 160, 160), line(&|r| r.churn.speedup_wall)),
        ("initial graph", BLUE, line(&|r| r.initial.speedup)),
        ("shares (ideal)", BLACK, line(&|r| r.shares as f64)),
    ];
    panel(&right, "speedup: one forest / critical path (log)", range, &speedups)
}
