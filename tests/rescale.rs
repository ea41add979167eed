//! Rescaling: a state directory written by a run with one worker and process layout restarts
//! under another (1 → 2 workers, 2 → 1, 1 process → 2) and continues with files byte-identical
//! to an uninterrupted run.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};

use common::process::*;
use common::session::*;

const EPOCHS: usize = 10;
const BATCH: usize = 6;

/// A layout: workers per process and number of processes.
#[derive(Clone, Copy, Debug)]
struct Layout {
    workers: usize,
    processes: usize,
}

/// Starts every process of `layout` with the same flags.
fn start(args: &[String], layout: Layout, hostfile: &Path, stderr: &Path) -> Vec<Child> {
    (0..layout.processes)
        .map(|p| {
            let mut cmd = bin();
            cmd.args(["run", "wcc", "-q"]).args(args).args(["-w", &layout.workers.to_string()]);
            if layout.processes > 1 {
                cmd.args(["-n", &layout.processes.to_string(), "-p", &p.to_string(), "--hostfile", &s(hostfile)]);
            }
            cmd.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(fs::File::create(stderr.with_extension(p.to_string())).unwrap())
                .spawn()
                .expect("ripples starts")
        })
        .collect()
}

fn trial(seed: u64, before: Layout, after: Layout) {
    let what = format!("seed {} {:?} -> {:?}", seed, before, after);
    let files = Files::new();
    let texts = epoch_texts(seed, 25, EPOCHS, BATCH);
    let (ref_changes, ref_output) = reference(&files, &texts, BATCH);
    let (hostfile, _) = two_process_hostfile(&files);
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
    ];
    let half = EPOCHS as u64 / 2;
    let mut first = start(&args, before, &hostfile, &files.path("first.err"));
    let (mut p, ready) = Producer::connect_retry(port);
    assert_eq!(ready, 1, "{}", what);
    send_epochs(&mut p, &texts, 1, half);
    // Written (the change-log mark records it), then stopped hard.
    wait_written(&state, half);
    for child in &mut first {
        let _ = child.kill();
        let _ = child.wait();
    }
    drop(p);

    let mut second = start(&args, after, &hostfile, &files.path("second.err"));
    let (mut p, ready) = Producer::connect_retry(port);
    assert_eq!(ready, half + 1, "{}", what);
    send_epochs(&mut p, &texts, ready, EPOCHS as u64);
    p.send("end\n").unwrap();
    let _ = p.line();
    for (i, child) in second.iter_mut().enumerate() {
        let status = wait_exit(child, PATIENCE, &what);
        let err = fs::read_to_string(files.path("second.err").with_extension(i.to_string())).unwrap_or_default();
        assert!(status.success(), "{}: process {} failed: {}", what, i, err);
    }
    assert_eq!(read(&files.path("c.txt")), ref_changes, "{}: --changes differ", what);
    assert_eq!(read(&files.path("o.txt")), ref_output, "{}: --output differs", what);
}

#[test]
fn a_state_directory_restarts_under_another_layout() {
    let one = Layout { workers: 1, processes: 1 };
    let two = Layout { workers: 2, processes: 1 };
    let cluster = Layout { workers: 1, processes: 2 };
    trial(31, one, two);
    trial(32, two, one);
    trial(33, one, cluster);
    trial(34, cluster, one);
}
