//! **TCP producers** (`--listen HOST:PORT`): any number of connections, each reading update lines
//! and receiving replies.
//!
//! # Protocol
//!
//! The server binds the address given and, per connection:
//!
//! * on connect sends `ready E\n`, `E` being the epoch it will accept next (the one now being
//!   filled): `1` on a fresh start, `L + 1` after a restart whose last durable epoch is `L`
//!   (`ready` is answered by the sequencer, so it is delayed while backpressure holds);
//! * for each `commit` line answers `ok E\n`, where `E` is the epoch that `commit` closed. `ok` is
//!   written **after** the epoch was appended to the state directory's log and fsynced (with
//!   `--state-dir`) **and** handed to every worker's channel; without a state directory, right
//!   after the hand-over ("accepted"). It does not wait for the dataflow to finish the epoch;
//! * for a rejected line answers `error N: reason\n` (`N` = the line's 1-based number within the
//!   connection, counting every line) and discards all of that connection's updates still
//!   pending in the open epoch; the connection stays usable;
//! * on `end`: see [`handshake`](crate::live::handshake) — the answer is `bye\n`, once the
//!   driver has finished, and the whole front end shuts down (other connections are closed).
//!
//! Several producers may be connected at once. There is one open epoch: any producer's `commit`
//! (or the batch / timer rule) closes it for everyone, with the updates of all producers in
//! arrival order. A producer that disconnects without `commit` loses its pending updates (but
//! updates already swept into an epoch by `batch` / `epoch_ms` stay). Producers resume after a
//! restart from `ready E`.
//!
//! # Threads
//!
//! One thread accepts connections (polling a non-blocking listener every [`ACCEPT_POLL`], so it
//! notices shutdown). Per connection, one thread reads and parses lines, and a second one writes
//! the replies the sequencer queues on the connection's [`Connection`]. Replies are queued per
//! connection ([`REPLY_QUEUE`] at most); a producer that never reads them is disconnected. The
//! writer closes the socket once the sequencer lets go of the connection, and then reports that
//! everything queued was written ([`Connection::close_and_flush`]).

use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use super::{pump_from, spawn, ConnId, Event};
use crate::live::error::StartError;

/// Replies waiting to be written to one connection before it is dropped as unresponsive.
const REPLY_QUEUE: usize = 1024;
/// How often the listener is polled for connections (and for shutdown).
const ACCEPT_POLL: Duration = Duration::from_millis(20);

/// Set by a connection's writer once every queued reply is written (or writing failed).
type Flushed = Arc<(Mutex<bool>, Condvar)>;

/// The sequencer's end of one connection: where its replies go.
pub(in crate::live) struct Connection {
    reply: SyncSender<String>,
    socket: TcpStream,
    flushed: Flushed,
}

impl Connection {
    /// Queues a reply; `false` if the queue is full (the producer does not read its replies,
    /// and the caller should [`disconnect`](Self::disconnect) it).
    pub(in crate::live) fn try_reply(&self, message: String) -> bool {
        !matches!(self.reply.try_send(message), Err(TrySendError::Full(_)))
    }

    /// Shuts the socket down (the producer's reader and writer threads then end).
    pub(in crate::live) fn disconnect(&self) {
        let _ = self.socket.shutdown(Shutdown::Both);
    }

    /// Closes the reply queue and waits (at most `timeout`) until the writer has written
    /// everything queued.
    pub(in crate::live) fn close_and_flush(self, timeout: Duration) {
        let Connection { reply, flushed, .. } = self;
        drop(reply);
        let (done, signal) = &*flushed;
        let guard = done.lock();
        if let Ok(guard) = guard {
            let _ = signal.wait_timeout_while(guard, timeout, |done| !*done);
        }
    }
}

/// Binds `address` and starts the accepting thread; the address actually bound.
pub(super) fn listen(
    address: &str,
    token: Option<String>,
    tls: Option<Arc<rustls::ServerConfig>>,
    events: SyncSender<Event>,
    shutdown: Arc<AtomicBool>,
) -> Result<SocketAddr, StartError> {
    let listener =
        TcpListener::bind(address).map_err(|source| StartError::Listen { address: address.to_string(), source })?;
    let local_addr = listener.local_addr().map_err(StartError::Listener)?;
    listener.set_nonblocking(true).map_err(StartError::Listener)?;
    let token = token.map(Arc::new);
    spawn("ripples-live-accept", move || accept(listener, token, tls, events, shutdown))?;
    Ok(local_addr)
}

/// The accepting thread's body: one [`serve`] thread per connection.
fn accept(
    listener: TcpListener,
    token: Option<Arc<String>>,
    tls: Option<Arc<rustls::ServerConfig>>,
    events: SyncSender<Event>,
    shutdown: Arc<AtomicBool>,
) {
    let mut next_conn: ConnId = 1;
    while !shutdown.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _peer)) => {
                let conn = next_conn;
                next_conn += 1;
                let events = events.clone();
                let token = token.clone();
                let tls = tls.clone();
                let started = thread::Builder::new().name(format!("ripples-live-conn-{conn}")).spawn(move || {
                    let stream = match tls {
                        None => stream,
                        Some(config) => match super::tls::wrap(stream, config) {
                            Ok(plain) => plain,
                            Err(e) => return eprintln!("ripples: warning: cannot serve a TLS producer: {e}"),
                        },
                    };
                    serve(conn, stream, token.as_deref().map(String::as_str), events)
                });
                if let Err(e) = started {
                    eprintln!("ripples: warning: cannot serve a producer: {e}");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(ACCEPT_POLL),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                eprintln!("ripples: warning: cannot accept a producer: {e}");
                thread::sleep(ACCEPT_POLL);
            }
        }
    }
}

/// One TCP connection: this thread reads and parses lines; a second one writes the replies the
/// sequencer queues, and closes the socket once the sequencer lets go of the connection.
fn serve(conn: ConnId, mut stream: TcpStream, token: Option<&str>, events: SyncSender<Event>) {
    let setup = (|| -> io::Result<(TcpStream, TcpStream)> {
        stream.set_nonblocking(false)?;
        stream.set_nodelay(true)?;
        Ok((stream.try_clone()?, stream.try_clone()?))
    })();
    // With a token, the first line must be `auth TOKEN` (within AUTH_WAIT); the connection is
    // not registered (no `ready`) before it is.
    let skipped = match token {
        None => 0,
        Some(token) => match authenticate(&mut stream, token) {
            Ok(()) => 1,
            Err(reason) => {
                let _ = stream.write_all(format!("error 1: {reason}\n").as_bytes());
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
        },
    };
    let (mut writer, socket) = match setup {
        Ok(clones) => clones,
        Err(e) => {
            eprintln!("ripples: warning: cannot serve a producer: {e}");
            return;
        }
    };
    let (reply, replies) = mpsc::sync_channel::<String>(REPLY_QUEUE);
    let flushed: Flushed = Arc::new((Mutex::new(false), Condvar::new()));
    let flushed_by_writer = flushed.clone();
    let written = thread::Builder::new().name(format!("ripples-live-reply-{conn}")).spawn(move || {
        let mut out = Vec::new();
        while let Ok(first) = replies.recv() {
            out.clear();
            out.extend_from_slice(first.as_bytes());
            while let Ok(more) = replies.try_recv() {
                out.extend_from_slice(more.as_bytes());
            }
            if writer.write_all(&out).and_then(|()| writer.flush()).is_err() {
                break;
            }
        }
        let _ = writer.shutdown(Shutdown::Both);
        let (done, signal) = &*flushed_by_writer;
        if let Ok(mut done) = done.lock() {
            *done = true;
        }
        signal.notify_all();
    });
    if written.is_err()
        || events.send(Event::Connect { conn, connection: Connection { reply, socket, flushed } }).is_err()
    {
        let _ = stream.shutdown(Shutdown::Both);
        return;
    }
    let _ = pump_from(&stream, conn, &events, skipped);
    let _ = events.send(Event::Disconnect { conn });
}

/// How long a producer has to send its `auth` line.
const AUTH_WAIT: Duration = Duration::from_secs(10);
/// The longest `auth` line read.
const AUTH_LINE: usize = 4096;

/// Reads the first line (byte by byte, so nothing after it is consumed) and checks that it is
/// `auth TOKEN`, comparing in constant time.
fn authenticate(stream: &mut TcpStream, token: &str) -> Result<(), String> {
    use std::io::Read;
    stream.set_read_timeout(Some(AUTH_WAIT)).map_err(|e| e.to_string())?;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match stream.read(&mut byte) {
            Ok(0) => return Err("connection closed before auth".into()),
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) if line.len() >= AUTH_LINE => return Err("auth line too long".into()),
            Ok(_) => line.push(byte[0]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(format!("no auth line within {} s", AUTH_WAIT.as_secs())),
        }
    }
    stream.set_read_timeout(None).map_err(|e| e.to_string())?;
    let line = line.strip_suffix(b"\r").unwrap_or(&line);
    let given = line.strip_prefix(b"auth ").ok_or_else(|| "expected auth TOKEN as the first line".to_string())?;
    let want = token.as_bytes();
    let differ = given.len() != want.len() || given.iter().zip(want).fold(0u8, |acc, (a, b)| acc | (a ^ b)) != 0;
    if differ {
        return Err("authentication failed".into());
    }
    Ok(())
}
