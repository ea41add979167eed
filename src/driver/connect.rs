//! **Forming a cluster**: the processes of a run connect to each other before any worker
//! starts, and hand the connected sockets to timely.
//!
//! Process `i` listens on its own address (line `i` of the hostfile) and connects to every
//! process before it; each connection opens with a greeting that names the connecting process,
//! so a stray connection (a port scanner, a process of another cluster) is refused and the wait
//! goes on. Attempts repeat every [`RETRY`] until every peer is there or the run's
//! [`connect_timeout`](super::Layout::connect_timeout) passes: then the run stops with
//! [`RunError::ClusterStart`] naming the peers that never came (the command line's exit status
//! 3). Accepting polls every [`RETRY`] too, so a waiting process uses no CPU to speak of.
//!
//! Unless the run is quiet, one line says what the process waits for, for example
//! `ripples: process 1 of 2 (127.0.0.1:2102) waits for process 0 (127.0.0.1:2101)`.
//!
//! ```
//! use std::time::Duration;
//! use ripples::driver::{self, Layout, RunError, RunOptions};
//! // Process 1 of 2 whose process 0 never starts: a clear error when the timeout passes.
//! let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
//! let dir = std::env::temp_dir().join(format!("ripples-connect-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let hostfile = dir.join("hosts");
//! std::fs::write(&hostfile, format!("127.0.0.1:{}\n127.0.0.1:0\n", port)).unwrap();
//! let layout = Layout {
//!     processes: 2,
//!     process: 1,
//!     hostfile: Some(hostfile),
//!     connect_timeout: Duration::from_millis(300),
//!     ..Layout::default()
//! };
//! let options = RunOptions { layout, progress: false, ..RunOptions::default() };
//! let err = driver::run(options, ripples::dataflow::wcc::Wcc::default()).unwrap_err();
//! assert!(matches!(err, RunError::ClusterStart { .. }), "{err}");
//! assert!(err.to_string().contains(&format!("process 0 (127.0.0.1:{})", port)), "{err}");
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::RunError;

/// How often a process retries a connection, and polls for the ones it accepts.
pub const RETRY: Duration = Duration::from_millis(50);
/// The greeting a connection opens with, before the connecting process's index (8 bytes, little
/// endian).
const GREETING: &[u8; 16] = b"ripples cluster\n";
/// How long an accepted connection may take to greet.
const GREETING_WAIT: Duration = Duration::from_secs(5);

/// Connects process `me` to every other process of `addresses` within `timeout`: a socket per
/// process, in process order, `None` at `me`.
pub(super) fn connect(
    addresses: &[String],
    me: usize,
    timeout: Duration,
    progress: bool,
) -> Result<Vec<Option<TcpStream>>, RunError> {
    let n = addresses.len();
    let here = &addresses[me];
    let listener = TcpListener::bind(here).map_err(|e| RunError::ClusterStart {
        process: me,
        processes: n,
        reason: format!("cannot listen on {}: {}", here, e),
    })?;
    listener.set_nonblocking(true).map_err(|e| start_error(me, n, format!("cannot listen on {}: {}", here, e)))?;
    if progress {
        let peers: Vec<String> =
            (0..n).filter(|&p| p != me).map(|p| format!("process {} ({})", p, addresses[p])).collect();
        eprintln!("ripples: process {} of {} ({}) waits for {}", me, n, here, peers.join(", "));
    }
    let deadline = Instant::now() + timeout;
    let mut sockets: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    let mut attempts = vec![0u64; n];
    let mut last_error: Vec<Option<String>> = vec![None; n];
    loop {
        for peer in 0..me {
            if sockets[peer].is_none() {
                attempts[peer] += 1;
                match greet(&addresses[peer], me) {
                    Ok(stream) => sockets[peer] = Some(stream),
                    Err(e) => last_error[peer] = Some(e.to_string()),
                }
            }
        }
        while let Some(stream) = accept(&listener, me, n) {
            let (peer, stream) = stream;
            sockets[peer] = Some(stream);
        }
        let missing: Vec<usize> = (0..n).filter(|&p| p != me && sockets[p].is_none()).collect();
        if missing.is_empty() {
            return Ok(sockets);
        }
        if Instant::now() >= deadline {
            let peers: Vec<String> = missing
                .iter()
                .map(|&p| match (&last_error[p], attempts[p]) {
                    (Some(e), a) => format!("process {} ({}) after {} attempt(s): {}", p, addresses[p], a, e),
                    (None, _) => format!("process {} ({}) never connected", p, addresses[p]),
                })
                .collect();
            return Err(start_error(
                me,
                n,
                format!("no connection within {} s from {}", timeout.as_secs_f64(), peers.join("; ")),
            ));
        }
        std::thread::sleep(RETRY);
    }
}

fn start_error(process: usize, processes: usize, reason: String) -> RunError {
    RunError::ClusterStart { process, processes, reason }
}

/// Connects to `address` and greets it as process `me`.
fn greet(address: &str, me: usize) -> io::Result<TcpStream> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_nodelay(true)?;
    stream.write_all(GREETING)?;
    stream.write_all(&(me as u64).to_le_bytes())?;
    Ok(stream)
}

/// A connection from a later process (its index and socket), if one is waiting and greets
/// properly; a connection that does not is dropped.
fn accept(listener: &TcpListener, me: usize, n: usize) -> Option<(usize, TcpStream)> {
    loop {
        let (mut stream, _) = listener.accept().ok()?;
        let greeted = (|| -> io::Result<Option<usize>> {
            stream.set_nonblocking(false)?;
            stream.set_read_timeout(Some(GREETING_WAIT))?;
            let mut greeting = [0u8; 16];
            stream.read_exact(&mut greeting)?;
            let mut index = [0u8; 8];
            stream.read_exact(&mut index)?;
            stream.set_read_timeout(None)?;
            stream.set_nodelay(true)?;
            let index = u64::from_le_bytes(index) as usize;
            Ok((&greeting == GREETING && index > me && index < n).then_some(index))
        })();
        if let Ok(Some(index)) = greeted {
            return Some((index, stream));
        }
    }
}
