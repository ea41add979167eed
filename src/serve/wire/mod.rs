//! The PostgreSQL wire protocol (through `pgwire`): authentication, the simple and extended
//! query protocols, `COPY ... TO STDOUT`, subscriptions, cancel and limits.
//!
//! Each client connection is a session with its own read-only SQLite connection to the mirror.
//! The parts, one concept each:
//!
//! * `auth`: the startup of a connection: SCRAM-SHA-256 with `--serve-password-file` (or
//!   trust), and the refusal over `--serve-max-connections`;
//! * `db`: a session's SQLite handle, its snapshot of the latest completed epoch (renewed when
//!   a newer one was committed) and the functions clients call (`ripples_epoch()`, `version()`,
//!   what psql's `\d` asks);
//! * `settings`: the values `SHOW` and `current_setting()` report;
//! * `query`: one query run to completion against the snapshot, within the row limit;
//! * `errors`: SQLite's errors as PostgreSQL's SQLSTATEs with messages that say what to do;
//! * `encode`: values between SQLite and the wire (result rows, a portal's parameters);
//! * `session`: a connection's state: statements dispatched by their kind, transactions,
//!   `DECLARE`d cursors, the statement timeout and cancel;
//! * `copy`: `COPY ... TO STDOUT` (text rows, one CopyData message each);
//! * `subscribe`: `COPY (SUBSCRIBE ...) TO STDOUT`: a snapshot, then each epoch's changes;
//! * `handlers`: the `pgwire` handler traits, which hand the messages to the session.
//!
//! A statement runs inline on the server's thread while it is quick (a point lookup) and moves
//! to a blocking thread when it is not, where the timeout and a cancel can interrupt it.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pgwire::api::cancel::DefaultCancelHandler;
use pgwire::api::ConnectionManager;

use super::{Auth, Shared};
use auth::{scram, Startup, Trust};
use handlers::Handlers;
use session::Session;

mod auth;
mod copy;
mod db;
mod encode;
mod errors;
mod handlers;
mod query;
mod session;
mod settings;
mod subscribe;

pub(super) use db::{release_idle, Db};

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
