//! The state directory of `--state-dir DIR`: a write-ahead log of accepted epochs, snapshots of
//! the consolidated edge multiset, and crash recovery that loses no acknowledged epoch.
//!
//! # On-disk format (version 1, all integers little-endian)
//!
//! | file | content |
//! | --- | --- |
//! | `log-<S>.bin` | a log segment: records for epochs `S, S+1, …`, consecutive, nothing else |
//! | `snapshot-<E>.bin` | the edge multiset after epoch `E` |
//! | `changes.mark` | `(epoch, byte offset)` of the `--changes` file (see [`ChangeLogMark`]) |
//! | `lock` | empty; an exclusive advisory lock on it keeps two processes out of one directory |
//! | `*.tmp` | a snapshot or mark being written; never read, removed by [`StateDir::open`] |
//! | `*.corrupt`, `*.discarded-at-<N>` | bytes recovery could not use, kept for inspection; ignored |
//!
//! A **log record** is `len: u64`, `crc: u32`, then `len` payload bytes; `crc` is the CRC-32 of
//! the 8 length bytes followed by the payload (so a damaged length is caught too). The payload is
//! `epoch: u64`, `n: u64`, then `n` updates, each `src: u64`, `dst: u64`, a weight flag byte
//! (`0` no weight, `1` weight follows), the weight's `f64` bits as `u64` when the flag is `1`, and
//! `diff: i8` — 18 bytes per unweighted update, 26 per weighted one, plus 28 bytes per epoch.
//! Updates of a windowed stream carry an event time: flag bit `2` is set and the time (`u64`)
//! follows the weight (8 more bytes). Snapshot entries of a windowed stream carry theirs the same
//! way (entries are then sorted by edge and event time; static edges have none).
//!
//! A **snapshot** is `"RPLSNAP1"`, `epoch: u64`, `n: u64`, then `n` entries sorted by
//! [`Update::edge`] without duplicates, each `src`, `dst`, weight flag and bits as above and
//! `count: u64` (≥ 1, the number of copies), then a CRC-32 (`u32`) of everything before it.
//!
//! # When data is forced to disk, and why
//!
//! * [`StateDir::append`]: after writing the record, `fdatasync` of the segment, so the epoch is
//!   on disk before anyone is told it was accepted (an `ok E` answer must never be a lie). When
//!   the record opens a new segment, the directory is fsynced too, or the new file's name could
//!   vanish in a crash together with the acknowledged record. **Cost: one `fdatasync` per epoch**
//!   (typically 0.1–10 ms depending on the device), so the epoch rate, not the update rate, is
//!   bounded by the disk; batch updates into larger epochs to amortise it.
//! * [`StateDir::snapshot`]: the content goes to `snapshot-<E>.bin.tmp`, which is fsynced, then
//!   renamed to `snapshot-<E>.bin`, then the directory is fsynced. Without the file fsync a crash
//!   could leave a renamed but empty/partial snapshot; without the directory fsync the rename
//!   might not survive while the deletions that follow it do. Only after that are old files
//!   deleted, and the directory fsynced once more (so deletions do not linger; losing them in a
//!   crash would be harmless anyway, recovery ignores files it does not need).
//! * [`write_mark`]: temp file, fsync, rename, directory fsync — the mark is always either the
//!   old or the new value, never a mix.
//! * Recovery fsyncs every repair (truncated segment, saved bytes, renames) before it returns,
//!   so a crash during recovery just repeats the same recovery.
//!
//! # What is kept
//!
//! The newest two snapshots are kept, and the log segments needed to replay from the *older*
//! of them (with a single snapshot, the whole log is kept). So any one snapshot can turn out to
//! be corrupt and the state is still rebuilt from the other one plus the log. A snapshot at the
//! last logged epoch starts a new segment `log-<E+1>.bin` (created with the next append); a
//! snapshot at an earlier epoch keeps appending to the current segment.
//!
//! # Recovery ([`StateDir::open`])
//!
//! 1. Leftover `snapshot-*.bin.tmp` files (a crash between writing a snapshot and renaming it)
//!    are deleted with a warning: the snapshot was never complete, the log still covers it.
//! 2. The newest snapshot whose checksum, length, header and epoch check out is loaded. Newer
//!    corrupt ones (bad checksum, truncated, …) are renamed to `*.corrupt` with a warning, and
//!    the next older one is used.
//! 3. Log segments are read in order; segments that only hold epochs up to the snapshot are not
//!    read at all; records up to the snapshot epoch are checked and skipped, the later ones are
//!    returned in [`Recovered::log`].
//! 4. The first bad record — incomplete header or payload (a torn write), a length outside the
//!    possible range, a checksum mismatch, a payload that does not decode, an epoch out of
//!    sequence — ends the log. A warning names the file, the byte offset and the problem; the
//!    bytes from there on are copied to `log-<S>.bin.discarded-at-<offset>` (unless they are
//!    only an incomplete last record, which was never acknowledged), later segments that can no
//!    longer be reached without a gap are renamed the same way, and the segment is cut back to
//!    the end of the last good record, so appending continues cleanly.
//! 5. If the log does not reach back to the snapshot (or, without a valid snapshot, to epoch 0)
//!    — e.g. every snapshot is corrupt and the old log was already deleted — `open` fails with
//!    [`DurabilityError::Unrecoverable`] instead of silently starting from a wrong state.
//!
//! Guarantee: every epoch for which [`StateDir::append`] returned `Ok` is recovered, provided the
//! disk honours fsync and does not corrupt acknowledged data. Data the disk damaged after it was
//! acknowledged is reported, not invented: recovery stops at the damage (older snapshot + log up
//! to the damage). If `append` or `snapshot` fails with an I/O error the `StateDir` refuses any
//! further writes ([`DurabilityError::Poisoned`]); reopen it to let recovery sort the tail out
//! (the failed epoch may or may not be there).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::live::{EpochBatch, Recovery};
use crate::types::{Time, Update};

const LOG_PREFIX: &str = "log-";
const SNAPSHOT_PREFIX: &str = "snapshot-";
const BIN: &str = ".bin";
const TMP: &str = ".tmp";
const LOCK_FILE: &str = "lock";
/// The change-log mark's file name inside the state directory.
pub const MARK_FILE: &str = "changes.mark";

const SNAPSHOT_MAGIC: &[u8; 8] = b"RPLSNAP1";
const MARK_MAGIC: &[u8; 8] = b"RPLMARK1";
/// `len: u64` + `crc: u32`.
const RECORD_HEADER: u64 = 12;
/// `epoch: u64` + `n: u64`.
const MIN_PAYLOAD: u64 = 16;
/// Larger length fields are taken as corruption (1 TiB; no epoch is that large).
const MAX_PAYLOAD: u64 = 1 << 40;
/// Smallest encoded update (unweighted).
const MIN_UPDATE: u64 = 18;

/// Errors of the state directory. Every message names the file or directory concerned.
#[derive(Debug, thiserror::Error)]
pub enum DurabilityError {
    #[error("{}: {op} failed: {source}", .path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: io::Error,
    },
    #[error(
        "{}: cannot log epoch {got}: epochs must be consecutive and the next one is {expected}",
        .path.display()
    )]
    NotConsecutive { path: PathBuf, expected: Time, got: Time },
    #[error("{}: cannot snapshot epoch {epoch}: {reason}", .path.display())]
    BadSnapshot { path: PathBuf, epoch: Time, reason: String },
    #[error("{}: epoch {epoch} is too large for one log record ({bytes} bytes)", .path.display())]
    TooLarge { path: PathBuf, epoch: Time, bytes: u64 },
    #[error("{}: corrupt: {detail}", .path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("{}: cannot recover: {detail}", .path.display())]
    Unrecoverable { path: PathBuf, detail: String },
    #[error("{}: the state directory is in use by another process", .path.display())]
    Locked { path: PathBuf },
    #[error(
        "{}: an earlier write failed, so what is on disk is uncertain; reopen the state \
         directory to recover",
        .path.display()
    )]
    Poisoned { path: PathBuf },
}

fn io_err(path: &Path, op: &'static str) -> impl FnOnce(io::Error) -> DurabilityError {
    let path = path.to_path_buf();
    move |source| DurabilityError::Io { path, op, source }
}

/// What [`StateDir::open`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recovered {
    /// The epoch of the snapshot used; `None` without a (valid) snapshot.
    pub snapshot_epoch: Option<Time>,
    /// The edge multiset at `snapshot_epoch`: `(edge with diff +1, count)`, sorted by
    /// [`Update::edge`], one entry per distinct edge.
    pub snapshot_edges: Vec<(Update, u64)>,
    /// Windowed streams: the event time of each entry of `snapshot_edges` (`None` for a static
    /// edge); empty when no entry has one.
    pub snapshot_times: Vec<Option<Time>>,
    /// The logged epochs after the snapshot (from epoch 0 without one), consecutive.
    pub log: Vec<EpochBatch>,
    /// The last durable epoch (the last log record, else the snapshot); `None` if nothing is.
    pub last_epoch: Option<Time>,
    /// Human-readable reports of everything recovery repaired or could not use.
    pub warnings: Vec<String>,
}

impl Recovered {
    /// The driver's view: the snapshot expanded to one update per edge copy, then the log.
    pub fn into_recovery(self, written_through: Option<Time>) -> Recovery {
        let mut base_updates = Vec::with_capacity(self.snapshot_edges.iter().map(|&(_, c)| c as usize).sum::<usize>());
        let mut base_times = Vec::new();
        for (i, (update, count)) in self.snapshot_edges.into_iter().enumerate() {
            let copy = Update { diff: 1, ..update };
            base_updates.extend(std::iter::repeat_n(copy, count as usize));
            if let Some(&t) = self.snapshot_times.get(i) {
                base_times.extend(std::iter::repeat_n(t, count as usize));
            }
        }
        Recovery {
            base_epoch: self.snapshot_epoch.unwrap_or(0),
            base_updates,
            base_times,
            replay: self.log,
            written_through,
        }
    }
}

/// The segment appends go to.
#[derive(Debug)]
struct Active {
    start: Time,
    path: PathBuf,
    file: File,
}

/// An open state directory: the only writer of its log and snapshots while it lives.
#[derive(Debug)]
pub struct StateDir {
    dir: PathBuf,
    /// Holds the advisory lock.
    _lock: File,
    /// The epoch the next append must carry (0: nothing durable yet).
    next: Time,
    active: Option<Active>,
    /// Log segments on disk, by first epoch.
    segments: BTreeMap<Time, PathBuf>,
    /// Snapshot epochs on disk (the newest is valid; one older may be kept as a fallback).
    snapshots: BTreeSet<Time>,
    poisoned: bool,
}

fn segment_name(start: Time) -> String {
    format!("{LOG_PREFIX}{start}{BIN}")
}

fn snapshot_name(epoch: Time) -> String {
    format!("{SNAPSHOT_PREFIX}{epoch}{BIN}")
}

/// `prefix<u64>suffix` with the number in canonical form.
fn parse_numbered(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    let digits = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
    let n: u64 = digits.parse().ok()?;
    (n.to_string() == digits).then_some(n)
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), DurabilityError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io_err(dir, "fsync of directory"))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), DurabilityError> {
    Ok(())
}

/// `base`, or `base.1`, `base.2`, … whichever does not exist yet.
fn unused_path(base: PathBuf) -> PathBuf {
    if !base.exists() {
        return base;
    }
    (1u32..)
        .map(|i| PathBuf::from(format!("{}.{i}", base.display())))
        .find(|p| !p.exists())
        .expect("some suffix is free")
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Encoding

fn put_weighted(buf: &mut Vec<u8>, u: &Update) {
    buf.extend_from_slice(&u.src.to_le_bytes());
    buf.extend_from_slice(&u.dst.to_le_bytes());
    match u.weight {
        None => buf.push(0),
        Some(w) => {
            buf.push(1);
            buf.extend_from_slice(&w.to_bits().to_le_bytes());
        }
    }
}

/// A bounds-checked reader over a byte slice.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.remaining() < n {
            return Err(format!("content ends early at byte {}", self.pos));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.bytes(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.bytes(8)?.try_into().unwrap()))
    }
    /// `src, dst, flags [, weight bits] [, event time]` as an update with diff +1; flag bit 0:
    /// a weight follows, bit 1 (log records only, `timed`): an event time follows.
    fn weighted_timed(&mut self, timed: bool) -> Result<(Update, Option<Time>), String> {
        let src = self.u64()?;
        let dst = self.u64()?;
        let flags = self.u8()?;
        let allowed = if timed { 3 } else { 1 };
        if flags & !allowed != 0 {
            return Err(format!(
                "weight flag {flags} (must be 0 or 1{})",
                if timed { ", +2 for an event time" } else { "" }
            ));
        }
        let weight = (flags & 1 != 0).then(|| self.u64()).transpose()?.map(f64::from_bits);
        let time = (flags & 2 != 0).then(|| self.u64()).transpose()?;
        Ok((Update { src, dst, weight, diff: 1 }, time))
    }
}

/// One complete log record (header included) for `batch`.
fn encode_record(batch: &EpochBatch) -> Vec<u8> {
    let mut rec = Vec::with_capacity(RECORD_HEADER as usize + 16 + batch.updates.len() * 26);
    rec.extend_from_slice(&[0u8; RECORD_HEADER as usize]);
    rec.extend_from_slice(&batch.epoch.to_le_bytes());
    rec.extend_from_slice(&(batch.updates.len() as u64).to_le_bytes());
    for (i, u) in batch.updates.iter().enumerate() {
        let mark = rec.len() + 16;
        put_weighted(&mut rec, u);
        if let Some(Some(t)) = batch.times.get(i) {
            rec[mark] |= 2;
            rec.extend_from_slice(&t.to_le_bytes());
        }
        rec.push(u.diff as u8);
    }
    let len = rec.len() as u64 - RECORD_HEADER;
    rec[0..8].copy_from_slice(&len.to_le_bytes());
    let crc = record_crc(&rec[0..8], &rec[RECORD_HEADER as usize..]);
    rec[8..12].copy_from_slice(&crc.to_le_bytes());
    rec
}

fn record_crc(len_bytes: &[u8], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(len_bytes);
    h.update(payload);
    h.finalize()
}

fn decode_payload(payload: &[u8]) -> Result<EpochBatch, String> {
    let mut c = Cursor::new(payload);
    let epoch = c.u64()?;
    let n = c.u64()?;
    if n > c.remaining() as u64 / MIN_UPDATE {
        return Err(format!("{n} updates cannot fit in {} bytes", payload.len()));
    }
    let mut updates = Vec::with_capacity(n as usize);
    let mut times = Vec::new();
    for _ in 0..n {
        let (mut u, t) = c.weighted_timed(true)?;
        u.diff = c.u8()? as i8;
        updates.push(u);
        times.push(t);
    }
    if times.iter().all(Option::is_none) {
        times.clear();
    }
    if c.remaining() != 0 {
        return Err(format!("{} unexpected bytes after the last update", c.remaining()));
    }
    Ok(EpochBatch { epoch, updates, times, late: 0 })
}

/// A snapshot entry: an edge (diff +1), its event time in a windowed stream, its copies.
pub type SnapshotEntry = (Update, Option<Time>, u64);

/// Sorts by edge and event time, merges duplicates, and checks the entries.
fn consolidate(edges: &[SnapshotEntry]) -> Result<Vec<SnapshotEntry>, String> {
    let mut v = Vec::with_capacity(edges.len());
    for &(u, time, count) in edges {
        if u.diff != 1 {
            return Err(format!("edge ({}, {}) has diff {} (must be +1)", u.src, u.dst, u.diff));
        }
        if count == 0 {
            return Err(format!("edge ({}, {}) has count 0", u.src, u.dst));
        }
        v.push((u, time, count));
    }
    v.sort_by_key(|(u, t, _)| (u.edge(), *t));
    let mut out: Vec<SnapshotEntry> = Vec::with_capacity(v.len());
    for (u, time, count) in v {
        match out.last_mut() {
            Some((last, t, c)) if last.edge() == u.edge() && *t == time => {
                *c = c.checked_add(count).ok_or_else(|| format!("edge ({}, {}) count overflows", u.src, u.dst))?;
            }
            _ => out.push((u, time, count)),
        }
    }
    Ok(out)
}

/// A writer that checksums what passes through it.
struct CrcWriter<W: Write> {
    inner: W,
    hasher: crc32fast::Hasher,
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes and fsyncs a complete snapshot file at `path` (a temp path; the caller renames it).
fn write_snapshot_file(path: &Path, epoch: Time, edges: &[SnapshotEntry]) -> io::Result<()> {
    let file = OpenOptions::new().write(true).create(true).truncate(true).open(path)?;
    let mut w = CrcWriter { inner: BufWriter::new(file), hasher: crc32fast::Hasher::new() };
    w.write_all(SNAPSHOT_MAGIC)?;
    w.write_all(&epoch.to_le_bytes())?;
    w.write_all(&(edges.len() as u64).to_le_bytes())?;
    let mut entry = Vec::with_capacity(33);
    for (u, time, count) in edges {
        entry.clear();
        put_weighted(&mut entry, u);
        if let Some(t) = time {
            entry[16] |= 2;
            entry.extend_from_slice(&t.to_le_bytes());
        }
        entry.extend_from_slice(&count.to_le_bytes());
        w.write_all(&entry)?;
    }
    let crc = w.hasher.finalize();
    let mut inner = w.inner;
    inner.write_all(&crc.to_le_bytes())?;
    let file = inner.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()
}

/// Reads a snapshot: `Ok(Err(detail))` when its content is corrupt.
fn read_snapshot(path: &Path, epoch: Time) -> Result<Result<Vec<SnapshotEntry>, String>, DurabilityError> {
    let bytes = fs::read(path).map_err(io_err(path, "reading snapshot"))?;
    Ok(decode_snapshot(&bytes, epoch))
}

fn decode_snapshot(bytes: &[u8], epoch: Time) -> Result<Vec<SnapshotEntry>, String> {
    let min = SNAPSHOT_MAGIC.len() + 8 + 8 + 4;
    if bytes.len() < min {
        return Err(format!("truncated: {} bytes, a snapshot has at least {min}", bytes.len()));
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_le_bytes(trailer.try_into().unwrap());
    let computed = crc32fast::hash(content);
    if stored != computed {
        return Err(format!(
            "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}; \
             truncated or damaged, {} bytes)",
            bytes.len()
        ));
    }
    let mut c = Cursor::new(content);
    if c.bytes(SNAPSHOT_MAGIC.len())? != SNAPSHOT_MAGIC {
        return Err("not a snapshot file (bad magic)".into());
    }
    let stored_epoch = c.u64()?;
    if stored_epoch != epoch {
        return Err(format!("holds epoch {stored_epoch}, its name says {epoch}"));
    }
    let n = c.u64()?;
    if n > c.remaining() as u64 / 25 {
        return Err(format!("{n} entries cannot fit in {} bytes", content.len()));
    }
    let mut edges: Vec<SnapshotEntry> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let (u, time) = c.weighted_timed(true)?;
        let count = c.u64()?;
        if count == 0 {
            return Err(format!("entry {i} has count 0"));
        }
        if let Some((prev, prev_time, _)) = edges.last() {
            if (prev.edge(), *prev_time) >= (u.edge(), time) {
                return Err(format!("entry {i} is out of order"));
            }
        }
        edges.push((u, time, count));
    }
    if c.remaining() != 0 {
        return Err(format!("{} unexpected bytes after the last entry", c.remaining()));
    }
    Ok(edges)
}

// ---------------------------------------------------------------------------------------------
// Log segments

/// The first unusable spot in a segment.
struct Problem {
    offset: u64,
    what: String,
    /// Only an incomplete last record: a write cut short by a crash, never acknowledged.
    torn: bool,
}

struct Scan {
    /// Number of good records (epochs `start .. start + records`).
    records: u64,
    problem: Option<Problem>,
}

/// Reads a segment's records in order, handing each good one to `each`, up to the first problem.
fn scan_segment(path: &Path, start: Time, mut each: impl FnMut(EpochBatch)) -> Result<Scan, DurabilityError> {
    let file = File::open(path).map_err(io_err(path, "opening log segment"))?;
    let file_len = file.metadata().map_err(io_err(path, "reading log segment metadata"))?.len();
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut offset = 0u64;
    let mut records = 0u64;
    let problem = |offset, what: String, torn| Some(Problem { offset, what, torn });
    loop {
        if offset == file_len {
            return Ok(Scan { records, problem: None });
        }
        let remaining = file_len - offset;
        if remaining < RECORD_HEADER {
            let what = format!("incomplete record header ({remaining} of {RECORD_HEADER} bytes)");
            return Ok(Scan { records, problem: problem(offset, what, true) });
        }
        let mut header = [0u8; RECORD_HEADER as usize];
        reader.read_exact(&mut header).map_err(io_err(path, "reading log segment"))?;
        let len = u64::from_le_bytes(header[0..8].try_into().unwrap());
        let stored = u32::from_le_bytes(header[8..12].try_into().unwrap());
        if !(MIN_PAYLOAD..=MAX_PAYLOAD).contains(&len) {
            let what = format!("bad record length {len}");
            return Ok(Scan { records, problem: problem(offset, what, false) });
        }
        if len > remaining - RECORD_HEADER {
            let what = format!(
                "incomplete record (its header announces {len} payload bytes, {} remain)",
                remaining - RECORD_HEADER
            );
            return Ok(Scan { records, problem: problem(offset, what, true) });
        }
        let mut payload = vec![0u8; len as usize];
        reader.read_exact(&mut payload).map_err(io_err(path, "reading log segment"))?;
        let computed = record_crc(&header[0..8], &payload);
        if computed != stored {
            let what = format!("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})");
            return Ok(Scan { records, problem: problem(offset, what, false) });
        }
        let batch = match decode_payload(&payload) {
            Ok(batch) => batch,
            Err(detail) => {
                let what = format!("malformed record: {detail}");
                return Ok(Scan { records, problem: problem(offset, what, false) });
            }
        };
        let expected = start + records;
        if batch.epoch != expected {
            let what = format!("record for epoch {} where epoch {expected} belongs", batch.epoch);
            return Ok(Scan { records, problem: problem(offset, what, false) });
        }
        each(batch);
        records += 1;
        offset += RECORD_HEADER + len;
    }
}

/// Copies `path[offset..]` to a new `*.discarded-at-<offset>` file (fsynced) and returns its path.
fn save_tail(dir: &Path, path: &Path, offset: u64) -> Result<PathBuf, DurabilityError> {
    let bytes = fs::read(path).map_err(io_err(path, "reading log segment"))?;
    let target = unused_path(dir.join(format!("{}.discarded-at-{offset}", file_name(path))));
    let mut out = File::create(&target).map_err(io_err(&target, "creating"))?;
    out.write_all(&bytes[offset as usize..]).map_err(io_err(&target, "writing"))?;
    out.sync_all().map_err(io_err(&target, "fsync"))?;
    Ok(target)
}

fn describe_base(base: Option<Time>) -> String {
    match base {
        Some(e) => format!("the snapshot at epoch {e}"),
        None => "an empty state (no usable snapshot)".into(),
    }
}

// ---------------------------------------------------------------------------------------------
// StateDir

impl StateDir {
    /// Opens (creating if needed) and recovers the state directory. See the module docs.
    pub fn open(dir: &Path) -> Result<(StateDir, Recovered), DurabilityError> {
        let dir = dir.to_path_buf();
        if !dir.is_dir() {
            fs::create_dir_all(&dir).map_err(io_err(&dir, "creating state directory"))?;
            let parent = match dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            sync_dir(&parent)?;
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err(&lock_path, "opening lock file"))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(DurabilityError::Locked { path: dir });
            }
            Err(fs::TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => {}
            Err(fs::TryLockError::Error(e)) => {
                return Err(io_err(&lock_path, "locking")(e));
            }
        }

        let mut warnings = Vec::new();
        let mut snapshots = BTreeMap::new();
        let mut segments = BTreeMap::new();
        let mut temps = Vec::new();
        let entries = fs::read_dir(&dir).map_err(io_err(&dir, "listing state directory"))?;
        for entry in entries {
            let entry = entry.map_err(io_err(&dir, "listing state directory"))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(e) = parse_numbered(&name, SNAPSHOT_PREFIX, BIN) {
                snapshots.insert(e, entry.path());
            } else if let Some(s) = parse_numbered(&name, LOG_PREFIX, BIN) {
                segments.insert(s, entry.path());
            } else if name.starts_with(SNAPSHOT_PREFIX) && name.ends_with(TMP) {
                temps.push(entry.path());
            }
        }

        // 1. Unfinished snapshots.
        let mut changed = !temps.is_empty();
        for tmp in &temps {
            fs::remove_file(tmp).map_err(io_err(tmp, "removing unfinished snapshot"))?;
            warnings.push(format!(
                "removed {}: a snapshot that was never completed (crash before its rename); \
                 the log covers it",
                tmp.display()
            ));
        }

        // 2. The newest valid snapshot.
        let mut base: Option<(Time, Vec<SnapshotEntry>)> = None;
        let mut corrupt = Vec::new();
        for (&epoch, path) in snapshots.iter().rev() {
            match read_snapshot(path, epoch)? {
                Ok(edges) => {
                    base = Some((epoch, edges));
                    break;
                }
                Err(detail) => corrupt.push((epoch, path.clone(), detail)),
            }
        }
        let base_epoch = base.as_ref().map(|(e, _)| *e);
        for (epoch, path, detail) in corrupt {
            let aside = unused_path(PathBuf::from(format!("{}.corrupt", path.display())));
            fs::rename(&path, &aside).map_err(io_err(&path, "renaming corrupt snapshot"))?;
            snapshots.remove(&epoch);
            changed = true;
            warnings.push(format!(
                "snapshot {} is corrupt ({detail}); renamed it to {} and recovered from {} \
                 and the log",
                path.display(),
                file_name(&aside),
                describe_base(base_epoch)
            ));
        }
        if changed {
            sync_dir(&dir)?;
        }

        // 3. and 4. The log after the snapshot.
        let expected = base_epoch.map_or(0, |e| e + 1);
        let mut next = expected;
        let mut log = Vec::new();
        let starts: Vec<(Time, PathBuf)> = segments.into_iter().collect();
        let mut kept = BTreeMap::new();
        // (start, good records) of the last segment read.
        let mut last_read: Option<(Time, u64)> = None;
        for (i, (start, path)) in starts.iter().enumerate() {
            let (start, path) = (*start, path.clone());
            let following = starts.get(i + 1).map(|(s, _)| *s);
            if following.is_some_and(|f| f <= expected) {
                // Holds only epochs up to the snapshot.
                kept.insert(start, path);
                continue;
            }
            if start > next {
                return Err(DurabilityError::Unrecoverable {
                    path: dir,
                    detail: format!(
                        "epoch {next} is not in the log (needed after {}), the next log \
                         segment {} starts at epoch {start}; restore the missing files or \
                         remove the directory to start over",
                        describe_base(base_epoch),
                        file_name(&path)
                    ),
                });
            }
            let scan = scan_segment(&path, start, |batch| {
                if batch.epoch == next {
                    log.push(batch);
                    next += 1;
                }
            })?;
            kept.insert(start, path.clone());
            last_read = Some((start, scan.records));
            let Some(problem) = scan.problem else {
                continue;
            };

            let file_len = fs::metadata(&path).map_err(io_err(&path, "reading metadata"))?.len();
            let mut message = format!(
                "log segment {}: {} at byte {}; cut the file back to {} bytes ({} bytes dropped)",
                path.display(),
                problem.what,
                problem.offset,
                problem.offset,
                file_len - problem.offset
            );
            if !problem.torn {
                let saved = save_tail(&dir, &path, problem.offset)?;
                message += &format!("; the dropped bytes are kept in {}", file_name(&saved));
            }
            let orphaned = following.is_some_and(|f| f > next);
            if orphaned {
                let mut names = Vec::new();
                for (_, later) in &starts[i + 1..] {
                    let aside = unused_path(PathBuf::from(format!("{}.discarded-at-0", later.display())));
                    fs::rename(later, &aside).map_err(io_err(later, "renaming log segment"))?;
                    names.push(format!("{} -> {}", file_name(later), file_name(&aside)));
                }
                message += &format!(
                    "; later segments can no longer be replayed without a gap and were set \
                     aside: {}",
                    names.join(", ")
                );
            }
            sync_dir(&dir)?;
            let file = OpenOptions::new().write(true).open(&path).map_err(io_err(&path, "opening log segment"))?;
            file.set_len(problem.offset).map_err(io_err(&path, "truncating log segment"))?;
            file.sync_all().map_err(io_err(&path, "fsync of log segment"))?;
            match next.checked_sub(1) {
                Some(last) => message += &format!("; state recovered through epoch {last}"),
                None => message += "; nothing durable remains",
            }
            warnings.push(message);
            if orphaned {
                break;
            }
        }

        // Append to the last segment if it ends exactly where the durable state does.
        let active = match (last_read, kept.last_key_value()) {
            (Some((start, records)), Some((&last_start, path))) if start == last_start && start + records == next => {
                let file = OpenOptions::new()
                    .append(true)
                    .open(path)
                    .map_err(io_err(path, "opening log segment for appending"))?;
                Some(Active { start, path: path.clone(), file })
            }
            _ => None,
        };

        let (snapshot_epoch, entries) = match base {
            Some((e, edges)) => (Some(e), edges),
            None => (None, Vec::new()),
        };
        let snapshot_edges = entries.iter().map(|&(u, _, c)| (u, c)).collect();
        let snapshot_times = if entries.iter().any(|(_, t, _)| t.is_some()) {
            entries.iter().map(|&(_, t, _)| t).collect()
        } else {
            Vec::new()
        };
        let recovered = Recovered {
            snapshot_epoch,
            snapshot_edges,
            snapshot_times,
            log,
            last_epoch: next.checked_sub(1),
            warnings,
        };
        let state = StateDir {
            dir,
            _lock: lock,
            next,
            active,
            segments: kept,
            snapshots: snapshots.into_keys().collect(),
            poisoned: false,
        };
        Ok((state, recovered))
    }

    /// The state directory's path.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The last durable epoch, if any.
    pub fn last_epoch(&self) -> Option<Time> {
        self.next.checked_sub(1)
    }

    /// The epoch the next [`append`](Self::append) must carry.
    pub fn next_epoch(&self) -> Time {
        self.next
    }

    /// The snapshot epochs currently on disk, oldest first.
    pub fn snapshot_epochs(&self) -> Vec<Time> {
        self.snapshots.iter().copied().collect()
    }

    fn check_poisoned(&self) -> Result<(), DurabilityError> {
        if self.poisoned {
            return Err(DurabilityError::Poisoned { path: self.dir.clone() });
        }
        Ok(())
    }

    /// Logs one epoch; returns once it is on disk (fsynced). Epochs must be consecutive: the
    /// first one of a fresh directory is 0 (or the one after a seeding [`snapshot`](Self::snapshot)).
    pub fn append(&mut self, batch: &EpochBatch) -> Result<(), DurabilityError> {
        self.check_poisoned()?;
        if batch.epoch != self.next {
            let path = match &self.active {
                Some(a) => a.path.clone(),
                None => self.dir.clone(),
            };
            return Err(DurabilityError::NotConsecutive { path, expected: self.next, got: batch.epoch });
        }
        let record = encode_record(batch);
        let payload = record.len() as u64 - RECORD_HEADER;
        if payload > MAX_PAYLOAD {
            return Err(DurabilityError::TooLarge { path: self.dir.clone(), epoch: batch.epoch, bytes: payload });
        }
        match self.write_record(batch.epoch, &record) {
            Ok(()) => {
                self.next += 1;
                Ok(())
            }
            Err(e) => {
                // A partial record may be on disk: no more appends behind it.
                self.poisoned = true;
                Err(e)
            }
        }
    }

    fn write_record(&mut self, epoch: Time, record: &[u8]) -> Result<(), DurabilityError> {
        let mut created = false;
        if self.active.is_none() {
            let path = self.dir.join(segment_name(epoch));
            let file = OpenOptions::new()
                .append(true)
                .create_new(true)
                .open(&path)
                .map_err(io_err(&path, "creating log segment"))?;
            self.segments.insert(epoch, path.clone());
            self.active = Some(Active { start: epoch, path, file });
            created = true;
        }
        let active = self.active.as_mut().expect("just set");
        active.file.write_all(record).map_err(io_err(&active.path, "appending to log"))?;
        active.file.sync_data().map_err(io_err(&active.path, "fsync of log"))?;
        if created {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }

    /// Writes the edge multiset after `epoch` as a new snapshot, then drops the log segments and
    /// snapshots no longer needed (keeping one older snapshot and the log from it as a
    /// fallback). `epoch` must be durable already and newer than the last snapshot; on a fresh
    /// directory (nothing durable) any epoch may be written, seeding the state (the log then
    /// continues at `epoch + 1`).
    pub fn snapshot(&mut self, epoch: Time, edges: &[(Update, u64)]) -> Result<(), DurabilityError> {
        let entries: Vec<SnapshotEntry> = edges.iter().map(|&(u, c)| (u, None, c)).collect();
        self.snapshot_timed(epoch, &entries)
    }

    /// [`StateDir::snapshot`] for a windowed stream: entries carry their event times (`None`
    /// for static edges), and copies of one edge with different times stay apart.
    pub fn snapshot_timed(&mut self, epoch: Time, edges: &[SnapshotEntry]) -> Result<(), DurabilityError> {
        self.check_poisoned()?;
        let path = self.dir.join(snapshot_name(epoch));
        let bad = |reason: String| DurabilityError::BadSnapshot { path: path.clone(), epoch, reason };
        if self.next > 0 && epoch >= self.next {
            return Err(bad(format!("the epoch is not in the log yet (last durable epoch is {})", self.next - 1)));
        }
        if let Some(&newest) = self.snapshots.last() {
            if epoch <= newest {
                return Err(bad(format!("not newer than the snapshot at epoch {newest}")));
            }
        }
        let content = consolidate(edges).map_err(bad)?;
        let tmp = self.dir.join(format!("{}{TMP}", snapshot_name(epoch)));
        if let Err(e) = write_snapshot_file(&tmp, epoch, &content) {
            let _ = fs::remove_file(&tmp);
            return Err(io_err(&tmp, "writing snapshot")(e));
        }
        if let Err(e) = fs::rename(&tmp, &path) {
            let _ = fs::remove_file(&tmp);
            return Err(io_err(&path, "renaming snapshot into place")(e));
        }
        let result = self.after_snapshot(epoch);
        if result.is_err() {
            self.poisoned = true;
        }
        result
    }

    fn after_snapshot(&mut self, epoch: Time) -> Result<(), DurabilityError> {
        // The snapshot must be durable before anything it replaces is deleted.
        sync_dir(&self.dir)?;
        self.snapshots.insert(epoch);
        if self.next == 0 {
            self.next = epoch + 1;
        }
        // A snapshot of the last durable epoch starts a new segment (on the next append).
        if epoch + 1 == self.next && self.active.as_ref().is_some_and(|a| a.start < self.next) {
            self.active = None;
        }
        let Some(&fallback) = self.snapshots.range(..epoch).next_back() else {
            return Ok(());
        };
        let older: Vec<Time> = self.snapshots.range(..fallback).copied().collect();
        for s in older {
            let p = self.dir.join(snapshot_name(s));
            remove_if_present(&p)?;
            self.snapshots.remove(&s);
        }
        // Segments whose every epoch is <= the fallback snapshot (the last one always stays).
        let starts: Vec<Time> = self.segments.keys().copied().collect();
        for pair in starts.windows(2) {
            if pair[1] <= fallback + 1 {
                if let Some(p) = self.segments.remove(&pair[0]) {
                    remove_if_present(&p)?;
                }
            }
        }
        sync_dir(&self.dir)
    }
}

fn remove_if_present(path: &Path) -> Result<(), DurabilityError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(path, "removing")(e)),
    }
}

// ---------------------------------------------------------------------------------------------
// Change-log mark

/// How far the `--changes` file is known complete: every change line of epochs `<= epoch` is in
/// it, and its length after them was `offset` (a restart cuts the file back to `offset` and does
/// not write those epochs again). Stored as `DIR/changes.mark`: `"RPLMARK1"`, `epoch: u64`,
/// `offset: u64`, CRC-32 of the preceding 24 bytes; replaced atomically.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangeLogMark {
    pub epoch: Time,
    pub offset: u64,
}

impl ChangeLogMark {
    /// The mark in `dir`, `None` if none was written.
    pub fn read(dir: &Path) -> Result<Option<Self>, DurabilityError> {
        let path = dir.join(MARK_FILE);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&path, "reading change-log mark")(e)),
        };
        let corrupt = |detail: String| DurabilityError::Corrupt { path: path.clone(), detail };
        if bytes.len() != 28 {
            return Err(corrupt(format!("{} bytes, a mark has 28", bytes.len())));
        }
        let stored = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
        let computed = crc32fast::hash(&bytes[..24]);
        if stored != computed {
            return Err(corrupt(format!("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")));
        }
        if &bytes[..8] != MARK_MAGIC {
            return Err(corrupt("not a change-log mark (bad magic)".into()));
        }
        Ok(Some(ChangeLogMark {
            epoch: u64::from_le_bytes(bytes[8..16].try_into().unwrap()),
            offset: u64::from_le_bytes(bytes[16..24].try_into().unwrap()),
        }))
    }

    /// Replaces the mark in `dir` atomically and durably.
    pub fn write(&self, dir: &Path) -> Result<(), DurabilityError> {
        let path = dir.join(MARK_FILE);
        let tmp = dir.join(format!("{MARK_FILE}{TMP}"));
        let mut bytes = Vec::with_capacity(28);
        bytes.extend_from_slice(MARK_MAGIC);
        bytes.extend_from_slice(&self.epoch.to_le_bytes());
        bytes.extend_from_slice(&self.offset.to_le_bytes());
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        let write = || -> io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()
        };
        write().map_err(io_err(&tmp, "writing change-log mark"))?;
        fs::rename(&tmp, &path).map_err(io_err(&path, "renaming change-log mark into place"))?;
        sync_dir(dir)
    }
}

/// `(epoch, byte_offset)` of `DIR/changes.mark`, `None` if it was never written.
pub fn read_mark(dir: &Path) -> Result<Option<(Time, u64)>, DurabilityError> {
    Ok(ChangeLogMark::read(dir)?.map(|m| (m.epoch, m.offset)))
}

/// Durably records that the change lines of every epoch `<= epoch` are in the `--changes` file,
/// whose length after them is `offset`.
pub fn write_mark(dir: &Path, epoch: Time, offset: u64) -> Result<(), DurabilityError> {
    ChangeLogMark { epoch, offset }.write(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Edge;

    fn weighted(src: u64, dst: u64, w: f64, diff: i8) -> Update {
        Update { src, dst, weight: Some(w), diff }
    }

    /// A deterministic stream: epoch `e` inserts a few edges and deletes one present edge.
    fn batches(n: u64) -> Vec<EpochBatch> {
        let mut present: BTreeMap<Edge, (Update, u64)> = BTreeMap::new();
        let mut out = Vec::new();
        for e in 0..n {
            let mut updates =
                vec![Update::insert(e, e + 1), weighted(e % 3, 7, 0.5 + e as f64, 1), Update::insert(1, 2)];
            if e % 2 == 1 {
                updates.push(weighted(e, 0, -0.0, 1));
            }
            if let Some((_, (u, _))) = present.iter().nth((e as usize * 7) % present.len().max(1)) {
                updates.push(Update { diff: -1, ..*u });
            }
            apply(&mut present, &updates);
            out.push(EpochBatch { epoch: e, updates, ..Default::default() });
        }
        out
    }

    fn apply(state: &mut BTreeMap<Edge, (Update, u64)>, updates: &[Update]) {
        for u in updates {
            let entry = state.entry(u.edge()).or_insert((Update { diff: 1, ..*u }, 0));
            if u.diff > 0 {
                entry.1 += 1;
            } else {
                entry.1 -= 1;
                if entry.1 == 0 {
                    state.remove(&u.edge());
                }
            }
        }
    }

    /// The multiset after `batches`, as snapshot entries.
    fn model(batches: &[EpochBatch]) -> Vec<(Update, u64)> {
        let mut state = BTreeMap::new();
        for b in batches {
            apply(&mut state, &b.updates);
        }
        state.into_values().collect()
    }

    /// The multiset a recovery describes (snapshot + log).
    fn recovered_state(r: &Recovered) -> Vec<(Update, u64)> {
        let mut state: BTreeMap<Edge, (Update, u64)> =
            r.snapshot_edges.iter().map(|&(u, c)| (u.edge(), (u, c))).collect();
        for b in &r.log {
            apply(&mut state, &b.updates);
        }
        state.into_values().collect()
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != LOCK_FILE)
            .collect();
        names.sort();
        names
    }

    fn record_len(b: &EpochBatch) -> u64 {
        encode_record(b).len() as u64
    }

    #[test]
    fn event_times_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        let mut all = batches(3);
        for b in &mut all[1..] {
            b.updates.retain(|u| u.diff > 0);
            b.times = (0..b.updates.len() as u64).map(|i| Some(u64::MAX - i * 7)).collect();
        }
        // A record may mix static (untimed) and timed updates.
        all[2].times[0] = None;
        {
            let (mut sd, _) = StateDir::open(&dir).unwrap();
            for b in &all {
                sd.append(b).unwrap();
            }
        }
        let (mut sd, rec) = StateDir::open(&dir).unwrap();
        assert_eq!(rec.log, all);
        assert!(rec.log[0].times.is_empty() && rec.log[1].times.iter().all(Option::is_some));
        // Every timed update costs 8 more bytes.
        let untimed = EpochBatch { times: vec![], ..all[1].clone() };
        assert_eq!(record_len(&all[1]), record_len(&untimed) + 8 * all[1].updates.len() as u64);

        // Snapshots: copies of one edge at different times stay apart; static copies have none.
        let entries = vec![
            (Update::insert(5, 6), Some(9), 1),
            (Update::insert(1, 2), Some(4), 2),
            (Update::insert(1, 2), None, 1),
            (Update::insert(1, 2), Some(4), 1),
            (weighted(1, 2, 0.5, 1), Some(3), 1),
        ];
        sd.snapshot_timed(2, &entries).unwrap();
        drop(sd);
        let (_, rec) = StateDir::open(&dir).unwrap();
        assert_eq!(
            rec.snapshot_edges.iter().zip(&rec.snapshot_times).map(|(&(u, c), &t)| (u, t, c)).collect::<Vec<_>>(),
            vec![
                (weighted(1, 2, 0.5, 1), Some(3), 1),
                (Update::insert(1, 2), None, 1),
                (Update::insert(1, 2), Some(4), 3),
                (Update::insert(5, 6), Some(9), 1),
            ]
        );
        let r = rec.into_recovery(None);
        assert_eq!(r.base_times, vec![Some(3), None, Some(4), Some(4), Some(4), Some(9)]);
        assert_eq!(r.base_updates.len(), 6);
    }

    #[test]
    fn append_reopen_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        let all = batches(6);
        {
            let (mut sd, rec) = StateDir::open(&dir).unwrap();
            assert_eq!(rec, Recovered::default());
            assert_eq!(sd.dir(), dir.as_path());
            for b in &all[..5] {
                sd.append(b).unwrap();
            }
            assert_eq!(sd.last_epoch(), Some(4));
        }
        let (mut sd, rec) = StateDir::open(&dir).unwrap();
        assert_eq!(rec.snapshot_epoch, None);
        assert!(rec.snapshot_edges.is_empty());
        assert_eq!(rec.log, all[..5].to_vec());
        assert_eq!(rec.last_epoch, Some(4));
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        // Weight flags and bits survive exactly.
        assert_eq!(rec.log[1].updates[3].weight.map(f64::to_bits), Some((-0.0f64).to_bits()));
        assert_eq!(rec.log[0].updates[0].weight, None);
        let expected_len: u64 = all[..5].iter().map(record_len).sum();
        assert_eq!(fs::metadata(dir.join("log-0.bin")).unwrap().len(), expected_len);
        sd.append(&all[5]).unwrap();
        drop(sd);
        let (_sd, rec) = StateDir::open(&dir).unwrap();
        assert_eq!(rec.log, all);
        assert_eq!(rec.last_epoch, Some(5));
        assert_eq!(files(&dir), vec!["log-0.bin"]);
    }

    #[test]
    fn epochs_must_be_consecutive() {
        let tmp = tempfile::tempdir().unwrap();
        let all = batches(3);
        let (mut sd, _) = StateDir::open(tmp.path()).unwrap();
        let err = sd.append(&all[1]).unwrap_err();
        assert!(matches!(err, DurabilityError::NotConsecutive { expected: 0, got: 1, .. }));
        assert!(err.to_string().contains(&tmp.path().display().to_string()), "{err}");
        sd.append(&all[0]).unwrap();
        let err = sd.append(&all[0]).unwrap_err();
        assert!(matches!(err, DurabilityError::NotConsecutive { expected: 1, got: 0, .. }));
        assert!(err.to_string().contains("log-0.bin"), "{err}");
        assert!(sd.append(&all[2]).is_err());
        // Refused appends change nothing; the right epoch still goes through.
        sd.append(&all[1]).unwrap();
        drop(sd);
        let (_, rec) = StateDir::open(tmp.path()).unwrap();
        assert_eq!(rec.log, all[..2].to_vec());
    }

    #[test]
    fn snapshot_truncates_log_and_reopen_combines_snapshot_and_log() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let all = batches(10);
        let (mut sd, _) = StateDir::open(dir).unwrap();
        for b in &all[..4] {
            sd.append(b).unwrap();
        }
        sd.snapshot(3, &model(&all[..4])).unwrap();
        sd.append(&all[4]).unwrap();
        sd.append(&all[5]).unwrap();
        // With one snapshot the whole log stays (it is the fallback).
        assert_eq!(files(dir), vec!["log-0.bin", "log-4.bin", "snapshot-3.bin"]);
        drop(sd);

        let (mut sd, rec) = StateDir::open(dir).unwrap();
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        assert_eq!(rec.snapshot_epoch, Some(3));
        assert_eq!(rec.snapshot_edges, model(&all[..4]));
        assert_eq!(rec.log, all[4..6].to_vec());
        assert_eq!(rec.last_epoch, Some(5));
        assert_eq!(recovered_state(&rec), model(&all[..6]));

        sd.snapshot(5, &model(&all[..6])).unwrap();
        // log-0 (epochs 0..=3) is older than the oldest kept snapshot (3): gone.
        assert_eq!(files(dir), vec!["log-4.bin", "snapshot-3.bin", "snapshot-5.bin"]);
        sd.append(&all[6]).unwrap();
        sd.append(&all[7]).unwrap();
        sd.snapshot(7, &model(&all[..8])).unwrap();
        assert_eq!(files(dir), vec!["log-6.bin", "snapshot-5.bin", "snapshot-7.bin"]);
        assert_eq!(sd.snapshot_epochs(), vec![5, 7]);
        // A snapshot of an earlier epoch than the last logged one keeps the current segment.
        sd.append(&all[8]).unwrap();
        sd.append(&all[9]).unwrap();
        sd.snapshot(8, &model(&all[..9])).unwrap();
        assert_eq!(files(dir), vec!["log-8.bin", "snapshot-7.bin", "snapshot-8.bin"]);
        drop(sd);

        let (_, rec) = StateDir::open(dir).unwrap();
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        assert_eq!(rec.snapshot_epoch, Some(8));
        assert_eq!(rec.log, all[9..].to_vec());
        assert_eq!(rec.last_epoch, Some(9));
        assert_eq!(recovered_state(&rec), model(&all));
    }

    #[test]
    fn snapshot_rules_and_consolidation() {
        let tmp = tempfile::tempdir().unwrap();
        let all = batches(3);
        let (mut sd, _) = StateDir::open(tmp.path()).unwrap();
        sd.append(&all[0]).unwrap();
        let err = sd.snapshot(1, &[]).unwrap_err();
        assert!(err.to_string().contains("snapshot-1.bin"), "{err}");
        assert!(err.to_string().contains("not in the log"), "{err}");
        let bad = sd.snapshot(0, &[(Update::delete(1, 2), 1)]).unwrap_err();
        assert!(matches!(bad, DurabilityError::BadSnapshot { .. }));
        assert!(sd.snapshot(0, &[(Update::insert(1, 2), 0)]).is_err());
        // Unsorted input with duplicates is consolidated.
        let edges = [
            (Update::insert(5, 1), 1),
            (Update::insert(1, 2), 2),
            (Update { weight: Some(1.0), ..Update::insert(1, 2) }, 1),
            (weighted(1, 2, 3.0, 1), 4),
        ];
        sd.snapshot(0, &edges).unwrap();
        let err = sd.snapshot(0, &edges).unwrap_err();
        assert!(err.to_string().contains("not newer"), "{err}");
        drop(sd);
        let (_, rec) = StateDir::open(tmp.path()).unwrap();
        assert_eq!(
            rec.snapshot_edges,
            vec![(Update::insert(1, 2), 3), (weighted(1, 2, 3.0, 1), 4), (Update::insert(5, 1), 1)]
        );
        assert!(rec.log.is_empty());
        assert_eq!(rec.last_epoch, Some(0));
    }

    #[test]
    fn seeding_snapshot_on_a_fresh_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let all = batches(4);
        let (mut sd, _) = StateDir::open(tmp.path()).unwrap();
        sd.snapshot(2, &model(&all[..3])).unwrap();
        assert_eq!(sd.next_epoch(), 3);
        assert!(sd.append(&all[0]).is_err());
        sd.append(&all[3]).unwrap();
        drop(sd);
        let (_, rec) = StateDir::open(tmp.path()).unwrap();
        assert_eq!(rec.snapshot_epoch, Some(2));
        assert_eq!(rec.log, all[3..].to_vec());
        assert_eq!(recovered_state(&rec), model(&all));
        assert_eq!(files(tmp.path()), vec!["log-3.bin", "snapshot-2.bin"]);
    }

    #[test]
    fn torn_tail_is_cut_back_and_appending_continues() {
        let all = batches(6);
        let boundary: u64 = all[..4].iter().map(record_len).sum();
        let last = record_len(&all[4]);
        for cut in [0, 1, 7, 11, 12, 13, 20, last / 2, last - 1, last] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            {
                let (mut sd, _) = StateDir::open(dir).unwrap();
                for b in &all[..5] {
                    sd.append(b).unwrap();
                }
            }
            let log = dir.join("log-0.bin");
            OpenOptions::new().write(true).open(&log).unwrap().set_len(boundary + cut).unwrap();

            let (mut sd, rec) = StateDir::open(dir).unwrap();
            if cut == 0 || cut == last {
                assert!(rec.warnings.is_empty(), "cut {cut}: {:?}", rec.warnings);
            } else {
                assert_eq!(rec.warnings.len(), 1, "cut {cut}: {:?}", rec.warnings);
                let w = &rec.warnings[0];
                assert!(w.contains("log-0.bin"), "{w}");
                assert!(w.contains(&format!("at byte {boundary}")), "{w}");
                assert!(w.contains("incomplete"), "{w}");
            }
            let complete = if cut == last { 5 } else { 4 };
            assert_eq!(rec.log, all[..complete].to_vec(), "cut {cut}");
            assert_eq!(rec.last_epoch, Some(complete as u64 - 1));
            let len = if cut == last { boundary + last } else { boundary };
            assert_eq!(fs::metadata(&log).unwrap().len(), len, "cut {cut}");
            for b in &all[complete..] {
                sd.append(b).unwrap();
            }
            drop(sd);
            let (_, rec) = StateDir::open(dir).unwrap();
            assert!(rec.warnings.is_empty(), "cut {cut}: {:?}", rec.warnings);
            assert_eq!(rec.log, all, "cut {cut}");
            // A torn write was never acknowledged: its bytes are not kept.
            assert_eq!(files(dir), vec!["log-0.bin"], "cut {cut}");
        }
    }

    #[test]
    fn torn_tail_after_a_snapshot_rotation() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let all = batches(6);
        {
            let (mut sd, _) = StateDir::open(dir).unwrap();
            for b in &all[..3] {
                sd.append(b).unwrap();
            }
            sd.snapshot(2, &model(&all[..3])).unwrap();
            sd.append(&all[3]).unwrap();
        }
        // Crash in the middle of writing the first record of the new segment.
        let seg = dir.join("log-3.bin");
        OpenOptions::new().write(true).open(&seg).unwrap().set_len(5).unwrap();
        let (mut sd, rec) = StateDir::open(dir).unwrap();
        assert_eq!(rec.warnings.len(), 1);
        assert!(rec.warnings[0].contains("log-3.bin"), "{}", rec.warnings[0]);
        assert_eq!(rec.snapshot_epoch, Some(2));
        assert!(rec.log.is_empty());
        assert_eq!(rec.last_epoch, Some(2));
        assert_eq!(fs::metadata(&seg).unwrap().len(), 0);
        for b in &all[3..] {
            sd.append(b).unwrap();
        }
        drop(sd);
        let (_, rec) = StateDir::open(dir).unwrap();
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        assert_eq!(rec.log, all[3..].to_vec());
        assert_eq!(recovered_state(&rec), model(&all));
    }

    #[test]
    fn flipped_byte_in_a_middle_record() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let all = batches(5);
        {
            let (mut sd, _) = StateDir::open(dir).unwrap();
            for b in &all {
                sd.append(b).unwrap();
            }
        }
        let log = dir.join("log-0.bin");
        let mut bytes = fs::read(&log).unwrap();
        let start2: u64 = all[..2].iter().map(record_len).sum();
        let flip = start2 as usize + RECORD_HEADER as usize + 20;
        bytes[flip] ^= 0x10;
        fs::write(&log, &bytes).unwrap();

        let (mut sd, rec) = StateDir::open(dir).unwrap();
        assert_eq!(rec.log, all[..2].to_vec());
        assert_eq!(rec.last_epoch, Some(1));
        assert_eq!(rec.warnings.len(), 1);
        let w = &rec.warnings[0];
        assert!(w.contains("log-0.bin") && w.contains("checksum"), "{w}");
        assert!(w.contains(&format!("at byte {start2}")), "{w}");
        assert_eq!(fs::metadata(&log).unwrap().len(), start2);
        // The dropped (damaged and later, once acknowledged) records are kept for inspection.
        let saved = dir.join(format!("log-0.bin.discarded-at-{start2}"));
        assert_eq!(fs::read(&saved).unwrap(), bytes[start2 as usize..].to_vec());
        assert!(w.contains(&file_name(&saved)), "{w}");

        sd.append(&all[2]).unwrap();
        drop(sd);
        let (_, rec) = StateDir::open(dir).unwrap();
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        assert_eq!(rec.log, all[..3].to_vec());
    }

    #[test]
    fn bad_length_and_garbage_tail() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let all = batches(3);
        {
            let (mut sd, _) = StateDir::open(dir).unwrap();
            for b in &all {
                sd.append(b).unwrap();
            }
        }
        // Zero-filled blocks after the last record (file size extended, data not written).
        let log = dir.join("log-0.bin");
        let good = fs::metadata(&log).unwrap().len();
        let mut f = OpenOptions::new().append(true).open(&log).unwrap();
        f.write_all(&[0u8; 64]).unwrap();
        drop(f);
        let (_, rec) = StateDir::open(dir).unwrap();
        assert_eq!(rec.log, all);
        assert_eq!(rec.warnings.len(), 1);
        assert!(rec.warnings[0].contains("bad record length 0"), "{}", rec.warnings[0]);
        assert_eq!(fs::metadata(&log).unwrap().len(), good);
    }

    #[test]
    fn corruption_in_an_earlier_segment_sets_later_segments_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let all = batches(8);
        {
            let (mut sd, _) = StateDir::open(dir).unwrap();
            for b in &all[..3] {
                sd.append(b).unwrap();
            }
            sd.snapshot(2, &model(&all[..3])).unwrap();
            for b in &all[3..6] {
                sd.append(b).unwrap();
            }
            sd.snapshot(5, &model(&all[..6])).unwrap();
            for b in &all[6..] {
                sd.append(b).unwrap();
            }
        }
        assert_eq!(files(dir), vec!["log-3.bin", "log-6.bin", "snapshot-2.bin", "snapshot-5.bin"]);
        // Newest snapshot corrupt, and the log from the fallback is damaged at epoch 4.
        let snap = dir.join("snapshot-5.bin");
        let mut bytes = fs::read(&snap).unwrap();
        bytes[30] ^= 1;
        fs::write(&snap, bytes).unwrap();
        let seg = dir.join("log-3.bin");
        let mut bytes = fs::read(&seg).unwrap();
        let at = record_len(&all[3]);
        bytes[at as usize + 14] ^= 0xff;
        fs::write(&seg, bytes).unwrap();

        let (mut sd, rec) = StateDir::open(dir).unwrap();
        assert_eq!(rec.snapshot_epoch, Some(2));
        assert_eq!(rec.log, all[3..4].to_vec());
        assert_eq!(rec.last_epoch, Some(3));
        assert_eq!(rec.warnings.len(), 2, "{:?}", rec.warnings);
        assert!(rec.warnings[0].contains("snapshot-5.bin"), "{}", rec.warnings[0]);
        assert!(rec.warnings[1].contains("log-6.bin -> log-6.bin.discarded-at-0"));
        sd.append(&all[4]).unwrap();
        drop(sd);
        let (_, rec) = StateDir::open(dir).unwrap();
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        assert_eq!(rec.log, all[3..5].to_vec());
        assert_eq!(recovered_state(&rec), model(&all[..5]));
    }

    /// Appends 0..=8 with snapshots at 3 and 6; returns the batches.
    fn two_snapshot_history(dir: &Path) -> Vec<EpochBatch> {
        let all = batches(9);
        let (mut sd, _) = StateDir::open(dir).unwrap();
        for b in &all[..4] {
            sd.append(b).unwrap();
        }
        sd.snapshot(3, &model(&all[..4])).unwrap();
        for b in &all[4..7] {
            sd.append(b).unwrap();
        }
        sd.snapshot(6, &model(&all[..7])).unwrap();
        for b in &all[7..] {
            sd.append(b).unwrap();
        }
        all
    }

    #[test]
    fn corrupt_newest_snapshot_falls_back_to_the_previous_one() {
        for damage in ["flip", "truncate", "empty"] {
            let clean = tempfile::tempdir().unwrap();
            let all = two_snapshot_history(clean.path());
            let (_, clean_rec) = StateDir::open(clean.path()).unwrap();
            assert_eq!(clean_rec.snapshot_epoch, Some(6));
            assert_eq!(recovered_state(&clean_rec), model(&all));

            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path();
            two_snapshot_history(dir);
            let snap = dir.join("snapshot-6.bin");
            let mut bytes = fs::read(&snap).unwrap();
            match damage {
                "flip" => bytes[40] ^= 0x01,
                "truncate" => bytes.truncate(bytes.len() / 2),
                _ => bytes.clear(),
            }
            fs::write(&snap, &bytes).unwrap();

            let (mut sd, rec) = StateDir::open(dir).unwrap();
            assert_eq!(rec.warnings.len(), 1, "{damage}: {:?}", rec.warnings);
            let w = &rec.warnings[0];
            assert!(w.contains("snapshot-6.bin") && w.contains("corrupt"), "{w}");
            if damage == "truncate" || damage == "flip" {
                assert!(w.contains("checksum"), "{w}");
            }
            assert_eq!(rec.snapshot_epoch, Some(3));
            assert_eq!(rec.snapshot_edges, model(&all[..4]));
            assert_eq!(rec.log, all[4..].to_vec());
            assert_eq!(rec.last_epoch, Some(8));
            assert_eq!(recovered_state(&rec), recovered_state(&clean_rec));
            assert!(dir.join("snapshot-6.bin.corrupt").exists());
            assert!(!snap.exists());
            // Snapshotting goes on normally from the fallback.
            sd.snapshot(8, &model(&all)).unwrap();
            sd.append(&batches(10)[9]).unwrap();
            drop(sd);
            let (_, rec) = StateDir::open(dir).unwrap();
            assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
            assert_eq!(rec.snapshot_epoch, Some(8));
            assert_eq!(rec.log, batches(10)[9..].to_vec());
        }
    }

    #[test]
    fn all_snapshots_corrupt_without_the_old_log_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        two_snapshot_history(dir);
        for s in ["snapshot-3.bin", "snapshot-6.bin"] {
            let p = dir.join(s);
            let mut bytes = fs::read(&p).unwrap();
            bytes[20] ^= 0x80;
            fs::write(&p, bytes).unwrap();
        }
        let err = StateDir::open(dir).unwrap_err();
        assert!(matches!(err, DurabilityError::Unrecoverable { .. }), "{err}");
        assert!(err.to_string().contains("epoch 0 is not in the log"), "{err}");
        assert!(err.to_string().contains("log-4.bin"), "{err}");
    }

    #[test]
    fn unfinished_snapshot_temp_file_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let all = batches(5);
        {
            let (mut sd, _) = StateDir::open(dir).unwrap();
            for b in &all[..3] {
                sd.append(b).unwrap();
            }
            sd.snapshot(2, &model(&all[..3])).unwrap();
            sd.append(&all[3]).unwrap();
        }
        // Crash after writing part of snapshot 3's temp file, before the rename.
        let partial = tmp.path().join("partial");
        let entries: Vec<SnapshotEntry> = model(&all[..4]).into_iter().map(|(u, c)| (u, None, c)).collect();
        write_snapshot_file(&partial, 3, &entries).unwrap();
        let mut bytes = fs::read(&partial).unwrap();
        bytes.truncate(bytes.len() - 7);
        fs::write(dir.join("snapshot-3.bin.tmp"), bytes).unwrap();
        fs::remove_file(&partial).unwrap();

        let (mut sd, rec) = StateDir::open(dir).unwrap();
        assert_eq!(rec.warnings.len(), 1);
        assert!(rec.warnings[0].contains("snapshot-3.bin.tmp"), "{}", rec.warnings[0]);
        assert!(!dir.join("snapshot-3.bin.tmp").exists());
        assert_eq!(rec.snapshot_epoch, Some(2));
        assert_eq!(rec.log, all[3..4].to_vec());
        assert_eq!(recovered_state(&rec), model(&all[..4]));
        // The same snapshot can be taken again.
        sd.snapshot(3, &model(&all[..4])).unwrap();
        sd.append(&all[4]).unwrap();
        drop(sd);
        let (_, rec) = StateDir::open(dir).unwrap();
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        assert_eq!(rec.snapshot_epoch, Some(3));
        assert_eq!(rec.log, all[4..].to_vec());
    }

    #[test]
    fn second_open_is_refused_while_the_first_lives() {
        let tmp = tempfile::tempdir().unwrap();
        let (_sd, _) = StateDir::open(tmp.path()).unwrap();
        let err = StateDir::open(tmp.path()).unwrap_err();
        assert!(matches!(err, DurabilityError::Locked { .. }), "{err}");
    }

    #[test]
    fn into_recovery_expands_counts() {
        let rec = Recovered {
            snapshot_epoch: Some(4),
            snapshot_edges: vec![(Update::insert(1, 2), 2), (weighted(3, 4, 2.5, 1), 1)],
            snapshot_times: vec![],
            log: batches(1),
            last_epoch: Some(5),
            warnings: vec![],
        };
        let r = rec.into_recovery(Some(3));
        assert_eq!(r.base_epoch, 4);
        assert_eq!(r.base_updates, vec![Update::insert(1, 2), Update::insert(1, 2), weighted(3, 4, 2.5, 1)]);
        assert_eq!(r.replay, batches(1));
        assert_eq!(r.written_through, Some(3));
        let empty = Recovered::default().into_recovery(None);
        assert_eq!(empty.base_epoch, 0);
        assert!(empty.base_updates.is_empty() && empty.replay.is_empty());
    }

    #[test]
    fn mark_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        assert_eq!(read_mark(dir).unwrap(), None);
        write_mark(dir, 5, 1234).unwrap();
        assert_eq!(read_mark(dir).unwrap(), Some((5, 1234)));
        write_mark(dir, 6, u64::MAX - 1).unwrap();
        assert_eq!(read_mark(dir).unwrap(), Some((6, u64::MAX - 1)));
        assert_eq!(ChangeLogMark::read(dir).unwrap(), Some(ChangeLogMark { epoch: 6, offset: u64::MAX - 1 }));
        assert_eq!(files(dir), vec![MARK_FILE]);
        // The mark lives beside the state without disturbing recovery.
        let (_, rec) = StateDir::open(dir).unwrap();
        assert!(rec.warnings.is_empty());
        let path = dir.join(MARK_FILE);
        let mut bytes = fs::read(&path).unwrap();
        bytes[9] ^= 4;
        fs::write(&path, bytes).unwrap();
        let err = read_mark(dir).unwrap_err();
        assert!(err.to_string().contains(MARK_FILE) && err.to_string().contains("checksum"));
    }

    #[test]
    fn record_encoding_round_trips() {
        for b in batches(5) {
            let rec = encode_record(&b);
            let payload = &rec[RECORD_HEADER as usize..];
            assert_eq!(u64::from_le_bytes(rec[..8].try_into().unwrap()), payload.len() as u64);
            assert_eq!(decode_payload(payload).unwrap(), b);
        }
        let empty = EpochBatch { epoch: 9, updates: vec![], ..Default::default() };
        assert_eq!(record_len(&empty), RECORD_HEADER + MIN_PAYLOAD);
        assert_eq!(decode_payload(&encode_record(&empty)[12..]).unwrap(), empty);
    }
}
