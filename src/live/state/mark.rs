//! The **change-log mark**: how far the `--changes` file is known to be complete, so that a
//! restart neither loses nor repeats change lines.
//!
//! The driver writes the changes of an epoch, then records `(epoch, byte offset)` here. A
//! restart cuts the `--changes` file back to `offset` (dropping a partly written epoch) and
//! recomputes, but does not write again, the changes of the epochs up to `epoch`. The mark lives
//! in the state directory as `changes.mark` and is replaced atomically (temp file, fsync,
//! rename, directory fsync): it is always either the old or the new value, never a mix.

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
        let (magic, epoch, offset, stored) = decode_fields(&bytes).map_err(corrupt)?;
        let computed = crc32fast::hash(&bytes[..24]);
        if stored != computed {
            return Err(corrupt(format!("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")));
        }
        if &magic != MARK_MAGIC {
            return Err(corrupt("not a change-log mark (bad magic)".into()));
        }
        Ok(Some(ChangeLogMark { epoch, offset }))
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

/// `magic, epoch, offset, crc` of a mark's bytes.
fn decode_fields(bytes: &[u8]) -> Result<([u8; 8], Time, u64, u32), String> {
    let mut c = Cursor::new(bytes);
    Ok((c.array()?, c.u64()?, c.u64()?, c.u32()?))
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
