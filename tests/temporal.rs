//! Temporal edge lists (SNAP, KONECT, CSV with every time format) converted by
//! `ripples experiment convert` to event-time or arrival-order update files, checked against
//! hand-written expectations; bad timestamps are errors naming file:line; the vendored
//! ward contact network runs through `ripples run` and agrees with the sequential oracle.

mod common;

use common::process::{bin, read, s, Files};

fn convert(files: &Files, name: &str, text: &str, args: &[&str]) -> Result<String, String> {
    let input = files.write(name, text);
    let out = files.path(&format!("{name}.u"));
    let o = bin().args(["experiment", "convert", &s(&input)]).args(args).args(["--out", &s(&out)]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    if o.status.success() {
        Ok(read(&out))
    } else {
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        Err(err)
    }
}

#[test]
fn snap_temporal() {
    let f = Files::new();
    let text = "# sx-tiny\n# FromNodeId ToNodeId UnixTime\n1 2 1217567877\n2 3 1217573801\n\n3 1 1217606247\n";
    assert_eq!(
        convert(&f, "snap.txt", text, &["--format", "snap"]).unwrap(),
        "+ 1 2 @1217567877\n+ 2 3 @1217573801\n+ 3 1 @1217606247\n"
    );
    let later_first = "5 6 20\n1 2 10\n3 4 10\n";
    assert_eq!(
        convert(&f, "order.txt", later_first, &["--format", "snap", "--order", "arrival"]).unwrap(),
        "+ 1 2\n+ 3 4\n+ 5 6\n",
        "arrival order: by time, file order within a time"
    );
    let err = convert(&f, "bad.txt", "1 2 10\n2 3 1.5e9\n", &["--format", "snap"]).unwrap_err();
    assert!(err.contains(&format!("{}:2: \"1.5e9\" is not a timestamp", s(&f.path("bad.txt")))), "{err}");
    let err = convert(&f, "short.txt", "1 2 10\n\n2 3\n", &["--format", "snap"]).unwrap_err();
    assert!(err.contains("short.txt:3: expected `src dst unixtime`"), "{err}");
}

#[test]
fn konect_with_and_without_timestamps() {
    let f = Files::new();
    let text = "% asym positive\n% 4 3 3\n1 2 1 1000\n2 3 2.5 999\n3 1 1 1001\n";
    assert_eq!(
        convert(&f, "out.k", text, &["--format", "konect"]).unwrap(),
        "+ 1 2 1 @1000\n+ 2 3 2.5 @999\n+ 3 1 1 @1001\n"
    );
    assert_eq!(
        convert(&f, "out.k2", text, &["--format", "konect", "--order", "arrival"]).unwrap(),
        "+ 2 3 2.5\n+ 1 2 1\n+ 3 1 1\n"
    );
    // No timestamp column: arrival order keeps the file order; event times are an error.
    let plain = "% sym unweighted\n4 5\n6 7\n";
    assert_eq!(convert(&f, "out.p", plain, &["--format", "konect", "--order", "arrival"]).unwrap(), "+ 4 5\n+ 6 7\n");
    let err = convert(&f, "out.p2", plain, &["--format", "konect"]).unwrap_err();
    assert!(err.contains("out.p2:2: this line has no timestamp column"), "{err}");
    let err = convert(&f, "out.b", "% x\n1 2 1 10\n1 2 1 -4\n", &["--format", "konect"]).unwrap_err();
    assert!(err.contains("out.b:3: \"-4\" is not a timestamp"), "{err}");
}

#[test]
fn csv_with_every_time_format() {
    let f = Files::new();
    let unix = "when,from,to,label\n1700000000,1,2,a\n1700000060,2,3,b\n";
    let args = ["--format", "csv", "--src-column", "from", "--dst-column", "to", "--time-column", "when"];
    assert_eq!(convert(&f, "u.csv", unix, &args).unwrap(), "+ 1 2 @1700000000\n+ 2 3 @1700000060\n");

    // 2023-11-14T22:13:20Z is 1700000000 (`date -u -d @1700000000`).
    let rfc = "src,dst,ts\n1,2,2023-11-14T22:13:20Z\n2,3,2023-11-14T23:14:20+01:00\n3,4,2023-11-14T22:13:21.250Z\n";
    let mut a = vec!["--format", "csv", "--time-column", "ts", "--time-format", "rfc3339"];
    assert_eq!(convert(&f, "r.csv", rfc, &a).unwrap(), "+ 1 2 @1700000000\n+ 2 3 @1700000060\n+ 3 4 @1700000001\n");
    let pattern = "src;dst;ts\n1;2;2023-11-14 22:13:20\n2;3;2023-11-14 22:14:20\n";
    a = vec!["--format", "csv", "--delimiter", ";", "--time-column", "ts", "--time-format", "%Y-%m-%d %H:%M:%S"];
    assert_eq!(convert(&f, "p.csv", pattern, &a).unwrap(), "+ 1 2 @1700000000\n+ 2 3 @1700000060\n");

    // Without a header, the columns are named on the command line.
    let headerless = "1700000060\t7\t8\tx\n1700000000\t9\t10\ty\n";
    a = vec!["--format", "csv", "--delimiter", "tab", "--columns", "t,a,b,c"];
    a.extend(["--src-column", "a", "--dst-column", "b", "--time-column", "t", "--order", "arrival"]);
    assert_eq!(convert(&f, "h.tsv", headerless, &a).unwrap(), "+ 9 10\n+ 7 8\n");

    // Errors name file:line (the header is line 1).
    let err = convert(
        &f,
        "bad.csv",
        "src,dst,ts\n1,2,2023-11-14T22:13:20Z\n1,2,yesterday\n",
        &["--format", "csv", "--time-column", "ts", "--time-format", "rfc3339"],
    )
    .unwrap_err();
    assert!(err.contains("bad.csv:3: \"yesterday\" is not a timestamp (expected RFC 3339"), "{err}");
    let err = convert(
        &f,
        "bad2.csv",
        "src,dst,ts\n1,2,2023-02-30 00:00:00\n",
        &["--format", "csv", "--time-column", "ts", "--time-format", "%Y-%m-%d %H:%M:%S"],
    )
    .unwrap_err();
    assert!(err.contains("bad2.csv:2: \"2023-02-30 00:00:00\" is not a timestamp"), "{err}");
    let err =
        convert(&f, "bad3.csv", "src,dst,when\n1,2,3\n", &["--format", "csv", "--time-column", "ts"]).unwrap_err();
    assert!(err.contains("bad3.csv:1: no time column named \"ts\" (the columns are: src, dst, when)"), "{err}");
    let err =
        convert(&f, "bad4.csv", "src,dst,ts\n1,2,3,4\n", &["--format", "csv", "--time-column", "ts"]).unwrap_err();
    assert!(err.contains("bad4.csv:2: expected 3 fields"), "{err}");
    let err = convert(&f, "bad5.csv", "src,dst,ts\nx,2,3\n", &["--format", "csv", "--time-column", "ts"]).unwrap_err();
    assert!(err.contains("bad5.csv:2: \"x\" is not a vertex id"), "{err}");
}

/// The vendored ward contacts: 32,424 contacts in time order, and WCC over them (in epochs of
/// arrival order) agrees with the sequential oracle.
#[test]
fn vendored_ward_contacts() {
    let f = Files::new();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/temporal/ward_contacts.tsv");
    let updates = f.path("h.u");
    let args = ["--format", "csv", "--delimiter", "tab", "--columns", "t,i,j,si,sj", "--src-column", "i"];
    let o = bin()
        .args(["experiment", "convert", data])
        .args(args)
        .args(["--dst-column", "j", "--time-column", "t", "--order", "arrival", "--out", &s(&updates)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = read(&updates);
    assert_eq!(text.lines().count(), 32_424);
    assert_eq!(text.lines().next(), Some("+ 1005 1073"));

    let output = f.path("wcc.out");
    let o = bin()
        .args(["run", "wcc", "--updates", &s(&updates), "--batch", "5000", "-q", "--output", &s(&output)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let edges: Vec<(u64, u64, f64)> = read(std::path::Path::new(data))
        .lines()
        .map(|line| {
            let f: Vec<u64> = line.split('\t').skip(1).take(2).map(|x| x.trim().parse().unwrap()).collect();
            (f[0], f[1], 1.0)
        })
        .collect();
    let vertices = ripples::oracle::vertex_set([], &edges);
    assert_eq!(vertices.len(), 75, "46 staff and 29 patients");
    let want: String = ripples::oracle::wcc(&vertices, &edges).into_iter().map(|(v, c)| format!("{v} {c}\n")).collect();
    assert_eq!(read(&output), want, "WCC over the contacts agrees with the sequential oracle");
}
