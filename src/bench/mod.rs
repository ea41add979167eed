//! **Measurement**: `ripples bench`, systems side by side on the same generated stream.
//!
//! A scenario ([`scenario`]) fixes a stream (generated deterministically from the seed). Each
//! system runs it in its own child process ([`child`]), so that its memory is its own; the parent
//! ([`run`]) checks that all complete (non-partial) systems agree on the final result, and
//! [`table`](mod@table) and [`plot`] show the figures ([`result`]).
//!
//! The systems ([`system`] holds the trait, [`systems`] the implementations and the registry):
//! * `ripples` — what `ripples run` does by default (the insert-only fast path where it applies);
//! * `ripples-window` (`wcc-window` only) — the same window written as an event-time window;
//! * `ripples-general` — the fully dynamic differential path, forced;
//! * `dd-propagate` — plain differential dataflow as its documentation writes WCC;
//! * `uf-hash` — one sequential pass of union-find with a hash map from `u64` ids (insert-only);
//! * `uf-dense` — the same over dense array ids, remapped beforehand ([`dense`], not timed);
//! * `recompute` — a from-scratch computation over the live graph every epoch (union-find over
//!   dense ids for WCC; the sequential reference, [`reference`](mod@reference), for the other algorithms).
//!
//! `--shards K[,K…]` ([`shards`]) runs a WCC scenario's stream instead through K forest shares
//! and their union forest one after another in this process, timing each, to measure the
//! critical path of a K-worker run of that layout.
//!
//! [`runs_page`](mod@runs_page) turns recorded runs (`docs/runs/`) into the book's page of them.
//!
//! Errors are [`BenchError`]s.
//!
//! ```
//! use ripples::bench::{run_system, systems, Scenario};
//! // A tiny `wcc-insert`: 2^6 vertex ids, 4 * 2^6 edges inserted in epochs of 64.
//! let scenario = Scenario { scale: 6, edge_factor: 4, batch: 64, workers: 1, ..Scenario::new("wcc-insert").unwrap() };
//! let dir = tempfile::tempdir().unwrap();
//! let mut results = Vec::new();
//! for name in ["ripples", "uf-hash"] {
//!     let state = dir.path().join(name);
//!     // In this process; `ripples bench` runs each system in a child process instead.
//!     let result = run_system(&scenario, systems::by_name(name).unwrap().as_ref(), Some(&state)).unwrap();
//!     assert_eq!((result.updates, result.epochs, result.partial), (256, 5, false));
//!     results.push(std::fs::read_to_string(&state).unwrap());
//! }
//! // Both systems end with the same components.
//! assert_eq!(results[0], results[1]);
//! ```

pub mod child;
pub mod dense;
pub mod env;
mod error;
pub mod plot;
pub mod reference;
pub mod result;
pub mod run;
pub mod runs_page;
pub mod scenario;
pub mod shards;
pub mod system;
pub mod systems;
pub mod table;
pub mod timing;

pub use child::{child_main, run_system};
pub use error::BenchError;
pub use result::{Latency, Measured, SystemResult};
pub use run::{median_run, run_bench, BenchOptions};
pub use scenario::{Scenario, Stream, SCENARIOS};
pub use system::{Outcome, System};
pub use table::table;
