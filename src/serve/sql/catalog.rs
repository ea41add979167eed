//! The PostgreSQL catalogs the mirror keeps empty, and how a query is seen to read one.

use super::lex::{code_tokens, Tok};

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
    code_tokens(sql).windows(4).any(|w| {
        let before = matches!(&w[0], Tok::Word(f) if f.eq_ignore_ascii_case("FROM")) || w[0] == Tok::Punct(',');
        before
            && matches!(&w[1], Tok::Word(n) if n.eq_ignore_ascii_case("pg_catalog"))
            && w[2] == Tok::Punct('.')
            && matches!(&w[3], Tok::Word(t) if EMPTY_CATALOGS.contains(&t.to_ascii_lowercase().as_str()))
    })
}
