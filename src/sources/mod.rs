//! Where graphs and update streams come from: text files, generators, and stream shapes.
//!
//! # File formats
//!
//! All files are plain text, one record per line. Common rules:
//!
//! * Fields are separated by any run of spaces, tabs or commas, so `1 2`, `1\t2`, `1,2` and
//!   `1 , 2` are the same line. Leading and trailing separators are ignored.
//! * Lines may end in `\n` or `\r\n`; the last line need not end in a newline. A UTF-8 byte-order
//!   mark at the start of a line is ignored.
//! * Blank lines (also whitespace-only ones) are skipped, and so are comment lines: those whose
//!   first non-blank character is `#` or `%` (so SNAP and Matrix-Market style headers pass).
//!   A comment cannot follow data on the same line.
//! * A vertex id is a decimal integer from `0` to `18446744073709551615` (`u64::MAX`), written
//!   with digits only: no sign, no decimal point, no exponent (`007` is `7`).
//! * A weight is a finite number `>= 0` in Rust's float syntax (`1`, `0.5`, `.5`, `2e-3`); `NaN`,
//!   `inf` and negative numbers are rejected, `-0` reads as `0`. An absent weight means
//!   [`DEFAULT_WEIGHT`](crate::types::DEFAULT_WEIGHT).
//!
//! **Edge files** — `src dst [weight]`, one directed edge per line:
//!
//! ```text
//! # a triangle, one edge weighted
//! 0 1
//! 1 2 0.5
//! 2,0
//! ```
//!
//! **Vertex files** — one vertex id per line (nothing else on the line).
//!
//! **Update files** — one change of the edge multiset per line: `+ src dst [weight]` inserts one
//! copy, `- src dst [weight]` deletes one copy, and a bare `src dst [weight]` is an insertion.
//! The sign is a field of its own (`+1 2` is an error, not "insert 1 2"):
//!
//! ```text
//! + 3 4
//! - 0 1
//! 5 6 2.5
//! ```
//!
//! An update line may end with an **event time** `@T` (`T` an integer from 0 to `u64::MAX`, a
//! field of its own): `+ 3 4 @1700`. Event times are what `--window` / `--tumbling` windows are
//! made of (see [`window`]); without a window flag a line with `@T` is an error.
//!
//! A bad line stops reading with a [`SourceError`] whose message is `path:line: problem`, the
//! line number being 1-based in the whole file, e.g.
//! `graph.txt:17: negative vertex id "-5" (vertex ids are integers from 0 to 18446744073709551615)`.
//! An unreadable file gives `cannot read path: reason`.
//!
//! # Parallel reading
//!
//! [`read_edges_range`] and [`read_vertices_range`] split a file among `peers` readers by bytes:
//! reader `i` parses the lines that *start* in `[len*i/peers, len*(i+1)/peers)`, so the readers
//! together see every line exactly once (reader order = file order), and each reads only about
//! `len/peers` bytes.
//!
//! # Generators and streams
//!
//! [`generate`] has seeded R-MAT (Graph500) and Erdős–Rényi graphs; [`stream`] turns edge lists
//! into insert-only, sliding-window and random-churn update streams. Everything is
//! deterministic for a given seed.
//!
//! ```
//! use ripples::sources::{churn, read_edges, read_updates, rmat, write_edges, write_updates};
//! let dir = tempfile::tempdir().unwrap();
//! // A seeded R-MAT graph and 100 random changes on top of it, written and read back.
//! let graph = rmat(5, 4, 11);
//! let updates = churn(&graph, 100, 0.3, 11);
//! let (g, u) = (dir.path().join("g.e"), dir.path().join("u.txt"));
//! write_edges(&g, &graph).unwrap();
//! write_updates(&u, &updates).unwrap();
//! let read: Vec<(u64, u64)> = read_edges(&g).unwrap().into_iter().map(|(s, d, _)| (s, d)).collect();
//! assert_eq!(read, graph);
//! let read: Vec<_> = read_updates(&u).unwrap().into_iter().map(|(_line, update)| update).collect();
//! assert_eq!(read, updates);
//! assert!(updates.iter().any(|x| x.diff < 0) && updates.iter().any(|x| x.diff > 0));
//! ```

pub mod generate;
pub mod parse;
pub mod stream;
pub mod window;

pub use generate::{erdos_renyi, rmat};
pub use parse::{
    parse_edge_line, parse_timed_update_line, parse_update_line, parse_vertex_line, read_edges, read_edges_range,
    read_edges_range_where, read_timed_updates, read_updates, read_vertices, read_vertices_range, write_edges,
    write_updates, write_vertices, InputError, LineError, SourceError,
};
pub use stream::{churn, insert_only, sliding_window};
