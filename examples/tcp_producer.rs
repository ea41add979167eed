//! A Rust TCP producer speaking ripples' live protocol with acknowledgements, against a live
//! run started in the same program (`ripples run wcc --listen ADDR` does the same from the
//! command line).
//!
//! What it teaches — the protocol, one line each way (see `ripples::live` and book/src/live.md):
//!
//! * on connect the server says `ready E`: the epoch it accepts next;
//! * the producer sends update lines (`+ src dst`, `- src dst`) and `commit`; the server answers
//!   every `commit` with `ok E`, the epoch it closed (after it is durable, with a state
//!   directory); a rejected line gets `error N: reason` and the connection stays usable;
//! * `end` finishes the stream: the server answers `bye` once the dataflow is done.
//!
//! It also shows `Observer::live_started`, through which the program learns the address bound
//! for `127.0.0.1:0`.
//!
//! ```text
//! cargo run --release --example tcp_producer -- 2     # with 2 workers (default 2)
//! ```
//!
//! It exits non-zero if a reply is not the expected one or the final components are wrong
//! (CI runs it).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::mpsc;

use ripples::dataflow::wcc::Wcc;
use ripples::driver::observe::{EpochView, LiveStarted, Observer, Observers};
use ripples::driver::{self, Layout, RunOptions, Source};
use ripples::live::{LiveConfig, LiveInput};

/// Tells the program where the server listens.
struct Address(mpsc::Sender<std::net::SocketAddr>);

impl Observer for Address {
    fn live_started(&mut self, started: &LiveStarted) {
        if let Some(addr) = started.local_addr {
            let _ = self.0.send(addr);
        }
    }
    fn epoch(&mut self, _view: &EpochView) -> Result<(), String> {
        Ok(())
    }
}

fn expect(reader: &mut impl BufRead, want: &str) {
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || !line.trim_end().starts_with(want) {
        eprintln!("tcp_producer: expected {:?}, got {:?}", want, line);
        std::process::exit(1);
    }
    println!("server: {}", line.trim_end());
}

fn main() {
    let workers: usize = std::env::args().nth(1).and_then(|w| w.parse().ok()).unwrap_or(2);
    let (tx, rx) = mpsc::channel();
    let mut live = LiveConfig::new(LiveInput::Listen("127.0.0.1:0".into()));
    live.workers = workers;
    let options = RunOptions {
        layout: Layout::threads(workers),
        source: Source::Live(live),
        collect: true,
        keep_state: true,
        observers: Observers::default().with(Address(tx)),
        ..RunOptions::default()
    };
    let run = std::thread::spawn(move || driver::run(options, Wcc));
    let Ok(addr) = rx.recv() else {
        eprintln!("tcp_producer: the live run did not start: {:?}", run.join().map(|r| r.err()));
        std::process::exit(1);
    };

    let stream = TcpStream::connect(addr).expect("connect");
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    expect(&mut reader, "ready 1");
    // Epoch 1: a path 1-2-3 and an edge 10-11.
    writer.write_all(b"+ 1 2\n+ 2 3\n+ 10 11\ncommit\n").expect("send");
    expect(&mut reader, "ok 1");
    // Epoch 2: a bad deletion is refused (line 5 of this connection), the rest goes on.
    writer.write_all(b"- 4 5\n").expect("send");
    expect(&mut reader, "error 5:");
    writer.write_all(b"- 2 3\n+ 3 10\ncommit\n").expect("send");
    expect(&mut reader, "ok 2");
    writer.write_all(b"end\n").expect("send");
    expect(&mut reader, "bye");

    let report = match run.join() {
        Ok(Ok(Some(report))) => report,
        other => {
            eprintln!("tcp_producer: the run failed: {:?}", other.map(|r| r.err()));
            std::process::exit(1);
        }
    };
    let got = report.final_state.unwrap_or_default();
    let want = vec![(1, 1), (2, 1), (3, 3), (10, 3), (11, 3)];
    if got != want {
        eprintln!("tcp_producer: final components {:?}, expected {:?}", got, want);
        std::process::exit(1);
    }
    println!(
        "tcp_producer: {} epochs acknowledged, final components {:?} ({} workers)",
        report.summary.epochs - 1,
        got,
        workers
    );
}
