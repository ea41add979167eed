//! What a client's statement is, and the few rewrites that make PostgreSQL's dialect run on the
//! mirror: `$1` parameters, `::type` casts, `tbl AS OF e`, `COPY (...) TO STDOUT` and
//! `SUBSCRIBE`.
//!
//! * `lex` splits a statement into tokens (quotes and comments kept whole), so that no step
//!   mistakes a quoted `;`, `$1` or `::` for SQL;
//! * `classify` says what a statement asks for ([`Kind`]): the statements the server answers
//!   itself (transactions, settings, cursors, `COPY`, `SUBSCRIBE`) and the queries for SQLite;
//! * `rewrite` turns a query's PostgreSQL dialect into SQLite's ([`rewrite()`]);
//! * `catalog` knows the PostgreSQL catalogs the mirror keeps empty ([`reads_empty_catalog`]).
//!
//! Every step works on the token stream and answers malformed input with a [`SqlError`] for
//! the client (or passes it on for SQLite to reject), never with a panic.

mod catalog;
mod classify;
mod lex;
mod rewrite;
#[cfg(test)]
mod tests;

pub use catalog::reads_empty_catalog;
pub use classify::{classify, read_only, Declare, Fetch, Kind, Subscribe};
pub use lex::split_statements;
pub use rewrite::rewrite;

/// An error for the client: a SQLSTATE and a message that says what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    /// The SQLSTATE (see [`state`]).
    pub code: &'static str,
    /// What went wrong and what to do about it.
    pub message: String,
}

impl SqlError {
    /// An error with this SQLSTATE and message.
    pub fn new(code: &'static str, message: impl Into<String>) -> SqlError {
        SqlError { code, message: message.into() }
    }
}

/// SQLSTATEs used here.
pub mod state {
    /// `SYNTAX`: a syntax error.
    pub const SYNTAX: &str = "42601";
    /// `UNDEFINED_TABLE`: an unknown table.
    pub const UNDEFINED_TABLE: &str = "42P01";
    /// `UNDEFINED_COLUMN`: an unknown column.
    pub const UNDEFINED_COLUMN: &str = "42703";
    /// `UNDEFINED_FUNCTION`: an unknown function.
    pub const UNDEFINED_FUNCTION: &str = "42883";
    /// `AMBIGUOUS_COLUMN`: a column name that names several columns.
    pub const AMBIGUOUS_COLUMN: &str = "42702";
    /// `READ_ONLY`: a write statement on the read-only mirror.
    pub const READ_ONLY: &str = "25006";
    /// `UNDEFINED_OBJECT`: an unknown setting or object.
    pub const UNDEFINED_OBJECT: &str = "42704";
    /// `FEATURE_NOT_SUPPORTED`: something the mirror does not serve (the system catalog, for one).
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    /// `INVALID_PARAMETER`: a bad parameter, e.g. an `AS OF` epoch no longer retained.
    pub const INVALID_PARAMETER: &str = "22023";
    /// `CANCELED`: a statement cancelled or over its time limit.
    pub const CANCELED: &str = "57014";
    /// `PROGRAM_LIMIT`: a statement over the row limit.
    pub const PROGRAM_LIMIT: &str = "54000";
    /// `TOO_MANY_CONNECTIONS`: more connections than `--serve-max-connections`.
    pub const TOO_MANY_CONNECTIONS: &str = "53300";
    /// `INTERNAL`: a failure of the mirror itself.
    pub const INTERNAL: &str = "XX000";
    /// `LAGGING`: a subscriber that fell behind the retained epochs.
    pub const LAGGING: &str = "55000";
}
