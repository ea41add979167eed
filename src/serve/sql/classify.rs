//! Classification: what kind of statement a client sent ([`Kind`]), with the parsed forms of
//! the statements the server answers itself (cursors, `COPY`, `SUBSCRIBE`).

use super::lex::{code_tokens, ident, is_comment, lex, text, words, Tok};
use super::{state, SqlError};

/// What a statement asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// `SET`, `RESET`, `DISCARD`, `DEALLOCATE`, `LISTEN`...: accepted, nothing to do (tag).
    Ignored(String),
    /// `SHOW name`.
    Show(String),
    /// `BEGIN` / `START TRANSACTION`: pins the epoch the transaction reads.
    Begin,
    /// `COMMIT` / `END`: releases the pinned epoch.
    Commit,
    /// `ROLLBACK`: releases the pinned epoch (nothing was written).
    Rollback,
    /// A statement that would change data (its verb).
    Write(String),
    /// `COPY (query) TO STDOUT`, `COPY table TO STDOUT`.
    Copy(String),
    /// `COPY (SUBSCRIBE ...) TO STDOUT`.
    Subscribe(Subscribe),
    /// `DECLARE name [NO SCROLL] CURSOR [WITH[OUT] HOLD] FOR query`: the query's rows, read at
    /// one epoch, kept for `FETCH`.
    Declare(Declare),
    /// `FETCH` (or `MOVE`, which skips the rows) `[FORWARD|NEXT] [n|ALL] [FROM|IN] name`.
    Fetch(Fetch),
    /// `CLOSE name` (`None`: `CLOSE ALL`).
    Close(Option<String>),
    /// A query for SQLite (after [`rewrite`](super::rewrite())).
    Query,
}

/// A `DECLARE ... CURSOR`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declare {
    /// The cursor's name (a quoted name as written, an unquoted one in lower case).
    pub name: String,
    /// Whether it outlives its transaction (`WITH HOLD`).
    pub hold: bool,
    /// Its query.
    pub query: String,
}

/// A `FETCH` or `MOVE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetch {
    /// The cursor.
    pub name: String,
    /// How many rows (`None`: all that remain).
    pub count: Option<u64>,
    /// `MOVE`: skip the rows instead of returning them.
    pub skip: bool,
}

/// `DECLARE name [NO SCROLL] CURSOR [WITH[OUT] HOLD] FOR query`.
fn declare(sql: &str) -> Result<Kind, SqlError> {
    let usage = || {
        SqlError::new(
            state::SYNTAX,
            "DECLARE here is DECLARE name [NO SCROLL] CURSOR [WITH HOLD | WITHOUT HOLD] FOR query",
        )
    };
    let toks: Vec<(&str, Tok)> = lex(sql).into_iter().filter(|(_, t)| !is_comment(t)).collect();
    let name = toks.get(1).and_then(|(_, t)| ident(t)).ok_or_else(usage)?;
    let up = |i: usize| match toks.get(i) {
        Some((_, Tok::Word(w))) => w.to_ascii_uppercase(),
        _ => String::new(),
    };
    let mut i = 2;
    let mut hold = false;
    while i < toks.len() && up(i) != "FOR" {
        match up(i).as_str() {
            "SCROLL" => {
                if up(i - 1) != "NO" {
                    return Err(SqlError::new(
                        state::FEATURE_NOT_SUPPORTED,
                        "SCROLL cursors are not served: declare the cursor NO SCROLL (it reads forward)",
                    ));
                }
            }
            "BINARY" => {
                return Err(SqlError::new(
                    state::FEATURE_NOT_SUPPORTED,
                    "BINARY cursors are not served: declare a text cursor (clients choose binary results per FETCH)",
                ))
            }
            "WITH" => hold = true,
            "NO" | "INSENSITIVE" | "ASENSITIVE" | "CURSOR" | "WITHOUT" | "HOLD" => {}
            _ => return Err(usage()),
        }
        i += 1;
    }
    if i >= toks.len() {
        return Err(usage());
    }
    let query: String = toks[i + 1..].iter().map(|(space, t)| format!("{space}{}", text(t))).collect();
    if query.trim().is_empty() {
        return Err(usage());
    }
    Ok(Kind::Declare(Declare { name, hold, query: query.trim_start().to_string() }))
}

/// `FETCH` or `MOVE` `[FORWARD|NEXT] [n|ALL] [FROM|IN] name`.
fn fetch(sql: &str) -> Result<Kind, SqlError> {
    let toks = code_tokens(sql);
    let skip = matches!(&toks[0], Tok::Word(w) if w.eq_ignore_ascii_case("MOVE"));
    let verb = if skip { "MOVE" } else { "FETCH" };
    let mut count = Some(1);
    let mut i = 1;
    let word = |i: usize| match toks.get(i) {
        Some(Tok::Word(w)) => w.to_ascii_uppercase(),
        _ => String::new(),
    };
    let number = |i: usize| match toks.get(i) {
        Some(Tok::Number(n)) => n.parse::<u64>().ok(),
        _ => None,
    };
    match word(i).as_str() {
        "NEXT" => i += 1,
        "FORWARD" => {
            i += 1;
            if word(i) == "ALL" {
                count = None;
                i += 1;
            } else if let Some(n) = number(i) {
                count = Some(n);
                i += 1;
            }
        }
        "ALL" => {
            count = None;
            i += 1;
        }
        "PRIOR" | "FIRST" | "LAST" | "ABSOLUTE" | "RELATIVE" | "BACKWARD" => {
            return Err(SqlError::new(
                state::FEATURE_NOT_SUPPORTED,
                format!("{verb} {}: cursors here read forward only: {verb} FORWARD n FROM name", word(i)),
            ))
        }
        _ => {
            if let Some(n) = number(i) {
                count = Some(n);
                i += 1;
            }
        }
    }
    if matches!(word(i).as_str(), "FROM" | "IN") {
        i += 1;
    }
    let name = toks.get(i).and_then(ident).filter(|_| i + 1 == toks.len()).ok_or_else(|| {
        SqlError::new(state::SYNTAX, format!("{verb} here is {verb} [FORWARD] [n | ALL] [FROM] name"))
    })?;
    Ok(Kind::Fetch(Fetch { name, count, skip }))
}

/// The verbs of statements that would change data.
const WRITES: &[&str] = &[
    "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "REPLACE", "TRUNCATE", "GRANT", "REVOKE", "VACUUM",
    "ATTACH", "DETACH", "REINDEX", "PRAGMA", "MERGE", "UPSERT", "COMMENT", "CLUSTER", "REFRESH", "ANALYZE",
];

/// Classifies one statement.
pub fn classify(sql: &str) -> Result<Kind, SqlError> {
    let w = words(sql);
    let first = w.first().map(String::as_str).unwrap_or("");
    Ok(match first {
        "DECLARE" => return declare(sql),
        "FETCH" | "MOVE" => return fetch(sql),
        "CLOSE" => {
            let toks: Vec<Tok> = lex(sql).into_iter().map(|(_, t)| t).collect();
            return match (toks.get(1), toks.len()) {
                (Some(Tok::Word(w)), 2) if w.eq_ignore_ascii_case("ALL") => Ok(Kind::Close(None)),
                (Some(t), 2) => ident(t)
                    .map(|n| Kind::Close(Some(n)))
                    .ok_or_else(|| SqlError::new(state::SYNTAX, "CLOSE here is CLOSE name or CLOSE ALL")),
                _ => Err(SqlError::new(state::SYNTAX, "CLOSE here is CLOSE name or CLOSE ALL")),
            };
        }
        "SET" | "RESET" | "DISCARD" | "DEALLOCATE" | "LISTEN" | "UNLISTEN" => {
            if first == "SET" && w.iter().any(|x| x == "READ") && w.iter().any(|x| x == "WRITE") {
                return Err(SqlError::new(
                    state::READ_ONLY,
                    "cannot set a read-write transaction: ripples serves its results read-only",
                ));
            }
            Kind::Ignored(first.to_string())
        }
        "SHOW" => Kind::Show(w[1..].iter().filter(|x| x.as_str() != ";").cloned().collect::<Vec<_>>().join(" ")),
        "BEGIN" | "START" => {
            if w.iter().any(|x| x == "WRITE") {
                return Err(SqlError::new(
                    state::READ_ONLY,
                    "cannot start a read-write transaction: ripples serves its results read-only",
                ));
            }
            Kind::Begin
        }
        "COMMIT" | "END" => Kind::Commit,
        "ROLLBACK" | "ABORT" => Kind::Rollback,
        "COPY" => return copy(sql, &w),
        "SUBSCRIBE" => {
            return Err(SqlError::new(
                state::FEATURE_NOT_SUPPORTED,
                "SUBSCRIBE streams rows: write it as COPY (SUBSCRIBE name ...) TO STDOUT",
            ))
        }
        w0 if WRITES.contains(&w0) => Kind::Write(w0.to_string()),
        _ => Kind::Query,
    })
}

/// The 25006 error for a write.
pub fn read_only(verb: &str) -> SqlError {
    SqlError::new(
        state::READ_ONLY,
        format!("cannot execute {verb} in a read-only transaction: ripples serves its results read-only (they change only with the stream)"),
    )
}

/// `COPY (query) TO STDOUT`, `COPY table TO STDOUT`, `COPY (SUBSCRIBE ...) TO STDOUT`.
fn copy(sql: &str, w: &[String]) -> Result<Kind, SqlError> {
    let usage = || {
        SqlError::new(
            state::SYNTAX,
            "COPY here is COPY (query) TO STDOUT, COPY table TO STDOUT or COPY (SUBSCRIBE name ...) TO STDOUT",
        )
    };
    if w.iter().any(|x| x == "FROM") && !w.iter().any(|x| x == "(") || w.iter().any(|x| x == "STDIN") {
        return Err(read_only("COPY FROM"));
    }
    let to = w.iter().rposition(|x| x == "TO").ok_or_else(usage)?;
    if w.get(to + 1).map(String::as_str) != Some("STDOUT") {
        return Err(SqlError::new(
            state::FEATURE_NOT_SUPPORTED,
            "COPY writes to STDOUT only (the server has no files for clients): COPY (...) TO STDOUT",
        ));
    }
    if w.get(1).map(String::as_str) == Some("(") {
        // The text between the first `(` and its matching `)`.
        let open = sql.find('(').ok_or_else(usage)?;
        let inner = matching_paren(&sql[open..]).ok_or_else(usage)?;
        if words(inner).first().map(String::as_str) == Some("SUBSCRIBE") {
            return Ok(Kind::Subscribe(subscribe(inner)?));
        }
        return Ok(Kind::Copy(inner.to_string()));
    }
    let table = w.get(1).filter(|t| t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).ok_or_else(usage)?;
    Ok(Kind::Copy(format!("SELECT * FROM {}", table.to_ascii_lowercase())))
}

/// The text inside the parenthesis `s` starts with.
fn matching_paren(s: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    for (i, c) in s.bytes().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(&s[1..i]);
                    }
                }
                _ => {}
            },
        }
    }
    None
}

/// `SUBSCRIBE name [AS OF e] [UP TO e2] [WITH (SNAPSHOT = true|false, PROGRESS = true|false)]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscribe {
    /// The algorithm table subscribed to.
    pub table: String,
    /// Start at this retained epoch (its state as a snapshot, then later changes).
    pub as_of: Option<u64>,
    /// Exclusive: rows of epochs `< up_to`.
    pub up_to: Option<u64>,
    /// Send the state at the start epoch first (as `+1` rows).
    pub snapshot: bool,
    /// Send a progress row after every epoch.
    pub progress: bool,
}

/// Parses the `SUBSCRIBE ...` inside a `COPY (...) TO STDOUT`.
fn subscribe(sql: &str) -> Result<Subscribe, SqlError> {
    let usage = |what: &str| {
        SqlError::new(
            state::SYNTAX,
            format!("{what}: SUBSCRIBE [TO] name [AS OF epoch] [UP TO epoch] [WITH (SNAPSHOT = true|false, PROGRESS = true|false)]"),
        )
    };
    let w = words(sql);
    let mut i = 1;
    if w.get(i).map(String::as_str) == Some("TO") {
        i += 1;
    }
    let table = w.get(i).ok_or_else(|| usage("no table"))?.to_ascii_lowercase();
    i += 1;
    let mut s = Subscribe { table, as_of: None, up_to: None, snapshot: true, progress: false };
    let number = |x: Option<&String>| -> Result<u64, SqlError> {
        x.and_then(|n| n.parse().ok()).ok_or_else(|| usage("an epoch must be a non-negative integer"))
    };
    while i < w.len() {
        match (w[i].as_str(), w.get(i + 1).map(String::as_str)) {
            ("AS", Some("OF")) => {
                s.as_of = Some(number(w.get(i + 2))?);
                i += 3;
            }
            ("UP", Some("TO")) => {
                s.up_to = Some(number(w.get(i + 2))?);
                i += 3;
            }
            ("WITH", Some("(")) => {
                i += 2;
                while i < w.len() && w[i] != ")" {
                    let key = w[i].clone();
                    let mut j = i + 1;
                    if w.get(j).map(String::as_str) == Some("=") {
                        j += 1;
                    }
                    let value = match w.get(j).map(String::as_str) {
                        Some("TRUE") | Some("ON") | Some("1") => true,
                        Some("FALSE") | Some("OFF") | Some("0") => false,
                        _ => return Err(usage(&format!("{key} needs true or false"))),
                    };
                    match key.as_str() {
                        "SNAPSHOT" => s.snapshot = value,
                        "PROGRESS" => s.progress = value,
                        _ => return Err(usage(&format!("unknown option {key}"))),
                    }
                    i = j + 1;
                    if w.get(i).map(String::as_str) == Some(",") {
                        i += 1;
                    }
                }
                i += 1;
            }
            (other, _) => return Err(usage(&format!("unexpected {other}"))),
        }
    }
    if let (Some(a), Some(u)) = (s.as_of, s.up_to) {
        if u <= a {
            return Err(SqlError::new(
                state::INVALID_PARAMETER,
                format!("UP TO {u} must be after AS OF {a} (UP TO is exclusive)"),
            ));
        }
    }
    Ok(s)
}
