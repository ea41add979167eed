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
//! One level per file: `line` (one line's fields, with fast paths for the common shapes),
//! `file` (chunked reading, byte ranges, line numbers), `write` (the lines the readers
//! accept). The error types live here.
//!
//! ```
//! use ripples::sources::parse::{parse_edge_line, parse_update_line, read_edges, LineError};
//! use ripples::types::Update;
//! // Any run of spaces, tabs or commas separates fields; the weight is optional.
//! assert_eq!(parse_edge_line("1, 2 0.5"), Ok(Some((1, 2, Some(0.5)))));
//! assert_eq!(parse_edge_line("% a Matrix-Market header"), Ok(None));
//! assert_eq!(parse_update_line("- 3 4"), Ok(Some(Update::delete(3, 4))));
//! assert_eq!(parse_edge_line("1 -5"), Err(LineError::NegativeId("-5".into())));
//!
//! // A file reader names the file and the 1-based line of the first bad line.
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("graph.txt");
//! std::fs::write(&path, "# triangle\n0 1\n1 2\n2 x\n").unwrap();
//! let err = read_edges(&path).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     format!("{}:4: \"x\" is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)", path.display())
//! );
//! std::fs::write(&path, "0 1\n1 2 0.5\n").unwrap();
//! assert_eq!(read_edges(&path).unwrap(), vec![(0, 1, None), (1, 2, Some(0.5))]);
//! ```

mod file;
mod line;
pub mod temporal;
mod write;

use std::io;
use std::path::{Path, PathBuf};

pub use file::*;
pub use line::*;
pub use write::*;

/// What is wrong with one line. The messages are meant for humans and quote the offending field
/// (long fields are shortened).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The line ends before all required fields (say, an edge line with one id).
    #[error("too few fields: expected {expected}, found {found}")]
    TooFewFields {
        /// The fields the format wants, in words (`"src dst [weight]"`).
        expected: &'static str,
        /// How many fields the line has.
        found: usize,
    },
    /// The line has more fields than its format allows.
    #[error("too many fields: expected {expected}, found {found}")]
    TooManyFields {
        /// The fields the format wants, in words (`"src dst [weight]"`).
        expected: &'static str,
        /// How many fields the line has.
        found: usize,
    },
    /// A vertex-id field that is not made of decimal digits only (the field, quoted).
    #[error("{0:?} is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)")]
    BadId(String),
    /// A vertex-id field with a leading `-` (the field, quoted).
    #[error("negative vertex id {0:?} (vertex ids are integers from 0 to 18446744073709551615)")]
    NegativeId(String),
    /// A vertex id above `u64::MAX` (the field, quoted).
    #[error("vertex id {0:?} is too large (the largest vertex id is 18446744073709551615)")]
    IdOverflow(String),
    /// A weight field that is not a number in Rust's float syntax (the field, quoted).
    #[error("{0:?} is not a weight (weights are finite numbers >= 0, such as 1, 0.5 or 2e-3)")]
    BadWeight(String),
    /// A weight spelled `NaN` (the field, quoted).
    #[error("weight {0:?} is NaN (weights are finite numbers >= 0)")]
    NanWeight(String),
    /// A weight that is infinite, or too large to be a finite `f64` (the field, quoted).
    #[error("weight {0:?} is infinite (weights are finite numbers >= 0)")]
    InfiniteWeight(String),
    /// A weight below zero (the field, quoted; `-0` is accepted as `0`).
    #[error("negative weight {0:?} (weights are finite numbers >= 0)")]
    NegativeWeight(String),
    /// An update line whose first field is neither `+`, `-` nor a vertex id, such as `+1` or
    /// `*` (the field, quoted).
    #[error(
        "unknown sign {0:?}: an update line starts with \"+\" or \"-\" as a field of its own \
         (as in \"- 1 2\"), or directly with the source vertex id"
    )]
    UnknownSign(String),
    /// A field starting with `@` that is not `@` followed by a `u64` (the field, quoted).
    #[error(
        "{0:?} is not an event time (an event time is \"@\" followed by an integer from 0 to \
         18446744073709551615, as the last field of an update line, as in \"1 2 @17\")"
    )]
    BadTime(String),
    /// A line holding an `@T` field but no update before it.
    #[error("an event time needs an update before it, as in \"1 2 @17\"")]
    TimeWithoutUpdate,
}

/// A bad line in a file. `Display` is exactly `{path}:{line}: {problem}`, `line` being 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {problem}", path.display())]
pub struct InputError {
    /// The file the line is in, as given by the user.
    pub path: PathBuf,
    /// 1-based line number in the whole file.
    pub line: usize,
    /// What is wrong with the line (usually a [`LineError`]'s message).
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
    Io {
        /// The file, as given by the user.
        path: PathBuf,
        /// The error opening or reading it.
        error: io::Error,
    },
}

impl SourceError {
    fn io(path: &Path, error: io::Error) -> Self {
        SourceError::Io { path: path.to_path_buf(), error }
    }
}

#[cfg(test)]
mod tests;
