//! The SQL mirror: every completed epoch's changes applied to an embedded SQLite database in one
//! transaction.
//!
//! Per algorithm `A` the mirror keeps `A_history(vertex, value, valid_from, valid_to)`: a row is
//! the value a vertex had from epoch `valid_from` up to (not including) `valid_to` (`NULL`: still
//! current). The view `A` is the current rows; `A AS OF e` reads the rows valid at `e`. The
//! database is in WAL mode, so a reader's statement (or transaction) reads one committed state:
//! exactly one completed epoch, never half of one.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::types::Value;
use rusqlite::{params, Connection, OpenFlags};

use crate::driver::observe::OutputInfo;
use crate::sinks::Change;
use crate::types::format::ValueFormat;
use crate::types::stats::EpochStats;
use crate::types::Time;

/// One algorithm's table.
#[derive(Clone, Debug)]
pub struct Table {
    /// The SQL name (the algorithm's name, `-` written `_`).
    pub name: String,
    /// How its values are stored: integers or REAL.
    pub format: ValueFormat,
}

impl Table {
    /// The table of one output.
    pub fn of(info: &OutputInfo) -> Table {
        Table { name: sql_name(&info.name), format: info.format }
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
CREATE TABLE IF NOT EXISTS changes(epoch INTEGER NOT NULL, algorithm TEXT NOT NULL, vertex INTEGER NOT NULL,
    value NOT NULL, diff INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS changes_by_epoch ON changes(epoch);
CREATE TABLE IF NOT EXISTS ripples_state(epoch INTEGER, oldest INTEGER NOT NULL);
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
    AND name NOT LIKE '%!_history' ESCAPE '!' AND name NOT LIKE 'sqlite!_%' ESCAPE '!' AND name <> 'ripples_state';
";

/// The writing side of the mirror (owned by the mirror thread).
pub struct Mirror {
    conn: Connection,
    tables: Vec<Table>,
    retain: u64,
    applied: Option<Time>,
    /// Per table: output changes applied and the time spent on them.
    pub cost: Vec<(u64, Duration)>,
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
        Mirror { conn, tables: Vec::new(), retain, applied: None, cost: Vec::new() }
    }

    /// Creates the run's algorithm tables (again after a restart: they stay as they are).
    pub fn start(&mut self, outputs: &[OutputInfo]) -> Result<(), String> {
        let tables: Vec<Table> = outputs.iter().map(Table::of).collect();
        for t in &tables {
            let ty = match t.format {
                ValueFormat::Integer => "INTEGER",
                ValueFormat::Float => "REAL",
            };
            let n = &t.name;
            self.conn
                .execute_batch(&format!(
                    "CREATE TABLE IF NOT EXISTS {n}_history(vertex INTEGER NOT NULL, value {ty} NOT NULL,
                         valid_from INTEGER NOT NULL, valid_to INTEGER);
                     CREATE INDEX IF NOT EXISTS {n}_by_vertex ON {n}_history(vertex);
                     CREATE INDEX IF NOT EXISTS {n}_retired ON {n}_history(valid_to) WHERE valid_to IS NOT NULL;
                     CREATE VIEW IF NOT EXISTS {n} AS SELECT vertex, value FROM {n}_history WHERE valid_to IS NULL;"
                ))
                .map_err(sql_err)?;
        }
        self.cost = vec![(0, Duration::ZERO); tables.len()];
        self.tables = tables;
        Ok(())
    }

    /// The last epoch applied.
    pub fn applied(&self) -> Option<Time> {
        self.applied
    }

    /// Applies one completed epoch in one transaction.
    pub fn apply(&mut self, epoch: Time, stats: &EpochStats, changes: &[Vec<Change>]) -> Result<(), String> {
        let started = Instant::now();
        let tx = self.conn.transaction().map_err(sql_err)?;
        for (i, table) in self.tables.iter().enumerate() {
            let Some(list) = changes.get(i) else { continue };
            let t0 = Instant::now();
            let n = &table.name;
            let mut retract = tx
                .prepare_cached(&format!(
                    "UPDATE {n}_history SET valid_to = ?1 WHERE vertex = ?2 AND value = ?3 AND valid_to IS NULL"
                ))
                .map_err(sql_err)?;
            let mut insert = tx
                .prepare_cached(&format!("INSERT INTO {n}_history(vertex, value, valid_from) VALUES (?2, ?3, ?1)"))
                .map_err(sql_err)?;
            let mut log = tx.prepare_cached("INSERT INTO changes VALUES (?1, ?2, ?3, ?4, ?5)").map_err(sql_err)?;
            for c in list {
                let value = sql_value(table.format, c.value);
                let (e, v) = (c.epoch as i64, c.key as i64);
                if c.diff < 0 {
                    retract.execute(params![e, v, value]).map_err(sql_err)?;
                } else {
                    insert.execute(params![e, v, value]).map_err(sql_err)?;
                }
                log.execute(params![e, n, v, value, c.diff as i64]).map_err(sql_err)?;
            }
            self.cost[i].0 += list.len() as u64;
            self.cost[i].1 += t0.elapsed();
        }
        let oldest = epoch.saturating_sub(self.retain);
        let completed_at = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
        tx.execute(
            "INSERT OR REPLACE INTO epochs VALUES (?1, ?2, ?3, ?4,
                 strftime('%Y-%m-%dT%H:%M:%fZ', ?5 / 1000.0, 'unixepoch'), ?6)",
            params![
                epoch as i64,
                stats.updates as i64,
                stats.latency_ms,
                stats.output_changes as i64,
                completed_at,
                started.elapsed().as_secs_f64() * 1e3
            ],
        )
        .map_err(sql_err)?;
        tx.execute("UPDATE ripples_state SET epoch = ?1, oldest = ?2", params![epoch as i64, oldest as i64])
            .map_err(sql_err)?;
        // History older than the retained epochs goes, a few times per retention window (through
        // the index of retired rows: a scan of the whole table each time cost more than the stream).
        let every = (self.retain / 4).max(1);
        if epoch.is_multiple_of(every) && oldest > 0 {
            for t in &self.tables {
                tx.execute(
                    &format!("DELETE FROM {}_history WHERE valid_to IS NOT NULL AND valid_to <= ?1", t.name),
                    params![oldest as i64],
                )
                .map_err(sql_err)?;
            }
            tx.execute("DELETE FROM changes WHERE epoch < ?1", params![oldest as i64]).map_err(sql_err)?;
        }
        tx.commit().map_err(sql_err)?;
        self.applied = Some(epoch);
        Ok(())
    }
}
