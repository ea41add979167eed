//! Cluster faults through the `ripples` binary: in a 2-process cluster fed by a TCP producer
//! with a state directory, process 1 is killed with SIGKILL after a random number of
//! acknowledged epochs (fixed seeds). Process 0 must stop with one clear line and exit status 3
//! (no panic text), and restarting both processes with the same flags must recover: the producer
//! resends from `ready E`, and the final `--changes` and `--output` are byte-identical to an
//! uninterrupted run of the same epochs from a file.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};

use common::process::*;
use common::random_stream;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ripples::types::Update;

const EPOCHS: usize = 12;
const BATCH: usize = 8;
const TRIALS: u64 = 10;

fn epoch_texts(seed: u64) -> Vec<String> {
    let stream = random_stream(seed, 30, 0, EPOCHS * BATCH, BATCH);
    let updates: Vec<Update> = stream.epochs.into_iter().flatten().take(EPOCHS * BATCH).collect();
    assert_eq!(updates.len(), EPOCHS * BATCH, "seed {}: stream too short", seed);
    updates
        .chunks(BATCH)
        .map(|c| c.iter().map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst)).collect())
        .collect()
}

fn start(args: &[String], process: usize, stderr: &Path) -> Child {
    bin()
        .args(["run", "wcc", "-q"])
        .args(args)
        .args(["-p", &process.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(stderr).unwrap())
        .spawn()
        .expect("ripples starts")
}

/// Sends epochs `from..=to` and expects `ok E` for each.
fn send_epochs(p: &mut Producer, texts: &[String], from: u64, to: u64) {
    for epoch in from..=to {
        p.send(&(texts[epoch as usize - 1].clone() + "commit\n")).unwrap();
        assert_eq!(p.line().unwrap(), format!("ok {}", epoch));
    }
}

fn trial(seed: u64) {
    let files = Files::new();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let texts = epoch_texts(seed);
    // The reference: the same epochs from a file, one process.
    fs::write(files.path("u.txt"), texts.concat()).unwrap();
    let out = bin()
        .args(["run", "wcc", "--updates", &s(&files.path("u.txt")), "--batch", &BATCH.to_string()])
        .args(["--changes", &s(&files.path("ref-c.txt")), "--output", &s(&files.path("ref-o.txt")), "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "seed {}: reference run failed: {}", seed, String::from_utf8_lossy(&out.stderr));

    let (a, b) = (free_port(), free_port());
    let b = if b == a { a + 1 } else { b };
    let hostfile = files.write("hosts", &format!("127.0.0.1:{}\n127.0.0.1:{}\n", a, b));
    let port = free_port();
    let args: Vec<String> = [
        "--listen",
        &port.to_string(),
        "--state-dir",
        &s(&files.path("state")),
        "--changes",
        &s(&files.path("c.txt")),
        "--output",
        &s(&files.path("o.txt")),
        "-n",
        "2",
        "--hostfile",
        &s(&hostfile),
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();

    let mut p0 = start(&args, 0, &files.path("p0.err"));
    let mut p1 = start(&args, 1, &files.path("p1.err"));
    let (mut producer, ready) = Producer::connect_retry(port);
    assert_eq!(ready, 1, "seed {}", seed);
    let acked = rng.gen_range(1..EPOCHS as u64 - 1);
    send_epochs(&mut producer, &texts, 1, acked);
    // `ok E` means durable, not computed: wait until the cluster has written epoch `acked` (the
    // change-log mark records it), so that the kill hits a running cluster.
    let deadline = std::time::Instant::now() + PATIENCE;
    while !matches!(ripples::live::read_mark(&files.path("state")), Ok(Some((e, _))) if e >= acked) {
        assert!(std::time::Instant::now() < deadline, "seed {}: epoch {} was never written", seed, acked);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    p1.kill().unwrap();
    let _ = p1.wait();
    let status = wait_exit(&mut p0, PATIENCE, "process 0 after its peer was killed");
    let stderr = read(&files.path("p0.err"));
    assert_eq!(status.code(), Some(3), "seed {}: exit status of process 0; stderr:\n{}", seed, stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "seed {}: panic text:\n{}", seed, stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "seed {}: one line expected:\n{}", seed, stderr);
    assert!(
        lines[0].starts_with(&format!("ripples: error: process 1 (127.0.0.1:{}) disconnected: ", b))
            && lines[0].ends_with(
                "the cluster stopped. Restart every process with the same flags to resume from the state directory"
            ),
        "seed {}: {}",
        seed,
        lines[0]
    );
    drop(producer);

    // Restart both with the same flags: the producer resends from `ready E`.
    let mut p0 = start(&args, 0, &files.path("p0-again.err"));
    let mut p1 = start(&args, 1, &files.path("p1-again.err"));
    let (mut producer, ready) = Producer::connect_retry(port);
    assert!((1..=acked + 1).contains(&ready), "seed {}: ready {} after {} acknowledged epochs", seed, ready, acked);
    assert_eq!(ready, acked + 1, "seed {}: every acknowledged epoch is durable", seed);
    send_epochs(&mut producer, &texts, ready, EPOCHS as u64);
    producer.send("end\n").unwrap();
    let _ = producer.line();
    for (child, what) in [(&mut p0, "process 0"), (&mut p1, "process 1")] {
        let status = wait_exit(child, PATIENCE, what);
        assert!(status.success(), "seed {}: {} after the restart: {}", seed, what, read(&files.path("p0-again.err")));
    }
    assert_eq!(read(&files.path("c.txt")), read(&files.path("ref-c.txt")), "seed {}: --changes differ", seed);
    assert_eq!(read(&files.path("o.txt")), read(&files.path("ref-o.txt")), "seed {}: --output differs", seed);
}

/// `--restart`: process 0 restarts itself after its peer was killed and waits for the cluster to
/// form again; once process 1 is back, the producer continues from `ready E` and the files equal
/// an uninterrupted run.
#[test]
fn restart_flag_rejoins_the_cluster_from_the_state_directory() {
    let seed = 7100;
    let files = Files::new();
    let texts = epoch_texts(seed);
    fs::write(files.path("u.txt"), texts.concat()).unwrap();
    let out = bin()
        .args(["run", "wcc", "--updates", &s(&files.path("u.txt")), "--batch", &BATCH.to_string()])
        .args(["--changes", &s(&files.path("ref-c.txt")), "--output", &s(&files.path("ref-o.txt")), "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let (a, b) = (free_port(), free_port());
    let hostfile = files.write("hosts", &format!("127.0.0.1:{}\n127.0.0.1:{}\n", a, if b == a { a + 1 } else { b }));
    let port = free_port();
    let state = files.path("state");
    let args: Vec<String> = vec![
        "--listen".into(),
        port.to_string(),
        "--state-dir".into(),
        s(&state),
        "--changes".into(),
        s(&files.path("c.txt")),
        "--output".into(),
        s(&files.path("o.txt")),
        "-n".into(),
        "2".into(),
        "--hostfile".into(),
        s(&hostfile),
        "--restart".into(),
        "3".into(),
        "--restart-delay-ms".into(),
        "50".into(),
    ];
    let mut p0 = start(&args, 0, &files.path("p0.err"));
    let mut p1 = start(&args, 1, &files.path("p1.err"));
    let (mut producer, _) = Producer::connect_retry(port);
    let half = EPOCHS as u64 / 2;
    send_epochs(&mut producer, &texts, 1, half);
    let deadline = std::time::Instant::now() + PATIENCE;
    while !matches!(ripples::live::read_mark(&state), Ok(Some((e, _))) if e >= half) {
        assert!(std::time::Instant::now() < deadline, "epoch {} was never written", half);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    p1.kill().unwrap();
    let _ = p1.wait();
    // Process 0 logs its restart (an event in its stderr), then waits for process 1.
    let deadline = std::time::Instant::now() + PATIENCE;
    while !read(&files.path("p0.err")).contains("ripples: restart 1 of 3") {
        assert!(std::time::Instant::now() < deadline, "no restart logged:\n{}", read(&files.path("p0.err")));
        assert!(p0.try_wait().unwrap().is_none(), "process 0 exited:\n{}", read(&files.path("p0.err")));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut p1 = start(&args, 1, &files.path("p1-again.err"));
    drop(producer);
    let (mut producer, ready) = Producer::connect_retry(port);
    assert_eq!(ready, half + 1, "every acknowledged epoch is durable");
    send_epochs(&mut producer, &texts, ready, EPOCHS as u64);
    producer.send("end\n").unwrap();
    let _ = producer.line();
    for (child, what) in [(&mut p0, "process 0"), (&mut p1, "process 1")] {
        let status = wait_exit(child, PATIENCE, what);
        assert!(status.success(), "{}: {}", what, read(&files.path("p0.err")));
    }
    let err = read(&files.path("p0.err"));
    assert!(!err.contains("panicked"), "{}", err);
    assert!(err.contains("ripples: error: process 1 ("), "{}", err);
    assert_eq!(read(&files.path("c.txt")), read(&files.path("ref-c.txt")), "--changes differ");
    assert_eq!(read(&files.path("o.txt")), read(&files.path("ref-o.txt")), "--output differs");
}

#[test]
fn a_killed_peer_stops_the_cluster_with_one_line_and_a_restart_recovers() {
    for seed in 0..TRIALS {
        trial(7000 + seed);
    }
}
