//! Cluster faults through the `ripples` binary: in a 2-process cluster fed by a TCP producer
//! with a state directory, process 1 is killed with SIGKILL after a random number of
//! acknowledged epochs (fixed seeds). Process 0 must stop with one clear line and exit status 3
//! (no panic text), and restarting both processes with the same flags must recover: the producer
//! resends from `ready E`, and the final `--changes` and `--output` are byte-identical to an
//! uninterrupted run of the same epochs from a file. With `--restart`, process 0 restarts by
//! itself and waits for process 1.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};

use common::process::*;
use common::session::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const EPOCHS: usize = 12;
const BATCH: usize = 8;
const TRIALS: u64 = 10;

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

/// The flags every process of a trial gets.
fn cluster_args(files: &Files, port: u16, hostfile: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> =
        vec!["--listen".into(), port.to_string(), "--state-dir".into(), s(&files.path("state"))];
    args.extend(["--changes".into(), s(&files.path("c.txt")), "--output".into(), s(&files.path("o.txt"))]);
    args.extend(["-n".into(), "2".into(), "--hostfile".into(), s(hostfile)]);
    args.extend(extra.iter().map(|x| x.to_string()));
    args
}

fn trial(seed: u64) {
    let files = Files::new();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let texts = epoch_texts(seed, 30, EPOCHS, BATCH);
    let (ref_changes, ref_output) = reference(&files, &texts, BATCH);
    let (hostfile, b) = two_process_hostfile(&files);
    let port = free_port();
    let args = cluster_args(&files, port, &hostfile, &[]);

    let mut p0 = start(&args, 0, &files.path("p0.err"));
    let mut p1 = start(&args, 1, &files.path("p1.err"));
    let (mut producer, ready) = Producer::connect_retry(port);
    assert_eq!(ready, 1, "seed {}", seed);
    let acked = rng.gen_range(1..EPOCHS as u64 - 1);
    send_epochs(&mut producer, &texts, 1, acked);
    // The kill must hit a running cluster: wait until epoch `acked` is written.
    wait_written(&files.path("state"), acked);
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
    assert_eq!(ready, acked + 1, "seed {}: every acknowledged epoch is durable", seed);
    send_epochs(&mut producer, &texts, ready, EPOCHS as u64);
    producer.send("end\n").unwrap();
    let _ = producer.line();
    for (child, what) in [(&mut p0, "process 0"), (&mut p1, "process 1")] {
        let status = wait_exit(child, PATIENCE, what);
        assert!(status.success(), "seed {}: {} after the restart: {}", seed, what, read(&files.path("p0-again.err")));
    }
    assert_eq!(read(&files.path("c.txt")), ref_changes, "seed {}: --changes differ", seed);
    assert_eq!(read(&files.path("o.txt")), ref_output, "seed {}: --output differs", seed);
}

#[test]
fn a_killed_peer_stops_the_cluster_with_one_line_and_a_restart_recovers() {
    for seed in 0..TRIALS {
        trial(7000 + seed);
    }
}

/// `--restart`: process 0 restarts itself after its peer was killed and waits for the cluster to
/// form again; once process 1 is back, the producer continues from `ready E` and the files equal
/// an uninterrupted run.
#[test]
fn restart_flag_rejoins_the_cluster_from_the_state_directory() {
    let files = Files::new();
    let texts = epoch_texts(7100, 30, EPOCHS, BATCH);
    let (ref_changes, ref_output) = reference(&files, &texts, BATCH);
    let (hostfile, _) = two_process_hostfile(&files);
    let port = free_port();
    let args = cluster_args(&files, port, &hostfile, &["--restart", "3", "--restart-delay-ms", "50"]);
    let mut p0 = start(&args, 0, &files.path("p0.err"));
    let mut p1 = start(&args, 1, &files.path("p1.err"));
    let (mut producer, _) = Producer::connect_retry(port);
    let half = EPOCHS as u64 / 2;
    send_epochs(&mut producer, &texts, 1, half);
    wait_written(&files.path("state"), half);
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
    assert_eq!(read(&files.path("c.txt")), ref_changes, "--changes differ");
    assert_eq!(read(&files.path("o.txt")), ref_output, "--output differs");
}

/// CPU time (user + system, in clock ticks) a process has used so far, from `/proc`.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = read(Path::new(&format!("/proc/{}/stat", pid)));
    // The fields after the command name (which may hold spaces) start after its `)`.
    let fields: Vec<&str> = stat.rsplit_once(')').expect("a stat line").1.split_whitespace().collect();
    fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
}

/// The share of a core each process used over `span`.
fn cpu_shares(pids: &[u32], span: std::time::Duration) -> Vec<f64> {
    let before: Vec<u64> = pids.iter().map(|&p| cpu_ticks(p)).collect();
    std::thread::sleep(span);
    // Linux reports CPU time in USER_HZ ticks, 100 per second.
    pids.iter().zip(before).map(|(&p, b)| (cpu_ticks(p) - b) as f64 / 100.0 / span.as_secs_f64()).collect()
}

/// An idle live run parks its workers: one process, and each process of a 2-process cluster,
/// uses little CPU while no producer sends (a worker that polled took a whole core). The bound
/// is generous (debug build, tests running beside it); `ripples run` in release parks at well
/// under 2% of a core.
#[test]
fn idle_live_processes_park() {
    const SPAN: std::time::Duration = std::time::Duration::from_secs(2);
    const BOUND: f64 = 0.25;
    let files = Files::new();
    let port = free_port();
    let one = ["--listen".to_string(), port.to_string()];
    let mut p = start(&one, 0, &files.path("one.err"));
    let (mut producer, ready) = Producer::connect_retry(port);
    assert_eq!(ready, 1);
    let share = cpu_shares(&[p.id()], SPAN);
    assert!(share[0] <= BOUND, "an idle process used {:.0}% of a core", share[0] * 100.0);
    producer.send("end\n").unwrap();
    let _ = producer.line();
    assert!(wait_exit(&mut p, PATIENCE, "the process").success(), "{}", read(&files.path("one.err")));

    let (hostfile, _) = two_process_hostfile(&files);
    let port = free_port();
    let mut args = vec!["--listen".to_string(), port.to_string()];
    args.extend(["-n".into(), "2".into(), "--hostfile".into(), s(&hostfile)]);
    let mut p0 = start(&args, 0, &files.path("p0.err"));
    let mut p1 = start(&args, 1, &files.path("p1.err"));
    // `ready` comes once the cluster runs: every process is past its start.
    let (mut producer, ready) = Producer::connect_retry(port);
    assert_eq!(ready, 1);
    let shares = cpu_shares(&[p0.id(), p1.id()], SPAN);
    for (i, share) in shares.iter().enumerate() {
        assert!(*share <= BOUND, "idle cluster process {} used {:.0}% of a core", i, share * 100.0);
    }
    producer.send("end\n").unwrap();
    let _ = producer.line();
    for (child, what) in [(&mut p0, "process 0"), (&mut p1, "process 1")] {
        assert!(wait_exit(child, PATIENCE, what).success(), "{}: {}", what, read(&files.path("p0.err")));
    }
}

/// Cluster start: with `-q` a cluster forms without a connection message on stderr (none of
/// timely's prints either); a peer that never starts stops the process after
/// `--connect-timeout` with one line naming the peer and exit status 3; a bad timeout is a
/// usage error.
#[test]
fn a_peer_that_never_comes_is_a_clear_error_after_the_connect_timeout() {
    let files = Files::new();
    let graph = files.write("g.e", "1 2\n2 3\n5 6\n");
    let (hostfile, _) = two_process_hostfile(&files);
    let hosts = read(&hostfile);
    let first = hosts.lines().next().expect("a line").to_string();
    let args = ["--graph".to_string(), s(&graph), "-n".into(), "2".into(), "--hostfile".into(), s(&hostfile)];
    let mut p0 = start(&args, 0, &files.path("p0.err"));
    let mut p1 = start(&args, 1, &files.path("p1.err"));
    for (child, what) in [(&mut p0, "p0"), (&mut p1, "p1")] {
        assert!(wait_exit(child, PATIENCE, what).success(), "{}", read(&files.path(&format!("{}.err", what))));
        // The run's summary (process 0) is all: no connection messages.
        let stderr = read(&files.path(&format!("{}.err", what)));
        for noise in ["awaiting", "connect", "waits for", "retrying"] {
            assert!(!stderr.contains(noise), "{} printed {:?} with -q:\n{}", what, noise, stderr);
        }
    }

    let mut args = args.to_vec();
    args.extend(["--connect-timeout".into(), "0.5".into()]);
    let began = std::time::Instant::now();
    let mut alone = start(&args, 1, &files.path("alone.err"));
    let status = wait_exit(&mut alone, PATIENCE, "process 1 alone");
    let stderr = read(&files.path("alone.err"));
    assert_eq!(status.code(), Some(3), "{}", stderr);
    assert!(began.elapsed() < std::time::Duration::from_secs(30), "it waited {:?}", began.elapsed());
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected:\n{}", stderr);
    assert!(
        lines[0].starts_with(
            "ripples: error: process 1 of 2 cannot form the cluster: no connection within 0.5 s from process 0 ("
        ) && lines[0].contains(&first),
        "{}",
        lines[0]
    );

    let bad =
        bin().args(["run", "wcc", "--graph", &s(&graph), "--connect-timeout", "soon"]).output().expect("ripples runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("--connect-timeout"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// The processes of a cluster must build the same dataflow: a process started with other
/// dataflow parameters stops every process with one clear line and exit status 2, before any
/// epoch.
#[test]
fn processes_with_different_dataflow_parameters_refuse_to_run() {
    let files = Files::new();
    let graph = files.write("g.e", "1 2\n2 3\n5 6\n");
    let (hostfile, _) = two_process_hostfile(&files);
    let out = files.path("o.txt");
    let args = ["--graph".to_string(), s(&graph), "-n".into(), "2".into(), "--hostfile".into(), s(&hostfile)];
    let mut first = args.to_vec();
    first.extend(["--output".into(), s(&out)]);
    let mut second = args.to_vec();
    second.extend(["--wcc-layout".into(), "shares".into()]);
    let mut p0 = start(&first, 0, &files.path("p0.err"));
    let mut p1 = start(&second, 1, &files.path("p1.err"));
    for (child, what) in [(&mut p0, "p0"), (&mut p1, "p1")] {
        let status = wait_exit(child, PATIENCE, what);
        let stderr = read(&files.path(&format!("{}.err", what)));
        assert_eq!(status.code(), Some(2), "{}: {}", what, stderr);
        assert_eq!(
            stderr.trim_end(),
            "ripples: error: the processes build different dataflows: process 0 runs wcc ForestParams { budget: 1.0, layout: Single, renew_min: 65536 } \
             but process 1 runs wcc ForestParams { budget: 1.0, layout: Shares, renew_min: 65536 }; give every process the same flags",
            "{}",
            what
        );
    }
    assert!(!out.exists(), "nothing is written");
}

/// `--stats` given to process 0 alone (the only process that writes it) still builds the same
/// dataflow on every process: the run completes, and the stats file has one line per epoch and
/// the summary, with the graph's counts. (A process that built the census operators while its
/// peer did not used to wait for that peer for ever.)
#[test]
fn stats_on_process_zero_alone_completes() {
    let files = Files::new();
    let graph = files.write("g.e", "1 2\n2 3\n5 6\n7 8\n");
    let updates = files.write("u.txt", "8 9\n- 1 2\n3 5\n- 7 8\n");
    let (hostfile, _) = two_process_hostfile(&files);
    let stats = files.path("stats.jsonl");
    let args = [
        "--graph".to_string(),
        s(&graph),
        "--updates".into(),
        s(&updates),
        "--batch".into(),
        "2".into(),
        "-n".into(),
        "2".into(),
        "--hostfile".into(),
        s(&hostfile),
    ];
    let mut first = args.to_vec();
    first.extend(["--stats".into(), s(&stats)]);
    let mut p0 = start(&first, 0, &files.path("p0.err"));
    let mut p1 = start(&args, 1, &files.path("p1.err"));
    for (child, what) in [(&mut p0, "p0"), (&mut p1, "p1")] {
        let status = wait_exit(child, PATIENCE, what);
        assert!(status.success(), "{}: {}", what, read(&files.path(&format!("{}.err", what))));
    }
    let lines: Vec<serde_json::Value> =
        read(&stats).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.len(), 3 + 1, "epochs 0, 1, 2 and the summary: {lines:?}");
    // Epoch 2 ends with 1-2 and 7-8 deleted: edges 2-3, 5-6, 8-9, 3-5 on vertices 2, 3, 5, 6, 8, 9.
    assert_eq!(lines[2]["edges"], 4, "{lines:?}");
    assert_eq!(lines[2]["vertices"], 6, "{lines:?}");
}
