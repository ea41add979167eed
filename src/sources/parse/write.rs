//! Writing: the lines the readers accept (edge, vertex and update files, with event times).
//!
//! ```
//! use ripples::sources::parse::{parse_update_line, push_update_line};
//! use ripples::types::Update;
//! let weighted = Update { weight: Some(0.1), ..Update::delete(3, 4) };
//! let mut out = Vec::new();
//! push_update_line(&mut out, &weighted);
//! push_update_line(&mut out, &Update::insert(5, 6));
//! let text = String::from_utf8(out).unwrap();
//! assert_eq!(text, "- 3 4 0.1\n+ 5 6\n");
//! // Every line written parses back to the same update.
//! let back: Vec<Update> = text.lines().map(|l| parse_update_line(l).unwrap().unwrap()).collect();
//! assert_eq!(back, vec![weighted, Update::insert(5, 6)]);
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::file::CHUNK;
use crate::types::{Node, Time, Update};

/// Appends the decimal digits of `v`.
#[inline]
pub(super) fn push_u64(out: &mut Vec<u8>, mut v: u64) {
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

pub(super) fn write_lines<T>(path: &Path, items: &[T], push: impl Fn(&mut Vec<u8>, &T)) -> io::Result<()> {
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
