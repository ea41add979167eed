//! Errors for the client: SQLite's errors as PostgreSQL's SQLSTATEs, each with a message that
//! says what to do, and their `pgwire` forms.

use pgwire::error::{ErrorInfo, PgWireError};

use crate::serve::sql::{self, state, SqlError};

/// The `pgwire` error (an ErrorResponse) for a statement's error.
pub(super) fn user_error(e: SqlError) -> PgWireError {
    PgWireError::UserError(Box::new(error_info(e)))
}

/// The ErrorResponse fields of a statement's error.
pub(super) fn error_info(e: SqlError) -> ErrorInfo {
    ErrorInfo::new("ERROR".into(), e.code.into(), e.message)
}

/// The PostgreSQL error for a SQLite error.
pub(super) fn sqlite_error(e: rusqlite::Error, tables: &[String]) -> SqlError {
    let msg = match &e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        other => other.to_string(),
    };
    let all = || {
        let mut t: Vec<String> = tables.to_vec();
        t.extend(["epochs".to_string(), "changes".to_string()]);
        t.join(", ")
    };
    if let Some(name) = msg.strip_prefix("no such table: ") {
        if name.starts_with("pg_") || name.starts_with("information_schema") {
            return SqlError::new(
                state::FEATURE_NOT_SUPPORTED,
                format!(
                    "the PostgreSQL catalog table {name} is not served (only pg_class, pg_namespace, pg_attribute, pg_type, pg_am and pg_roles: enough for psql's \\d, \\dt and \\d NAME); the tables are {}; a table's columns: SELECT * FROM pragma_table_info('wcc')",
                    all()
                ),
            );
        }
        return SqlError::new(
            state::UNDEFINED_TABLE,
            format!("relation \"{name}\" does not exist; the tables are {}", all()),
        );
    }
    if let Some(name) = msg.strip_prefix("no such column: ") {
        return SqlError::new(
            state::UNDEFINED_COLUMN,
            format!(
                "column \"{name}\" does not exist; the algorithm tables have vertex and value, a typed output's table key and value, epochs has epoch, updates, latency_ms, output_changes, completed_at, changes has epoch, algorithm, vertex, value, diff"
            ),
        );
    }
    if let Some(name) = msg.strip_prefix("no such function: ") {
        return SqlError::new(state::UNDEFINED_FUNCTION, format!("function {name}() does not exist"));
    }
    if let Some(rest) = msg.strip_prefix("ambiguous column name: ") {
        return SqlError::new(state::AMBIGUOUS_COLUMN, format!("column reference \"{rest}\" is ambiguous"));
    }
    if msg.contains("syntax error") || msg.contains("incomplete input") || msg.contains("unrecognized token") {
        let near = msg.strip_prefix("near ").and_then(|m| m.split(": syntax error").next());
        return SqlError::new(
            state::SYNTAX,
            match near {
                Some(n) => format!("syntax error at or near {n}"),
                None => format!("syntax error: {msg}"),
            },
        );
    }
    if msg.contains("interrupted") {
        return SqlError::new(state::CANCELED, "canceling statement due to user request");
    }
    if msg.contains("readonly") || msg.contains("read-only") {
        return sql::read_only("a write");
    }
    if msg.starts_with("unrecognized configuration parameter") {
        return SqlError::new(state::UNDEFINED_OBJECT, msg);
    }
    SqlError::new(state::INTERNAL, msg)
}

/// The error for an unknown cursor.
pub(super) fn no_cursor(name: &str) -> SqlError {
    SqlError::new("34000", format!("cursor \"{name}\" does not exist: DECLARE it (in this transaction) first"))
}
