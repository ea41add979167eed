//! **Configuration** of the live front end: where update lines come from ([`LiveInput`]) and the
//! rules that turn them into epochs ([`LiveConfig`]).
//!
//! An epoch closes on a producer's `commit`; also after [`LiveConfig::batch`] accepted update
//! lines (if set), and every [`LiveConfig::epoch_ms`] of wall clock (if set; an idle stream then
//! produces empty epochs). [`LiveConfig::max_behind`] bounds how far the dataflow may fall behind
//! before input stops being read (see [`backpressure`](super::backpressure)); with
//! [`LiveConfig::state_dir`] every epoch is made durable before it is acknowledged (see
//! [`state`](super::state)).
//!
//! ```
//! use ripples::live::{LiveConfig, LiveInput};
//! // `--listen 127.0.0.1:7000 --batch 1000 -w 4`
//! let config = LiveConfig {
//!     batch: Some(1000),
//!     workers: 4,
//!     ..LiveConfig::new(LiveInput::Listen("127.0.0.1:7000".into()))
//! };
//! assert_eq!(config.max_behind, 16, "the default backpressure bound");
//! assert!(config.epoch_ms.is_none() && config.state_dir.is_none() && !config.insert_only);
//! ```

use std::path::PathBuf;

use crate::sources::window::WindowSpec;
use crate::types::RecordCheck;

/// Where live update lines come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveInput {
    /// Read update lines from standard input (`--live`); its end is an `end`.
    Stdin,
    /// Listen on `host:port` for producers.
    Listen(String),
    /// Follow a file as it grows.
    Follow(PathBuf),
    /// Typed submissions from the program the job runs in (`ripples::job`).
    Embedded(super::transport::embedded::EmbeddedInput),
}

/// Configuration of the live front end.
#[derive(Clone, Debug)]
pub struct LiveConfig {
    /// Where update lines come from.
    pub input: LiveInput,
    /// Initial graph file, read as epoch 0 on a fresh start only.
    pub graph: Option<PathBuf>,
    /// Vertex file: vertices in the result even without edges. The front end does not read it:
    /// the vertex set never changes, so every worker of every process reads its share at every
    /// start (the driver does, as for file input).
    pub vertices: Option<PathBuf>,
    /// Close an epoch after this many accepted update lines.
    pub batch: Option<usize>,
    /// Close an epoch every this many milliseconds, even when idle.
    pub epoch_ms: Option<u64>,
    /// Backpressure: stop reading while `accepted - completed > max_behind`.
    pub max_behind: u64,
    /// `--state-dir`: log every epoch there before it is acknowledged, and recover from it on a
    /// restart (see [`state`](super::state)).
    pub state_dir: Option<PathBuf>,
    /// Snapshot the multiset at every epoch that is a multiple of this (with `state_dir`).
    pub snapshot_every: Option<u64>,
    /// Number of local workers: one receiver each.
    pub workers: usize,
    /// Declared insert-only (`--insert-only`): deletions are rejected, and the driver may use
    /// insert-only fast paths.
    pub insert_only: bool,
    /// Event-time windows: every update line carries `@T` and only inserts; late lines are
    /// dropped (counted) or rejected (see [`crate::sources::window`]).
    pub window: Option<WindowSpec>,
    /// Stdin and followed files: warn about a rejected line and skip it, instead of stopping.
    pub skip_bad_lines: bool,
    /// Windowed streams: write every late line and what happened to it here.
    pub late_output: Option<PathBuf>,
    /// TLS for TCP producers: the certificate chain and private key (PEM files).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// TCP producers must open with `auth TOKEN` (required on a non-loopback address).
    pub auth_token: Option<String>,
    /// The run's record input (`record + TEXT` lines, `Job::push_record`): each record's text
    /// must pass this check; `None`: record lines are rejected. The driver sets it from the
    /// dataflows it runs ([`RecordCheck`]).
    pub records: Option<RecordCheck>,
}

impl LiveConfig {
    /// A configuration with one worker, `max_behind` 16 and every option off.
    pub fn new(input: LiveInput) -> Self {
        LiveConfig {
            input,
            insert_only: false,
            window: None,
            skip_bad_lines: false,
            auth_token: None,
            tls: None,
            late_output: None,
            graph: None,
            vertices: None,
            batch: None,
            epoch_ms: None,
            max_behind: 16,
            state_dir: None,
            snapshot_every: None,
            workers: 1,
            records: None,
        }
    }
}
