//! `COPY ... TO STDOUT`: a query's rows in COPY's text format, one CopyData message per row.

use std::fmt::Debug;

use bytes::Bytes;
use futures::{Sink, SinkExt};
use pgwire::api::results::{Response, Tag};
use pgwire::api::ClientInfo;
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::copy::{CopyData, CopyDone, CopyOutResponse};
use pgwire::messages::PgWireBackendMessage;
use rusqlite::types::Value;

use super::encode::text;
use super::query::ResultSet;
use super::session::{Sent, Session};

impl Session {
    /// `COPY (query) TO STDOUT`: runs the query and sends its rows (CopyOutResponse, the rows,
    /// CopyDone); the COPY tag completes it.
    pub(super) async fn copy_out<C>(&self, client: &mut C, query: String, params: Vec<Value>) -> Sent
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let rs = match self.query(query, params).await {
            Ok(rs) => rs,
            Err(e) => return Ok(Err(e)),
        };
        let n = rs.columns.len() as i16;
        client.send(PgWireBackendMessage::CopyOutResponse(CopyOutResponse::new(0, n, vec![0; n as usize]))).await?;
        send_chunks(client, copy_rows(&rs)).await?;
        client.send(PgWireBackendMessage::CopyDone(CopyDone::new())).await?;
        Ok(Ok(Response::Execution(Tag::new("COPY").with_rows(rs.rows.len()))))
    }
}

/// The rows of a result set in COPY's text format (tab-separated, a line each).
fn copy_rows(rs: &ResultSet) -> String {
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
    buf
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

/// Sends COPY text, one row per CopyData message (as PostgreSQL does; clients rely on it).
pub(super) async fn send_chunks<C>(client: &mut C, text: String) -> PgWireResult<()>
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
