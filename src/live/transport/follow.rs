//! **Following a file** as it grows (`--follow FILE`), the way `tail -f` does.
//!
//! The file is read from its start and then polled every [`FOLLOW_POLL`] for new bytes. Only
//! complete (`\n`-terminated) lines count — a line still being written waits for its newline —
//! and the stream ends only with an `end` line (end of file just means "nothing new yet"). A file
//! that shrinks while being followed is an error: it must only grow.
//!
//! As with stdin there is nobody to answer: a rejected line stops the stream (or is skipped with
//! `--skip-bad-lines`).
//!
//! # Resuming after a restart
//!
//! A restarted run whose last durable epoch is `L` re-reads the file from its start and skips
//! everything up to and including its `L`-th `commit` line (an `end` still ends the stream).
//! This is exact when the file's epochs were closed by `commit` lines only; with `--batch` or
//! `--epoch-ms` a warning says so.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::{spawn, Event, LOCAL, READ_CHUNK};
use crate::live::config::LiveConfig;
use crate::live::error::{StartError, TransportError};
use crate::live::lines::{Item, LineSplitter};
use crate::types::Time;

/// How often a followed file is polled for new data.
const FOLLOW_POLL: Duration = Duration::from_millis(20);

/// Opens `path` and starts the thread that follows it.
pub(super) fn start(
    path: &Path,
    config: &LiveConfig,
    next_epoch: Time,
    events: SyncSender<Event>,
    shutdown: Arc<AtomicBool>,
    warnings: &mut Vec<String>,
) -> Result<(), StartError> {
    let file = File::open(path).map_err(|source| StartError::Follow { path: path.to_path_buf(), source })?;
    // Epoch k (k >= 1) was closed by the file's k-th `commit` line.
    let skip_commits = next_epoch.saturating_sub(1);
    if skip_commits > 0 && (config.batch.is_some() || config.epoch_ms.is_some()) {
        warnings.push(format!(
            "resuming {} after its commit line number {skip_commits}: this is exact only \
             if its epochs were closed by commit lines alone (not by --batch or \
             --epoch-ms)",
            path.display()
        ));
    }
    let path: PathBuf = path.to_path_buf();
    spawn("ripples-live-follow", move || follow(&path, file, skip_commits, events, shutdown))
}

/// The follow thread's body.
fn follow(path: &Path, mut file: File, mut skip_commits: u64, events: SyncSender<Event>, shutdown: Arc<AtomicBool>) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut splitter = LineSplitter::default();
    let mut offset: u64 = 0;
    while !shutdown.load(Ordering::SeqCst) {
        let n = match file.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = events.send(Event::Failed(TransportError::Read { path: path.to_path_buf(), source: e }));
                return;
            }
        };
        if n == 0 {
            if let Ok(meta) = std::fs::metadata(path) {
                if meta.len() < offset {
                    let shrank = TransportError::Shrank { path: path.to_path_buf(), from: offset, to: meta.len() };
                    let _ = events.send(Event::Failed(shrank));
                    return;
                }
            }
            thread::sleep(FOLLOW_POLL);
            continue;
        }
        offset += n as u64;
        let mut lines = Vec::new();
        splitter.feed(&buf[..n], &mut lines);
        if skip_commits > 0 {
            // Already durable from an earlier run: drop through the `skip_commits`-th commit
            // (an `end` still ends the stream).
            lines.retain(|line| match line.item {
                Item::End => true,
                _ if skip_commits == 0 => true,
                Item::Commit => {
                    skip_commits -= 1;
                    false
                }
                _ => false,
            });
        }
        if !lines.is_empty() && events.send(Event::Lines { conn: LOCAL, lines }).is_err() {
            return;
        }
    }
}
