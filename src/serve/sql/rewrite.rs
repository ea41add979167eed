//! The rewrite of PostgreSQL's dialect into SQLite's: `$N` parameters, `::type` casts,
//! `OPERATOR(...)`, `~`, `COLLATE`, `pg_catalog.` names, `t AS OF e`, and the numbers of a
//! `WHERE` clause lifted into parameters.

use super::lex::{is_comment, lex, text, Tok};
use super::{state, SqlError};

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
        Tok::Verbatim(_) => !is_comment(tok),
        Tok::Number(_) | Tok::Punct(')') => true,
        _ => false,
    }
}

/// Whether `tok` is the keyword `word` (in any case).
fn is_word(tok: Option<&Tok>, word: &str) -> bool {
    matches!(tok, Some(Tok::Word(w)) if w.eq_ignore_ascii_case(word))
}

/// Rewrites PostgreSQL's dialect for SQLite: `$N` → `?N`, `::type` casts dropped, and `t AS OF e`
/// (for an algorithm table `t`) → the rows of `t` valid at `e`.
pub fn rewrite(sql: &str, tables: &[String]) -> Result<Rewritten, SqlError> {
    let toks = lex(sql);
    let mut r = Rewriter {
        toks: &toks,
        tables,
        out: String::with_capacity(sql.len() + 16),
        as_of: Vec::new(),
        literals: Vec::new(),
        // Numbers become parameters only in a WHERE clause (so that a column named after its
        // expression keeps its name) and only without the client's own parameters.
        lift: !toks.iter().any(|(_, t)| matches!(t, Tok::Param(_))),
        in_where: false,
    };
    let mut i = 0;
    while i < toks.len() {
        i = r.step(i)?;
    }
    Ok(Rewritten { sql: r.out, as_of: r.as_of, literals: r.literals })
}

/// A rewrite under way: the statement's tokens and the SQLite text written so far.
struct Rewriter<'a> {
    toks: &'a [(&'a str, Tok<'a>)],
    tables: &'a [String],
    out: String,
    as_of: Vec<u64>,
    literals: Vec<rusqlite::types::Value>,
    /// Numbers of the `WHERE` clause become parameters (the statement has no `$N` of its own).
    lift: bool,
    /// The tokens are in a `WHERE` clause.
    in_where: bool,
}

impl Rewriter<'_> {
    /// Rewrites the token at `i` (with the tokens it takes along); the index of the next one.
    fn step(&mut self, i: usize) -> Result<usize, SqlError> {
        let toks = self.toks;
        let (space, tok) = &toks[i];
        let next = toks.get(i + 1).map(|(_, t)| t);
        match tok {
            Tok::Param(n) => {
                self.out.push_str(space);
                self.out.push('?');
                self.out.push_str(n);
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("pg_catalog") && next == Some(&Tok::Punct('.')) => {
                // `pg_catalog.name`: the served catalog's views are `name`.
                self.out.push_str(space);
                return Ok(i + 2);
            }
            // `COLLATE pg_catalog.default`, `COLLATE "C"`: SQLite compares bytes anyway.
            Tok::Word(w) if w.eq_ignore_ascii_case("COLLATE") => return Ok(skip_collate(toks, i)),
            Tok::Word(w) if w.eq_ignore_ascii_case("OPERATOR") && next == Some(&Tok::Punct('(')) => {
                return self.operator(i)
            }
            Tok::Punct('!') if next == Some(&Tok::Punct('~')) => {
                self.out.push_str(space);
                self.out.push_str("NOT REGEXP");
                return Ok(i + 2);
            }
            Tok::Punct('~') if i > 0 && operand(&toks[i - 1].1) => {
                // `a ~ 'pattern'` (binary: after an operand; unary `~x` is bitwise not).
                self.out.push_str(space);
                self.out.push_str("REGEXP");
            }
            Tok::Cast => return Ok(skip_cast(toks, i)),
            Tok::Word(w)
                if is_word(toks.get(i + 1).map(|t| &t.1), "AS") && is_word(toks.get(i + 2).map(|t| &t.1), "OF") =>
            {
                return self.as_of(i, w)
            }
            Tok::Number(n) if self.lifts(i) => {
                self.literals.extend(literal(n));
                self.out.push_str(space);
                self.out.push('?');
                self.out.push_str(&self.literals.len().to_string());
            }
            _ => self.copy(space, tok),
        }
        Ok(i + 1)
    }

    /// Copies a token as it is, noting where a `WHERE` clause starts and ends.
    fn copy(&mut self, space: &str, tok: &Tok) {
        if let Tok::Word(w) = tok {
            if w.eq_ignore_ascii_case("WHERE") {
                self.in_where = true;
            } else if ["SELECT", "GROUP", "ORDER", "LIMIT", "HAVING", "UNION", "EXCEPT", "INTERSECT", "WINDOW"]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k))
            {
                self.in_where = false;
            }
        }
        self.out.push_str(space);
        self.out.push_str(&text(tok));
    }

    /// Whether the number at `i` becomes a parameter: a plain number compared with in a
    /// `WHERE` clause (`= 5`, `< 2.5`), not cast and not qualified.
    fn lifts(&self, i: usize) -> bool {
        let toks = self.toks;
        let Tok::Number(n) = toks[i].1 else { return false };
        self.lift
            && self.in_where
            && i > 0
            && matches!(toks[i - 1].1, Tok::Punct('=' | '<' | '>'))
            && !matches!(toks.get(i + 1), Some((_, Tok::Cast | Tok::Punct('.'))))
            && literal(n).is_some()
    }

    /// `OPERATOR(pg_catalog.~)` (psql's pattern matching) at `i`: the operator itself.
    fn operator(&mut self, i: usize) -> Result<usize, SqlError> {
        let toks = self.toks;
        // `toks[i + 1]` is the `(`: a `)` can only come after it.
        let close = (i..toks.len()).find(|&j| toks[j].1 == Tok::Punct(')')).ok_or_else(|| {
            SqlError::new(state::SYNTAX, "OPERATOR( needs its closing parenthesis: OPERATOR(pg_catalog.~)")
        })?;
        let op: String = toks[i + 2..close]
            .iter()
            .filter_map(|(_, t)| match t {
                Tok::Punct(c) if *c != '.' => Some(*c),
                _ => None,
            })
            .collect();
        self.out.push_str(toks[i].0);
        self.out.push_str(match op.as_str() {
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
        Ok(close + 1)
    }

    /// `name AS OF e [[AS] alias]` at `i` (`name` is `w`): the rows of the algorithm table
    /// `name` valid at epoch `e`, under the alias (or the table's name).
    fn as_of(&mut self, i: usize, w: &str) -> Result<usize, SqlError> {
        let toks = self.toks;
        let name = w.to_ascii_lowercase();
        let Some((_, Tok::Number(n))) = toks.get(i + 3) else {
            return Err(SqlError::new(state::SYNTAX, format!("{w} AS OF needs an epoch number: {w} AS OF 5")));
        };
        let e: u64 = n
            .parse()
            .map_err(|_| SqlError::new(state::SYNTAX, format!("AS OF {n}: an epoch is a non-negative integer")))?;
        if !self.tables.contains(&name) {
            return Err(SqlError::new(
                state::UNDEFINED_TABLE,
                format!(
                    "AS OF reads an algorithm's table; \"{name}\" is none of them (the tables: {})",
                    self.tables.join(", ")
                ),
            ));
        }
        let (last, alias) = alias(toks, i + 3).unwrap_or((i + 3, name.as_str()));
        self.as_of.push(e);
        self.out.push_str(toks[i].0);
        self.out.push_str(&crate::serve::mirror::as_of_sql(&name, &e.to_string()));
        self.out.push_str(" AS ");
        self.out.push_str(alias);
        Ok(last + 1)
    }
}

/// The alias after `name AS OF e` (`e` at `at`): `wcc AS OF 5 w` or `wcc AS OF 5 AS w`, with the
/// index of its token.
fn alias<'a>(toks: &'a [(&'a str, Tok<'a>)], at: usize) -> Option<(usize, &'a str)> {
    let mut j = at + 1;
    if is_word(toks.get(j).map(|t| &t.1), "AS") {
        j += 1;
    }
    match toks.get(j) {
        Some((_, Tok::Word(a))) if !NOT_ALIAS.contains(&a.to_ascii_uppercase().as_str()) => Some((j, a)),
        _ => None,
    }
}

/// Skips `COLLATE name` at `i` (`name` may be `pg_catalog.name`); the index after it.
fn skip_collate(toks: &[(&str, Tok)], i: usize) -> usize {
    let mut j = i + 1;
    if is_word(toks.get(j).map(|t| &t.1), "pg_catalog") {
        j += 2;
    }
    j + 1
}

/// Skips a cast at `i`: `::type`, `::type(n)`, `::type[]`, `::"type"`, `::pg_catalog.type`; the
/// index after it.
fn skip_cast(toks: &[(&str, Tok)], i: usize) -> usize {
    let mut i = i + 1;
    if is_word(toks.get(i).map(|t| &t.1), "pg_catalog") && matches!(toks.get(i + 1), Some((_, Tok::Punct('.')))) {
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
    while let (Some((_, Tok::Punct('['))), Some((_, Tok::Punct(']')))) = (toks.get(i + 1), toks.get(i + 2)) {
        i += 2;
    }
    i + 1
}
