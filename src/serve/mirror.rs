//! The SQL mirror: every completed epoch's changes applied to an embedded SQLite database in one
//! transaction.
//!
//! Per algorithm `A` the mirror keeps two tables, both clustered on their keys (`WITHOUT ROWID`,
//! no secondary index, so a change costs one B-tree update in each):
//! - `ripples_A_current(vertex, value, valid_from)`, keyed by `(vertex, value)`: the current
//!   rows, each with the epoch it appeared in; the served view `A` is its `vertex, value`, and a
//!   point lookup by vertex is one descent of that B-tree;
//! - `ripples_A_log(epoch, vertex, value, diff, since)`, keyed by `(epoch, vertex, value)`: the
//!   change log of the retained epochs (appended at its end, cut at its start), a retraction
//!   carrying the epoch its row appeared in (`since`).
//!
//! A typed output `DF.OUT` of a user's dataflow is table `DF_OUT` the same way, its key in the
//! `vertex` column of its two tables and served as `key` (the view `DF_OUT` is `key, value`, each
//! with the SQL type of its Rust type, [`ColumnType`]). Its rows may repeat (a typed collection
//! is a multiset), so its tables are plain row tables with an index on `(vertex, value)` and on
//! the log's `epoch`, changed one row at a time.
//!
//! A row valid at epoch `e` is a current row with `valid_from <= e`, or a retraction after `e` of
//! a row there since `e` or before ([`as_of_sql`]); the view `changes` is the union of the logs.
//! The database is in WAL mode, so a reader's statement (or transaction) reads one committed
//! state: exactly one completed epoch (or several, when the mirror catches up), never half of one.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::types::Value;
use rusqlite::{params, Connection, OpenFlags};

use crate::driver::observe::{OutputInfo, RowOutputInfo};
use crate::sinks::Change;
use crate::types::format::{ColumnType, ValueFormat};
use crate::types::stats::EpochStats;
use crate::types::Time;

/// One algorithm's table.
#[derive(Clone, Debug)]
pub struct Table {
    /// The SQL name (the algorithm's name, `-` written `_`).
    pub name: String,
    /// How its values are stored: integers or REAL.
    pub format: ValueFormat,
    /// A typed output's table: the SQL types of its key and value (`None`: an algorithm's
    /// `(vertex, u64)` table).
    pub columns: Option<(ColumnType, ColumnType)>,
}

impl Table {
    /// The table of one output.
    pub fn of(info: &OutputInfo) -> Table {
        Table { name: sql_name(&info.name), format: info.format, columns: None }
    }

    /// The table of one typed output (`DF.OUT` is `df_out`).
    pub fn of_rows(info: &RowOutputInfo) -> Table {
        let format = if info.columns.1 == ColumnType::Float { ValueFormat::Float } else { ValueFormat::Integer };
        Table { name: sql_name(&info.name), format, columns: Some(info.columns) }
    }
}

/// One change of a typed output as SQL stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct RowChange {
    /// The epoch.
    pub epoch: Time,
    /// The key.
    pub key: Value,
    /// The value.
    pub value: Value,
    /// `1` or `-1`.
    pub diff: i8,
}

/// A typed output's rendered key or value as SQL stores it (`what` names it in the error): an
/// integer outside BIGINT's range is an error.
pub fn sql_column(ty: ColumnType, text: &str, what: impl Fn() -> String) -> Result<Value, String> {
    match ty {
        ColumnType::Integer => text.parse::<i64>().map(Value::Integer).map_err(|_| {
            format!(
                "--serve: {} is outside SQL's BIGINT (-2^63 to 2^63-1); serve it as text or a smaller integer",
                what()
            )
        }),
        ColumnType::Float => {
            text.parse::<f64>().map(Value::Real).map_err(|_| format!("--serve: {} is not a number", what()))
        }
        ColumnType::Text => Ok(Value::Text(text.to_string())),
    }
}

/// An algorithm's name as a SQL identifier.
pub fn sql_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect()
}

/// A change's value as SQL stores it.
pub fn sql_value(format: ValueFormat, value: u64) -> Value {
    match format {
        ValueFormat::Integer => Value::Integer(value as i64),
        ValueFormat::Float => Value::Real(f64::from_bits(value)),
    }
}

/// The tables every mirror has, before it knows the run's algorithms.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS epochs(epoch INTEGER PRIMARY KEY, updates INTEGER NOT NULL, latency_ms REAL NOT NULL,
    output_changes INTEGER NOT NULL, completed_at TEXT NOT NULL, mirror_ms REAL NOT NULL);
CREATE VIEW IF NOT EXISTS changes AS SELECT 0 AS epoch, '' AS algorithm, 0 AS vertex, 0 AS value, 0 AS diff WHERE 0;
CREATE TABLE IF NOT EXISTS ripples_state(epoch INTEGER, oldest INTEGER NOT NULL);
-- The profile (--profile, --http): refreshed about once a second while the run goes on, and at
-- its end with the whole cluster's figures. See ripples::types::profile for the columns.
CREATE TABLE IF NOT EXISTS ripples_workers(worker INTEGER NOT NULL, wall_seconds REAL NOT NULL,
    busy_seconds REAL NOT NULL, parked_seconds REAL NOT NULL, operator_seconds REAL NOT NULL);
CREATE TABLE IF NOT EXISTS ripples_operators(worker INTEGER NOT NULL, id INTEGER NOT NULL, addr TEXT NOT NULL,
    name TEXT NOT NULL, elapsed_seconds REAL NOT NULL, self_seconds REAL NOT NULL, invocations INTEGER NOT NULL,
    records_in INTEGER NOT NULL, records_out INTEGER NOT NULL, batches_in INTEGER NOT NULL, batches_out INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS ripples_channels(worker INTEGER NOT NULL, id INTEGER NOT NULL, source TEXT NOT NULL,
    target TEXT NOT NULL, records INTEGER NOT NULL, messages INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS ripples_arrangements(worker INTEGER NOT NULL, operator INTEGER NOT NULL, name TEXT NOT NULL,
    records INTEGER NOT NULL, batches INTEGER NOT NULL, batcher_bytes INTEGER NOT NULL);
INSERT INTO ripples_state SELECT NULL, 0 WHERE NOT EXISTS (SELECT 1 FROM ripples_state);
-- A minimal PostgreSQL catalog: what psql's \\d and \\dt read. The served relations are the
-- algorithm tables, epochs and changes (not the history tables behind AS OF).
CREATE VIEW IF NOT EXISTS pg_namespace AS SELECT 2200 AS oid, 'public' AS nspname, 10 AS nspowner
    UNION ALL SELECT 11, 'pg_catalog', 10 UNION ALL SELECT 13000, 'information_schema', 10;
CREATE VIEW IF NOT EXISTS pg_am AS SELECT 2 AS oid, 'heap' AS amname, 't' AS amtype;
CREATE VIEW IF NOT EXISTS pg_roles AS SELECT 10 AS oid, 'ripples' AS rolname;
CREATE VIEW IF NOT EXISTS pg_class AS SELECT CAST(16384 + rowid AS INTEGER) AS oid, name AS relname, 2200 AS relnamespace,
    'r' AS relkind, 10 AS relowner, 2 AS relam, 0 AS reltablespace, 'p' AS relpersistence, 0 AS relchecks,
    0 AS relhasindex, 0 AS relhasrules, 0 AS relhastriggers, 0 AS relrowsecurity, 0 AS relforcerowsecurity,
    0 AS relispartition, 0 AS reltoastrelid, 0 AS reloftype, 'd' AS relreplident, NULL AS reloptions
    FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'pg!_%' ESCAPE '!'
    AND name NOT LIKE 'ripples!_%' ESCAPE '!' AND name NOT LIKE 'sqlite!_%' ESCAPE '!';
-- The columns of the served relations, for psql's \\d NAME (types: bigint, double precision, text;
-- numeric for the untyped value of changes).
CREATE VIEW IF NOT EXISTS pg_type AS SELECT 20 AS oid, 'int8' AS typname, 0 AS typcollation, 2200 AS typnamespace
    UNION ALL SELECT 701, 'float8', 0, 2200 UNION ALL SELECT 25, 'text', 100, 2200 UNION ALL SELECT 1700, 'numeric', 0, 2200;
CREATE VIEW IF NOT EXISTS pg_attribute AS SELECT c.oid AS attrelid, p.name AS attname,
    CASE WHEN upper(p.type) LIKE '%INT%' THEN 20 WHEN upper(p.type) LIKE '%REAL%' THEN 701
         WHEN c.relname = 'changes' AND p.name = 'algorithm' THEN 25
         WHEN upper(p.type) LIKE '%TEXT%' THEN 25 ELSE 1700 END AS atttypid,
    -1 AS atttypmod, p.cid + 1 AS attnum, CASE WHEN p.\"notnull\" THEN 't' ELSE 'f' END AS attnotnull, 0 AS atthasdef,
    0 AS attisdropped, CASE WHEN upper(p.type) LIKE '%TEXT%' THEN 100 ELSE 0 END AS attcollation,
    '' AS attidentity, '' AS attgenerated, 'p' AS attstorage, '' AS attcompression, -1 AS attstattarget
    FROM pg_class c, pragma_table_info(c.relname) p;
CREATE VIEW IF NOT EXISTS pg_attrdef AS SELECT 0 AS oid, 0 AS adrelid, 0 AS adnum, NULL AS adbin WHERE 0;
CREATE VIEW IF NOT EXISTS pg_collation AS SELECT 100 AS oid, 'default' AS collname;
";

/// The rows of algorithm table `name` valid at epoch `e` (an SQL expression: an integer or a
/// parameter), as a parenthesised `SELECT vertex, value` for a FROM clause.
pub fn as_of_sql(name: &str, e: &str) -> String {
    // The first (empty) SELECT names the columns as the served view does (`vertex` or `key`).
    format!(
        "(SELECT * FROM {name} WHERE 0 UNION ALL \
         SELECT vertex, value FROM ripples_{name}_current WHERE valid_from <= {e} UNION ALL \
         SELECT vertex, value FROM ripples_{name}_log WHERE epoch > {e} AND diff < 0 AND since <= {e})"
    )
}

/// The change log of algorithm table `name` (columns `epoch, vertex, value, diff`, in log order).
pub fn log_table(name: &str) -> String {
    format!("ripples_{name}_log")
}

/// One completed epoch for the mirror.
#[derive(Clone, Debug)]
pub struct Epoch {
    /// The epoch.
    pub epoch: Time,
    /// Its statistics (a row of `epochs`).
    pub stats: EpochStats,
    /// Per algorithm table, its changes.
    pub changes: Vec<Vec<Change>>,
    /// Per typed output's table, its changes.
    pub rows: Vec<Vec<RowChange>>,
}

/// What applying the epochs cost.
#[derive(Clone, Debug, Default)]
pub struct Cost {
    /// Per table: output changes applied and the time spent on their statements.
    pub tables: Vec<(u64, Duration)>,
    /// Everything: output changes, and the time from the transaction's start to its commit.
    pub total: (u64, Duration),
    /// Transactions committed (several epochs share one when the mirror catches up).
    pub transactions: u64,
    /// Epochs applied.
    pub epochs: u64,
}

/// The writing side of the mirror (owned by the mirror thread).
pub struct Mirror {
    conn: Connection,
    tables: Vec<Table>,
    retain: u64,
    applied: Option<Time>,
    /// What the epochs applied so far cost.
    pub cost: Cost,
}

fn sql_err(e: rusqlite::Error) -> String {
    format!("--serve: the SQL mirror failed: {e}")
}

/// Opens (creating) the mirror database at `path`, in WAL mode, with the fixed tables.
pub fn create(path: &Path) -> Result<Connection, String> {
    let conn = Connection::open(path).map_err(sql_err)?;
    conn.pragma_update(None, "journal_mode", "WAL").map_err(sql_err)?;
    // The mirror is rebuilt from the run on every start: durability buys nothing.
    conn.pragma_update(None, "synchronous", "OFF").map_err(sql_err)?;
    conn.pragma_update(None, "cache_size", -65536).map_err(sql_err)?;
    conn.pragma_update(None, "temp_store", "MEMORY").map_err(sql_err)?;
    conn.execute_batch(SCHEMA).map_err(sql_err)?;
    Ok(conn)
}

/// Opens a reader's connection: read-only, its own snapshot per statement or transaction.
pub fn reader(path: &Path) -> Result<Connection, rusqlite::Error> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.pragma_update(None, "query_only", 1)?;
    conn.pragma_update(None, "cache_size", -16384)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    Ok(conn)
}

impl Mirror {
    /// The mirror over `conn` (see [`create`]), keeping `retain` epochs of history.
    pub fn new(conn: Connection, retain: u64) -> Mirror {
        // Per table: the retraction and three statements in each of the sizes `run_chunks` uses.
        conn.set_prepared_statement_cache_capacity(256);
        Mirror { conn, tables: Vec::new(), retain, applied: None, cost: Cost::default() }
    }

    /// Creates the run's algorithm tables (again after a restart: they stay as they are).
    pub fn start(&mut self, outputs: &[OutputInfo], typed: &[RowOutputInfo]) -> Result<(), String> {
        let tables: Vec<Table> = outputs.iter().map(Table::of).chain(typed.iter().map(Table::of_rows)).collect();
        let mut union = Vec::new();
        for t in &tables {
            if let Some((key, value)) = t.columns {
                let (n, kt, vt) = (&t.name, key.sqlite(), value.sqlite());
                self.conn
                    .execute_batch(&format!(
                        "CREATE TABLE IF NOT EXISTS ripples_{n}_current(vertex {kt} NOT NULL, value {vt} NOT NULL,
                             valid_from INTEGER NOT NULL);
                         CREATE INDEX IF NOT EXISTS ripples_{n}_current_row ON ripples_{n}_current(vertex, value);
                         CREATE TABLE IF NOT EXISTS ripples_{n}_log(epoch INTEGER NOT NULL, vertex {kt} NOT NULL,
                             value {vt} NOT NULL, diff INTEGER NOT NULL, since INTEGER);
                         CREATE INDEX IF NOT EXISTS ripples_{n}_log_epoch ON ripples_{n}_log(epoch);
                         CREATE VIEW IF NOT EXISTS {n} AS SELECT vertex AS key, value FROM ripples_{n}_current;"
                    ))
                    .map_err(sql_err)?;
                union.push(format!(
                    "SELECT epoch, '{n}' AS algorithm, vertex, +value AS value, diff FROM ripples_{n}_log"
                ));
                continue;
            }
            let ty = match t.format {
                ValueFormat::Integer => "INTEGER",
                ValueFormat::Float => "REAL",
            };
            let n = &t.name;
            self.conn
                .execute_batch(&format!(
                    "CREATE TABLE IF NOT EXISTS ripples_{n}_current(vertex INTEGER NOT NULL, value {ty} NOT NULL,
                         valid_from INTEGER NOT NULL, PRIMARY KEY (vertex, value)) WITHOUT ROWID;
                     CREATE TABLE IF NOT EXISTS ripples_{n}_log(epoch INTEGER NOT NULL, vertex INTEGER NOT NULL,
                         value {ty} NOT NULL, diff INTEGER NOT NULL, since INTEGER,
                         PRIMARY KEY (epoch, vertex, value, diff)) WITHOUT ROWID;
                     CREATE VIEW IF NOT EXISTS {n} AS SELECT vertex, value FROM ripples_{n}_current;"
                ))
                .map_err(sql_err)?;
            // `+value`: no declared type, so that a client sees each row's own (integer or REAL).
            union.push(format!("SELECT epoch, '{n}' AS algorithm, vertex, +value AS value, diff FROM ripples_{n}_log"));
        }
        if !union.is_empty() {
            self.conn
                .execute_batch(&format!(
                    "DROP VIEW IF EXISTS changes; CREATE VIEW changes AS {};",
                    union.join(" UNION ALL ")
                ))
                .map_err(sql_err)?;
        }
        self.cost.tables = vec![(0, Duration::ZERO); tables.len()];
        self.tables = tables;
        Ok(())
    }

    /// Replaces the profile tables' rows with `profile`'s, in one transaction.
    pub fn profile(&mut self, profile: &crate::types::profile::Profile) -> Result<(), String> {
        let addr = |a: &[usize]| a.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(".");
        let tx = self.conn.transaction().map_err(sql_err)?;
        tx.execute_batch(
            "DELETE FROM ripples_workers; DELETE FROM ripples_operators; DELETE FROM ripples_channels;
             DELETE FROM ripples_arrangements;",
        )
        .map_err(sql_err)?;
        {
            let mut s =
                tx.prepare_cached("INSERT INTO ripples_workers VALUES (?1, ?2, ?3, ?4, ?5)").map_err(sql_err)?;
            for w in &profile.workers {
                s.execute(params![
                    w.worker as i64,
                    w.wall_seconds,
                    w.busy_seconds,
                    w.parked_seconds,
                    w.operator_seconds
                ])
                .map_err(sql_err)?;
            }
            let mut s = tx
                .prepare_cached("INSERT INTO ripples_operators VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")
                .map_err(sql_err)?;
            for o in &profile.operators {
                s.execute(params![
                    o.worker as i64,
                    o.id as i64,
                    addr(&o.addr),
                    o.name,
                    o.inclusive_seconds,
                    o.self_seconds,
                    o.invocations as i64,
                    o.records_in as i64,
                    o.records_out as i64,
                    o.batches_in as i64,
                    o.batches_out as i64
                ])
                .map_err(sql_err)?;
            }
            let mut s =
                tx.prepare_cached("INSERT INTO ripples_channels VALUES (?1, ?2, ?3, ?4, ?5, ?6)").map_err(sql_err)?;
            for c in &profile.channels {
                s.execute(params![
                    c.worker as i64,
                    c.id as i64,
                    addr(&c.source),
                    addr(&c.target),
                    c.records as i64,
                    c.messages as i64
                ])
                .map_err(sql_err)?;
            }
            let mut s = tx
                .prepare_cached("INSERT INTO ripples_arrangements VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
                .map_err(sql_err)?;
            for a in &profile.arrangements {
                s.execute(params![a.worker as i64, a.operator as i64, a.name, a.records, a.batches, a.batcher_bytes])
                    .map_err(sql_err)?;
            }
        }
        tx.commit().map_err(sql_err)
    }

    /// The last epoch applied.
    pub fn applied(&self) -> Option<Time> {
        self.applied
    }

    /// Applies completed epochs (in order) in one transaction: a reader sees all of an epoch or
    /// none of it.
    pub fn apply(&mut self, epochs: &[Epoch]) -> Result<(), String> {
        let Some(last) = epochs.last() else { return Ok(()) };
        let started = Instant::now();
        let tx = self.conn.transaction().map_err(sql_err)?;
        let mut changes = 0u64;
        for ep in epochs {
            let t_epoch = Instant::now();
            let vertex_tables = self.tables.iter().filter(|t| t.columns.is_none()).count();
            for (j, table) in self.tables[vertex_tables..].iter().enumerate() {
                let Some(list) = ep.rows.get(j) else { continue };
                let t0 = Instant::now();
                apply_rows(&tx, &table.name, list)?;
                changes += list.len() as u64;
                self.cost.tables[vertex_tables + j].0 += list.len() as u64;
                self.cost.tables[vertex_tables + j].1 += t0.elapsed();
            }
            for (i, table) in self.tables[..vertex_tables].iter().enumerate() {
                let Some(list) = ep.changes.get(i) else { continue };
                if list.is_empty() {
                    continue;
                }
                let t0 = Instant::now();
                let n = &table.name;
                // Two statements per `ROWS` changes and one per retraction, where it was two
                // per change (a `DELETE ... RETURNING valid_from` or an `INSERT`, and the log
                // row): the retractions' log rows, each with the epoch its row appeared in (read
                // by a join with the current rows), then the retractions (plain deletes: an OR
                // of 64 keys measured the same), then the new current rows and their log rows.
                // A windowed run's last view holds many epochs, in order, and a key may come and
                // go between them: each epoch's changes (distinct keys) are batched on their own.
                for list in list.chunk_by(|a, b| a.epoch == b.epoch) {
                    let mut gone_log = Vec::new();
                    let mut gone_keys = Vec::new();
                    let mut added = Vec::new();
                    let mut logged = Vec::new();
                    for c in list {
                        let value = sql_value(table.format, c.value);
                        let (e, v, d) = (
                            Value::Integer(c.epoch as i64),
                            Value::Integer(c.key as i64),
                            Value::Integer(c.diff as i64),
                        );
                        if c.diff < 0 {
                            gone_keys.extend([v.clone(), value.clone()]);
                            gone_log.extend([e, v, value, d]);
                        } else {
                            added.extend([v.clone(), value.clone(), e.clone()]);
                            logged.extend([e, v, value, d, Value::Null]);
                        }
                    }
                    run_chunks(&tx, &gone_log, 4, |k| {
                        format!(
                            "INSERT INTO ripples_{n}_log(epoch, vertex, value, diff, since) \
                             SELECT k.column1, k.column2, k.column3, k.column4, c.valid_from FROM (VALUES {}) AS k \
                             LEFT JOIN ripples_{n}_current c ON c.vertex = k.column2 AND c.value = k.column3",
                            tuples(4, k)
                        )
                    })?;
                    let mut retract = tx
                        .prepare_cached(&format!("DELETE FROM ripples_{n}_current WHERE vertex = ?1 AND value = ?2"))
                        .map_err(sql_err)?;
                    for key in gone_keys.chunks(2) {
                        retract.execute(rusqlite::params_from_iter(key)).map_err(sql_err)?;
                    }
                    drop(retract);
                    run_chunks(&tx, &added, 3, |k| {
                        format!("INSERT INTO ripples_{n}_current(vertex, value, valid_from) VALUES {}", tuples(3, k))
                    })?;
                    run_chunks(&tx, &logged, 5, |k| {
                        format!(
                            "INSERT INTO ripples_{n}_log(epoch, vertex, value, diff, since) VALUES {}",
                            tuples(5, k)
                        )
                    })?;
                }
                changes += list.len() as u64;
                self.cost.tables[i].0 += list.len() as u64;
                self.cost.tables[i].1 += t0.elapsed();
            }
            let epoch = ep.epoch;
            let oldest = epoch.saturating_sub(self.retain);
            let completed_at = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
            tx.prepare_cached(
                "INSERT OR REPLACE INTO epochs VALUES (?1, ?2, ?3, ?4,
                     strftime('%Y-%m-%dT%H:%M:%fZ', ?5 / 1000.0, 'unixepoch'), ?6)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    epoch as i64,
                    ep.stats.updates as i64,
                    ep.stats.latency_ms,
                    ep.stats.output_changes as i64,
                    completed_at,
                    t_epoch.elapsed().as_secs_f64() * 1e3
                ])
            })
            .map_err(sql_err)?;
            // The log older than the retained epochs goes, a few times per retention window (a
            // range at the start of each log's key).
            let every = (self.retain / 4).max(1);
            if epoch.is_multiple_of(every) && oldest > 0 {
                for t in &self.tables {
                    tx.execute(&format!("DELETE FROM ripples_{}_log WHERE epoch < ?1", t.name), params![oldest as i64])
                        .map_err(sql_err)?;
                }
            }
        }
        let oldest = last.epoch.saturating_sub(self.retain);
        tx.execute("UPDATE ripples_state SET epoch = ?1, oldest = ?2", params![last.epoch as i64, oldest as i64])
            .map_err(sql_err)?;
        tx.commit().map_err(sql_err)?;
        self.applied = Some(last.epoch);
        self.cost.total.0 += changes;
        self.cost.total.1 += started.elapsed();
        self.cost.transactions += 1;
        self.cost.epochs += epochs.len() as u64;
        Ok(())
    }
}

/// Applies a typed output's changes (in change-log order) to its tables, one row at a time: a
/// retraction removes one copy of its row and logs the epoch that copy appeared in.
fn apply_rows(tx: &rusqlite::Transaction<'_>, n: &str, list: &[RowChange]) -> Result<(), String> {
    if list.is_empty() {
        return Ok(());
    }
    let mut retract = tx
        .prepare_cached(&format!(
            "DELETE FROM ripples_{n}_current WHERE rowid = (SELECT rowid FROM ripples_{n}_current \
             WHERE vertex = ?1 AND value = ?2 LIMIT 1) RETURNING valid_from"
        ))
        .map_err(sql_err)?;
    let mut insert = tx
        .prepare_cached(&format!("INSERT INTO ripples_{n}_current(vertex, value, valid_from) VALUES (?1, ?2, ?3)"))
        .map_err(sql_err)?;
    let mut log = tx
        .prepare_cached(&format!(
            "INSERT INTO ripples_{n}_log(epoch, vertex, value, diff, since) VALUES (?1, ?2, ?3, ?4, ?5)"
        ))
        .map_err(sql_err)?;
    for c in list {
        let epoch = c.epoch as i64;
        let since: Option<i64> = if c.diff < 0 {
            let mut rows = retract.query(params![c.key, c.value]).map_err(sql_err)?;
            let since = rows.next().map_err(sql_err)?.map(|r| r.get::<_, i64>(0)).transpose().map_err(sql_err)?;
            drop(rows);
            since
        } else {
            insert.execute(params![c.key, c.value, epoch]).map_err(sql_err)?;
            None
        };
        log.execute(params![epoch, c.key, c.value, c.diff as i64, since]).map_err(sql_err)?;
    }
    Ok(())
}

/// Rows per multi-row statement (at most 5 values a row: 320 parameters, far below SQLite's
/// limit).
const ROWS: usize = 64;

/// `k` parenthesised tuples of `width` parameters, comma-separated.
fn tuples(width: usize, k: usize) -> String {
    let tuple = format!("({})", vec!["?"; width].join(", "));
    vec![tuple.as_str(); k].join(", ")
}

/// Runs the statement `sql(k)` over `values` (rows of `width` values, flattened), `k` rows at a
/// time: `ROWS` rows a statement, the rest in statements of power-of-two sizes (so that a table
/// needs at most 7 prepared statements per kind, each prepared once).
fn run_chunks(
    tx: &rusqlite::Transaction<'_>,
    values: &[Value],
    width: usize,
    sql: impl Fn(usize) -> String,
) -> Result<(), String> {
    let mut rest = values;
    while !rest.is_empty() {
        let rows = rest.len() / width;
        let take = if rows >= ROWS { ROWS } else { 1 << rows.ilog2() };
        let (chunk, tail) = rest.split_at(take * width);
        tx.prepare_cached(&sql(take))
            .and_then(|mut s| s.execute(rusqlite::params_from_iter(chunk)))
            .map_err(sql_err)?;
        rest = tail;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Node;
    use std::collections::{BTreeMap, BTreeSet};

    fn stats(epoch: Time) -> EpochStats {
        EpochStats { epoch, ..EpochStats::default() }
    }

    fn change(epoch: Time, key: Node, value: u64, diff: i8) -> Change {
        Change { epoch, key, value, diff }
    }

    /// The rows of `table` valid at `e`, as the mirror serves them (`AS OF e`), values as text.
    fn served(conn: &Connection, table: &str, e: Time) -> BTreeSet<(i64, String)> {
        let sql = format!("SELECT vertex, CAST(value AS TEXT) FROM {}", as_of_sql(table, &e.to_string()));
        let mut stmt = conn.prepare(&sql).unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).unwrap();
        rows.map(|r| r.unwrap()).collect()
    }

    /// A windowed run's last view holds several epochs in which a key comes and goes (and comes
    /// back): every epoch served `AS OF` equals the plain fold of the changes up to it.
    #[test]
    fn a_view_of_several_epochs_applies_them_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.db");
        let mut mirror = Mirror::new(create(&path).unwrap(), 100);
        let outputs = [
            OutputInfo { name: "wcc".into(), format: ValueFormat::Integer },
            OutputInfo { name: "pr".into(), format: ValueFormat::Float },
        ];
        mirror.start(&outputs, &[]).unwrap();
        let f = |x: f64| x.to_bits();
        let views = [
            Epoch {
                epoch: 0,
                stats: stats(0),
                changes: vec![vec![change(0, 1, 1, 1), change(0, 2, 1, 1)], vec![change(0, 1, f(0.5), 1)]],
                rows: vec![],
            },
            Epoch {
                epoch: 3,
                stats: stats(3),
                changes: vec![
                    vec![
                        change(1, 2, 1, -1),
                        change(1, 2, 2, 1),
                        change(2, 2, 2, -1),
                        change(2, 2, 1, 1),
                        change(3, 3, 3, 1),
                        change(3, 1, 1, -1),
                    ],
                    vec![
                        change(2, 1, f(0.5), -1),
                        change(2, 1, f(0.25), 1),
                        change(3, 1, f(0.25), -1),
                        change(3, 1, f(0.5), 1),
                    ],
                ],
                rows: vec![],
            },
        ];
        for view in &views {
            mirror.apply(std::slice::from_ref(view)).unwrap();
        }
        let conn = reader(&path).unwrap();
        for (i, (table, format)) in [("wcc", ValueFormat::Integer), ("pr", ValueFormat::Float)].into_iter().enumerate()
        {
            let all: Vec<&Change> = views.iter().flat_map(|v| &v.changes[i]).collect();
            for e in 0..=3 {
                let mut state: BTreeSet<(i64, String)> = BTreeSet::new();
                for c in all.iter().filter(|c| c.epoch <= e) {
                    let text = match format {
                        ValueFormat::Integer => c.value.to_string(),
                        ValueFormat::Float => f64::from_bits(c.value).to_string(),
                    };
                    if c.diff > 0 {
                        assert!(state.insert((c.key as i64, text)));
                    } else {
                        assert!(state.remove(&(c.key as i64, text)));
                    }
                }
                assert_eq!(served(&conn, table, e), state, "{table} AS OF {e}");
            }
        }
    }

    /// A typed output's table holds a multiset: a row twice (from two epochs), one copy retracted,
    /// then the other; every epoch served `AS OF` has the right number of copies, and the view
    /// names the columns `key` and `value`.
    #[test]
    fn a_typed_table_keeps_copies_of_a_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.db");
        let mut mirror = Mirror::new(create(&path).unwrap(), 100);
        let info = RowOutputInfo {
            name: "my-df.out".into(),
            format: crate::types::format::RowFormat::Text,
            columns: (ColumnType::Text, ColumnType::Integer),
        };
        mirror.start(&[], std::slice::from_ref(&info)).unwrap();
        let row = |epoch: Time, key: &str, value: i64, diff: i8| RowChange {
            epoch,
            key: Value::Text(key.into()),
            value: Value::Integer(value),
            diff,
        };
        let epochs = [
            vec![row(0, "a", 1, 1)],
            vec![row(1, "a", 1, 1), row(1, "b", 2, 1)],
            vec![row(2, "a", 1, -1)],
            vec![row(3, "a", 1, -1), row(3, "b", 2, -1), row(3, "b", 3, 1)],
        ];
        for (e, rows) in epochs.iter().enumerate() {
            let ep = Epoch { epoch: e as Time, stats: stats(e as Time), changes: vec![], rows: vec![rows.clone()] };
            mirror.apply(&[ep]).unwrap();
        }
        let conn = reader(&path).unwrap();
        let mut state: BTreeMap<(String, i64), i64> = BTreeMap::new();
        for (e, rows) in epochs.iter().enumerate() {
            for r in rows {
                let (Value::Text(k), Value::Integer(v)) = (&r.key, &r.value) else { unreachable!() };
                *state.entry((k.clone(), *v)).or_default() += r.diff as i64;
            }
            state.retain(|_, n| *n != 0);
            let sql = format!(
                "SELECT key, value, count(*) FROM {} GROUP BY key, value",
                as_of_sql("my_df_out", &e.to_string())
            );
            let mut stmt = conn.prepare(&sql).unwrap();
            let got: BTreeMap<(String, i64), i64> =
                stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?))).unwrap().map(|r| r.unwrap()).collect();
            assert_eq!(got, state, "AS OF {e}");
        }
        let now: Vec<(String, i64)> = conn
            .prepare("SELECT key, value FROM my_df_out")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(now, vec![("b".to_string(), 3)]);
    }
}
