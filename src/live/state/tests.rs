//! Tests of the state directory: round trips, the snapshot rules, and recovery from every kind
//! of damage a crash (or a disk) can leave.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::codec::{decode_payload, encode_record, SnapshotEntry, MIN_PAYLOAD, RECORD_HEADER};
use super::snapshot::write_snapshot_file;
use super::*;
use crate::live::EpochBatch;
use crate::types::{Edge, Update};

fn weighted(src: u64, dst: u64, w: f64, diff: i8) -> Update {
    Update { src, dst, weight: Some(w), diff }
}

/// A deterministic stream: epoch `e` inserts a few edges and deletes one present edge.
fn batches(n: u64) -> Vec<EpochBatch> {
    let mut present: BTreeMap<Edge, (Update, u64)> = BTreeMap::new();
    let mut out = Vec::new();
    for e in 0..n {
        let mut updates = vec![Update::insert(e, e + 1), weighted(e % 3, 7, 0.5 + e as f64, 1), Update::insert(1, 2)];
        if e % 2 == 1 {
            updates.push(weighted(e, 0, -0.0, 1));
        }
        if let Some((_, (u, _))) = present.iter().nth((e as usize * 7) % present.len().max(1)) {
            updates.push(Update { diff: -1, ..*u });
        }
        apply(&mut present, &updates);
        out.push(EpochBatch { epoch: e, updates, ..Default::default() });
    }
    out
}

fn apply(state: &mut BTreeMap<Edge, (Update, u64)>, updates: &[Update]) {
    for u in updates {
        let entry = state.entry(u.edge()).or_insert((Update { diff: 1, ..*u }, 0));
        if u.diff > 0 {
            entry.1 += 1;
        } else {
            entry.1 -= 1;
            if entry.1 == 0 {
                state.remove(&u.edge());
            }
        }
    }
}

/// The multiset after `batches`, as snapshot entries.
fn model(batches: &[EpochBatch]) -> Vec<(Update, u64)> {
    let mut state = BTreeMap::new();
    for b in batches {
        apply(&mut state, &b.updates);
    }
    state.into_values().collect()
}

/// The multiset a recovery describes (snapshot + log).
fn recovered_state(r: &Recovered) -> Vec<(Update, u64)> {
    let mut state: BTreeMap<Edge, (Update, u64)> = r.snapshot_edges.iter().map(|&(u, c)| (u.edge(), (u, c))).collect();
    for b in &r.log {
        apply(&mut state, &b.updates);
    }
    state.into_values().collect()
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != LOCK_FILE)
        .collect();
    names.sort();
    names
}

fn record_len(b: &EpochBatch) -> u64 {
    encode_record(b).len() as u64
}

#[test]
fn event_times_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("state");
    let mut all = batches(3);
    for b in &mut all[1..] {
        b.updates.retain(|u| u.diff > 0);
        b.times = (0..b.updates.len() as u64).map(|i| Some(u64::MAX - i * 7)).collect();
    }
    // A record may mix static (untimed) and timed updates.
    all[2].times[0] = None;
    {
        let (mut sd, _) = StateDir::open(&dir).unwrap();
        for b in &all {
            sd.append(b).unwrap();
        }
    }
    let (mut sd, rec) = StateDir::open(&dir).unwrap();
    assert_eq!(rec.log, all);
    assert!(rec.log[0].times.is_empty() && rec.log[1].times.iter().all(Option::is_some));
    // Every timed update costs 8 more bytes.
    let untimed = EpochBatch { times: vec![], ..all[1].clone() };
    assert_eq!(record_len(&all[1]), record_len(&untimed) + 8 * all[1].updates.len() as u64);

    // Snapshots: copies of one edge at different times stay apart; static copies have none.
    let entries = vec![
        (Update::insert(5, 6), Some(9), 1),
        (Update::insert(1, 2), Some(4), 2),
        (Update::insert(1, 2), None, 1),
        (Update::insert(1, 2), Some(4), 1),
        (weighted(1, 2, 0.5, 1), Some(3), 1),
    ];
    sd.snapshot_timed(2, &entries).unwrap();
    drop(sd);
    let (_, rec) = StateDir::open(&dir).unwrap();
    assert_eq!(
        rec.snapshot_edges.iter().zip(&rec.snapshot_times).map(|(&(u, c), &t)| (u, t, c)).collect::<Vec<_>>(),
        vec![
            (weighted(1, 2, 0.5, 1), Some(3), 1),
            (Update::insert(1, 2), None, 1),
            (Update::insert(1, 2), Some(4), 3),
            (Update::insert(5, 6), Some(9), 1),
        ]
    );
    let snapshot = rec.snapshot_batch().unwrap();
    assert_eq!(snapshot.times, vec![Some(3), None, Some(4), Some(4), Some(4), Some(9)]);
    assert_eq!(snapshot.updates.len(), 6);
}

#[test]
fn append_reopen_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("state");
    let all = batches(6);
    {
        let (mut sd, rec) = StateDir::open(&dir).unwrap();
        assert_eq!(rec, Recovered::default());
        assert_eq!(sd.dir(), dir.as_path());
        for b in &all[..5] {
            sd.append(b).unwrap();
        }
        assert_eq!(sd.last_epoch(), Some(4));
    }
    let (mut sd, rec) = StateDir::open(&dir).unwrap();
    assert_eq!(rec.snapshot_epoch, None);
    assert!(rec.snapshot_edges.is_empty());
    assert_eq!(rec.log, all[..5].to_vec());
    assert_eq!(rec.last_epoch, Some(4));
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    // Weight flags and bits survive exactly.
    assert_eq!(rec.log[1].updates[3].weight.map(f64::to_bits), Some((-0.0f64).to_bits()));
    assert_eq!(rec.log[0].updates[0].weight, None);
    let expected_len: u64 = all[..5].iter().map(record_len).sum();
    assert_eq!(fs::metadata(dir.join("log-0.bin")).unwrap().len(), expected_len);
    sd.append(&all[5]).unwrap();
    drop(sd);
    let (_sd, rec) = StateDir::open(&dir).unwrap();
    assert_eq!(rec.log, all);
    assert_eq!(rec.last_epoch, Some(5));
    assert_eq!(files(&dir), vec!["log-0.bin"]);
}

#[test]
fn epochs_must_be_consecutive() {
    let tmp = tempfile::tempdir().unwrap();
    let all = batches(3);
    let (mut sd, _) = StateDir::open(tmp.path()).unwrap();
    let err = sd.append(&all[1]).unwrap_err();
    assert!(matches!(err, DurabilityError::NotConsecutive { expected: 0, got: 1, .. }));
    assert!(err.to_string().contains(&tmp.path().display().to_string()), "{err}");
    sd.append(&all[0]).unwrap();
    let err = sd.append(&all[0]).unwrap_err();
    assert!(matches!(err, DurabilityError::NotConsecutive { expected: 1, got: 0, .. }));
    assert!(err.to_string().contains("log-0.bin"), "{err}");
    assert!(sd.append(&all[2]).is_err());
    // Refused appends change nothing; the right epoch still goes through.
    sd.append(&all[1]).unwrap();
    drop(sd);
    let (_, rec) = StateDir::open(tmp.path()).unwrap();
    assert_eq!(rec.log, all[..2].to_vec());
}

#[test]
fn snapshot_truncates_log_and_reopen_combines_snapshot_and_log() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all = batches(10);
    let (mut sd, _) = StateDir::open(dir).unwrap();
    for b in &all[..4] {
        sd.append(b).unwrap();
    }
    sd.snapshot(3, &model(&all[..4])).unwrap();
    sd.append(&all[4]).unwrap();
    sd.append(&all[5]).unwrap();
    // With one snapshot the whole log stays (it is the fallback).
    assert_eq!(files(dir), vec!["log-0.bin", "log-4.bin", "snapshot-3.bin"]);
    drop(sd);

    let (mut sd, rec) = StateDir::open(dir).unwrap();
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.snapshot_epoch, Some(3));
    assert_eq!(rec.snapshot_edges, model(&all[..4]));
    assert_eq!(rec.log, all[4..6].to_vec());
    assert_eq!(rec.last_epoch, Some(5));
    assert_eq!(recovered_state(&rec), model(&all[..6]));

    sd.snapshot(5, &model(&all[..6])).unwrap();
    // log-0 (epochs 0..=3) is older than the oldest kept snapshot (3): gone.
    assert_eq!(files(dir), vec!["log-4.bin", "snapshot-3.bin", "snapshot-5.bin"]);
    sd.append(&all[6]).unwrap();
    sd.append(&all[7]).unwrap();
    sd.snapshot(7, &model(&all[..8])).unwrap();
    assert_eq!(files(dir), vec!["log-6.bin", "snapshot-5.bin", "snapshot-7.bin"]);
    assert_eq!(sd.snapshot_epochs(), vec![5, 7]);
    // A snapshot of an earlier epoch than the last logged one keeps the current segment.
    sd.append(&all[8]).unwrap();
    sd.append(&all[9]).unwrap();
    sd.snapshot(8, &model(&all[..9])).unwrap();
    assert_eq!(files(dir), vec!["log-8.bin", "snapshot-7.bin", "snapshot-8.bin"]);
    drop(sd);

    let (_, rec) = StateDir::open(dir).unwrap();
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.snapshot_epoch, Some(8));
    assert_eq!(rec.log, all[9..].to_vec());
    assert_eq!(rec.last_epoch, Some(9));
    assert_eq!(recovered_state(&rec), model(&all));
}

#[test]
fn snapshot_rules_and_consolidation() {
    let tmp = tempfile::tempdir().unwrap();
    let all = batches(3);
    let (mut sd, _) = StateDir::open(tmp.path()).unwrap();
    sd.append(&all[0]).unwrap();
    let err = sd.snapshot(1, &[]).unwrap_err();
    assert!(err.to_string().contains("snapshot-1.bin"), "{err}");
    assert!(err.to_string().contains("not in the log"), "{err}");
    let bad = sd.snapshot(0, &[(Update::delete(1, 2), 1)]).unwrap_err();
    assert!(matches!(bad, DurabilityError::BadSnapshot { .. }));
    assert!(sd.snapshot(0, &[(Update::insert(1, 2), 0)]).is_err());
    // Unsorted input with duplicates is consolidated.
    let edges = [
        (Update::insert(5, 1), 1),
        (Update::insert(1, 2), 2),
        (Update { weight: Some(1.0), ..Update::insert(1, 2) }, 1),
        (weighted(1, 2, 3.0, 1), 4),
    ];
    sd.snapshot(0, &edges).unwrap();
    let err = sd.snapshot(0, &edges).unwrap_err();
    assert!(err.to_string().contains("not newer"), "{err}");
    drop(sd);
    let (_, rec) = StateDir::open(tmp.path()).unwrap();
    assert_eq!(
        rec.snapshot_edges,
        vec![(Update::insert(1, 2), 3), (weighted(1, 2, 3.0, 1), 4), (Update::insert(5, 1), 1)]
    );
    assert!(rec.log.is_empty());
    assert_eq!(rec.last_epoch, Some(0));
}

#[test]
fn seeding_snapshot_on_a_fresh_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let all = batches(4);
    let (mut sd, _) = StateDir::open(tmp.path()).unwrap();
    sd.snapshot(2, &model(&all[..3])).unwrap();
    assert_eq!(sd.next_epoch(), 3);
    assert!(sd.append(&all[0]).is_err());
    sd.append(&all[3]).unwrap();
    drop(sd);
    let (_, rec) = StateDir::open(tmp.path()).unwrap();
    assert_eq!(rec.snapshot_epoch, Some(2));
    assert_eq!(rec.log, all[3..].to_vec());
    assert_eq!(recovered_state(&rec), model(&all));
    assert_eq!(files(tmp.path()), vec!["log-3.bin", "snapshot-2.bin"]);
}

#[test]
fn torn_tail_is_cut_back_and_appending_continues() {
    let all = batches(6);
    let boundary: u64 = all[..4].iter().map(record_len).sum();
    let last = record_len(&all[4]);
    for cut in [0, 1, 7, 11, 12, 13, 20, last / 2, last - 1, last] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        {
            let (mut sd, _) = StateDir::open(dir).unwrap();
            for b in &all[..5] {
                sd.append(b).unwrap();
            }
        }
        let log = dir.join("log-0.bin");
        OpenOptions::new().write(true).open(&log).unwrap().set_len(boundary + cut).unwrap();

        let (mut sd, rec) = StateDir::open(dir).unwrap();
        if cut == 0 || cut == last {
            assert!(rec.warnings.is_empty(), "cut {cut}: {:?}", rec.warnings);
        } else {
            assert_eq!(rec.warnings.len(), 1, "cut {cut}: {:?}", rec.warnings);
            let w = &rec.warnings[0];
            assert!(w.contains("log-0.bin"), "{w}");
            assert!(w.contains(&format!("at byte {boundary}")), "{w}");
            assert!(w.contains("incomplete"), "{w}");
        }
        let complete = if cut == last { 5 } else { 4 };
        assert_eq!(rec.log, all[..complete].to_vec(), "cut {cut}");
        assert_eq!(rec.last_epoch, Some(complete as u64 - 1));
        let len = if cut == last { boundary + last } else { boundary };
        assert_eq!(fs::metadata(&log).unwrap().len(), len, "cut {cut}");
        for b in &all[complete..] {
            sd.append(b).unwrap();
        }
        drop(sd);
        let (_, rec) = StateDir::open(dir).unwrap();
        assert!(rec.warnings.is_empty(), "cut {cut}: {:?}", rec.warnings);
        assert_eq!(rec.log, all, "cut {cut}");
        // A torn write was never acknowledged: its bytes are not kept.
        assert_eq!(files(dir), vec!["log-0.bin"], "cut {cut}");
    }
}

#[test]
fn torn_tail_after_a_snapshot_rotation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all = batches(6);
    {
        let (mut sd, _) = StateDir::open(dir).unwrap();
        for b in &all[..3] {
            sd.append(b).unwrap();
        }
        sd.snapshot(2, &model(&all[..3])).unwrap();
        sd.append(&all[3]).unwrap();
    }
    // Crash in the middle of writing the first record of the new segment.
    let seg = dir.join("log-3.bin");
    OpenOptions::new().write(true).open(&seg).unwrap().set_len(5).unwrap();
    let (mut sd, rec) = StateDir::open(dir).unwrap();
    assert_eq!(rec.warnings.len(), 1);
    assert!(rec.warnings[0].contains("log-3.bin"), "{}", rec.warnings[0]);
    assert_eq!(rec.snapshot_epoch, Some(2));
    assert!(rec.log.is_empty());
    assert_eq!(rec.last_epoch, Some(2));
    assert_eq!(fs::metadata(&seg).unwrap().len(), 0);
    for b in &all[3..] {
        sd.append(b).unwrap();
    }
    drop(sd);
    let (_, rec) = StateDir::open(dir).unwrap();
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.log, all[3..].to_vec());
    assert_eq!(recovered_state(&rec), model(&all));
}

#[test]
fn flipped_byte_in_a_middle_record() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all = batches(5);
    {
        let (mut sd, _) = StateDir::open(dir).unwrap();
        for b in &all {
            sd.append(b).unwrap();
        }
    }
    let log = dir.join("log-0.bin");
    let mut bytes = fs::read(&log).unwrap();
    let start2: u64 = all[..2].iter().map(record_len).sum();
    let flip = start2 as usize + RECORD_HEADER as usize + 20;
    bytes[flip] ^= 0x10;
    fs::write(&log, &bytes).unwrap();

    let (mut sd, rec) = StateDir::open(dir).unwrap();
    assert_eq!(rec.log, all[..2].to_vec());
    assert_eq!(rec.last_epoch, Some(1));
    assert_eq!(rec.warnings.len(), 1);
    let w = &rec.warnings[0];
    assert!(w.contains("log-0.bin") && w.contains("checksum"), "{w}");
    assert!(w.contains(&format!("at byte {start2}")), "{w}");
    assert_eq!(fs::metadata(&log).unwrap().len(), start2);
    // The dropped (damaged and later, once acknowledged) records are kept for inspection.
    let saved = dir.join(format!("log-0.bin.discarded-at-{start2}"));
    assert_eq!(fs::read(&saved).unwrap(), bytes[start2 as usize..].to_vec());
    assert!(w.contains(&file_name(&saved)), "{w}");

    sd.append(&all[2]).unwrap();
    drop(sd);
    let (_, rec) = StateDir::open(dir).unwrap();
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.log, all[..3].to_vec());
}

#[test]
fn bad_length_and_garbage_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all = batches(3);
    {
        let (mut sd, _) = StateDir::open(dir).unwrap();
        for b in &all {
            sd.append(b).unwrap();
        }
    }
    // Zero-filled blocks after the last record (file size extended, data not written).
    let log = dir.join("log-0.bin");
    let good = fs::metadata(&log).unwrap().len();
    let mut f = OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(&[0u8; 64]).unwrap();
    drop(f);
    let (_, rec) = StateDir::open(dir).unwrap();
    assert_eq!(rec.log, all);
    assert_eq!(rec.warnings.len(), 1);
    assert!(rec.warnings[0].contains("bad record length 0"), "{}", rec.warnings[0]);
    assert_eq!(fs::metadata(&log).unwrap().len(), good);
}

#[test]
fn corruption_in_an_earlier_segment_sets_later_segments_aside() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all = batches(8);
    {
        let (mut sd, _) = StateDir::open(dir).unwrap();
        for b in &all[..3] {
            sd.append(b).unwrap();
        }
        sd.snapshot(2, &model(&all[..3])).unwrap();
        for b in &all[3..6] {
            sd.append(b).unwrap();
        }
        sd.snapshot(5, &model(&all[..6])).unwrap();
        for b in &all[6..] {
            sd.append(b).unwrap();
        }
    }
    assert_eq!(files(dir), vec!["log-3.bin", "log-6.bin", "snapshot-2.bin", "snapshot-5.bin"]);
    // Newest snapshot corrupt, and the log from the fallback is damaged at epoch 4.
    let snap = dir.join("snapshot-5.bin");
    let mut bytes = fs::read(&snap).unwrap();
    bytes[30] ^= 1;
    fs::write(&snap, bytes).unwrap();
    let seg = dir.join("log-3.bin");
    let mut bytes = fs::read(&seg).unwrap();
    let at = record_len(&all[3]);
    bytes[at as usize + 14] ^= 0xff;
    fs::write(&seg, bytes).unwrap();

    let (mut sd, rec) = StateDir::open(dir).unwrap();
    assert_eq!(rec.snapshot_epoch, Some(2));
    assert_eq!(rec.log, all[3..4].to_vec());
    assert_eq!(rec.last_epoch, Some(3));
    assert_eq!(rec.warnings.len(), 2, "{:?}", rec.warnings);
    assert!(rec.warnings[0].contains("snapshot-5.bin"), "{}", rec.warnings[0]);
    assert!(rec.warnings[1].contains("log-6.bin -> log-6.bin.discarded-at-0"));
    sd.append(&all[4]).unwrap();
    drop(sd);
    let (_, rec) = StateDir::open(dir).unwrap();
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.log, all[3..5].to_vec());
    assert_eq!(recovered_state(&rec), model(&all[..5]));
}

/// Appends 0..=8 with snapshots at 3 and 6; returns the batches.
fn two_snapshot_history(dir: &Path) -> Vec<EpochBatch> {
    let all = batches(9);
    let (mut sd, _) = StateDir::open(dir).unwrap();
    for b in &all[..4] {
        sd.append(b).unwrap();
    }
    sd.snapshot(3, &model(&all[..4])).unwrap();
    for b in &all[4..7] {
        sd.append(b).unwrap();
    }
    sd.snapshot(6, &model(&all[..7])).unwrap();
    for b in &all[7..] {
        sd.append(b).unwrap();
    }
    all
}

#[test]
fn corrupt_newest_snapshot_falls_back_to_the_previous_one() {
    for damage in ["flip", "truncate", "empty"] {
        let clean = tempfile::tempdir().unwrap();
        let all = two_snapshot_history(clean.path());
        let (_, clean_rec) = StateDir::open(clean.path()).unwrap();
        assert_eq!(clean_rec.snapshot_epoch, Some(6));
        assert_eq!(recovered_state(&clean_rec), model(&all));

        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        two_snapshot_history(dir);
        let snap = dir.join("snapshot-6.bin");
        let mut bytes = fs::read(&snap).unwrap();
        match damage {
            "flip" => bytes[40] ^= 0x01,
            "truncate" => bytes.truncate(bytes.len() / 2),
            _ => bytes.clear(),
        }
        fs::write(&snap, &bytes).unwrap();

        let (mut sd, rec) = StateDir::open(dir).unwrap();
        assert_eq!(rec.warnings.len(), 1, "{damage}: {:?}", rec.warnings);
        let w = &rec.warnings[0];
        assert!(w.contains("snapshot-6.bin") && w.contains("corrupt"), "{w}");
        if damage == "truncate" || damage == "flip" {
            assert!(w.contains("checksum"), "{w}");
        }
        assert_eq!(rec.snapshot_epoch, Some(3));
        assert_eq!(rec.snapshot_edges, model(&all[..4]));
        assert_eq!(rec.log, all[4..].to_vec());
        assert_eq!(rec.last_epoch, Some(8));
        assert_eq!(recovered_state(&rec), recovered_state(&clean_rec));
        assert!(dir.join("snapshot-6.bin.corrupt").exists());
        assert!(!snap.exists());
        // Snapshotting goes on normally from the fallback.
        sd.snapshot(8, &model(&all)).unwrap();
        sd.append(&batches(10)[9]).unwrap();
        drop(sd);
        let (_, rec) = StateDir::open(dir).unwrap();
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        assert_eq!(rec.snapshot_epoch, Some(8));
        assert_eq!(rec.log, batches(10)[9..].to_vec());
    }
}

#[test]
fn all_snapshots_corrupt_without_the_old_log_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    two_snapshot_history(dir);
    for s in ["snapshot-3.bin", "snapshot-6.bin"] {
        let p = dir.join(s);
        let mut bytes = fs::read(&p).unwrap();
        bytes[20] ^= 0x80;
        fs::write(&p, bytes).unwrap();
    }
    let err = StateDir::open(dir).unwrap_err();
    assert!(matches!(err, DurabilityError::Unrecoverable { .. }), "{err}");
    assert!(err.to_string().contains("epoch 0 is not in the log"), "{err}");
    assert!(err.to_string().contains("log-4.bin"), "{err}");
}

#[test]
fn unfinished_snapshot_temp_file_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let all = batches(5);
    {
        let (mut sd, _) = StateDir::open(dir).unwrap();
        for b in &all[..3] {
            sd.append(b).unwrap();
        }
        sd.snapshot(2, &model(&all[..3])).unwrap();
        sd.append(&all[3]).unwrap();
    }
    // Crash after writing part of snapshot 3's temp file, before the rename.
    let partial = tmp.path().join("partial");
    let entries: Vec<SnapshotEntry> = model(&all[..4]).into_iter().map(|(u, c)| (u, None, c)).collect();
    write_snapshot_file(&partial, 3, &entries, &[]).unwrap();
    let mut bytes = fs::read(&partial).unwrap();
    bytes.truncate(bytes.len() - 7);
    fs::write(dir.join("snapshot-3.bin.tmp"), bytes).unwrap();
    fs::remove_file(&partial).unwrap();

    let (mut sd, rec) = StateDir::open(dir).unwrap();
    assert_eq!(rec.warnings.len(), 1);
    assert!(rec.warnings[0].contains("snapshot-3.bin.tmp"), "{}", rec.warnings[0]);
    assert!(!dir.join("snapshot-3.bin.tmp").exists());
    assert_eq!(rec.snapshot_epoch, Some(2));
    assert_eq!(rec.log, all[3..4].to_vec());
    assert_eq!(recovered_state(&rec), model(&all[..4]));
    // The same snapshot can be taken again.
    sd.snapshot(3, &model(&all[..4])).unwrap();
    sd.append(&all[4]).unwrap();
    drop(sd);
    let (_, rec) = StateDir::open(dir).unwrap();
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.snapshot_epoch, Some(3));
    assert_eq!(rec.log, all[4..].to_vec());
}

#[test]
fn second_open_is_refused_while_the_first_lives() {
    let tmp = tempfile::tempdir().unwrap();
    let (_sd, _) = StateDir::open(tmp.path()).unwrap();
    let err = StateDir::open(tmp.path()).unwrap_err();
    assert!(matches!(err, DurabilityError::Locked { .. }), "{err}");
}

#[test]
fn snapshot_batch_expands_counts() {
    let rec = Recovered {
        snapshot_epoch: Some(4),
        snapshot_edges: vec![(Update::insert(1, 2), 2), (weighted(3, 4, 2.5, 1), 1)],
        snapshot_times: vec![],
        snapshot_records: vec![],
        log: batches(1),
        last_epoch: Some(5),
        warnings: vec![],
    };
    let snapshot = rec.snapshot_batch().unwrap();
    assert_eq!(snapshot.epoch, 4);
    assert_eq!(snapshot.updates, vec![Update::insert(1, 2), Update::insert(1, 2), weighted(3, 4, 2.5, 1)]);
    assert!(snapshot.times.is_empty());
    assert_eq!(Recovered::default().snapshot_batch(), None);
}

#[test]
fn mark_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    assert_eq!(read_mark(dir).unwrap(), None);
    write_mark(dir, 5, 1234).unwrap();
    assert_eq!(read_mark(dir).unwrap(), Some((5, 1234)));
    write_mark(dir, 6, u64::MAX - 1).unwrap();
    assert_eq!(read_mark(dir).unwrap(), Some((6, u64::MAX - 1)));
    assert_eq!(ChangeLogMark::read(dir).unwrap(), Some(ChangeLogMark { epoch: 6, offset: u64::MAX - 1 }));
    assert_eq!(files(dir), vec![MARK_FILE]);
    // The mark lives beside the state without disturbing recovery.
    let (_, rec) = StateDir::open(dir).unwrap();
    assert!(rec.warnings.is_empty());
    let path = dir.join(MARK_FILE);
    let mut bytes = fs::read(&path).unwrap();
    bytes[9] ^= 4;
    fs::write(&path, bytes).unwrap();
    let err = read_mark(dir).unwrap_err();
    assert!(err.to_string().contains(MARK_FILE) && err.to_string().contains("checksum"));
}

#[test]
fn record_encoding_round_trips() {
    for b in batches(5) {
        let rec = encode_record(&b);
        let payload = &rec[RECORD_HEADER as usize..];
        assert_eq!(u64::from_le_bytes(rec[..8].try_into().unwrap()), payload.len() as u64);
        assert_eq!(decode_payload(payload).unwrap(), b);
    }
    let empty = EpochBatch { epoch: 9, updates: vec![], ..Default::default() };
    assert_eq!(record_len(&empty), RECORD_HEADER + MIN_PAYLOAD);
    assert_eq!(decode_payload(&encode_record(&empty)[12..]).unwrap(), empty);
}

#[test]
fn records_round_trip_through_the_log_and_snapshots() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("state");
    let mut all = batches(4);
    all[1].records = vec![("a b".into(), 1), ("é".into(), 1), ("a b".into(), 1)];
    all[2].records = vec![("a b".into(), -1), (String::new(), 1)];
    // An epoch without records is encoded exactly as before records existed.
    assert_eq!(
        record_len(&all[1]),
        record_len(&EpochBatch { records: vec![], ..all[1].clone() }) + 8 + 3 * 5 + 3 + 2 + 3
    );
    {
        let (mut sd, _) = StateDir::open(&dir).unwrap();
        for b in &all {
            sd.append(b).unwrap();
        }
        // The records present after epoch 2, in any order: the snapshot sorts them.
        let records = vec![("é".to_string(), 1), (String::new(), 1), ("a b".to_string(), 1)];
        let edges: Vec<SnapshotEntry> = model(&all[..3]).into_iter().map(|(u, c)| (u, None, c)).collect();
        sd.snapshot_with_records(2, &edges, records).unwrap();
        let twice = vec![("x".to_string(), 1), ("x".to_string(), 2)];
        assert!(sd.snapshot_with_records(3, &edges, twice).unwrap_err().to_string().contains("appears twice"));
    }
    let (_, rec) = StateDir::open(&dir).unwrap();
    assert_eq!(rec.snapshot_epoch, Some(2));
    assert_eq!(rec.snapshot_records, vec![(String::new(), 1), ("a b".to_string(), 1), ("é".to_string(), 1)]);
    assert_eq!(rec.log, all[3..].to_vec());
    let snapshot = rec.snapshot_batch().unwrap();
    assert_eq!(snapshot.records, vec![(String::new(), 1), ("a b".to_string(), 1), ("é".to_string(), 1)]);
    // A log record whose record section is damaged is refused, not misread.
    let mut bad = encode_record(&all[1]);
    let payload = bad.split_off(RECORD_HEADER as usize);
    let cut = &payload[..payload.len() - 1];
    assert!(decode_payload(cut).unwrap_err().contains("ends early"), "{:?}", decode_payload(cut));
    assert_eq!(decode_payload(&payload).unwrap(), all[1]);
}
