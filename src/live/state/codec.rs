//! The **byte encodings** of the state directory: log records and snapshot entries, and the
//! bounds-checked [`Cursor`] that decodes them. Nothing here touches the file system.
//!
//! All integers are little-endian. An update is `src: u64`, `dst: u64`, a flag byte, then the
//! weight's `f64` bits (`u64`) when flag bit `1` is set and the event time (`u64`) when flag bit
//! `2` is set (windowed streams).
//!
//! A **log record** is `len: u64`, `crc: u32`, then `len` payload bytes; `crc` is the CRC-32 of
//! the 8 length bytes followed by the payload, so a damaged length is caught too. The payload is
//! `epoch: u64`, `n: u64`, then `n` updates, each followed by `diff: i8`: 18 bytes per
//! unweighted update, 26 per weighted one (8 more with an event time), plus 28 bytes per epoch.
//! An epoch with records of the run's record input continues with `m: u64` and `m` records,
//! each `len: u32`, `len` bytes of UTF-8 text, `diff: i8` (an epoch without records ends after
//! its updates).
//!
//! A **snapshot entry** is an update as above (its diff is always +1 and not stored) followed by
//! `count: u64`, the number of copies. A snapshot with records continues after its entries with
//! `m: u64` and `m` records, each `len: u32`, the text, `count: u64`. Decoding never trusts a length field further than the
//! bytes that are actually there: a count that cannot fit is an error, not an allocation.

use std::io::{self, Write};

use crate::live::EpochBatch;
use crate::types::{Time, Update};

/// `len: u64` + `crc: u32`.
pub(super) const RECORD_HEADER: u64 = 12;
/// `epoch: u64` + `n: u64`.
pub(super) const MIN_PAYLOAD: u64 = 16;
/// Larger length fields are taken as corruption (1 TiB; no epoch is that large).
pub(super) const MAX_PAYLOAD: u64 = 1 << 40;
/// Smallest encoded update (unweighted).
const MIN_UPDATE: u64 = 18;
/// The first bytes of every snapshot file.
pub(super) const SNAPSHOT_MAGIC: &[u8; 8] = b"RPLSNAP1";

/// A snapshot entry: an edge (diff +1), its event time in a windowed stream, its copies.
pub type SnapshotEntry = (Update, Option<Time>, u64);
/// A snapshot's record: its text and copies.
pub type SnapshotRecord = (String, u64);

/// Appends a record's `len: u32` and text.
fn put_text(buf: &mut Vec<u8>, text: &str) {
    buf.extend_from_slice(&(text.len() as u32).to_le_bytes());
    buf.extend_from_slice(text.as_bytes());
}

pub(super) fn put_weighted(buf: &mut Vec<u8>, u: &Update) {
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
pub(super) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }
    pub(super) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub(super) fn bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.remaining() < n {
            return Err(format!("content ends early at byte {}", self.pos));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// The next `N` bytes as an array.
    pub(super) fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let (head, _) = self.buf[self.pos..]
            .split_first_chunk::<N>()
            .ok_or_else(|| format!("content ends early at byte {}", self.pos))?;
        self.pos += N;
        Ok(*head)
    }
    pub(super) fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }
    pub(super) fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(super) fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// A record's `len: u32` and UTF-8 text.
    pub(super) fn text(&mut self) -> Result<String, String> {
        let len = self.u32()? as usize;
        let at = self.pos;
        let bytes = self.bytes(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| format!("the record at byte {at} is not UTF-8"))
    }
    /// `src, dst, flags [, weight bits] [, event time]` as an update with diff +1; flag bit 0:
    /// a weight follows, bit 1 (log records only, `timed`): an event time follows.
    pub(super) fn weighted_timed(&mut self, timed: bool) -> Result<(Update, Option<Time>), String> {
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
pub(super) fn encode_record(batch: &EpochBatch) -> Vec<u8> {
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
    if !batch.records.is_empty() {
        rec.extend_from_slice(&(batch.records.len() as u64).to_le_bytes());
        for (text, diff) in &batch.records {
            put_text(&mut rec, text);
            rec.push(*diff as u8);
        }
    }
    let len = rec.len() as u64 - RECORD_HEADER;
    rec[0..8].copy_from_slice(&len.to_le_bytes());
    let crc = record_crc(&rec[0..8], &rec[RECORD_HEADER as usize..]);
    rec[8..12].copy_from_slice(&crc.to_le_bytes());
    rec
}

pub(super) fn record_crc(len_bytes: &[u8], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(len_bytes);
    h.update(payload);
    h.finalize()
}

pub(super) fn decode_payload(payload: &[u8]) -> Result<EpochBatch, String> {
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
    let mut records = Vec::new();
    if c.remaining() != 0 {
        let m = c.u64()?;
        // A record takes at least 5 bytes (its length and diff).
        if m == 0 || m > c.remaining() as u64 / 5 {
            return Err(format!("{m} records cannot follow the updates in {} bytes", payload.len()));
        }
        for _ in 0..m {
            let text = c.text()?;
            let diff = c.u8()? as i8;
            if diff != 1 && diff != -1 {
                return Err(format!("record {text:?} has diff {diff} (must be +1 or -1)"));
            }
            records.push((text, diff));
        }
        if c.remaining() != 0 {
            return Err(format!("{} unexpected bytes after the last record", c.remaining()));
        }
    }
    Ok(EpochBatch { epoch, updates, times, late: 0, records })
}

/// A writer that checksums what passes through it.
pub(super) struct CrcWriter<W: Write> {
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

impl<W: Write> CrcWriter<W> {
    pub(super) fn new(inner: W) -> Self {
        CrcWriter { inner, hasher: crc32fast::Hasher::new() }
    }
    /// The checksum of everything written so far, and the inner writer.
    pub(super) fn finish(self) -> (u32, W) {
        (self.hasher.finalize(), self.inner)
    }
}

/// Appends one snapshot entry (without the trailing checksum of the whole file) to `buf`.
pub(super) fn put_snapshot_entry(buf: &mut Vec<u8>, entry: &SnapshotEntry) {
    let (u, time, count) = entry;
    let flags = buf.len() + 16;
    put_weighted(buf, u);
    if let Some(t) = time {
        buf[flags] |= 2;
        buf.extend_from_slice(&t.to_le_bytes());
    }
    buf.extend_from_slice(&count.to_le_bytes());
}

/// Appends a snapshot's records section (nothing when there are none).
pub(super) fn put_snapshot_records(buf: &mut Vec<u8>, records: &[SnapshotRecord]) {
    if records.is_empty() {
        return;
    }
    buf.extend_from_slice(&(records.len() as u64).to_le_bytes());
    for (text, count) in records {
        put_text(buf, text);
        buf.extend_from_slice(&count.to_le_bytes());
    }
}

/// Decodes a whole snapshot file (`"RPLSNAP1"`, `epoch`, `n`, `n` entries sorted by edge and
/// event time, the records if any, CRC-32 of everything before it); `Err(detail)` when it is
/// corrupt.
pub(super) fn decode_snapshot(bytes: &[u8], epoch: Time) -> Result<(Vec<SnapshotEntry>, Vec<SnapshotRecord>), String> {
    let min = SNAPSHOT_MAGIC.len() + 8 + 8 + 4;
    let Some((content, trailer)) = bytes.split_last_chunk::<4>().filter(|_| bytes.len() >= min) else {
        return Err(format!("truncated: {} bytes, a snapshot has at least {min}", bytes.len()));
    };
    let stored = u32::from_le_bytes(*trailer);
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
    let mut records: Vec<SnapshotRecord> = Vec::new();
    if c.remaining() != 0 {
        let m = c.u64()?;
        // A record takes at least 12 bytes (its length and count).
        if m == 0 || m > c.remaining() as u64 / 12 {
            return Err(format!("{m} records cannot follow the entries in {} bytes", content.len()));
        }
        for i in 0..m {
            let text = c.text()?;
            let count = c.u64()?;
            if count == 0 {
                return Err(format!("record {i} has count 0"));
            }
            if records.last().is_some_and(|(prev, _)| *prev >= text) {
                return Err(format!("record {i} is out of order"));
            }
            records.push((text, count));
        }
        if c.remaining() != 0 {
            return Err(format!("{} unexpected bytes after the last record", c.remaining()));
        }
    }
    Ok((edges, records))
}
