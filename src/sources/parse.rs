//! Parsing and writing the text formats (see the [module docs of `sources`](super) for the
//! formats themselves).
//!
//! * Line parsers ([`parse_edge_line`], [`parse_vertex_line`], [`parse_update_line`] and their
//!   byte-slice twins) return `Ok(None)` for a skipped line (blank, whitespace-only, or a comment
//!   starting with `#` or `%`), `Ok(Some(..))` for a data line, and a [`LineError`] otherwise.
//!   They never allocate on the success path and never panic on any input.
//! * File readers ([`read_edges_range`], [`read_vertices_range`], [`read_updates`]) read in large
//!   chunks and report problems as [`SourceError`], whose `Display` names the file (and, for a bad
//!   line, its 1-based line number: `path:line: problem`).
//! * Writers ([`write_edges`], [`write_updates`], …) produce lines the readers accept.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::types::{Node, Time, Update};

/// What is wrong with one line. The messages are meant for humans and quote the offending field
/// (long fields are shortened).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("too few fields: expected {expected}, found {found}")]
    TooFewFields { expected: &'static str, found: usize },
    #[error("too many fields: expected {expected}, found {found}")]
    TooManyFields { expected: &'static str, found: usize },
    #[error("{0:?} is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)")]
    BadId(String),
    #[error("negative vertex id {0:?} (vertex ids are integers from 0 to 18446744073709551615)")]
    NegativeId(String),
    #[error("vertex id {0:?} is too large (the largest vertex id is 18446744073709551615)")]
    IdOverflow(String),
    #[error("{0:?} is not a weight (weights are finite numbers >= 0, such as 1, 0.5 or 2e-3)")]
    BadWeight(String),
    #[error("weight {0:?} is NaN (weights are finite numbers >= 0)")]
    NanWeight(String),
    #[error("weight {0:?} is infinite (weights are finite numbers >= 0)")]
    InfiniteWeight(String),
    #[error("negative weight {0:?} (weights are finite numbers >= 0)")]
    NegativeWeight(String),
    #[error(
        "unknown sign {0:?}: an update line starts with \"+\" or \"-\" as a field of its own \
         (as in \"- 1 2\"), or directly with the source vertex id"
    )]
    UnknownSign(String),
    #[error(
        "{0:?} is not an event time (an event time is \"@\" followed by an integer from 0 to \
         18446744073709551615, as the last field of an update line, as in \"1 2 @17\")"
    )]
    BadTime(String),
    #[error("an event time needs an update before it, as in \"1 2 @17\"")]
    TimeWithoutUpdate,
}

/// A bad line in a file. `Display` is exactly `{path}:{line}: {problem}`, `line` being 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {problem}", path.display())]
pub struct InputError {
    pub path: PathBuf,
    /// 1-based line number in the whole file.
    pub line: usize,
    pub problem: String,
}

/// Failure to read an input file.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A line of the file is malformed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The file could not be opened or read: `cannot read {path}: {error}`. (The I/O error is
    /// part of the message and deliberately not exposed as `source()`, so that error-chain
    /// printers such as `anyhow`'s `{:#}` do not repeat it.)
    #[error("cannot read {}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
}

impl SourceError {
    fn io(path: &Path, error: io::Error) -> Self {
        SourceError::Io { path: path.to_path_buf(), error }
    }
}

const EDGE_FIELDS: &str = "2 or 3 (src dst [weight])";
const VERTEX_FIELDS: &str = "1 (a vertex id)";
const BARE_UPDATE_FIELDS: &str = "2 or 3 (src dst [weight])";
const SIGNED_UPDATE_FIELDS: &str = "3 or 4 (+|- src dst [weight])";

// ---------------------------------------------------------------------------------------------
// Line level
// ---------------------------------------------------------------------------------------------

#[inline(always)]
fn is_sep(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b',' | b'\r' | b'\n')
}

#[inline(always)]
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Drops a UTF-8 byte-order mark at the start of a line (it can only occur on the first line).
#[inline(always)]
fn strip_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

/// Whether a line is skipped: blank, whitespace-only, or its first non-blank byte is `#` or `%`.
#[inline]
pub fn is_skipped_line(line: &[u8]) -> bool {
    match strip_bom(line).iter().find(|&&b| !is_blank(b)) {
        None => true,
        Some(&b) => b == b'#' || b == b'%',
    }
}

/// The first (up to) four fields of a line and the total number of fields.
#[inline]
fn split_fields(line: &[u8]) -> ([&[u8]; 4], usize) {
    let mut fields: [&[u8]; 4] = [&[]; 4];
    let mut count = 0;
    let mut i = 0;
    let n = line.len();
    loop {
        while i < n && is_sep(line[i]) {
            i += 1;
        }
        if i == n {
            return (fields, count);
        }
        let start = i;
        while i < n && !is_sep(line[i]) {
            i += 1;
        }
        if count < 4 {
            fields[count] = &line[start..i];
        }
        count += 1;
    }
}

/// A field as shown in an error message: lossily decoded and cut to a readable length.
fn shown(field: &[u8]) -> String {
    const MAX_CHARS: usize = 40;
    let text = String::from_utf8_lossy(field);
    match text.char_indices().nth(MAX_CHARS) {
        None => text.into_owned(),
        Some((cut, _)) => format!("{}...", &text[..cut]),
    }
}

fn bad_id(field: &[u8]) -> LineError {
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    if digits(field) {
        LineError::IdOverflow(shown(field))
    } else if field.first() == Some(&b'-') && digits(&field[1..]) {
        LineError::NegativeId(shown(field))
    } else {
        LineError::BadId(shown(field))
    }
}

/// Parses a vertex id: one or more ASCII digits, no sign, at most `u64::MAX`.
#[inline]
pub fn parse_id(field: &[u8]) -> Result<Node, LineError> {
    if field.is_empty() {
        return Err(LineError::BadId(String::new()));
    }
    let mut value: u64 = 0;
    for &b in field {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return Err(bad_id(field));
        }
        value = match value.checked_mul(10).and_then(|v| v.checked_add(u64::from(digit))) {
            Some(v) => v,
            None => return Err(bad_id(field)),
        };
    }
    Ok(value)
}

/// Parses a weight: a finite number `>= 0` in any syntax `f64::from_str` accepts (`1`, `0.5`,
/// `2e-3`, …). `-0` is read as `0`.
#[inline]
pub fn parse_weight(field: &[u8]) -> Result<f64, LineError> {
    let value = std::str::from_utf8(field)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or_else(|| LineError::BadWeight(shown(field)))?;
    if value.is_nan() {
        Err(LineError::NanWeight(shown(field)))
    } else if value.is_infinite() {
        Err(LineError::InfiniteWeight(shown(field)))
    } else if value < 0.0 {
        Err(LineError::NegativeWeight(shown(field)))
    } else if value == 0.0 {
        Ok(0.0)
    } else {
        Ok(value)
    }
}

#[inline]
fn parse_src_dst_weight(fields: &[&[u8]]) -> Result<(Node, Node, Option<f64>), LineError> {
    let src = parse_id(fields[0])?;
    let dst = parse_id(fields[1])?;
    let weight = match fields.get(2) {
        Some(field) => Some(parse_weight(field)?),
        None => None,
    };
    Ok((src, dst, weight))
}

// Fast paths: one pass over the common shapes `src dst[ weight]` and `+ src dst[ weight]`.
// They return `None` for anything unusual (including every error), and the general parsers then
// decide; tests check that both agree whenever the fast path answers.

/// Reads at most 19 digits (which cannot overflow) at `*i`.
#[inline(always)]
fn fast_digits(s: &[u8], i: &mut usize) -> Option<u64> {
    let start = *i;
    let mut value = 0u64;
    while let Some(&b) = s.get(*i) {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
        *i += 1;
    }
    let n = *i - start;
    (n > 0 && n <= 19).then_some(value)
}

/// Skips separators at `*i`; returns whether there were any.
#[inline(always)]
fn fast_seps(s: &[u8], i: &mut usize) -> bool {
    let start = *i;
    while s.get(*i).is_some_and(|&b| is_sep(b)) {
        *i += 1;
    }
    *i > start
}

#[inline(always)]
fn fast_src_dst_weight(s: &[u8]) -> Option<(Node, Node, Option<f64>)> {
    let mut i = 0;
    let src = fast_digits(s, &mut i)?;
    if !fast_seps(s, &mut i) {
        return None;
    }
    let dst = fast_digits(s, &mut i)?;
    let separated = fast_seps(s, &mut i);
    if i == s.len() {
        return Some((src, dst, None));
    }
    if !separated {
        return None;
    }
    let start = i;
    while i < s.len() && !is_sep(s[i]) {
        i += 1;
    }
    let field = &s[start..i];
    fast_seps(s, &mut i);
    if i != s.len() {
        return None;
    }
    let weight = parse_weight(field).ok()?;
    Some((src, dst, Some(weight)))
}

#[inline(always)]
fn fast_update(s: &[u8]) -> Option<Update> {
    let (diff, rest) = match s {
        [b'+', sep, ..] if is_sep(*sep) => (1, &s[2..]),
        [b'-', sep, ..] if is_sep(*sep) => (-1, &s[2..]),
        _ => (1, s),
    };
    let mut i = 0;
    fast_seps(rest, &mut i);
    let (src, dst, weight) = fast_src_dst_weight(&rest[i..])?;
    Some(Update { src, dst, weight, diff })
}

/// [`parse_edge_line`] on raw bytes (the line may include its `\n` / `\r\n`).
#[inline]
pub fn parse_edge_bytes(line: &[u8]) -> Result<Option<(Node, Node, Option<f64>)>, LineError> {
    match fast_src_dst_weight(line) {
        Some(edge) => Ok(Some(edge)),
        None => parse_edge_general(line),
    }
}

fn parse_edge_general(line: &[u8]) -> Result<Option<(Node, Node, Option<f64>)>, LineError> {
    let line = strip_bom(line);
    if is_skipped_line(line) {
        return Ok(None);
    }
    let (fields, count) = split_fields(line);
    match count {
        0 | 1 => Err(LineError::TooFewFields { expected: EDGE_FIELDS, found: count }),
        2 | 3 => parse_src_dst_weight(&fields[..count]).map(Some),
        _ => Err(LineError::TooManyFields { expected: EDGE_FIELDS, found: count }),
    }
}

/// Parses one line of an edge file: `src dst [weight]`, fields separated by any run of spaces,
/// tabs or commas. Returns `Ok(None)` for a skipped line (blank, or a `#` / `%` comment).
pub fn parse_edge_line(line: &str) -> Result<Option<(Node, Node, Option<f64>)>, LineError> {
    parse_edge_bytes(line.as_bytes())
}

/// [`parse_vertex_line`] on raw bytes.
#[inline]
pub fn parse_vertex_bytes(line: &[u8]) -> Result<Option<Node>, LineError> {
    let line = strip_bom(line);
    if is_skipped_line(line) {
        return Ok(None);
    }
    let (fields, count) = split_fields(line);
    match count {
        0 => Err(LineError::TooFewFields { expected: VERTEX_FIELDS, found: 0 }),
        1 => parse_id(fields[0]).map(Some),
        _ => Err(LineError::TooManyFields { expected: VERTEX_FIELDS, found: count }),
    }
}

/// Parses one line of a vertex file: a single vertex id. Returns `Ok(None)` for a skipped line.
pub fn parse_vertex_line(line: &str) -> Result<Option<Node>, LineError> {
    parse_vertex_bytes(line.as_bytes())
}

/// [`parse_update_line`] on raw bytes.
#[inline]
pub fn parse_update_bytes(line: &[u8]) -> Result<Option<Update>, LineError> {
    match fast_update(line) {
        Some(update) => Ok(Some(update)),
        None => parse_update_general(line),
    }
}

fn parse_update_general(line: &[u8]) -> Result<Option<Update>, LineError> {
    let line = strip_bom(line);
    if is_skipped_line(line) {
        return Ok(None);
    }
    let (fields, count) = split_fields(line);
    if count == 0 {
        return Err(LineError::TooFewFields { expected: BARE_UPDATE_FIELDS, found: 0 });
    }
    let first = fields[0];
    // `skip` = number of sign fields before src.
    let (diff, skip, expected) = if first[0].is_ascii_digit() {
        (1i8, 0, BARE_UPDATE_FIELDS)
    } else if first == b"+" {
        (1i8, 1, SIGNED_UPDATE_FIELDS)
    } else if first == b"-" {
        (-1i8, 1, SIGNED_UPDATE_FIELDS)
    } else {
        return Err(LineError::UnknownSign(shown(first)));
    };
    match count - skip {
        0 | 1 => Err(LineError::TooFewFields { expected, found: count }),
        2 | 3 => {
            let (src, dst, weight) = parse_src_dst_weight(&fields[skip..count])?;
            Ok(Some(Update { src, dst, weight, diff }))
        }
        _ => Err(LineError::TooManyFields { expected, found: count }),
    }
}

/// Splits a trailing event-time field `@T` off a line: `(rest, Some(field after '@'))`, or
/// `(line, None)` when the last field does not start with `@`.
#[inline]
fn split_time(line: &[u8]) -> (&[u8], Option<&[u8]>) {
    let mut end = line.len();
    while end > 0 && is_blank(line[end - 1]) {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && !is_sep(line[start - 1]) {
        start -= 1;
    }
    match line.get(start) {
        Some(b'@') if start < end => (&line[..start], Some(&line[start + 1..end])),
        _ => (line, None),
    }
}

/// [`parse_timed_update_line`] on raw bytes.
#[inline]
pub fn parse_timed_update_bytes(line: &[u8]) -> Result<Option<(Update, Option<Time>)>, LineError> {
    let (rest, time) = split_time(line);
    let Some(field) = time else {
        return parse_update_bytes(line).map(|u| u.map(|u| (u, None)));
    };
    if is_skipped_line(line) {
        return Ok(None);
    }
    let digits = !field.is_empty() && field.len() <= 20 && field.iter().all(u8::is_ascii_digit);
    let time = digits.then(|| std::str::from_utf8(field).ok()?.parse::<Time>().ok()).flatten().ok_or_else(|| {
        let mut shown_field = b"@".to_vec();
        shown_field.extend_from_slice(field);
        LineError::BadTime(shown(&shown_field))
    })?;
    match parse_update_bytes(rest)? {
        Some(update) => Ok(Some((update, Some(time)))),
        None => Err(LineError::TimeWithoutUpdate),
    }
}

/// Parses one line of an update file that may end with an event time: `[+|-] src dst [weight]
/// [@T]` (see [`parse_update_line`] for the rest). `T` is a `u64`; the `@` starts a field of its
/// own. Returns the update and its event time, if the line has one.
pub fn parse_timed_update_line(line: &str) -> Result<Option<(Update, Option<Time>)>, LineError> {
    parse_timed_update_bytes(line.as_bytes())
}

/// Parses one line of an update file: `+ src dst [weight]` (insert one copy), `- src dst
/// [weight]` (delete one copy), or a bare `src dst [weight]` (insert). The sign must be a field
/// of its own: `+1 2` is an [`LineError::UnknownSign`]. Returns `Ok(None)` for a skipped line.
pub fn parse_update_line(line: &str) -> Result<Option<Update>, LineError> {
    parse_update_bytes(line.as_bytes())
}

// ---------------------------------------------------------------------------------------------
// File level
// ---------------------------------------------------------------------------------------------

/// Size of the blocks files are read in.
const CHUNK: usize = 1 << 20;

enum Stop {
    Io(io::Error),
    /// A line error at a byte offset, with the 1-based line number if already known.
    Line {
        offset: u64,
        line: Option<usize>,
        error: LineError,
    },
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Io(e)
    }
}

/// Position of the first `\n` in `s`, scanning a word at a time.
#[inline]
fn find_newline(s: &[u8]) -> Option<usize> {
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

fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
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
fn scan_lines(
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
fn line_number_at(path: &Path, offset: u64) -> io::Result<usize> {
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

fn stop_to_error(path: &Path, stop: Stop) -> SourceError {
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
fn read_range<T>(
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

fn read_lines<P, T>(
    path: &Path,
    parse: impl Fn(&[u8]) -> Result<Option<P>, LineError>,
    wrap: impl Fn(usize, P) -> T,
) -> Result<Vec<T>, SourceError> {
    let file = File::open(path).map_err(|e| SourceError::io(path, e))?;
    let mut out = Vec::new();
    let mut line_no = 0usize;
    scan_lines(file, 0, u64::MAX, false, |offset, line| {
        line_no += 1;
        match parse(line) {
            Ok(Some(update)) => {
                out.push(wrap(line_no, update));
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(error) => Err(Stop::Line { offset, line: Some(line_no), error }),
        }
    })
    .map_err(|stop| stop_to_error(path, stop))?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

/// Appends the decimal digits of `v`.
#[inline]
fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends `src dst\n`.
pub fn push_edge_line(out: &mut Vec<u8>, src: Node, dst: Node) {
    push_u64(out, src);
    out.push(b' ');
    push_u64(out, dst);
    out.push(b'\n');
}

/// Appends `+ src dst\n` or `- src dst\n`, with ` weight` before the newline if the update has
/// one (written so that it parses back to the same `f64`).
pub fn push_update_line(out: &mut Vec<u8>, update: &Update) {
    out.extend_from_slice(if update.diff < 0 { b"- " } else { b"+ " });
    push_u64(out, update.src);
    out.push(b' ');
    push_u64(out, update.dst);
    if let Some(w) = update.weight {
        // `Display` for f64 prints the shortest text that parses back to the same value.
        write!(out, " {w}").expect("writing to a Vec cannot fail");
    }
    out.push(b'\n');
}

fn write_lines<T>(path: &Path, items: &[T], push: impl Fn(&mut Vec<u8>, &T)) -> io::Result<()> {
    let mut file = BufWriter::with_capacity(CHUNK, File::create(path)?);
    let mut buf = Vec::with_capacity(CHUNK + 256);
    for item in items {
        push(&mut buf, item);
        if buf.len() >= CHUNK {
            file.write_all(&buf)?;
            buf.clear();
        }
    }
    file.write_all(&buf)?;
    file.flush()
}

/// Writes an edge file: one `src dst\n` line per edge.
pub fn write_edges(path: &Path, edges: &[(Node, Node)]) -> io::Result<()> {
    write_lines(path, edges, |buf, &(s, d)| push_edge_line(buf, s, d))
}

/// Writes a vertex file: one `id\n` line per vertex.
pub fn write_vertices(path: &Path, vertices: &[Node]) -> io::Result<()> {
    write_lines(path, vertices, |buf, &v| {
        push_u64(buf, v);
        buf.push(b'\n');
    })
}

/// Writes an update file: one `+ src dst[ weight]\n` or `- src dst[ weight]\n` line per update.
pub fn write_updates(path: &Path, updates: &[Update]) -> io::Result<()> {
    write_lines(path, updates, push_update_line)
}

/// Writes update lines with event times (`+ src dst [weight] @T`).
pub fn write_timed_updates(path: &Path, updates: &[(Update, Time)]) -> io::Result<()> {
    write_lines(path, updates, |out, (u, t)| {
        push_update_line(out, u);
        out.pop();
        out.extend_from_slice(b" @");
        push_u64(out, *t);
        out.push(b'\n');
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn edge(line: &str) -> Result<Option<(Node, Node, Option<f64>)>, String> {
        parse_edge_line(line).map_err(|e| e.to_string())
    }

    #[test]
    fn edge_lines() {
        assert_eq!(edge("1 2"), Ok(Some((1, 2, None))));
        assert_eq!(edge("1\t2\r\n"), Ok(Some((1, 2, None))));
        assert_eq!(edge("  1 ,\t, 2  \n"), Ok(Some((1, 2, None))));
        assert_eq!(edge("1,2,0.5"), Ok(Some((1, 2, Some(0.5)))));
        assert_eq!(edge("1 2 3"), Ok(Some((1, 2, Some(3.0)))));
        assert_eq!(edge("1 2 2e-3"), Ok(Some((1, 2, Some(2e-3)))));
        assert_eq!(edge("1 2 -0"), Ok(Some((1, 2, Some(0.0)))));
        assert!(parse_edge_line("1 2 -0").unwrap().unwrap().2.unwrap().is_sign_positive());
        assert_eq!(edge("007 18446744073709551615"), Ok(Some((7, u64::MAX, None))));
        assert_eq!(edge("\u{feff}1 2"), Ok(Some((1, 2, None))));
        for skipped in ["", "\n", "\r\n", "   \t ", "# a comment", "  % matrix market", "#1 2"] {
            assert_eq!(edge(skipped), Ok(None), "{skipped:?}");
        }
    }

    #[test]
    fn edge_errors() {
        let cases = [
            ("1", "too few fields: expected 2 or 3 (src dst [weight]), found 1"),
            (",,", "too few fields: expected 2 or 3 (src dst [weight]), found 0"),
            ("1 2 3 4 5", "too many fields: expected 2 or 3 (src dst [weight]), found 5"),
            ("a 2", "\"a\" is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)"),
            ("1 2.5", "\"2.5\" is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)"),
            ("+1 2", "\"+1\" is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)"),
            ("-5 2", "negative vertex id \"-5\" (vertex ids are integers from 0 to 18446744073709551615)"),
            (
                "1 18446744073709551616",
                "vertex id \"18446744073709551616\" is too large (the largest vertex id is 18446744073709551615)",
            ),
            ("1 2 x", "\"x\" is not a weight (weights are finite numbers >= 0, such as 1, 0.5 or 2e-3)"),
            ("1 2 NaN", "weight \"NaN\" is NaN (weights are finite numbers >= 0)"),
            ("1 2 inf", "weight \"inf\" is infinite (weights are finite numbers >= 0)"),
            ("1 2 1e400", "weight \"1e400\" is infinite (weights are finite numbers >= 0)"),
            ("1 2 -0.5", "negative weight \"-0.5\" (weights are finite numbers >= 0)"),
        ];
        for (line, message) in cases {
            assert_eq!(edge(line), Err(message.to_string()), "{line:?}");
        }
        // Overflow with a non-digit later is a bad id, not an overflow.
        assert!(matches!(parse_edge_line("99999999999999999999x 1"), Err(LineError::BadId(_))));
        // Long fields are shortened in messages.
        let long = "x".repeat(1000);
        let msg = edge(&format!("{long} 1")).unwrap_err();
        assert!(msg.len() < 200, "{msg}");
    }

    #[test]
    fn vertex_lines() {
        assert_eq!(parse_vertex_line("42\r\n"), Ok(Some(42)));
        assert_eq!(parse_vertex_line("  # c"), Ok(None));
        assert_eq!(parse_vertex_line(" \t"), Ok(None));
        assert_eq!(
            parse_vertex_line("1 2").unwrap_err().to_string(),
            "too many fields: expected 1 (a vertex id), found 2"
        );
        assert_eq!(
            parse_vertex_line(",").unwrap_err().to_string(),
            "too few fields: expected 1 (a vertex id), found 0"
        );
        assert!(matches!(parse_vertex_line("-3"), Err(LineError::NegativeId(_))));
    }

    #[test]
    fn update_lines() {
        let u = |src, dst, weight, diff| Ok(Some(Update { src, dst, weight, diff }));
        assert_eq!(parse_update_line("+ 1 2"), u(1, 2, None, 1));
        assert_eq!(parse_update_line("- 1 2"), u(1, 2, None, -1));
        assert_eq!(parse_update_line("-,1,2,0.25\r\n"), u(1, 2, Some(0.25), -1));
        assert_eq!(parse_update_line("3 4 5"), u(3, 4, Some(5.0), 1));
        assert_eq!(parse_update_line("# + 1 2"), Ok(None));
        let err = |line: &str| parse_update_line(line).unwrap_err().to_string();
        assert_eq!(
            err("+1 2"),
            "unknown sign \"+1\": an update line starts with \"+\" or \"-\" as a field of its own \
             (as in \"- 1 2\"), or directly with the source vertex id"
        );
        assert!(err("-5 2").starts_with("unknown sign \"-5\""));
        assert!(err("x 1 2").starts_with("unknown sign \"x\""));
        assert_eq!(err("+ 1"), "too few fields: expected 3 or 4 (+|- src dst [weight]), found 2");
        assert_eq!(err("+"), "too few fields: expected 3 or 4 (+|- src dst [weight]), found 1");
        assert_eq!(err("1"), "too few fields: expected 2 or 3 (src dst [weight]), found 1");
        assert_eq!(err("- 1 2 3 4"), "too many fields: expected 3 or 4 (+|- src dst [weight]), found 5");
        assert_eq!(err("1 2 3 4"), "too many fields: expected 2 or 3 (src dst [weight]), found 4");
        assert!(err("+ 1 2 -1").starts_with("negative weight \"-1\""));
        assert!(err("+ a 2").starts_with("\"a\" is not a vertex id"));
    }

    fn write(dir: &tempfile::TempDir, name: &str, text: &[u8]) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn ranges_cover_every_line_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        let mut expected = Vec::new();
        for i in 0..300u64 {
            match i % 7 {
                0 => text.push_str("# comment line\n"),
                1 => text.push_str("\r\n"),
                2 => {
                    text.push_str(&format!("{} {} {}\r\n", i, i * 1_000_003, i));
                    expected.push((i, i * 1_000_003, Some(i as f64)));
                }
                _ => {
                    text.push_str(&format!("{}\t{}\n", i, i * i * 977));
                    expected.push((i, i * i * 977, None));
                }
            }
        }
        text.push_str("5 6"); // no final newline
        expected.push((5, 6, None));
        let path = write(&dir, "edges.txt", text.as_bytes());
        let len = text.len();
        for peers in (1..12).chain([len - 1, len, len + 1, 2 * len]) {
            let mut all = Vec::new();
            for index in 0..peers {
                all.extend(read_edges_range(&path, index, peers).unwrap());
            }
            assert_eq!(all, expected, "peers = {peers}");
        }
        assert_eq!(read_edges(&path).unwrap(), expected);
    }

    #[test]
    fn long_lines_cross_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = Vec::new();
        let mut expected = Vec::new();
        for i in 0..200_000u64 {
            push_edge_line(&mut text, i, u64::MAX - i);
            expected.push((i, u64::MAX - i, None));
            if i % 50_000 == 0 {
                text.extend_from_slice(b"#");
                text.extend(std::iter::repeat_n(b'y', 3 * CHUNK));
                text.push(b'\n');
            }
        }
        let path = write(&dir, "big.txt", &text);
        for peers in [1, 2, 3, 7] {
            let mut all = Vec::new();
            for index in 0..peers {
                all.extend(read_edges_range(&path, index, peers).unwrap());
            }
            assert_eq!(all, expected, "peers = {peers}");
        }
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for i in 0..1000 {
            text.push_str(&format!("{i} {}\n", i + 1));
        }
        text.push_str("17 x\n");
        for i in 0..1000 {
            text.push_str(&format!("{i} {}\r\n", i + 1));
        }
        let path = write(&dir, "bad.txt", text.as_bytes());
        let message = format!(
            "{}:1001: \"x\" is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)",
            path.display()
        );
        for peers in [1, 2, 5] {
            let errors: Vec<String> =
                (0..peers).filter_map(|i| read_edges_range(&path, i, peers).err()).map(|e| e.to_string()).collect();
            assert_eq!(errors, vec![message.clone()], "peers = {peers}");
        }
        match read_edges(&path) {
            Err(SourceError::Input(e)) => assert_eq!(e.line, 1001),
            other => panic!("{other:?}"),
        }

        let missing = dir.path().join("missing.txt");
        let e = read_edges(&missing).unwrap_err().to_string();
        assert!(e.starts_with(&format!("cannot read {}: ", missing.display())), "{e}");
        let e = read_updates(&missing).unwrap_err().to_string();
        assert!(e.starts_with(&format!("cannot read {}: ", missing.display())), "{e}");

        let path = write(&dir, "v.txt", b"1\n2\n\n# c\n3 4\n");
        assert_eq!(
            read_vertices(&path).unwrap_err().to_string(),
            format!("{}:5: too many fields: expected 1 (a vertex id), found 2", path.display())
        );
    }

    #[test]
    fn updates_file_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let updates = vec![
            Update::insert(1, 2),
            Update::delete(1, 2),
            Update { src: 0, dst: u64::MAX, weight: Some(0.1), diff: 1 },
            Update { src: 3, dst: 3, weight: Some(1e300), diff: -1 },
            Update { src: 3, dst: 4, weight: Some(5e-324), diff: 1 },
        ];
        let path = dir.path().join("u.txt");
        write_updates(&path, &updates).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("+ 1 2\n- 1 2\n+ 0 18446744073709551615 0.1\n"), "{text}");
        let read: Vec<(usize, Update)> = read_updates(&path).unwrap();
        assert_eq!(read, updates.iter().copied().enumerate().map(|(i, u)| (i + 1, u)).collect::<Vec<_>>());

        let path = write(&dir, "u2.txt", b"# header\n+ 1 2\n\n3 4\n- 1 2\n");
        assert_eq!(
            read_updates(&path).unwrap(),
            vec![(2, Update::insert(1, 2)), (4, Update::insert(3, 4)), (5, Update::delete(1, 2))]
        );
        let path = write(&dir, "u3.txt", b"+ 1 2\r\n\r\n+1 2\r\n");
        let e = read_updates(&path).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:3: unknown sign \"+1\"", path.display())), "{e}");

        let edges = vec![(0, 1), (u64::MAX, 0), (12345, 678)];
        let path = dir.path().join("e.txt");
        write_edges(&path, &edges).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "0 1\n18446744073709551615 0\n12345 678\n");
        let vertices = vec![5, 0, u64::MAX];
        let path = dir.path().join("v.txt");
        write_vertices(&path, &vertices).unwrap();
        assert_eq!(read_vertices(&path).unwrap(), vertices);
    }

    #[test]
    fn newline_search() {
        for len in 0..40 {
            for at in 0..=len {
                let mut s = vec![b'a'; len];
                if at < len {
                    s[at] = b'\n';
                }
                let expected = if at < len { Some(at) } else { None };
                assert_eq!(find_newline(&s), expected);
            }
        }
        assert_eq!(find_newline(b"\x8a\x0b\x09\xff\xff\xff\xff\xff\xff\n"), Some(9));
    }

    fn separator() -> impl Strategy<Value = String> {
        prop::sample::select(vec![" ", "\t", ",", " , ", "\t\t", ", ", ",,"]).prop_map(str::to_string)
    }

    fn weight() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            0.0..1e6f64,
            any::<u64>().prop_map(f64::from_bits).prop_filter("finite, >= 0", |w| w.is_finite() && *w >= 0.0),
        ]
    }

    proptest! {
        #[test]
        fn never_panics_on_strings(line in ".*") {
            let _ = parse_timed_update_line(&line);
            let _ = parse_edge_line(&line);
            let _ = parse_vertex_line(&line);
            let _ = parse_update_line(&line);
        }

        #[test]
        fn never_panics_on_bytes(line in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse_timed_update_bytes(&line);
            let _ = parse_edge_bytes(&line);
            let _ = parse_vertex_bytes(&line);
            let _ = parse_update_bytes(&line);
        }

        #[test]
        fn never_panics_on_numberish(line in "[-+0-9a-z., \t\r#%eE@]{0,40}") {
            let _ = parse_timed_update_line(&line).map(|_| ()).map_err(|e| e.to_string());
            let _ = parse_edge_line(&line).map(|_| ()).map_err(|e| e.to_string());
            let _ = parse_vertex_line(&line).map(|_| ()).map_err(|e| e.to_string());
            let _ = parse_update_line(&line).map(|_| ()).map_err(|e| e.to_string());
        }

        #[test]
        fn fast_paths_agree_with_general(line in "[-+0-9a-z., \t\r#%eE]{0,40}") {
            let bytes = line.as_bytes();
            if let Some(edge) = fast_src_dst_weight(bytes) {
                prop_assert_eq!(parse_edge_general(bytes), Ok(Some(edge)));
            }
            if let Some(update) = fast_update(bytes) {
                prop_assert_eq!(parse_update_general(bytes), Ok(Some(update)));
            }
        }

        #[test]
        fn fast_paths_agree_on_valid_shapes(
            signs in "[-+]?", a in "[0-9]{1,21}", b in "[0-9]{1,21}", w in "([0-9.eE+-]{1,6})?",
            s1 in "[ ,\t]{0,2}", s2 in "[ ,\t]{1,2}", s3 in "[ ,\t]{1,2}", end in "[ ,\t\r\n]{0,2}",
        ) {
            let line = format!("{signs}{s1}{a}{s2}{b}{s3}{w}{end}");
            let bytes = line.as_bytes();
            if let Some(edge) = fast_src_dst_weight(bytes) {
                prop_assert_eq!(parse_edge_general(bytes), Ok(Some(edge)));
            }
            if let Some(update) = fast_update(bytes) {
                prop_assert_eq!(parse_update_general(bytes), Ok(Some(update)));
            }
            prop_assert_eq!(parse_edge_bytes(bytes), parse_edge_general(bytes));
            prop_assert_eq!(parse_update_bytes(bytes), parse_update_general(bytes));
        }

        #[test]
        fn edge_lines_round_trip(
            src in any::<u64>(), dst in any::<u64>(), w in prop::option::of(weight()),
            sep1 in separator(), sep2 in separator(), lead in "[ \t]{0,2}", trail in "[ \t,]{0,2}",
            crlf in any::<bool>(), debug_format in any::<bool>(),
        ) {
            let mut line = format!("{lead}{src}{sep1}{dst}");
            if let Some(w) = w {
                if debug_format { line.push_str(&format!("{sep2}{w:?}")) } else { line.push_str(&format!("{sep2}{w}")) }
            }
            line.push_str(&trail);
            line.push_str(if crlf { "\r\n" } else { "\n" });
            prop_assert_eq!(parse_edge_line(&line), Ok(Some((src, dst, w))));
            let expected = Update { src, dst, weight: w, diff: 1 };
            prop_assert_eq!(parse_update_line(&line), Ok(Some(expected)));
            prop_assert_eq!(parse_update_line(&format!("+{sep1}{line}")), Ok(Some(expected)));
            let deletion = Update { diff: -1, ..expected };
            let mut formatted = Vec::new();
            push_update_line(&mut formatted, &deletion);
            prop_assert_eq!(parse_update_bytes(&formatted), Ok(Some(deletion)));
        }

        #[test]
        fn vertex_lines_round_trip(v in any::<u64>(), lead in "[ \t,]{0,2}", trail in "[ \t,\r]{0,2}") {
            prop_assert_eq!(parse_vertex_line(&format!("{lead}{v}{trail}")), Ok(Some(v)));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn ranges_partition_random_files(
            lines in prop::collection::vec(
                prop_oneof![
                    (any::<u32>(), any::<u32>()).prop_map(|(a, b)| format!("{a} {b}")),
                    (any::<u64>(), any::<u64>(), 0u32..100).prop_map(|(a, b, w)| format!("{a},{b},{w}")),
                    Just(String::new()),
                    Just("# c".to_string()),
                    "[ \t]{0,3}",
                ],
                0..40,
            ),
            crlf in any::<bool>(), final_newline in any::<bool>(), peers in 1usize..9,
        ) {
            let newline = if crlf { "\r\n" } else { "\n" };
            let mut text = lines.join(newline);
            if final_newline { text.push_str(newline); }
            let dir = tempfile::tempdir().unwrap();
            let path = write(&dir, "e.txt", text.as_bytes());
            let expected: Vec<_> = lines.iter().filter_map(|l| parse_edge_line(l).unwrap()).collect();
            let mut all = Vec::new();
            for index in 0..peers {
                all.extend(read_edges_range(&path, index, peers).unwrap());
            }
            prop_assert_eq!(all, expected);
        }
    }

    #[test]
    fn event_times() {
        let t = |l: &str| parse_timed_update_line(l);
        assert_eq!(t("1 2 @5"), Ok(Some((Update::insert(1, 2), Some(5)))));
        assert_eq!(t("+ 1 2 @0\r\n"), Ok(Some((Update::insert(1, 2), Some(0)))));
        assert_eq!(t("- 1 2\t@18446744073709551615\n"), Ok(Some((Update::delete(1, 2), Some(u64::MAX)))));
        assert_eq!(t("1,2,0.5,@7 "), Ok(Some((Update { src: 1, dst: 2, weight: Some(0.5), diff: 1 }, Some(7)))));
        assert_eq!(t("1 2"), Ok(Some((Update::insert(1, 2), None))));
        assert_eq!(t("# note @5"), Ok(None));
        assert_eq!(t("   "), Ok(None));
        assert_eq!(t("@5"), Err(LineError::TimeWithoutUpdate));
        assert!(matches!(t("1 2 @"), Err(LineError::BadTime(f)) if f == "@"));
        assert!(matches!(t("1 2 @x"), Err(LineError::BadTime(f)) if f == "@x"));
        assert!(matches!(t("1 2 @-3"), Err(LineError::BadTime(_))));
        assert!(matches!(t("1 2 @18446744073709551616"), Err(LineError::BadTime(_))));
        assert!(matches!(t("1 x @3"), Err(LineError::BadId(f)) if f == "x"));
        assert!(matches!(t("1 2 3 4 @3"), Err(LineError::TooManyFields { .. })));
        // Without the timed parser an event time is not a weight.
        assert!(parse_update_line("1 2 @5").is_err());
        let e = t("1 2 @x").unwrap_err().to_string();
        assert!(e.contains("is not an event time"), "{e}");
    }

    #[test]
    fn timed_updates_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        std::fs::write(&path, "1 2 @3\n# c\n- 1 2 @4\n5 6\n7 8 @q\n").unwrap();
        let e = read_timed_updates(&path).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:5: \"@q\" is not an event time", path.display())), "{e}");
        std::fs::write(&path, "1 2 @3\n# c\n- 1 2 @4\n5 6\n").unwrap();
        assert_eq!(
            read_timed_updates(&path).unwrap(),
            vec![
                (1, Update::insert(1, 2), Some(3)),
                (3, Update::delete(1, 2), Some(4)),
                (4, Update::insert(5, 6), None)
            ]
        );
    }
}
