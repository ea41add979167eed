//! The startup of a connection: SCRAM-SHA-256 with the password of `--serve-password-file`
//! (with channel binding when the certificate allows it) or trust, and the refusal of a
//! connection over `--serve-max-connections`.

use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use futures::Sink;
use pgwire::api::auth::noop::NoopStartupHandler;
use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramAuth};
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::{AuthSource, DefaultServerParameterProvider, LoginInfo, Password, StartupHandler};
use pgwire::api::{ClientInfo, ConnectionManager};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};

use super::settings::SERVER_VERSION;
use crate::serve::sql::state;

/// The parameters a client is told at startup.
fn parameters() -> DefaultServerParameterProvider {
    let mut p = DefaultServerParameterProvider::default();
    p.server_version = SERVER_VERSION.to_string();
    p.default_transaction_read_only = true;
    p
}

/// The SCRAM iteration count.
const SCRAM_ITERATIONS: usize = 4096;

/// The SCRAM-SHA-256 startup with `password` (channel binding with the certificate `cert_pem`).
pub(super) fn scram(
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

/// The startup without a password (`--serve-auth trust`).
pub(super) struct Trust {
    pub(super) manager: Arc<ConnectionManager>,
}

#[async_trait]
impl NoopStartupHandler for Trust {
    fn connection_manager(&self) -> Option<Arc<ConnectionManager>> {
        Some(self.manager.clone())
    }
}

/// A connection's startup: SCRAM or trust, refused when the connection is over the limit.
pub(super) struct Startup {
    /// SCRAM with the password; `None`: trust.
    pub(super) scram: Option<SASLAuthStartupHandler<DefaultServerParameterProvider>>,
    pub(super) trust: Trust,
    /// The connection limit, when this connection is over it.
    pub(super) over_limit: Option<usize>,
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
