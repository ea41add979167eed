//! The live front end in process, over its real transports: TCP producers (the protocol, several
//! producers, rejected lines, `--batch`, `--epoch-ms`, backpressure, `end`), followed files, and
//! restarts from a state directory. (Moved from the unit tests of `src/live/reader.rs`.)

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::thread;
use std::time::Duration;

use common::live::*;
use ripples::live::{start, EpochBatch, LiveConfig, LiveInput, LiveSummary};
use ripples::sources::parse::parse_update_line;
use ripples::types::Update;

#[test]
fn tcp_two_producers() {
    let handle = start(listen(2, 1000)).unwrap();
    let mut a = Client::connect(&handle);
    assert_eq!(a.line(), "ready 1");
    let mut b = Client::connect(&handle);
    assert_eq!(b.line(), "ready 1");
    assert_eq!(next_epoch(&handle), EpochBatch { epoch: 0, updates: vec![], ..Default::default() });

    a.send("+ 1 2\n2 3 0.5\ncommit\n");
    assert_eq!(a.line(), "ok 1");
    b.send("- 1 2\ncommit\n");
    assert_eq!(b.line(), "ok 2");
    // Both producers' updates go into the epoch the first commit closes.
    a.send("+ 4 5\n");
    thread::sleep(Duration::from_millis(200));
    b.send("+ 6 7\ncommit\n");
    assert_eq!(b.line(), "ok 3");
    a.send("commit\n");
    assert_eq!(a.line(), "ok 4");
    // A producer that leaves without committing loses its pending updates.
    let mut c = Client::connect(&handle);
    assert_eq!(c.line(), "ready 5");
    c.send("+ 8 9\n");
    drop(c);
    thread::sleep(Duration::from_millis(200));
    b.send("commit\n");
    assert_eq!(b.line(), "ok 5");
    // Another producer's pending insertion cannot be deleted (it might still be discarded).
    a.send("+ 7 7\n");
    thread::sleep(Duration::from_millis(200));
    b.send("- 7 7\ncommit\n");
    assert_eq!(b.line(), "error 6: cannot delete edge 7 7: no copy of it is present");
    assert_eq!(b.line(), "ok 6");

    let weighted = Update { src: 2, dst: 3, weight: Some(0.5), diff: 1 };
    let expected =
        [vec![ins(1, 2), weighted], vec![del(1, 2)], vec![ins(4, 5), ins(6, 7)], vec![], vec![], vec![ins(7, 7)]];
    for (i, updates) in expected.into_iter().enumerate() {
        let epoch = i as u64 + 1;
        assert_eq!(next_epoch(&handle), EpochBatch { epoch, updates, ..Default::default() });
    }
    a.send("end\n");
    assert_eq!(a.line(), "bye");
    assert_eq!(b.line(), "", "other connections are closed");
    assert!(handle.receivers[0].recv_timeout(WAIT).is_err(), "senders dropped");
    let summary = handle.thread.join().unwrap().unwrap();
    assert_eq!(summary, LiveSummary { epochs: 6, updates: 6, late: 0, rejected_lines: 1, late_dropped: 0 });
}

#[test]
fn rejected_lines_discard_the_producers_pending_updates() {
    let handle = start(listen(1, 1000)).unwrap();
    let mut p = Client::connect(&handle);
    assert_eq!(p.line(), "ready 1");
    next_epoch(&handle);

    p.send("+ 1 2\n+ x 3\n+ 4 5\ncommit\n");
    let reason = parse_update_line("+ x 3").unwrap_err().to_string();
    assert_eq!(p.line(), format!("error 2: {reason}"));
    assert_eq!(p.line(), "ok 1");
    assert_eq!(next_epoch(&handle).updates, vec![ins(4, 5)]);

    // Lines 5..: deleting a copy that is not there (the second one).
    p.send("- 4 5\n# comment\n- 4 5\ncommit\n");
    assert_eq!(p.line(), "error 7: cannot delete edge 4 5: no copy of it is present");
    assert_eq!(p.line(), "ok 2");
    assert_eq!(next_epoch(&handle).updates, vec![]);

    // The edge the malformed line's epoch would have inserted is absent too.
    p.send("- 1 2 1.5\n");
    assert_eq!(p.line(), "error 9: cannot delete edge 1 2 1.5: no copy of it is present");
    // A copy inserted earlier in the same epoch may be deleted.
    p.send("+ 9 9\n- 9 9\n- 4 5\ncommit\n");
    assert_eq!(p.line(), "ok 3");
    assert_eq!(next_epoch(&handle).updates, vec![ins(9, 9), del(9, 9), del(4, 5)]);

    p.send("+ 1 1\nend\n+ 2 2\n");
    assert_eq!(next_epoch(&handle).updates, vec![ins(1, 1)]);
    assert_eq!(p.line(), "bye");
    let summary = handle.thread.join().unwrap().unwrap();
    assert_eq!(summary.rejected_lines, 3);
    assert_eq!(summary.epochs, 4);
    assert!(summary.late <= 1);
}

#[test]
fn batch_closes_epochs_by_count() {
    let mut config = listen(1, 1000);
    config.batch = Some(2);
    let mut handle = start(config).unwrap();
    let consumer = consume(&mut handle);
    let mut p = Client::connect(&handle);
    assert_eq!(p.line(), "ready 1");
    p.send("+ 1 2\n+ 2 3\n+ 3 4\ncommit\n");
    assert_eq!(p.line(), "ok 2");
    p.send("end\n");
    assert_eq!(p.line(), "bye");
    let batches = consumer.join().unwrap();
    let updates: Vec<_> = batches.into_iter().map(|b| b.updates).collect();
    assert_eq!(updates, vec![vec![], vec![ins(1, 2), ins(2, 3)], vec![ins(3, 4)]]);
    handle.thread.join().unwrap().unwrap();
}

#[test]
fn follow_restart_skips_durable_epochs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("updates.txt");
    std::fs::write(&path, "+ 1 2\ncommit\n+ 2 3\ncommit\n").unwrap();
    let mut config = LiveConfig::new(LiveInput::Follow(path.clone()));
    config.state_dir = Some(dir.path().join("state"));
    let mut handle = start(config.clone()).unwrap();
    let consumer = consume(&mut handle);
    thread::sleep(Duration::from_millis(100));
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"+ 3 4\nend\n").unwrap();
    let first = consumer.join().unwrap();
    assert_eq!(first.len(), 4);
    assert_eq!(handle.thread.join().unwrap().unwrap().epochs, 3);

    // The whole file is durable: a restart replays the log, reads nothing twice, and ends.
    let mut handle = start(config).unwrap();
    let consumer = consume(&mut handle);
    let second = consumer.join().unwrap();
    assert_eq!(second, first);
    let summary = handle.thread.join().unwrap().unwrap();
    assert_eq!(summary, LiveSummary::default());
}

#[test]
fn end_closes_the_pending_epoch_and_waits_for_the_driver() {
    let mut handle = start(listen(3, 1000)).unwrap();
    let consumer = consume(&mut handle);
    let mut p = Client::connect(&handle);
    assert_eq!(p.line(), "ready 1");
    p.send("+ 1 2\n+ 2 3\nend\n");
    assert_eq!(p.line(), "bye");
    assert!(handle.progress.completed() >= 2, "bye only after the driver finished");
    let batches = consumer.join().unwrap();
    assert_eq!(
        batches,
        vec![
            EpochBatch { epoch: 0, updates: vec![], ..Default::default() },
            EpochBatch { epoch: 1, updates: vec![ins(1, 2), ins(2, 3)], ..Default::default() },
        ]
    );
    handle.thread.join().unwrap().unwrap();
}

#[test]
fn epoch_ms_closes_empty_epochs_when_idle() {
    let mut config = listen(1, 1000);
    config.epoch_ms = Some(20);
    let mut handle = start(config).unwrap();
    let consumer = consume(&mut handle);
    thread::sleep(Duration::from_millis(400));
    let mut p = Client::connect(&handle);
    let ready: u64 = p.line().strip_prefix("ready ").unwrap().parse().unwrap();
    assert!(ready >= 4, "ready {ready}");
    p.send("end\n");
    assert_eq!(p.line(), "bye");
    let batches = consumer.join().unwrap();
    assert!(batches.len() as u64 >= ready);
    assert!(batches.iter().all(|b| b.updates.is_empty()));
    assert_eq!(batches[0].epoch, 0);
    handle.thread.join().unwrap().unwrap();
}

#[test]
fn follow_reads_appended_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("updates.txt");
    std::fs::write(&path, "+ 1 2\ncommit\n+ 3").unwrap();
    let handle =
        start(LiveConfig { skip_bad_lines: true, ..LiveConfig::new(LiveInput::Follow(path.clone())) }).unwrap();
    let append = |text: &str| {
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    };
    assert_eq!(next_epoch(&handle).epoch, 0);
    assert_eq!(next_epoch(&handle), EpochBatch { epoch: 1, updates: vec![ins(1, 2)], ..Default::default() });
    thread::sleep(Duration::from_millis(100));
    append(" 4");
    let waiting = handle.receivers[0].recv_timeout(Duration::from_millis(200));
    assert!(waiting.is_err(), "no commit yet: {waiting:?}");
    append("\nbad\ncommit\n");
    assert_eq!(next_epoch(&handle), EpochBatch { epoch: 2, updates: vec![ins(3, 4)], ..Default::default() });
    append("- 3 4\nend\n");
    assert_eq!(next_epoch(&handle), EpochBatch { epoch: 3, updates: vec![del(3, 4)], ..Default::default() });
    let summary = handle.thread.join().unwrap().unwrap();
    assert_eq!(summary, LiveSummary { epochs: 3, updates: 3, late: 0, rejected_lines: 1, late_dropped: 0 });
}

#[test]
fn backpressure_stops_reading_until_epochs_complete() {
    const K: u64 = 2;
    const COMMITS: u64 = 300;
    let handle = start(listen(1, K)).unwrap();
    let mut p = Client::connect(&handle);
    assert_eq!(p.line(), "ready 1");
    let mut writer = p.stream.try_clone().unwrap();
    let producer = thread::spawn(move || {
        let mut text = String::new();
        for i in 0..COMMITS {
            text.push_str(&format!("+ {i} {}\ncommit\n", i + 1));
        }
        text.push_str("end\n");
        writer.write_all(text.as_bytes()).unwrap();
    });
    let mut received = Vec::new();
    for _ in 0..3 {
        thread::sleep(Duration::from_millis(150));
        while let Ok(batch) = handle.receivers[0].try_recv() {
            received.push(batch);
        }
        assert!(received.len() as u64 <= K + 2, "{} epochs sent with none completed", received.len());
    }
    assert_eq!(received.len() as u64, K + 1);
    // Resume: complete epochs as they arrive.
    for batch in &received {
        handle.progress.complete(batch.epoch);
    }
    while let Ok(batch) = handle.receivers[0].recv_timeout(WAIT) {
        handle.progress.complete(batch.epoch);
        received.push(batch);
    }
    producer.join().unwrap();
    assert_eq!(received.len() as u64, COMMITS + 1);
    for i in 1..=COMMITS {
        assert_eq!(p.line(), format!("ok {i}"));
    }
    assert_eq!(p.line(), "bye");
    let summary = handle.thread.join().unwrap().unwrap();
    assert_eq!(summary.epochs, COMMITS);
}

#[test]
fn restart_resumes_after_the_last_durable_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let state_dir = dir.path().join("state");
    let graph = dir.path().join("graph.txt");
    std::fs::write(&graph, "1 2\n2 3\n").unwrap();
    let config = |graph: Option<PathBuf>| {
        let mut config = listen(2, 1000);
        config.graph = graph;
        config.state_dir = Some(state_dir.clone());
        config.snapshot_every = Some(2);
        config
    };

    let mut handle = start(config(Some(graph.clone()))).unwrap();
    assert!(handle.warnings.is_empty(), "{:?}", handle.warnings);
    let consumer = consume(&mut handle);
    let mut p = Client::connect(&handle);
    assert_eq!(p.line(), "ready 1");
    for (text, reply) in [
        ("+ 3 4\ncommit\n", "ok 1"),
        ("- 1 2\n+ 5 6 0.5\ncommit\n", "ok 2"),
        ("+ 1 2\n+ 1 2\ncommit\n", "ok 3"),
        ("- 2 3\ncommit\n", "ok 4"),
        ("end\n", "bye"),
    ] {
        p.send(text);
        assert_eq!(p.line(), reply);
    }
    let first = consumer.join().unwrap();
    assert_eq!(first.len(), 5);
    assert_eq!(first[0].updates, vec![ins(1, 2), ins(2, 3)]);
    let state = multiset(&first);
    handle.thread.join().unwrap().unwrap();

    // The graph file is ignored on a restart.
    let mut handle = start(config(Some(graph))).unwrap();
    let consumer = consume(&mut handle);
    let mut p = Client::connect(&handle);
    assert_eq!(p.line(), "ready 5");
    p.send("- 1 2\ncommit\nend\n");
    assert_eq!(p.line(), "ok 5");
    assert_eq!(p.line(), "bye");
    let second = consumer.join().unwrap();
    let (last, replayed) = second.split_last().unwrap();
    assert_eq!(last, &EpochBatch { epoch: 5, updates: vec![del(1, 2)], ..Default::default() });
    assert_eq!(replayed.last().unwrap().epoch, 4);
    assert_eq!(multiset(replayed), state, "the replay reproduces the state");
    assert!(replayed[0].epoch == 0 || replayed[0].epoch % 2 == 0);
    handle.thread.join().unwrap().unwrap();

    // A third start sees epoch 5 as durable.
    let mut handle = start(config(None)).unwrap();
    let consumer = consume(&mut handle);
    let mut p = Client::connect(&handle);
    assert_eq!(p.line(), "ready 6");
    p.send("end\n");
    assert_eq!(p.line(), "bye");
    let third = consumer.join().unwrap();
    let mut expected = state.clone();
    apply(&mut expected, &[del(1, 2)]);
    assert_eq!(multiset(&third), expected);
    handle.thread.join().unwrap().unwrap();
}
