//! A session's SQLite handle: its read-only connection to the mirror, the snapshot of the
//! latest completed epoch it reads (renewed once a newer epoch was committed), the inline
//! deadline, and the functions clients call (`ripples_epoch()`, `version()`, `regexp`, what
//! psql's `\d` asks of the catalog).

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;

use super::errors::sqlite_error;
use super::settings::{setting, SERVER_VERSION};
use crate::serve::sql::SqlError;
use crate::serve::{mirror, Shared};
use crate::types::Time;

/// A session's SQLite connection and the epoch its current statement reads (`ripples_epoch()`).
///
/// Outside a client's transaction the connection keeps a read transaction of its own open
/// across statements (the *snapshot*): a statement reads the latest completed epoch, and the
/// snapshot is renewed before a statement once a newer epoch was committed (and by the mirror
/// after each commit, for an idle session, so that no old snapshot holds the mirror's log).
/// Statements between two commits thus share one read transaction: no file locks taken and
/// released, and a page cache kept, per statement.
pub(crate) struct Db {
    pub(super) conn: Connection,
    /// The epoch `ripples_epoch()` returns; -1: none.
    pub(super) epoch: Arc<AtomicI64>,
    /// The epoch the open transaction (the snapshot or the client's) reads; -1: none yet.
    pub(super) pinned: AtomicI64,
    /// The open read transaction is the snapshot (not a client's `BEGIN`).
    pub(super) snapshot: AtomicBool,
    /// A statement run inline (on the server's thread) stops at this time (nanoseconds since
    /// [`clock`]'s start; 0: no limit) ...
    pub(super) inline_deadline: Arc<AtomicU64>,
    /// ... and this says it did (then it runs again on a blocking thread).
    pub(super) inline_stopped: Arc<AtomicBool>,
}

/// How long a statement may run inline on a server thread before it moves to a blocking thread
/// (where a cancel or the statement timeout can interrupt it). A point lookup takes tens of
/// microseconds; handing every statement to another thread cost two context switches each.
pub(super) const INLINE_BUDGET: Duration = Duration::from_millis(1);

/// Nanoseconds since the first call (a monotonic clock for the inline deadline).
pub(super) fn clock() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
}

impl std::ops::Deref for Db {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl Db {
    /// Reads the mirror's epoch into `ripples_epoch()` (in the snapshot now read).
    pub(super) fn pin(&self) -> Result<(), SqlError> {
        let (latest, _) = epochs(&self.conn).map_err(|e| sqlite_error(e, &[]))?;
        let e = latest.map_or(-1, |e| e as i64);
        self.pinned.store(e, Ordering::Release);
        self.epoch.store(e, Ordering::Release);
        Ok(())
    }

    /// Whether the client's own transaction (`BEGIN`) is open.
    pub(super) fn in_transaction(&self) -> bool {
        !self.conn.is_autocommit() && !self.snapshot.load(Ordering::Acquire)
    }

    /// Ends the snapshot, if one is open.
    pub(super) fn release(&self) {
        if self.snapshot.swap(false, Ordering::AcqRel) && !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("COMMIT");
        }
    }

    /// Outside a client's transaction: makes the snapshot read the latest committed epoch
    /// (`latest`, the mirror's), opening or renewing it.
    pub(super) fn fresh(&self, latest: Option<Time>) -> Result<(), SqlError> {
        if self.in_transaction() {
            return Ok(());
        }
        let open = self.snapshot.load(Ordering::Acquire) && !self.conn.is_autocommit();
        if open && latest.is_none_or(|l| l as i64 <= self.pinned.load(Ordering::Acquire)) {
            self.epoch.store(self.pinned.load(Ordering::Acquire), Ordering::Release);
            return Ok(());
        }
        self.release();
        self.conn.execute_batch("BEGIN").map_err(|e| sqlite_error(e, &[]))?;
        self.snapshot.store(true, Ordering::Release);
        // The first read starts the read transaction; it reads the state of the snapshot.
        self.pin()
    }
}

/// Ends an idle session's snapshot (the mirror calls it after each commit); a session busy with
/// a statement renews its own before the next one.
pub(crate) fn release_idle(db: &Mutex<Option<Db>>) {
    if let Ok(guard) = db.try_lock() {
        if let Some(d) = guard.as_ref() {
            d.release();
        }
    }
}

/// Interrupts the connection's running statement when dropped while armed (a cancelled or
/// timed-out statement).
pub(super) struct InterruptOnDrop(pub(super) Option<Arc<rusqlite::InterruptHandle>>);

impl Drop for InterruptOnDrop {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            h.interrupt();
        }
    }
}

/// Opens a session's read-only connection to the mirror, with the functions clients call.
pub(super) fn open(shared: &Arc<Shared>) -> Result<Db, rusqlite::Error> {
    let mut conn = mirror::reader(&shared.db)?;
    let (inline_deadline, inline_stopped) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
    let (deadline, stopped) = (inline_deadline.clone(), inline_stopped.clone());
    conn.progress_handler(
        1000,
        Some(move || {
            let d = deadline.load(Ordering::Relaxed);
            let stop = d != 0 && clock() > d;
            if stop {
                stopped.store(true, Ordering::Relaxed);
            }
            stop
        }),
    )?;
    let epoch = Arc::new(AtomicI64::new(-1));
    let e = epoch.clone();
    conn.create_scalar_function("ripples_epoch", 0, FunctionFlags::SQLITE_UTF8, move |_| {
        let v = e.load(Ordering::Acquire);
        Ok((v >= 0).then_some(v))
    })?;
    let pure = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("version", 0, pure, |_| {
        Ok(format!(
            "PostgreSQL {SERVER_VERSION} (ripples {}, SQLite {})",
            env!("CARGO_PKG_VERSION"),
            rusqlite::version()
        ))
    })?;
    conn.create_scalar_function("current_database", 0, pure, |_| Ok("ripples".to_string()))?;
    conn.create_scalar_function("current_schema", 0, pure, |_| Ok("public".to_string()))?;
    conn.create_scalar_function("pg_backend_pid", 0, pure, |_| Ok(std::process::id() as i64))?;
    // What psql's `\d` and `\dt` ask of the catalog (see the `pg_class` view of the mirror).
    conn.create_scalar_function("pg_get_userbyid", 1, pure, |_| Ok("ripples".to_string()))?;
    conn.create_scalar_function("pg_table_is_visible", 1, pure, |_| Ok(true))?;
    // `\d NAME`: a column's type, and the expressions (defaults) the served relations have none of.
    conn.create_scalar_function("format_type", 2, pure, |ctx| {
        let oid: Option<i64> = ctx.get(0)?;
        Ok(oid.map(|oid| match oid {
            20 => "bigint",
            701 => "double precision",
            25 => "text",
            16 => "boolean",
            23 => "integer",
            _ => "numeric",
        }))
    })?;
    conn.create_scalar_function("pg_get_expr", -1, pure, |_| Ok(None::<String>))?;
    conn.create_scalar_function("regexp", 2, pure, |ctx| {
        let (pattern, text): (String, Option<String>) = (ctx.get(0)?, ctx.get(1)?);
        let re = regex::Regex::new(&pattern).map_err(|e| rusqlite::Error::UserFunctionError(e.into()))?;
        Ok(text.is_some_and(|t| re.is_match(&t)))
    })?;
    let s = shared.clone();
    conn.create_scalar_function("current_setting", 1, pure, move |ctx| {
        let name: String = ctx.get(0)?;
        setting(&s, &name).ok_or_else(|| {
            rusqlite::Error::UserFunctionError(format!("unrecognized configuration parameter \"{name}\"").into())
        })
    })?;
    Ok(Db {
        conn,
        epoch,
        pinned: AtomicI64::new(-1),
        snapshot: AtomicBool::new(false),
        inline_deadline,
        inline_stopped,
    })
}

/// The epochs the mirror holds: (latest, oldest retained).
pub(super) fn epochs(conn: &Connection) -> Result<(Option<u64>, u64), rusqlite::Error> {
    conn.query_row("SELECT epoch, oldest FROM ripples_state", [], |r| {
        Ok((r.get::<_, Option<i64>>(0)?.map(|e| e as u64), r.get::<_, i64>(1)? as u64))
    })
}
