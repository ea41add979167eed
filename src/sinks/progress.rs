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
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} epochs ({per_sec}, eta {eta}) {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
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
            eprintln!(
                "ripples: epoch {}/{} ({:.0}%), {} updates, {:.0} updates/s, last epoch {:.2} ms",
                epoch + 1,
                self.total,
                100.0 * (epoch + 1) as f64 / self.total.max(1) as f64,
                self.updates,
                self.updates as f64 / secs.max(1e-9),
                latency_ms
            );
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
