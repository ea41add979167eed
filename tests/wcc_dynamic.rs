//! The fully dynamic WCC path (`Wcc` on streams that delete) against the general differential
//! path (`WccGeneral`) and the oracle: adversarial random streams (deletions aimed at the oldest
//! edges, bridges and the minimum-id vertex of a component, multi-edges, self-loops,
//! re-insertions, vertex-file vertices), random batch sizes, 1/2/3 workers, the fallback budget
//! forced to 0; and a larger R-MAT run. Seeds are fixed and printed on failure.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::process::{bin, s, Files};
use common::*;
use differential_dataflow::input::InputSession;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ripples::dataflow::wcc::{Wcc, WccGeneral};
use ripples::dataflow::wcc_dynamic::{ForestLayout, ForestParams, WccDynamic, DEFAULT_BUDGET};
use ripples::dataflow::{Algorithm, GraphInput};
use ripples::driver::{self, RunOptions};
use ripples::sinks::Change;
use ripples::types::{Diff, Node, Time, Update};
use timely::dataflow::operators::{Inspect, Probe};
use timely::dataflow::ProbeHandle;

/// Labels of a multiset of edges (plain union-find; small graphs).
fn components(pairs: &[(Node, Node)]) -> BTreeMap<Node, Node> {
    let mut parent: BTreeMap<Node, Node> = BTreeMap::new();
    fn find(p: &mut BTreeMap<Node, Node>, x: Node) -> Node {
        let mut r = x;
        while p[&r] != r {
            r = p[&r];
        }
        p.insert(x, r);
        r
    }
    for &(a, b) in pairs {
        parent.entry(a).or_insert(a);
        parent.entry(b).or_insert(b);
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            parent.insert(hi, lo);
        }
    }
    let keys: Vec<Node> = parent.keys().copied().collect();
    keys.into_iter().map(|v| (v, find(&mut parent, v))).collect()
}

/// An adversarial stream: the update sequence, the initial edges and the vertex file.
fn adversarial_stream(seed: u64, vertices: usize, initial: usize, updates: usize) -> RandomStream {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids = id_pool(vertices);
    let pick = |rng: &mut ChaCha8Rng| ids[rng.gen_range(0..ids.len())];
    // Present copies in insertion order (the oldest are likely forest edges).
    let mut present: Vec<(Node, Node)> = Vec::new();
    let mut deleted: Vec<(Node, Node)> = Vec::new();
    let mut init = Vec::new();
    for _ in 0..initial {
        let e = (pick(&mut rng), pick(&mut rng));
        init.push(e);
        present.push(e);
    }
    let vfile: Vec<Node> = ids.iter().copied().filter(|_| rng.gen_bool(0.1)).collect();
    let mut out = Vec::new();
    for _ in 0..updates {
        let r: f64 = rng.gen();
        let delete_at = if present.is_empty() {
            None
        } else if r < 0.15 {
            Some(0) // the oldest copy
        } else if r < 0.27 {
            // A copy at the smallest id of a component.
            let labels = components(&present);
            let at_min: Vec<usize> = (0..present.len())
                .filter(|&i| labels[&present[i].0] == present[i].0 || labels[&present[i].1] == present[i].1)
                .collect();
            (!at_min.is_empty()).then(|| at_min[rng.gen_range(0..at_min.len())])
        } else if r < 0.39 {
            // A bridge: the last copy of a pair whose removal splits its component.
            let before = components(&present).values().collect::<BTreeSet<_>>().len();
            let mut bridges = Vec::new();
            for i in 0..present.len() {
                let (a, b) = present[i];
                let copies = present.iter().filter(|&&e| e == (a, b) || e == (b, a)).count();
                if a == b || copies > 1 {
                    continue;
                }
                let mut rest = present.clone();
                rest.remove(i);
                rest.extend([(a, a), (b, b)]);
                if components(&rest).values().collect::<BTreeSet<_>>().len() > before {
                    bridges.push(i);
                }
            }
            (!bridges.is_empty()).then(|| bridges[rng.gen_range(0..bridges.len())])
        } else if r < 0.5 {
            Some(rng.gen_range(0..present.len()))
        } else {
            None
        };
        if let Some(i) = delete_at {
            let e = present.remove(i);
            deleted.push(e);
            out.push(Update::delete(e.0, e.1));
            continue;
        }
        let e = if r < 0.6 && !deleted.is_empty() {
            deleted.swap_remove(rng.gen_range(0..deleted.len())) // a re-insertion
        } else if r < 0.7 && !present.is_empty() {
            let e = present[rng.gen_range(0..present.len())];
            if rng.gen_bool(0.5) {
                e
            } else {
                (e.1, e.0) // a parallel copy, either way round
            }
        } else if r < 0.76 {
            let v = pick(&mut rng);
            (v, v)
        } else {
            (pick(&mut rng), pick(&mut rng))
        };
        present.push(e);
        out.push(Update::insert(e.0, e.1));
    }
    RandomStream { vertices: vfile, initial: init, epochs: vec![out] }
}

fn changes<A: Algorithm>(s: &RandomStream, batch: usize, workers: usize, algorithm: A) -> Vec<Change> {
    driver::run(RunOptions::memory(memory(s, batch), workers), algorithm)
        .expect("run")
        .expect("report")
        .changes
        .expect("changes")
}

/// The change log of the general differential path (one worker) over `s` in batches of
/// `batch`, checked against the oracle at every epoch.
fn general_log_checked(s: &RandomStream, batch: usize, seed: u64) -> Vec<Change> {
    let general = changes(s, batch, 1, WccGeneral);
    let rebatched = RandomStream {
        vertices: s.vertices.clone(),
        initial: s.initial.clone(),
        epochs: s.epochs[0].chunks(batch).map(|c| c.to_vec()).collect(),
    };
    let states = states_per_epoch(&general, rebatched.epochs.len() as u64);
    for (epoch, counts) in edge_counts_per_epoch(&rebatched).iter().enumerate() {
        let (vs, es) = oracle_input(&s.vertices, counts);
        assert_eq!(states[epoch], ripples::oracle::wcc(&vs, &es), "seed {seed} batch {batch} epoch {epoch}");
    }
    general
}

/// Through the driver: the change logs of `Wcc` (dynamic path), `WccDynamic` with budget 0 and
/// `WccGeneral` are identical, and equal to the oracle at every epoch.
#[test]
fn dynamic_path_equals_general_path_and_oracle() {
    let mut fallbacks = 0;
    for seed in 1..=6u64 {
        let s = adversarial_stream(seed, 24 + seed as usize * 2, 20, 150);
        let batch = 1 + (seed as usize * 3) % 8;
        let general = general_log_checked(&s, batch, seed);
        for workers in [1, 2, 3] {
            let dynamic = changes(&s, batch, workers, Wcc);
            assert!(dynamic == general, "seed {seed} batch {batch} workers {workers}: Wcc's change log differs");
            // With one worker, shares change nothing.
            let variants: &[(Option<f64>, bool)] = if workers == 1 {
                &[(Some(0.0), false)]
            } else {
                &[(Some(0.0), false), (None, true), (Some(0.0), true)]
            };
            for &(budget, shares) in variants {
                let counter = Arc::new(AtomicU64::new(0));
                let forced = WccDynamic::default()
                    .with_budget(budget.unwrap_or(DEFAULT_BUDGET))
                    .with_layout(ForestLayout::from_shares(shares))
                    .with_fallback_counter(counter.clone());
                let log = changes(&s, batch, workers, forced);
                assert!(
                    log == general,
                    "seed {seed} batch {batch} workers {workers} budget {budget:?} shares {shares}: change log differs"
                );
                fallbacks += counter.load(Ordering::Relaxed);
            }
        }
    }
    assert!(fallbacks > 0, "budget 0 never fell back");
}

/// Runs `algorithm` on epochs of the given (random) sizes with `workers` workers, outside the
/// driver; returns its raw output records (not consolidated).
fn raw_output<A: Algorithm + Clone + Send + Sync>(
    s: &RandomStream,
    epochs: &[Vec<Update>],
    workers: usize,
    algorithm: A,
) -> Vec<((Node, u64), Time, Diff)> {
    let sink = Arc::new(Mutex::new(Vec::new()));
    let (s, epochs) = (Arc::new(s.clone()), Arc::new(epochs.to_vec()));
    let out = sink.clone();
    timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut edges_in: InputSession<Time, ripples::types::Edge, Diff> = InputSession::new();
        let mut vertices_in: InputSession<Time, Node, Diff> = InputSession::new();
        let probe = ProbeHandle::new();
        let out = out.clone();
        let algorithm = algorithm.clone();
        worker.dataflow::<Time, _, _>(|scope| {
            let input = GraphInput::new(edges_in.to_collection(scope), vertices_in.to_collection(scope), false);
            algorithm.build(input).inner.inspect(move |x| out.lock().expect("sink").push(*x)).probe_with(&probe);
        });
        let weight = ripples::types::weight_bits(None);
        if index == 0 {
            for &v in &s.vertices {
                vertices_in.update(v, 1);
            }
        }
        vertices_in.close();
        for (i, &(a, b)) in s.initial.iter().enumerate() {
            if i % peers == index {
                edges_in.update((a, b, weight), 1);
            }
        }
        for (t, batch) in std::iter::once(&Vec::new()).chain(epochs.iter()).enumerate() {
            for (i, u) in batch.iter().enumerate() {
                if i % peers == index {
                    edges_in.update((u.src, u.dst, weight), u.diff as Diff);
                }
            }
            edges_in.advance_to(t as Time + 1);
            edges_in.flush();
            while probe.less_than(&(t as Time + 1)) {
                worker.step();
            }
        }
        edges_in.close();
    })
    .expect("timely");
    let v = sink.lock().expect("sink").clone();
    v
}

/// Sorted consolidated changes per time.
fn consolidated(mut raw: Vec<((Node, u64), Time, Diff)>) -> Vec<((Node, u64), Time, Diff)> {
    raw.sort_by_key(|&(r, t, _)| (t, r));
    let mut out: Vec<((Node, u64), Time, Diff)> = Vec::new();
    for (r, t, d) in raw {
        match out.last_mut() {
            Some(last) if last.0 == r && last.1 == t => last.2 += d,
            _ => out.push((r, t, d)),
        }
    }
    out.retain(|x| x.2 != 0);
    out
}

/// Random epoch sizes (0 to 12 updates), outside the driver: the dynamic path's raw output is
/// already net (every `(vertex, label)` at most once per time, diff ±1) and equals the general
/// path's, consolidated.
#[test]
fn random_batch_sizes_and_net_output() {
    for seed in 20..=23u64 {
        let s = adversarial_stream(seed, 30, 25, 160);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xBA7C);
        let mut epochs = Vec::new();
        let mut rest = &s.epochs[0][..];
        while !rest.is_empty() {
            let k = rng.gen_range(0..=12).min(rest.len());
            epochs.push(rest[..k].to_vec());
            rest = &rest[k..];
        }
        let general = consolidated(raw_output(&s, &epochs, 1, WccGeneral));
        for workers in [1, 2, 3] {
            let variants: &[(Option<f64>, bool)] = if workers == 1 {
                &[(None, false), (Some(0.0), false)]
            } else {
                &[(None, false), (None, true), (Some(0.0), true)]
            };
            for &(budget, shares) in variants {
                let dynamic = WccDynamic::default()
                    .with_budget(budget.unwrap_or(DEFAULT_BUDGET))
                    .with_layout(ForestLayout::from_shares(shares));
                let raw = raw_output(&s, &epochs, workers, dynamic);
                let mut seen = BTreeSet::new();
                for &(r, t, d) in &raw {
                    assert!(d == 1 || d == -1, "seed {seed} workers {workers}: diff {d}");
                    assert!(seen.insert((t, r)), "seed {seed} workers {workers} t {t}: {r:?} twice (net zero)");
                }
                assert!(
                    consolidated(raw) == general,
                    "seed {seed} workers {workers} budget {budget:?} shares {shares}: differs from the general path"
                );
            }
        }
    }
}

/// R-MAT scale 14 loaded at epoch 0, then 100,000 updates (deletions of random present copies,
/// insertions of new R-MAT edges) in epochs of 2,000: the oracle at sampled epochs, and the same
/// change log with per-worker shares.
#[test]
fn rmat_scale_14_against_the_oracle() {
    let seed = 14;
    let base = ripples::sources::generate::rmat(14, 4, seed);
    let fresh = ripples::sources::generate::rmat(14, 4, seed + 1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut present = base.clone();
    let mut fresh = fresh.into_iter();
    let mut updates = Vec::with_capacity(100_000);
    while updates.len() < 100_000 {
        if rng.gen_bool(0.5) && !present.is_empty() {
            let e = present.swap_remove(rng.gen_range(0..present.len()));
            updates.push(Update::delete(e.0, e.1));
        } else if let Some(e) = fresh.next() {
            present.push(e);
            updates.push(Update::insert(e.0, e.1));
        }
    }
    let batch = 2000;
    let s =
        RandomStream { vertices: vec![], initial: base, epochs: updates.chunks(batch).map(|c| c.to_vec()).collect() };
    let report = driver::run(RunOptions { trusted_input: true, ..RunOptions::memory(memory(&s, batch), 2) }, Wcc)
        .expect("run")
        .expect("report");
    let log = report.changes.expect("changes");
    let spread = RunOptions { trusted_input: true, ..RunOptions::memory(memory(&s, batch), 2) };
    let shares = WccDynamic::default().with_layout(ForestLayout::Shares);
    let spread = driver::run(spread, shares).expect("run").expect("report").changes.expect("changes");
    assert!(spread == log, "seed {seed}: the change logs with and without shares differ");
    let states = states_per_epoch(&log, s.epochs.len() as u64);
    let counts = edge_counts_per_epoch(&s);
    for epoch in [0, 1, 7, 25, 50] {
        let (vs, es) = oracle_input(&[], &counts[epoch]);
        assert_eq!(states[epoch], ripples::oracle::wcc(&vs, &es), "seed {seed}: epoch {epoch} differs from the oracle");
    }
}

/// Not a check: the sequential cost of the two designs on the same epochs, without scheduling
/// noise (`cargo test --release --test wcc_dynamic cost_breakdown -- --ignored --nocapture`):
/// one forest of every link, against two share forests (summary mode) plus the forest of their
/// union. Prints the mean and p50 per epoch of each part.
#[test]
#[ignore]
fn cost_breakdown() {
    use ripples::dataflow::wcc_dynamic::DynamicForest;
    use std::time::Instant;
    type Batch = Vec<(Node, Node, Diff)>;
    let churn = || -> (Batch, Vec<Batch>) {
        let base = ripples::sources::generate::rmat(18, 16, 1);
        let fresh = ripples::sources::generate::rmat(18, 16, 2);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut present = base.clone();
        let mut fresh = fresh.into_iter();
        let epochs = (0..200)
            .map(|_| {
                let mut b = Vec::new();
                for _ in 0..1000 {
                    let e = present.swap_remove(rng.gen_range(0..present.len()));
                    b.push((e.0, e.1, -1));
                }
                for _ in 0..1000 {
                    let e = fresh.next().expect("enough fresh edges");
                    present.push(e);
                    b.push((e.0, e.1, 1));
                }
                b
            })
            .collect();
        (base.iter().map(|&(a, b)| (a, b, 1)).collect(), epochs)
    };
    let window = || -> (Batch, Vec<Batch>) {
        let edges = ripples::sources::generate::rmat(20, 2, 1);
        let w = 1_000_000;
        let initial = edges[..w].iter().map(|&(a, b)| (a, b, 1)).collect();
        let epochs = (0..500)
            .map(|i| {
                let (lo, hi) = (i * 1000, w + i * 1000);
                let mut b: Batch = edges[hi..hi + 1000].iter().map(|&(a, b)| (a, b, 1)).collect();
                b.extend(edges[lo..lo + 1000].iter().map(|&(a, b)| (a, b, -1)));
                b
            })
            .collect();
        (initial, epochs)
    };
    let stats = |mut v: Vec<f64>| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        v.sort_by(|a, b| a.total_cmp(b));
        format!("mean {:.3} ms p50 {:.3} ms p99 {:.3} ms", mean, v[v.len() / 2], v[v.len() * 99 / 100])
    };
    for (name, (initial, epochs)) in [("churn scale 18", churn()), ("window scale 20", window())] {
        let route = |a: Node, b: Node| ((a.min(b).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ a.max(b)) >> 7) % 2;
        let mut one = DynamicForest::new(1.0);
        let mut shares = [DynamicForest::summary(1.0), DynamicForest::summary(1.0)];
        let mut top = DynamicForest::new(1.0);
        let (mut t_one, mut t_share, mut t_top, mut forwarded) = (Vec::new(), Vec::new(), Vec::new(), 0usize);
        for (i, batch) in std::iter::once(&initial).chain(epochs.iter()).enumerate() {
            let mut out = Vec::new();
            let started = Instant::now();
            one.apply(&[], &mut batch.clone(), &mut out);
            let single = started.elapsed().as_secs_f64() * 1e3;
            let mut up: Batch = Vec::new();
            let mut slowest: f64 = 0.0;
            for (k, share) in shares.iter_mut().enumerate() {
                let mut part: Batch = batch.iter().copied().filter(|e| route(e.0, e.1) == k as u64).collect();
                let mut summary = Vec::new();
                let started = Instant::now();
                share.apply(&[], &mut part, &mut summary);
                slowest = slowest.max(started.elapsed().as_secs_f64() * 1e3);
                up.extend(summary.into_iter().map(|((a, b), d)| (a, b, d)));
            }
            let n = up.len();
            let mut top_out = Vec::new();
            let started = Instant::now();
            top.apply(&[], &mut up, &mut top_out);
            let merge = started.elapsed().as_secs_f64() * 1e3;
            let (mut x, mut y) = (out, top_out);
            x.sort();
            y.sort();
            assert!(x == y, "{name} epoch {i}: the two designs differ");
            if i > 0 {
                t_one.push(single);
                t_share.push(slowest);
                t_top.push(merge);
                forwarded += n;
            }
        }
        println!("{name}: one forest: {}", stats(t_one));
        println!("{name}: slower share forest: {}", stats(t_share));
        println!("{name}: union forest at worker 0: {}", stats(t_top));
        println!("{name}: forwarded records per epoch: {}", forwarded / epochs.len());
        println!(
            "{name}: fallbacks: one {} shares {} {} union {}",
            one.fallbacks(),
            shares[0].fallbacks(),
            shares[1].fallbacks(),
            top.fallbacks()
        );
    }
}

/// The fallback count in the run's stats: with budget 0 (a rebuild at the first forest-edge
/// deletion of a time, at most one per time) every epoch reports its rebuilds: exactly one in
/// an epoch whose net deletions remove a bridge (an edge every spanning forest holds), none in an epoch
/// without deletions, at most one otherwise; the summary reports their sum (the dataflow's own
/// counter agrees); the change log still equals the oracle's at every epoch. With the default
/// budget, the count is there (0 on these streams); where the path does not run (general path,
/// insert-only stream), it is absent.
#[test]
fn fallbacks_are_counted_per_epoch_and_in_the_summary() {
    for seed in 40..=42u64 {
        let s = adversarial_stream(seed, 30, 25, 120);
        let batch = 4 + seed as usize % 3;
        let epochs = rebatch(&s, batch);
        let counts = edge_counts_per_epoch(&epochs);
        // Per epoch: 1 if it deletes a bridge of the graph after its insertions, 0 without
        // deletions, `None` (0 or 1, depending on the forest) otherwise.
        let mut want: Vec<Option<u64>> = vec![Some(0)];
        for (e, updates) in epochs.epochs.iter().enumerate() {
            let undirected = |m: &BTreeMap<(Node, Node), i64>| -> BTreeSet<(Node, Node)> {
                m.keys().filter(|(a, b)| a != b).map(|&(a, b)| (a.min(b), a.max(b))).collect()
            };
            // The graph after the epoch's net insertions, before its net deletions.
            let after = undirected(&counts[e + 1]);
            let before: BTreeSet<(Node, Node)> = undirected(&counts[e]).union(&after).copied().collect();
            let bridge = before.difference(&after).any(|&(a, b)| {
                let rest: Vec<(Node, Node)> = before.iter().copied().filter(|&p| p != (a, b)).collect();
                let labels = components(&rest);
                labels.get(&a).is_none_or(|l| labels.get(&b) != Some(l))
            });
            want.push(if bridge {
                Some(1)
            } else if updates.iter().all(|u| u.diff > 0) {
                Some(0)
            } else {
                None
            });
        }
        assert!(want.contains(&Some(1)), "seed {seed}: no epoch deletes a bridge");
        for (workers, shares) in [(1, false), (2, false), (2, true)] {
            let what = format!("seed {seed} batch {batch} workers {workers} shares {shares}");
            let counter = Arc::new(AtomicU64::new(0));
            let forced = WccDynamic::default()
                .with_budget(0.0)
                .with_layout(ForestLayout::from_shares(shares))
                .with_fallback_counter(counter.clone());
            let report =
                driver::run(RunOptions::memory(memory(&s, batch), workers), forced).expect("run").expect("report");
            let per_epoch: Vec<u64> =
                report.epochs.iter().map(|e| e.wcc_fallbacks.unwrap_or_else(|| panic!("{what}: no count"))).collect();
            assert_eq!(report.summary.wcc_fallbacks, Some(per_epoch.iter().sum()), "{what}: summary");
            assert_eq!(report.summary.wcc_fallbacks, Some(counter.load(Ordering::Relaxed)), "{what}: counter");
            if !shares {
                // One forest, at worker 0.
                for (epoch, (&got, &want)) in per_epoch.iter().zip(&want).enumerate() {
                    assert!(got <= 1 && want.is_none_or(|w| w == got), "{what}: epoch {epoch}: {got} rebuilds");
                }
            }
            let states = states_per_epoch(report.changes.as_ref().expect("changes"), epochs.epochs.len() as u64);
            for (epoch, counts) in edge_counts_per_epoch(&epochs).iter().enumerate() {
                let (vs, es) = oracle_input(&s.vertices, counts);
                assert_eq!(states[epoch], ripples::oracle::wcc(&vs, &es), "{what}: epoch {epoch}");
            }
        }
        let plain = driver::run(RunOptions::memory(memory(&s, batch), 2), Wcc).expect("run").expect("report");
        assert!(plain.epochs.iter().all(|e| e.wcc_fallbacks == Some(0)), "seed {seed}: default budget");
        assert_eq!(plain.summary.wcc_fallbacks, Some(0), "seed {seed}: default budget");
        let general = driver::run(RunOptions::memory(memory(&s, batch), 1), WccGeneral).expect("run").expect("report");
        assert!(general.epochs.iter().all(|e| e.wcc_fallbacks.is_none()), "seed {seed}: general path");
        assert_eq!(general.summary.wcc_fallbacks, None, "seed {seed}: general path");
    }
    // Insert-only: the insert-only path, no count.
    let inserts =
        RandomStream { vertices: vec![], initial: vec![(1, 2), (3, 4)], epochs: vec![vec![Update::insert(2, 3)]] };
    let report = driver::run(RunOptions::memory(memory(&inserts, 1), 1), Wcc).expect("run").expect("report");
    assert_eq!(report.summary.wcc_fallbacks, None, "insert-only stream");
}

/// `--stats` through the command line with `--wcc-fallback-budget 0`: every epoch line and
/// the summary line carry `wcc_fallbacks`, the epochs' sum is the summary's and positive, and
/// the change log is the one of the default budget; a `wcc-general` run's lines have no such
/// field.
#[test]
fn fallbacks_in_the_stats_file() {
    let files = Files::new();
    let stream = adversarial_stream(7, 30, 25, 120);
    let updates = files.path("u.txt");
    let text: String = stream.epochs[0]
        .iter()
        .map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst))
        .collect();
    std::fs::write(&updates, text).unwrap();
    let initial = files.path("g.txt");
    std::fs::write(&initial, stream.initial.iter().map(|(a, b)| format!("{a} {b}\n")).collect::<String>()).unwrap();
    let run = |algorithm: &str, budget: Option<&str>, tag: &str| -> (String, Vec<serde_json::Value>) {
        let (changes, stats) = (files.path(&format!("{tag}.changes")), files.path(&format!("{tag}.json")));
        let mut cmd = bin();
        cmd.args(["run", algorithm, "--graph", &s(&initial), "--updates", &s(&updates), "--batch", "5"]).args([
            "--changes",
            &s(&changes),
            "--stats",
            &s(&stats),
            "-q",
        ]);
        if let Some(b) = budget {
            cmd.args(["--wcc-fallback-budget", b]);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{tag}: {}", String::from_utf8_lossy(&out.stderr));
        let lines =
            std::fs::read_to_string(&stats).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        (std::fs::read_to_string(&changes).unwrap(), lines)
    };
    let (forced, lines) = run("wcc", Some("0"), "forced");
    let (summary, epochs) = lines.split_last().expect("stats lines");
    let counts: Vec<u64> = epochs.iter().map(|l| l["wcc_fallbacks"].as_u64().expect("per-epoch count")).collect();
    let total = summary["wcc_fallbacks"].as_u64().expect("summary count");
    assert_eq!(counts.iter().sum::<u64>(), total);
    assert!(total > 0, "budget 0 never fell back");
    let (plain, lines) = run("wcc", None, "plain");
    assert_eq!(forced, plain, "budget 0 changed the change log");
    assert!(lines.iter().all(|l| l["wcc_fallbacks"].as_u64() == Some(0)));
    let (general, lines) = run("wcc-general", None, "general");
    assert_eq!(general, plain, "the general path's change log differs");
    assert!(lines.iter().all(|l| l.get("wcc_fallbacks").is_none()));
}

/// Runs `wcc` over `s` in batches of `batch` as two processes (two runs of the driver in this
/// test's process, joined over loopback) of `workers` workers each; returns process 0's change log.
fn two_process_log<A: Algorithm + Clone + Send + Sync + 'static>(
    s: &RandomStream,
    batch: usize,
    workers: usize,
    wcc: A,
) -> Vec<Change> {
    two_process_run(s, batch, workers, wcc, None).0
}

/// [`two_process_log`] with process 0's time limit: process 0's change log and the last epoch it
/// wrote.
fn two_process_run<A: Algorithm + Clone + Send + Sync + 'static>(
    s: &RandomStream,
    batch: usize,
    workers: usize,
    wcc: A,
    time_limit: Option<std::time::Duration>,
) -> (Vec<Change>, u64) {
    let report = two_process_report(s, batch, workers, wcc, time_limit, false);
    let last = report.epochs.last().expect("epoch 0 at least").epoch;
    (report.changes.expect("process 0 reports its change log"), last)
}

/// [`two_process_run`]'s run, with `--stats` if `stats`: process 0's report.
fn two_process_report<A: Algorithm + Clone + Send + Sync + 'static>(
    s: &RandomStream,
    batch: usize,
    workers: usize,
    wcc: A,
    time_limit: Option<std::time::Duration>,
    stats: bool,
) -> driver::RunReport {
    let stream = memory(s, batch);
    two_process_options_report(workers, wcc, time_limit, stats, move || RunOptions::memory(stream.clone(), workers))
}

/// [`two_process_report`] with the options `make` gives (their layout and limits set here).
fn two_process_options_report<A: Algorithm + Clone + Send + Sync + 'static>(
    workers: usize,
    wcc: A,
    time_limit: Option<std::time::Duration>,
    stats: bool,
    make: impl Fn() -> RunOptions,
) -> driver::RunReport {
    use ripples::driver::Layout;
    let files = Files::new();
    let hosts = format!("127.0.0.1:{}\n127.0.0.1:{}\n", common::process::free_port(), common::process::free_port());
    let hostfile = files.write("hosts", &hosts);
    let runs: Vec<_> = (0..2)
        .map(|process| {
            let mut options = make();
            options.layout =
                Layout { processes: 2, process, hostfile: Some(hostfile.clone()), ..Layout::threads(workers) };
            if process == 0 {
                options.time_limit = time_limit;
            }
            if stats {
                options.stats = Some(files.path(&format!("stats{process}.json")));
            }
            let wcc = wcc.clone();
            std::thread::spawn(move || driver::run(options, wcc))
        })
        .collect();
    let mut reports = Vec::new();
    for run in runs {
        let report = run.join().expect("run thread").unwrap_or_else(|e| panic!("workers {workers}: {e}"));
        reports.push(report);
    }
    assert!(reports[1].is_none(), "process 1 writes nothing");
    reports[0].take().expect("process 0 reports")
}

/// `--stats`'s census in either forest layout, on 1, 2 and 3 workers and on two processes: at
/// every epoch, the vertex set's size and the number of distinct present pairs `{u, v}`,
/// `u != v` (self-loops, parallel copies and direction ignored), as the oracle counts them.
/// With shares no forest sees every pair: the shares report their links to the union forest,
/// which has every present vertex.
#[test]
fn the_census_is_the_graphs_in_either_layout() {
    for seed in [61u64, 62, 63] {
        let s = adversarial_stream(seed, 30 + seed as usize % 5, 24, 200);
        let batch = 3 + seed as usize % 4;
        let want: Vec<(u64, u64)> = edge_counts_per_epoch(&rebatch(&s, batch))
            .iter()
            .map(|counts| {
                let (vertices, _) = oracle_input(&s.vertices, counts);
                let pairs: BTreeSet<(Node, Node)> =
                    counts.keys().filter(|(a, b)| a != b).map(|&(a, b)| (a.min(b), a.max(b))).collect();
                (vertices.len() as u64, pairs.len() as u64)
            })
            .collect();
        let check = |report: &driver::RunReport, what: &str| {
            let got: Vec<(u64, u64)> = report
                .epochs
                .iter()
                .map(|e| (e.vertices.expect("vertices counted"), e.edges.expect("edges counted")))
                .collect();
            assert_eq!(got, want, "seed {seed} batch {batch} {what}: (vertices, edges) per epoch");
        };
        for layout in [ForestLayout::Single, ForestLayout::Shares] {
            let wcc = WccDynamic::default().with_layout(layout);
            for workers in [1, 2, 3] {
                let files = Files::new();
                let mut options = RunOptions::memory(memory(&s, batch), workers);
                options.stats = Some(files.path("stats.json"));
                let report = driver::run(options, wcc.clone()).expect("run").expect("report");
                check(&report, &format!("{layout:?} workers {workers}"));
            }
            for workers in [1, 2] {
                let report = two_process_report(&s, batch, workers, wcc.clone(), None, true);
                check(&report, &format!("{layout:?} two processes of {workers} workers"));
            }
        }
    }
}

/// Two processes, 1 and 2 workers each, in either forest layout: process 0's change log equals
/// one worker's, which equals the oracle at every epoch; adversarial streams aim deletions at
/// forest edges, bridges and minimum-id vertices.
#[test]
fn two_processes_in_either_layout_write_one_workers_change_log() {
    for seed in [31u64, 32, 33] {
        let s = adversarial_stream(seed, 30 + seed as usize % 7, 24, 160);
        let batch = 2 + seed as usize % 5;
        let general = general_log_checked(&s, batch, seed);
        for workers in [1, 2] {
            for layout in [ForestLayout::Single, ForestLayout::Shares] {
                let log = two_process_log(&s, batch, workers, WccDynamic::default().with_layout(layout));
                assert!(
                    log == general,
                    "seed {seed} batch {batch} workers {workers} layout {layout:?}: two processes' change log differs"
                );
            }
        }
    }
}

/// Two processes reading files, where the driver places the edges by the layout's route: with
/// shares each process reads the whole edge file and keeps the pairs its workers' shares own,
/// and feeds of each epoch's updates the ones they own; with the single forest process 0 reads
/// and feeds everything and process 1 nothing (its input moves to the end at once). 1 and 2
/// workers each, on the dynamic path (adversarial streams) and on the insert-only path (which
/// keeps what each worker is fed); the change log equals one worker's general path, the
/// oracle's at every epoch.
#[test]
fn two_processes_reading_files_in_either_layout_write_one_workers_change_log() {
    for seed in [81u64, 82, 83] {
        let insert_only = seed == 83;
        let s = if insert_only {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut pick = || rng.gen_range(0..50u64);
            let initial: Vec<(Node, Node)> = (0..40).map(|_| (pick(), pick())).collect();
            let updates: Vec<Update> = (0..150).map(|_| Update::insert(pick(), pick())).collect();
            RandomStream { vertices: vec![], initial, epochs: vec![updates] }
        } else {
            adversarial_stream(seed, 30 + seed as usize % 7, 40, 160)
        };
        let batch = 2 + seed as usize % 5;
        let general = general_log_checked(&s, batch, seed);
        let files = Files::new();
        let source = write_stream_files(&files, &s, batch);
        for (workers, layout) in [1, 2].into_iter().flat_map(|w| [(w, ForestLayout::Single), (w, ForestLayout::Shares)])
        {
            let make = || RunOptions {
                source: driver::Source::Files(source.clone()),
                ..RunOptions::memory(driver::MemoryStream::default(), workers)
            };
            let wcc = Wcc.with_forest(ForestParams::default().with_layout(layout));
            let report = two_process_options_report(workers, wcc, None, false, make);
            let log = report.changes.expect("process 0 reports its change log");
            assert!(
                log == general,
                "seed {seed} batch {batch} workers {workers} {layout:?} insert-only {insert_only}: two processes' change log differs"
            );
        }
    }
}

/// A time limit on process 0 of a cluster whose process 1 runs ahead: the processes agree on
/// the last epoch, every epoch through it is fed by both completely, and the change log written
/// equals one worker's through that epoch (the oracle checks that log at every epoch). Before
/// they agreed, process 1 fed past process 0's last epoch and process 0 fed only its own claims.
/// Fixed seeds and limits; some runs must stop early or the test checks nothing.
#[test]
fn a_time_limited_cluster_writes_exact_epochs_through_its_last() {
    let mut stopped_early = 0;
    for seed in [51u64, 52, 53] {
        let s = adversarial_stream(seed, 40, 30, 600);
        let batch = 2 + seed as usize % 3;
        let epochs = 600usize.div_ceil(batch);
        let general = general_log_checked(&s, batch, seed);
        // Shares: a dataflow with round trips, whose workers feed epochs in groups, ahead.
        for (workers, layout) in [(1, ForestLayout::Single), (2, ForestLayout::Single), (1, ForestLayout::Shares)] {
            for limit_ms in [0u64, 2, 5, 20] {
                let limit = std::time::Duration::from_millis(limit_ms);
                let wcc = WccDynamic::default().with_layout(layout);
                let (log, last) = two_process_run(&s, batch, workers, wcc, Some(limit));
                stopped_early += usize::from(last < epochs as u64);
                let expected: Vec<Change> = general.iter().filter(|c| c.epoch <= last).cloned().collect();
                assert!(
                    log == expected,
                    "seed {seed} batch {batch} workers {workers} {layout:?} limit {limit_ms} ms (last epoch {last}): \
                     the change log differs from one worker's"
                );
            }
        }
        // From files, where the input is placed by the layout: with the single forest process 1
        // feeds nothing and its input is at the end from the start.
        let files = Files::new();
        let source = write_stream_files(&files, &s, batch);
        for (workers, layout) in [(1, ForestLayout::Single), (2, ForestLayout::Single), (1, ForestLayout::Shares)] {
            for limit_ms in [0u64, 5] {
                let make = || RunOptions {
                    source: driver::Source::Files(source.clone()),
                    ..RunOptions::memory(driver::MemoryStream::default(), workers)
                };
                let wcc = WccDynamic::default().with_layout(layout);
                let limit = Some(std::time::Duration::from_millis(limit_ms));
                let report = two_process_options_report(workers, wcc, limit, false, make);
                let last = report.epochs.last().expect("epoch 0 at least").epoch;
                stopped_early += usize::from(last < epochs as u64);
                let expected: Vec<Change> = general.iter().filter(|c| c.epoch <= last).cloned().collect();
                assert!(
                    report.changes.expect("process 0's change log") == expected,
                    "seed {seed} batch {batch} workers {workers} {layout:?} limit {limit_ms} ms from files (last epoch {last}): \
                     the change log differs from one worker's"
                );
            }
        }
    }
    assert!(stopped_early > 0, "no run stopped at its time limit: the test checks nothing");
}

/// `s` as an edge file, a vertex file (if it has vertices) and an update file, read in epochs of
/// `batch` updates.
fn write_stream_files(files: &Files, s: &RandomStream, batch: usize) -> driver::FileSource {
    let graph = files.path("graph.e");
    ripples::sources::write_edges(&graph, &s.initial).expect("edge file");
    let updates = files.path("updates.txt");
    let all: Vec<Update> = s.epochs.iter().flatten().copied().collect();
    ripples::sources::write_updates(&updates, &all).expect("update file");
    let vertices = (!s.vertices.is_empty()).then(|| files.path("vertices.txt"));
    if let Some(path) = &vertices {
        ripples::sources::write_vertices(path, &s.vertices).expect("vertex file");
    }
    driver::FileSource {
        graph: Some(graph),
        vertices,
        updates: Some(updates),
        batch: Some(batch),
        ..driver::FileSource::default()
    }
}

/// The insert-only fast path in two processes (its merge at the last worker of process 0): the
/// change log equals one worker's general path, checked against the oracle at every epoch.
#[test]
fn two_processes_on_the_insert_only_path_write_one_workers_change_log() {
    for seed in [41u64, 42] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ids: Vec<Node> = (0..40u64).map(|i| if i % 7 == 3 { (1 << 33) + i } else { i }).collect();
        let mut pick = || ids[rng.gen_range(0..ids.len())];
        let initial: Vec<(Node, Node)> = (0..20).map(|_| (pick(), pick())).collect();
        let updates: Vec<Update> = (0..120).map(|_| Update::insert(pick(), pick())).collect();
        let s = RandomStream { vertices: vec![5, 1 << 40], initial, epochs: vec![updates] };
        let batch = 3 + seed as usize % 4;
        let general = general_log_checked(&s, batch, seed);
        for workers in [1, 2] {
            let log = two_process_log(&s, batch, workers, Wcc);
            assert!(log == general, "seed {seed} batch {batch} workers {workers}: two processes' change log differs");
        }
    }
}
