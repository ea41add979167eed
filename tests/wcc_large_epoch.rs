//! Large epochs through the memory-saving paths: an initial graph larger than the driver's
//! feeding chunk (fed in chunks with worker steps between them), taken out of its memory stream
//! (or not, when the caller still holds the stream), stashed compactly and consolidated while it
//! arrives, then applied while its list is freed; and an update epoch large enough to free its
//! list too, with its deletions applied after its insertions. The change logs are the same in
//! every configuration and equal the oracle after every epoch. Seeds are fixed and printed on
//! failure.

mod common;

use std::sync::Arc;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ripples::dataflow::wcc::Wcc;
use ripples::driver::{self, RunOptions, Source};
use ripples::sinks::Change;
use ripples::types::Node;

/// R-MAT scale 15 (163,840 copies, with duplicates), parallel copies both ways round and
/// self-loops, then two epochs of 80,000 updates: deletions of random present copies and
/// insertions of new R-MAT edges, interleaved.
fn large_stream(seed: u64) -> RandomStream {
    let mut initial = ripples::sources::generate::rmat(15, 5, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in 0..2_000 {
        let (a, b) = initial[i * 7];
        initial.push(if i % 2 == 0 { (a, b) } else { (b, a) });
    }
    for _ in 0..200 {
        let v = initial[rng.gen_range(0..initial.len())].0;
        initial.push((v, v));
    }
    let mut present = initial.clone();
    let mut fresh = ripples::sources::generate::rmat(15, 5, seed + 1).into_iter();
    let epochs = (0..2).map(|_| churn_epoch(&mut rng, &mut present, &mut fresh, 80_000)).collect();
    RandomStream { vertices: vec![3, 1 << 40], initial, epochs }
}

fn log(options: RunOptions) -> Vec<Change> {
    driver::run(options, Wcc).expect("run").expect("report").changes.expect("changes")
}

#[test]
fn large_epochs_match_the_oracle_in_every_configuration() {
    let seed = 15;
    let s = large_stream(seed);
    let batch = 80_000;
    let one = log(RunOptions { trusted_input: true, ..RunOptions::memory(memory(&s, batch), 1) });
    let states = states_per_epoch(&one, s.epochs.len() as u64);
    for (epoch, counts) in edge_counts_per_epoch(&s).iter().enumerate() {
        let (vs, es) = oracle_input(&s.vertices, counts);
        assert!(states[epoch] == ripples::oracle::wcc(&vs, &es), "seed {seed}: epoch {epoch} differs from the oracle");
    }
    let two = log(RunOptions { trusted_input: true, ..RunOptions::memory(memory(&s, batch), 2) });
    assert!(two == one, "seed {seed}: the change logs of 1 and 2 workers differ");
    // The caller keeps the stream: the driver copies its initial graph instead of taking it.
    let stream = Arc::new(memory(&s, batch));
    let options = RunOptions { source: Source::Memory(stream.clone()), ..RunOptions::memory(memory(&s, batch), 2) };
    let kept = log(RunOptions { trusted_input: true, ..options });
    assert!(kept == one, "seed {seed}: the change log differs when the stream is not taken");
    assert_eq!(stream.initial.len(), s.initial.len(), "the caller's stream was changed");
}

/// The insert-only path (no deletions in the stream) over the same initial graph fed in chunks.
#[test]
fn a_large_initial_graph_on_the_insert_only_path() {
    let seed = 16;
    let s = RandomStream { epochs: vec![], ..large_stream(seed) };
    for workers in [1, 2] {
        let changes = log(RunOptions::memory(memory(&s, 1), workers));
        let states = states_per_epoch(&changes, 0);
        let (vs, es) = oracle_input(&s.vertices, &edge_counts_per_epoch(&s)[0]);
        let want: std::collections::BTreeMap<Node, u64> = ripples::oracle::wcc(&vs, &es);
        assert!(states[0] == want, "seed {seed}, {workers} worker(s): epoch 0 differs from the oracle");
    }
}
