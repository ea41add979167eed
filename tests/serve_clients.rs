//! `--serve`, part 2: the extended protocol's corners with real clients (psycopg server-side
//! cursors, `Execute` with a row limit and portal suspension, COPY and SUBSCRIBE through
//! Parse/Bind/Execute, pgJDBC with `setFetchSize`, psql's `\dt`), and the configurations beside
//! `--follow`: event-time windows, live TCP input (`--listen`) and two processes.
//!
//! Answers are checked against the sequential oracle (`ripples::oracle::wcc`) at the epoch they
//! read, or, for windows, against the change log's state at that epoch. The clients are installed
//! by `.ci/run`; without them a test says so loudly and passes, except under CI (env `CI` set).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::pg::*;
use common::process::*;
use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ripples::types::{Node, Update};

/// The PostgreSQL JDBC driver Debian installs (`libpostgresql-jdbc-java`).
const JDBC_JAR: &str = "/usr/share/java/postgresql.jar";

/// The oracle's wcc after each epoch `0..=epochs.len()`.
fn oracle(epochs: &[Vec<Update>]) -> Vec<BTreeMap<Node, Node>> {
    let s = RandomStream { vertices: vec![], initial: vec![], epochs: epochs.to_vec() };
    edge_counts_per_epoch(&s)
        .iter()
        .map(|counts| {
            let (vs, es) = oracle_input(&[], counts);
            ripples::oracle::wcc(&vs, &es)
        })
        .collect()
}

fn update_lines(updates: &[Update]) -> String {
    updates.iter().map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst)).collect()
}

/// psycopg: a named (server-side) cursor read `itersize` rows per FETCH, COPY with a parameter
/// (Parse/Bind/Execute), SUBSCRIBE refused inside a transaction.
const PSYCOPG: &str = r#"
import json, sys, psycopg
port, epoch = int(sys.argv[1]), int(sys.argv[2])
dsn = f"host=127.0.0.1 port={port} user=ripples dbname=ripples sslmode=disable"
out = {}
with psycopg.connect(dsn) as conn:
    with conn.cursor(name="big") as cur:
        cur.itersize = 3
        cur.execute(f"SELECT vertex, value FROM wcc AS OF {epoch} WHERE vertex >= %s ORDER BY vertex", (0,))
        out["description"] = [d.name for d in cur.description]
        out["cursor"] = [list(r) for r in cur]
    with conn.cursor(name="few") as cur:
        cur.execute(f"SELECT vertex FROM wcc AS OF {epoch} ORDER BY vertex")
        out["fetchmany"] = [cur.fetchmany(2), cur.fetchmany(2)]
    conn.commit()
    cur = conn.cursor()
    with cur.copy(f"COPY (SELECT vertex, value FROM wcc AS OF {epoch} WHERE vertex >= %s ORDER BY vertex) TO STDOUT", (0,)) as copy:
        out["copy"] = [[int(x) for x in r] for r in copy.rows()]
    try:
        with cur.copy("COPY (SUBSCRIBE wcc AS OF 1 UP TO 2) TO STDOUT") as copy:
            list(copy.rows())
        out["subscribe_in_txn"] = "no error"
    except psycopg.Error as e:
        out["subscribe_in_txn"] = [e.sqlstate, str(e)]
    conn.rollback()
    try:
        cur.execute("FETCH FORWARD 1 FROM nope")
        out["no_cursor"] = "no error"
    except psycopg.Error as e:
        out["no_cursor"] = e.sqlstate
print(json.dumps(out))
"#;

/// The protocol by hand: Execute with a row limit (portal suspension) and COPY/SUBSCRIBE through
/// the extended protocol. Prints one line per backend message: its type, and a DataRow's or
/// CopyData's text.
const RAW: &str = r#"
import socket, struct, sys
port, select, copy = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", port), timeout=30)
def send(tag, body):
    s.sendall((tag or b"") + struct.pack("!I", len(body) + 4) + body)
def recv():
    head = b""
    while len(head) < 5: head += s.recv(5 - len(head))
    n = struct.unpack("!I", head[1:])[0] - 4
    body = b""
    while len(body) < n: body += s.recv(n - len(body))
    return head[:1].decode(), body
def until_ready():
    while True:
        tag, body = recv()
        if tag == "D":
            cols, at, vals = struct.unpack("!H", body[:2])[0], 2, []
            for _ in range(cols):
                k = struct.unpack("!i", body[at:at + 4])[0]; at += 4
                vals.append(body[at:at + k].decode()); at += k
            print("D", "|".join(vals))
        elif tag == "d":
            print("d", body.decode().rstrip("\n"))
        elif tag == "C":
            print("C", body.rstrip(b"\0").decode())
        elif tag == "E":
            print("E", [p[1:].decode() for p in body.split(b"\0") if p[:1] == b"C"][0])
        elif tag == "Z":
            print("Z")
            return
        else:
            print(tag)
send(None, struct.pack("!I", 196608) + b"user\0ripples\0database\0ripples\0\0")
while recv()[0] != "Z": pass
def parse_bind(sql):
    send(b"P", b"\0" + sql.encode() + b"\0" + struct.pack("!H", 0))
    send(b"B", b"\0\0" + struct.pack("!HHH", 0, 0, 0))
def execute(max_rows):
    send(b"E", b"\0" + struct.pack("!I", max_rows))
# One portal, read 3 rows at a time.
parse_bind(select)
for _ in range(3): execute(3)
execute(0)
send(b"S", b"")
until_ready()
parse_bind(copy)
execute(0)
send(b"S", b"")
until_ready()
"#;

/// pgJDBC: a prepared statement with a parameter, read with `setFetchSize` (JDBC then sends
/// Execute with a row limit and reads the portal in pieces).
const JDBC: &str = r#"
import java.sql.*;
import java.util.Properties;

public class Client {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.setProperty("user", "ripples");
        p.setProperty("password", "");
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/ripples?sslmode=disable";
        try (Connection c = DriverManager.getConnection(url, p)) {
            c.setAutoCommit(false);
            String sql = "SELECT vertex, value FROM wcc AS OF " + args[1] + " WHERE vertex >= ? ORDER BY vertex";
            try (PreparedStatement s = c.prepareStatement(sql)) {
                s.setFetchSize(2);
                s.setLong(1, 0L);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) System.out.println(r.getLong(1) + "|" + r.getLong(2));
                }
            }
            c.commit();
        }
    }
}
"#;

#[test]
fn cursors_row_limits_copy_and_jdbc_over_the_extended_protocol() {
    if !clients() {
        return;
    }
    let seed = 0xc0de;
    let ctx = |what: &str| format!("{what} (seed {seed:#x})");
    let files = Files::new();
    let batch = 6;
    let epochs = stream(seed, 8, 30, batch..=batch);
    let want = oracle(&epochs);
    let last = epochs.len() as u64;
    let updates = files.write("u.txt", &epochs.iter().map(|e| update_lines(e)).collect::<String>());
    let changes = files.path("wcc.changes");
    let mut server = start(
        &files,
        &[
            "wcc".into(),
            "--updates".into(),
            s(&updates),
            "--batch".into(),
            batch.to_string(),
            "--changes".into(),
            s(&changes),
            "--serve-linger".into(),
        ],
        1,
        Auth::Trust,
    );
    let stderr = server.stderr.clone();
    wait_line(&stderr, "still serving", server.child());
    let port = server.port;
    let e = last - 2;
    let at_e = &want[e as usize];
    let rows: Vec<Vec<u64>> = at_e.iter().map(|(&v, &c)| vec![v, c]).collect();
    assert!(rows.len() >= 10, "{}", ctx("a stream big enough for several fetches"));

    // psycopg's server-side cursor: DECLARE, Describe of the cursor's portal, FETCH FORWARD 3.
    let script = files.write("client.py", PSYCOPG);
    let out = Command::new("python3").args([s(&script), port.to_string(), e.to_string()]).output().unwrap();
    assert!(out.status.success(), "psycopg client failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["description"], serde_json::json!(["vertex", "value"]), "{got}");
    assert_eq!(got["cursor"], serde_json::json!(rows), "{}", ctx("named cursor"));
    let vs: Vec<u64> = at_e.keys().copied().collect();
    assert_eq!(got["fetchmany"], serde_json::json!([[[vs[0]], [vs[1]]], [[vs[2]], [vs[3]]]]), "{}", ctx("fetchmany"));
    assert_eq!(got["copy"], serde_json::json!(rows), "{}", ctx("COPY with a parameter"));
    assert_eq!(got["subscribe_in_txn"][0], "25001", "{got}");
    assert!(got["subscribe_in_txn"][1].as_str().unwrap().contains("autocommit"), "{got}");
    assert_eq!(got["no_cursor"], "34000", "{got}");

    // Execute with a row limit: 3 rows, PortalSuspended, ... then the rest and the tag.
    let script = files.write("raw.py", RAW);
    let select = format!("SELECT vertex, value FROM wcc AS OF {e} ORDER BY vertex");
    let subscribe = format!("COPY (SUBSCRIBE wcc AS OF 0 UP TO {last}) TO STDOUT");
    let out = Command::new("python3").args([s(&script), port.to_string(), select, subscribe]).output().unwrap();
    assert!(out.status.success(), "raw client failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    // ParseComplete, BindComplete, three times (3 rows, PortalSuspended), the rest, its tag.
    let mut expected = vec!["1".to_string(), "2".to_string()];
    for (i, r) in rows.iter().enumerate() {
        expected.push(format!("D {}|{}", r[0], r[1]));
        if i == 2 || i == 5 || i == 8 {
            expected.push("s".into());
        }
    }
    expected.push(format!("C SELECT {}", rows.len() - 9));
    expected.push("Z".into());
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(got[..expected.len()], expected.iter().map(String::as_str).collect::<Vec<_>>()[..], "{}", ctx(&text));
    // COPY (SUBSCRIBE ...) through Parse/Bind/Execute: the change log's lines of epochs < last.
    let copy: Vec<&str> = got[expected.len()..].to_vec();
    assert_eq!(copy.first(), Some(&"1"), "{text}");
    assert_eq!(copy.get(1), Some(&"2"), "{text}");
    assert_eq!(copy.get(2), Some(&"H"), "CopyOutResponse: {text}");
    let mut streamed: Vec<String> = copy
        .iter()
        .filter_map(|l| l.strip_prefix("d "))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            format!("{} {} {} {}", f[0], f[2], f[3], f[1])
        })
        .collect();
    streamed.sort();
    let mut log: Vec<String> = read(&changes)
        .lines()
        .filter(|l| l.split(' ').next().unwrap().parse::<u64>().unwrap() < last)
        .map(String::from)
        .collect();
    log.sort();
    assert_eq!(streamed, log, "{}", ctx("SUBSCRIBE over the extended protocol"));
    assert!(copy.contains(&"c") && copy.contains(&format!("C COPY {}", log.len()).as_str()), "{text}");

    // psql's \dt lists the served tables.
    let out = Command::new("psql").args([&conninfo(port), "-X", "-c", "\\dt"]).output().unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    for t in ["wcc", "epochs", "changes"] {
        assert!(listing.lines().any(|l| l.contains(&format!("| {t} ")) && l.contains("table")), "\\dt: {listing}");
    }
    assert!(!listing.contains("history"), "\\dt shows the served tables only: {listing}");
    // \d NAME prints the columns and their types, as PostgreSQL's psql prints them.
    let out = Command::new("psql").args([&conninfo(port), "-X", "-c", "\\d wcc", "-c", "\\d epochs"]).output().unwrap();
    let described = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "\\d wcc: {}", String::from_utf8_lossy(&out.stderr));
    let expected = [
        "                Table \"public.wcc\"",
        " Column |  Type  | Collation | Nullable | Default ",
        "--------+--------+-----------+----------+---------",
        " vertex | bigint |           |          | ",
        " value  | bigint |           |          | ",
        "",
        "                       Table \"public.epochs\"",
        "     Column     |       Type       | Collation | Nullable | Default ",
        "----------------+------------------+-----------+----------+---------",
        " epoch          | bigint           |           |          | ",
        " updates        | bigint           |           | not null | ",
        " latency_ms     | double precision |           | not null | ",
        " output_changes | bigint           |           | not null | ",
        " completed_at   | text             |           | not null | ",
        " mirror_ms      | double precision |           | not null | ",
        "",
    ];
    assert_eq!(described.lines().collect::<Vec<_>>(), expected, "\\d wcc and \\d epochs:\n{described}");
    // \d+ NAME reads catalogs that are not served: a clear 0A000, and the connection stays usable.
    let out = Command::new("psql")
        .args([&conninfo(port), "-X", "-v", "VERBOSITY=verbose", "-c", "\\d+ wcc"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("0A000") && err.contains("not \\d+ NAME"), "\\d+ wcc: {err}");

    // pgJDBC with setFetchSize (skipped, with the reason, without java or the driver: .ci/run
    // gives their installation 90 s).
    let java = Command::new("java").arg("-version").output().is_ok_and(|o| o.status.success());
    if !java || !Path::new(JDBC_JAR).exists() {
        eprintln!(
            "\n\n*** SKIPPED pgJDBC: java {} and {JDBC_JAR} {} (apt-get install default-jre-headless libpostgresql-jdbc-java) ***\n\n",
            if java { "runs" } else { "is missing" },
            if Path::new(JDBC_JAR).exists() { "exists" } else { "is missing" }
        );
    } else {
        let source = files.write("Client.java", JDBC);
        let out = Command::new("java")
            .args(["-cp", JDBC_JAR, &s(&source), &port.to_string(), &e.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success(), "the JDBC client failed: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), map_text(at_e), "{}", ctx("pgJDBC with setFetchSize"));
    }
    assert!(!read(&stderr).contains("panicked"));
}

/// Event-time windows: the tables follow the completed epochs (those the watermark passed): at
/// every epoch `e` (`AS OF e`) the table is the oracle's components of the edges whose window
/// holds `e` (an edge at event time `t` lives for `t <= e < t + 12`), and the change log's state.
#[test]
fn windowed_runs_serve_the_completed_epochs() {
    if !clients() {
        return;
    }
    let seed = 0x3d;
    let files = Files::new();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut clock = 0u64;
    // Out of order by less than the lateness: no update is dropped.
    let edges: Vec<(Node, Node, u64)> = (0..60)
        .map(|_| {
            clock += rng.gen_range(0..3);
            (rng.gen_range(0..20u64), rng.gen_range(0..20u64), clock.saturating_sub(rng.gen_range(0..4)))
        })
        .collect();
    let lines: String = edges.iter().map(|(a, b, t)| format!("{a} {b} @{t}\n")).collect();
    let updates = files.write("w.txt", &lines);
    let changes = files.path("wcc.changes");
    let mut server = start(
        &files,
        &[
            "wcc".into(),
            "--updates".into(),
            s(&updates),
            "--batch".into(),
            "5".into(),
            "--window".into(),
            "12".into(),
            "--lateness".into(),
            "4".into(),
            "--changes".into(),
            s(&changes),
            "--serve-linger".into(),
        ],
        1,
        Auth::Trust,
    );
    let stderr = server.stderr.clone();
    wait_line(&stderr, "still serving", server.child());
    let port = server.port;
    let log = parse_changes(&read(&changes));
    assert!(log.iter().any(|c| c.diff < 0), "the windows never expire anything (seed {seed:#x})");
    let logged = log.iter().map(|c| c.epoch).max().unwrap();
    let served: Vec<u64> =
        psql(port, "SELECT epoch FROM epochs ORDER BY epoch").lines().map(|l| l.parse().unwrap()).collect();
    let last = *served.last().unwrap();
    assert!(logged <= last, "every epoch of the change log is served (seed {seed:#x}): {logged} > {last}");
    assert_eq!(psql(port, "SELECT ripples_epoch()").trim(), last.to_string());
    let states = states_per_epoch(&log, last);
    for e in 0..=last {
        let alive: Vec<(Node, Node, f64)> =
            edges.iter().filter(|&&(_, _, t)| t <= e && e < t + 12).map(|&(a, b, _)| (a, b, 1.0)).collect();
        let want = ripples::oracle::wcc(&ripples::oracle::vertex_set([], &alive), &alive);
        let got = psql(port, &format!("SELECT vertex, value FROM wcc AS OF {e} ORDER BY vertex"));
        assert_eq!(got, map_text(&want), "wcc AS OF {e} against the oracle (seed {seed:#x})");
        assert_eq!(got, map_text(&states[e as usize]), "wcc AS OF {e} against the change log (seed {seed:#x})");
    }
}

/// `--listen` (live TCP input) with one and with two processes (process 0 serves): after each
/// `ok E` the served table is the oracle's at E.
#[test]
fn live_input_on_one_and_two_processes() {
    if !clients() {
        return;
    }
    let seed = 0x1157;
    let epochs = stream(seed, 8, 30, 5..=5);
    let want = oracle(&epochs);
    for processes in [1usize, 2] {
        let ctx = |what: &str| format!("{what} ({processes} process(es), seed {seed:#x})");
        let files = Files::new();
        let input = free_port();
        let server = start(&files, &["wcc".into(), "--listen".into(), input.to_string()], processes, Auth::Trust);
        let (mut producer, ready) = Producer::connect_retry(input);
        assert_eq!(ready, 1);
        for (i, updates) in epochs.iter().enumerate() {
            let e = i as u64 + 1;
            producer.send(&(update_lines(updates) + "commit\n")).unwrap();
            assert_eq!(producer.line().unwrap(), format!("ok {e}"), "{}", ctx("the producer's reply"));
            wait_epoch(server.port, e);
            assert_eq!(
                psql(server.port, &format!("SELECT vertex, value FROM wcc AS OF {e} ORDER BY vertex")),
                map_text(&want[e as usize]),
                "{}",
                ctx(&format!("wcc at epoch {e}"))
            );
        }
        let count = psql(server.port, "SELECT count(*) FROM epochs");
        assert_eq!(count.trim(), (epochs.len() + 1).to_string(), "{}", ctx("epochs"));
        producer.send("end\n").unwrap();
        let mut server = server;
        for (p, child) in server.children.iter_mut().enumerate() {
            let status = wait_exit(child, PATIENCE, &format!("process {p}"));
            assert!(status.success(), "{}: {}", ctx("exit"), read(&server.stderr));
        }
    }
}
