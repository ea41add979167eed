//! Every `sh` block of the README and the book runs.
//!
//! Each block is found by its page and first line, and either run as one `sh -e` script in a
//! fresh directory (this build's `ripples` on `PATH`, the examples `cargo test` built beside it)
//! or named with the test that runs it. A block this table does not know, or an entry no block
//! matches, fails the test: a new block must say how it runs.
//!
//! To run a block here, a few things change and nothing else: sizes shrink (a debug build runs
//! them: R-MAT scale 16 becomes 10, a million updates a few thousand, a bench's default scale 9),
//! the fixed ports become free ones, a command a reader leaves running in a terminal of its own
//! runs in the background (and every background process is killed at the end), and after a line
//! that starts a listener in the background the script waits until the port listens. Each block
//! must exit with status 0, leave the files it names non-empty and print what its comments say
//! it prints (the entries' `prints`).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::process::{free_port, Files};

/// How the test runs one block.
enum How {
    /// As a script (see the module docs).
    Run(Script),
    /// Run by another test: its file and function (the test checks that they exist).
    Elsewhere(&'static str, &'static str),
}

#[derive(Default)]
struct Script {
    /// Commands run first in the block's directory: the files the page says the block starts from.
    setup: &'static str,
    /// Replacements applied to the block (after its comments are cut): sizes, and steps a reader
    /// does by hand in another terminal.
    subs: &'static [(&'static str, &'static str)],
    /// Appended to the block.
    end: &'static str,
    /// Files the block must leave non-empty.
    files: &'static [&'static str],
    /// Text the block must print (on its standard output or error).
    prints: &'static [&'static str],
}

/// A block of the pages: the page (from the repository's root), the first line's start, how.
struct Entry {
    page: &'static str,
    starts: &'static str,
    how: How,
}

/// Sizes a debug build runs in a second or two (a bench's stream, the demo's graph).
const SHRINK: &[(&str, &str)] = &[
    ("bench wcc-churn", "bench wcc-churn --scale 9 --epochs 3"),
    ("bench wcc-insert", "bench wcc-insert --scale 9 --epochs 3 --batch 1000"),
    ("bench wcc-window", "bench wcc-window --scale 8 --epochs 3 --window 2000 --batch 500"),
    ("bench triangles-churn", "bench triangles-churn --scale 9 --epochs 3"),
    ("bench bipartite-churn", "bench bipartite-churn --scale 9 --epochs 3"),
    ("bench kcore-churn", "bench kcore-churn --scale 9 --epochs 3"),
    ("bench spanner-insert", "bench spanner-insert --scale 9 --epochs 3"),
    ("bench matching-insert", "bench matching-insert --scale 9 --epochs 3"),
    ("ripples demo", "ripples demo --scale 10 --window 5000 --epochs 20"),
];

/// A small graph and update stream, as `g.e` and `u.txt`.
const GRAPH: &str = "ripples gen rmat --scale 10 --seed 1 --out g.e\n\
                     ripples gen updates --graph g.e --count 3000 --delete-fraction 0.3 --seed 1 --out u.txt\n";

/// A served run that has ended and lingers (for the pages that query one), on port 6875.
const SERVED: &str = "ripples gen rmat --scale 10 --seed 1 --out g.e\n\
    ripples gen updates --graph g.e --count 2000 --delete-fraction 0.2 --out u.e\n\
    ripples run wcc,bfs --source 1 --graph g.e --updates u.e --batch 100 --output-dir out \
    --serve 127.0.0.1:6875 --serve-trust --serve-linger --profile p.json 2> served.log &\n\
    wait_text served.log 'still serving'\n";

fn entries() -> Vec<Entry> {
    use How::*;
    let run = |s: Script| Run(s);
    vec![
        Entry {
            page: "README.md",
            starts: "cargo run --release -- demo",
            // `cargo test` is what runs this test.
            how: run(Script { subs: &[("cargo test", "true")], prints: &["updates/s"], ..Default::default() }),
        },
        Entry {
            page: "README.md",
            starts: "ripples gen rmat --scale 14 --out g.e",
            how: Elsewhere("tests/cli.rs", "the_readme_tour_runs"),
        },
        Entry {
            page: "README.md",
            starts: "cargo run --release --example typed_serve",
            how: run(Script {
                setup: "ripples gen rmat --scale 10 --seed 1 --out g.e\n\
                        ripples gen updates --graph g.e --count 2000 --delete-fraction 0.5 --seed 1 --out u.txt\n\
                        printf '\\\\d fans_out\\nSELECT count(*) FROM fans_out;\\n' > fans.sql\n",
                subs: &[("--serve-linger -q", "--serve-linger 2> served.log &\nwait_text served.log 'still serving'")],
                prints: &["Table \"public.fans_out\"", "(1 row)"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/getting-started.md",
            starts: "cargo run --release -- demo",
            how: run(Script { subs: &[("cargo test", "true")], prints: &["updates/s"], ..Default::default() }),
        },
        Entry {
            page: "book/src/algorithms.md",
            starts: "ripples run wcc,bfs,pagerank",
            how: run(Script {
                setup: GRAPH,
                files: &["out/wcc.out", "out/wcc.changes", "out/bfs.out", "out/pagerank.out"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/algorithms.md",
            starts: "cargo run --release -- graphalytics",
            how: run(Script {
                setup: "ln -s \"$REPO/tests\" tests\n",
                subs: &[("/path/to/dataset --graph NAME", "tests/data/graphalytics/graphs --graph example-directed")],
                prints: &["24 passed, 0 failed", "1 passed, 0 failed"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/experiments.md",
            starts: "ripples experiment convert sx-stackoverflow.txt",
            how: run(Script {
                // A SNAP temporal edge list over ten days.
                setup: "awk 'BEGIN { for (i = 0; i < 2000; i++) print i % 97, (i * 31) % 89, 1217567877 + i * 432 }' \
                        > sx-stackoverflow.txt\n",
                files: &["so.u", "daily.txt"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/library.md",
            starts: "cargo run --release --example degree_distribution",
            how: run(Script { setup: GRAPH, files: &["degrees.txt"], ..Default::default() }),
        },
        Entry {
            page: "book/src/live.md",
            starts: "ripples run wcc --listen 127.0.0.1:7000 --changes -",
            how: run(Script {
                end: "wait",
                files: &["final.txt"],
                prints: &["ready 1", "ok 2", "bye"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/live.md",
            starts: "ripples run wcc --listen 7000 --state-dir st",
            how: run(Script {
                prints: &["ready 1", "ok 2", "ready 3", "bye", "1 1\n2 1\n3 1\n4 1\n"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/monitoring.md",
            starts: "ripples run wcc --graph g.e --listen 9000",
            how: run(Script { setup: GRAPH, prints: &["ripples_epoch_duration_seconds_bucket"], ..Default::default() }),
        },
        Entry {
            page: "book/src/monitoring.md",
            starts: "psql \"host=127.0.0.1 port=5433 user=ripples\" -c",
            how: run(Script {
                setup: SERVED,
                subs: &[("port=5433", "port=6875")],
                prints: &["(5 rows)"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/performance.md",
            starts: "mkdir -p docs/runs/$(date +%F)-wcc-churn",
            how: run(Script {
                setup: "mkdir -p book/src\n",
                // `cargo bench`: `.ci/run` runs the benches once (`cargo test --benches`).
                subs: &[("$EDITOR summary.md", "echo 'A test run.' > summary.md"), ("cargo bench", "true")],
                files: &["book/src/performance-runs.md"],
                prints: &["ripples / uf-hash"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/performance-runs.md",
            starts: "ripples bench ",
            how: run(Script { files: &["bench.json", "plot.svg"], ..Default::default() }),
        },
        Entry {
            page: "book/src/reference-protocol.md",
            starts: "ripples run wcc --listen 127.0.0.1:7000 --state-dir st",
            how: run(Script { prints: &["< ready 1", "< bye"], ..Default::default() }),
        },
        Entry {
            page: "book/src/running.md",
            starts: "ripples gen rmat --scale 16 --out g.e",
            how: run(Script {
                subs: &[("--scale 16", "--scale 10"), ("--count 100000", "--count 3000")],
                end: "wait",
                files: &["out.txt"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/serving.md",
            starts: "ripples gen rmat --scale 10 --seed 1 --out g.e",
            how: run(Script {
                subs: &[
                    ("--serve-linger", "--serve-linger 2> served.log &\nwait_text served.log 'still serving'"),
                    ("user=ripples\"", "user=ripples\" -c 'SELECT count(*) FROM wcc'"),
                ],
                prints: &["(1 row)"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/windows.md",
            starts: "ripples gen rmat --scale 16 --out g.e",
            how: run(Script {
                // The last line is a live run a reader leaves waiting for producers.
                subs: &[
                    ("--scale 16", "--scale 10"),
                    ("--count 1000000", "--count 20000"),
                    ("--state-dir st", "--state-dir st &"),
                ],
                files: &["c.txt", "s.json"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/windows.md",
            starts: "ripples gen rmat --scale 20 --out g20.e",
            how: run(Script {
                subs: &[
                    ("--scale 20", "--scale 10"),
                    ("--count 1500000", "--count 5000"),
                    ("--window 1000000", "--window 3000"),
                ],
                files: &["w.json"],
                ..Default::default()
            }),
        },
        Entry {
            page: "book/src/sql/copy.md",
            starts: "psql \"host=127.0.0.1 port=6875 user=ripples\"",
            how: run(Script { setup: SERVED, files: &["sizes.tsv"], prints: &["COPY "], ..Default::default() }),
        },
    ]
}

/// The blocks of a page fenced as ```` ```LANG ````, each as its lines.
fn fenced(text: &str, lang: &str) -> Vec<Vec<String>> {
    let opening = format!("```{lang}");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines() {
        match current.as_mut() {
            None if line.trim_end() == opening => current = Some(Vec::new()),
            None => {}
            Some(_) if line.starts_with("```") => blocks.push(current.take().expect("in a block")),
            Some(lines) => lines.push(line.to_string()),
        }
    }
    blocks
}

/// The `sh` blocks of a page, each as its lines.
fn sh_blocks(text: &str) -> Vec<Vec<String>> {
    fenced(text, "sh")
}

/// The README and every page of the book, sorted.
fn pages(repo: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = vec![repo.join("README.md")];
    let mut dirs = vec![repo.join("book/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a book directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// The block as commands: continued lines joined, comments cut (a line's comment starts at a
/// `#` after two spaces, as the pages write them).
fn commands(block: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut continued = false;
    for line in block {
        let line = line.split("  #").next().unwrap_or("").trim_end();
        if !continued && line.trim_start().starts_with('#') {
            continue;
        }
        let (text, more) = match line.strip_suffix('\\') {
            Some(t) => (t.to_string(), true),
            None => (line.to_string(), false),
        };
        if continued {
            out.last_mut().expect("a line continued").push_str(text.trim_start());
        } else {
            out.push(text);
        }
        continued = more;
    }
    out.retain(|l| !l.trim().is_empty());
    out
}

/// Replaces every whole number `from` in `text` by `to` (a port: `7000` but not `17000`).
fn replace_number(text: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(from) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + from.len()..].chars().next();
        let whole = !before.is_some_and(|c| c.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit());
        out.push_str(&rest[..i]);
        out.push_str(if whole { to } else { from });
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// The ports the pages use.
const PORTS: &[&str] = &["7000", "9000", "9100", "5433", "6875", "2101", "2102"];

/// Shell functions the scripts use: wait until a port listens (read from /proc, so no
/// connection is made: a probe would count as a producer), and until a file holds a text.
const PRELUDE: &str = r#"set -e
wait_listen() { python3 - "$1" <<'PY'
import sys, time
port = ":%04X" % int(sys.argv[1])
for _ in range(1200):
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = [l.split() for l in open(name).readlines()[1:]]
        except OSError:
            continue
        if any(r[1].endswith(port) and r[3] == "0A" for r in rows):
            sys.exit(0)
    time.sleep(0.05)
sys.exit("nothing listens on port %s after 60 s" % sys.argv[1])
PY
}
wait_text() { i=0; until grep -q "$2" "$1" 2>/dev/null; do i=$((i+1)); [ $i -lt 1200 ] || { echo "no '$2' in $1 after 60 s" >&2; cat "$1" >&2; exit 1; }; sleep 0.05; done; }
"#;

/// The script that runs `block` by `script`'s rules, ports mapped to `ports`.
fn script_for(block: &[String], script: &Script, ports: &[(String, String)]) -> String {
    let mut lines = Vec::new();
    for line in commands(block) {
        let mut line = line
            .replace("cargo run --release -- ", "ripples ")
            .replace("cargo run -q -- ", "ripples ")
            .replace("../../../target/release/ripples ", "ripples ")
            .replace("./target/release/ripples ", "ripples ")
            .replace("cargo run --release --example ", "run_example ");
        for (from, to) in SHRINK.iter().chain(script.subs) {
            line = line.replace(from, to);
        }
        lines.extend(line.lines().map(str::to_string));
    }
    let mut text = String::from(PRELUDE);
    text.push_str("run_example() { name=$1; shift; [ \"$1\" = -- ] && shift; \"$RIPPLES_EXAMPLES/$name\" \"$@\"; }\n");
    text.push_str(script.setup);
    for line in lines {
        text.push_str(&line);
        text.push('\n');
        // A listener started in the background: wait until it listens.
        if line.trim_end().ends_with('&') {
            let words: Vec<&str> = line.split_whitespace().collect();
            for pair in words.windows(2) {
                if ["--listen", "--serve", "--http"].contains(&pair[0]) {
                    let port = pair[1].rsplit(':').next().unwrap_or(pair[1]);
                    text.push_str(&format!("wait_listen {port}\n"));
                }
            }
        }
    }
    text.push_str(script.end);
    text.push('\n');
    for (from, to) in ports {
        text = replace_number(&text, from, to);
    }
    text
}

/// The executable of example `name` that `cargo test` built (it builds every example), the
/// newest if several builds left one.
fn example(bin_dir: &Path, name: &str) -> PathBuf {
    let prefix = format!("{name}-");
    let built = std::fs::read_dir(bin_dir.join("examples"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            let file = e.file_name().to_string_lossy().to_string();
            file.strip_prefix(&prefix).is_some_and(|h| h.len() == 16 && h.chars().all(|c| c.is_ascii_hexdigit()))
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max();
    match built {
        Some((_, path)) => path,
        None => panic!(
            "example {name} is not built in {}: run the whole `cargo test` (it builds the examples), \
             or `cargo build --examples` first",
            bin_dir.join("examples").display()
        ),
    }
}

/// What running one block gave: the script run, whether it succeeded, its output, and the
/// files it should have left that are missing or empty.
struct BlockRun {
    text: String,
    ok: bool,
    stdout: String,
    stderr: String,
    missing: Vec<&'static str>,
}

/// Runs one block as its entry says, in a fresh directory with free ports.
fn run_block(script: &Script, block: &[String], bin_dir: &Path) -> BlockRun {
    let ports: Vec<(String, String)> = PORTS.iter().map(|p| (p.to_string(), free_port().to_string())).collect();
    let files = Files::new();
    let text = script_for(block, script, &ports);
    let examples = files.root.join("examples");
    std::fs::create_dir_all(&examples).expect("examples dir");
    for name in block.iter().flat_map(|l| l.split("--example ").skip(1)) {
        let name = name.split_whitespace().next().unwrap_or_default();
        std::os::unix::fs::symlink(example(bin_dir, name), examples.join(name)).expect("link the example");
    }
    let (ok, stdout, stderr) = run_script(&text, &files.root, bin_dir);
    let missing = script
        .files
        .iter()
        .copied()
        .filter(|f| std::fs::metadata(files.root.join(f)).map_or(true, |m| m.len() == 0))
        .collect();
    BlockRun { text, ok, stdout, stderr, missing }
}

/// Runs `text` with `sh` in `dir` under a 300 s limit; kills whatever it left running.
/// Returns (success, stdout, stderr).
fn run_script(text: &str, dir: &Path, bin_dir: &Path) -> (bool, String, String) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let (out, err) = (dir.join("script.stdout"), dir.join("script.stderr"));
    std::fs::write(dir.join("script.sh"), text).expect("write the script");
    // `timeout` leads a process group of its own: the script and its background processes.
    let mut child = Command::new("timeout")
        .args(["300", "sh", "script.sh"])
        .current_dir(dir)
        .env("PATH", &path)
        .env("REPO", repo)
        .env("RIPPLES_EXAMPLES", dir.join("examples"))
        .env("TMPDIR", dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("timeout and sh run");
    let status = child.wait().expect("the script ends");
    let _ = Command::new("kill").args(["-9", "--", &format!("-{}", child.id())]).stderr(Stdio::null()).status();
    let read = |p: &PathBuf| std::fs::read_to_string(p).unwrap_or_default();
    (status.success(), read(&out), read(&err))
}

#[test]
fn every_sh_block_of_the_readme_and_the_book_runs() {
    if !common::pg::have("psql", &["--version"], "apt-get install postgresql-client")
        || !common::pg::have("nc", &["-h"], "apt-get install netcat-openbsd")
    {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_ripples")).parent().expect("target dir").to_path_buf();
    let pages = pages(repo);
    let entries = entries();
    let mut used = vec![false; entries.len()];
    let mut failures = Vec::new();
    // The blocks to run, in page order: (page, block number, first line, how, block).
    let mut jobs: Vec<(String, usize, String, &Script, Vec<String>)> = Vec::new();
    for page in &pages {
        let name = page.strip_prefix(repo).expect("under the repository").to_string_lossy().to_string();
        let text = std::fs::read_to_string(page).expect("read the page");
        for (n, block) in sh_blocks(&text).into_iter().enumerate() {
            let first = commands(&block).into_iter().next().unwrap_or_default();
            let Some(i) = entries.iter().position(|e| e.page == name && first.starts_with(e.starts)) else {
                failures.push(format!("{name}, sh block {n} (`{first}`): not in this test's table; say how it runs"));
                continue;
            };
            used[i] = true;
            match &entries[i].how {
                How::Run(script) => jobs.push((name.clone(), n, first, script, block)),
                How::Elsewhere(file, test) => {
                    let source = std::fs::read_to_string(repo.join(file)).unwrap_or_default();
                    if !source.contains(&format!("fn {test}()")) {
                        failures.push(format!(
                            "{name}, sh block {n}: said to run in {file} {test}, which has no such test"
                        ));
                    }
                }
            }
        }
    }
    // Two blocks at a time (most of a block's time is its commands starting, waiting for a port
    // or a file, and a debug build's single-threaded work): each in its own directory, with its
    // own free ports. The results are judged in page order.
    let results: Vec<std::sync::Mutex<Option<BlockRun>>> = jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((_, _, _, script, block)) = jobs.get(i) else { break };
                let run = run_block(script, block, &bin_dir);
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(run);
            });
        }
    });
    let ran = jobs.len();
    for ((name, n, first, script, _), result) in jobs.iter().zip(results) {
        let run = result.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every block ran");
        let mut problems = Vec::new();
        if !run.ok {
            problems.push("it failed".to_string());
        }
        for f in run.missing {
            problems.push(format!("{f} is missing or empty"));
        }
        for want in script.prints {
            if !run.stdout.contains(want) && !run.stderr.contains(want) {
                problems.push(format!("its output lacks {want:?}"));
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{name}, sh block {n} (`{first}`): {}\n--- script (after the prelude)\n{}--- stdout\n{}--- stderr\n{}",
                problems.join("; "),
                run.text.strip_prefix(PRELUDE).unwrap_or(&run.text),
                run.stdout,
                run.stderr
            ));
        }
    }
    for (entry, used) in entries.iter().zip(used) {
        if !used {
            failures.push(format!("no sh block of {} starts with `{}`: remove the entry", entry.page, entry.starts));
        }
    }
    assert!(failures.is_empty(), "{} of the blocks run:\n{}", ran, failures.join("\n\n"));
    assert!(ran >= 20, "only {ran} blocks ran");
}

/// The `text` blocks of a page that are psql transcripts (`psql -X -a ... -f FILE.sql`): those
/// whose first line is a statement (ends with `;`) or a meta-command (starts with `\`).
fn transcripts(text: &str) -> Vec<Vec<String>> {
    let mut blocks = fenced(text, "text");
    blocks.retain(|b| b.first().is_some_and(|l| is_input(l)));
    blocks
}

/// A line of a transcript that psql echoed from its input file (`-a`).
fn is_input(line: &str) -> bool {
    !line.starts_with("psql:") && (line.ends_with(';') || line.starts_with('\\'))
}

/// Transcripts of a run with extra flags (the page says "The same run with `FLAGS`"): the page's
/// name, the transcript's place among the page's transcripts, the flags.
const SAME_RUN_WITH: &[(&str, usize, &str)] = &[("changes", 1, "--serve-retain-epochs 5")];

/// Statements whose answers change from run to run (times, the server's build): their outputs
/// are compared by their number of lines only.
const VOLATILE: &[&str] = &["completed_at", "latency_ms", "mirror_ms", "version()"];

/// Compares a transcript with psql's output for the same input, line by line (trailing spaces
/// aside); returns the first difference.
fn compare_transcript(expected: &[String], actual: &str) -> Result<(), String> {
    // Split both into (input line, output lines) sections.
    fn sections<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for line in lines {
            let line = line.trim_end();
            // psql names its input file in an error line: `psql:FILE:LINE: ERROR: ...`.
            let renamed;
            let line = match line.strip_prefix("psql:").and_then(|r| r.split_once(':')) {
                Some((_, rest)) => {
                    renamed = format!("psql:FILE:{rest}");
                    renamed.as_str()
                }
                None => line,
            };
            if is_input(line) {
                out.push((line.to_string(), Vec::new()));
            } else if let Some(last) = out.last_mut() {
                last.1.push(line.to_string());
            } else {
                out.push((String::new(), vec![line.to_string()]));
            }
        }
        for section in &mut out {
            while section.1.last().is_some_and(|l| l.is_empty()) {
                section.1.pop();
            }
        }
        out
    }
    let want = sections(expected.iter().map(String::as_str));
    let got = sections(actual.lines());
    if want.len() != got.len() {
        return Err(format!("{} statements in the transcript, {} in psql's output", want.len(), got.len()));
    }
    for ((statement, w), (echoed, g)) in want.iter().zip(&got) {
        if statement != echoed {
            return Err(format!("psql echoed {echoed:?} where the transcript has {statement:?}"));
        }
        let same = if VOLATILE.iter().any(|v| statement.contains(v)) { w.len() == g.len() } else { w == g };
        if !same {
            return Err(format!("`{statement}` answers\n{}\nwhere the transcript has\n{}", g.join("\n"), w.join("\n")));
        }
    }
    Ok(())
}

/// Every psql transcript of the serving page and the SQL pages is what psql prints for its
/// statements today, against the run of book/src/serving.md (its commands, which the page shows, checked to be the same).
#[test]
fn the_sql_pages_transcripts_are_real_output() {
    if !common::pg::have("psql", &["--version"], "apt-get install postgresql-client") {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_ripples")).parent().expect("target dir").to_path_buf();
    let run = [
        "ripples gen rmat --scale 10 --seed 1 --out g.e",
        "ripples gen updates --graph g.e --count 2000 --delete-fraction 0.2 --out u.e",
        "ripples run wcc,bfs --source 1 --graph g.e --updates u.e --batch 100 --output-dir out \
         --serve 127.0.0.1:6875 --serve-trust --serve-linger",
    ];
    let serving = std::fs::read_to_string(repo.join("book/src/serving.md")).expect("serving.md");
    let shown = sh_blocks(&serving).first().map(|b| commands(b)).unwrap_or_default();
    let shown: Vec<String> = shown.iter().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    for line in run {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(shown.contains(&line), "book/src/serving.md's first block no longer runs `{line}`: {shown:?}");
    }

    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo.join("book/src/sql"))
        .expect("book/src/sql")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, repo.join("book/src/serving.md"));
    let files = Files::new();
    // One served run per set of extra flags: the page's own, then each of SAME_RUN_WITH's.
    let mut runs: Vec<(&str, u16)> = vec![("", free_port())];
    for &(_, _, flags) in SAME_RUN_WITH {
        if !runs.iter().any(|&(f, _)| f == flags) {
            runs.push((flags, free_port()));
        }
    }
    let mut script = String::new();
    for (k, (flags, port)) in runs.iter().enumerate() {
        let serve = run[2].replace("6875", &port.to_string());
        script.push_str(&format!(
            "mkdir run{k} && cd run{k}\n{}\n{}\n{serve} {flags} 2> served.log &\nwait_text served.log 'still serving'\ncd ..\n",
            run[0], run[1]
        ));
    }
    let mut expected = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("a page");
        let stem = page.file_stem().expect("a name").to_string_lossy().to_string();
        // The file name psql was given (its errors name it), as the page says.
        let file = text
            .split(" -f ")
            .nth(1)
            .and_then(|t| t.split(['`', ' ', ')']).next())
            .map_or(format!("{stem}.sql"), str::to_string);
        for (n, block) in transcripts(&text).into_iter().enumerate() {
            let name = if n == 0 { file.clone() } else { format!("{stem}{n}.sql") };
            let flags = SAME_RUN_WITH.iter().find(|&&(p, b, _)| p == stem && b == n).map_or("", |&(_, _, f)| f);
            assert!(
                flags.is_empty() || text.contains(&format!("The same run with `{flags}`")),
                "{stem}.md no longer says its transcript {n} is the same run with `{flags}`"
            );
            let port = runs.iter().find(|&&(f, _)| f == flags).expect("a run for the flags").1;
            let input: String = block.iter().filter(|l| is_input(l)).map(|l| format!("{l}\n")).collect();
            std::fs::write(files.root.join(&name), input).expect("write the statements");
            script.push_str(&format!(
                "psql -X -a \"host=127.0.0.1 port={port} user=ripples\" -f {name} > {name}.out 2>&1 || true\n"
            ));
            expected.push((page.clone(), name, block));
        }
    }
    assert!(expected.len() >= 6, "only {} transcripts found in book/src/sql", expected.len());
    let (ok, stdout, stderr) = run_script(&format!("{PRELUDE}{script}"), &files.root, &bin_dir);
    assert!(ok, "the served run or psql failed:\n{stdout}\n{stderr}");
    let mut failures = Vec::new();
    for (page, name, block) in &expected {
        let actual = std::fs::read_to_string(files.root.join(format!("{name}.out"))).unwrap_or_default();
        if let Err(e) = compare_transcript(block, &actual) {
            failures.push(format!("{} ({name}): {e}", page.strip_prefix(repo).unwrap_or(page).display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every `--flag` the README and the book name (in prose, synopses, blocks) is a flag of the
/// generated CLI reference (docs/cli.md, itself checked against clap by tests/cli.rs), so a
/// renamed or removed flag cannot stay in the documentation. A line that names another
/// program's command (cargo, psql, pgbench, rustc) is that program's. `--serve-*` names a prefix.
#[test]
fn every_flag_the_pages_name_is_a_flag_of_the_cli_reference() {
    fn flags(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let bytes = line.as_bytes();
        let mut i = 0;
        while let Some(at) = line[i..].find("--") {
            let start = i + at;
            let before_ok = start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'-');
            let mut end = start + 2;
            while end < bytes.len()
                && (bytes[end].is_ascii_lowercase() || bytes[end].is_ascii_digit() || bytes[end] == b'-')
            {
                end += 1;
            }
            if before_ok && end > start + 2 && bytes[start + 2].is_ascii_lowercase() {
                out.push(line[start..end].to_string());
            }
            i = end.max(start + 2);
        }
        out
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reference = std::fs::read_to_string(repo.join("docs/cli.md")).expect("docs/cli.md");
    let known: std::collections::BTreeSet<String> = reference.lines().flat_map(flags).collect();
    assert!(known.len() > 50, "only {} flags in docs/cli.md", known.len());
    let pages = pages(repo);
    let foreign = ["cargo ", "psql ", "pgbench ", "RUSTC"];
    let mut unknown = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("a page");
        for (n, line) in text.lines().enumerate() {
            if foreign.iter().any(|f| line.contains(f)) {
                continue;
            }
            for flag in flags(line) {
                checked += 1;
                let ok = match flag.strip_suffix('-') {
                    Some(prefix) => known.iter().any(|k| k.starts_with(prefix) && k.len() > prefix.len()),
                    None => known.contains(&flag),
                };
                if !ok {
                    unknown.push(format!("{}:{}: {flag}", page.strip_prefix(repo).unwrap_or(page).display(), n + 1));
                }
            }
        }
    }
    assert!(checked > 200, "only {checked} flags named in the pages");
    assert!(unknown.is_empty(), "flags no command has (docs/cli.md):\n{}", unknown.join("\n"));
}

/// The README's transcript of `examples/typed_serve.rs` is what psql prints for its statements
/// against the run the README shows, on the graph and updates its text names.
#[test]
fn the_readme_typed_serve_transcript_is_real_output() {
    if !common::pg::have("psql", &["--version"], "apt-get install postgresql-client") {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_ripples")).parent().expect("target dir").to_path_buf();
    let readme = std::fs::read_to_string(repo.join("README.md")).expect("README.md");
    let block = sh_blocks(&readme)
        .into_iter()
        .map(|b| commands(&b))
        .find(|c| c.first().is_some_and(|l| l.starts_with("cargo run --release --example typed_serve")))
        .expect("the README's typed_serve block");
    let [run, psql] = &block[..] else { panic!("the typed_serve block is two commands: {block:?}") };
    // The files it reads, as the text after it names them: "(`g.e`: `CMD`; `u.txt`: `CMD`; ...".
    let made_by = |file: &str| -> String {
        let at = readme
            .find(&format!("`{file}`: `"))
            .unwrap_or_else(|| panic!("the README no longer says how {file} is made"));
        let rest = &readme[at + file.len() + 5..];
        rest[..rest.find('`').expect("a closing backquote")].split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let (graph, updates) = (made_by("g.e"), made_by("u.txt"));
    assert!(psql.ends_with("-f fans.sql"), "the block's psql reads fans.sql: {psql}");
    let transcript = transcripts(&readme);
    let [transcript] = &transcript[..] else { panic!("one psql transcript in the README, found {}", transcript.len()) };
    let files = Files::new();
    let input: String = transcript.iter().filter(|l| is_input(l)).map(|l| format!("{l}\n")).collect();
    std::fs::write(files.root.join("fans.sql"), input).expect("write fans.sql");
    let examples = files.root.join("examples");
    std::fs::create_dir_all(&examples).expect("examples dir");
    std::os::unix::fs::symlink(example(&bin_dir, "typed_serve"), examples.join("typed_serve"))
        .expect("link the example");
    let port = free_port().to_string();
    let served = replace_number(
        &run.replace("cargo run --release --example typed_serve --", "\"$RIPPLES_EXAMPLES/typed_serve\"")
            .replace("--serve-linger -q", "--serve-linger"),
        "5433",
        &port,
    );
    let psql = replace_number(psql, "5433", &port);
    let script = format!(
        "{PRELUDE}{graph} --out g.e\n{updates} --out u.txt\n{served} 2> served.log &\n\
         wait_text served.log 'still serving'\n{psql} > fans.out 2>&1 || true\n"
    );
    let (ok, stdout, stderr) = run_script(&script, &files.root, &bin_dir);
    assert!(ok, "the served run or psql failed:\n{script}\n{stdout}\n{stderr}");
    let actual = std::fs::read_to_string(files.root.join("fans.out")).unwrap_or_default();
    if let Err(e) = compare_transcript(transcript, &actual) {
        panic!("README.md's typed_serve transcript: {e}");
    }
}

/// The experiment file book/src/experiments.md shows, annotated, says what experiments/smoke.toml
/// (which CI runs) says: the same TOML once comments are gone (the file's estimate aside), and the
/// page's other TOML block is valid TOML.
#[test]
fn the_experiment_page_shows_the_smoke_sweep() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(repo.join("book/src/experiments.md")).expect("experiments.md");
    let blocks: Vec<String> =
        fenced(&page, "toml").iter().map(|b| b.iter().map(|l| format!("{l}\n")).collect()).collect();
    assert_eq!(blocks.len(), 2, "two TOML blocks in experiments.md");
    let shown: toml::Table = blocks[0].parse().unwrap_or_else(|e| panic!("the page's first TOML block: {e}"));
    let file = std::fs::read_to_string(repo.join("experiments/smoke.toml")).expect("experiments/smoke.toml");
    let mut smoke: toml::Table = file.parse().expect("experiments/smoke.toml is TOML");
    smoke.remove("estimate_updates_per_sec");
    assert_eq!(shown, smoke, "book/src/experiments.md's first block is not experiments/smoke.toml");
    let fragment: toml::Table = blocks[1].parse().unwrap_or_else(|e| panic!("the page's second TOML block: {e}"));
    assert!(fragment.contains_key("datasets"), "the second block adds datasets");
}

/// The layout in the internals chapter is the source tree's: every directory of `src/` has its
/// line, and every file (`name.rs`) and folder (`name/`) a line names exists under that line's
/// directory.
#[test]
fn the_internals_layout_is_the_source_tree() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(repo.join("book/src/internals.md")).expect("book/src/internals.md");
    let block = fenced(&page, "text").into_iter().next().expect("the layout block of book/src/internals.md");
    // (directory, the words of its lines)
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in &block {
        let first = line.split_whitespace().next().unwrap_or("");
        if !line.starts_with(' ') && first.ends_with('/') {
            entries.push((first.to_string(), line[first.len()..].to_string()));
        } else if let Some((_, words)) = entries.last_mut() {
            words.push('\n');
            words.push_str(line);
        } else {
            panic!("the layout block starts with {line:?}, not a directory");
        }
    }
    assert!(entries.len() >= 10, "only {} directories in the layout block", entries.len());
    let mut problems = Vec::new();
    for dir in std::fs::read_dir(repo.join("src")).expect("src/") {
        let dir = dir.expect("an entry of src/").path();
        if dir.is_dir() {
            let name = format!("src/{}/", dir.file_name().expect("a name").to_string_lossy());
            if !entries.iter().any(|(d, _)| *d == name) {
                problems.push(format!("{name} has no line in the layout"));
            }
        }
    }
    for (dir, words) in &entries {
        let root = repo.join(dir);
        if !root.is_dir() {
            problems.push(format!("{dir} is in the layout but not in the repository"));
            continue;
        }
        let mut below: Vec<(String, bool)> = Vec::new();
        let mut stack = vec![root];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).expect("a directory") {
                let path = entry.expect("an entry").path();
                let name = path.file_name().expect("a name").to_string_lossy().to_string();
                if path.is_dir() {
                    below.push((name, true));
                    stack.push(path);
                } else {
                    below.push((name, false));
                }
            }
        }
        let tokens = words.split(|c: char| !(c.is_ascii_alphanumeric() || "_./".contains(c)));
        for token in tokens {
            let token = token.trim_end_matches('.');
            let file = token.strip_suffix(".rs").filter(|s| !s.is_empty() && !s.contains(['/', '.']));
            let folder = token.strip_suffix('/').filter(|s| !s.is_empty() && !s.contains(['/', '.']));
            let found = match (file, folder) {
                (Some(_), _) => below.iter().any(|(n, d)| !d && n == token),
                (_, Some(f)) => below.iter().any(|(n, d)| *d && n == f),
                _ => continue,
            };
            if !found {
                problems.push(format!("the layout's line of {dir} names {token}, which is not under {dir}"));
            }
        }
    }
    assert!(problems.is_empty(), "book/src/internals.md's layout is stale:\n{}", problems.join("\n"));
}

/// A synopsis form as a regular expression over one statement: capitals are keywords, lowercase
/// words placeholders (`query` any text), `...` anything, `[...]` optional, `|` alternatives.
/// `required` makes the `k`-th optional group (in order of its `[`) required instead.
fn synopsis_regex(form: &str, required: Option<usize>) -> regex::Regex {
    // `true|false`: one placeholder with its values, not two alternatives of the group.
    let form = regex::Regex::new(r"([a-z]+)\|[a-z]+").expect("a pattern").replace_all(form, "$1");
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut chars = form.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if c == '.' && chars.peek() == Some(&'.') {
            chars.next();
            chars.next();
            tokens.push("...".to_string());
        } else if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    let (mut pattern, mut groups, mut stack) = (String::from(r"(?i)^\s*"), 0usize, Vec::new());
    for token in &tokens {
        let piece = match token.as_str() {
            "[" => {
                stack.push(required == Some(groups));
                groups += 1;
                "(?:".to_string()
            }
            "]" => if stack.pop().expect("a [ before ]") { ")" } else { ")?" }.to_string(),
            "|" => "|".to_string(),
            "..." => ".*?".to_string(),
            "query" => ".+?".to_string(),
            t if t.chars().all(|c| c.is_ascii_uppercase() || c == '_') => format!(r"\b{t}\b"),
            t if t.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit()) => {
                r"[^\s;(),]+".to_string()
            }
            t => regex::escape(t),
        };
        pattern.push_str(&piece);
        pattern.push_str(r"\s*");
    }
    pattern.push_str(r";?\s*$");
    regex::Regex::new(&pattern).unwrap_or_else(|e| panic!("synopsis {form:?}: {e}"))
}

/// Every form of an SQL page's synopsis (a ```sql block: one form a line, a line continued when
/// it starts with spaces, `A | B` at the top two forms, statements joined by `;` each a form), and
/// every optional part of it (`[...]`), is exercised by a statement the page runs: one of its psql
/// transcripts (checked against real output by `the_sql_pages_transcripts_are_real_output`) or
/// its `sh` blocks' `psql -c` commands (run by `every_sh_block_of_the_readme_and_the_book_runs`).
#[test]
fn every_sql_synopsis_form_is_run_on_its_page() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    let mut forms_seen = 0;
    for entry in std::fs::read_dir(repo.join("book/src/sql")).expect("book/src/sql") {
        let page = entry.expect("an entry").path();
        let text = std::fs::read_to_string(&page).expect("a page");
        let name = page.strip_prefix(repo).unwrap_or(&page).display().to_string();
        let mut statements: Vec<String> = transcripts(&text).into_iter().flatten().filter(|l| is_input(l)).collect();
        for block in sh_blocks(&text) {
            for command in commands(&block) {
                for part in command.split(" -c ").skip(1) {
                    statements.push(part.trim().trim_matches(['"', '\'']).to_string());
                }
            }
        }
        let statements: Vec<String> = statements
            .iter()
            .map(|s| s.trim_start_matches('\\').trim_start_matches("copy ").to_string())
            // psql's `\copy (...) TO 'file'` sends `COPY (...) TO STDOUT`.
            .map(|s| match s.split_once(" TO '") {
                Some((head, _)) => format!("{head} TO STDOUT"),
                None => s,
            })
            .collect();
        for block in fenced(&text, "sql") {
            // Continuation lines join the line before.
            let mut lines: Vec<String> = Vec::new();
            for line in block {
                match lines.last_mut() {
                    Some(last) if line.starts_with(' ') => {
                        last.push(' ');
                        last.push_str(line.trim());
                    }
                    _ => lines.push(line.trim().to_string()),
                }
            }
            for line in lines {
                let forms: Vec<&str> = if line.contains(';') {
                    line.split(';').map(str::trim).filter(|f| !f.is_empty() && *f != "...").collect()
                } else {
                    // `A | B` at the top (outside brackets and parentheses).
                    let (mut depth, mut start, mut out) = (0i32, 0usize, Vec::new());
                    for (i, c) in line.char_indices() {
                        match c {
                            '[' | '(' => depth += 1,
                            ']' | ')' => depth -= 1,
                            '|' if depth == 0 => {
                                out.push(line[start..i].trim());
                                start = i + 1;
                            }
                            _ => {}
                        }
                    }
                    out.push(line[start..].trim());
                    out
                };
                for form in forms {
                    forms_seen += 1;
                    let runs = |re: &regex::Regex| statements.iter().any(|s| re.is_match(s));
                    if !runs(&synopsis_regex(form, None)) {
                        problems.push(format!("{name}: no statement of the page has the form `{form}`"));
                        continue;
                    }
                    for k in 0..form.matches('[').count() {
                        if !runs(&synopsis_regex(form, Some(k))) {
                            let part = form.match_indices('[').nth(k).map_or("", |(i, _)| &form[i..]);
                            problems.push(format!("{name}: no statement of the page uses `{part}` of `{form}`"));
                        }
                    }
                }
            }
        }
    }
    assert!(forms_seen >= 8, "only {forms_seen} synopsis forms found in book/src/sql");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
