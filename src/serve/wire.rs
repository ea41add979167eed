//! The PostgreSQL wire protocol (through `pgwire`): authentication, the simple and extended
//! query protocols, `COPY ... TO STDOUT`, subscriptions, cancel and limits.

use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::{stream, Sink, SinkExt};
use pgwire::api::auth::noop::NoopStartupHandler;
use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramAuth};
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::{AuthSource, DefaultServerParameterProvider, LoginInfo, Password, StartupHandler};
use pgwire::api::cancel::DefaultCancelHandler;
use pgwire::api::portal::{Format, Portal};
use pgwire::api::query::{send_describe_response, ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{
    DataRowEncoder, DescribePortalResponse, DescribeResponse, DescribeStatementResponse, FieldInfo, QueryResponse,
    Response, Tag,
};
use pgwire::api::stmt::{NoopQueryParser, StoredStatement};
use pgwire::api::store::PortalStore;
use pgwire::api::{ClientInfo, ClientPortalStore, ConnectionManager, PgWireServerHandlers, Type};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::copy::{CopyData, CopyDone, CopyOutResponse};
use pgwire::messages::extendedquery::{Describe, TARGET_TYPE_BYTE_PORTAL};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use rusqlite::types::Value;
use rusqlite::Connection;

use super::mirror;
use super::sql::{self, state, Declare, Fetch, Kind, SqlError, Subscribe};
use super::{Auth, Shared};
use crate::types::format::{format_f64, ValueFormat};
use crate::types::Time;

/// The server version clients are told (the protocol and catalog level it behaves like).
const SERVER_VERSION: &str = "16.0";

/// A TLS acceptor from PEM files.
pub(super) fn tls_acceptor(cert: &Path, key: &Path) -> Result<pgwire::tokio::TlsAcceptor, String> {
    let mut config = crate::live::tls_server_config(cert, key).map_err(|e| format!("--serve: {e}"))?;
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(pgwire::tokio::TlsAcceptor::from(Arc::new(config)))
}

/// Accepts clients until the runtime stops.
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    tls: Option<pgwire::tokio::TlsAcceptor>,
    shared: Arc<Shared>,
) {
    let manager = Arc::new(ConnectionManager::new());
    let active = Arc::new(AtomicUsize::new(0));
    let cert_pem = shared.config.tls.as_ref().and_then(|(cert, _)| std::fs::read(cert).ok());
    loop {
        let socket = match listener.accept().await {
            Ok((socket, _)) => socket,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let n = active.fetch_add(1, Ordering::AcqRel) + 1;
        let max = shared.config.max_connections;
        let handlers = Handlers {
            session: Arc::new(Session::new(shared.clone())),
            startup: Arc::new(Startup {
                scram: match &shared.config.auth {
                    Auth::Password(p) => Some(scram(p, cert_pem.as_deref(), manager.clone())),
                    Auth::Trust => None,
                },
                trust: Trust { manager: manager.clone() },
                over_limit: (n > max).then_some(max),
            }),
            cancel: Arc::new(DefaultCancelHandler::new(manager.clone())),
        };
        let (tls, active) = (tls.clone(), active.clone());
        tokio::spawn(async move {
            let _ = pgwire::tokio::process_socket(socket, tls, handlers).await;
            active.fetch_sub(1, Ordering::AcqRel);
        });
    }
}

fn parameters() -> DefaultServerParameterProvider {
    let mut p = DefaultServerParameterProvider::default();
    p.server_version = SERVER_VERSION.to_string();
    p.default_transaction_read_only = true;
    p
}

const SCRAM_ITERATIONS: usize = 4096;

fn scram(
    password: &str,
    cert_pem: Option<&[u8]>,
    manager: Arc<ConnectionManager>,
) -> SASLAuthStartupHandler<DefaultServerParameterProvider> {
    let mut auth = ScramAuth::new(Arc::new(PasswordSource(password.to_string())));
    auth.set_iterations(SCRAM_ITERATIONS);
    if let Some(pem) = cert_pem {
        // Channel binding (SCRAM-SHA-256-PLUS) when the certificate allows it.
        let _ = auth.configure_certificate(pem);
    }
    SASLAuthStartupHandler::new(Arc::new(parameters())).with_scram(auth).with_connection_manager(manager)
}

/// The password of `--serve-password-file`, for any user name.
struct PasswordSource(String);

impl Debug for PasswordSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordSource(..)")
    }
}

#[async_trait]
impl AuthSource for PasswordSource {
    async fn get_password(&self, _login: &LoginInfo) -> PgWireResult<Password> {
        let salt: [u8; 16] = rand::random();
        Ok(Password::new(Some(salt.to_vec()), gen_salted_password(&self.0, &salt, SCRAM_ITERATIONS)))
    }
}

struct Trust {
    manager: Arc<ConnectionManager>,
}

#[async_trait]
impl NoopStartupHandler for Trust {
    fn connection_manager(&self) -> Option<Arc<ConnectionManager>> {
        Some(self.manager.clone())
    }
}

struct Startup {
    scram: Option<SASLAuthStartupHandler<DefaultServerParameterProvider>>,
    trust: Trust,
    over_limit: Option<usize>,
}

#[async_trait]
impl StartupHandler for Startup {
    async fn on_startup<C>(&self, client: &mut C, message: PgWireFrontendMessage) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if let (Some(max), PgWireFrontendMessage::Startup(_)) = (self.over_limit, &message) {
            return Err(PgWireError::UserError(Box::new(ErrorInfo::new(
                "FATAL".into(),
                state::TOO_MANY_CONNECTIONS.into(),
                format!("too many connections: the server takes {max} (--serve-max-connections); close one and retry"),
            ))));
        }
        match &self.scram {
            Some(h) => h.on_startup(client, message).await,
            None => self.trust.on_startup(client, message).await,
        }
    }
}

struct Handlers {
    session: Arc<Session>,
    startup: Arc<Startup>,
    cancel: Arc<DefaultCancelHandler>,
}

impl PgWireServerHandlers for Handlers {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        self.session.clone()
    }
    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        self.session.clone()
    }
    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        self.startup.clone()
    }
    fn cancel_handler(&self) -> Arc<impl pgwire::api::cancel::CancelHandler> {
        self.cancel.clone()
    }
}

fn user_error(e: SqlError) -> PgWireError {
    PgWireError::UserError(Box::new(error_info(e)))
}

fn error_info(e: SqlError) -> ErrorInfo {
    ErrorInfo::new("ERROR".into(), e.code.into(), e.message)
}

/// A result set, read in one statement.
struct ResultSet {
    columns: Vec<(String, Type)>,
    rows: Vec<Vec<Value>>,
}

/// A `DECLARE`d cursor: its rows (read at one epoch when declared) not fetched yet.
struct Cursor {
    columns: Vec<(String, Type)>,
    rows: VecDeque<Vec<Value>>,
    /// `WITH HOLD`: it outlives its transaction.
    hold: bool,
}

/// A connection's state: its own read-only SQLite connection.
struct Session {
    /// The `DECLARE`d cursors, by name.
    cursors: Mutex<HashMap<String, Cursor>>,
    shared: Arc<Shared>,
    conn: Arc<Mutex<Option<Db>>>,
    interrupt: Mutex<Option<Arc<rusqlite::InterruptHandle>>>,
    /// The result a Describe of a portal computed, for its Execute.
    described: Mutex<Option<(String, String, QueryResponse)>>,
    parser: Arc<NoopQueryParser>,
}

/// A session's SQLite connection and the epoch its current statement reads (`ripples_epoch()`).
///
/// Outside a client's transaction the connection keeps a read transaction of its own open
/// across statements (the *snapshot*): a statement reads the latest completed epoch, and the
/// snapshot is renewed before a statement once a newer epoch was committed (and by the mirror
/// after each commit, for an idle session, so that no old snapshot holds the mirror's log).
/// Statements between two commits thus share one read transaction: no file locks taken and
/// released, and a page cache kept, per statement.
pub(super) struct Db {
    conn: Connection,
    epoch: Arc<AtomicI64>,
    /// The epoch the open transaction (the snapshot or the client's) reads; -1: none yet.
    pinned: AtomicI64,
    /// The open read transaction is the snapshot (not a client's `BEGIN`).
    snapshot: AtomicBool,
    /// A statement run inline (on the server's thread) stops at this time (nanoseconds since
    /// [`clock`]'s start; 0: no limit) ...
    inline_deadline: Arc<AtomicU64>,
    /// ... and this says it did (then it runs again on a blocking thread).
    inline_stopped: Arc<AtomicBool>,
}

/// How long a statement may run inline on a server thread before it moves to a blocking thread
/// (where a cancel or the statement timeout can interrupt it). A point lookup takes tens of
/// microseconds; handing every statement to another thread cost two context switches each.
const INLINE_BUDGET: Duration = Duration::from_millis(1);

/// Nanoseconds since the first call (a monotonic clock for the inline deadline).
fn clock() -> u64 {
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
    fn pin(&self) -> Result<(), SqlError> {
        let (latest, _) = epochs(&self.conn).map_err(|e| sqlite_error(e, &[]))?;
        let e = latest.map_or(-1, |e| e as i64);
        self.pinned.store(e, Ordering::Release);
        self.epoch.store(e, Ordering::Release);
        Ok(())
    }

    /// Whether the client's own transaction (`BEGIN`) is open.
    fn in_transaction(&self) -> bool {
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
    fn fresh(&self, latest: Option<Time>) -> Result<(), SqlError> {
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
pub(super) fn release_idle(db: &Mutex<Option<Db>>) {
    if let Ok(guard) = db.try_lock() {
        if let Some(d) = guard.as_ref() {
            d.release();
        }
    }
}

/// Interrupts the connection's running statement when dropped while armed (a cancelled or
/// timed-out statement).
struct InterruptOnDrop(Option<Arc<rusqlite::InterruptHandle>>);

impl Drop for InterruptOnDrop {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            h.interrupt();
        }
    }
}

/// Named configuration values for `SHOW` and `current_setting()`.
fn setting(shared: &Shared, name: &str) -> Option<String> {
    let c = &shared.config;
    Some(match name.to_ascii_lowercase().as_str() {
        "server_version" => SERVER_VERSION.into(),
        "server_version_num" => "160000".into(),
        "server_encoding" | "client_encoding" => "UTF8".into(),
        "transaction_isolation" | "default_transaction_isolation" | "transaction isolation level" => {
            "repeatable read".into()
        }
        "transaction_read_only" | "default_transaction_read_only" => "on".into(),
        "standard_conforming_strings" | "integer_datetimes" => "on".into(),
        "is_superuser" => "off".into(),
        "datestyle" => "ISO, MDY".into(),
        "timezone" | "time zone" => "UTC".into(),
        "intervalstyle" => "postgres".into(),
        "search_path" => "public".into(),
        "application_name" => String::new(),
        "max_identifier_length" => "63".into(),
        "extra_float_digits" => "3".into(),
        "lc_messages" | "lc_collate" | "lc_ctype" => "C".into(),
        "statement_timeout" => format!("{}ms", c.statement_timeout.as_millis()),
        "max_connections" => c.max_connections.to_string(),
        "ripples_retain_epochs" => c.retain_epochs.to_string(),
        "ripples_max_rows" => c.max_rows.to_string(),
        _ => return None,
    })
}

fn open(shared: &Arc<Shared>) -> Result<Db, rusqlite::Error> {
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
    use rusqlite::functions::FunctionFlags;
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

/// The PostgreSQL error for a SQLite error.
fn sqlite_error(e: rusqlite::Error, tables: &[String]) -> SqlError {
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
                "column \"{name}\" does not exist; the algorithm tables have vertex and value, epochs has epoch, updates, latency_ms, output_changes, completed_at, changes has epoch, algorithm, vertex, value, diff"
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

fn pg_type(decl: Option<&str>) -> Option<Type> {
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

fn value_type(v: &Value) -> Option<Type> {
    match v {
        Value::Null => None,
        Value::Integer(_) => Some(Type::INT8),
        Value::Real(_) => Some(Type::FLOAT8),
        Value::Text(_) => Some(Type::TEXT),
        Value::Blob(_) => Some(Type::BYTEA),
    }
}

/// The epochs the mirror holds: (latest, oldest retained).
fn epochs(conn: &Connection) -> Result<(Option<u64>, u64), rusqlite::Error> {
    conn.query_row("SELECT epoch, oldest FROM ripples_state", [], |r| {
        Ok((r.get::<_, Option<i64>>(0)?.map(|e| e as u64), r.get::<_, i64>(1)? as u64))
    })
}

fn check_as_of(conn: &Connection, wanted: &[u64], tables: &[String]) -> Result<(), SqlError> {
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
fn run_query(conn: &Db, shared: &Shared, sql_text: &str, params: &[Value]) -> Result<ResultSet, SqlError> {
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

fn encode(rs: &ResultSet, format: &Format) -> PgWireResult<QueryResponse> {
    let fields = fields(rs, format);
    let mut out = Vec::with_capacity(rs.rows.len());
    let mut enc = DataRowEncoder::new(fields.clone());
    for row in &rs.rows {
        for (v, (_, ty)) in row.iter().zip(&rs.columns) {
            match (v, ty) {
                (Value::Null, _) => enc.encode_field(&None::<i64>)?,
                (Value::Integer(i), &Type::INT8) => enc.encode_field(i)?,
                (Value::Real(f), &Type::INT8) => enc.encode_field(&(*f as i64))?,
                (Value::Real(f), &Type::FLOAT8) => enc.encode_field(f)?,
                (Value::Integer(i), &Type::FLOAT8) => enc.encode_field(&(*i as f64))?,
                (Value::Blob(b), &Type::BYTEA) => enc.encode_field(b)?,
                (other, _) => enc.encode_field(&text(other))?,
            }
        }
        out.push(Ok(enc.take_row()));
    }
    Ok(QueryResponse::new(fields, stream::iter(out)))
}

fn fields(rs: &ResultSet, format: &Format) -> Arc<Vec<FieldInfo>> {
    Arc::new(
        rs.columns
            .iter()
            .enumerate()
            .map(|(i, (name, ty))| FieldInfo::new(name.clone(), None, None, ty.clone(), format.format_for(i)))
            .collect(),
    )
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => f.to_string(),
        Value::Text(t) => t.clone(),
        Value::Blob(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

/// One value in COPY's text format.
fn copy_text(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("\\N"),
        Value::Text(t) => {
            for c in t.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\t' => out.push_str("\\t"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    c => out.push(c),
                }
            }
        }
        other => out.push_str(&text(other)),
    }
}

/// A subscription row's value, written as the change log writes it.
fn change_value(v: &Value, format: ValueFormat) -> String {
    match (v, format) {
        (Value::Real(f), ValueFormat::Float) => format_f64(*f),
        (Value::Integer(i), ValueFormat::Float) => format_f64(*i as f64),
        (other, _) => text(other),
    }
}

fn no_cursor(name: &str) -> SqlError {
    SqlError::new("34000", format!("cursor \"{name}\" does not exist: DECLARE it (in this transaction) first"))
}

fn one_text_row(name: &str, value: String) -> ResultSet {
    ResultSet { columns: vec![(name.to_string(), Type::TEXT)], rows: vec![vec![Value::Text(value)]] }
}

/// Decodes a portal's parameters.
fn parameters_of(portal: &Portal<String>) -> Result<Vec<Value>, SqlError> {
    let bad = |i: usize, what: &str| SqlError::new("22P02", format!("parameter ${}: {what}", i + 1));
    let mut out = Vec::with_capacity(portal.parameter_len());
    for i in 0..portal.parameter_len() {
        let ty = portal.statement.parameter_types.get(i).cloned().flatten().unwrap_or(Type::UNKNOWN);
        let Some(raw) = portal.parameters.get(i).cloned().flatten() else {
            out.push(Value::Null);
            continue;
        };
        let v = if portal.parameter_format.is_binary(i) {
            let int = |n: usize| -> Result<i64, SqlError> {
                if raw.len() != n {
                    return Err(bad(i, "a binary integer of the wrong size"));
                }
                Ok(raw.iter().fold(0i64, |acc, &b| (acc << 8) | b as i64) << (64 - 8 * n) >> (64 - 8 * n))
            };
            match ty {
                Type::INT2 => Value::Integer(int(2)?),
                Type::INT4 | Type::OID => Value::Integer(int(4)?),
                Type::INT8 => Value::Integer(int(8)?),
                Type::BOOL => Value::Integer(raw.first().map_or(0, |&b| (b != 0) as i64)),
                Type::FLOAT4 => Value::Real(f32::from_bits(int(4)? as u32) as f64),
                Type::FLOAT8 => Value::Real(f64::from_bits(int(8)? as u64)),
                Type::BYTEA => Value::Blob(raw.to_vec()),
                _ => Value::Text(String::from_utf8(raw.to_vec()).map_err(|_| bad(i, "not UTF-8 text"))?),
            }
        } else {
            let s = std::str::from_utf8(&raw).map_err(|_| bad(i, "not UTF-8 text"))?;
            match ty {
                Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => {
                    Value::Integer(s.trim().parse().map_err(|_| bad(i, &format!("\"{s}\" is not an integer")))?)
                }
                Type::FLOAT4 | Type::FLOAT8 | Type::NUMERIC => match s.trim().parse::<i64>() {
                    Ok(n) => Value::Integer(n),
                    Err(_) => Value::Real(s.trim().parse().map_err(|_| bad(i, &format!("\"{s}\" is not a number")))?),
                },
                Type::BOOL => Value::Integer(matches!(s, "t" | "true" | "1" | "on" | "yes") as i64),
                _ => Value::Text(s.to_string()),
            }
        };
        out.push(v);
    }
    Ok(out)
}

type Sent = PgWireResult<Result<Response, SqlError>>;

impl Session {
    fn new(shared: Arc<Shared>) -> Session {
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

    fn table_names(&self) -> Vec<String> {
        self.shared.tables.lock().map(|t| t.iter().map(|t| t.name.clone()).collect()).unwrap_or_default()
    }

    /// Runs `f` on the connection on a blocking thread, within the statement timeout (none for
    /// subscriptions); a cancel (the future dropped) interrupts it.
    async fn blocking<T: Send + 'static>(
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

    async fn query(&self, sql_text: String, params: Vec<Value>) -> Result<ResultSet, SqlError> {
        if let Some(r) = self.inline(|c, shared| run_query(c, shared, &sql_text, &params)) {
            return r;
        }
        let timeout = self.shared.config.statement_timeout;
        self.blocking(Some(timeout), move |conn, shared| run_query(conn, shared, &sql_text, &params)).await
    }

    /// What a statement's result looks like without running it (Describe of a statement).
    async fn describe(&self, sql_text: String) -> Result<(usize, Vec<(String, Type)>), SqlError> {
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
    async fn execute<C>(&self, client: Option<&mut C>, sql_text: &str, params: Vec<Value>, format: &Format) -> Sent
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
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
            Kind::Show(name) => {
                let n = name.to_ascii_lowercase();
                let value = if n == "ripples_epoch" {
                    match self
                        .blocking(Some(self.shared.config.statement_timeout), |c, shared| {
                            c.fresh(*shared.latest.borrow())?;
                            epochs(c).map_err(|e| sqlite_error(e, &[]))
                        })
                        .await
                    {
                        Ok((e, _)) => Some(e.map_or(String::new(), |e| e.to_string())),
                        Err(e) => return Ok(Err(e)),
                    }
                } else {
                    setting(&self.shared, &n)
                };
                match value {
                    Some(v) => encode(&one_text_row(&n, v), format).map(Response::Query),
                    None => {
                        return Ok(Err(SqlError::new(
                            state::UNDEFINED_OBJECT,
                            format!("unrecognized configuration parameter \"{n}\""),
                        )))
                    }
                }
                .map_err(|e| SqlError::new(state::INTERNAL, e.to_string()))
            }
            Kind::Begin => {
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
            Kind::Commit | Kind::Rollback => {
                let tag = if kind == Kind::Commit { "COMMIT" } else { "ROLLBACK" };
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
            Kind::Write(verb) => Err(sql::read_only(&verb)),
            Kind::Declare(d) => self.declare(d, params).await.map(|()| Response::Execution(Tag::new("DECLARE CURSOR"))),
            Kind::Fetch(f) => self.fetch(f, format),
            Kind::Close(name) => {
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
            Kind::Copy(inner) => match client {
                None => Err(simple_only()),
                Some(client) => match self.query(inner, params).await {
                    Err(e) => Err(e),
                    Ok(rs) => {
                        let mut buf = String::new();
                        for row in &rs.rows {
                            for (i, v) in row.iter().enumerate() {
                                if i > 0 {
                                    buf.push('\t');
                                }
                                copy_text(v, &mut buf);
                            }
                            buf.push('\n');
                        }
                        let n = rs.columns.len() as i16;
                        client
                            .send(PgWireBackendMessage::CopyOutResponse(CopyOutResponse::new(
                                0,
                                n,
                                vec![0; n as usize],
                            )))
                            .await?;
                        send_chunks(client, buf).await?;
                        client.send(PgWireBackendMessage::CopyDone(CopyDone::new())).await?;
                        Ok(Response::Execution(Tag::new("COPY").with_rows(rs.rows.len())))
                    }
                },
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

    /// The columns of a cursor, for a Describe of the portal it is (psycopg's named cursors ask).
    fn cursor_fields(&self, name: &str, format: &Format) -> Option<Vec<FieldInfo>> {
        let cursors = self.cursors.lock().ok()?;
        let c = cursors.get(name)?;
        Some(fields(&ResultSet { columns: c.columns.clone(), rows: Vec::new() }, format).to_vec())
    }

    /// `COPY (SUBSCRIBE ...) TO STDOUT`: the snapshot, then every epoch's changes as it completes.
    async fn subscribe<C>(&self, client: &mut C, s: Subscribe) -> Sent
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let table = self.shared.tables.lock().ok().and_then(|t| t.iter().find(|t| t.name == s.table).cloned());
        let Some(table) = table else {
            return Ok(Err(SqlError::new(
                state::UNDEFINED_TABLE,
                format!(
                    "SUBSCRIBE {}: no such algorithm table; the tables are {}",
                    s.table,
                    self.table_names().join(", ")
                ),
            )));
        };
        let mut latest = self.shared.latest.subscribe();
        // Wait for the first epoch (or the AS OF one) to complete.
        let want = s.as_of.unwrap_or(0);
        loop {
            if latest.borrow_and_update().is_some_and(|l| l >= want) {
                break;
            }
            if latest.changed().await.is_err() {
                return Ok(Err(SqlError::new(state::LAGGING, "the run ended before the epoch completed")));
            }
        }
        let (name, format, snapshot, as_of) = (table.name.clone(), table.format, s.snapshot, s.as_of);
        let start = self
            .blocking(None, move |c, _| {
                let names = [name.clone()];
                let err = |e| sqlite_error(e, &names);
                if c.in_transaction() {
                    // The transaction's snapshot would hold the subscription at its epoch.
                    return Err(SqlError::new(
                        "25001",
                        format!("SUBSCRIBE {name} inside a transaction would see only the transaction's epoch: run it outside one (autocommit; psycopg: connect(..., autocommit=True))"),
                    ));
                }
                c.release();
                c.execute_batch("BEGIN").map_err(err)?;
                let result = (|| {
                    let (latest, oldest) = epochs(c).map_err(err)?;
                    let at = as_of.or(latest).unwrap_or(0);
                    check_as_of(c, &[at], &names)?;
                    let _ = oldest;
                    let mut buf = String::new();
                    if snapshot {
                        let mut stmt = c
                            .prepare(&format!("SELECT vertex, value FROM {} ORDER BY vertex", mirror::as_of_sql(&name, "?1")))
                            .map_err(err)?;
                        let mut rows = stmt.query([at as i64]).map_err(err)?;
                        while let Some(r) = rows.next().map_err(err)? {
                            let v: i64 = r.get(0).map_err(err)?;
                            let value: Value = r.get(1).map_err(err)?;
                            buf.push_str(&format!("{at}\t1\t{v}\t{}\n", change_value(&value, format)));
                        }
                    }
                    Ok((at, buf))
                })();
                let _ = c.execute_batch("COMMIT");
                result
            })
            .await;
        let (mut last, snapshot_rows) = match start {
            Ok(x) => x,
            Err(e) => return Ok(Err(e)),
        };
        client.send(PgWireBackendMessage::CopyOutResponse(CopyOutResponse::new(0, 4, vec![0; 4]))).await?;
        let mut rows = snapshot_rows.lines().count();
        if s.up_to.is_none_or(|u| last < u) {
            send_chunks(client, snapshot_rows).await?;
            if s.progress {
                send_chunks(client, format!("{last}\t0\t\\N\t\\N\n")).await?;
            }
        }
        loop {
            if s.up_to.is_some_and(|u| last + 1 >= u) {
                break;
            }
            let now = loop {
                if let Some(l) = *latest.borrow_and_update() {
                    if l > last {
                        break Some(l);
                    }
                }
                if latest.changed().await.is_err() {
                    break None;
                }
            };
            let Some(now) = now else { break };
            let hi = s.up_to.map_or(now, |u| now.min(u - 1));
            let (name, from, progress) = (table.name.clone(), last, s.progress);
            let retain = self.shared.config.retain_epochs;
            let chunk = self
                .blocking(None, move |c, _| {
                    let names = [name.clone()];
                    let err = |e| sqlite_error(e, &names);
                    c.release();
                    c.execute_batch("BEGIN").map_err(err)?;
                    let result = (|| {
                        let (_, oldest) = epochs(c).map_err(err)?;
                        if from + 1 < oldest {
                            return Err(SqlError::new(
                                state::LAGGING,
                                format!(
                                    "SUBSCRIBE {name} fell behind: the changes after epoch {from} are no longer retained (the oldest retained epoch is {oldest}, --serve-retain-epochs {retain}); read faster, or resume with COPY (SUBSCRIBE {name} AS OF {oldest}) TO STDOUT"
                                ),
                            ));
                        }
                        let mut stmt = c
                            .prepare_cached(&format!(
                                "SELECT epoch, diff, vertex, value FROM {} WHERE epoch > ?1 AND epoch <= ?2 ORDER BY epoch, vertex, value, diff",
                                mirror::log_table(&name)
                            ))
                            .map_err(err)?;
                        let mut rows = stmt.query(rusqlite::params![from as i64, hi as i64]).map_err(err)?;
                        let mut buf = String::new();
                        let mut n = 0;
                        let mut epoch_done = from;
                        while let Some(r) = rows.next().map_err(err)? {
                            let e: i64 = r.get(0).map_err(err)?;
                            if progress {
                                while epoch_done + 1 < e as u64 {
                                    epoch_done += 1;
                                    buf.push_str(&format!("{epoch_done}\t0\t\\N\t\\N\n"));
                                }
                            }
                            let d: i64 = r.get(1).map_err(err)?;
                            let v: i64 = r.get(2).map_err(err)?;
                            let value: Value = r.get(3).map_err(err)?;
                            buf.push_str(&format!("{e}\t{d}\t{v}\t{}\n", change_value(&value, format)));
                            n += 1;
                        }
                        if progress {
                            while epoch_done < hi {
                                epoch_done += 1;
                                buf.push_str(&format!("{epoch_done}\t0\t\\N\t\\N\n"));
                            }
                        }
                        Ok((buf, n))
                    })();
                    let _ = c.execute_batch("COMMIT");
                    result
                })
                .await;
            match chunk {
                Ok((buf, n)) => {
                    rows += n;
                    send_chunks(client, buf).await?;
                }
                Err(e) => return Ok(Err(e)),
            }
            last = hi;
        }
        client.send(PgWireBackendMessage::CopyDone(CopyDone::new())).await?;
        Ok(Ok(Response::Execution(Tag::new("COPY").with_rows(rows))))
    }
}

/// Sends COPY text, one row per CopyData message (as PostgreSQL does; clients rely on it).
async fn send_chunks<C>(client: &mut C, text: String) -> PgWireResult<()>
where
    C: Sink<PgWireBackendMessage> + Unpin + Send,
    C::Error: Debug,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    let all = Bytes::from(text);
    let mut at = 0;
    while at < all.len() {
        let end = all[at..].iter().position(|&b| b == b'\n').map_or(all.len(), |i| at + i + 1);
        client.feed(PgWireBackendMessage::CopyData(CopyData::new(all.slice(at..end)))).await?;
        at = end;
    }
    client.flush().await?;
    Ok(())
}

#[async_trait]
impl SimpleQueryHandler for Session {
    async fn do_query<C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let mut out = Vec::new();
        for stmt in sql::split_statements(query) {
            match self.execute(Some(&mut *client), &stmt, Vec::new(), &Format::UnifiedText).await? {
                Ok(r) => out.push(r),
                Err(e) => {
                    out.push(Response::Error(Box::new(error_info(e))));
                    break;
                }
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl ExtendedQueryHandler for Session {
    type Statement = String;
    type QueryParser = NoopQueryParser;

    fn query_parser(&self) -> Arc<Self::QueryParser> {
        self.parser.clone()
    }

    async fn do_describe_statement<C>(
        &self,
        _client: &mut C,
        target: &StoredStatement<Self::Statement>,
    ) -> PgWireResult<DescribeStatementResponse>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let (n, cols) = self.describe(target.statement.clone()).await.map_err(user_error)?;
        let params = (0..n.max(target.parameter_types.len()))
            .map(|i| target.parameter_types.get(i).cloned().flatten().unwrap_or(Type::TEXT))
            .collect();
        let rs = ResultSet { columns: cols, rows: Vec::new() };
        Ok(DescribeStatementResponse::new(params, fields(&rs, &Format::UnifiedText).to_vec()))
    }

    async fn do_describe_portal<C>(
        &self,
        client: &mut C,
        portal: &Portal<Self::Statement>,
    ) -> PgWireResult<DescribePortalResponse>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let sql_text = portal.statement.statement.clone();
        match sql::classify(&sql_text).map_err(user_error)? {
            Kind::Query | Kind::Show(_) => {
                // Run it now (its result is the described one) and keep the rows for Execute.
                let params = parameters_of(portal).map_err(user_error)?;
                let resp = self.execute::<C>(None, &sql_text, params, &portal.result_column_format).await?;
                match resp.map_err(user_error)? {
                    Response::Query(q) => {
                        let fields = q.row_schema();
                        let _ = client;
                        if let Ok(mut d) = self.described.lock() {
                            *d = Some((portal.name.clone(), portal.statement.id.clone(), q));
                        }
                        Ok(DescribePortalResponse::new(fields.to_vec()))
                    }
                    _ => Ok(DescribePortalResponse::no_data()),
                }
            }
            Kind::Fetch(f) if !f.skip => match self.cursor_fields(&f.name, &portal.result_column_format) {
                Some(fields) => Ok(DescribePortalResponse::new(fields)),
                None => Err(user_error(no_cursor(&f.name))),
            },
            _ => Ok(DescribePortalResponse::no_data()),
        }
    }

    async fn on_describe<C>(&self, client: &mut C, message: Describe) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        // A `DECLARE`d cursor is a portal too: psycopg describes it by name.
        if message.target_type == TARGET_TYPE_BYTE_PORTAL {
            if let Some(name) = message.name.as_deref() {
                if client.portal_store().get_portal(name).is_none() {
                    if let Some(fields) = self.cursor_fields(name, &Format::UnifiedText) {
                        return send_describe_response(client, &DescribePortalResponse::new(fields)).await;
                    }
                }
            }
        }
        self._on_describe(client, message).await
    }

    async fn do_query<C>(
        &self,
        client: &mut C,
        portal: &Portal<Self::Statement>,
        _max_rows: usize,
    ) -> PgWireResult<Response>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let cached = self.described.lock().ok().and_then(|mut d| match d.take() {
            Some((name, id, q)) if name == portal.name && id == portal.statement.id => Some(q),
            _ => None,
        });
        if let Some(q) = cached {
            return Ok(Response::Query(q));
        }
        let params = parameters_of(portal).map_err(user_error)?;
        // With the client: COPY and SUBSCRIBE send their rows themselves (CopyOutResponse, the
        // rows, CopyDone), then Execute completes with the COPY tag.
        self.execute(Some(client), &portal.statement.statement, params, &portal.result_column_format)
            .await?
            .map_err(user_error)
    }
}
