//! **Resume**: everything about continuing a change log after a restart.
//!
//! With a state directory, the live front end recovers the accepted epochs (snapshot + log) and
//! replays them; the dataflow recomputes their results, but the change log must not repeat what
//! it already holds. After every epoch the writer records how far the change log is durable in
//! the directory's mark (`changes.mark`: the last epoch and the log's length then). On a restart
//! a [`Resume`] decides, in one place:
//!
//! * where each change log is cut back to ([`Resume::changes_offset`]): the recorded length, or,
//!   when the front end had to cut the durable epochs back below the mark (a torn log tail), the
//!   end of the last epoch it kept; a change log without a mark starts empty;
//! * which epochs are already written ([`Resume::is_written`]): they are recomputed quietly;
//! * what is recorded after each newly written epoch ([`Resume::record`]): every change log's
//!   length, by output name (typed outputs and `--output-dir` have several), in one mark.
//!
//! A run without a state directory has nothing to resume ([`Resume::none`]).
//!
//! The test `the_module_example` below shows it at work.

use std::path::{Path, PathBuf};

use super::RunError;
use crate::live::OutputsMark;
use crate::types::Time;

/// How a run continues its change logs (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Resume {
    /// Change-log lines of epochs up to here are already written.
    written_through: Option<Time>,
    /// The state directory, where the change-log mark is kept.
    state_dir: Option<PathBuf>,
    /// The mark found there at the start.
    mark: Option<OutputsMark>,
}

impl Resume {
    /// Nothing to resume, nothing to record.
    #[cfg(test)]
    pub fn none() -> Self {
        Resume::default()
    }

    /// The resume plan of a live run with `state_dir` whose front end recovered the epochs up to
    /// `written_through` as already written.
    pub fn plan(state_dir: Option<&Path>, written_through: Option<Time>) -> Result<Self, RunError> {
        let Some(dir) = state_dir else {
            return Ok(Resume { written_through, ..Resume::default() });
        };
        Ok(Resume { written_through, state_dir: Some(dir.to_path_buf()), mark: OutputsMark::read(dir)? })
    }

    /// Where the change-log file `path` of output `name` is cut back to before appending
    /// (`None`: created afresh; stdout is never cut): the recorded length, or, when the front end
    /// had to cut the durable epochs back below the mark (a torn log tail), the end of the last
    /// epoch it kept. `single`: the run's `--changes` file, which a single-offset mark describes.
    /// A mark that does not record a change log the run writes is an error (the state directory
    /// belongs to a run with other outputs).
    pub fn changes_offset(&self, name: &str, path: Option<&Path>, single: bool) -> Result<Option<u64>, RunError> {
        let (Some(path), Some(mark)) = (path, &self.mark) else { return Ok(None) };
        if path == Path::new("-") {
            return Ok(None);
        }
        let recorded = match mark.offset_of(name) {
            Some(offset) => offset,
            None if single && mark.outputs.is_empty() => mark.offset,
            None if self.written_through.is_none() => return Ok(None),
            None => {
                return Err(RunError::Input(format!(
                    "cannot continue {}: the state directory's change-log mark does not record output '{}' (it was written by a run with other outputs)",
                    path.display(),
                    name
                )))
            }
        };
        if self.written_through < Some(mark.epoch) {
            changes_offset_after(path, self.written_through).map(Some)
        } else {
            Ok(Some(recorded))
        }
    }

    /// Whether the changes of `epoch` are already in the change logs.
    pub fn is_written(&self, epoch: Time) -> bool {
        self.written_through.is_some_and(|w| epoch <= w)
    }

    /// Whether marks are recorded (the run has a state directory).
    pub fn records(&self) -> bool {
        self.state_dir.is_some()
    }

    /// After `epoch` was written and every change log synced: records their lengths (`offset`:
    /// the `--changes` file's, `outputs`: each change log's by output name) in the state
    /// directory's mark.
    pub fn record(&self, epoch: Time, offset: u64, outputs: Vec<(String, u64)>) -> Result<(), RunError> {
        if let Some(dir) = &self.state_dir {
            OutputsMark { epoch, offset, outputs }.write(dir)?;
        }
        Ok(())
    }
}

/// The epoch a change-log line starts with: `EPOCH ...` (text) or `{"epoch":EPOCH,...` (JSON).
fn line_epoch(line: &[u8]) -> Option<Time> {
    let rest = line.strip_prefix(b"{\"epoch\":").unwrap_or(line);
    let end = rest.iter().position(|b| !b.is_ascii_digit()).unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).ok()?.parse().ok()
}

/// The length of the prefix of a change-log file that holds the lines of epochs `<= through`
/// (no line for `None`); the lines are in epoch order.
fn changes_offset_after(path: &Path, through: Option<Time>) -> Result<u64, RunError> {
    let text = std::fs::read(path).map_err(|e| RunError::Other(format!("cannot read {}: {}", path.display(), e)))?;
    let mut offset = 0usize;
    for line in text.split_inclusive(|&b| b == b'\n') {
        match (line_epoch(line), through) {
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
        let resume = Resume::plan(Some(dir.path()), Some(1)).unwrap();
        assert_eq!(resume.changes_offset("wcc", Some(&changes), true).unwrap(), Some(16));
        assert!(resume.is_written(1) && !resume.is_written(2));
        // A torn state-directory log kept only epoch 0: the change log is cut after epoch 0's lines.
        let resume = Resume::plan(Some(dir.path()), Some(0)).unwrap();
        assert_eq!(resume.changes_offset("wcc", Some(&changes), true).unwrap(), Some(8));
        assert!(!Resume::none().is_written(0));
    }

    #[test]
    fn typed_change_logs_continue_by_name() {
        use crate::driver::resume::Resume;
        use crate::live::OutputsMark;
        let dir = tempfile::tempdir().unwrap();
        let (text, json) = (dir.path().join("d.a.changes"), dir.path().join("d.b.changes"));
        std::fs::write(&text, "0 x 1 1\n1 x 1 -1\n1 x 2 1\n2 y 3 1\n").unwrap();
        std::fs::write(
            &json,
            "{\"epoch\":0,\"key\":1,\"value\":2,\"diff\":1}\n{\"epoch\":1,\"key\":1,\"value\":2,\"diff\":-1}\n",
        )
        .unwrap();
        let mark = OutputsMark { epoch: 1, offset: 0, outputs: vec![("d.a".into(), 25), ("d.b".into(), 79)] };
        mark.write(dir.path()).unwrap();
        let resume = Resume::plan(Some(dir.path()), Some(1)).unwrap();
        assert_eq!(resume.changes_offset("d.a", Some(&text), false).unwrap(), Some(25));
        assert_eq!(resume.changes_offset("d.b", Some(&json), false).unwrap(), Some(79));
        // Stdout is never cut; a change log the mark does not know is refused.
        assert_eq!(resume.changes_offset("d.a", Some(std::path::Path::new("-")), false).unwrap(), None);
        let e = resume.changes_offset("d.c", Some(&text), false).unwrap_err();
        assert!(e.to_string().contains("does not record output 'd.c'"), "{e}");
        // The front end kept only epoch 0: each log is cut after epoch 0's lines, found by format.
        let resume = Resume::plan(Some(dir.path()), Some(0)).unwrap();
        assert_eq!(resume.changes_offset("d.a", Some(&text), false).unwrap(), Some(8));
        assert_eq!(resume.changes_offset("d.b", Some(&json), false).unwrap(), Some(39));
    }
}
