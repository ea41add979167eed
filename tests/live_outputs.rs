//! What a live run shows while it runs and after a restart: `--output` appears only at the end,
//! complete (never empty or partial under its final name), and after a restart `--changes -`
//! continues after the last epoch it had written, so a consumer of stdout sees every epoch once.

mod common;

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::process::*;

const EPOCHS: [&str; 5] = ["+ 1 2\n+ 2 3\n", "+ 4 5\n", "- 1 2\n+ 3 4\n", "+ 7 8\n+ 8 1\n", "- 4 5\n"];

fn start(args: &[String], stderr: &Path) -> Child {
    bin()
        .args(["run", "wcc", "-q"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(fs::File::create(stderr).unwrap())
        .spawn()
        .expect("ripples starts")
}

fn send(p: &mut Producer, from: u64, to: u64) {
    for epoch in from..=to {
        p.send(&(EPOCHS[epoch as usize - 1].to_string() + "commit\n")).unwrap();
        assert_eq!(p.line().unwrap(), format!("ok {}", epoch));
    }
}

/// Waits until the state directory's change-log mark records `epoch` (the epoch is written).
fn wait_written(state: &Path, epoch: u64) {
    let deadline = Instant::now() + PATIENCE;
    while !matches!(ripples::live::read_mark(state), Ok(Some((e, _))) if e >= epoch) {
        assert!(Instant::now() < deadline, "epoch {} was never written", epoch);
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn reference(files: &Files) -> (String, String) {
    // The same epochs over stdin, one per `commit`, without a state directory.
    let mut child = bin()
        .args(["run", "wcc", "--updates", "-", "--changes", &s(&files.path("ref-c.txt"))])
        .args(["--output", &s(&files.path("ref-o.txt")), "-q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        for e in EPOCHS {
            stdin.write_all((e.to_string() + "commit\n").as_bytes()).unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "reference run: {}", String::from_utf8_lossy(&out.stderr));
    (read(&files.path("ref-c.txt")), read(&files.path("ref-o.txt")))
}

#[test]
fn output_appears_only_at_the_end_and_stdout_changes_continue_after_a_restart() {
    let files = Files::new();
    let (ref_changes, ref_output) = reference(&files);
    let port = free_port();
    let (state, output) = (files.path("state"), files.path("o.txt"));
    let args: Vec<String> = ["--listen", &port.to_string(), "--state-dir", &s(&state), "--changes", "-"]
        .iter()
        .map(|x| x.to_string())
        .chain(["--output".to_string(), s(&output)])
        .collect();

    let mut first = start(&args, &files.path("1.err"));
    let (mut p, ready) = Producer::connect_retry(port);
    assert_eq!(ready, 1);
    send(&mut p, 1, 3);
    wait_written(&state, 3);
    assert!(!output.exists(), "--output is visible before the run ended");
    let leftovers: Vec<_> = fs::read_dir(&files.root).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(
        !leftovers.iter().any(|n| n.to_string_lossy().starts_with("o.txt")),
        "a file named like the output exists while running: {:?}",
        leftovers
    );
    first.kill().unwrap();
    let _ = first.wait();
    let mut stdout1 = String::new();
    first.stdout.take().unwrap().read_to_string(&mut stdout1).unwrap();

    let mut second = start(&args, &files.path("2.err"));
    let (mut p, ready) = Producer::connect_retry(port);
    assert_eq!(ready, 4, "every acknowledged epoch is durable");
    send(&mut p, 4, 5);
    p.send("end\n").unwrap();
    let _ = p.line();
    let mut stdout2 = String::new();
    second.stdout.take().unwrap().read_to_string(&mut stdout2).unwrap();
    let status = wait_exit(&mut second, PATIENCE, "the restarted run");
    assert!(status.success(), "{}", read(&files.path("2.err")));
    assert_eq!(stdout1 + &stdout2, ref_changes, "stdout over both runs must hold every epoch once");
    assert_eq!(read(&output), ref_output);
}

/// Runs `ripples run wcc` over stdin with the given flags and returns (status, stderr).
fn stdin_run(args: &[String], input: &str) -> (std::process::ExitStatus, String) {
    use std::io::Write;
    let mut child = bin()
        .args(["run", "wcc", "--updates", "-", "-q"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn live_input_takes_a_vertex_file() {
    let files = Files::new();
    let vertices = files.write("g.v", "1\n9\n10\n42\n");
    let text = "+ 1 2\n+ 2 3\ncommit\n+ 9 10\n- 1 2\ncommit\n- 9 10\n";
    // The reference: the same epochs from files (`--batch 2` cuts the 5 lines as 2, 2, 1).
    let updates = files.write("u.txt", &text.replace("commit\n", ""));
    let (ref_changes, ref_output) = (files.path("ref-c.txt"), files.path("ref-o.txt"));
    let out = bin()
        .args(["run", "wcc", "--updates", &s(&updates), "--batch", "2", "--vertices", &s(&vertices), "-q"])
        .args(["--changes", &s(&ref_changes), "--output", &s(&ref_output)])
        .output()
        .unwrap();
    assert!(out.status.success(), "reference: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read(&ref_output), "1 1\n2 2\n3 2\n9 9\n10 10\n42 42\n", "the vertex file's vertices stay");
    for workers in ["1", "2"] {
        let (changes, output) = (files.path(&format!("c{}.txt", workers)), files.path(&format!("o{}.txt", workers)));
        let args: Vec<String> = ["--vertices", &s(&vertices), "--changes", &s(&changes), "--output", &s(&output)]
            .iter()
            .map(|x| x.to_string())
            .chain(["-w".to_string(), workers.to_string()])
            .collect();
        let (status, stderr) = stdin_run(&args, text);
        assert!(status.success(), "-w {}: {}", workers, stderr);
        assert_eq!(read(&changes), read(&ref_changes), "-w {}: --changes differ from the file run", workers);
        assert_eq!(read(&output), read(&ref_output), "-w {}: --output differs from the file run", workers);
    }
    let bad = files.write("bad.v", "1\nx\n");
    let (status, stderr) = stdin_run(&["--vertices".to_string(), s(&bad)], text);
    assert_eq!(status.code(), Some(2), "{}", stderr);
    assert!(stderr.contains(&format!("{}:2:", bad.display())), "{}", stderr);
}
