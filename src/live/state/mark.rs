//! The **change-log mark**: how far the `--changes` file is known to be complete, so that a
//! restart neither loses nor repeats change lines.
//!
//! The driver writes the changes of an epoch, then records `(epoch, byte offset)` here. A
//! restart cuts the `--changes` file back to `offset` (dropping a partly written epoch) and
//! recomputes, but does not write again, the changes of the epochs up to `epoch`. The mark lives
//! in the state directory as `changes.mark` and is replaced atomically (temp file, fsync,
//! rename, directory fsync): it is always either the old or the new value, never a mix.
//!
//! A run with several change logs (typed outputs, `--output-dir`) records one offset per change
//! log, by output name, in the same mark ([`OutputsMark`]): all of them move together, at the same
//! epoch.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use super::codec::Cursor;
use super::error::{io_err, DurabilityError};
use super::{sync_dir, TMP};
use crate::types::Time;

/// The change-log mark's file name inside the state directory.
pub const MARK_FILE: &str = "changes.mark";
const MARK_MAGIC: &[u8; 8] = b"RPLMARK1";
const OUTPUTS_MAGIC: &[u8; 8] = b"RPLMARK2";

/// How far the `--changes` file is known complete: every change line of epochs `<= epoch` is in
/// it, and its length after them was `offset` (a restart cuts the file back to `offset` and does
/// not write those epochs again). Stored as `DIR/changes.mark`: `"RPLMARK1"`, `epoch: u64`,
/// `offset: u64`, CRC-32 of the preceding 24 bytes; replaced atomically.
///
/// ```
/// use ripples::live::{read_mark, write_mark};
/// let dir = tempfile::tempdir().unwrap();
/// assert_eq!(read_mark(dir.path()).unwrap(), None);
/// write_mark(dir.path(), 7, 1234).unwrap();
/// assert_eq!(read_mark(dir.path()).unwrap(), Some((7, 1234)));
/// // A damaged mark is an error naming the file, never a wrong offset.
/// std::fs::write(dir.path().join("changes.mark"), b"garbage").unwrap();
/// assert!(read_mark(dir.path()).unwrap_err().to_string().contains("changes.mark: corrupt"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangeLogMark {
    /// The last epoch whose change lines are all in the `--changes` file.
    pub epoch: Time,
    /// The `--changes` file's length in bytes right after that epoch's lines.
    pub offset: u64,
}

impl ChangeLogMark {
    /// The mark in `dir`, `None` if none was written.
    pub fn read(dir: &Path) -> Result<Option<Self>, DurabilityError> {
        Ok(OutputsMark::read(dir)?.map(|m| ChangeLogMark { epoch: m.epoch, offset: m.offset }))
    }

    /// Replaces the mark in `dir` atomically and durably.
    pub fn write(&self, dir: &Path) -> Result<(), DurabilityError> {
        let mut bytes = Vec::with_capacity(28);
        bytes.extend_from_slice(MARK_MAGIC);
        bytes.extend_from_slice(&self.epoch.to_le_bytes());
        bytes.extend_from_slice(&self.offset.to_le_bytes());
        replace(dir, bytes)
    }
}

/// The change-log mark with an offset per named change log: every change line of epochs `<=
/// epoch` is in each of them, and each one's length after them was its offset. `offset` is the
/// `--changes` file's (as in [`ChangeLogMark`]; 0 when the run has none). Stored as
/// `DIR/changes.mark`: `"RPLMARK2"`, `epoch: u64`, `offset: u64`, `count: u32`, per output
/// `name length: u32`, `name` (UTF-8), `offset: u64`, then CRC-32 of everything before it.
///
/// ```
/// use ripples::live::OutputsMark;
/// let dir = tempfile::tempdir().unwrap();
/// let mark = OutputsMark { epoch: 3, offset: 0, outputs: vec![("deg.out".into(), 120), ("deg.hist".into(), 64)] };
/// mark.write(dir.path()).unwrap();
/// assert_eq!(OutputsMark::read(dir.path()).unwrap(), Some(mark.clone()));
/// assert_eq!(mark.offset_of("deg.hist"), Some(64));
/// // Readers of the single offset see the epoch as before.
/// assert_eq!(ripples::live::read_mark(dir.path()).unwrap(), Some((3, 0)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputsMark {
    /// The last epoch whose change lines are all in every change log.
    pub epoch: Time,
    /// The `--changes` file's length after that epoch's lines (0 without one).
    pub offset: u64,
    /// Each named change log's length after that epoch's lines.
    pub outputs: Vec<(String, u64)>,
}

impl OutputsMark {
    /// The offset recorded for output `name`, if any.
    pub fn offset_of(&self, name: &str) -> Option<u64> {
        self.outputs.iter().find(|(n, _)| n == name).map(|(_, o)| *o)
    }

    /// The mark in `dir` (either form; a single-offset mark has no named outputs), `None` if
    /// none was written.
    pub fn read(dir: &Path) -> Result<Option<Self>, DurabilityError> {
        let path = dir.join(MARK_FILE);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&path, "reading change-log mark")(e)),
        };
        let corrupt = |detail: String| DurabilityError::Corrupt { path: path.clone(), detail };
        if bytes.len() < 28 {
            return Err(corrupt(format!("{} bytes, a mark has at least 28", bytes.len())));
        }
        let (body, crc) = bytes.split_at(bytes.len() - 4);
        let stored = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
        let computed = crc32fast::hash(body);
        if stored != computed {
            return Err(corrupt(format!("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")));
        }
        decode(body).map(Some).map_err(corrupt)
    }

    /// Replaces the mark in `dir` atomically and durably.
    pub fn write(&self, dir: &Path) -> Result<(), DurabilityError> {
        let mut bytes = Vec::with_capacity(32 + self.outputs.iter().map(|(n, _)| n.len() + 12).sum::<usize>());
        bytes.extend_from_slice(OUTPUTS_MAGIC);
        bytes.extend_from_slice(&self.epoch.to_le_bytes());
        bytes.extend_from_slice(&self.offset.to_le_bytes());
        bytes.extend_from_slice(&(self.outputs.len() as u32).to_le_bytes());
        for (name, offset) in &self.outputs {
            bytes.extend_from_slice(&(name.len() as u32).to_le_bytes());
            bytes.extend_from_slice(name.as_bytes());
            bytes.extend_from_slice(&offset.to_le_bytes());
        }
        replace(dir, bytes)
    }
}

/// Appends the CRC-32 of `bytes` and replaces `DIR/changes.mark` with them atomically and durably.
fn replace(dir: &Path, mut bytes: Vec<u8>) -> Result<(), DurabilityError> {
    let path = dir.join(MARK_FILE);
    let tmp = dir.join(format!("{MARK_FILE}{TMP}"));
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

/// A mark's fields from its bytes without the checksum (either form).
fn decode(body: &[u8]) -> Result<OutputsMark, String> {
    let mut c = Cursor::new(body);
    let magic: [u8; 8] = c.array()?;
    let (epoch, offset) = (c.u64()?, c.u64()?);
    let mut outputs = Vec::new();
    if &magic == OUTPUTS_MAGIC {
        let count = c.u32()?;
        for _ in 0..count {
            let len = c.u32()? as usize;
            let name = std::str::from_utf8(c.bytes(len)?).map_err(|_| "an output name is not UTF-8".to_string())?;
            outputs.push((name.to_string(), c.u64()?));
        }
    } else if &magic != MARK_MAGIC {
        return Err("not a change-log mark (bad magic)".into());
    }
    if c.remaining() != 0 {
        return Err(format!("{} bytes after the mark's fields", c.remaining()));
    }
    Ok(OutputsMark { epoch, offset, outputs })
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
