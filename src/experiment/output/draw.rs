//! Drawing a [`Panel`] as an SVG file on log-log axes ([`draw`]).

use std::path::Path;

use plotters::prelude::*;

use super::figures::Panel;
use crate::experiment::ExperimentError;

/// A tick label: up to three decimals, trailing zeros dropped; large values in e-notation.
fn tick(v: f64) -> String {
    if v >= 1e5 {
        return format!("{v:.1e}");
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
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
