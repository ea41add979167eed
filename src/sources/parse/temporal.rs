//! Temporal edge lists: edges with a timestamp each, as real interaction data comes.
//!
//! * [`TemporalFormat::Snap`] — SNAP temporal networks (`sx-stackoverflow`, `wiki-talk-temporal`,
//!   `CollegeMsg`): `src dst unixtime` per line, `#` comments.
//! * [`TemporalFormat::Konect`] — KONECT `out.*` files: `%` header lines, then
//!   `src dst [weight [timestamp]]` (the weight column is kept as the edge weight; a line without
//!   a timestamp has none).
//! * [`TemporalFormat::Csv`] — delimited text with named columns ([`CsvSpec`]): the names come
//!   from the first line, or from [`CsvSpec::columns`] when the file has no header; the time
//!   column is read with a [`TimeFormat`].
//!
//! Vertex ids and weights are read with the edge-file rules ([`parse_id`], [`parse_weight`]). A
//! timestamp becomes an event time in seconds since 1970-01-01 UTC. Every problem is an
//! [`InputError`] naming `path:line`. [`event_updates`] turns the edges into the `+ src dst @T`
//! lines that `--window` / `--tumbling` runs read ([`super::read_timed_updates`]);
//! [`arrival_order`] sorts them by time into a plain insert stream for epochs.

use std::io::{BufRead, BufReader};
use std::path::Path;

use super::line::{is_skipped_line, parse_id, parse_weight};
use super::{InputError, SourceError};
use crate::types::{Node, Time, Update};

/// How the time field of a line is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeFormat {
    /// Seconds since 1970-01-01 UTC, an integer (`1291597340`).
    UnixSeconds,
    /// RFC 3339 (`2010-12-06T13:02:20Z`, `2010-12-06 13:02:20+01:00`, fractions of a second
    /// dropped).
    Rfc3339,
    /// A strftime-like pattern of `%Y %m %d %H %M %S %%` and literal characters, read as UTC
    /// (`%Y-%m-%d %H:%M:%S`).
    Pattern(String),
}

impl TimeFormat {
    /// `unix` (or `unix-seconds`), `rfc3339`, or a pattern containing `%`.
    pub fn parse(text: &str) -> Result<TimeFormat, String> {
        match text {
            "unix" | "unix-seconds" => Ok(TimeFormat::UnixSeconds),
            "rfc3339" => Ok(TimeFormat::Rfc3339),
            p if p.contains('%') => {
                let mut chars = p.chars();
                while let Some(c) = chars.next() {
                    if c == '%' && !matches!(chars.next(), Some('Y' | 'm' | 'd' | 'H' | 'M' | 'S' | '%')) {
                        return Err(format!("time format {p:?}: only %Y %m %d %H %M %S and %% are known"));
                    }
                }
                Ok(TimeFormat::Pattern(p.to_string()))
            }
            other => Err(format!(
                "unknown time format {other:?} (unix, rfc3339, or a pattern such as \"%Y-%m-%d %H:%M:%S\")"
            )),
        }
    }
}

/// The columns of a delimited file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvSpec {
    /// The column names when the file has no header line (`None`: the first line names them).
    pub columns: Option<Vec<String>>,
    /// The field separator; `None` splits on any run of spaces and tabs.
    pub delimiter: Option<char>,
    /// The name of the column holding the source vertex (`src_column`, default `src`).
    pub src: String,
    /// The name of the column holding the destination vertex (`dst_column`, default `dst`).
    pub dst: String,
    /// The name of the column holding the timestamp (`time_column`, required).
    pub time: String,
    /// How the timestamp column is written (`time_format`, default `unix`).
    pub time_format: TimeFormat,
}

/// A field separator as written: one character, `tab`, or `whitespace` or a space (any run of
/// spaces and tabs: `None`); absent means `,`.
pub fn delimiter(text: Option<&str>) -> Result<Option<char>, String> {
    match text {
        None => Ok(Some(',')),
        Some("tab") => Ok(Some('\t')),
        Some("whitespace") | Some(" ") => Ok(None),
        Some(d) if d.chars().count() == 1 => Ok(d.chars().next()),
        Some(d) => Err(format!("delimiter {d:?} is not one character, `tab` or `whitespace`")),
    }
}

/// A temporal edge-list format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemporalFormat {
    /// SNAP temporal edge lists: `src dst unixtime` lines.
    Snap,
    /// KONECT `out.*` files: `%` header lines, then `src dst [weight [timestamp]]`.
    Konect,
    /// A delimited file whose columns the spec names (`format = "csv"`).
    Csv(CsvSpec),
}

/// One edge of a temporal edge list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TemporalEdge {
    /// The source vertex.
    pub src: Node,
    /// The destination vertex.
    pub dst: Node,
    /// The edge's weight: KONECT's third column, if present (`None` for SNAP and CSV).
    pub weight: Option<f64>,
    /// Seconds since 1970-01-01 UTC; `None` for a KONECT line without a timestamp column.
    pub time: Option<Time>,
    /// 1-based line number in the file.
    pub line: usize,
}

/// Reads a temporal edge list in `format`.
pub fn read_temporal(path: &Path, format: &TemporalFormat) -> Result<Vec<TemporalEdge>, SourceError> {
    let file = std::fs::File::open(path).map_err(|e| SourceError::io(path, e))?;
    let bad = |line: usize, problem: String| SourceError::from(InputError { path: path.to_path_buf(), line, problem });
    let mut out = Vec::new();
    // Column positions of a CSV file: (src, dst, time, names).
    let mut columns: Option<(usize, usize, usize, usize)> = None;
    if let TemporalFormat::Csv(spec) = format {
        if let Some(names) = &spec.columns {
            columns = Some(csv_positions(spec, names).map_err(|p| bad(0, p))?);
        }
    }
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let no = i + 1;
        let line = line.map_err(|e| SourceError::io(path, e))?;
        let line = line.trim_start_matches('\u{feff}');
        if is_skipped_line(line.as_bytes()) {
            continue;
        }
        let edge = match format {
            TemporalFormat::Snap => snap_line(line, no),
            TemporalFormat::Konect => konect_line(line, no),
            TemporalFormat::Csv(spec) => {
                let fields = split(line, spec.delimiter);
                match columns {
                    None => {
                        let names: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
                        columns = Some(csv_positions(spec, &names).map_err(|p| bad(no, p))?);
                        continue;
                    }
                    Some((s, d, t, n)) => csv_line(spec, &fields, (s, d, t, n), no),
                }
            }
        };
        out.push(edge.map_err(|p| bad(no, p))?);
    }
    Ok(out)
}

fn split(line: &str, delimiter: Option<char>) -> Vec<&str> {
    let line = line.trim_end_matches(['\r', '\n']);
    match delimiter {
        Some(c) => line.split(c).map(str::trim).collect(),
        None => line.split([' ', '\t']).filter(|f| !f.is_empty()).collect(),
    }
}

fn csv_positions(spec: &CsvSpec, names: &[String]) -> Result<(usize, usize, usize, usize), String> {
    let find = |want: &str, what: &str| {
        names
            .iter()
            .position(|n| n == want)
            .ok_or_else(|| format!("no {what} column named {want:?} (the columns are: {})", names.join(", ")))
    };
    Ok((find(&spec.src, "source")?, find(&spec.dst, "target")?, find(&spec.time, "time")?, names.len()))
}

fn id(field: &str) -> Result<Node, String> {
    parse_id(field.as_bytes()).map_err(|e| e.to_string())
}

fn snap_line(line: &str, no: usize) -> Result<TemporalEdge, String> {
    let fields = split(line, None);
    if fields.len() != 3 {
        return Err(format!("expected `src dst unixtime`, found {} field(s)", fields.len()));
    }
    let time = parse_time(fields[2], &TimeFormat::UnixSeconds)?;
    Ok(TemporalEdge { src: id(fields[0])?, dst: id(fields[1])?, weight: None, time: Some(time), line: no })
}

fn konect_line(line: &str, no: usize) -> Result<TemporalEdge, String> {
    let fields = split(line, None);
    if !(2..=4).contains(&fields.len()) {
        return Err(format!("expected `src dst [weight [timestamp]]`, found {} field(s)", fields.len()));
    }
    let weight = match fields.get(2) {
        Some(w) => Some(parse_weight(w.as_bytes()).map_err(|e| e.to_string())?),
        None => None,
    };
    let time = fields.get(3).map(|t| parse_time(t, &TimeFormat::UnixSeconds)).transpose()?;
    Ok(TemporalEdge { src: id(fields[0])?, dst: id(fields[1])?, weight, time, line: no })
}

fn csv_line(
    spec: &CsvSpec,
    fields: &[&str],
    (s, d, t, n): (usize, usize, usize, usize),
    no: usize,
) -> Result<TemporalEdge, String> {
    if fields.len() != n {
        return Err(format!("expected {} fields (as the columns), found {}", n, fields.len()));
    }
    let time = parse_time(fields[t], &spec.time_format)?;
    Ok(TemporalEdge { src: id(fields[s])?, dst: id(fields[d])?, weight: None, time: Some(time), line: no })
}

/// A timestamp in seconds since 1970-01-01 UTC.
pub fn parse_time(field: &str, format: &TimeFormat) -> Result<Time, String> {
    let bad = |why: &str| format!("{field:?} is not a timestamp ({why})");
    match format {
        TimeFormat::UnixSeconds => {
            if field.is_empty() || !field.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("expected seconds since 1970 as an integer >= 0"));
            }
            field.parse::<u64>().map_err(|_| bad("too large"))
        }
        TimeFormat::Rfc3339 => rfc3339(field).ok_or_else(|| bad("expected RFC 3339, as in 2010-12-06T13:02:20Z")),
        TimeFormat::Pattern(p) => pattern(field, p).ok_or_else(|| bad(&format!("expected the format {p:?}"))),
    }
}

/// Digits `text[at..at + n]` as a number.
fn digits(text: &[u8], at: usize, n: usize) -> Option<i64> {
    let s = text.get(at..at + n)?;
    s.iter().all(u8::is_ascii_digit).then(|| s.iter().fold(0i64, |a, &b| a * 10 + (b - b'0') as i64))
}

fn rfc3339(text: &str) -> Option<Time> {
    let b = text.as_bytes();
    let (y, mo, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    let (h, mi, s) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
        return None;
    }
    let mut at = 19;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
    }
    let offset = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && b[at + 3] == b':' => {
            let off = digits(b, at + 1, 2)? * 3600 + digits(b, at + 4, 2)? * 60;
            if *sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => return None,
    };
    seconds(y, mo, d, h, mi, s).and_then(|t| u64::try_from(t - offset).ok())
}

fn pattern(text: &str, pattern: &str) -> Option<Time> {
    let (b, mut at) = (text.as_bytes(), 0);
    let (mut y, mut mo, mut d, mut h, mut mi, mut s) = (1970, 1, 1, 0, 0, 0);
    let mut p = pattern.bytes();
    while let Some(c) = p.next() {
        if c != b'%' {
            if b.get(at) != Some(&c) {
                return None;
            }
            at += 1;
            continue;
        }
        let directive = p.next()?;
        let width = if directive == b'Y' { 4 } else { 2 };
        if directive == b'%' {
            if b.get(at) != Some(&b'%') {
                return None;
            }
            at += 1;
            continue;
        }
        let v = digits(b, at, width)?;
        at += width;
        match directive {
            b'Y' => y = v,
            b'm' => mo = v,
            b'd' => d = v,
            b'H' => h = v,
            b'M' => mi = v,
            b'S' => s = v,
            _ => return None,
        }
    }
    if at != b.len() {
        return None;
    }
    seconds(y, mo, d, h, mi, s).and_then(|t| u64::try_from(t).ok())
}

/// Seconds since 1970-01-01 UTC of a valid civil date and time.
fn seconds(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<i64> {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > month_days[(mo - 1) as usize] || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    // Days from the civil date (H. Hinnant's algorithm).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + s)
}

/// Each edge as an insertion at its event time, in file order (for `--window` / `--tumbling`);
/// an edge without a timestamp is an error naming its line.
pub fn event_updates(path: &Path, edges: &[TemporalEdge]) -> Result<Vec<(Update, Time)>, InputError> {
    edges
        .iter()
        .map(|e| match e.time {
            Some(t) => Ok((Update { src: e.src, dst: e.dst, weight: e.weight, diff: 1 }, t)),
            None => Err(InputError {
                path: path.to_path_buf(),
                line: e.line,
                problem: "this line has no timestamp column (event times need `src dst weight timestamp`)".into(),
            }),
        })
        .collect()
}

/// The edges as insertions sorted by time (stable: file order within a time), for epochs in
/// arrival order; edges without a timestamp keep their place before all timed ones.
pub fn arrival_order(edges: &[TemporalEdge]) -> Vec<Update> {
    let mut sorted: Vec<&TemporalEdge> = edges.iter().collect();
    sorted.sort_by_key(|e| e.time);
    sorted.into_iter().map(|e| Update { src: e.src, dst: e.dst, weight: e.weight, diff: 1 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_against_known_instants() {
        // 1291597340 is 2010-12-06 01:02:20 UTC (checked with `date -u -d @1291597340`).
        let p = TimeFormat::Pattern("%Y-%m-%d %H:%M:%S".into());
        assert_eq!(parse_time("2010-12-06 01:02:20", &p), Ok(1_291_597_340));
        assert_eq!(parse_time("2010-12-06T01:02:20Z", &TimeFormat::Rfc3339), Ok(1_291_597_340));
        assert_eq!(parse_time("2010-12-06T02:02:20.75+01:00", &TimeFormat::Rfc3339), Ok(1_291_597_340));
        assert_eq!(parse_time("1970-01-01T00:00:00Z", &TimeFormat::Rfc3339), Ok(0));
        assert_eq!(parse_time("2000-02-29T00:00:00Z", &TimeFormat::Rfc3339), Ok(951_782_400));
        assert!(parse_time("2001-02-29T00:00:00Z", &TimeFormat::Rfc3339).is_err());
        assert!(parse_time("1969-12-31T23:59:59Z", &TimeFormat::Rfc3339).is_err());
        assert!(parse_time("2010-12-06 01:02", &p).is_err());
        assert_eq!(parse_time("17", &TimeFormat::UnixSeconds), Ok(17));
        assert!(parse_time("-1", &TimeFormat::UnixSeconds).is_err());
        assert!(parse_time("1.5", &TimeFormat::UnixSeconds).is_err());
        assert!(TimeFormat::parse("%Y %q").is_err());
    }
}
