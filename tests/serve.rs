//! `--serve`: the maintained results as a SQL database, read by real PostgreSQL clients (psql and
//! psycopg 3) while `ripples run wcc,bfs --follow FILE` runs.
//!
//! Every answer is checked against the sequential oracles (`ripples::oracle::{wcc, bfs}`) at the
//! epoch it reads; subscriptions against the change log. The clients are installed by `.ci/run`;
//! without them a test says so loudly and passes, except under CI (env `CI` set), where it fails.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::pg::*;
use common::process::*;
use common::*;
use ripples::types::{Node, Update};

const BFS_UNREACHABLE: u64 = i64::MAX as u64;

/// The oracles' wcc and bfs (from `source`) after each epoch `0..=epochs.len()` (0 is empty).
fn oracle(epochs: &[Vec<Update>], source: Node) -> Vec<(BTreeMap<Node, Node>, BTreeMap<Node, u64>)> {
    let s = RandomStream { vertices: vec![], initial: vec![], epochs: epochs.to_vec() };
    edge_counts_per_epoch(&s)
        .iter()
        .map(|counts| {
            let (vs, es) = oracle_input(&[], counts);
            (ripples::oracle::wcc(&vs, &es), ripples::oracle::bfs(&vs, &es, source))
        })
        .collect()
}

fn append(file: &Path, updates: &[Update]) {
    let mut f = fs::OpenOptions::new().append(true).open(file).unwrap();
    for u in updates {
        writeln!(f, "{} {} {}", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst).unwrap();
    }
    writeln!(f, "commit").unwrap();
}

fn table(rows: &str) -> BTreeMap<Node, u64> {
    rows.lines()
        .map(|l| {
            let (k, v) = l.split_once('|').unwrap_or_else(|| panic!("bad row {l:?}"));
            (k.parse().unwrap(), v.parse().unwrap())
        })
        .collect()
}

const PSYCOPG: &str = r#"
import json, sys, psycopg
port, password, vertices = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
dsn = f"host=127.0.0.1 port={port} user=ripples dbname=ripples sslmode=disable"
out = {}
with psycopg.connect(dsn, password=password, autocommit=True) as conn:
    cur = conn.cursor()
    # Extended protocol with parameters (Parse/Bind/Describe/Execute).
    out["lookups"] = {}
    for v in vertices:
        cur.execute("SELECT value FROM wcc WHERE vertex = %s", (v,))
        row = cur.fetchone()
        out["lookups"][str(v)] = None if row is None else row[0]
    cur.execute("SELECT count(*) FROM wcc WHERE value = %s AND vertex >= %s", (vertices[0], 0))
    out["typed_count"] = cur.fetchone()[0]
    # A prepared statement, used many times (psycopg prepares after 5 executions).
    for _ in range(7):
        cur.execute("SELECT vertex, value FROM bfs WHERE vertex = %s", (vertices[0],), prepare=True)
        out["prepared"] = cur.fetchall()
    # One transaction pins one epoch.
    with conn.transaction():
        cur.execute("SELECT ripples_epoch()")
        a = cur.fetchone()[0]
        cur.execute("SELECT ripples_epoch(), count(*) FROM wcc")
        b = cur.fetchone()
        out["txn"] = [a, b[0], b[1]]
    errors = {}
    for name, sql in [("syntax", "SELEC 1"), ("table", "SELECT * FROM nope"), ("column", "SELECT nope FROM wcc"),
                      ("write", "INSERT INTO wcc VALUES (1, 2)"), ("delete", "DELETE FROM wcc"),
                      ("asof", "SELECT count(*) FROM wcc AS OF 100000")]:
        try:
            cur.execute(sql)
            errors[name] = "no error"
        except psycopg.Error as e:
            errors[name] = [e.sqlstate, str(e)]
    out["errors"] = errors
    cur.execute("SELECT 1 + 1")
    out["still_usable"] = cur.fetchone()[0]
    cur.execute("SELECT version(), current_database()")
    out["version"] = list(cur.fetchone())
    cur.execute("SHOW transaction_isolation")
    out["show"] = cur.fetchone()[0]
    with cur.copy("COPY (SELECT vertex, value FROM wcc ORDER BY vertex) TO STDOUT") as copy:
        out["copy_rows"] = sum(1 for _ in copy.rows())
try:
    psycopg.connect(dsn, password="wrong " + password).close()
    out["wrong_password"] = "connected"
except psycopg.OperationalError as e:
    out["wrong_password"] = str(e)
print(json.dumps(out))
"#;

/// The SQLSTATE of a failed SCRAM login with a wrong password, spoken by hand (libpq does not
/// expose the fields of a connection error).
const SCRAM_WRONG: &str = r#"
import base64, hashlib, hmac, os, socket, struct, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=10)
def send(tag, body):
    s.sendall((tag or b"") + struct.pack("!I", len(body) + 4) + body)
def recv():
    head = b""
    while len(head) < 5: head += s.recv(5 - len(head))
    n = struct.unpack("!I", head[1:])[0] - 4
    body = b""
    while len(body) < n: body += s.recv(n - len(body))
    return head[:1], body
send(None, struct.pack("!I", 196608) + b"user\0ripples\0database\0ripples\0\0")
tag, body = recv()
assert tag == b"R" and struct.unpack("!I", body[:4])[0] == 10, (tag, body)
nonce = base64.b64encode(os.urandom(18)).decode()
first = "n=,r=" + nonce
msg = b"SCRAM-SHA-256\0" + struct.pack("!I", len(first) + 3) + ("n,," + first).encode()
send(b"p", msg)
tag, body = recv()
server_first = body[4:].decode()
f = dict(kv.split("=", 1) for kv in server_first.split(","))
salted = hashlib.pbkdf2_hmac("sha256", b"not the password", base64.b64decode(f["s"]), int(f["i"]))
ckey = hmac.new(salted, b"Client Key", "sha256").digest()
final = "c=biws,r=" + f["r"]
auth = (first + "," + server_first + "," + final).encode()
sig = hmac.new(hashlib.sha256(ckey).digest(), auth, "sha256").digest()
proof = base64.b64encode(bytes(a ^ b for a, b in zip(ckey, sig))).decode()
send(b"p", (final + ",p=" + proof).encode())
tag, body = recv()
fields = {p[:1]: p[1:].decode() for p in body.split(b"\0") if p}
print(tag.decode(), fields.get(b"C"), fields.get(b"M"))
"#;

#[test]
fn sql_over_a_followed_stream_agrees_with_the_oracles() {
    if !clients() {
        return;
    }
    let seed = 0x5e7e;
    let files = Files::new();
    let epochs = stream(seed, 12, 24, 1..=6);
    let source: Node = 1;
    let want = oracle(&epochs, source);
    let followed = files.write("live.txt", "# updates\n");
    let dir = files.path("out");
    let server = start(
        &files,
        &[
            "wcc,bfs".into(),
            "--source".into(),
            source.to_string(),
            "--follow".into(),
            s(&followed),
            "--output-dir".into(),
            s(&dir),
        ],
        1,
        Auth::Password,
    );
    let port = server.port;
    let ctx = |what: &str| format!("{what} (seed {seed:#x})");

    // Epochs 1..=5, then every SQL answer at epoch 5.
    for u in &epochs[..5] {
        append(&followed, u);
    }
    wait_epoch(port, 5);
    let (wcc5, bfs5) = &want[5];
    let lookups: Vec<Node> = wcc5.keys().copied().take(6).chain([999_999]).collect();
    for &v in &lookups {
        let got = psql(port, &format!("SELECT value FROM wcc AS OF 5 WHERE vertex = {v}"));
        assert_eq!(got.trim(), wcc5.get(&v).map_or(String::new(), |x| x.to_string()), "{}", ctx("point lookup"));
    }
    let components: BTreeSet<Node> = wcc5.values().copied().collect();
    assert_eq!(
        psql(port, "SELECT count(DISTINCT value) FROM wcc AS OF 5").trim(),
        components.len().to_string(),
        "{}",
        ctx("components")
    );
    let mut sizes: BTreeMap<Node, usize> = BTreeMap::new();
    for &c in wcc5.values() {
        *sizes.entry(c).or_default() += 1;
    }
    let largest = sizes.iter().max_by_key(|(c, n)| (**n, std::cmp::Reverse(**c))).unwrap();
    assert_eq!(
        psql(port, "SELECT value, count(*) AS n FROM wcc AS OF 5 GROUP BY value ORDER BY n DESC, value LIMIT 1").trim(),
        format!("{}|{}", largest.0, largest.1),
        "{}",
        ctx("largest component")
    );
    // A join of two algorithms: the vertices BFS reaches, by component.
    let reached: Vec<Node> = bfs5.iter().filter(|(_, d)| **d != BFS_UNREACHABLE).map(|(v, _)| *v).collect();
    let mut by_component: BTreeMap<Node, usize> = BTreeMap::new();
    for v in &reached {
        *by_component.entry(wcc5[v]).or_default() += 1;
    }
    assert_eq!(
        psql(
            port,
            "SELECT w.value, count(*) FROM wcc AS OF 5 w JOIN bfs AS OF 5 b ON w.vertex = b.vertex \
             WHERE b.value < 9223372036854775807 GROUP BY w.value ORDER BY w.value"
        ),
        by_component.iter().map(|(c, n)| format!("{c}|{n}\n")).collect::<String>(),
        "{}",
        ctx("join")
    );

    // psycopg: the extended protocol with parameters, a transaction, errors, COPY.
    let script = files.write("client.py", PSYCOPG);
    let out = Command::new("python3")
        .args([s(&script), port.to_string(), PASSWORD.into(), format!("{lookups:?}")])
        .output()
        .unwrap();
    assert!(out.status.success(), "psycopg client failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let served = got["txn"][0].as_u64().unwrap();
    assert!(served >= 5);
    assert_eq!(got["txn"][0], got["txn"][1], "a transaction reads one epoch: {got}");
    assert_eq!(got["txn"][2].as_u64().unwrap() as usize, want[served as usize].0.len(), "{}", ctx("count in txn"));
    for &v in &lookups {
        let now = &want[served as usize].0;
        let _ = now;
        let value = &got["lookups"][v.to_string()];
        // The lookups ran at the served epoch or later; the stream is paused at 5 here.
        assert_eq!(value.as_u64(), wcc5.get(&v).copied(), "{}", ctx(&format!("psycopg lookup of {v}")));
    }
    assert_eq!(
        got["typed_count"].as_u64().unwrap() as usize,
        wcc5.values().filter(|&&c| c == lookups[0]).count(),
        "{}",
        ctx("typed parameters")
    );
    assert_eq!(got["prepared"], serde_json::json!([[lookups[0], bfs5[&lookups[0]]]]), "{}", ctx("prepared"));
    for (name, code) in [
        ("syntax", "42601"),
        ("table", "42P01"),
        ("column", "42703"),
        ("write", "25006"),
        ("delete", "25006"),
        ("asof", "22023"),
    ] {
        assert_eq!(got["errors"][name][0], code, "{name}: {}", got["errors"][name]);
    }
    assert!(got["errors"]["asof"][1].as_str().unwrap().contains("latest completed epoch is"), "{got}");
    assert_eq!(got["still_usable"], 2);
    assert!(got["version"][0].as_str().unwrap().starts_with("PostgreSQL"), "{got}");
    assert_eq!(got["version"][1], "ripples");
    assert_eq!(got["show"], "repeatable read");
    assert_eq!(got["copy_rows"].as_u64().unwrap() as usize, wcc5.len());
    assert!(got["wrong_password"].as_str().unwrap().to_lowercase().contains("password"), "{got}");
    // The wrong password's SQLSTATE, from the wire.
    let scram = files.write("scram.py", SCRAM_WRONG);
    let out = Command::new("python3").args([s(&scram), port.to_string()]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("E 28P01"), "wrong password: {text} {}", String::from_utf8_lossy(&out.stderr));
    // psql's view of errors: the SQLSTATE, and the connection goes on.
    assert!(psql_error(port, "INSERT INTO wcc VALUES (1, 2)").contains("25006"));
    assert!(psql_error(port, "SELECT * FROM wcc AS OF 4 JOIN nope USING (vertex)").contains("42P01"));
    assert_eq!(psql(port, "SELECT 1; SELECT 2"), "1\n2\n");
    assert_eq!(
        psql(port, "BEGIN; SELECT ripples_epoch() = (SELECT max(epoch) FROM epochs); COMMIT"),
        "BEGIN\n1\nCOMMIT\n"
    );

    // A live subscription after epoch 5, while epochs 6.. arrive (it may start before or after
    // some of them: AS OF 5 makes its rows the same either way).
    let (tx, rx) = mpsc::channel();
    {
        let info = conninfo(port);
        thread::spawn(move || {
            let out = Command::new("psql")
                .args([
                    &info,
                    "-X",
                    "-At",
                    "-c",
                    "COPY (SUBSCRIBE wcc AS OF 5 UP TO 9 WITH (SNAPSHOT = false)) TO STDOUT",
                ])
                .env("PGPASSWORD", PASSWORD)
                .output()
                .unwrap();
            tx.send(out).unwrap();
        });
    }
    thread::sleep(Duration::from_millis(100));
    for u in &epochs[5..8] {
        append(&followed, u);
    }
    let subscribed = rx.recv_timeout(PATIENCE).expect("the subscription did not end at UP TO 9");
    assert!(subscribed.status.success(), "{}", String::from_utf8_lossy(&subscribed.stderr));
    for u in &epochs[8..] {
        append(&followed, u);
    }
    let last = epochs.len() as u64;
    wait_epoch(port, last);

    // Every epoch's answer equals the oracle's at that epoch (AS OF), after later epochs.
    for (e, (wcc, bfs)) in want.iter().enumerate() {
        assert_eq!(
            psql(port, &format!("SELECT vertex, value FROM wcc AS OF {e} ORDER BY vertex")),
            map_text(wcc),
            "{}",
            ctx(&format!("wcc AS OF {e}"))
        );
        assert_eq!(
            table(&psql(port, &format!("SELECT vertex, value FROM bfs AS OF {e} ORDER BY vertex"))),
            *bfs,
            "{}",
            ctx(&format!("bfs AS OF {e}"))
        );
    }
    assert_eq!(psql(port, "SELECT vertex, value FROM wcc ORDER BY vertex"), map_text(&want[last as usize].0));

    // SUBSCRIBE ... UP TO: exactly the change log's lines.
    let log: Vec<String> = read(&dir.join("wcc.changes")).lines().map(String::from).collect();
    let as_log = |rows: &str| -> Vec<String> {
        let mut v: Vec<String> = rows
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                assert_eq!(f.len(), 4, "bad subscription row {l:?}");
                format!("{} {} {} {}", f[0], f[2], f[3], f[1])
            })
            .collect();
        v.sort();
        v
    };
    let epochs_of = |lines: &[String], range: std::ops::Range<u64>| -> Vec<String> {
        let mut v: Vec<String> = lines
            .iter()
            .filter(|l| range.contains(&l.split(' ').next().unwrap().parse::<u64>().unwrap()))
            .cloned()
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        as_log(&psql(port, "COPY (SUBSCRIBE wcc AS OF 0 UP TO 11) TO STDOUT")),
        epochs_of(&log, 0..11),
        "{}",
        ctx("SUBSCRIBE AS OF 0 UP TO 11")
    );
    assert_eq!(
        as_log(&String::from_utf8_lossy(&subscribed.stdout)),
        epochs_of(&log, 6..9),
        "{}",
        ctx("the live subscription")
    );
    let stderr = read(&server.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn retention_linger_and_refusals() {
    if !clients() {
        return;
    }
    let files = Files::new();
    let epochs = stream(7, 8, 24, 1..=6);
    let want = oracle(&epochs, 0);
    let updates: String = epochs
        .iter()
        .flat_map(|e| e.iter())
        .map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst))
        .collect();
    // One epoch per batch of lines: rebuild the epochs as the file run cuts them.
    let lines: Vec<&str> = updates.lines().collect();
    let batch = 3;
    let cut: Vec<Vec<Update>> = lines
        .chunks(batch)
        .map(|c| {
            c.iter()
                .map(|l| {
                    let f: Vec<&str> = l.split(' ').collect();
                    let (s, d) = (f[1].parse().unwrap(), f[2].parse().unwrap());
                    if f[0] == "+" {
                        Update::insert(s, d)
                    } else {
                        Update::delete(s, d)
                    }
                })
                .collect()
        })
        .collect();
    let _ = want;
    let want = oracle(&cut, 0);
    let last = cut.len() as u64;
    let file = files.write("u.txt", &updates);
    let mut server = start(
        &files,
        &[
            "wcc".into(),
            "--updates".into(),
            s(&file),
            "--batch".into(),
            batch.to_string(),
            "--serve-retain-epochs".into(),
            "2".into(),
            "--serve-linger".into(),
        ],
        1,
        Auth::Password,
    );
    wait_line(&server.stderr.clone(), "still serving", server.child());
    let port = server.port;
    assert_eq!(psql(port, "SELECT ripples_epoch()").trim(), last.to_string());
    // The run has ended: a subscription without UP TO ends after the last epoch (its rows summed
    // are the last epoch's state), and one that waits for a later epoch is refused.
    let copied = files.path("subscribed.txt");
    let mut sub = Command::new("psql")
        .args([&conninfo(port), "-X", "-At", "-c", &format!("COPY (SUBSCRIBE wcc AS OF {}) TO STDOUT", last - 1)])
        .env("PGPASSWORD", PASSWORD)
        .stdout(fs::File::create(&copied).unwrap())
        .spawn()
        .unwrap();
    let status = wait_exit(&mut sub, PATIENCE, "SUBSCRIBE without UP TO on a lingering server");
    assert!(status.success(), "SUBSCRIBE after the run ended failed: {status}");
    let mut summed: BTreeMap<(Node, Node), i64> = BTreeMap::new();
    for l in read(&copied).lines() {
        let f: Vec<&str> = l.split('\t').collect();
        assert!(f[0].parse::<u64>().unwrap() >= last - 1, "a row before the start epoch: {l}");
        *summed.entry((f[2].parse().unwrap(), f[3].parse().unwrap())).or_default() += f[1].parse::<i64>().unwrap();
    }
    summed.retain(|_, d| *d != 0);
    assert!(summed.values().all(|&d| d == 1), "SUBSCRIBE's rows sum to a multiplicity other than 1");
    let state: BTreeMap<Node, Node> = summed.into_keys().collect();
    assert_eq!(state, want[last as usize].0, "SUBSCRIBE AS OF {} summed differs from the last epoch's WCC", last - 1);
    let err = psql_error(port, &format!("COPY (SUBSCRIBE wcc AS OF {}) TO STDOUT", last + 1));
    assert!(err.contains("55000") && err.contains("the run ended"), "SUBSCRIBE past the run's end: {err}");
    assert_eq!(psql(port, "SELECT vertex, value FROM wcc ORDER BY vertex"), map_text(&want[last as usize].0));
    assert_eq!(
        psql(port, &format!("SELECT vertex, value FROM wcc AS OF {} ORDER BY vertex", last - 2)),
        map_text(&want[last as usize - 2].0)
    );
    let err = psql_error(port, &format!("SELECT * FROM wcc AS OF {}", last - 3));
    assert!(
        err.contains("22023") && err.contains(&format!("the oldest retained epoch is {}", last - 2)),
        "AS OF before the retained epochs: {err}"
    );
    assert!(psql_error(port, "SELEC 1").contains("42601"));
    assert!(psql_error(port, "SELECT nope FROM wcc").contains("42703"));
    assert_eq!(psql(port, "SELECT count(*) FROM epochs").trim(), (last + 1).to_string());
    // Wrong password.
    let out = psql_run(port, "wrong", "SELECT 1");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).to_lowercase().contains("password"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The limits: rows per statement.
    drop(server);
    let mut server = start(
        &files,
        &["wcc".into(), "--updates".into(), s(&file), "--serve-max-rows".into(), "3".into(), "--serve-linger".into()],
        1,
        Auth::Password,
    );
    wait_line(&server.stderr.clone(), "still serving", server.child());
    let err = psql_error(server.port, "SELECT * FROM wcc");
    assert!(err.contains("54000") && err.contains("--serve-max-rows"), "{err}");
    assert_eq!(psql(server.port, "SELECT count(*) > 3 FROM wcc").trim(), "1");
    // The connection limit and statement timeout are covered by their flags' errors.
    let mut term = Command::new("kill").args(["-TERM", &server.child().id().to_string()]).spawn().unwrap();
    term.wait().unwrap();
    let status = wait_exit(server.child(), PATIENCE, "linger");
    assert!(status.success(), "SIGTERM ends a lingering server cleanly: {status}");
}

#[test]
fn unsafe_serving_is_refused_at_start() {
    let files = Files::new();
    let updates = files.write("u.txt", "+ 1 2\n");
    let pw = files.write("pw", "secret\n");
    let run = |extra: &[&str]| {
        let out = bin().args(["run", "wcc", "--updates", &s(&updates), "-q"]).args(extra).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let port = free_port().to_string();
    let (code, err) = run(&["--serve", &format!("0.0.0.0:{port}"), "--serve-password-file", &s(&pw)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a loopback address") && err.contains("--serve-tls-cert"), "{err}");
    let (code, err) = run(&["--serve", &port]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--serve-password-file") && err.contains("--serve-trust"), "{err}");
    let (code, err) = run(&["--serve-trust"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("need --serve"), "{err}");
    // Trust on loopback is allowed; the run ends and serving with it.
    let (code, err) = run(&["--serve", &port, "--serve-trust"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("serving SQL on 127.0.0.1:"), "{err}");
}

const LIMITS: &str = r#"
import json, sys, threading, time, psycopg
port, password = int(sys.argv[1]), sys.argv[2]
dsn = f"host=127.0.0.1 port={port} user=ripples dbname=ripples sslmode=require"
out = {}
forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
a = psycopg.connect(dsn, password=password, autocommit=True)
b = psycopg.connect(dsn, password=password, autocommit=True)
try:
    psycopg.connect(dsn, password=password).close()
    out["third"] = "connected"
except psycopg.OperationalError as e:
    out["third"] = str(e)
t0 = time.time()
try:
    a.execute(forever)
    out["timeout"] = "no error"
except psycopg.Error as e:
    out["timeout"] = [e.sqlstate, str(e), time.time() - t0]
cancel = getattr(b, "cancel_safe", None) or b.cancel
threading.Timer(0.3, cancel).start()
t0 = time.time()
try:
    b.execute(forever)
    out["cancel"] = "no error"
except psycopg.Error as e:
    out["cancel"] = [e.sqlstate, str(e), time.time() - t0]
out["after"] = [a.execute("SELECT count(*) FROM wcc").fetchone()[0], b.execute("SELECT 40 + 2").fetchone()[0]]
print(json.dumps(out))
"#;

#[test]
fn tls_connection_limit_statement_timeout_and_cancel() {
    if !clients() {
        return;
    }
    let files = Files::new();
    let key = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let cert = files.write("cert.pem", &key.cert.pem());
    let private = files.write("key.pem", &key.key_pair.serialize_pem());
    let updates = files.write("u.txt", "+ 1 2\n+ 2 3\n+ 7 8\n");
    let mut server = start(
        &files,
        &[
            "wcc".into(),
            "--updates".into(),
            s(&updates),
            "--serve-tls-cert".into(),
            s(&cert),
            "--serve-tls-key".into(),
            s(&private),
            "--serve-max-connections".into(),
            "2".into(),
            "--serve-statement-timeout-ms".into(),
            "1500".into(),
            "--serve-linger".into(),
        ],
        1,
        Auth::Password,
    );
    wait_line(&server.stderr.clone(), "still serving", server.child());
    let port = server.port;
    let out = Command::new("psql")
        .args([&conninfo(port).replace("sslmode=disable", "sslmode=require"), "-X", "-c", "\\conninfo"])
        .env("PGPASSWORD", PASSWORD)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SSL connection"), "psql over TLS: {text} {}", String::from_utf8_lossy(&out.stderr));
    let script = files.write("limits.py", LIMITS);
    let out = Command::new("python3").args([s(&script), port.to_string(), PASSWORD.into()]).output().unwrap();
    assert!(out.status.success(), "psycopg client failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(got["third"].as_str().unwrap().contains("too many connections"), "{got}");
    assert_eq!(got["timeout"][0], "57014", "{got}");
    assert!(got["timeout"][1].as_str().unwrap().contains("statement timeout"), "{got}");
    assert_eq!(got["cancel"][0], "57014", "{got}");
    assert!(got["cancel"][2].as_f64().unwrap() < 1.4, "the cancel came before the timeout: {got}");
    assert_eq!(got["after"], serde_json::json!([5, 42]), "both connections stay usable: {got}");
}

#[allow(dead_code)]
fn lines_of(child: &mut Child) -> impl Iterator<Item = String> {
    BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok)
}
