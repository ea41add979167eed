//! **Recovery**: turning whatever a crash left in the state directory back into a consistent
//! state — the newest usable snapshot plus the log after it — while losing no acknowledged epoch
//! and inventing none.
//!
//! [`StateDir::open`] runs these steps, each a function below:
//!
//! 1. [`ensure_dir`] and [`lock`]: create the directory if needed, and take an exclusive advisory
//!    lock on its `lock` file, so two processes never write one directory.
//! 2. [`list`]: sort the directory's files into snapshots, log segments and unfinished snapshot
//!    temp files; anything else (`*.corrupt`, `*.discarded-at-<N>`, the mark) is ignored.
//! 3. [`remove_unfinished`]: leftover `snapshot-*.bin.tmp` files (a crash between writing a
//!    snapshot and renaming it) are deleted with a warning: the snapshot was never complete, the
//!    log still covers it.
//! 4. [`pick_snapshot`]: the newest snapshot whose checksum, length, header and epoch check out
//!    is loaded. Newer corrupt ones (bad checksum, truncated, …) are renamed to `*.corrupt` with a
//!    warning, and the next older one is used.
//! 5. [`replay_log`]: log segments are read in order; segments that only hold epochs up to the
//!    snapshot are not read at all; records up to the snapshot epoch are checked and skipped, the
//!    later ones are returned in [`Recovered::log`]. If the log does not reach back to the
//!    snapshot (or, without a valid snapshot, to epoch 0) — e.g. every snapshot is corrupt and the
//!    old log was already deleted — `open` fails with [`DurabilityError::Unrecoverable`] instead
//!    of silently starting from a wrong state.
//! 6. [`cut_tail`]: the first bad record ends the log. A warning names the file, the byte offset
//!    and the problem; the bytes from there on are copied to `log-<S>.bin.discarded-at-<offset>`
//!    (unless they are only an incomplete last record, which was never acknowledged), later
//!    segments that can no longer be reached without a gap are renamed the same way, and the
//!    segment is cut back to the end of the last good record, so appending continues cleanly.
//! 7. [`reopen_active`]: appends continue in the last segment if it ends exactly where the
//!    durable state does; otherwise the next append starts a new segment.
//!
//! Every repair (truncated segment, saved bytes, renames) is fsynced before `open` returns, so a
//! crash during recovery just repeats the same recovery.
//!
//! Guarantee: every epoch for which [`StateDir::append`] returned `Ok` is recovered, provided the
//! disk honours fsync and does not corrupt acknowledged data. Data the disk damaged after it was
//! acknowledged is reported, not invented: recovery stops at the damage (older snapshot + log up
//! to the damage).

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use super::error::{io_err, DurabilityError};
use super::log::{save_tail, scan_segment, Problem};
use super::snapshot::{read_snapshot, SnapshotContent};
use super::{
    file_name, parse_numbered, sync_dir, unused_path, Active, StateDir, BIN, LOCK_FILE, LOG_PREFIX, SNAPSHOT_PREFIX,
    TMP,
};
use crate::live::EpochBatch;
use crate::types::{Time, Update};

/// The snapshot recovery starts from: its epoch and entries.
type Base = (Time, SnapshotContent);

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
    /// The records of the run's record input at `snapshot_epoch`: `(text, copies)`, sorted by
    /// text.
    pub snapshot_records: Vec<(String, u64)>,
    /// The logged epochs after the snapshot (from epoch 0 without one), consecutive.
    pub log: Vec<EpochBatch>,
    /// The last durable epoch (the last log record, else the snapshot); `None` if nothing is.
    pub last_epoch: Option<Time>,
    /// Human-readable reports of everything recovery repaired or could not use.
    pub warnings: Vec<String>,
}

impl Recovered {
    /// The snapshot as one batch of its epoch: one insertion per edge copy, in entry order (with
    /// the copies' event times when any entry has one). `None` without a snapshot.
    pub fn snapshot_batch(&self) -> Option<EpochBatch> {
        let epoch = self.snapshot_epoch?;
        let copies: u64 = self.snapshot_edges.iter().map(|&(_, n)| n).sum();
        let mut updates = Vec::with_capacity(copies as usize);
        let mut times = Vec::new();
        for (i, &(update, count)) in self.snapshot_edges.iter().enumerate() {
            let insert = Update { diff: 1, ..update };
            updates.extend(std::iter::repeat_n(insert, count as usize));
            if let Some(&t) = self.snapshot_times.get(i) {
                times.extend(std::iter::repeat_n(t, count as usize));
            }
        }
        let records = self
            .snapshot_records
            .iter()
            .flat_map(|(text, count)| std::iter::repeat_n((text.clone(), 1), *count as usize))
            .collect();
        Some(EpochBatch { epoch, updates, times, late: 0, records })
    }
}

impl StateDir {
    /// Opens (creating if needed) and recovers the state directory. See the module docs.
    pub fn open(dir: &Path) -> Result<(StateDir, Recovered), DurabilityError> {
        let dir = dir.to_path_buf();
        ensure_dir(&dir)?;
        let lock = lock(&dir)?;
        let Listing { mut snapshots, segments, temps } = list(&dir)?;
        let mut warnings = Vec::new();
        let removed = remove_unfinished(&temps, &mut warnings)?;
        let (base, renamed) = pick_snapshot(&mut snapshots, &mut warnings)?;
        if removed || renamed {
            sync_dir(&dir)?;
        }
        let base_epoch = base.as_ref().map(|(e, _)| *e);
        let Replay { log, next, kept, last_read } = replay_log(&dir, segments, base_epoch, &mut warnings)?;
        let active = reopen_active(last_read, &kept, next)?;
        let recovered = recovered(base, log, next, warnings);
        let state = StateDir {
            dir,
            _lock: lock,
            next,
            active,
            segments: kept,
            snapshots: snapshots.into_keys().collect(),
            poisoned: false,
            appended: 0,
            appends: 0,
            append_time: std::time::Duration::ZERO,
        };
        Ok((state, recovered))
    }
}

/// Creates the directory if it does not exist (and fsyncs its parent, so the new name stays).
fn ensure_dir(dir: &Path) -> Result<(), DurabilityError> {
    if !dir.is_dir() {
        fs::create_dir_all(dir).map_err(io_err(dir, "creating state directory"))?;
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        sync_dir(&parent)?;
    }
    Ok(())
}

/// How long [`lock`] retries a lock that is held before it reports the directory as in use.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);

/// Takes the exclusive advisory lock; the returned file holds it. On file systems without locks
/// the directory is used unlocked. A held lock is retried for [`LOCK_PATIENCE`] first: a lock
/// is tied to the open file, and a child process that this process forks while it holds the
/// file keeps a copy of it until the child execs, so the lock can outlive its holder's close
/// by that moment.
fn lock(dir: &Path) -> Result<File, DurabilityError> {
    let lock_path = dir.join(LOCK_FILE);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io_err(&lock_path, "opening lock file"))?;
    let deadline = std::time::Instant::now() + LOCK_PATIENCE;
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(lock),
            Err(fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(DurabilityError::Locked { path: dir.to_path_buf() });
            }
            Err(fs::TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => return Ok(lock),
            Err(fs::TryLockError::Error(e)) => {
                return Err(io_err(&lock_path, "locking")(e));
            }
        }
    }
}

/// The files recovery cares about.
struct Listing {
    /// `snapshot-<E>.bin`, by epoch.
    snapshots: BTreeMap<Time, PathBuf>,
    /// `log-<S>.bin`, by first epoch.
    segments: BTreeMap<Time, PathBuf>,
    /// `snapshot-*.tmp`.
    temps: Vec<PathBuf>,
}

fn list(dir: &Path) -> Result<Listing, DurabilityError> {
    let mut listing = Listing { snapshots: BTreeMap::new(), segments: BTreeMap::new(), temps: Vec::new() };
    let entries = fs::read_dir(dir).map_err(io_err(dir, "listing state directory"))?;
    for entry in entries {
        let entry = entry.map_err(io_err(dir, "listing state directory"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(e) = parse_numbered(&name, SNAPSHOT_PREFIX, BIN) {
            listing.snapshots.insert(e, entry.path());
        } else if let Some(s) = parse_numbered(&name, LOG_PREFIX, BIN) {
            listing.segments.insert(s, entry.path());
        } else if name.starts_with(SNAPSHOT_PREFIX) && name.ends_with(TMP) {
            listing.temps.push(entry.path());
        }
    }
    Ok(listing)
}

/// Deletes unfinished snapshots; whether there were any (the directory then needs an fsync).
fn remove_unfinished(temps: &[PathBuf], warnings: &mut Vec<String>) -> Result<bool, DurabilityError> {
    for tmp in temps {
        fs::remove_file(tmp).map_err(io_err(tmp, "removing unfinished snapshot"))?;
        warnings.push(format!(
            "removed {}: a snapshot that was never completed (crash before its rename); \
             the log covers it",
            tmp.display()
        ));
    }
    Ok(!temps.is_empty())
}

/// Loads the newest valid snapshot, setting newer corrupt ones aside (and removing them from
/// `snapshots`); also whether any was renamed (the directory then needs an fsync).
fn pick_snapshot(
    snapshots: &mut BTreeMap<Time, PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<(Option<Base>, bool), DurabilityError> {
    let mut base: Option<Base> = None;
    let mut corrupt = Vec::new();
    for (&epoch, path) in snapshots.iter().rev() {
        match read_snapshot(path, epoch)? {
            Ok(content) => {
                base = Some((epoch, content));
                break;
            }
            Err(detail) => corrupt.push((epoch, path.clone(), detail)),
        }
    }
    let base_epoch = base.as_ref().map(|(e, _)| *e);
    let renamed = !corrupt.is_empty();
    for (epoch, path, detail) in corrupt {
        let aside = unused_path(PathBuf::from(format!("{}.corrupt", path.display())));
        fs::rename(&path, &aside).map_err(io_err(&path, "renaming corrupt snapshot"))?;
        snapshots.remove(&epoch);
        warnings.push(format!(
            "snapshot {} is corrupt ({detail}); renamed it to {} and recovered from {} \
             and the log",
            path.display(),
            file_name(&aside),
            describe_base(base_epoch)
        ));
    }
    Ok((base, renamed))
}

/// What [`replay_log`] read.
struct Replay {
    /// The records after the snapshot, consecutive.
    log: Vec<EpochBatch>,
    /// The epoch after the last durable one.
    next: Time,
    /// The segments still in place, by first epoch.
    kept: BTreeMap<Time, PathBuf>,
    /// `(start, good records)` of the last segment read.
    last_read: Option<(Time, u64)>,
}

/// Reads the log after `base_epoch`, cutting it at the first bad record (see [`cut_tail`]).
fn replay_log(
    dir: &Path,
    segments: BTreeMap<Time, PathBuf>,
    base_epoch: Option<Time>,
    warnings: &mut Vec<String>,
) -> Result<Replay, DurabilityError> {
    let expected = base_epoch.map_or(0, |e| e + 1);
    let mut next = expected;
    let mut log = Vec::new();
    let starts: Vec<(Time, PathBuf)> = segments.into_iter().collect();
    let mut kept = BTreeMap::new();
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
                path: dir.to_path_buf(),
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
        let orphaned = following.is_some_and(|f| f > next);
        let later = if orphaned { &starts[i + 1..] } else { &[][..] };
        cut_tail(dir, &path, &problem, later, next, warnings)?;
        if orphaned {
            break;
        }
    }
    Ok(Replay { log, next, kept, last_read })
}

/// Ends the log at `problem` in the segment `path`: keeps the dropped bytes (unless they are
/// only a torn last record), sets the unreachable `later` segments aside, cuts the segment back
/// and fsyncs all of it; reports what it did in one warning.
fn cut_tail(
    dir: &Path,
    path: &Path,
    problem: &Problem,
    later: &[(Time, PathBuf)],
    next: Time,
    warnings: &mut Vec<String>,
) -> Result<(), DurabilityError> {
    let file_len = fs::metadata(path).map_err(io_err(path, "reading metadata"))?.len();
    let mut message = format!(
        "log segment {}: {} at byte {}; cut the file back to {} bytes ({} bytes dropped)",
        path.display(),
        problem.what,
        problem.offset,
        problem.offset,
        file_len - problem.offset
    );
    if !problem.torn {
        let saved = save_tail(dir, path, problem.offset)?;
        message += &format!("; the dropped bytes are kept in {}", file_name(&saved));
    }
    if !later.is_empty() {
        let mut names = Vec::new();
        for (_, later) in later {
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
    sync_dir(dir)?;
    let file = OpenOptions::new().write(true).open(path).map_err(io_err(path, "opening log segment"))?;
    file.set_len(problem.offset).map_err(io_err(path, "truncating log segment"))?;
    file.sync_all().map_err(io_err(path, "fsync of log segment"))?;
    match next.checked_sub(1) {
        Some(last) => message += &format!("; state recovered through epoch {last}"),
        None => message += "; nothing durable remains",
    }
    warnings.push(message);
    Ok(())
}

/// The segment to append to: the last one, if it ends exactly where the durable state does.
fn reopen_active(
    last_read: Option<(Time, u64)>,
    kept: &BTreeMap<Time, PathBuf>,
    next: Time,
) -> Result<Option<Active>, DurabilityError> {
    Ok(match (last_read, kept.last_key_value()) {
        (Some((start, records)), Some((&last_start, path))) if start == last_start && start + records == next => {
            let file = OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(io_err(path, "opening log segment for appending"))?;
            Some(Active { start, path: path.clone(), file })
        }
        _ => None,
    })
}

/// Assembles what recovery found.
fn recovered(base: Option<Base>, log: Vec<EpochBatch>, next: Time, warnings: Vec<String>) -> Recovered {
    let (snapshot_epoch, (entries, snapshot_records)) = match base {
        Some((e, content)) => (Some(e), content),
        None => (None, Default::default()),
    };
    let snapshot_edges = entries.iter().map(|&(u, _, c)| (u, c)).collect();
    let snapshot_times = if entries.iter().any(|(_, t, _)| t.is_some()) {
        entries.iter().map(|&(_, t, _)| t).collect()
    } else {
        Vec::new()
    };
    Recovered {
        snapshot_epoch,
        snapshot_edges,
        snapshot_times,
        snapshot_records,
        log,
        last_epoch: next.checked_sub(1),
        warnings,
    }
}

fn describe_base(base: Option<Time>) -> String {
    match base {
        Some(e) => format!("the snapshot at epoch {e}"),
        None => "an empty state (no usable snapshot)".into(),
    }
}
