//! **Resume**: everything about continuing a change log after a restart.
//!
//! With a state directory, the live front end recovers the accepted epochs (snapshot + log) and
//! replays them; the dataflow recomputes their results, but the change log must not repeat what
//! it already holds. After every epoch the writer records how far the change log is durable in
//! the directory's mark (`changes.mark`: the last epoch and the log's length then). On a restart
//! a [`Resume`] decides, in one place:
//!
//! * where the change log is cut back to ([`Resume::changes_offset`]): the recorded length, or,
//!   when the front end had to cut the durable epochs back below the mark (a torn log tail), the
//!   end of the last epoch it kept; a change log without a mark starts empty;
//! * which epochs are already written ([`Resume::is_written`]): they are recomputed quietly;
//! * what is recorded after each newly written epoch ([`Resume::record`]).
//!
//! A run without a state directory has nothing to resume ([`Resume::none`]).
//!
//! The test `the_module_example` below shows it at work.

use std::path::{Path, PathBuf};

use super::RunError;
use crate::live::{read_mark, write_mark};
use crate::sinks::ResultSink;
use crate::types::Time;

/// How a run continues a change log (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Resume {
    /// Change-log lines of epochs up to here are already written.
    written_through: Option<Time>,
    /// Where the change-log mark is kept (a state directory and a change log).
    mark_dir: Option<PathBuf>,
    /// Where to cut the change-log file before appending (a resumable change-log file).
    offset: Option<u64>,
}

impl Resume {
    /// Nothing to resume, nothing to record.
    #[cfg(test)]
    pub fn none() -> Self {
        Resume::default()
    }

    /// The resume plan of a live run with `state_dir` whose front end recovered the epochs up to
    /// `written_through` as already written, writing the change log to `changes`.
    pub fn plan(
        state_dir: Option<&Path>,
        written_through: Option<Time>,
        changes: Option<&Path>,
    ) -> Result<Self, RunError> {
        let Some(dir) = state_dir else {
            return Ok(Resume { written_through, ..Resume::default() });
        };
        let offset = match changes {
            Some(path) if path != Path::new("-") => Some(match read_mark(dir)? {
                // The front end cut the durable epochs back below the mark.
                Some((marked, _)) if written_through < Some(marked) => changes_offset_after(path, written_through)?,
                Some((_, offset)) => offset,
                None => 0,
            }),
            _ => None,
        };
        Ok(Resume { written_through, mark_dir: changes.map(|_| dir.to_path_buf()), offset })
    }

    /// Where the first sink's change-log file is cut back to before appending (`None`: created
    /// afresh).
    pub fn changes_offset(&self) -> Option<u64> {
        self.offset
    }

    /// Whether the changes of `epoch` are already in the change log.
    pub fn is_written(&self, epoch: Time) -> bool {
        self.written_through.is_some_and(|w| epoch <= w)
    }

    /// After `epoch` was written: makes the change log durable and records its length.
    pub fn record(&self, sink: &mut ResultSink, epoch: Time) -> Result<(), RunError> {
        if let Some(dir) = &self.mark_dir {
            if let Some(offset) = sink.sync_changes()? {
                write_mark(dir, epoch, offset)?;
            }
        }
        Ok(())
    }
}

/// The length of the prefix of a change-log file that holds the lines of epochs `<= through`
/// (no line for `None`); the lines are in epoch order.
fn changes_offset_after(path: &Path, through: Option<Time>) -> Result<u64, RunError> {
    let text = std::fs::read(path).map_err(|e| RunError::Other(format!("cannot read {}: {}", path.display(), e)))?;
    let mut offset = 0usize;
    for line in text.split_inclusive(|&b| b == b'\n') {
        let epoch = line
            .split(|&b| b == b' ')
            .next()
            .and_then(|f| std::str::from_utf8(f).ok())
            .and_then(|f| f.parse::<Time>().ok());
        match (epoch, through) {
            (Some(e), Some(t)) if e <= t && line.ends_with(b"\n") => offset += line.len(),
            _ => break,
        }
    }
    Ok(offset as u64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_module_example() {
        use crate::driver::resume::Resume;
        use crate::live::write_mark;
        let dir = tempfile::tempdir().unwrap();
        let changes = dir.path().join("wcc.changes");
        // Before the crash: epochs 0 and 1 were written and marked (the log was 16 bytes long then).
        std::fs::write(&changes, "0 1 1 1\n1 2 1 1\n2 3 1 1\n").unwrap();
        write_mark(dir.path(), 1, 16).unwrap();
        // The front end recovered epochs up to 1: the log is cut back to 16 bytes, epochs 0 and 1
        // are recomputed without being written again.
        let resume = Resume::plan(Some(dir.path()), Some(1), Some(&changes)).unwrap();
        assert_eq!(resume.changes_offset(), Some(16));
        assert!(resume.is_written(1) && !resume.is_written(2));
        // A torn state-directory log kept only epoch 0: the change log is cut after epoch 0's lines.
        let resume = Resume::plan(Some(dir.path()), Some(0), Some(&changes)).unwrap();
        assert_eq!(resume.changes_offset(), Some(8));
        assert!(!Resume::none().is_written(0));
    }
}
