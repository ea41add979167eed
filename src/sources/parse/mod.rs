//! Parsing and writing the text formats (see the [module docs of `sources`](super) for the
//! formats themselves).
//!
//! * Line parsers ([`parse_edge_line`], [`parse_vertex_line`], [`parse_update_line`] and their
//!   byte-slice twins) return `Ok(None)` for a skipped line (blank, whitespace-only, or a comment
//!   starting with `#` or `%`), `Ok(Some(..))` for a data line, and a [`LineError`] otherwise.
//!   They never allocate on the success path and never panic on any input.
//! * File readers ([`read_edges_range`], [`read_vertices_range`], [`read_updates`]) read in large
//!   chunks and report problems as [`SourceError`], whose `Display` names the file (and, for a bad
//!   line, its 1-based line number: `path:line: problem`).
//! * Writers ([`write_edges`], [`write_updates`], …) produce lines the readers accept.
//!
//! One level per file: [`line`] (one line's fields, with fast paths for the common shapes),
//! [`file`] (chunked reading, byte ranges, line numbers), [`write`] (the lines the readers
//! accept). The error types live here.

pub mod file;
pub mod line;
pub mod temporal;
pub mod write;

use std::io;
use std::path::{Path, PathBuf};

pub use file::*;
pub use line::*;
pub use write::*;

/// What is wrong with one line. The messages are meant for humans and quote the offending field
/// (long fields are shortened).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("too few fields: expected {expected}, found {found}")]
    TooFewFields { expected: &'static str, found: usize },
    #[error("too many fields: expected {expected}, found {found}")]
    TooManyFields { expected: &'static str, found: usize },
    #[error("{0:?} is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)")]
    BadId(String),
    #[error("negative vertex id {0:?} (vertex ids are integers from 0 to 18446744073709551615)")]
    NegativeId(String),
    #[error("vertex id {0:?} is too large (the largest vertex id is 18446744073709551615)")]
    IdOverflow(String),
    #[error("{0:?} is not a weight (weights are finite numbers >= 0, such as 1, 0.5 or 2e-3)")]
    BadWeight(String),
    #[error("weight {0:?} is NaN (weights are finite numbers >= 0)")]
    NanWeight(String),
    #[error("weight {0:?} is infinite (weights are finite numbers >= 0)")]
    InfiniteWeight(String),
    #[error("negative weight {0:?} (weights are finite numbers >= 0)")]
    NegativeWeight(String),
    #[error(
        "unknown sign {0:?}: an update line starts with \"+\" or \"-\" as a field of its own \
         (as in \"- 1 2\"), or directly with the source vertex id"
    )]
    UnknownSign(String),
    #[error(
        "{0:?} is not an event time (an event time is \"@\" followed by an integer from 0 to \
         18446744073709551615, as the last field of an update line, as in \"1 2 @17\")"
    )]
    BadTime(String),
    #[error("an event time needs an update before it, as in \"1 2 @17\"")]
    TimeWithoutUpdate,
}

/// A bad line in a file. `Display` is exactly `{path}:{line}: {problem}`, `line` being 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {problem}", path.display())]
pub struct InputError {
    pub path: PathBuf,
    /// 1-based line number in the whole file.
    pub line: usize,
    pub problem: String,
}

/// Failure to read an input file.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A line of the file is malformed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The file could not be opened or read: `cannot read {path}: {error}`. (The I/O error is
    /// part of the message and deliberately not exposed as `source()`, so that error-chain
    /// printers such as `anyhow`'s `{:#}` do not repeat it.)
    #[error("cannot read {}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
}

impl SourceError {
    fn io(path: &Path, error: io::Error) -> Self {
        SourceError::Io { path: path.to_path_buf(), error }
    }
}

#[cfg(test)]
mod tests;
