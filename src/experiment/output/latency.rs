//! Latency percentiles of each configuration from its repetitions' HDR histograms pooled
//! ([`Pooled`], [`pooled`]).

use serde::Serialize;

use super::metrics::groups;
use crate::experiment::record::{self, Record};
use crate::experiment::ExperimentError;

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
    pub latency: record::Percentiles,
}

/// Pooled latency percentiles of every configuration whose records carry histograms.
pub fn pooled(records: &[Record]) -> Result<Vec<Pooled>, ExperimentError> {
    let mut out = Vec::new();
    for (config, rs) in groups(records) {
        type Pick = fn(&record::Metrics) -> (Option<&String>, f64);
        let kinds: [(&'static str, Pick); 2] = [
            ("epoch", |m| (m.latency_histogram.as_ref(), m.latency.max_ms)),
            ("event", |m| (m.event_latency_histogram.as_ref(), m.event_latency.as_ref().map_or(0.0, |l| l.max_ms))),
        ];
        for (kind, pick) in kinds {
            let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
            let mut max_ms: f64 = 0.0;
            for m in rs.iter().filter_map(|r| r.metrics.as_ref()) {
                let (Some(text), max) = pick(m) else { continue };
                let h = record::decode_histogram(text).map_err(|e| ExperimentError::Input(format!("{config}: {e}")))?;
                max_ms = max_ms.max(max);
                match merged.as_mut() {
                    None => merged = Some(h),
                    Some(all) => all.add(&h).map_err(|e| ExperimentError::Input(format!("{config}: {e:?}")))?,
                }
            }
            if let Some(h) = merged {
                let latency = record::histogram_percentiles(&h, max_ms);
                out.push(Pooled { config: config.clone(), kind, count: h.len(), latency });
            }
        }
    }
    Ok(out)
}
