//! Tests of the parsers and writers (unit tests and proptest fuzzing).

use super::*;
use crate::types::{Node, Update};
use proptest::prelude::*;
use std::path::PathBuf;

fn edge(line: &str) -> Result<Option<(Node, Node, Option<f64>)>, String> {
    parse_edge_line(line).map_err(|e| e.to_string())
}

#[test]
fn edge_lines() {
    assert_eq!(edge("1 2"), Ok(Some((1, 2, None))));
    assert_eq!(edge("1\t2\r\n"), Ok(Some((1, 2, None))));
    assert_eq!(edge("  1 ,\t, 2  \n"), Ok(Some((1, 2, None))));
    assert_eq!(edge("1,2,0.5"), Ok(Some((1, 2, Some(0.5)))));
    assert_eq!(edge("1 2 3"), Ok(Some((1, 2, Some(3.0)))));
    assert_eq!(edge("1 2 2e-3"), Ok(Some((1, 2, Some(2e-3)))));
    assert_eq!(edge("1 2 -0"), Ok(Some((1, 2, Some(0.0)))));
    assert!(parse_edge_line("1 2 -0").unwrap().unwrap().2.unwrap().is_sign_positive());
    assert_eq!(edge("007 18446744073709551615"), Ok(Some((7, u64::MAX, None))));
    assert_eq!(edge("\u{feff}1 2"), Ok(Some((1, 2, None))));
    for skipped in ["", "\n", "\r\n", "   \t ", "# a comment", "  % matrix market", "#1 2"] {
        assert_eq!(edge(skipped), Ok(None), "{skipped:?}");
    }
}

#[test]
fn edge_errors() {
    let cases = [
        ("1", "too few fields: expected 2 or 3 (src dst [weight]), found 1"),
        (",,", "too few fields: expected 2 or 3 (src dst [weight]), found 0"),
        ("1 2 3 4 5", "too many fields: expected 2 or 3 (src dst [weight]), found 5"),
        ("a 2", "\"a\" is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)"),
        ("1 2.5", "\"2.5\" is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)"),
        ("+1 2", "\"+1\" is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)"),
        ("-5 2", "negative vertex id \"-5\" (vertex ids are integers from 0 to 18446744073709551615)"),
        (
            "1 18446744073709551616",
            "vertex id \"18446744073709551616\" is too large (the largest vertex id is 18446744073709551615)",
        ),
        ("1 2 x", "\"x\" is not a weight (weights are finite numbers >= 0, such as 1, 0.5 or 2e-3)"),
        ("1 2 NaN", "weight \"NaN\" is NaN (weights are finite numbers >= 0)"),
        ("1 2 inf", "weight \"inf\" is infinite (weights are finite numbers >= 0)"),
        ("1 2 1e400", "weight \"1e400\" is infinite (weights are finite numbers >= 0)"),
        ("1 2 -0.5", "negative weight \"-0.5\" (weights are finite numbers >= 0)"),
    ];
    for (line, message) in cases {
        assert_eq!(edge(line), Err(message.to_string()), "{line:?}");
    }
    // Overflow with a non-digit later is a bad id, not an overflow.
    assert!(matches!(parse_edge_line("99999999999999999999x 1"), Err(LineError::BadId(_))));
    // Long fields are shortened in messages.
    let long = "x".repeat(1000);
    let msg = edge(&format!("{long} 1")).unwrap_err();
    assert!(msg.len() < 200, "{msg}");
}

#[test]
fn vertex_lines() {
    assert_eq!(parse_vertex_line("42\r\n"), Ok(Some(42)));
    assert_eq!(parse_vertex_line("  # c"), Ok(None));
    assert_eq!(parse_vertex_line(" \t"), Ok(None));
    assert_eq!(parse_vertex_line("1 2").unwrap_err().to_string(), "too many fields: expected 1 (a vertex id), found 2");
    assert_eq!(parse_vertex_line(",").unwrap_err().to_string(), "too few fields: expected 1 (a vertex id), found 0");
    assert!(matches!(parse_vertex_line("-3"), Err(LineError::NegativeId(_))));
}

#[test]
fn update_lines() {
    let u = |src, dst, weight, diff| Ok(Some(Update { src, dst, weight, diff }));
    assert_eq!(parse_update_line("+ 1 2"), u(1, 2, None, 1));
    assert_eq!(parse_update_line("- 1 2"), u(1, 2, None, -1));
    assert_eq!(parse_update_line("-,1,2,0.25\r\n"), u(1, 2, Some(0.25), -1));
    assert_eq!(parse_update_line("3 4 5"), u(3, 4, Some(5.0), 1));
    assert_eq!(parse_update_line("# + 1 2"), Ok(None));
    let err = |line: &str| parse_update_line(line).unwrap_err().to_string();
    assert_eq!(
        err("+1 2"),
        "unknown sign \"+1\": an update line starts with \"+\" or \"-\" as a field of its own \
         (as in \"- 1 2\"), or directly with the source vertex id"
    );
    assert!(err("-5 2").starts_with("unknown sign \"-5\""));
    assert!(err("x 1 2").starts_with("unknown sign \"x\""));
    assert_eq!(err("+ 1"), "too few fields: expected 3 or 4 (+|- src dst [weight]), found 2");
    assert_eq!(err("+"), "too few fields: expected 3 or 4 (+|- src dst [weight]), found 1");
    assert_eq!(err("1"), "too few fields: expected 2 or 3 (src dst [weight]), found 1");
    assert_eq!(err("- 1 2 3 4"), "too many fields: expected 3 or 4 (+|- src dst [weight]), found 5");
    assert_eq!(err("1 2 3 4"), "too many fields: expected 2 or 3 (src dst [weight]), found 4");
    assert!(err("+ 1 2 -1").starts_with("negative weight \"-1\""));
    assert!(err("+ a 2").starts_with("\"a\" is not a vertex id"));
}

fn write(dir: &tempfile::TempDir, name: &str, text: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn ranges_cover_every_line_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    let mut expected = Vec::new();
    for i in 0..300u64 {
        match i % 7 {
            0 => text.push_str("# comment line\n"),
            1 => text.push_str("\r\n"),
            2 => {
                text.push_str(&format!("{} {} {}\r\n", i, i * 1_000_003, i));
                expected.push((i, i * 1_000_003, Some(i as f64)));
            }
            _ => {
                text.push_str(&format!("{}\t{}\n", i, i * i * 977));
                expected.push((i, i * i * 977, None));
            }
        }
    }
    text.push_str("5 6"); // no final newline
    expected.push((5, 6, None));
    let path = write(&dir, "edges.txt", text.as_bytes());
    let len = text.len();
    for peers in (1..12).chain([len - 1, len, len + 1, 2 * len]) {
        let mut all = Vec::new();
        for index in 0..peers {
            all.extend(read_edges_range(&path, index, peers).unwrap());
        }
        assert_eq!(all, expected, "peers = {peers}");
    }
    assert_eq!(read_edges(&path).unwrap(), expected);
}

#[test]
fn long_lines_cross_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = Vec::new();
    let mut expected = Vec::new();
    for i in 0..200_000u64 {
        push_edge_line(&mut text, i, u64::MAX - i);
        expected.push((i, u64::MAX - i, None));
        if i % 50_000 == 0 {
            text.extend_from_slice(b"#");
            text.extend(std::iter::repeat_n(b'y', 3 * CHUNK));
            text.push(b'\n');
        }
    }
    let path = write(&dir, "big.txt", &text);
    for peers in [1, 2, 3, 7] {
        let mut all = Vec::new();
        for index in 0..peers {
            all.extend(read_edges_range(&path, index, peers).unwrap());
        }
        assert_eq!(all, expected, "peers = {peers}");
    }
}

#[test]
fn errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..1000 {
        text.push_str(&format!("{i} {}\n", i + 1));
    }
    text.push_str("17 x\n");
    for i in 0..1000 {
        text.push_str(&format!("{i} {}\r\n", i + 1));
    }
    let path = write(&dir, "bad.txt", text.as_bytes());
    let message = format!(
        "{}:1001: \"x\" is not a vertex id (vertex ids are integers from 0 to 18446744073709551615)",
        path.display()
    );
    for peers in [1, 2, 5] {
        let errors: Vec<String> =
            (0..peers).filter_map(|i| read_edges_range(&path, i, peers).err()).map(|e| e.to_string()).collect();
        assert_eq!(errors, vec![message.clone()], "peers = {peers}");
    }
    match read_edges(&path) {
        Err(SourceError::Input(e)) => assert_eq!(e.line, 1001),
        other => panic!("{other:?}"),
    }

    let missing = dir.path().join("missing.txt");
    let e = read_edges(&missing).unwrap_err().to_string();
    assert!(e.starts_with(&format!("cannot read {}: ", missing.display())), "{e}");
    let e = read_updates(&missing).unwrap_err().to_string();
    assert!(e.starts_with(&format!("cannot read {}: ", missing.display())), "{e}");

    let path = write(&dir, "v.txt", b"1\n2\n\n# c\n3 4\n");
    assert_eq!(
        read_vertices(&path).unwrap_err().to_string(),
        format!("{}:5: too many fields: expected 1 (a vertex id), found 2", path.display())
    );
}

#[test]
fn updates_file_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let updates = vec![
        Update::insert(1, 2),
        Update::delete(1, 2),
        Update { src: 0, dst: u64::MAX, weight: Some(0.1), diff: 1 },
        Update { src: 3, dst: 3, weight: Some(1e300), diff: -1 },
        Update { src: 3, dst: 4, weight: Some(5e-324), diff: 1 },
    ];
    let path = dir.path().join("u.txt");
    write_updates(&path, &updates).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("+ 1 2\n- 1 2\n+ 0 18446744073709551615 0.1\n"), "{text}");
    let read: Vec<(usize, Update)> = read_updates(&path).unwrap();
    assert_eq!(read, updates.iter().copied().enumerate().map(|(i, u)| (i + 1, u)).collect::<Vec<_>>());

    let path = write(&dir, "u2.txt", b"# header\n+ 1 2\n\n3 4\n- 1 2\n");
    assert_eq!(
        read_updates(&path).unwrap(),
        vec![(2, Update::insert(1, 2)), (4, Update::insert(3, 4)), (5, Update::delete(1, 2))]
    );
    let path = write(&dir, "u3.txt", b"+ 1 2\r\n\r\n+1 2\r\n");
    let e = read_updates(&path).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:3: unknown sign \"+1\"", path.display())), "{e}");

    let edges = vec![(0, 1), (u64::MAX, 0), (12345, 678)];
    let path = dir.path().join("e.txt");
    write_edges(&path, &edges).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "0 1\n18446744073709551615 0\n12345 678\n");
    let vertices = vec![5, 0, u64::MAX];
    let path = dir.path().join("v.txt");
    write_vertices(&path, &vertices).unwrap();
    assert_eq!(read_vertices(&path).unwrap(), vertices);
}

#[test]
fn newline_search() {
    for len in 0..40 {
        for at in 0..=len {
            let mut s = vec![b'a'; len];
            if at < len {
                s[at] = b'\n';
            }
            let expected = if at < len { Some(at) } else { None };
            assert_eq!(find_newline(&s), expected);
        }
    }
    assert_eq!(find_newline(b"\x8a\x0b\x09\xff\xff\xff\xff\xff\xff\n"), Some(9));
}

fn separator() -> impl Strategy<Value = String> {
    prop::sample::select(vec![" ", "\t", ",", " , ", "\t\t", ", ", ",,"]).prop_map(str::to_string)
}

fn weight() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        0.0..1e6f64,
        any::<u64>().prop_map(f64::from_bits).prop_filter("finite, >= 0", |w| w.is_finite() && *w >= 0.0),
    ]
}

proptest! {
    #[test]
    fn never_panics_on_strings(line in ".*") {
        let _ = parse_timed_update_line(&line);
        let _ = parse_edge_line(&line);
        let _ = parse_vertex_line(&line);
        let _ = parse_update_line(&line);
    }

    #[test]
    fn never_panics_on_bytes(line in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = parse_timed_update_bytes(&line);
        let _ = parse_edge_bytes(&line);
        let _ = parse_vertex_bytes(&line);
        let _ = parse_update_bytes(&line);
    }

    #[test]
    fn never_panics_on_numberish(line in "[-+0-9a-z., \t\r#%eE@]{0,40}") {
        let _ = parse_timed_update_line(&line).map(|_| ()).map_err(|e| e.to_string());
        let _ = parse_edge_line(&line).map(|_| ()).map_err(|e| e.to_string());
        let _ = parse_vertex_line(&line).map(|_| ()).map_err(|e| e.to_string());
        let _ = parse_update_line(&line).map(|_| ()).map_err(|e| e.to_string());
    }

    #[test]
    fn fast_paths_agree_with_general(line in "[-+0-9a-z., \t\r#%eE]{0,40}") {
        let bytes = line.as_bytes();
        if let Some(edge) = fast_src_dst_weight(bytes) {
            prop_assert_eq!(parse_edge_general(bytes), Ok(Some(edge)));
        }
        if let Some(update) = fast_update(bytes) {
            prop_assert_eq!(parse_update_general(bytes), Ok(Some(update)));
        }
    }

    #[test]
    fn fast_paths_agree_on_valid_shapes(
        signs in "[-+]?", a in "[0-9]{1,21}", b in "[0-9]{1,21}", w in "([0-9.eE+-]{1,6})?",
        s1 in "[ ,\t]{0,2}", s2 in "[ ,\t]{1,2}", s3 in "[ ,\t]{1,2}", end in "[ ,\t\r\n]{0,2}",
    ) {
        let line = format!("{signs}{s1}{a}{s2}{b}{s3}{w}{end}");
        let bytes = line.as_bytes();
        if let Some(edge) = fast_src_dst_weight(bytes) {
            prop_assert_eq!(parse_edge_general(bytes), Ok(Some(edge)));
        }
        if let Some(update) = fast_update(bytes) {
            prop_assert_eq!(parse_update_general(bytes), Ok(Some(update)));
        }
        prop_assert_eq!(parse_edge_bytes(bytes), parse_edge_general(bytes));
        prop_assert_eq!(parse_update_bytes(bytes), parse_update_general(bytes));
    }

    #[test]
    fn edge_lines_round_trip(
        src in any::<u64>(), dst in any::<u64>(), w in prop::option::of(weight()),
        sep1 in separator(), sep2 in separator(), lead in "[ \t]{0,2}", trail in "[ \t,]{0,2}",
        crlf in any::<bool>(), debug_format in any::<bool>(),
    ) {
        let mut line = format!("{lead}{src}{sep1}{dst}");
        if let Some(w) = w {
            if debug_format { line.push_str(&format!("{sep2}{w:?}")) } else { line.push_str(&format!("{sep2}{w}")) }
        }
        line.push_str(&trail);
        line.push_str(if crlf { "\r\n" } else { "\n" });
        prop_assert_eq!(parse_edge_line(&line), Ok(Some((src, dst, w))));
        let expected = Update { src, dst, weight: w, diff: 1 };
        prop_assert_eq!(parse_update_line(&line), Ok(Some(expected)));
        prop_assert_eq!(parse_update_line(&format!("+{sep1}{line}")), Ok(Some(expected)));
        let deletion = Update { diff: -1, ..expected };
        let mut formatted = Vec::new();
        push_update_line(&mut formatted, &deletion);
        prop_assert_eq!(parse_update_bytes(&formatted), Ok(Some(deletion)));
    }

    #[test]
    fn vertex_lines_round_trip(v in any::<u64>(), lead in "[ \t,]{0,2}", trail in "[ \t,\r]{0,2}") {
        prop_assert_eq!(parse_vertex_line(&format!("{lead}{v}{trail}")), Ok(Some(v)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn ranges_partition_random_files(
        lines in prop::collection::vec(
            prop_oneof![
                (any::<u32>(), any::<u32>()).prop_map(|(a, b)| format!("{a} {b}")),
                (any::<u64>(), any::<u64>(), 0u32..100).prop_map(|(a, b, w)| format!("{a},{b},{w}")),
                Just(String::new()),
                Just("# c".to_string()),
                "[ \t]{0,3}",
            ],
            0..40,
        ),
        crlf in any::<bool>(), final_newline in any::<bool>(), peers in 1usize..9,
    ) {
        let newline = if crlf { "\r\n" } else { "\n" };
        let mut text = lines.join(newline);
        if final_newline { text.push_str(newline); }
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "e.txt", text.as_bytes());
        let expected: Vec<_> = lines.iter().filter_map(|l| parse_edge_line(l).unwrap()).collect();
        let mut all = Vec::new();
        for index in 0..peers {
            all.extend(read_edges_range(&path, index, peers).unwrap());
        }
        prop_assert_eq!(all, expected);
    }
}

#[test]
fn event_times() {
    let t = |l: &str| parse_timed_update_line(l);
    assert_eq!(t("1 2 @5"), Ok(Some((Update::insert(1, 2), Some(5)))));
    assert_eq!(t("+ 1 2 @0\r\n"), Ok(Some((Update::insert(1, 2), Some(0)))));
    assert_eq!(t("- 1 2\t@18446744073709551615\n"), Ok(Some((Update::delete(1, 2), Some(u64::MAX)))));
    assert_eq!(t("1,2,0.5,@7 "), Ok(Some((Update { src: 1, dst: 2, weight: Some(0.5), diff: 1 }, Some(7)))));
    assert_eq!(t("1 2"), Ok(Some((Update::insert(1, 2), None))));
    assert_eq!(t("# note @5"), Ok(None));
    assert_eq!(t("   "), Ok(None));
    assert_eq!(t("@5"), Err(LineError::TimeWithoutUpdate));
    assert!(matches!(t("1 2 @"), Err(LineError::BadTime(f)) if f == "@"));
    assert!(matches!(t("1 2 @x"), Err(LineError::BadTime(f)) if f == "@x"));
    assert!(matches!(t("1 2 @-3"), Err(LineError::BadTime(_))));
    assert!(matches!(t("1 2 @18446744073709551616"), Err(LineError::BadTime(_))));
    assert!(matches!(t("1 x @3"), Err(LineError::BadId(f)) if f == "x"));
    assert!(matches!(t("1 2 3 4 @3"), Err(LineError::TooManyFields { .. })));
    // Without the timed parser an event time is not a weight.
    assert!(parse_update_line("1 2 @5").is_err());
    let e = t("1 2 @x").unwrap_err().to_string();
    assert!(e.contains("is not an event time"), "{e}");
}

#[test]
fn timed_updates_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt");
    std::fs::write(&path, "1 2 @3\n# c\n- 1 2 @4\n5 6\n7 8 @q\n").unwrap();
    let e = read_timed_updates(&path).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:5: \"@q\" is not an event time", path.display())), "{e}");
    std::fs::write(&path, "1 2 @3\n# c\n- 1 2 @4\n5 6\n").unwrap();
    assert_eq!(
        read_timed_updates(&path).unwrap(),
        vec![(1, Update::insert(1, 2), Some(3)), (3, Update::delete(1, 2), Some(4)), (4, Update::insert(5, 6), None)]
    );
}
