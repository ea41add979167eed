//! Progress on stderr: a bar on a terminal (with the `cli` feature), a plain line every few
//! seconds otherwise.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

#[cfg(feature = "cli")]
use indicatif::{ProgressBar, ProgressStyle};

/// Without the `cli` feature there is no bar: progress is always the plain line.
#[cfg(not(feature = "cli"))]
struct ProgressBar;

#[cfg(not(feature = "cli"))]
impl ProgressBar {
    fn set_position(&self, _: u64) {}
    fn set_message(&self, _: String) {}
    fn finish_and_clear(&self) {}
}

/// Reports epochs as they complete.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    last_line: Instant,
    started: Instant,
    updates: u64,
    enabled: bool,
}

impl Progress {
    /// `total` epochs are expected; with `enabled == false` nothing is printed.
    pub fn new(total: u64, enabled: bool) -> Self {
        #[cfg(not(feature = "cli"))]
        let bar: Option<ProgressBar> = {
            let _ = std::io::stderr().is_terminal();
            None
        };
        #[cfg(feature = "cli")]
        let bar = if enabled && std::io::stderr().is_terminal() {
            // Live input has no total: a spinner with the epochs done and the rate.
            let (bar, template) = match total {
                0 => (ProgressBar::new_spinner(), "{spinner} [{elapsed_precise}] {pos} epochs ({per_sec}) {msg}"),
                _ => (
                    ProgressBar::new(total),
                    "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} epochs ({per_sec}, eta {eta}) {msg}",
                ),
            };
            bar.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
            Some(bar)
        } else {
            None
        };
        Progress { bar, total, last_line: Instant::now(), started: Instant::now(), updates: 0, enabled }
    }

    /// Epoch `epoch` finished after `latency_ms` with `updates` updates.
    pub fn epoch(&mut self, epoch: u64, updates: u64, latency_ms: f64) {
        self.updates += updates;
        if !self.enabled {
            return;
        }
        if let Some(bar) = &self.bar {
            bar.set_position(epoch + 1);
            bar.set_message(format!("last {:.2} ms", latency_ms));
        } else if self.last_line.elapsed() >= Duration::from_secs(2) || epoch + 1 == self.total {
            self.last_line = Instant::now();
            let secs = self.started.elapsed().as_secs_f64();
            eprintln!("ripples: {}", self.line(epoch, secs, latency_ms));
        }
    }

    /// The plain progress line after `epoch` (0-based count of epochs done, minus one): with a
    /// known total, `epoch 3/10 (30%)`; without one (live input), just the epochs done.
    fn line(&self, epoch: u64, secs: f64, latency_ms: f64) -> String {
        let done = match self.total {
            0 => format!("epoch {}", epoch + 1),
            total => format!("epoch {}/{} ({:.0}%)", epoch + 1, total, 100.0 * (epoch + 1) as f64 / total as f64),
        };
        format!(
            "{}, {} updates, {:.0} updates/s, last epoch {:.2} ms",
            done,
            self.updates,
            self.updates as f64 / secs.max(1e-9),
            latency_ms
        )
    }

    /// The run is over: clears the bar (a terminal) or prints a last line (otherwise).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_line_has_a_total_only_when_one_is_known() {
        let mut files = Progress::new(10, false);
        files.epoch(2, 300, 1.5);
        assert_eq!(files.line(2, 1.0, 1.5), "epoch 3/10 (30%), 300 updates, 300 updates/s, last epoch 1.50 ms");
        let mut live = Progress::new(0, false);
        live.epoch(152, 1000, 2.0);
        assert_eq!(live.line(152, 2.0, 2.0), "epoch 153, 1000 updates, 500 updates/s, last epoch 2.00 ms");
    }
}
