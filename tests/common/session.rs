//! Live sessions against the binary, shared by the fault tests (cluster faults, rescaling,
//! hostile producers): fixed-seed epochs as update text, the reference run of the same epochs
//! from a file, a two-process hostfile, and waiting for an epoch to be written.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ripples::types::Update;

use super::process::{bin, read, s, Files, Producer, PATIENCE};
use super::random_stream;

/// `epochs` epochs of exactly `batch` update lines (`+`/`-`, deletions of present copies only),
/// from a fixed seed over `vertices` vertices.
pub fn epoch_texts(seed: u64, vertices: usize, epochs: usize, batch: usize) -> Vec<String> {
    let stream = random_stream(seed, vertices, 0, epochs * batch, batch);
    let updates: Vec<Update> = stream.epochs.into_iter().flatten().take(epochs * batch).collect();
    assert_eq!(updates.len(), epochs * batch, "seed {}: stream too short", seed);
    updates
        .chunks(batch)
        .map(|c| c.iter().map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst)).collect())
        .collect()
}

/// The uninterrupted run of the same epochs from a file (`--batch` cuts them): its `--changes`
/// and `--output` text.
pub fn reference(files: &Files, texts: &[String], batch: usize) -> (String, String) {
    let updates = files.path("ref-u.txt");
    fs::write(&updates, texts.concat()).unwrap();
    let (changes, output) = (files.path("ref-c.txt"), files.path("ref-o.txt"));
    let out = bin()
        .args(["run", "wcc", "--updates", &s(&updates), "--batch", &batch.to_string()])
        .args(["--changes", &s(&changes), "--output", &s(&output), "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "reference run failed: {}", String::from_utf8_lossy(&out.stderr));
    (read(&changes), read(&output))
}

/// A hostfile for two processes on free loopback ports; returns it and process 1's port.
pub fn two_process_hostfile(files: &Files) -> (PathBuf, u16) {
    let a = super::process::free_port();
    let mut b = super::process::free_port();
    if b == a {
        b = a + 1;
    }
    (files.write("hosts", &format!("127.0.0.1:{}\n127.0.0.1:{}\n", a, b)), b)
}

/// Waits until the state directory's change-log mark records `epoch` (it is written: `ok E`
/// only says it is durable).
pub fn wait_written(state: &Path, epoch: u64) {
    let deadline = Instant::now() + PATIENCE;
    while !matches!(ripples::live::read_mark(state), Ok(Some((e, _))) if e >= epoch) {
        assert!(Instant::now() < deadline, "epoch {} was never written", epoch);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends epochs `from..=to` of `texts` with `commit` each, expecting `ok E`.
pub fn send_epochs(p: &mut Producer, texts: &[String], from: u64, to: u64) {
    for epoch in from..=to {
        p.send(&(texts[epoch as usize - 1].clone() + "commit\n")).unwrap();
        assert_eq!(p.line().unwrap(), format!("ok {}", epoch));
    }
}
