//! Line level: splitting a line into fields and parsing ids, weights, signs and event times.
//! Fast paths handle the common shapes (`src dst[ weight]`, `+ src dst[ weight]`) in one pass and
//! fall back to the general parsers for anything unusual, so errors are always the general
//! parsers' messages.
//!
//! ```
//! use ripples::sources::parse::{is_skipped_line, parse_edge_bytes, parse_vertex_line, LineError};
//! // Blank lines and `#` / `%` comments are skipped (a byte-order mark is ignored).
//! assert!(is_skipped_line(b"   \t\r\n") && is_skipped_line(b"\xEF\xBB\xBF# header"));
//! assert!(!is_skipped_line(b"1 2"));
//! // The byte-slice parsers take the line with its line ending.
//! assert_eq!(parse_edge_bytes(b"7\t8\r\n"), Ok(Some((7, 8, None))));
//! assert_eq!(
//!     parse_vertex_line("1 2"),
//!     Err(LineError::TooManyFields { expected: "1 (a vertex id)", found: 2 })
//! );
//! ```

use super::LineError;
use crate::types::{Node, Time, Update};

pub(super) const EDGE_FIELDS: &str = "2 or 3 (src dst [weight])";
pub(super) const VERTEX_FIELDS: &str = "1 (a vertex id)";
pub(super) const BARE_UPDATE_FIELDS: &str = "2 or 3 (src dst [weight])";
pub(super) const SIGNED_UPDATE_FIELDS: &str = "3 or 4 (+|- src dst [weight])";
#[inline(always)]
pub(super) fn is_sep(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b',' | b'\r' | b'\n')
}

#[inline(always)]
pub(super) fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Drops a UTF-8 byte-order mark at the start of a line (it can only occur on the first line).
#[inline(always)]
pub(super) fn strip_bom(line: &[u8]) -> &[u8] {
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
pub(super) fn split_fields(line: &[u8]) -> ([&[u8]; 4], usize) {
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
pub(super) fn shown(field: &[u8]) -> String {
    const MAX_CHARS: usize = 40;
    let text = String::from_utf8_lossy(field);
    match text.char_indices().nth(MAX_CHARS) {
        None => text.into_owned(),
        Some((cut, _)) => format!("{}...", &text[..cut]),
    }
}

pub(super) fn bad_id(field: &[u8]) -> LineError {
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
///
/// ```
/// use ripples::sources::parse::{parse_id, LineError};
/// assert_eq!(parse_id(b"007"), Ok(7));
/// assert_eq!(parse_id(b"18446744073709551616"), Err(LineError::IdOverflow("18446744073709551616".into())));
/// assert_eq!(parse_id(b"1.5"), Err(LineError::BadId("1.5".into())));
/// ```
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
///
/// ```
/// use ripples::sources::parse::{parse_weight, LineError};
/// assert_eq!(parse_weight(b".5"), Ok(0.5));
/// assert_eq!(parse_weight(b"-0").map(f64::to_bits), Ok(0.0f64.to_bits()));
/// assert_eq!(parse_weight(b"inf"), Err(LineError::InfiniteWeight("inf".into())));
/// assert_eq!(parse_weight(b"-1"), Err(LineError::NegativeWeight("-1".into())));
/// ```
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
pub(super) fn parse_src_dst_weight(fields: &[&[u8]]) -> Result<(Node, Node, Option<f64>), LineError> {
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
pub(super) fn fast_digits(s: &[u8], i: &mut usize) -> Option<u64> {
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
pub(super) fn fast_seps(s: &[u8], i: &mut usize) -> bool {
    let start = *i;
    while s.get(*i).is_some_and(|&b| is_sep(b)) {
        *i += 1;
    }
    *i > start
}

#[inline(always)]
pub(super) fn fast_src_dst_weight(s: &[u8]) -> Option<(Node, Node, Option<f64>)> {
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
pub(super) fn fast_update(s: &[u8]) -> Option<Update> {
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

pub(super) fn parse_edge_general(line: &[u8]) -> Result<Option<(Node, Node, Option<f64>)>, LineError> {
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

pub(super) fn parse_update_general(line: &[u8]) -> Result<Option<Update>, LineError> {
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
pub(super) fn split_time(line: &[u8]) -> (&[u8], Option<&[u8]>) {
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
///
/// ```
/// use ripples::sources::parse::{parse_timed_update_line, LineError};
/// use ripples::types::Update;
/// assert_eq!(parse_timed_update_line("+ 3 4 @1700"), Ok(Some((Update::insert(3, 4), Some(1700)))));
/// assert_eq!(parse_timed_update_line("3 4"), Ok(Some((Update::insert(3, 4), None))));
/// assert_eq!(parse_timed_update_line("3 4 @soon"), Err(LineError::BadTime("@soon".into())));
/// ```
pub fn parse_timed_update_line(line: &str) -> Result<Option<(Update, Option<Time>)>, LineError> {
    parse_timed_update_bytes(line.as_bytes())
}

/// Parses one line of an update file: `+ src dst [weight]` (insert one copy), `- src dst
/// [weight]` (delete one copy), or a bare `src dst [weight]` (insert). The sign must be a field
/// of its own: `+1 2` is an [`LineError::UnknownSign`]. Returns `Ok(None)` for a skipped line.
pub fn parse_update_line(line: &str) -> Result<Option<Update>, LineError> {
    parse_update_bytes(line.as_bytes())
}
