//! In-process helpers for the live front end ([`ripples::live::start`]): a TCP client speaking
//! the producer protocol, and consumers that play the driver's part (receive every worker's
//! epochs and complete them).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use ripples::live::{EpochBatch, LiveConfig, LiveHandle, LiveInput};
use ripples::types::{Edge, Update};

pub const WAIT: Duration = Duration::from_secs(20);

pub fn ins(src: u64, dst: u64) -> Update {
    Update::insert(src, dst)
}
pub fn del(src: u64, dst: u64) -> Update {
    Update::delete(src, dst)
}

pub fn listen(workers: usize, max_behind: u64) -> LiveConfig {
    let mut config = LiveConfig::new(LiveInput::Listen("127.0.0.1:0".into()));
    config.workers = workers;
    config.max_behind = max_behind;
    config
}

pub struct Client {
    pub stream: TcpStream,
    pub reader: BufReader<TcpStream>,
}

impl Client {
    pub fn connect(handle: &LiveHandle) -> Client {
        let stream = TcpStream::connect(handle.local_addr.unwrap()).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        Client { stream, reader }
    }
    pub fn send(&mut self, text: &str) {
        self.stream.write_all(text.as_bytes()).unwrap();
    }
    /// The next reply line without its newline; "" at end of stream.
    pub fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        line.trim_end_matches('\n').to_string()
    }
}

/// Receives the next epoch on every worker (all must agree) and completes it.
pub fn next_epoch(handle: &LiveHandle) -> EpochBatch {
    let batch = handle.receivers[0].recv_timeout(WAIT).expect("an epoch");
    for receiver in &handle.receivers[1..] {
        assert_eq!(receiver.recv_timeout(WAIT).expect("an epoch"), batch);
    }
    handle.progress.complete(batch.epoch);
    batch
}

/// Consumes every worker's epochs on another thread, completing each, until the front end
/// drops the senders; returns them (checked identical across workers and consecutive).
pub fn consume(handle: &mut LiveHandle) -> JoinHandle<Vec<EpochBatch>> {
    let receivers = std::mem::take(&mut handle.receivers);
    let progress = handle.progress.clone();
    thread::spawn(move || {
        let mut batches: Vec<EpochBatch> = Vec::new();
        while let Ok(batch) = receivers[0].recv() {
            for receiver in &receivers[1..] {
                assert_eq!(receiver.recv().unwrap(), batch);
            }
            if let Some(last) = batches.last() {
                assert_eq!(batch.epoch, last.epoch + 1, "epochs are consecutive");
            }
            progress.complete(batch.epoch);
            batches.push(batch);
        }
        batches
    })
}

/// Applies valid updates to a multiset of edge copies.
pub fn apply(edges: &mut HashMap<Edge, u64>, updates: &[Update]) {
    for update in updates {
        let edge = update.edge();
        if update.diff > 0 {
            *edges.entry(edge).or_insert(0) += 1;
        } else if let Some(count) = edges.get_mut(&edge) {
            *count -= 1;
            if *count == 0 {
                edges.remove(&edge);
            }
        }
    }
}

/// The multiset after `batches`.
pub fn multiset(batches: &[EpochBatch]) -> HashMap<Edge, u64> {
    let mut edges = HashMap::new();
    for batch in batches {
        apply(&mut edges, &batch.updates);
    }
    edges
}
