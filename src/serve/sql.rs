//! What a client's statement is, and the few rewrites that make PostgreSQL's dialect run on the
//! mirror: `$1` parameters, `::type` casts, `tbl AS OF e`, `COPY (...) TO
//! STDOUT` and `SUBSCRIBE`.

/// An error for the client: a SQLSTATE and a message that says what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    /// The SQLSTATE (see [`state`]).
    pub code: &'static str,
    /// What went wrong and what to do about it.
    pub message: String,
}

impl SqlError {
    /// An error with this SQLSTATE and message.
    pub fn new(code: &'static str, message: impl Into<String>) -> SqlError {
        SqlError { code, message: message.into() }
    }
}

/// SQLSTATEs used here.
pub mod state {
    /// `SYNTAX`: a syntax error.
    pub const SYNTAX: &str = "42601";
    /// `UNDEFINED_TABLE`: an unknown table.
    pub const UNDEFINED_TABLE: &str = "42P01";
    /// `UNDEFINED_COLUMN`: an unknown column.
    pub const UNDEFINED_COLUMN: &str = "42703";
    /// `UNDEFINED_FUNCTION`: an unknown function.
    pub const UNDEFINED_FUNCTION: &str = "42883";
    /// `AMBIGUOUS_COLUMN`: a column name that names several columns.
    pub const AMBIGUOUS_COLUMN: &str = "42702";
    /// `DATATYPE_MISMATCH`: a value of the wrong type.
    pub const DATATYPE_MISMATCH: &str = "42804";
    /// `READ_ONLY`: a write statement on the read-only mirror.
    pub const READ_ONLY: &str = "25006";
    /// `UNDEFINED_OBJECT`: an unknown setting or object.
    pub const UNDEFINED_OBJECT: &str = "42704";
    /// `FEATURE_NOT_SUPPORTED`: something the mirror does not serve (the system catalog, for one).
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    /// `INVALID_PARAMETER`: a bad parameter, e.g. an `AS OF` epoch no longer retained.
    pub const INVALID_PARAMETER: &str = "22023";
    /// `CANCELED`: a statement cancelled or over its time limit.
    pub const CANCELED: &str = "57014";
    /// `PROGRAM_LIMIT`: a statement over the row limit.
    pub const PROGRAM_LIMIT: &str = "54000";
    /// `TOO_MANY_CONNECTIONS`: more connections than `--serve-max-connections`.
    pub const TOO_MANY_CONNECTIONS: &str = "53300";
    /// `INTERNAL`: a failure of the mirror itself.
    pub const INTERNAL: &str = "XX000";
    /// `LAGGING`: a subscriber that fell behind the retained epochs.
    pub const LAGGING: &str = "55000";
}

#[derive(Clone, Debug, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Number(&'a str),
    /// `'...'`, `"..."`, comments: copied as they are.
    Verbatim(&'a str),
    /// `$N`.
    Param(&'a str),
    /// `::`.
    Cast,
    Punct(char),
}

/// Splits `sql` into tokens, each with the whitespace before it.
fn lex(sql: &str) -> Vec<(&str, Tok<'_>)> {
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

fn text(tok: &Tok) -> String {
    match tok {
        Tok::Word(s) | Tok::Number(s) | Tok::Verbatim(s) => s.to_string(),
        Tok::Param(n) => format!("${n}"),
        Tok::Cast => "::".into(),
        Tok::Punct(c) => c.to_string(),
    }
}

/// The words of a statement (upper case), skipping comments.
fn words(sql: &str) -> Vec<String> {
    lex(sql)
        .into_iter()
        .filter_map(|(_, t)| match t {
            Tok::Word(w) | Tok::Number(w) => Some(w.to_ascii_uppercase()),
            Tok::Punct(c) => Some(c.to_string()),
            Tok::Verbatim(v) if !v.starts_with("--") && !v.starts_with("/*") => Some(v.to_string()),
            _ => None,
        })
        .collect()
}

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
    /// A query for SQLite (after [`rewrite`]).
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

/// An identifier as PostgreSQL folds it: `"Name"` as written, `Name` in lower case.
fn ident(tok: &Tok) -> Option<String> {
    match tok {
        Tok::Word(w) => Some(w.to_ascii_lowercase()),
        Tok::Verbatim(v) if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') => {
            Some(v[1..v.len() - 1].replace("\"\"", "\""))
        }
        _ => None,
    }
}

fn declare(sql: &str) -> Result<Kind, SqlError> {
    let usage = || {
        SqlError::new(
            state::SYNTAX,
            "DECLARE here is DECLARE name [NO SCROLL] CURSOR [WITH HOLD | WITHOUT HOLD] FOR query",
        )
    };
    let toks: Vec<(&str, Tok)> = lex(sql)
        .into_iter()
        .filter(|(_, t)| !matches!(t, Tok::Verbatim(v) if v.starts_with("--") || v.starts_with("/*")))
        .collect();
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

fn fetch(sql: &str) -> Result<Kind, SqlError> {
    let toks: Vec<Tok> = lex(sql)
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| !matches!(t, Tok::Verbatim(v) if v.starts_with("--") || v.starts_with("/*")))
        .collect();
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

/// PostgreSQL catalogs that are empty for the mirror (no policies, statistics objects,
/// publications, inheritance, triggers, constraints, rules or indexes). psql's `\d NAME` reads them
/// in PostgreSQL's own syntax (`array(SELECT ...)`, `= ANY (...)`), which SQLite cannot parse.
const EMPTY_CATALOGS: &[&str] = &[
    "pg_policy",
    "pg_statistic_ext",
    "pg_publication",
    "pg_publication_rel",
    "pg_publication_namespace",
    "pg_inherits",
    "pg_trigger",
    "pg_constraint",
    "pg_rewrite",
    "pg_index",
    "pg_partitioned_table",
    "pg_foreign_table",
];

/// Whether a client's catalog query reads one of the catalogs this server keeps empty
/// (`EMPTY_CATALOGS`) as its first table or as an inner (comma) join: it has no rows.
pub fn reads_empty_catalog(sql: &str) -> bool {
    if !sql.contains("pg_catalog.") {
        return false;
    }
    let toks: Vec<Tok> = lex(sql)
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| !matches!(t, Tok::Verbatim(v) if v.starts_with("--") || v.starts_with("/*")))
        .collect();
    toks.windows(4).any(|w| {
        let before = matches!(&w[0], Tok::Word(f) if f.eq_ignore_ascii_case("FROM")) || w[0] == Tok::Punct(',');
        before
            && matches!(&w[1], Tok::Word(n) if n.eq_ignore_ascii_case("pg_catalog"))
            && w[2] == Tok::Punct('.')
            && matches!(&w[3], Tok::Word(t) if EMPTY_CATALOGS.contains(&t.to_ascii_lowercase().as_str()))
    })
}

/// A statement ready for SQLite.
#[derive(Clone, Debug, PartialEq)]
pub struct Rewritten {
    /// The statement in SQLite's dialect.
    pub sql: String,
    /// The epochs named by `AS OF`.
    pub as_of: Vec<u64>,
    /// The numbers compared with in a `WHERE` clause of a statement without `$N` parameters,
    /// which the SQLite text has as parameters `?1`, `?2`, ... (so that `WHERE vertex = 5` and
    /// `WHERE vertex = 6` share one prepared statement).
    pub literals: Vec<rusqlite::types::Value>,
}

/// A number as a SQL value, if it is a plain integer or decimal.
fn literal(n: &str) -> Option<rusqlite::types::Value> {
    use rusqlite::types::Value;
    if let Ok(i) = n.parse::<i64>() {
        return Some(Value::Integer(i));
    }
    if n.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E') {
        return n.parse::<f64>().ok().filter(|f| f.is_finite()).map(Value::Real);
    }
    None
}

/// Words after which `name AS OF n` cannot continue with an alias.
const NOT_ALIAS: &[&str] = &[
    "WHERE",
    "JOIN",
    "INNER",
    "LEFT",
    "RIGHT",
    "FULL",
    "CROSS",
    "NATURAL",
    "ON",
    "USING",
    "GROUP",
    "ORDER",
    "LIMIT",
    "OFFSET",
    "UNION",
    "EXCEPT",
    "INTERSECT",
    "HAVING",
    "WINDOW",
    "AS",
];

/// Whether a token ends an operand (so that a `~` after it is binary: a regular expression match).
fn operand(tok: &Tok) -> bool {
    const KEYWORDS: &[&str] = &[
        "AND",
        "OR",
        "NOT",
        "WHERE",
        "SELECT",
        "WHEN",
        "THEN",
        "ELSE",
        "ON",
        "BY",
        "HAVING",
        "IS",
        "IN",
        "LIKE",
        "CASE",
        "RETURNING",
        "DISTINCT",
        "ALL",
    ];
    match tok {
        Tok::Word(w) => !KEYWORDS.contains(&w.to_ascii_uppercase().as_str()),
        Tok::Verbatim(v) => !v.starts_with("--") && !v.starts_with("/*"),
        Tok::Number(_) | Tok::Punct(')') => true,
        _ => false,
    }
}

/// Rewrites PostgreSQL's dialect for SQLite: `$N` → `?N`, `::type` casts dropped, and `t AS OF e`
/// (for an algorithm table `t`) → the rows of `t` valid at `e`.
pub fn rewrite(sql: &str, tables: &[String]) -> Result<Rewritten, SqlError> {
    let toks = lex(sql);
    let mut out = String::with_capacity(sql.len() + 16);
    let mut as_of = Vec::new();
    let mut literals = Vec::new();
    // Numbers become parameters only in a WHERE clause (so that a column named after its
    // expression keeps its name) and only without the client's own parameters.
    let lift = !toks.iter().any(|(_, t)| matches!(t, Tok::Param(_)));
    let mut in_where = false;
    let upper = |t: &Tok| match t {
        Tok::Word(w) => Some(w.to_ascii_uppercase()),
        _ => None,
    };
    let mut i = 0;
    while i < toks.len() {
        let (space, tok) = &toks[i];
        match tok {
            Tok::Param(n) => {
                out.push_str(space);
                out.push('?');
                out.push_str(n);
            }
            Tok::Word(w)
                if w.eq_ignore_ascii_case("pg_catalog") && matches!(toks.get(i + 1), Some((_, Tok::Punct('.')))) =>
            {
                // `pg_catalog.name`: the served catalog's views are `name`.
                out.push_str(space);
                i += 2;
                continue;
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("COLLATE") => {
                // `COLLATE pg_catalog.default`, `COLLATE "C"`: SQLite compares bytes anyway.
                i += 1;
                if let Some((_, Tok::Word(c))) = toks.get(i) {
                    if c.eq_ignore_ascii_case("pg_catalog") {
                        i += 2;
                    }
                }
            }
            Tok::Word(w)
                if w.eq_ignore_ascii_case("OPERATOR") && matches!(toks.get(i + 1), Some((_, Tok::Punct('(')))) =>
            {
                // `OPERATOR(pg_catalog.~)` (psql's pattern matching).
                let close = (i..toks.len()).find(|&j| toks[j].1 == Tok::Punct(')')).unwrap_or(toks.len() - 1);
                let op: String = toks[i + 2..close]
                    .iter()
                    .filter_map(|(_, t)| match t {
                        Tok::Punct(c) if *c != '.' => Some(*c),
                        _ => None,
                    })
                    .collect();
                out.push_str(space);
                out.push_str(match op.as_str() {
                    "~" => "REGEXP",
                    "!~" => "NOT REGEXP",
                    "=" => "=",
                    "<>" => "<>",
                    _ => {
                        return Err(SqlError::new(
                            state::FEATURE_NOT_SUPPORTED,
                            format!("OPERATOR({op}) is not served; write the operator itself"),
                        ))
                    }
                });
                i = close;
            }
            Tok::Punct('!') if matches!(toks.get(i + 1), Some((_, Tok::Punct('~')))) => {
                out.push_str(space);
                out.push_str("NOT REGEXP");
                i += 1;
            }
            Tok::Punct('~') if i > 0 && operand(&toks[i - 1].1) => {
                // `a ~ 'pattern'` (binary: after an operand; unary `~x` is bitwise not).
                out.push_str(space);
                out.push_str("REGEXP");
            }
            Tok::Cast => {
                // Drop `::type`, `::type(n)`, `::type[]`, `::"type"`, `::pg_catalog.type`.
                i += 1;
                if matches!(toks.get(i), Some((_, Tok::Word(w))) if w.eq_ignore_ascii_case("pg_catalog"))
                    && matches!(toks.get(i + 1), Some((_, Tok::Punct('.'))))
                {
                    i += 2;
                }
                if let Some((_, Tok::Word(_) | Tok::Verbatim(_))) = toks.get(i) {
                    // `double precision`, `character varying`, `timestamp with time zone`.
                    while let Some((_, Tok::Word(w))) = toks.get(i + 1) {
                        let w = w.to_ascii_uppercase();
                        if ["PRECISION", "VARYING", "WITH", "WITHOUT", "TIME", "ZONE"].contains(&w.as_str()) {
                            i += 1;
                        } else {
                            break;
                        }
                    }
                }
                if let Some((_, Tok::Punct('('))) = toks.get(i + 1) {
                    while i < toks.len() && toks[i].1 != Tok::Punct(')') {
                        i += 1;
                    }
                }
                while let (Some((_, Tok::Punct('['))), Some((_, Tok::Punct(']')))) = (toks.get(i + 1), toks.get(i + 2))
                {
                    i += 2;
                }
            }
            Tok::Word(w)
                if toks.get(i + 1).and_then(|t| upper(&t.1)).as_deref() == Some("AS")
                    && toks.get(i + 2).and_then(|t| upper(&t.1)).as_deref() == Some("OF") =>
            {
                let name = w.to_ascii_lowercase();
                let Some((_, Tok::Number(n))) = toks.get(i + 3) else {
                    return Err(SqlError::new(state::SYNTAX, format!("{w} AS OF needs an epoch number: {w} AS OF 5")));
                };
                let e: u64 = n.parse().map_err(|_| {
                    SqlError::new(state::SYNTAX, format!("AS OF {n}: an epoch is a non-negative integer"))
                })?;
                if !tables.contains(&name) {
                    return Err(SqlError::new(
                        state::UNDEFINED_TABLE,
                        format!(
                            "AS OF reads an algorithm's table; \"{name}\" is none of them (the tables: {})",
                            tables.join(", ")
                        ),
                    ));
                }
                i += 3;
                // An alias: `wcc AS OF 5 w` or `wcc AS OF 5 AS w`.
                let mut alias = name.clone();
                let mut j = i + 1;
                if toks.get(j).and_then(|t| upper(&t.1)).as_deref() == Some("AS") {
                    j += 1;
                }
                if let Some((_, Tok::Word(a))) = toks.get(j) {
                    if !NOT_ALIAS.contains(&a.to_ascii_uppercase().as_str()) {
                        alias = a.to_string();
                        i = j;
                    }
                }
                as_of.push(e);
                out.push_str(space);
                out.push_str(&super::mirror::as_of_sql(&name, &e.to_string()));
                out.push_str(" AS ");
                out.push_str(&alias);
            }
            Tok::Number(n)
                if lift
                    && in_where
                    && i > 0
                    && matches!(toks[i - 1].1, Tok::Punct('=' | '<' | '>'))
                    && !matches!(toks.get(i + 1), Some((_, Tok::Cast | Tok::Punct('.'))))
                    && literal(n).is_some() =>
            {
                literals.extend(literal(n));
                out.push_str(space);
                out.push('?');
                out.push_str(&literals.len().to_string());
            }
            _ => {
                if let Tok::Word(w) = tok {
                    if w.eq_ignore_ascii_case("WHERE") {
                        in_where = true;
                    } else if ["SELECT", "GROUP", "ORDER", "LIMIT", "HAVING", "UNION", "EXCEPT", "INTERSECT", "WINDOW"]
                        .iter()
                        .any(|k| w.eq_ignore_ascii_case(k))
                    {
                        in_where = false;
                    }
                }
                out.push_str(space);
                out.push_str(&text(tok));
            }
        }
        i += 1;
    }
    Ok(Rewritten { sql: out, as_of, literals })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> Vec<String> {
        vec!["wcc".into(), "bfs".into()]
    }

    #[test]
    fn splits_at_semicolons_outside_quotes() {
        assert_eq!(split_statements("select 1; select ';'; -- x;\n"), vec!["select 1", " select ';'", " -- x;"]);
    }

    #[test]
    fn rewrites_parameters_casts_and_as_of() {
        let r = rewrite("SELECT value::bigint FROM wcc WHERE vertex = $1::int8", &tables()).unwrap();
        assert_eq!(r.sql, "SELECT value FROM wcc WHERE vertex = ?1");
        let r = rewrite("select count(*) from wcc as of 3 w join bfs using (vertex)", &tables()).unwrap();
        assert_eq!(r.as_of, vec![3]);
        assert!(r.sql.contains("FROM ripples_wcc_current WHERE valid_from <= 3 UNION ALL"), "{}", r.sql);
        assert!(r.sql.contains("WHERE epoch > 3 AND diff < 0 AND since <= 3) AS w join"), "{}", r.sql);
        assert_eq!(rewrite("select * from nope as of 1", &tables()).unwrap_err().code, state::UNDEFINED_TABLE);
        assert_eq!(rewrite("select 'a $1 ::x'", &tables()).unwrap().sql, "select 'a $1 ::x'");
        use rusqlite::types::Value;
        let r = rewrite("SELECT value = 1 FROM wcc WHERE vertex = 17 AND value <> 2.5 ORDER BY 1 LIMIT 3", &tables())
            .unwrap();
        assert_eq!(r.sql, "SELECT value = 1 FROM wcc WHERE vertex = ?1 AND value <> ?2 ORDER BY 1 LIMIT 3");
        assert_eq!(r.literals, vec![Value::Integer(17), Value::Real(2.5)]);
        let r = rewrite("SELECT value FROM wcc WHERE vertex = $1 AND value = 3", &tables()).unwrap();
        assert_eq!((r.sql.as_str(), r.literals.len()), ("SELECT value FROM wcc WHERE vertex = ?1 AND value = 3", 0));
    }

    #[test]
    fn rewrites_psql_catalog_queries() {
        let r = rewrite(
            "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(wcc)$' COLLATE pg_catalog.default AND n.nspname !~ '^pg_toast' AND c.oid::pg_catalog.regclass = 1 AND ~ 1 = -2",
            &tables(),
        )
        .unwrap();
        assert_eq!(
            r.sql,
            "SELECT c.relname FROM pg_class c WHERE c.relname REGEXP '^(wcc)$' AND n.nspname NOT REGEXP '^pg_toast' AND c.oid = ?1 AND ~ 1 = -2"
        );
    }

    #[test]
    fn knows_the_empty_catalogs() {
        assert!(reads_empty_catalog(
            "SELECT pol.polname FROM pg_catalog.pg_policy pol WHERE pol.polrelid = '16394' ORDER BY 1;"
        ));
        assert!(reads_empty_catalog("SELECT c.oid FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i WHERE 1"));
        assert!(!reads_empty_catalog("SELECT * FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_index i ON 1"));
        assert!(!reads_empty_catalog("SELECT * FROM pg_policy"));
        assert!(!reads_empty_catalog("SELECT 'FROM pg_catalog.pg_policy'"));
    }

    #[test]
    fn classifies_cursors() {
        assert_eq!(
            classify("DECLARE \"Big\" NO SCROLL CURSOR WITHOUT HOLD FOR SELECT * FROM wcc WHERE vertex > $1").unwrap(),
            Kind::Declare(Declare {
                name: "Big".into(),
                hold: false,
                query: "SELECT * FROM wcc WHERE vertex > $1".into()
            })
        );
        assert_eq!(
            classify("declare c cursor with hold for select 1").unwrap(),
            Kind::Declare(Declare { name: "c".into(), hold: true, query: "select 1".into() })
        );
        assert_eq!(
            classify("FETCH FORWARD 100 FROM \"Big\"").unwrap(),
            Kind::Fetch(Fetch { name: "Big".into(), count: Some(100), skip: false })
        );
        assert_eq!(classify("fetch all c").unwrap(), Kind::Fetch(Fetch { name: "c".into(), count: None, skip: false }));
        assert_eq!(
            classify("MOVE 5 IN c").unwrap(),
            Kind::Fetch(Fetch { name: "c".into(), count: Some(5), skip: true })
        );
        assert_eq!(classify("FETCH c").unwrap(), Kind::Fetch(Fetch { name: "c".into(), count: Some(1), skip: false }));
        assert_eq!(classify("FETCH BACKWARD 1 FROM c").unwrap_err().code, state::FEATURE_NOT_SUPPORTED);
        assert_eq!(classify("CLOSE \"Big\"").unwrap(), Kind::Close(Some("Big".into())));
        assert_eq!(classify("close all").unwrap(), Kind::Close(None));
        assert_eq!(classify("DECLARE c SCROLL CURSOR FOR select 1").unwrap_err().code, state::FEATURE_NOT_SUPPORTED);
    }

    #[test]
    fn classifies_statements() {
        assert_eq!(classify("SET extra_float_digits = 3").unwrap(), Kind::Ignored("SET".into()));
        assert_eq!(classify("show transaction_isolation").unwrap(), Kind::Show("TRANSACTION_ISOLATION".into()));
        assert_eq!(classify("insert into wcc values (1, 2)").unwrap(), Kind::Write("INSERT".into()));
        assert_eq!(classify("COPY (select 1) TO STDOUT").unwrap(), Kind::Copy("select 1".into()));
        assert_eq!(classify("copy wcc to stdout").unwrap(), Kind::Copy("SELECT * FROM wcc".into()));
        assert_eq!(classify("COPY wcc FROM STDIN").unwrap_err().code, state::READ_ONLY);
        let Kind::Subscribe(s) =
            classify("COPY (SUBSCRIBE wcc AS OF 2 UP TO 5 WITH (SNAPSHOT = false)) TO STDOUT").unwrap()
        else {
            panic!()
        };
        assert_eq!(
            s,
            Subscribe { table: "wcc".into(), as_of: Some(2), up_to: Some(5), snapshot: false, progress: false }
        );
        assert_eq!(
            classify("COPY (SUBSCRIBE wcc AS OF 5 UP TO 5) TO STDOUT").unwrap_err().code,
            state::INVALID_PARAMETER
        );
    }
}
