//! A load test of the TCP front end: 16 producers send 1,000,000 insertions at once, each in
//! epochs of its own closed by `commit`. Every `commit` is acknowledged exactly once, with epoch
//! numbers that are consecutive over all producers; the final result equals a file run of the
//! same updates; the server's peak memory stays bounded (backpressure, no unbounded buffers).

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::process::Stdio;
use std::thread;

use common::process::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PRODUCERS: u64 = 16;
const PER_PRODUCER: u64 = 62_500;
const EPOCH: u64 = 2_500;

fn producer_text(p: u64) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(500 + p);
    (0..PER_PRODUCER / EPOCH)
        .map(|_| {
            let mut text = String::new();
            for _ in 0..EPOCH {
                let (a, b): (u64, u64) = (rng.gen_range(0..400_000), rng.gen_range(0..400_000));
                text.push_str(&format!("{} {}\n", a, b));
            }
            text
        })
        .collect()
}

/// Peak resident memory of a process, from `/proc/PID/status` (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{}/status", pid)).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

#[test]
fn sixteen_producers_and_a_million_updates() {
    let files = Files::new();
    let texts: Vec<Vec<String>> = (0..PRODUCERS).map(producer_text).collect();
    let all: String = texts.iter().flatten().cloned().collect();
    let updates = files.write("u.txt", &all);
    let reference = files.path("ref.txt");
    let out = bin().args(["run", "wcc", "-q", "--updates", &s(&updates), "--output", &s(&reference)]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let port = free_port();
    let output = files.path("o.txt");
    let mut server = bin()
        .args(["run", "wcc", "-q", "--insert-only", "--listen", &port.to_string(), "--output", &s(&output)])
        .args(["--max-behind", "8"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(files.path("server.err")).unwrap())
        .spawn()
        .unwrap();
    let pid = server.id();
    let handles: Vec<_> = texts
        .into_iter()
        .map(|epochs| {
            thread::spawn(move || {
                let (mut p, _) = Producer::connect_retry(port);
                let mut acked = Vec::new();
                for text in epochs {
                    p.stream.write_all(text.as_bytes()).unwrap();
                    p.send("commit\n").unwrap();
                    let line = p.line().unwrap();
                    let epoch: u64 = line.strip_prefix("ok ").and_then(|e| e.parse().ok()).unwrap_or_else(|| {
                        panic!("expected ok E, got {:?}", line);
                    });
                    acked.push(epoch);
                }
                acked
            })
        })
        .collect();
    let mut acked = Vec::new();
    for h in handles {
        acked.extend(h.join().expect("a producer failed"));
    }
    let peak = peak_rss(pid);
    let (mut p, _) = Producer::connect_retry(port);
    p.send("end\n").unwrap();
    let _ = p.line();
    let status = wait_exit(&mut server, PATIENCE * 3, "the server");
    assert!(status.success(), "{}", read(&files.path("server.err")));
    let distinct: BTreeSet<u64> = acked.iter().copied().collect();
    assert_eq!(distinct.len(), acked.len(), "an epoch was acknowledged twice");
    let n = (PRODUCERS * PER_PRODUCER / EPOCH) as usize;
    assert_eq!(acked.len(), n, "one ok per commit");
    assert_eq!(distinct.iter().copied().collect::<Vec<_>>(), (1..=n as u64).collect::<Vec<_>>(), "epochs 1..={}", n);
    assert_eq!(read(&output), read(&reference), "the final result differs from the file run");
    let peak = peak.expect("peak memory of the server");
    eprintln!(
        "live load: {} producers, {} updates, {} epochs, server peak RSS {} MiB",
        PRODUCERS,
        PRODUCERS * PER_PRODUCER,
        n,
        peak >> 20
    );
    assert!(peak < 1 << 30, "peak RSS {} MiB", peak >> 20);
}
