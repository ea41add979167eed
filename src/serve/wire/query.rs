//! One query run to completion: rewritten for SQLite, read at the snapshot's epoch (or an
//! `AS OF` one), bound to its parameters, at most `--serve-max-rows` rows, with PostgreSQL types
//! for its columns.

use std::sync::atomic::Ordering;

use pgwire::api::Type;
use rusqlite::types::Value;
use rusqlite::Connection;

use super::db::{epochs, Db};
use super::errors::sqlite_error;
use crate::serve::sql::{self, state, SqlError};
use crate::serve::Shared;

/// A result set, read in one statement.
pub(super) struct ResultSet {
    /// The columns' names and types.
    pub(super) columns: Vec<(String, Type)>,
    /// The rows.
    pub(super) rows: Vec<Vec<Value>>,
}

/// The PostgreSQL type of a column SQLite declares (`decl`), if it has a declared type.
pub(super) fn pg_type(decl: Option<&str>) -> Option<Type> {
    let d = decl?.to_ascii_uppercase();
    Some(if d.contains("INT") {
        Type::INT8
    } else if d.contains("REAL") || d.contains("FLOA") || d.contains("DOUB") {
        Type::FLOAT8
    } else if d.contains("CHAR") || d.contains("TEXT") || d.contains("CLOB") {
        Type::TEXT
    } else {
        return None;
    })
}

/// The PostgreSQL type of a value (`None`: a NULL says nothing).
fn value_type(v: &Value) -> Option<Type> {
    match v {
        Value::Null => None,
        Value::Integer(_) => Some(Type::INT8),
        Value::Real(_) => Some(Type::FLOAT8),
        Value::Text(_) => Some(Type::TEXT),
        Value::Blob(_) => Some(Type::BYTEA),
    }
}

/// Checks that the `AS OF` epochs `wanted` are retained and completed.
pub(super) fn check_as_of(conn: &Connection, wanted: &[u64], tables: &[String]) -> Result<(), SqlError> {
    let (latest, oldest) = epochs(conn).map_err(|e| sqlite_error(e, tables))?;
    let Some(latest) = latest else {
        return Err(SqlError::new(state::LAGGING, "no epoch has completed yet: retry when the first one has"));
    };
    for &e in wanted {
        if e < oldest {
            return Err(SqlError::new(
                state::INVALID_PARAMETER,
                format!(
                    "AS OF {e}: epoch {e} is no longer retained; the oldest retained epoch is {oldest} (keep more with --serve-retain-epochs K)"
                ),
            ));
        }
        if e > latest {
            return Err(SqlError::new(
                state::INVALID_PARAMETER,
                format!("AS OF {e}: epoch {e} has not completed yet; the latest completed epoch is {latest}"),
            ));
        }
    }
    Ok(())
}

/// Runs one query to completion (at most `max_rows` rows).
pub(super) fn run_query(conn: &Db, shared: &Shared, sql_text: &str, params: &[Value]) -> Result<ResultSet, SqlError> {
    if sql::reads_empty_catalog(sql_text) {
        return Ok(ResultSet { columns: vec![("?column?".into(), Type::TEXT)], rows: Vec::new() });
    }
    let tables: Vec<String> =
        shared.tables.lock().map(|t| t.iter().map(|t| t.name.clone()).collect()).unwrap_or_default();
    let rw = sql::rewrite(sql_text, &tables)?;
    // The statement reads the snapshot (or the client's transaction) at one epoch.
    conn.fresh(*shared.latest.borrow())?;
    let result = (|| {
        if !rw.as_of.is_empty() {
            let uses_epoch = sql_text.to_ascii_lowercase().contains("ripples_epoch");
            check_as_of(conn, &rw.as_of, &tables)?;
            if uses_epoch && rw.as_of.iter().any(|&e| e != rw.as_of[0]) {
                return Err(SqlError::new(
                    state::INVALID_PARAMETER,
                    "ripples_epoch() with AS OF different epochs is ambiguous: read one epoch per statement",
                ));
            }
            conn.epoch.store(rw.as_of[0] as i64, Ordering::Release);
        } else {
            conn.epoch.store(conn.pinned.load(Ordering::Acquire), Ordering::Release);
        }
        let err = |e| sqlite_error(e, &tables);
        let mut stmt = conn.prepare_cached(&rw.sql).map_err(err)?;
        if !stmt.readonly() {
            let verb = sql_text.split_whitespace().next().unwrap_or("this statement").to_ascii_uppercase();
            return Err(sql::read_only(&verb));
        }
        let params = if rw.literals.is_empty() { params } else { &rw.literals[..] };
        if stmt.parameter_count() != params.len() {
            return Err(SqlError::new(
                "08P01",
                format!("the statement has {} parameters but {} were given", stmt.parameter_count(), params.len()),
            ));
        }
        for (i, p) in params.iter().enumerate() {
            stmt.raw_bind_parameter(i + 1, p).map_err(err)?;
        }
        let decl: Vec<(String, Option<Type>)> =
            stmt.columns().map(|c| (c.name().to_string(), pg_type(c.decl_type()))).collect();
        let n = decl.len();
        let max = shared.config.max_rows;
        let mut rows_out = Vec::new();
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next().map_err(err)? {
            if rows_out.len() >= max {
                return Err(SqlError::new(
                    state::PROGRAM_LIMIT,
                    format!("the statement returns more than {max} rows (--serve-max-rows): add a LIMIT, aggregate, or use COPY ... TO STDOUT for a bigger export is limited too"),
                ));
            }
            let mut r = Vec::with_capacity(n);
            for i in 0..n {
                r.push(row.get::<_, Value>(i).map_err(err)?);
            }
            rows_out.push(r);
        }
        let columns = decl
            .into_iter()
            .enumerate()
            .map(|(i, (name, ty))| {
                let ty = ty.or_else(|| rows_out.iter().find_map(|r| value_type(&r[i]))).unwrap_or(Type::TEXT);
                (name, ty)
            })
            .collect();
        Ok(ResultSet { columns, rows: rows_out })
    })();
    if conn.conn.is_autocommit() {
        // An interrupted statement may have ended the transaction.
        conn.snapshot.store(false, Ordering::Release);
    }
    result.map_err(|e| {
        if e.code != state::FEATURE_NOT_SUPPORTED && sql_text.to_ascii_lowercase().contains("pg_catalog.") {
            SqlError::new(
                state::FEATURE_NOT_SUPPORTED,
                format!("this catalog query is not served ({}): the catalog serves psql's \\d, \\dt and \\d NAME (not \\d+ NAME, \\di or \\df); the tables are {}, epochs, changes; a table's columns: SELECT * FROM pragma_table_info('epochs')", e.message, tables.join(", ")),
            )
        } else {
            e
        }
    })
}
