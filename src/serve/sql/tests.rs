//! Unit tests of the lexer, the classifier and the rewriter, and proptest fuzzing that they never panic.

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
    let r =
        rewrite("SELECT value = 1 FROM wcc WHERE vertex = 17 AND value <> 2.5 ORDER BY 1 LIMIT 3", &tables()).unwrap();
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
        Kind::Declare(Declare { name: "Big".into(), hold: false, query: "SELECT * FROM wcc WHERE vertex > $1".into() })
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
    assert_eq!(classify("MOVE 5 IN c").unwrap(), Kind::Fetch(Fetch { name: "c".into(), count: Some(5), skip: true }));
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
    assert_eq!(s, Subscribe { table: "wcc".into(), as_of: Some(2), up_to: Some(5), snapshot: false, progress: false });
    assert_eq!(classify("COPY (SUBSCRIBE wcc AS OF 5 UP TO 5) TO STDOUT").unwrap_err().code, state::INVALID_PARAMETER);
}

#[test]
fn an_unclosed_operator_is_a_syntax_error() {
    // `OPERATOR(` as the last tokens, and without its `)` before more tokens.
    for sql in ["select 1 where a OPERATOR(", "select 1 where a OPERATOR(pg_catalog.~ 'x'", "OPERATOR("] {
        assert_eq!(rewrite(sql, &tables()).unwrap_err().code, state::SYNTAX, "{sql}");
    }
    assert_eq!(rewrite("a OPERATOR(=) b", &tables()).unwrap().sql, "a = b");
}

// Robustness: the lexer, the classifier and the rewriter answer any input (a client's statement,
// complete or cut short) with a result or a `SqlError`, never a panic.

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngSeed};

/// The example statements of the book's SQL chapter and of the serve tests, and psql's catalog queries.
const EXAMPLES: &[&str] = &[
    "SELECT ripples_epoch()",
    "SELECT value AS component, count(*) AS size FROM wcc GROUP BY value ORDER BY size DESC LIMIT 3;",
    "SELECT b.value AS hops, count(*) FROM bfs b JOIN wcc w USING (vertex)\n          WHERE w.value = (SELECT value FROM wcc WHERE vertex = 1) GROUP BY hops ORDER BY hops;",
    "SELECT count(DISTINCT value) AS components FROM wcc AS OF 3;",
    "SELECT epoch, updates, round(latency_ms, 2) AS latency_ms, output_changes FROM epochs ORDER BY epoch DESC LIMIT 3;",
    "INSERT INTO wcc VALUES (1, 1);",
    "SELECT * FROM pragma_table_info('wcc')",
    "COPY (SUBSCRIBE wcc AS OF 5 UP TO 12 WITH (SNAPSHOT = false)) TO STDOUT",
    "COPY (SUBSCRIBE wcc AS OF 0 UP TO 11 WITH (SNAPSHOT = true, PROGRESS = true)) TO STDOUT",
    "SELECT value FROM wcc WHERE vertex = :v;",
    "BEGIN; SELECT ripples_epoch() = (SELECT max(epoch) FROM epochs); COMMIT",
    "COPY (SELECT vertex, value FROM wcc AS OF 5 WHERE vertex >= $1 ORDER BY vertex) TO STDOUT",
    "COPY (SELECT vertex, value FROM wcc ORDER BY vertex) TO STDOUT",
    "copy wcc to stdout",
    "COPY wcc FROM STDIN",
    "FETCH FORWARD 1 FROM nope",
    "SELECT * FROM wcc AS OF 4 JOIN nope USING (vertex)",
    "SELECT count(*) FROM wcc WHERE value = $1 AND vertex >= $2",
    "SELECT ripples_epoch(), count(*) FROM wcc",
    "SELECT value, count(*) AS n FROM wcc AS OF 5 GROUP BY value ORDER BY n DESC, value LIMIT 1",
    "SELECT version(), current_database()",
    "SHOW transaction_isolation",
    "SET extra_float_digits = 3",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "DECLARE \"Big\" NO SCROLL CURSOR WITHOUT HOLD FOR SELECT * FROM wcc WHERE vertex > $1",
    "declare c cursor with hold for select 1",
    "MOVE 5 IN c",
    "CLOSE ALL",
    "SELECT value::bigint FROM wcc WHERE vertex = $1::int8",
    "select count(*) from wcc as of 3 w join bfs using (vertex)",
    "SELECT value = 1 FROM wcc WHERE vertex = 17 AND value <> 2.5 ORDER BY 1 LIMIT 3",
    "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(wcc)$' COLLATE pg_catalog.default AND n.nspname !~ '^pg_toast' AND c.oid::pg_catalog.regclass = 1 AND ~ 1 = -2",
    "SELECT pol.polname FROM pg_catalog.pg_policy pol WHERE pol.polrelid = '16394' ORDER BY 1;",
    "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)::character varying(10)[] FROM pg_catalog.pg_attribute a /* c */ -- x\nWHERE a.attrelid = '16394' AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum;",
];

/// Runs `sql` through every step a server runs a statement through (the panics are the test).
fn exercise(sql: &str) {
    let tables = tables();
    let _ = reads_empty_catalog(sql);
    let _ = rewrite(sql, &tables);
    for stmt in std::iter::once(sql.to_string()).chain(split_statements(sql)) {
        let _ = reads_empty_catalog(&stmt);
        match classify(&stmt) {
            Ok(Kind::Query) => {
                let _ = rewrite(&stmt, &tables);
            }
            Ok(Kind::Copy(query) | Kind::Declare(Declare { query, .. })) => {
                let _ = rewrite(&query, &tables);
            }
            _ => {}
        }
    }
}

#[test]
fn every_prefix_of_the_examples_is_answered() {
    for sql in EXAMPLES {
        exercise(sql);
        // Every prefix by character ...
        for (at, _) in sql.char_indices() {
            exercise(&sql[..at]);
        }
        // ... and by token (at the whitespace between them).
        let words: Vec<&str> = sql.split_whitespace().collect();
        for n in 0..=words.len() {
            exercise(&words[..n].join(" "));
        }
    }
}

/// The pieces random statements are made of.
fn piece() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "SELECT",
        "FROM",
        "WHERE",
        "AND",
        "OR",
        "NOT",
        "AS",
        "OF",
        "AS OF",
        "UP",
        "TO",
        "UP TO",
        "WITH",
        "SUBSCRIBE",
        "COPY",
        "STDOUT",
        "STDIN",
        "DECLARE",
        "CURSOR",
        "FOR",
        "HOLD",
        "NO",
        "SCROLL",
        "BINARY",
        "FETCH",
        "MOVE",
        "FORWARD",
        "NEXT",
        "ALL",
        "IN",
        "CLOSE",
        "BEGIN",
        "START",
        "COMMIT",
        "ROLLBACK",
        "SET",
        "SHOW",
        "READ",
        "WRITE",
        "INSERT",
        "JOIN",
        "USING",
        "ON",
        "GROUP",
        "ORDER",
        "BY",
        "LIMIT",
        "COLLATE",
        "pg_catalog",
        "OPERATOR",
        "OPERATOR(",
        "OPERATOR(pg_catalog.~)",
        "SNAPSHOT",
        "PROGRESS",
        "TRUE",
        "FALSE",
        "precision",
        "varying",
        "wcc",
        "bfs",
        "epochs",
        "x",
        "_y",
        "\"Big\"",
        "\"",
        "'",
        "''",
        "'abc",
        "\"q\"\"q\"",
        "(",
        ")",
        "((",
        "))",
        ".",
        ",",
        ";",
        "=",
        "<",
        ">",
        "<>",
        "!",
        "~",
        "!~",
        "::",
        ":",
        "*",
        "+",
        "-",
        "[",
        "]",
        "[]",
        "$",
        "$1",
        "$2",
        "?",
        "--",
        "-- c\n",
        "/*",
        "*/",
        "/* c */",
        "0",
        "1",
        "5",
        "2.5",
        "1e3",
        "1.2.3",
        "18446744073709551616",
        "99999999999999999999",
        "-1",
        "é",
        "名",
        "ripples_epoch()",
    ];
    prop_oneof![
        8 => prop::sample::select(PIECES).prop_map(str::to_string),
        1 => "[a-z_]{1,6}",
        1 => "[0-9]{1,22}",
        1 => any::<char>().prop_map(|c| c.to_string()),
    ]
}

/// A statement: pieces joined by nothing, a space or a newline.
fn statement() -> impl Strategy<Value = String> {
    prop::collection::vec((piece(), prop::sample::select(&["", " ", " ", "\n"][..])), 0..32)
        .prop_map(|v| v.into_iter().flat_map(|(p, sep)| [p, sep.to_string()]).collect())
}

fn fuzz_config() -> ProptestConfig {
    ProptestConfig {
        cases: 2_000,
        rng_seed: RngSeed::Fixed(0x5eed_5e7e),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(fuzz_config())]

    #[test]
    fn random_statements_are_answered(sql in statement()) {
        exercise(&sql);
    }

    #[test]
    fn examples_cut_and_spliced_are_answered(
        example in prop::sample::select(EXAMPLES),
        cut in any::<prop::sample::Index>(),
        tail in statement(),
    ) {
        let cuts: Vec<usize> = example.char_indices().map(|(i, _)| i).chain([example.len()]).collect();
        let head = &example[..cuts[cut.index(cuts.len())]];
        exercise(head);
        exercise(&format!("{head}{tail}"));
    }
}
