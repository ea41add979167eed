//! `COPY (SUBSCRIBE name ...) TO STDOUT`: the state of an algorithm's table at the start epoch
//! (its snapshot, as `+1` rows), then each epoch's changes as it completes, read from the
//! mirror's change log, optionally with a progress row after every epoch.
//!
//! A row is `epoch, diff, vertex, value` (a typed output's: `epoch, diff, key, value`) in COPY's
//! text format; a progress row is
//! `epoch, 0, \N, \N`. A subscriber that falls behind the retained epochs gets a `LAGGING` error
//! that says where to resume. A subscription without `UP TO` ends after the run's last epoch once
//! the run has ended (a lingering server, `--serve-linger`).

use std::fmt::Debug;

use futures::{Sink, SinkExt};
use pgwire::api::results::{Response, Tag};
use pgwire::api::ClientInfo;
use pgwire::error::PgWireError;
use pgwire::messages::copy::{CopyDone, CopyOutResponse};
use pgwire::messages::PgWireBackendMessage;
use rusqlite::types::Value;
use tokio::sync::watch;

use super::copy::send_chunks;
use super::db::{epochs, Db};
use super::encode::change_value;
use super::errors::sqlite_error;
use super::query::check_as_of;
use super::session::{Sent, Session};
use crate::serve::mirror::{self, Table};
use crate::serve::sql::{state, SqlError, Subscribe};
use crate::types::Time;

impl Session {
    /// `COPY (SUBSCRIBE ...) TO STDOUT`: the snapshot, then every epoch's changes as it completes.
    pub(super) async fn subscribe<C>(&self, client: &mut C, s: Subscribe) -> Sent
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let table = match self.subscribed_table(&s.table) {
            Ok(t) => t,
            Err(e) => return Ok(Err(e)),
        };
        let mut latest = self.shared.latest.subscribe();
        let mut ended = self.shared.ended.subscribe();
        // Wait for the first epoch (or the AS OF one) to complete.
        let want = s.as_of.unwrap_or(0);
        if completed(&mut latest, &mut ended, |l| l >= want).await.is_none() {
            return Ok(Err(SqlError::new(state::LAGGING, "the run ended before the epoch completed")));
        }
        let (t, snapshot, as_of) = (table.clone(), s.snapshot, s.as_of);
        let start = self.blocking(None, move |c, _| start(c, &t, snapshot, as_of)).await;
        let (mut last, snapshot_rows) = match start {
            Ok(x) => x,
            Err(e) => return Ok(Err(e)),
        };
        client.send(PgWireBackendMessage::CopyOutResponse(CopyOutResponse::new(0, 4, vec![0; 4]))).await?;
        let mut rows = snapshot_rows.lines().count();
        if s.up_to.is_none_or(|u| last < u) {
            send_chunks(client, snapshot_rows).await?;
            if s.progress {
                let mut buf = String::new();
                progress_row(&mut buf, last);
                send_chunks(client, buf).await?;
            }
        }
        loop {
            if s.up_to.is_some_and(|u| last + 1 >= u) {
                break;
            }
            let Some(now) = completed(&mut latest, &mut ended, |l| l > last).await else { break };
            let hi = s.up_to.map_or(now, |u| now.min(u - 1));
            let (t, from, progress) = (table.clone(), last, s.progress);
            let retain = self.shared.config.retain_epochs;
            let chunk = self.blocking(None, move |c, _| changes(c, &t, (from, hi), progress, retain)).await;
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

    /// The algorithm table subscribed to.
    fn subscribed_table(&self, name: &str) -> Result<Table, SqlError> {
        let table = self.shared.tables.lock().ok().and_then(|t| t.iter().find(|t| t.name == name).cloned());
        table.ok_or_else(|| {
            SqlError::new(
                state::UNDEFINED_TABLE,
                format!("SUBSCRIBE {name}: no such algorithm table; the tables are {}", self.table_names().join(", ")),
            )
        })
    }
}

/// Waits until the latest completed epoch satisfies `ready`; `None` when the run ended first
/// (the server stopped, or it lingers after the run's last epoch).
async fn completed(
    latest: &mut watch::Receiver<Option<Time>>,
    ended: &mut watch::Receiver<bool>,
    ready: impl Fn(Time) -> bool,
) -> Option<Time> {
    loop {
        let now = *latest.borrow_and_update();
        if let Some(l) = now.filter(|&l| ready(l)) {
            return Some(l);
        }
        if *ended.borrow_and_update() {
            return None;
        }
        tokio::select! {
            changed = latest.changed() => changed.ok()?,
            changed = ended.changed() => changed.ok()?,
        }
    }
}

/// Runs `read` in a read transaction of its own (the snapshot ended first).
fn read_transaction<T>(c: &Db, names: &[String], read: impl FnOnce() -> Result<T, SqlError>) -> Result<T, SqlError> {
    c.release();
    c.execute_batch("BEGIN").map_err(|e| sqlite_error(e, names))?;
    let result = read();
    let _ = c.execute_batch("COMMIT");
    result
}

/// The start of a subscription: its epoch (`as_of`, else the latest completed one) and, with
/// `snapshot`, the table's rows at that epoch as `+1` rows.
fn start(c: &Db, table: &Table, snapshot: bool, as_of: Option<Time>) -> Result<(Time, String), SqlError> {
    let name = &table.name;
    let names = [name.clone()];
    let err = |e| sqlite_error(e, &names);
    if c.in_transaction() {
        // The transaction's snapshot would hold the subscription at its epoch.
        return Err(SqlError::new(
            "25001",
            format!("SUBSCRIBE {name} inside a transaction would see only the transaction's epoch: run it outside one (autocommit; psycopg: connect(..., autocommit=True))"),
        ));
    }
    read_transaction(c, &names, || {
        let (latest, _) = epochs(c).map_err(err)?;
        let at = as_of.or(latest).unwrap_or(0);
        check_as_of(c, &[at], &names)?;
        let mut buf = String::new();
        if snapshot {
            let mut stmt =
                c.prepare(&format!("SELECT * FROM {} ORDER BY 1, 2", mirror::as_of_sql(name, "?1"))).map_err(err)?;
            let mut rows = stmt.query([at as i64]).map_err(err)?;
            while let Some(r) = rows.next().map_err(err)? {
                let v: Value = r.get(0).map_err(err)?;
                let value: Value = r.get(1).map_err(err)?;
                buf.push_str(&format!("{at}\t1\t{}\t{}\n", copy_key(&v), copy_value(&value, table)));
            }
        }
        Ok((at, buf))
    })
}

/// The changes of the epochs `from < e <= hi` (with `progress`, a progress row after each
/// epoch), and how many changes; a `LAGGING` error when they are no longer all retained
/// (`--serve-retain-epochs retain`).
fn changes(
    c: &Db,
    table: &Table,
    (from, hi): (Time, Time),
    progress: bool,
    retain: u64,
) -> Result<(String, usize), SqlError> {
    let name = &table.name;
    let names = [name.clone()];
    let err = |e| sqlite_error(e, &names);
    read_transaction(c, &names, || {
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
                mirror::log_table(name)
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
                    progress_row(&mut buf, epoch_done);
                }
            }
            let d: i64 = r.get(1).map_err(err)?;
            let v: Value = r.get(2).map_err(err)?;
            let value: Value = r.get(3).map_err(err)?;
            buf.push_str(&format!("{e}\t{d}\t{}\t{}\n", copy_key(&v), copy_value(&value, table)));
            n += 1;
        }
        if progress {
            while epoch_done < hi {
                epoch_done += 1;
                progress_row(&mut buf, epoch_done);
            }
        }
        Ok((buf, n))
    })
}

/// A key in COPY's text format.
fn copy_key(v: &Value) -> String {
    copy_escape(&super::encode::text(v))
}

/// A value in COPY's text format: as the change log writes it (a float of an algorithm table as
/// `format_f64`; a typed output's as SQL holds it).
fn copy_value(v: &Value, table: &Table) -> String {
    match (v, table.columns) {
        (_, None) => change_value(v, table.format),
        (Value::Real(f), Some(_)) => f.to_string(),
        (other, Some(_)) => copy_escape(&super::encode::text(other)),
    }
}

/// Escapes text for COPY's text format (backslash, tab, line breaks).
fn copy_escape(text: &str) -> String {
    if !text.contains(['\\', '\t', '\n', '\r']) {
        return text.to_string();
    }
    text.replace('\\', "\\\\").replace('\t', "\\t").replace('\n', "\\n").replace('\r', "\\r")
}

/// Appends the progress row of epoch `e` (`e, 0, \N, \N`: the epoch is complete).
fn progress_row(buf: &mut String, e: Time) {
    buf.push_str(&format!("{e}\t0\t\\N\t\\N\n"));
}
