//! The lexer: a statement's tokens, each with the whitespace before it, and the helpers that
//! read them (statements, words, identifiers).

/// A token of a statement.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok<'a> {
    /// A keyword or an unquoted identifier.
    Word(&'a str),
    /// A number (digits, `.` and letters: `1`, `2.5`, `1e3`).
    Number(&'a str),
    /// `'...'`, `"..."`, comments: copied as they are.
    Verbatim(&'a str),
    /// `$N`.
    Param(&'a str),
    /// `::`.
    Cast,
    /// Any other character.
    Punct(char),
}

/// Splits `sql` into tokens, each with the whitespace before it.
pub(super) fn lex(sql: &str) -> Vec<(&str, Tok<'_>)> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let ws = i;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let space = &sql[ws..i];
        let start = i;
        let c = b[i];
        let tok = if c == b'\'' || c == b'"' {
            i += 1;
            while i < b.len() {
                if b[i] == c {
                    if i + 1 < b.len() && b[i + 1] == c {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            Tok::Verbatim(&sql[start..i])
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            Tok::Verbatim(&sql[start..i])
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i = (i + 2).min(b.len());
            Tok::Verbatim(&sql[start..i])
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' || b[i] >= 0x80) {
                i += 1;
            }
            Tok::Word(&sql[start..i])
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            Tok::Number(&sql[start..i])
        } else if c == b'$' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            Tok::Param(&sql[start + 1..i])
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            i += 2;
            Tok::Cast
        } else {
            // One character (UTF-8 safe: non-ASCII starts a word above).
            i += 1;
            Tok::Punct(c as char)
        };
        out.push((space, tok));
    }
    out
}

/// Splits a simple query's text into its statements (at `;` outside quotes and comments).
pub fn split_statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for (space, tok) in lex(sql) {
        if tok == Tok::Punct(';') {
            if !cur.trim().is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            cur.clear();
            continue;
        }
        cur.push_str(space);
        cur.push_str(&text(&tok));
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// A token's text as written (`$N` with its `$`).
pub(super) fn text(tok: &Tok) -> String {
    match tok {
        Tok::Word(s) | Tok::Number(s) | Tok::Verbatim(s) => s.to_string(),
        Tok::Param(n) => format!("${n}"),
        Tok::Cast => "::".into(),
        Tok::Punct(c) => c.to_string(),
    }
}

/// The words of a statement (upper case), skipping comments.
pub(super) fn words(sql: &str) -> Vec<String> {
    lex(sql)
        .into_iter()
        .filter_map(|(_, t)| match t {
            Tok::Word(w) | Tok::Number(w) => Some(w.to_ascii_uppercase()),
            Tok::Punct(c) => Some(c.to_string()),
            Tok::Verbatim(v) if !is_comment_text(v) => Some(v.to_string()),
            _ => None,
        })
        .collect()
}

/// An identifier as PostgreSQL folds it: `"Name"` as written, `Name` in lower case.
pub(super) fn ident(tok: &Tok) -> Option<String> {
    match tok {
        Tok::Word(w) => Some(w.to_ascii_lowercase()),
        Tok::Verbatim(v) if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') => {
            Some(v[1..v.len() - 1].replace("\"\"", "\""))
        }
        _ => None,
    }
}

/// Whether a token is a comment (`-- ...` or `/* ... */`).
pub(super) fn is_comment(tok: &Tok) -> bool {
    matches!(tok, Tok::Verbatim(v) if is_comment_text(v))
}

/// Whether verbatim text is a comment.
fn is_comment_text(v: &str) -> bool {
    v.starts_with("--") || v.starts_with("/*")
}

/// A statement's tokens without its comments.
pub(super) fn code_tokens(sql: &str) -> Vec<Tok<'_>> {
    lex(sql).into_iter().map(|(_, t)| t).filter(|t| !is_comment(t)).collect()
}
