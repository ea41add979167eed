//! The **write-ahead log**: every accepted epoch, as one checksummed record, appended to a log
//! segment and forced to disk before anyone is told the epoch was accepted.
//!
//! A segment `log-<S>.bin` holds the records of epochs `S, S+1, …`, consecutive, and nothing
//! else (the record format is in [`codec`](super::codec)). A new segment starts when a snapshot
//! of the last logged epoch is taken, so old segments can be deleted whole.
//!
//! # Durability of an append
//!
//! [`StateDir::append`] writes the record, then `fdatasync`s the segment, so the epoch is on disk
//! before an `ok E` answer can be sent (it must never be a lie). When the record opens a new
//! segment, the directory is fsynced too, or the new file's name could vanish in a crash together
//! with the acknowledged record. **Cost: one `fdatasync` per epoch** (typically 0.1–10 ms
//! depending on the device), so the epoch rate, not the update rate, is bounded by the disk;
//! batch updates into larger epochs to amortise it. A failed write poisons the [`StateDir`]: a
//! partial record may be on disk, and nothing may be appended behind it.
//!
//! # Reading it back
//!
//! [`scan_segment`] reads a segment's records in order and stops at the first one it cannot use
//! (a [`Problem`]): a torn write (incomplete header or payload), an impossible length, a checksum
//! mismatch, a payload that does not decode, or an epoch out of sequence. What recovery does
//! about it is in [`recovery`](super::recovery).

use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::codec::{decode_payload, encode_record, record_crc, MAX_PAYLOAD, MIN_PAYLOAD, RECORD_HEADER};
use super::error::{io_err, DurabilityError};
use super::{file_name, segment_name, sync_dir, unused_path, Active, StateDir};
use crate::live::EpochBatch;
use crate::types::Time;

/// The first unusable spot in a segment.
pub(super) struct Problem {
    pub(super) offset: u64,
    pub(super) what: String,
    /// Only an incomplete last record: a write cut short by a crash, never acknowledged.
    pub(super) torn: bool,
}

pub(super) struct Scan {
    /// Number of good records (epochs `start .. start + records`).
    pub(super) records: u64,
    pub(super) problem: Option<Problem>,
}

/// Reads a segment's records in order, handing each good one to `each`, up to the first problem.
pub(super) fn scan_segment(
    path: &Path,
    start: Time,
    mut each: impl FnMut(EpochBatch),
) -> Result<Scan, DurabilityError> {
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
        let (mut len_bytes, mut crc_bytes) = ([0u8; 8], [0u8; 4]);
        reader.read_exact(&mut len_bytes).map_err(io_err(path, "reading log segment"))?;
        reader.read_exact(&mut crc_bytes).map_err(io_err(path, "reading log segment"))?;
        let len = u64::from_le_bytes(len_bytes);
        let stored = u32::from_le_bytes(crc_bytes);
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
        let computed = record_crc(&len_bytes, &payload);
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
pub(super) fn save_tail(dir: &Path, path: &Path, offset: u64) -> Result<PathBuf, DurabilityError> {
    let bytes = fs::read(path).map_err(io_err(path, "reading log segment"))?;
    let target = unused_path(dir.join(format!("{}.discarded-at-{offset}", file_name(path))));
    let mut out = File::create(&target).map_err(io_err(&target, "creating"))?;
    out.write_all(&bytes[offset as usize..]).map_err(io_err(&target, "writing"))?;
    out.sync_all().map_err(io_err(&target, "fsync"))?;
    Ok(target)
}

impl StateDir {
    /// Since the directory was opened: `(bytes appended to the log, epochs appended, time spent
    /// appending, fsync included)`.
    pub fn appended(&self) -> (u64, u64, std::time::Duration) {
        (self.appended, self.appends, self.append_time)
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
        let started = std::time::Instant::now();
        let written = self.write_record(batch.epoch, &record);
        self.append_time += started.elapsed();
        match written {
            Ok(()) => {
                self.appends += 1;
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
        self.appended += record.len() as u64;
        active.file.sync_data().map_err(io_err(&active.path, "fsync of log"))?;
        if created {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }
}
