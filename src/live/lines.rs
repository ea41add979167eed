//! **Lines**: how a byte stream becomes numbered, classified lines — the same grammar on every
//! input (stdin, a followed file, a TCP connection).
//!
//! * update lines exactly as in update files: `+ src dst [w]`, `- src dst [w]`, or a bare
//!   `src dst [w]` (insert), with `@T` (an event time) in windowed streams; blank lines and
//!   `#` / `%` comments are skipped (but counted for line numbers);
//! * `record + TEXT` / `record - TEXT` inserts or deletes one copy of a record of the run's
//!   record input (`TEXT` is everything after the sign and one space, read by the dataflow's own
//!   parser; see `Typed::with_records`);
//! * `commit` closes the current epoch;
//! * `end` finishes the stream;
//! * anything else is [`Item::Bad`], with the reason ([`LineError`]'s message).
//!
//! [`LineSplitter`] cuts bytes at `\n` as they arrive, in chunks of any size: an incomplete last
//! line waits for the rest, and a line longer than [`MAX_LINE`] is rejected without ever being
//! buffered (its bytes are dropped up to the next newline). Line numbers are 1-based and count
//! every line.
//!
//! [`LineError`]: crate::sources::parse::LineError

use crate::sources::parse::parse_timed_update_bytes;
use crate::types::{Time, Update};

/// Longest accepted line, in bytes (without its newline).
pub(super) const MAX_LINE: usize = 1 << 20;

/// What a line says.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Item {
    Update(Update, Option<Time>),
    /// A record of the run's record input and its diff (+1 / -1).
    Record(String, i8),
    Commit,
    End,
    /// A rejected line and why.
    Bad(String),
}

/// A classified line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Line {
    /// 1-based, within the connection / source.
    pub(super) no: u64,
    pub(super) item: Item,
}

/// Parses one line (without its `\n`); `None` for a skipped line.
pub(super) fn classify(line: &[u8]) -> Option<Item> {
    match line.trim_ascii() {
        b"commit" => return Some(Item::Commit),
        b"end" => return Some(Item::End),
        _ => {}
    }
    if let Some(rest) = line.strip_prefix(b"record") {
        return Some(classify_record(rest));
    }
    match parse_timed_update_bytes(line) {
        Ok(Some((update, time))) => Some(Item::Update(update, time)),
        Ok(None) => None,
        Err(e) => Some(Item::Bad(e.to_string())),
    }
}

/// The part of a record line after `record`: ` + TEXT` or ` - TEXT` (a trailing `\r` dropped).
fn classify_record(rest: &[u8]) -> Item {
    let rest = rest.strip_suffix(b"\r").unwrap_or(rest);
    let (diff, text) = match rest {
        [b' ', b'+', b' ', text @ ..] => (1, text),
        [b' ', b'-', b' ', text @ ..] => (-1, text),
        _ => return Item::Bad("expected `record + TEXT` or `record - TEXT`".into()),
    };
    match std::str::from_utf8(text) {
        Ok(text) => Item::Record(text.to_string(), diff),
        Err(e) => Item::Bad(format!("the record is not UTF-8 text ({e})")),
    }
}

/// Splits a byte stream into numbered, classified lines; keeps an incomplete last line until
/// its newline arrives, and never holds more than [`MAX_LINE`] bytes of it.
#[derive(Default)]
pub(super) struct LineSplitter {
    partial: Vec<u8>,
    /// The current line is too long: its bytes are being dropped up to the next newline.
    overlong: bool,
    line_no: u64,
}

impl LineSplitter {
    /// A splitter whose first line is number `skipped + 1` (lines read before it by others).
    pub(super) fn starting_after(skipped: u64) -> Self {
        LineSplitter { line_no: skipped, ..LineSplitter::default() }
    }

    pub(super) fn feed(&mut self, mut data: &[u8], out: &mut Vec<Line>) {
        while let Some(pos) = data.iter().position(|&b| b == b'\n') {
            let head = &data[..pos];
            if self.overlong || self.partial.len() + head.len() > MAX_LINE {
                self.overlong = false;
                self.partial.clear();
                self.push_too_long(out);
            } else if self.partial.is_empty() {
                self.push(head, out);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(head);
                self.push(&line, out);
                line.clear();
                self.partial = line;
            }
            data = &data[pos + 1..];
        }
        if !self.overlong {
            if self.partial.len() + data.len() > MAX_LINE {
                self.overlong = true;
                self.partial = Vec::new();
            } else {
                self.partial.extend_from_slice(data);
            }
        }
    }

    /// End of input: an unterminated last line counts.
    pub(super) fn finish(&mut self, out: &mut Vec<Line>) {
        if self.overlong {
            self.overlong = false;
            self.push_too_long(out);
        } else if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.push(&line, out);
        }
    }

    fn push(&mut self, line: &[u8], out: &mut Vec<Line>) {
        self.line_no += 1;
        if let Some(item) = classify(line) {
            out.push(Line { no: self.line_no, item });
        }
    }

    fn push_too_long(&mut self, out: &mut Vec<Line>) {
        self.line_no += 1;
        out.push(Line { no: self.line_no, item: Item::Bad(format!("line too long (more than {MAX_LINE} bytes)")) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::parse::parse_update_line;

    fn ins(src: u64, dst: u64) -> Update {
        Update::insert(src, dst)
    }
    fn del(src: u64, dst: u64) -> Update {
        Update::delete(src, dst)
    }

    #[test]
    fn splitter_handles_partial_and_long_lines() {
        let mut splitter = LineSplitter::default();
        let mut out = Vec::new();
        splitter.feed(b"+ 1 2\n# c\n\n- 3", &mut out);
        assert_eq!(out, vec![Line { no: 1, item: Item::Update(ins(1, 2), None) }]);
        out.clear();
        splitter.feed(b" 4\r\ncommit\n  end \nx\n", &mut out);
        let bad = parse_update_line("x").unwrap_err().to_string();
        assert_eq!(
            out,
            vec![
                Line { no: 4, item: Item::Update(del(3, 4), None) },
                Line { no: 5, item: Item::Commit },
                Line { no: 6, item: Item::End },
                Line { no: 7, item: Item::Bad(bad) },
            ]
        );
        out.clear();
        let long = vec![b'1'; MAX_LINE / 2 + 1];
        splitter.feed(&long, &mut out);
        splitter.feed(&long, &mut out);
        splitter.feed(&long, &mut out);
        assert!(out.is_empty());
        assert!(splitter.partial.is_empty(), "an overlong line is not buffered");
        splitter.feed(b"1\n5 6", &mut out);
        splitter.finish(&mut out);
        assert!(matches!(&out[0], Line { no: 8, item: Item::Bad(m) } if m.contains("too long")));
        assert_eq!(out[1], Line { no: 9, item: Item::Update(ins(5, 6), None) });
    }

    #[test]
    fn record_lines_carry_their_text() {
        assert_eq!(classify(b"record + 7"), Some(Item::Record("7".into(), 1)));
        assert_eq!(classify(b"record - a b  c\r"), Some(Item::Record("a b  c".into(), -1)));
        assert_eq!(classify(b"record + "), Some(Item::Record(String::new(), 1)));
        for bad in [&b"record 7"[..], b"record", b"record +7", b"records + 7"] {
            assert!(matches!(classify(bad), Some(Item::Bad(m)) if m.contains("record + TEXT")), "{bad:?}");
        }
        assert!(matches!(classify(b"record + \xff"), Some(Item::Bad(m)) if m.contains("UTF-8")));
    }
}
