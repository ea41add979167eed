//! The sink of a typed output: rendered `(key, value)` rows, written as text or JSON lines.
//!
//! ```
//! use ripples::sinks::{RowChange, RowSink};
//! use ripples::types::format::RowFormat;
//! let dir = tempfile::tempdir().unwrap();
//! let (log, out) = (dir.path().join("d.changes"), dir.path().join("d.out"));
//! let mut sink = RowSink::new(RowFormat::Json, Some(&log), Some(&out), true, false).unwrap();
//! let row = |k: &str, v: &str| (k.to_string(), v.to_string());
//! assert_eq!(sink.epoch(0, vec![(row("\"b\"", "1"), 1), (row("\"a\"", "2"), 1)], true).unwrap(), 2);
//! assert_eq!(sink.epoch(1, vec![(row("\"a\"", "3"), 1), (row("\"a\"", "2"), -1)], true).unwrap(), 2);
//! let (collected, state) = sink.finish().unwrap();
//! assert_eq!(
//!     std::fs::read_to_string(&log).unwrap(),
//!     "{\"epoch\":0,\"key\":\"a\",\"value\":2,\"diff\":1}\n{\"epoch\":0,\"key\":\"b\",\"value\":1,\"diff\":1}\n\
//!      {\"epoch\":1,\"key\":\"a\",\"value\":2,\"diff\":-1}\n{\"epoch\":1,\"key\":\"a\",\"value\":3,\"diff\":1}\n"
//! );
//! assert_eq!(std::fs::read_to_string(&out).unwrap(), "{\"key\":\"a\",\"value\":3}\n{\"key\":\"b\",\"value\":1}\n");
//! assert_eq!(state.unwrap(), vec![row("\"a\"", "3"), row("\"b\"", "1")]);
//! assert_eq!(collected.unwrap()[2], RowChange { epoch: 1, key: "\"a\"".into(), value: "2".into(), diff: -1 });
//! ```

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::types::format::RowFormat;
use crate::types::{Diff, Time};

/// A rendered row: key text, value text.
type Row = (String, String);

/// One change of a typed output, as its change-log line says.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RowChange {
    /// The epoch (event time in windowed runs).
    pub epoch: Time,
    /// The key's rendered text (JSON text for JSON outputs).
    pub key: String,
    /// The value's rendered text (JSON text for JSON outputs).
    pub value: String,
    /// `1` or `-1`.
    pub diff: i8,
}

/// Receives a typed output's completed epochs, in epoch order; like
/// [`ResultSink`](super::ResultSink) with rendered rows ordered by their text.
pub struct RowSink {
    format: RowFormat,
    changes: Option<(PathBuf, BufWriter<Box<dyn Write + Send>>)>,
    /// The change-log file itself (for syncing and its length), when it is a file.
    changes_file: Option<File>,
    output: Option<PathBuf>,
    keep_state: bool,
    /// The current rows: a count per row (unordered; sorted where it is written).
    state: FxHashMap<Row, Diff>,
    collected: Option<Vec<RowChange>>,
    /// A change line being written (reused).
    line: String,
}

fn io_context(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("cannot write {}: {}", path.display(), e))
}

impl RowSink {
    /// A sink writing the change log to `changes` (`-` is stdout) and the final result to
    /// `output` (checked writable now, written at the end); with `collect`, changes are also kept.
    pub fn new(
        format: RowFormat,
        changes: Option<&Path>,
        output: Option<&Path>,
        collect: bool,
        keep_state: bool,
    ) -> std::io::Result<Self> {
        Self::new_resuming(format, changes, output, collect, keep_state, None)
    }

    /// Like [`RowSink::new`], but with `resume = Some(offset)` the change-log file is kept, cut
    /// back to `offset` bytes, and appended to (a restart from a state directory).
    pub fn new_resuming(
        format: RowFormat,
        changes: Option<&Path>,
        output: Option<&Path>,
        collect: bool,
        keep_state: bool,
        resume: Option<u64>,
    ) -> std::io::Result<Self> {
        let (changes, changes_file) = match changes {
            None => (None, None),
            Some(p) => {
                let (w, f) = super::open_changes(p, resume, 1 << 16)?;
                (Some((p.to_path_buf(), w)), f)
            }
        };
        if let Some(p) = output {
            let tmp = super::temporary(p);
            File::create(&tmp).map_err(|e| io_context(p, e))?;
            std::fs::remove_file(&tmp).map_err(|e| io_context(&tmp, e))?;
        }
        Ok(RowSink {
            format,
            changes,
            changes_file,
            output: output.map(Path::to_path_buf),
            keep_state: output.is_some() || keep_state,
            state: FxHashMap::default(),
            collected: collect.then(Vec::new),
            line: String::new(),
        })
    }

    /// Records epoch `epoch`'s changes (consolidated; per key retractions before insertions);
    /// with `write == false` the lines are not written (a restart's replay) but the state is
    /// kept. Returns the number of change lines.
    pub fn epoch(&mut self, epoch: Time, changes: Vec<(Row, Diff)>, write: bool) -> std::io::Result<u64> {
        self.epoch_with(epoch, changes, write, None)
    }

    /// Like [`RowSink::epoch`], also appending the epoch's changes (its change-log lines, one
    /// per copy, written or not) to `observed`.
    pub fn epoch_with(
        &mut self,
        epoch: Time,
        mut changes: Vec<(Row, Diff)>,
        write: bool,
        mut observed: Option<&mut Vec<RowChange>>,
    ) -> std::io::Result<u64> {
        // Consolidated by row; then per key retractions before insertions, by value (a stable
        // sort of each key's run by sign keeps the value order).
        changes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut merged: Vec<(Row, Diff)> = Vec::with_capacity(changes.len());
        for (row, diff) in changes {
            match merged.last_mut() {
                Some(last) if last.0 == row => last.1 += diff,
                _ => merged.push((row, diff)),
            }
        }
        merged.retain(|x| x.1 != 0);
        for run in merged.chunk_by_mut(|a, b| a.0 .0 == b.0 .0) {
            if run.len() > 1 {
                run.sort_by_key(|(_, d)| *d > 0);
            }
        }
        let mut lines = 0u64;
        let epoch_text = epoch.to_string();
        for (row, diff) in merged {
            let sign: i8 = if diff > 0 { 1 } else { -1 };
            let copies = diff.unsigned_abs() as u64;
            lines += copies;
            if let (Some((path, w)), true) = (&mut self.changes, write) {
                self.line.clear();
                self.format.push_change_line_at(&mut self.line, &epoch_text, &row.0, &row.1, sign);
                for _ in 0..copies {
                    w.write_all(self.line.as_bytes()).map_err(|e| io_context(path, e))?;
                }
            }
            if let (Some(c), true) = (&mut self.collected, write) {
                for _ in 0..copies {
                    c.push(RowChange { epoch, key: row.0.clone(), value: row.1.clone(), diff: sign });
                }
            }
            if let Some(o) = observed.as_deref_mut() {
                for _ in 0..copies {
                    o.push(RowChange { epoch, key: row.0.clone(), value: row.1.clone(), diff: sign });
                }
            }
            if self.keep_state {
                match self.state.entry(row) {
                    Entry::Occupied(mut n) => {
                        *n.get_mut() += diff;
                        if *n.get() == 0 {
                            n.remove();
                        }
                    }
                    Entry::Vacant(slot) => {
                        slot.insert(diff);
                    }
                }
            }
        }
        if let Some((path, w)) = &mut self.changes {
            w.flush().map_err(|e| io_context(path, e))?;
        }
        Ok(lines)
    }

    /// Flushes the change log and syncs it to disk; returns its length (0 for stdout), `None`
    /// without a change log.
    pub fn sync_changes(&mut self) -> std::io::Result<Option<u64>> {
        super::sync_log(&mut self.changes, &self.changes_file)
    }

    /// Writes the result file (a temporary file renamed into place) and returns the collected
    /// changes and the final state (sorted by key text, a row once per copy), if kept.
    #[allow(clippy::type_complexity)]
    pub fn finish(mut self) -> std::io::Result<(Option<Vec<RowChange>>, Option<Vec<Row>>)> {
        if let Some((path, mut w)) = self.changes.take() {
            w.flush().map_err(|e| io_context(&path, e))?;
        }
        let mut rows: Vec<(&Row, Diff)> = self.state.iter().map(|(r, &n)| (r, n)).collect();
        rows.sort_unstable();
        if let Some(path) = &self.output {
            let tmp = super::temporary(path);
            {
                let f = File::create(&tmp).map_err(|e| io_context(&tmp, e))?;
                let mut w = BufWriter::with_capacity(1 << 16, f);
                for &((key, value), count) in &rows {
                    let line = self.format.result_line(key, value);
                    for _ in 0..count.max(0) {
                        w.write_all(line.as_bytes()).map_err(|e| io_context(&tmp, e))?;
                    }
                }
                w.flush().map_err(|e| io_context(&tmp, e))?;
                w.get_ref().sync_all().map_err(|e| io_context(&tmp, e))?;
            }
            std::fs::rename(&tmp, path).map_err(|e| io_context(path, e))?;
        }
        let state = self.keep_state.then(|| {
            let mut out = Vec::new();
            for &(row, count) in &rows {
                for _ in 0..count.max(0) {
                    out.push(row.clone());
                }
            }
            out
        });
        Ok((self.collected.take(), state))
    }
}
