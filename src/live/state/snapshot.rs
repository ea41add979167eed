//! **Snapshots**: the consolidated edge multiset after one epoch, so that recovery need not
//! replay the log from epoch 0, and the rule for which older files a snapshot makes redundant.
//!
//! A snapshot file `snapshot-<E>.bin` is `"RPLSNAP1"`, `epoch: u64`, `n: u64`, then `n` entries
//! sorted by [`Update::edge`] (and event time) without duplicates, then a CRC-32 of everything
//! before it (see [`codec`](super::codec) for the entry encoding).
//!
//! # Writing one, and why in this order
//!
//! The content goes to `snapshot-<E>.bin.tmp`, which is fsynced, then renamed to
//! `snapshot-<E>.bin`, then the directory is fsynced. Without the file fsync a crash could leave
//! a renamed but empty/partial snapshot; without the directory fsync the rename might not survive
//! while the deletions that follow it do. Only after that are old files deleted, and the
//! directory fsynced once more (so deletions do not linger; losing them in a crash would be
//! harmless anyway, recovery ignores files it does not need).
//!
//! # What is kept
//!
//! The newest two snapshots are kept, and the log segments needed to replay from the *older* of
//! them (with a single snapshot, the whole log is kept). So any one snapshot can turn out to be
//! corrupt and the state is still rebuilt from the other one plus the log. A snapshot at the last
//! logged epoch starts a new segment `log-<E+1>.bin` (created with the next append); a snapshot
//! at an earlier epoch keeps appending to the current segment.

use std::fs::{self, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::codec::{
    decode_snapshot, put_snapshot_entry, put_snapshot_records, CrcWriter, SnapshotEntry, SnapshotRecord, SNAPSHOT_MAGIC,
};
use super::error::{io_err, DurabilityError};
use super::{remove_if_present, snapshot_name, sync_dir, StateDir, TMP};
use crate::types::{Time, Update};

/// Sorts by edge and event time, merges duplicates, and checks the entries.
pub(super) fn consolidate(edges: &[SnapshotEntry]) -> Result<Vec<SnapshotEntry>, String> {
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

/// Writes and fsyncs a complete snapshot file at `path` (a temp path; the caller renames it).
pub(super) fn write_snapshot_file(
    path: &Path,
    epoch: Time,
    edges: &[SnapshotEntry],
    records: &[SnapshotRecord],
) -> io::Result<()> {
    let file = OpenOptions::new().write(true).create(true).truncate(true).open(path)?;
    let mut w = CrcWriter::new(BufWriter::new(file));
    w.write_all(SNAPSHOT_MAGIC)?;
    w.write_all(&epoch.to_le_bytes())?;
    w.write_all(&(edges.len() as u64).to_le_bytes())?;
    let mut entry = Vec::with_capacity(33);
    for e in edges {
        entry.clear();
        put_snapshot_entry(&mut entry, e);
        w.write_all(&entry)?;
    }
    entry.clear();
    put_snapshot_records(&mut entry, records);
    w.write_all(&entry)?;
    let (crc, mut inner) = w.finish();
    inner.write_all(&crc.to_le_bytes())?;
    let file = inner.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()
}

/// What a snapshot holds: its entries and its records.
pub(super) type SnapshotContent = (Vec<SnapshotEntry>, Vec<SnapshotRecord>);

/// Reads a snapshot: `Ok(Err(detail))` when its content is corrupt.
pub(super) fn read_snapshot(path: &Path, epoch: Time) -> Result<Result<SnapshotContent, String>, DurabilityError> {
    let bytes = fs::read(path).map_err(io_err(path, "reading snapshot"))?;
    Ok(decode_snapshot(&bytes, epoch))
}

impl StateDir {
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
        self.snapshot_with_records(epoch, edges, Vec::new())
    }

    /// [`StateDir::snapshot_timed`] with the records of the run's record input present after
    /// `epoch` (text and copies, in any order).
    pub fn snapshot_with_records(
        &mut self,
        epoch: Time,
        edges: &[SnapshotEntry],
        mut records: Vec<SnapshotRecord>,
    ) -> Result<(), DurabilityError> {
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
        records.sort_unstable();
        if let Some(pair) = records.windows(2).find(|p| p[0].0 == p[1].0) {
            return Err(bad(format!("record {:?} appears twice", pair[0].0)));
        }
        if let Some((text, _)) = records.iter().find(|(_, n)| *n == 0) {
            return Err(bad(format!("record {text:?} has count 0")));
        }
        let tmp = self.dir.join(format!("{}{TMP}", snapshot_name(epoch)));
        if let Err(e) = write_snapshot_file(&tmp, epoch, &content, &records) {
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
