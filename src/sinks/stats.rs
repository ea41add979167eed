//! `--stats`: one JSON object per epoch, then a summary object.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::types::stats::EpochStats;
pub use crate::types::stats::RunSummary;

/// Writes `--stats` lines.
pub struct StatsWriter {
    path: PathBuf,
    writer: BufWriter<File>,
}

impl StatsWriter {
    /// Creates (truncates) the `--stats` file; the error message names it.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let f = File::create(path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write {}: {}", path.display(), e)))?;
        Ok(StatsWriter { path: path.to_path_buf(), writer: BufWriter::new(f) })
    }

    fn line<T: Serialize>(&mut self, value: &T) -> std::io::Result<()> {
        let text = serde_json::to_string(value).map_err(std::io::Error::other)?;
        writeln!(self.writer, "{}", text)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write {}: {}", self.path.display(), e)))
    }

    /// Appends one epoch's figures as one JSON line.
    pub fn epoch(&mut self, stats: &EpochStats) -> std::io::Result<()> {
        self.line(stats)
    }

    /// Appends the run's summary as the last JSON line and flushes the file.
    pub fn summary(mut self, summary: &RunSummary) -> std::io::Result<()> {
        self.line(summary)?;
        self.writer.flush()
    }
}
