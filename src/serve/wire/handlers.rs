//! The `pgwire` handlers of a connection: the startup, cancel, and the simple and extended query
//! protocols, which hand statements to the [`Session`].

use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use futures::Sink;
use pgwire::api::auth::StartupHandler;
use pgwire::api::cancel::DefaultCancelHandler;
use pgwire::api::portal::{Format, Portal};
use pgwire::api::query::{send_describe_response, ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{DescribePortalResponse, DescribeResponse, DescribeStatementResponse, Response};
use pgwire::api::stmt::{NoopQueryParser, StoredStatement};
use pgwire::api::store::PortalStore;
use pgwire::api::{ClientInfo, ClientPortalStore, PgWireServerHandlers, Type};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::extendedquery::{Describe, TARGET_TYPE_BYTE_PORTAL};
use pgwire::messages::PgWireBackendMessage;

use super::auth::Startup;
use super::encode::{fields, parameters_of};
use super::errors::{error_info, no_cursor, user_error};
use super::query::ResultSet;
use super::session::Session;
use crate::serve::sql::{self, Kind};

/// The handlers of one connection.
pub(super) struct Handlers {
    pub(super) session: Arc<Session>,
    pub(super) startup: Arc<Startup>,
    pub(super) cancel: Arc<DefaultCancelHandler>,
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
