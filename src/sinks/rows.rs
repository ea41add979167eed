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

/// The values of one key of a typed output's state and their counts: almost always one value,
/// which a change of value replaces in place (retractions come first), so the state is looked
/// up once per changed key and keeps its entries while the key has rows.
#[derive(Debug)]
enum Values {
    One(String, Diff),
    Many(Vec<(String, Diff)>),
}

impl Values {
    /// Adds `diff` copies of `value` (a count reaching 0 drops the value).
    fn add(&mut self, value: String, diff: Diff) {
        match self {
            Values::One(v, n) if *n == 0 => (*v, *n) = (value, diff),
            Values::One(v, n) if *v == value => *n += diff,
            Values::One(v, n) => {
                let first = (std::mem::take(v), *n);
                *self = Values::Many(vec![first, (value, diff)]);
            }
            Values::Many(list) => {
                match list.iter_mut().find(|(v, _)| *v == value) {
                    Some((_, n)) => *n += diff,
                    None => list.push((value, diff)),
                }
                list.retain(|(_, n)| *n != 0);
                if list.len() == 1 {
                    if let Some((v, n)) = list.pop() {
                        *self = Values::One(v, n);
                    }
                }
            }
        }
    }

    /// Whether no value has a count.
    fn is_empty(&self) -> bool {
        match self {
            Values::One(_, n) => *n == 0,
            Values::Many(list) => list.is_empty(),
        }
    }

    /// The values with a count.
    fn iter(&self) -> impl Iterator<Item = (&str, Diff)> {
        let (one, many) = match self {
            Values::One(v, n) => (Some((v.as_str(), *n)).filter(|_| *n != 0), &[][..]),
            Values::Many(list) => (None, &list[..]),
        };
        one.into_iter().chain(many.iter().map(|(v, n)| (v.as_str(), *n)))
    }
}

/// The first 16 bytes of `text` as a big-endian number, zero-padded: two texts whose prefixes
/// differ are ordered as their prefixes (a text that ends first pads with 0, below any byte
/// that differs from it), so only equal prefixes need the texts themselves.
fn prefix(text: &str) -> u128 {
    let mut bytes = [0u8; 16];
    let n = text.len().min(16);
    bytes[..n].copy_from_slice(&text.as_bytes()[..n]);
    u128::from_be_bytes(bytes)
}

/// Sorts rows by key text, then value text: by the keys' 16-byte prefixes, held beside the row
/// indices, and the texts only where prefixes tie (the rows' strings live apart on the heap, and
/// comparing them is what a plain sort spends its time on).
fn sort_rows(rows: &mut Vec<(Row, Diff)>) {
    if rows.len() < 2 {
        return;
    }
    let mut order: Vec<(u128, u32)> = rows.iter().enumerate().map(|(i, r)| (prefix(&r.0 .0), i as u32)).collect();
    order.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| rows[a.1 as usize].0.cmp(&rows[b.1 as usize].0)));
    let mut sorted = Vec::with_capacity(rows.len());
    sorted.extend(order.iter().map(|&(_, i)| std::mem::take(&mut rows[i as usize])));
    *rows = sorted;
}

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
    /// The current rows: per key text, its values and their counts (unordered; sorted where
    /// it is written).
    state: FxHashMap<String, Values>,
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
        sort_rows(&mut changes);
        changes.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 += later.1;
            }
            same
        });
        changes.retain(|x| x.1 != 0);
        let mut lines = 0u64;
        let epoch_text = epoch.to_string();
        let mut start = 0;
        while start < changes.len() {
            let mut end = start + 1;
            while end < changes.len() && changes[end].0 .0 == changes[start].0 .0 {
                end += 1;
            }
            let run = &mut changes[start..end];
            start = end;
            if run.len() > 1 {
                run.sort_by_key(|(_, d)| *d > 0);
            }
            for (row, diff) in run.iter() {
                let sign: i8 = if *diff > 0 { 1 } else { -1 };
                let copies = diff.unsigned_abs() as u64;
                lines += copies;
                if let (Some((path, w)), true) = (&mut self.changes, write) {
                    self.line.clear();
                    self.format.push_change_line_at(&mut self.line, &epoch_text, &row.0, &row.1, sign);
                    for _ in 0..copies {
                        w.write_all(self.line.as_bytes()).map_err(|e| io_context(path, e))?;
                    }
                }
                for list in [self.collected.as_mut().filter(|_| write), observed.as_deref_mut()].into_iter().flatten() {
                    for _ in 0..copies {
                        list.push(RowChange { epoch, key: row.0.clone(), value: row.1.clone(), diff: sign });
                    }
                }
            }
            if self.keep_state {
                let key = std::mem::take(&mut run[0].0 .0);
                let values = run.iter_mut().map(|((_, v), d)| (std::mem::take(v), *d));
                match self.state.entry(key) {
                    Entry::Occupied(mut slot) => {
                        values.for_each(|(v, d)| slot.get_mut().add(v, d));
                        if slot.get().is_empty() {
                            slot.remove();
                        }
                    }
                    Entry::Vacant(slot) => {
                        let mut first = Values::One(String::new(), 0);
                        values.for_each(|(v, d)| first.add(v, d));
                        if !first.is_empty() {
                            slot.insert(first);
                        }
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
        let mut rows: Vec<(&str, &str, Diff)> =
            self.state.iter().flat_map(|(k, values)| values.iter().map(move |(v, n)| (k.as_str(), v, n))).collect();
        rows.sort_unstable();
        if let Some(path) = &self.output {
            let tmp = super::temporary(path);
            {
                let f = File::create(&tmp).map_err(|e| io_context(&tmp, e))?;
                let mut w = BufWriter::with_capacity(1 << 16, f);
                for &(key, value, count) in &rows {
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
            for &(key, value, count) in &rows {
                for _ in 0..count.max(0) {
                    out.push((key.to_string(), value.to_string()));
                }
            }
            out
        });
        Ok((self.collected.take(), state))
    }
}
