//! The **sinks** layer: where an algorithm's output changes go.
//!
//! * [`ResultSink`] turns each completed epoch's changes into change-log lines
//!   (`epoch key value diff`, diff `1` or `-1`) and keeps the current result for the final
//!   `--output` file (`key value`, sorted by key).
//! * [`RowSink`] does the same for a typed output's rendered rows, as text or JSON lines
//!   ([`crate::types::format::RowFormat`]).
//! * [`StatsWriter`] writes one JSON object per epoch and a summary object (`--stats`).
//! * [`Progress`] reports on stderr while a run goes on.
//!
//! Only one worker in the whole computation (worker 0 of process 0) owns these, so every file is
//! written once, complete, and is byte-identical whatever the process layout: each epoch's changes
//! are consolidated and sorted before they are written.
//!
//! ```
//! use ripples::sinks::{consolidate, Change, ResultSink};
//! use ripples::types::format::ValueFormat;
//! // Equal records' diffs are summed; records whose diffs cancel disappear.
//! let mut changes = vec![((1, 2), 1), ((0, 5), -1), ((1, 2), -1), ((0, 5), 2)];
//! consolidate(&mut changes);
//! assert_eq!(changes, vec![((0, 5), 1)]);
//!
//! // A sink writing the change log and the final result of a two-epoch run.
//! let dir = tempfile::tempdir().unwrap();
//! let (log, out) = (dir.path().join("wcc.changes"), dir.path().join("wcc.out"));
//! let mut sink = ResultSink::new(ValueFormat::Integer, Some(&log), Some(&out), true, false).unwrap();
//! // Epoch 0: vertices 1 and 2 get label 1. Epoch 1: vertex 2 moves to label 2 (retracted
//! // first), and a change that cancels within the epoch is never written.
//! assert_eq!(sink.epoch(0, vec![((2, 1), 1), ((1, 1), 1)]).unwrap(), 2);
//! assert_eq!(sink.epoch(1, vec![((2, 2), 1), ((2, 1), -1), ((9, 9), 1), ((9, 9), -1)]).unwrap(), 2);
//! let (collected, state) = sink.finish().unwrap();
//! assert_eq!(std::fs::read_to_string(&log).unwrap(), "0 1 1 1\n0 2 1 1\n1 2 1 -1\n1 2 2 1\n");
//! assert_eq!(std::fs::read_to_string(&out).unwrap(), "1 1\n2 2\n");
//! assert_eq!(state.unwrap(), vec![(1, 1), (2, 2)]);
//! assert_eq!(collected.unwrap()[2], Change { epoch: 1, key: 2, value: 1, diff: -1 });
//! ```

mod progress;
mod rows;
mod state;
mod stats;

pub use progress::Progress;
pub use rows::{RowChange, RowSink};
pub use state::KeyedState;
pub use stats::{RunSummary, StatsWriter};

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::types::format::ValueFormat;
use crate::types::{Diff, Node, Time};

/// One line of the change log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Change {
    /// The epoch the change happened in; in a windowed run (`--window`, `--tumbling`) the event
    /// time instead.
    pub epoch: Time,
    /// The result's key: for vertex algorithms the vertex id.
    pub key: Node,
    /// The value, as the algorithm's [`ValueFormat`] reads it (for floats the `f64` bits).
    pub value: u64,
    /// `1` or `-1`.
    pub diff: i8,
}

/// Consolidates changes: sorts them by `(key, value)`, sums the diffs of equal records and drops
/// those that cancel. (One unstable sort by a 128-bit key, whose comparison has no branch
/// between key and value: about half the time of a stable sort of the records, on the writer's
/// path of every epoch.)
pub fn consolidate(changes: &mut Vec<((Node, u64), Diff)>) {
    changes.sort_unstable_by_key(|&((key, value), _)| ((key as u128) << 64) | value as u128);
    let mut w = 0;
    for r in 0..changes.len() {
        if w > 0 && changes[w - 1].0 == changes[r].0 {
            changes[w - 1].1 += changes[r].1;
        } else {
            changes[w] = changes[r];
            w += 1;
        }
    }
    changes.truncate(w);
    changes.retain(|c| c.1 != 0);
}

/// Receives each completed epoch's changes, in epoch order.
pub struct ResultSink {
    format: ValueFormat,
    changes: Option<(PathBuf, BufWriter<Box<dyn Write + Send>>)>,
    output: Option<PathBuf>,
    keep_state: bool,
    /// The current result: a count per `(key, value)`, indexed by key (sorted where it is
    /// written).
    state: KeyedState,
    /// Scratch: one key's changes `(value, diff)` on their way into `state`.
    run: Vec<(u64, Diff)>,
    collected: Option<Vec<Change>>,
    line: String,
    /// The change-log file itself (for syncing and its length), when it is a file.
    changes_file: Option<File>,
}

/// Where a result file is written before it is renamed into place: `out.txt` → `out.txt.ripples-tmp`.
fn temporary(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".ripples-tmp");
    PathBuf::from(name)
}

fn io_context(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("cannot write {}: {}", path.display(), e))
}

/// A change log's buffered writer.
type LogWriter = BufWriter<Box<dyn Write + Send>>;

/// A change log's writer: `-` is stdout; a file is created, or with `resume = Some(offset)` kept,
/// cut back to `offset` bytes and appended to (it must be at least that long). Returns the
/// writer and, for a file, the file itself (for syncing it and reading its length).
fn open_changes(p: &Path, resume: Option<u64>, capacity: usize) -> std::io::Result<(LogWriter, Option<File>)> {
    if p == Path::new("-") {
        let w: Box<dyn Write + Send> = Box::new(std::io::stdout());
        return Ok((BufWriter::new(w), None));
    }
    let f = match resume {
        None | Some(0) => File::create(p).map_err(|e| io_context(p, e))?,
        Some(offset) => {
            let mut f = std::fs::OpenOptions::new().write(true).open(p).map_err(|e| io_context(p, e))?;
            let len = f.metadata().map_err(|e| io_context(p, e))?.len();
            if len < offset {
                return Err(std::io::Error::other(format!(
                    "{} has {} bytes but the state directory records {} bytes of changes: the change log does not belong to this state directory",
                    p.display(),
                    len,
                    offset
                )));
            }
            f.set_len(offset).map_err(|e| io_context(p, e))?;
            use std::io::Seek;
            f.seek(std::io::SeekFrom::End(0)).map_err(|e| io_context(p, e))?;
            f
        }
    };
    let file = f.try_clone().map_err(|e| io_context(p, e))?;
    let w: Box<dyn Write + Send> = Box::new(f);
    Ok((BufWriter::with_capacity(capacity, w), Some(file)))
}

/// Flushes a change log and syncs it to disk; returns its length (0 for stdout, see
/// [`ResultSink::sync_changes`]), `None` without a change log.
fn sync_log(changes: &mut Option<(PathBuf, LogWriter)>, file: &Option<File>) -> std::io::Result<Option<u64>> {
    match (changes, file) {
        (Some((path, w)), Some(f)) => {
            w.flush().map_err(|e| io_context(path, e))?;
            f.sync_data().map_err(|e| io_context(path, e))?;
            Ok(Some(f.metadata().map_err(|e| io_context(path, e))?.len()))
        }
        (Some((path, w)), None) => {
            w.flush().map_err(|e| io_context(path, e))?;
            Ok(Some(0))
        }
        (None, _) => Ok(None),
    }
}

impl ResultSink {
    /// A sink writing the change log to `changes` (`-` is stdout, flushed every epoch) and the
    /// final result to `output`; with `collect`, changes are also kept in memory.
    pub fn new(
        format: ValueFormat,
        changes: Option<&Path>,
        output: Option<&Path>,
        collect: bool,
        keep_state: bool,
    ) -> std::io::Result<Self> {
        Self::new_resuming(format, changes, output, collect, keep_state, None)
    }

    /// Like [`ResultSink::new`], but with `resume = Some(offset)` the change-log file is kept,
    /// cut back to `offset` bytes, and appended to (a restart after a crash); the file must be at
    /// least that long.
    pub fn new_resuming(
        format: ValueFormat,
        changes: Option<&Path>,
        output: Option<&Path>,
        collect: bool,
        keep_state: bool,
        resume: Option<u64>,
    ) -> std::io::Result<Self> {
        let (changes, changes_file) = match changes {
            None => (None, None),
            Some(p) => {
                let (w, f) = open_changes(p, resume, 1 << 20)?;
                (Some((p.to_path_buf(), w)), f)
            }
        };
        if let Some(p) = output {
            // Fail early if the output cannot be written; the real file is written at the end,
            // to a temporary name renamed into place, so nothing partial or empty is ever
            // visible under `p`.
            let tmp = temporary(p);
            File::create(&tmp).map_err(|e| io_context(p, e))?;
            std::fs::remove_file(&tmp).map_err(|e| io_context(&tmp, e))?;
        }
        Ok(ResultSink {
            format,
            changes,
            output: output.map(|p| p.to_path_buf()),
            keep_state: output.is_some() || keep_state,
            state: KeyedState::default(),
            run: Vec::new(),
            collected: if collect { Some(Vec::new()) } else { None },
            line: String::new(),
            changes_file,
        })
    }

    /// Flushes the change log and syncs it to disk; returns its length (for a change-log mark):
    /// for stdout (`-`) 0 once flushed (what was written has been handed to the reader, and a
    /// restart continues after it); `None` without a change log.
    pub fn sync_changes(&mut self) -> std::io::Result<Option<u64>> {
        sync_log(&mut self.changes, &self.changes_file)
    }

    /// Records epoch `epoch`'s changes; returns the number of change lines it produced.
    pub fn epoch(&mut self, epoch: Time, changes: Vec<((Node, u64), Diff)>) -> std::io::Result<u64> {
        self.epoch_with(epoch, changes, true, None)
    }

    /// Like [`ResultSink::epoch`]; with `write == false` the change lines are not written (they
    /// are already in the change log, before a restart) but the state is still updated. With
    /// `observed`, every change line (written or not) is also appended there.
    pub fn epoch_with(
        &mut self,
        epoch: Time,
        mut changes: Vec<((Node, u64), Diff)>,
        write: bool,
        mut observed: Option<&mut Vec<Change>>,
    ) -> std::io::Result<u64> {
        consolidate(&mut changes);
        // Per key: retractions before insertions, then by value. `consolidate` sorted by
        // (key, value), so only each key's run (usually one or two records) is reordered.
        for run in changes.chunk_by_mut(|a, b| a.0 .0 == b.0 .0) {
            run.sort_unstable_by_key(|((_, v), d)| (*d > 0, *v));
        }
        let mut lines = 0u64;
        for &((key, value), diff) in &changes {
            let sign: i8 = if diff > 0 { 1 } else { -1 };
            let copies = diff.unsigned_abs() as u64;
            lines += copies;
            if let (Some((path, w)), true) = (&mut self.changes, write) {
                self.line.clear();
                use std::fmt::Write as _;
                let _ = write!(self.line, "{} {} ", epoch, key);
                self.format.write(value, &mut self.line);
                let _ = writeln!(self.line, " {}", sign);
                for _ in 0..copies {
                    w.write_all(self.line.as_bytes()).map_err(|e| io_context(path, e))?;
                }
            }
            if let (Some(c), true) = (&mut self.collected, write) {
                for _ in 0..copies {
                    c.push(Change { epoch, key, value, diff: sign });
                }
            }
            if let Some(o) = observed.as_deref_mut() {
                for _ in 0..copies {
                    o.push(Change { epoch, key, value, diff: sign });
                }
            }
        }
        if self.keep_state {
            // A key's changes at once: one lookup for a vertex that moves to another value.
            for run in changes.chunk_by(|a, b| a.0 .0 == b.0 .0) {
                self.run.clear();
                self.run.extend(run.iter().map(|&((_, value), diff)| (value, diff)));
                self.state.apply_run(run[0].0 .0, &self.run);
            }
        }
        if let Some((path, w)) = &mut self.changes {
            w.flush().map_err(|e| io_context(path, e))?;
        }
        Ok(lines)
    }

    /// Writes the final result file (atomically: a temporary file renamed into place) and returns
    /// the collected changes, if collection was asked for, and the final state, if kept.
    #[allow(clippy::type_complexity)]
    pub fn finish(mut self) -> std::io::Result<(Option<Vec<Change>>, Option<Vec<(Node, u64)>>)> {
        if let Some((path, mut w)) = self.changes.take() {
            w.flush().map_err(|e| io_context(&path, e))?;
        }
        // The state in (key, value) order, for the output file and the returned state.
        let sorted = std::mem::take(&mut self.state).into_sorted();
        if let Some(path) = &self.output {
            let tmp = temporary(path);
            {
                let f = File::create(&tmp).map_err(|e| io_context(&tmp, e))?;
                let mut w = BufWriter::with_capacity(1 << 20, f);
                let mut line = String::new();
                for &((key, value), count) in &sorted {
                    line.clear();
                    use std::fmt::Write as _;
                    let _ = write!(line, "{} ", key);
                    self.format.write(value, &mut line);
                    line.push('\n');
                    for _ in 0..count.max(0) {
                        w.write_all(line.as_bytes()).map_err(|e| io_context(&tmp, e))?;
                    }
                }
                w.flush().map_err(|e| io_context(&tmp, e))?;
                w.get_ref().sync_all().map_err(|e| io_context(&tmp, e))?;
            }
            std::fs::rename(&tmp, path).map_err(|e| io_context(path, e))?;
        }
        let state = if self.keep_state {
            let mut out = Vec::with_capacity(sorted.len());
            for &((key, value), count) in &sorted {
                for _ in 0..count.max(0) {
                    out.push((key, value));
                }
            }
            Some(out)
        } else {
            None
        };
        Ok((self.collected.take(), state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consolidate_sums_and_drops_zeros() {
        let mut v = vec![((1, 2), 1), ((0, 5), -1), ((1, 2), -1), ((0, 5), 2), ((3, 3), 1)];
        consolidate(&mut v);
        assert_eq!(v, vec![((0, 5), 1), ((3, 3), 1)]);
        let mut w = vec![((1, 1), 1), ((1, 1), -1)];
        consolidate(&mut w);
        assert!(w.is_empty());
    }

    #[test]
    fn change_log_and_output() {
        let dir = tempfile::tempdir().unwrap();
        let changes = dir.path().join("c.txt");
        let output = dir.path().join("o.txt");
        let mut sink = ResultSink::new(ValueFormat::Integer, Some(&changes), Some(&output), true, false).unwrap();
        assert_eq!(sink.epoch(0, vec![((2, 1), 1), ((1, 1), 1)]).unwrap(), 2);
        assert_eq!(sink.epoch(1, vec![((2, 1), -1), ((2, 2), 1), ((9, 9), 1), ((9, 9), -1)]).unwrap(), 2);
        let (collected, state) = sink.finish().unwrap();
        let collected = collected.unwrap();
        assert_eq!(state.unwrap(), vec![(1, 1), (2, 2)]);
        assert_eq!(collected.len(), 4);
        assert_eq!(std::fs::read_to_string(&changes).unwrap(), "0 1 1 1\n0 2 1 1\n1 2 1 -1\n1 2 2 1\n");
        assert_eq!(std::fs::read_to_string(&output).unwrap(), "1 1\n2 2\n");
    }
}
