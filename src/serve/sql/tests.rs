//! Unit tests of the lexer, the classifier and the rewriter.

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
