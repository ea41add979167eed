//! File level: reading whole files or a worker's byte range of one in large chunks, with
//! 1-based line numbers in every error.
//!
//! ```
//! use ripples::sources::parse::{read_edges_range, read_updates, write_edges};
//! use ripples::types::Update;
//! let dir = tempfile::tempdir().unwrap();
//! let graph = dir.path().join("g.e");
//! let edges: Vec<(u64, u64)> = (0..100).map(|i| (i, i + 1)).collect();
//! write_edges(&graph, &edges).unwrap();
//! // Three readers split the file by bytes; together they read every line once, in file order.
//! let mut all = Vec::new();
//! for reader in 0..3 {
//!     all.extend(read_edges_range(&graph, reader, 3).unwrap());
//! }
//! assert_eq!(all, edges.iter().map(|&(s, d)| (s, d, None)).collect::<Vec<_>>());
//! // Update files keep each update's line number (comments count as lines).
//! let updates = dir.path().join("u.txt");
//! std::fs::write(&updates, "# epoch 1\n+ 1 2\n- 0 1\n").unwrap();
//! assert_eq!(read_updates(&updates).unwrap(), vec![(2, Update::insert(1, 2)), (3, Update::delete(0, 1))]);
//! ```

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use super::line::*;
use super::{InputError, LineError, SourceError};
use crate::types::{Node, Time, Update};

/// Size of the blocks files are read in.
pub(super) const CHUNK: usize = 1 << 20;

pub(super) enum Stop {
    Io(io::Error),
    /// A line error at a byte offset, with the 1-based line number if already known.
    Line {
        offset: u64,
        line: Option<usize>,
        error: LineError,
    },
    /// A well-formed line the caller refused (say, an update that does not fit the window).
    Refused {
        line: usize,
        problem: String,
    },
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Io(e)
    }
}

/// Position of the first `\n` in `s`, scanning a word at a time.
#[inline]
pub(super) fn find_newline(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut i = 0;
    while i + 8 <= s.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&s[i..i + 8]);
        let x = u64::from_le_bytes(word) ^ NL;
        if (x.wrapping_sub(LO) & !x & HI) != 0 {
            break;
        }
        i += 8;
    }
    s[i..].iter().position(|&b| b == b'\n').map(|k| i + k)
}

pub(super) fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Calls `f(offset, line)` for every line (including its `\n`, if any) that starts at an offset
/// in `[pos, hi)`, where `reader` is positioned at `pos` and `pos` is a line start — except that
/// with `skip_first` the first segment (up to and including the first `\n`) is not passed on.
pub(super) fn scan_lines(
    mut reader: impl Read,
    mut pos: u64,
    hi: u64,
    mut skip_first: bool,
    mut f: impl FnMut(u64, &[u8]) -> Result<(), Stop>,
) -> Result<(), Stop> {
    let mut buf = vec![0u8; CHUNK];
    let mut filled = 0;
    let mut eof = false;
    loop {
        // Lines complete in buf[start..filled].
        let mut start = 0;
        while pos < hi {
            match find_newline(&buf[start..filled]) {
                Some(k) => {
                    let end = start + k + 1;
                    if skip_first {
                        skip_first = false;
                    } else {
                        f(pos, &buf[start..end])?;
                    }
                    pos += (end - start) as u64;
                    start = end;
                }
                None => break,
            }
        }
        if pos >= hi {
            return Ok(());
        }
        if eof {
            if start < filled && !skip_first {
                f(pos, &buf[start..filled])?;
            }
            return Ok(());
        }
        // Keep the partial line, grow the buffer if it is full, read more.
        buf.copy_within(start..filled, 0);
        filled -= start;
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = read_full(&mut reader, &mut buf[filled..])?;
        if n == 0 {
            eof = true;
        }
        filled += n;
    }
}

/// 1-based number of the line starting at byte `offset` of `path`.
pub(super) fn line_number_at(path: &Path, offset: u64) -> io::Result<usize> {
    let mut file = File::open(path)?.take(offset);
    let mut buf = vec![0u8; CHUNK];
    let mut newlines = 0usize;
    loop {
        let n = read_full(&mut file, &mut buf)?;
        if n == 0 {
            return Ok(newlines + 1);
        }
        newlines += buf[..n].iter().filter(|&&b| b == b'\n').count();
    }
}

pub(super) fn stop_to_error(path: &Path, stop: Stop) -> SourceError {
    match stop {
        Stop::Io(e) => SourceError::io(path, e),
        Stop::Line { offset, line, error } => {
            let line = match line {
                Some(line) => line,
                None => match line_number_at(path, offset) {
                    Ok(line) => line,
                    Err(e) => return SourceError::io(path, e),
                },
            };
            InputError { path: path.to_path_buf(), line, problem: error.to_string() }.into()
        }
        Stop::Refused { line, problem } => InputError { path: path.to_path_buf(), line, problem }.into(),
    }
}

/// The byte range `[lo, hi)` of reader `index` out of `peers` for a file of `len` bytes.
pub fn byte_range(len: u64, index: usize, peers: usize) -> (u64, u64) {
    assert!(peers > 0, "byte_range: peers must be at least 1");
    assert!(index < peers, "byte_range: index {index} out of range for {peers} peers");
    let at = |i: usize| (u128::from(len) * i as u128 / peers as u128) as u64;
    (at(index), at(index + 1))
}

/// Parses the lines of `path` that start in reader `index`'s byte range (see [`byte_range`]).
pub(super) fn read_range<T>(
    path: &Path,
    index: usize,
    peers: usize,
    parse: impl Fn(&[u8]) -> Result<Option<T>, LineError>,
) -> Result<Vec<T>, SourceError> {
    let mut file = File::open(path).map_err(|e| SourceError::io(path, e))?;
    let len = file.metadata().map_err(|e| SourceError::io(path, e))?.len();
    let (lo, hi) = byte_range(len, index, peers);
    let mut out = Vec::new();
    if lo >= hi {
        return Ok(out);
    }
    // A line starts in the range iff it starts at `lo` (byte lo-1 is `\n`) or after a `\n` in
    // [lo, hi-1). Starting one byte early and dropping the first segment covers both cases.
    let (pos, skip_first) = if lo == 0 { (0, false) } else { (lo - 1, true) };
    if pos > 0 {
        file.seek(SeekFrom::Start(pos)).map_err(|e| SourceError::io(path, e))?;
    }
    scan_lines(file, pos, hi, skip_first, |offset, line| match parse(line) {
        Ok(Some(item)) => {
            out.push(item);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(error) => Err(Stop::Line { offset, line: None, error }),
    })
    .map_err(|stop| stop_to_error(path, stop))?;
    Ok(out)
}

/// Reads the edges on the lines of an edge file that start in byte range
/// `[len*index/peers, len*(index+1)/peers)` (a line starting exactly at a boundary belongs to the
/// later range; a line is read to its end even past the range). Over `index` in `0..peers` the
/// readers see every line exactly once, in file order. Only the range is read (plus the end of
/// the last line and one byte before the range); an error names the file's 1-based line number.
///
/// Panics if `peers == 0` or `index >= peers`.
pub fn read_edges_range(
    path: &Path,
    index: usize,
    peers: usize,
) -> Result<Vec<(Node, Node, Option<f64>)>, SourceError> {
    read_range(path, index, peers, parse_edge_bytes)
}

/// [`read_edges_range`], keeping only the edges `(s, d)` for which `keep(s, d)` holds (the others
/// are parsed and checked, then dropped as they are read): a reader that needs a subset of the
/// file's edges never lists the rest.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("ripples-doc-where-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("g.e");
/// std::fs::write(&path, "1 2\n2 3\n3 4\n4 5\n").unwrap();
/// let odd = ripples::sources::read_edges_range_where(&path, 0, 1, |s, _| s % 2 == 1).unwrap();
/// assert_eq!(odd, vec![(1, 2, None), (3, 4, None)]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read_edges_range_where(
    path: &Path,
    index: usize,
    peers: usize,
    keep: impl Fn(Node, Node) -> bool,
) -> Result<Vec<(Node, Node, Option<f64>)>, SourceError> {
    read_range(path, index, peers, |line| Ok(parse_edge_bytes(line)?.filter(|&(s, d, _)| keep(s, d))))
}

/// The vertex-file counterpart of [`read_edges_range`].
pub fn read_vertices_range(path: &Path, index: usize, peers: usize) -> Result<Vec<Node>, SourceError> {
    read_range(path, index, peers, parse_vertex_bytes)
}

/// All edges of an edge file, in order.
pub fn read_edges(path: &Path) -> Result<Vec<(Node, Node, Option<f64>)>, SourceError> {
    read_edges_range(path, 0, 1)
}

/// All vertices of a vertex file, in order.
pub fn read_vertices(path: &Path) -> Result<Vec<Node>, SourceError> {
    read_vertices_range(path, 0, 1)
}

/// All updates of an update file, in order, each with the 1-based number of its line. An event
/// time (`@T`) is an error here; see [`read_timed_updates`].
pub fn read_updates(path: &Path) -> Result<Vec<(usize, Update)>, SourceError> {
    read_lines(path, parse_update_bytes, |line, u| (line, u))
}

/// All updates of an update file, in order, each with the 1-based number of its line and its
/// event time (`@T`), if the line has one.
pub fn read_timed_updates(path: &Path) -> Result<Vec<(usize, Update, Option<Time>)>, SourceError> {
    read_lines(path, parse_timed_update_bytes, |line, (u, t)| (line, u, t))
}

/// Every update of an update file, in order, handed to `keep` with the 1-based number of its line
/// and its event time (`@T`), if the line has one, as it is read (nothing is listed whole);
/// `keep`'s error stops the reading as the line's problem.
pub fn for_each_timed_update(
    path: &Path,
    mut keep: impl FnMut(usize, Update, Option<Time>) -> Result<(), String>,
) -> Result<(), SourceError> {
    for_each_line(path, parse_timed_update_bytes, |line, (u, t)| keep(line, u, t))
}

pub(super) fn read_lines<P, T>(
    path: &Path,
    parse: impl Fn(&[u8]) -> Result<Option<P>, LineError>,
    wrap: impl Fn(usize, P) -> T,
) -> Result<Vec<T>, SourceError> {
    let mut out = Vec::new();
    for_each_line(path, parse, |line, item| {
        out.push(wrap(line, item));
        Ok(())
    })?;
    Ok(out)
}

/// Every item `parse` finds in the file's lines, in order, handed to `keep` with the 1-based
/// number of its line; a line `parse` rejects, or an item `keep` refuses, stops the reading with
/// that line's problem.
fn for_each_line<P>(
    path: &Path,
    parse: impl Fn(&[u8]) -> Result<Option<P>, LineError>,
    mut keep: impl FnMut(usize, P) -> Result<(), String>,
) -> Result<(), SourceError> {
    let file = File::open(path).map_err(|e| SourceError::io(path, e))?;
    let mut line_no = 0usize;
    scan_lines(file, 0, u64::MAX, false, |offset, line| {
        line_no += 1;
        match parse(line) {
            Ok(Some(item)) => keep(line_no, item).map_err(|problem| Stop::Refused { line: line_no, problem }),
            Ok(None) => Ok(()),
            Err(error) => Err(Stop::Line { offset, line: Some(line_no), error }),
        }
    })
    .map_err(|stop| stop_to_error(path, stop))
}
