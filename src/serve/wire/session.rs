//! A connection's session: its SQLite handle, the statements it runs (dispatched by their
//! [`Kind`]), its transaction, its `DECLARE`d cursors, and where a statement runs: inline while
//! it is quick, else on a blocking thread within the statement timeout, where a cancel
//! interrupts it.

use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Sink;
use pgwire::api::portal::Format;
use pgwire::api::results::{FieldInfo, QueryResponse, Response, Tag};
use pgwire::api::stmt::NoopQueryParser;
use pgwire::api::{ClientInfo, Type};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::PgWireBackendMessage;
use rusqlite::types::Value;

use super::db::{clock, epochs, open, Db, InterruptOnDrop, INLINE_BUDGET};
use super::encode::{encode, fields, one_text_row};
use super::errors::{no_cursor, sqlite_error};
use super::query::{pg_type, run_query, ResultSet};
use super::settings::setting;
use crate::serve::sql::{self, state, Declare, Fetch, Kind, SqlError};
use crate::serve::Shared;

/// A `DECLARE`d cursor: its rows (read at one epoch when declared) not fetched yet.
struct Cursor {
    columns: Vec<(String, Type)>,
    rows: VecDeque<Vec<Value>>,
    /// `WITH HOLD`: it outlives its transaction.
    hold: bool,
}

/// A connection's state: its own read-only SQLite connection.
pub(super) struct Session {
    /// The `DECLARE`d cursors, by name.
    cursors: Mutex<HashMap<String, Cursor>>,
    /// What all sessions share (the configuration, the tables, the latest epoch).
    pub(super) shared: Arc<Shared>,
    /// The SQLite handle (`None` until it could be opened).
    conn: Arc<Mutex<Option<Db>>>,
    /// Interrupts the statement running on `conn`.
    interrupt: Mutex<Option<Arc<rusqlite::InterruptHandle>>>,
    /// The result a Describe of a portal computed, for its Execute.
    pub(super) described: Mutex<Option<(String, String, QueryResponse)>>,
    /// The parser of the extended protocol (the statement text as it is).
    pub(super) parser: Arc<NoopQueryParser>,
}

/// A statement's outcome: the connection's error (the client is gone), or the response or the
/// statement's error.
pub(super) type Sent = PgWireResult<Result<Response, SqlError>>;

impl Session {
    /// A session with its own connection to the mirror.
    pub(super) fn new(shared: Arc<Shared>) -> Session {
        // Opened now, so that a statement timeout or a cancel can interrupt even the first one.
        let db = open(&shared).ok();
        let interrupt = db.as_ref().map(|d| Arc::new(d.get_interrupt_handle()));
        let conn = Arc::new(Mutex::new(db));
        if let Ok(mut sessions) = shared.sessions.lock() {
            sessions.retain(|s| s.strong_count() > 0);
            sessions.push(Arc::downgrade(&conn));
        }
        Session {
            shared,
            conn,
            interrupt: Mutex::new(interrupt),
            described: Mutex::new(None),
            cursors: Mutex::new(HashMap::new()),
            parser: Arc::new(NoopQueryParser::new()),
        }
    }

    /// The names of the algorithm tables.
    pub(super) fn table_names(&self) -> Vec<String> {
        self.shared.tables.lock().map(|t| t.iter().map(|t| t.name.clone()).collect()).unwrap_or_default()
    }

    /// Runs `f` on the connection on a blocking thread, within the statement timeout (none for
    /// subscriptions); a cancel (the future dropped) interrupts it.
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        timeout: Option<Duration>,
        f: impl FnOnce(&Db, &Shared) -> Result<T, SqlError> + Send + 'static,
    ) -> Result<T, SqlError> {
        let (conn, shared) = (self.conn.clone(), self.shared.clone());
        let handle = self.interrupt.lock().ok().and_then(|h| h.clone());
        let mut guard = InterruptOnDrop(handle);
        let interrupt = Arc::new(Mutex::new(None));
        let slot = interrupt.clone();
        let task = tokio::task::spawn_blocking(move || {
            let mut g = conn.lock().unwrap_or_else(|p| p.into_inner());
            if g.is_none() {
                *g = Some(open(&shared).map_err(|e| sqlite_error(e, &[]))?);
                if let Ok(mut s) = slot.lock() {
                    *s = Some(Arc::new(g.as_ref().map(|c| c.get_interrupt_handle()).expect("just opened")));
                }
            }
            let c = g.as_ref().expect("opened above");
            f(c, &shared)
        });
        let result = match timeout {
            Some(t) => match tokio::time::timeout(t, task).await {
                Ok(r) => r,
                Err(_) => {
                    // `guard` interrupts the statement as it drops.
                    return Err(SqlError::new(
                        state::CANCELED,
                        format!(
                            "canceling statement due to statement timeout ({} ms, --serve-statement-timeout-ms)",
                            t.as_millis()
                        ),
                    ));
                }
            },
            None => task.await,
        };
        guard.0 = None;
        if let Some(h) = interrupt.lock().ok().and_then(|mut s| s.take()) {
            if let Ok(mut mine) = self.interrupt.lock() {
                *mine = Some(h);
            }
        }
        result.map_err(|e| SqlError::new(state::INTERNAL, format!("the statement failed: {e}")))?
    }

    /// Runs `f` here, on the server's thread, if it completes within [`INLINE_BUDGET`]; `None`
    /// when it did not (nothing was sent; run it again on a blocking thread).
    fn inline<T>(&self, f: impl FnOnce(&Db, &Shared) -> Result<T, SqlError>) -> Option<Result<T, SqlError>> {
        let guard = self.conn.try_lock().ok()?;
        let c = guard.as_ref()?;
        c.inline_stopped.store(false, Ordering::Relaxed);
        c.inline_deadline.store(clock() + INLINE_BUDGET.as_nanos() as u64, Ordering::Relaxed);
        let r = f(c, &self.shared);
        c.inline_deadline.store(0, Ordering::Relaxed);
        if c.inline_stopped.swap(false, Ordering::Relaxed) {
            None
        } else {
            Some(r)
        }
    }

    /// Runs a query (inline while it is quick, else on a blocking thread).
    pub(super) async fn query(&self, sql_text: String, params: Vec<Value>) -> Result<ResultSet, SqlError> {
        if let Some(r) = self.inline(|c, shared| run_query(c, shared, &sql_text, &params)) {
            return r;
        }
        let timeout = self.shared.config.statement_timeout;
        self.blocking(Some(timeout), move |conn, shared| run_query(conn, shared, &sql_text, &params)).await
    }

    /// What a statement's result looks like without running it (Describe of a statement).
    pub(super) async fn describe(&self, sql_text: String) -> Result<(usize, Vec<(String, Type)>), SqlError> {
        match sql::classify(&sql_text)? {
            Kind::Show(name) => Ok((0, vec![(name.to_ascii_lowercase(), Type::TEXT)])),
            Kind::Fetch(f) if !f.skip => {
                let cursors = self.cursors.lock().unwrap_or_else(|p| p.into_inner());
                let c = cursors.get(&f.name).ok_or_else(|| no_cursor(&f.name))?;
                Ok((0, c.columns.clone()))
            }
            Kind::Query => {
                let timeout = self.shared.config.statement_timeout;
                self.blocking(Some(timeout), move |conn, shared| {
                    let tables: Vec<String> =
                        shared.tables.lock().map(|t| t.iter().map(|t| t.name.clone()).collect()).unwrap_or_default();
                    let rw = sql::rewrite(&sql_text, &tables)?;
                    let stmt = conn.prepare_cached(&rw.sql).map_err(|e| sqlite_error(e, &tables))?;
                    let cols = stmt
                        .columns()
                        .map(|c| (c.name().to_string(), pg_type(c.decl_type()).unwrap_or(Type::TEXT)))
                        .collect();
                    Ok((stmt.parameter_count() - rw.literals.len(), cols))
                })
                .await
            }
            _ => Ok((0, Vec::new())),
        }
    }

    /// Runs one statement; `client` is given for the simple protocol (COPY and SUBSCRIBE send
    /// their rows themselves).
    pub(super) async fn execute<C>(
        &self,
        client: Option<&mut C>,
        sql_text: &str,
        params: Vec<Value>,
        format: &Format,
    ) -> Sent
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        self.shared.statements.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let kind = match sql::classify(sql_text) {
            Ok(k) => k,
            Err(e) => return Ok(Err(e)),
        };
        let simple_only = || {
            SqlError::new(
                state::FEATURE_NOT_SUPPORTED,
                "COPY ... TO STDOUT cannot be described in advance: send Parse, Bind and Execute (no Describe of the portal)",
            )
        };
        Ok(match kind {
            Kind::Ignored(verb) => Ok(Response::Execution(Tag::new(&verb))),
            Kind::Show(name) => self.show(&name, format).await,
            Kind::Begin => self.begin().await,
            Kind::Commit => self.end("COMMIT").await,
            Kind::Rollback => self.end("ROLLBACK").await,
            Kind::Write(verb) => Err(sql::read_only(&verb)),
            Kind::Declare(d) => self.declare(d, params).await.map(|()| Response::Execution(Tag::new("DECLARE CURSOR"))),
            Kind::Fetch(f) => self.fetch(f, format),
            Kind::Close(name) => self.close(name),
            Kind::Copy(inner) => match client {
                None => Err(simple_only()),
                Some(client) => return self.copy_out(client, inner, params).await,
            },
            Kind::Subscribe(s) => match client {
                None => Err(simple_only()),
                Some(client) => return self.subscribe(client, s).await,
            },
            Kind::Query => match self.query(sql_text.to_string(), params).await {
                Ok(rs) => {
                    encode(&rs, format).map(Response::Query).map_err(|e| SqlError::new(state::INTERNAL, e.to_string()))
                }
                Err(e) => Err(e),
            },
        })
    }

    /// `SHOW name`: a setting, or `ripples_epoch` (the latest completed epoch).
    async fn show(&self, name: &str, format: &Format) -> Result<Response, SqlError> {
        let n = name.to_ascii_lowercase();
        let value = if n == "ripples_epoch" {
            let (e, _) = self
                .blocking(Some(self.shared.config.statement_timeout), |c, shared| {
                    c.fresh(*shared.latest.borrow())?;
                    epochs(c).map_err(|e| sqlite_error(e, &[]))
                })
                .await?;
            Some(e.map_or(String::new(), |e| e.to_string()))
        } else {
            setting(&self.shared, &n)
        };
        match value {
            Some(v) => encode(&one_text_row(&n, v), format)
                .map(Response::Query)
                .map_err(|e| SqlError::new(state::INTERNAL, e.to_string())),
            None => {
                Err(SqlError::new(state::UNDEFINED_OBJECT, format!("unrecognized configuration parameter \"{n}\"")))
            }
        }
    }

    /// `BEGIN`: a transaction of the client's, pinned at the latest completed epoch.
    async fn begin(&self) -> Result<Response, SqlError> {
        self.blocking(None, |c, _| {
            if !c.in_transaction() {
                c.release();
                c.execute_batch("BEGIN").map_err(|e| sqlite_error(e, &[]))?;
                // Pin the snapshot now: every statement of the transaction reads this epoch.
                c.pin()?;
            }
            Ok(Response::TransactionStart(Tag::new("BEGIN")))
        })
        .await
    }

    /// `COMMIT` or `ROLLBACK` (`tag`): ends the client's transaction and its cursors (but those
    /// `WITH HOLD`).
    async fn end(&self, tag: &'static str) -> Result<Response, SqlError> {
        if let Ok(mut cursors) = self.cursors.lock() {
            cursors.retain(|_, c| c.hold);
        }
        self.blocking(None, move |c, _| {
            if c.in_transaction() {
                c.execute_batch("COMMIT").map_err(|e| sqlite_error(e, &[]))?;
            }
            Ok(Response::TransactionEnd(Tag::new(tag)))
        })
        .await
    }

    /// `DECLARE name CURSOR FOR query`: runs the query (at the transaction's epoch) and keeps its rows.
    async fn declare(&self, d: Declare, params: Vec<Value>) -> Result<(), SqlError> {
        let timeout = self.shared.config.statement_timeout;
        let (query, hold) = (d.query.clone(), d.hold);
        let rs = self
            .blocking(Some(timeout), move |conn, shared| {
                if !conn.in_transaction() && !hold {
                    return Err(SqlError::new(
                        "25P01",
                        "DECLARE CURSOR can only be used in transaction blocks: BEGIN first, or DECLARE ... CURSOR WITH HOLD FOR ...",
                    ));
                }
                run_query(conn, shared, &query, &params)
            })
            .await?;
        let mut cursors = self.cursors.lock().unwrap_or_else(|p| p.into_inner());
        if cursors.contains_key(&d.name) {
            return Err(SqlError::new("42P03", format!("cursor \"{}\" already exists: CLOSE it first", d.name)));
        }
        cursors.insert(d.name, Cursor { columns: rs.columns, rows: rs.rows.into(), hold: d.hold });
        Ok(())
    }

    /// `FETCH n FROM name` (`MOVE`: the rows skipped).
    fn fetch(&self, f: Fetch, format: &Format) -> Result<Response, SqlError> {
        let mut cursors = self.cursors.lock().unwrap_or_else(|p| p.into_inner());
        let c = cursors.get_mut(&f.name).ok_or_else(|| no_cursor(&f.name))?;
        let n = f.count.map_or(c.rows.len(), |n| (n as usize).min(c.rows.len()));
        let rows: Vec<Vec<Value>> = c.rows.drain(..n).collect();
        if f.skip {
            return Ok(Response::Execution(Tag::new("MOVE").with_rows(n)));
        }
        let rs = ResultSet { columns: c.columns.clone(), rows };
        let mut q = encode(&rs, format).map_err(|e| SqlError::new(state::INTERNAL, e.to_string()))?;
        q.set_command_tag("FETCH");
        Ok(Response::Query(q))
    }

    /// `CLOSE name` (`None`: `CLOSE ALL`).
    fn close(&self, name: Option<String>) -> Result<Response, SqlError> {
        let mut cursors = self.cursors.lock().unwrap_or_else(|p| p.into_inner());
        match name {
            None => {
                cursors.clear();
                Ok(Response::Execution(Tag::new("CLOSE CURSOR ALL")))
            }
            Some(n) => match cursors.remove(&n) {
                Some(_) => Ok(Response::Execution(Tag::new("CLOSE CURSOR"))),
                None => Err(no_cursor(&n)),
            },
        }
    }

    /// The columns of a cursor, for a Describe of the portal it is (psycopg's named cursors ask).
    pub(super) fn cursor_fields(&self, name: &str, format: &Format) -> Option<Vec<FieldInfo>> {
        let cursors = self.cursors.lock().ok()?;
        let c = cursors.get(name)?;
        Some(fields(&ResultSet { columns: c.columns.clone(), rows: Vec::new() }, format).to_vec())
    }
}
