//! **Serving** (`--serve ADDR`): the maintained results as a live SQL database that PostgreSQL
//! clients (psql, psycopg, JDBC, ...) read over the PostgreSQL wire protocol.
//!
//! Beside the driver: an [`Observer`] that copies each completed epoch's view into a queue (it
//! never blocks the dataflow: the queue's length is the observer lag of `--stats`); a mirror
//! thread applies each epoch to an embedded SQLite database (WAL mode) in one transaction
//! (`mirror`); a tokio runtime answers clients through `pgwire` (`wire`), every statement
//! reading exactly one completed epoch. Imports only the model, the sinks and
//! [`driver::observe`](crate::driver::observe).

pub(crate) mod mirror;
pub(crate) mod sql;
mod wire;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::driver::observe::{EpochView, Observer, OutputInfo, RowOutputInfo};
use crate::sinks::Change;
use crate::sinks::RunSummary;
use crate::types::stats::EpochStats;
use crate::types::Time;

/// How clients authenticate.
#[derive(Clone, Debug)]
pub enum Auth {
    /// SCRAM-SHA-256 with this password (any user name).
    Password(String),
    /// No authentication (loopback addresses only).
    Trust,
}

/// What `--serve` was asked for.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The address to listen on.
    pub addr: String,
    /// How clients authenticate.
    pub auth: Auth,
    /// TLS certificate chain and private key (PEM).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Epochs of history kept for `AS OF` and subscriptions.
    pub retain_epochs: u64,
    /// Connections served at once; one more gets SQLSTATE 53300.
    pub max_connections: usize,
    /// Rows one statement may return; more is SQLSTATE 54000.
    pub max_rows: usize,
    /// How long one statement may run; longer is cancelled (SQLSTATE 57014).
    pub statement_timeout: Duration,
    /// Where the mirror database lives (a fresh directory is made inside; removed at the end).
    pub dir: Option<PathBuf>,
    /// The mirror commits at most once per this interval: the epochs completed in between share
    /// one transaction (fewer commits, and the readers' page caches stay valid longer). Zero:
    /// a transaction per epoch (several only when the mirror lags).
    pub commit_interval: Duration,
    /// The serving threads' nice value (Linux: the query threads and the mirror run at this
    /// lower scheduling priority, so that under contention the dataflow's workers keep their
    /// cores). Zero: the run's own priority.
    pub nice: i32,
    /// The run's profiler (`--profile`, `--http`): its figures become the tables
    /// `ripples_workers`, `ripples_operators`, `ripples_channels` and `ripples_arrangements`.
    pub profiler: Option<crate::driver::profile::Profiler>,
}

impl ServeConfig {
    /// The defaults for `addr`, with `auth`.
    pub fn new(addr: impl Into<String>, auth: Auth) -> ServeConfig {
        ServeConfig {
            addr: addr.into(),
            auth,
            tls: None,
            retain_epochs: 100,
            max_connections: 64,
            max_rows: 1_000_000,
            statement_timeout: Duration::from_secs(30),
            dir: None,
            commit_interval: DEFAULT_COMMIT_INTERVAL,
            nice: DEFAULT_NICE,
            profiler: None,
        }
    }
}

/// The default [`ServeConfig::commit_interval`].
pub const DEFAULT_COMMIT_INTERVAL: Duration = Duration::from_millis(5);

/// The default [`ServeConfig::nice`].
pub const DEFAULT_NICE: i32 = 5;

/// The largest nice value (the lowest priority).
pub const MAX_NICE: i32 = 19;

/// Lowers the calling thread's scheduling priority to nice value `nice` (Linux, where a nice
/// value is per thread; elsewhere nothing). A thread may always lower its own priority; if the
/// system refuses anyway, the thread keeps running at the run's priority.
fn lower_priority(nice: i32) {
    #[cfg(target_os = "linux")]
    if nice > 0 {
        // SAFETY: two system calls about the calling thread, no memory is passed.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, nice.min(MAX_NICE));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// Whether a host (or `host:port`) is a loopback address.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

enum Msg {
    Start(Vec<OutputInfo>, Vec<RowOutputInfo>),
    Epoch {
        epoch: Time,
        stats: EpochStats,
        changes: Vec<Vec<Change>>,
        rows: Vec<Vec<mirror::RowChange>>,
        replayed: bool,
    },
    /// The run ended: the profile tables get its final figures.
    Finish,
    Stop,
}

/// How often the mirror refreshes the profile tables while the run goes on.
const PROFILE_EVERY: Duration = Duration::from_secs(1);

/// What the observer, the mirror thread and the server share.
pub(crate) struct Shared {
    pub db: PathBuf,
    /// Epochs handed to the mirror / applied by it.
    sent: AtomicU64,
    applied_count: AtomicU64,
    /// Statements clients sent.
    pub statements: AtomicU64,
    /// The last epoch the mirror committed (readers wait on it).
    pub latest: tokio::sync::watch::Sender<Option<Time>>,
    /// Set once the run has ended and every epoch is in the mirror (`--serve-linger`): no epoch
    /// comes after `latest`, so subscriptions end there.
    pub ended: tokio::sync::watch::Sender<bool>,
    /// The algorithm tables, once the run started.
    pub tables: Mutex<Vec<mirror::Table>>,
    /// A mirror failure, reported to the run at its next epoch.
    failed: Mutex<Option<String>>,
    pub config: ServeConfig,
    /// What the mirror cost so far.
    cost: Mutex<MirrorCost>,
    /// The sessions' connections, whose idle snapshots the mirror ends after each commit.
    sessions: Mutex<Vec<std::sync::Weak<Mutex<Option<wire::Db>>>>>,
}

/// What the mirror cost.
#[derive(Clone, Debug, Default)]
pub struct MirrorCost {
    /// Per table: (name, output changes, time in its statements).
    pub tables: Vec<(String, u64, Duration)>,
    /// All tables: output changes, and the time from each transaction's start to its commit.
    pub total: (u64, Duration),
    /// Transactions committed (a lagging mirror applies several epochs in one).
    pub transactions: u64,
    /// Epochs applied.
    pub epochs: u64,
}

/// A running server: its observer for the run, and the serving threads.
pub struct Serving {
    shared: Arc<Shared>,
    tx: Mutex<Option<mpsc::Sender<Msg>>>,
    mirror: Option<std::thread::JoinHandle<()>>,
    runtime: Option<tokio::runtime::Runtime>,
    dir: PathBuf,
    /// The address it listens on.
    pub local_addr: SocketAddr,
}

impl Serving {
    /// Checks the configuration, creates the mirror database and starts listening.
    pub fn start(config: ServeConfig) -> Result<Serving, String> {
        let addr: SocketAddr = std::net::ToSocketAddrs::to_socket_addrs(&config.addr)
            .map_err(|e| format!("--serve {}: not an address: {e}", config.addr))?
            .next()
            .ok_or_else(|| format!("--serve {}: the name resolves to no address", config.addr))?;
        if !(0..=MAX_NICE).contains(&config.nice) {
            return Err(format!(
                "--serve-nice {}: a nice value is 0 (the run's priority) to {MAX_NICE} (the lowest)",
                config.nice
            ));
        }
        if !is_loopback(&addr) {
            if config.tls.is_none() {
                return Err(format!(
                    "--serve {} is not a loopback address: clients there must use TLS, give --serve-tls-cert FILE and --serve-tls-key FILE",
                    config.addr
                ));
            }
            if matches!(config.auth, Auth::Trust) {
                return Err(format!(
                    "--serve {} is not a loopback address: --serve-trust is allowed only on loopback; give --serve-password-file FILE",
                    config.addr
                ));
            }
        }
        let base = config.dir.clone().unwrap_or_else(std::env::temp_dir);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = base.join(format!("ripples-serve-{}-{}", std::process::id(), nanos));
        std::fs::create_dir_all(&dir).map_err(|e| format!("--serve: cannot create {}: {e}", dir.display()))?;
        let db = dir.join("mirror.sqlite");
        let conn = mirror::create(&db)?;
        let (latest, _) = tokio::sync::watch::channel(None);
        let (ended, _) = tokio::sync::watch::channel(false);
        let shared = Arc::new(Shared {
            db,
            sent: AtomicU64::new(0),
            applied_count: AtomicU64::new(0),
            statements: AtomicU64::new(0),
            latest,
            ended,
            tables: Mutex::new(Vec::new()),
            failed: Mutex::new(None),
            config: config.clone(),
            cost: Mutex::new(MirrorCost::default()),
            sessions: Mutex::new(Vec::new()),
        });
        let nice = config.nice;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ripples-serve")
            .on_thread_start(move || lower_priority(nice))
            .enable_all()
            .build()
            .map_err(|e| format!("--serve: cannot start the server's threads: {e}"))?;
        let listener =
            std::net::TcpListener::bind(addr).map_err(|e| format!("--serve {}: cannot listen: {e}", addr))?;
        let local_addr = listener.local_addr().map_err(|e| format!("--serve: {e}"))?;
        listener.set_nonblocking(true).map_err(|e| format!("--serve: {e}"))?;
        let tls = match &config.tls {
            Some((cert, key)) => Some(wire::tls_acceptor(cert, key)?),
            None => None,
        };
        {
            let _guard = runtime.enter();
            let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| format!("--serve: {e}"))?;
            runtime.spawn(wire::serve(listener, tls, shared.clone()));
        }
        let (tx, rx) = mpsc::channel();
        let mirror = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("ripples-mirror".into())
                .spawn(move || mirror_thread(conn, rx, shared))
                .map_err(|e| format!("--serve: cannot start the mirror thread: {e}"))?
        };
        Ok(Serving { shared, tx: Mutex::new(Some(tx)), mirror: Some(mirror), runtime: Some(runtime), dir, local_addr })
    }

    /// Reads how many statements clients have sent so far (for `--http`'s metrics).
    pub fn statements(&self) -> impl Fn() -> u64 + Send + Sync + 'static {
        let shared = self.shared.clone();
        move || shared.statements.load(Ordering::Relaxed)
    }

    /// The observer to add to the run's [`Observers`](crate::driver::observe::Observers).
    pub fn observer(&self) -> impl Observer + 'static {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner()).clone();
        MirrorObserver { tx, shared: self.shared.clone(), integer: Vec::new(), outputs: Vec::new(), typed: Vec::new() }
    }

    /// Waits until the mirror applied everything it was handed.
    pub fn wait_mirror(&self) {
        while self.shared.applied_count.load(Ordering::Acquire) < self.shared.sent.load(Ordering::Acquire)
            && self.shared.failed.lock().map(|f| f.is_none()).unwrap_or(false)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// What the mirror cost so far.
    pub fn mirror_cost(&self) -> MirrorCost {
        self.shared.cost.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// Keeps serving until the process gets SIGINT or SIGTERM (called after the run ended and
    /// [`Serving::wait_mirror`]: subscriptions end at the last epoch).
    pub fn linger(&self) {
        self.shared.ended.send_replace(true);
        if let Some(rt) = &self.runtime {
            rt.block_on(async {
                #[cfg(unix)]
                {
                    use tokio::signal::unix::{signal, SignalKind};
                    match signal(SignalKind::terminate()) {
                        Ok(mut term) => {
                            tokio::select! {
                                _ = tokio::signal::ctrl_c() => {}
                                _ = term.recv() => {}
                            }
                        }
                        Err(_) => {
                            let _ = tokio::signal::ctrl_c().await;
                        }
                    }
                }
                #[cfg(not(unix))]
                let _ = tokio::signal::ctrl_c().await;
            });
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Ok(mut tx) = self.tx.lock() {
            if let Some(tx) = tx.take() {
                let _ = tx.send(Msg::Stop);
            }
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_millis(200));
        }
        // The observers of the run hold senders too; the run has ended, so they are gone.
        if let Some(m) = self.mirror.take() {
            let _ = m.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// At most this many queued epochs share one mirror transaction (when the mirror lags).
const MAX_BATCH: usize = 64;

fn mirror_thread(conn: rusqlite::Connection, rx: mpsc::Receiver<Msg>, shared: Arc<Shared>) {
    lower_priority(shared.config.nice);
    let mut m = mirror::Mirror::new(conn, shared.config.retain_epochs);
    let mut next: Option<Msg> = None;
    // When the last transaction committed: the next one waits for the commit interval to pass,
    // gathering the epochs completed meanwhile.
    let mut committed: Option<Instant> = None;
    // When the profile tables were last refreshed.
    let mut profiled: Option<Instant> = None;
    loop {
        let msg = match next.take() {
            Some(msg) => msg,
            None => match rx.recv() {
                Ok(msg) => msg,
                Err(_) => return,
            },
        };
        let result = match msg {
            Msg::Stop => return,
            Msg::Finish => match &shared.config.profiler {
                Some(p) => m.profile(&p.snapshot()),
                None => Ok(()),
            },
            Msg::Start(outputs, typed) => m.start(&outputs, &typed).map(|()| {
                let tables: Vec<mirror::Table> =
                    outputs.iter().map(mirror::Table::of).chain(typed.iter().map(mirror::Table::of_rows)).collect();
                if let Ok(mut t) = shared.tables.lock() {
                    *t = tables;
                }
            }),
            Msg::Epoch { epoch, stats, changes, rows, replayed } => {
                // The epochs queued behind this one go in the same transaction (a lagging
                // mirror catches up with fewer commits), and so do those completing until the
                // commit interval since the last commit has passed.
                let mut batch = Vec::new();
                let mut push = |epoch: Time, stats, changes, rows, replayed: bool| {
                    if !(replayed && m.applied().is_some_and(|a| a >= epoch)) {
                        batch.push(mirror::Epoch { epoch, stats, changes, rows });
                    }
                };
                push(epoch, stats, changes, rows, replayed);
                let mut count = 1;
                let due = committed.map(|t| t + shared.config.commit_interval);
                while count < MAX_BATCH {
                    let msg = match rx.try_recv() {
                        Ok(msg) => Ok(msg),
                        Err(mpsc::TryRecvError::Empty) => {
                            match due.map(|d| d.saturating_duration_since(Instant::now())) {
                                Some(wait) if !wait.is_zero() => rx.recv_timeout(wait).map_err(|_| ()),
                                _ => Err(()),
                            }
                        }
                        Err(mpsc::TryRecvError::Disconnected) => Err(()),
                    };
                    match msg {
                        Ok(Msg::Epoch { epoch, stats, changes, rows, replayed }) => {
                            push(epoch, stats, changes, rows, replayed);
                            count += 1;
                        }
                        Ok(other) => {
                            next = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                let last = batch.last().map(|e| e.epoch);
                let mut r = m.apply(&batch);
                committed = Some(Instant::now());
                if let (Some(p), true) = (&shared.config.profiler, r.is_ok()) {
                    if profiled.is_none_or(|t: Instant| t.elapsed() >= PROFILE_EVERY) {
                        r = m.profile(&p.snapshot());
                        profiled = Some(Instant::now());
                    }
                }
                if r.is_ok() {
                    if let Some(last) = last {
                        shared.latest.send_replace(Some(last));
                    }
                    // An idle session's snapshot would keep reading the old epoch (and keep the
                    // database from reusing its log's pages).
                    if let Ok(sessions) = shared.sessions.lock() {
                        sessions.iter().filter_map(|s| s.upgrade()).for_each(|db| wire::release_idle(&db));
                    }
                    if let (Ok(mut cost), Ok(tables)) = (shared.cost.lock(), shared.tables.lock()) {
                        cost.tables =
                            tables.iter().zip(&m.cost.tables).map(|(t, &(n, d))| (t.name.clone(), n, d)).collect();
                        cost.total = m.cost.total;
                        cost.transactions = m.cost.transactions;
                        cost.epochs = m.cost.epochs;
                    }
                }
                // Counted applied last: `wait_mirror` returns with `latest` at the last epoch (a
                // lingering server's subscriptions end there) and the cost complete.
                shared.applied_count.fetch_add(count as u64, Ordering::AcqRel);
                r
            }
        };
        if let Err(e) = result {
            if let Ok(mut f) = shared.failed.lock() {
                f.get_or_insert(e);
            }
            shared.applied_count.store(u64::MAX, Ordering::Release);
            return;
        }
    }
}

/// The run's side: copies each epoch into the mirror's queue.
struct MirrorObserver {
    tx: Option<mpsc::Sender<Msg>>,
    shared: Arc<Shared>,
    /// Per output: whether its values are integers (which must fit a BIGINT).
    integer: Vec<bool>,
    /// The algorithm outputs, between `start` and `start_rows`.
    outputs: Vec<OutputInfo>,
    /// Per typed output: its name and the SQL types of its key and value.
    typed: Vec<RowOutputInfo>,
}

impl MirrorObserver {
    fn send(&self, msg: Msg) -> Result<(), String> {
        if let Some(e) = self.shared.failed.lock().ok().and_then(|f| f.clone()) {
            return Err(e);
        }
        match &self.tx {
            Some(tx) => tx.send(msg).map_err(|_| "--serve: the SQL mirror stopped".to_string()),
            None => Ok(()),
        }
    }
}

/// The largest id SQL's BIGINT holds.
const MAX_SQL: u64 = i64::MAX as u64;

impl Observer for MirrorObserver {
    fn start(&mut self, outputs: &[OutputInfo]) -> Result<(), String> {
        self.integer = outputs.iter().map(|o| o.format == crate::types::format::ValueFormat::Integer).collect();
        self.outputs = outputs.to_vec();
        Ok(())
    }

    fn start_rows(&mut self, rows: &[RowOutputInfo]) -> Result<(), String> {
        self.typed = rows.to_vec();
        let outputs = std::mem::take(&mut self.outputs);
        self.send(Msg::Start(outputs, rows.to_vec()))
    }

    fn epoch(&mut self, view: &EpochView) -> Result<(), String> {
        for (i, list) in view.changes.iter().enumerate() {
            let integer = self.integer.get(i).copied().unwrap_or(true);
            if let Some(c) = list.iter().find(|c| c.key > MAX_SQL || (integer && c.value > MAX_SQL)) {
                let what = if c.key > MAX_SQL { format!("vertex id {}", c.key) } else { format!("value {}", c.value) };
                return Err(format!(
                    "--serve: {what} (epoch {}) is 2^63 or more, which SQL's BIGINT cannot hold; serve ids below 2^63 (renumber the vertices)",
                    c.epoch
                ));
            }
        }
        let mut rows = Vec::with_capacity(view.rows.len());
        for (info, list) in self.typed.iter().zip(view.rows) {
            let (key, value) = info.columns;
            let mut sql = Vec::with_capacity(list.len());
            for c in list {
                let at = |what: &str, text: &str| {
                    let (what, text) = (what.to_string(), text.to_string());
                    move || format!("output {}: {what} {text} (epoch {})", info.name, c.epoch)
                };
                sql.push(mirror::RowChange {
                    epoch: c.epoch,
                    key: mirror::sql_column(key, &c.key, at("key", &c.key))?,
                    value: mirror::sql_column(value, &c.value, at("value", &c.value))?,
                    diff: c.diff,
                });
            }
            rows.push(sql);
        }
        self.shared.sent.fetch_add(1, Ordering::AcqRel);
        self.send(Msg::Epoch {
            epoch: view.epoch,
            stats: view.stats.clone(),
            changes: view.changes.to_vec(),
            rows,
            replayed: view.replayed,
        })
    }

    fn lag_epochs(&self) -> Option<u64> {
        let sent = self.shared.sent.load(Ordering::Acquire);
        Some(sent.saturating_sub(self.shared.applied_count.load(Ordering::Acquire)))
    }

    fn finish(&mut self, _summary: &RunSummary) -> Result<(), String> {
        self.send(Msg::Finish)
    }
}
