use std::collections::{BTreeMap, HashMap};

use super::*;
use crate::oracle;
use crate::types::Node;

/// A small wcc-churn: 2^8 vertex ids, 16 * 2^8 edges, then `epochs` epochs of 200 deletions and
/// 200 insertions.
fn small(seed: u64, epochs: usize) -> Scenario {
    Scenario { scale: 8, batch: 200, epochs, seed, ..Scenario::new("wcc-churn").unwrap() }
}

/// The components of the live edge multiset `counts`, by the plain oracle.
fn oracle_labels(counts: &HashMap<(Node, Node), i64>) -> BTreeMap<Node, Node> {
    let edges: Vec<oracle::WeightedEdge> = counts.iter().filter(|c| *c.1 > 0).map(|(&(a, b), _)| (a, b, 1.0)).collect();
    oracle::wcc(&oracle::vertex_set([], &edges), &edges)
}

/// K = 1, 2, 3, 5 shares: at every epoch the union forest's labels are the oracle's over the
/// live edges, and every share's time is recorded (K entries, records routed to the share
/// `pair_share` names, all of them).
#[test]
fn union_of_shares_equals_the_oracle_at_every_epoch() {
    for seed in [1u64, 2, 3] {
        let scenario = small(seed, 5);
        let stream = scenario.stream();
        for k in [1usize, 2, 3, 5] {
            let mut forests = ShardedForests::new(k, DEFAULT_BUDGET);
            let mut counts: HashMap<(Node, Node), i64> = HashMap::new();
            for (epoch, records) in epochs(&stream).enumerate() {
                let what = format!("seed {seed} shares {k} epoch {epoch}");
                for &(a, b, d) in &records {
                    *counts.entry((a, b)).or_insert(0) += d as i64;
                }
                let fed = records.len();
                let work = forests.apply(records).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(work.shares.len(), k, "{what}: one time per share");
                assert!(work.shares.iter().all(|s| s.cpu >= 0.0 && s.wall >= 0.0), "{what}");
                assert_eq!(work.share_records.len(), k, "{what}");
                assert_eq!((work.records, work.share_records.iter().sum::<usize>()), (fed, fed), "{what}");
                assert!(work.critical_secs() <= work.work_secs() + 1e-12, "{what}");
                let got: BTreeMap<Node, Node> = forests.labels().map().iter().map(|(&v, &l)| (v, l)).collect();
                assert_eq!(got, oracle_labels(&counts), "{what}");
            }
            assert_eq!(forests.share_links().len(), k, "seed {seed} shares {k}");
        }
    }
}

/// The whole sweep: per K, K per-share times and one series entry per churn epoch; the union's
/// labels were checked against one forest's (the run did not fail); the JSON reads back.
#[test]
fn sweep_reports_every_share_and_epoch() {
    let seed = 4;
    let scenario = small(seed, 4);
    let report = run_shards(&scenario, &[1, 2, 3, 5]).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert_eq!(report.runs.iter().map(|r| r.shares).collect::<Vec<_>>(), [1, 2, 3, 5]);
    for r in &report.runs {
        let what = format!("seed {seed} shares {}", r.shares);
        assert_eq!((r.share_churn_ms.len(), r.share_links.len()), (r.shares, r.shares), "{what}");
        assert_eq!((r.initial.epochs, r.churn.epochs, r.churn.records), (1, 4, 4 * 400), "{what}");
        assert_eq!((r.churn_max_share_ms.len(), r.churn_union_ms.len(), r.churn_union_records.len()), (4, 4, 4));
        assert_eq!(r.initial.records, 16 << 8, "{what}");
        let p = &r.churn;
        assert!((p.critical_ms - (p.max_share_ms + p.union_ms)).abs() < 1e-6, "{what}");
        assert!(p.max_share_ms <= p.shares_ms + 1e-9 && p.imbalance >= 1.0 - 1e-9, "{what}");
        assert!(p.imbalance <= r.shares as f64 + 1e-9, "{what}");
    }
    // One share: the union forest gets that share's forest and presence changes only.
    assert!((report.runs[0].initial.imbalance - 1.0).abs() < 1e-9);
    assert_eq!(report.one_forest.churn_epoch_ms.len(), 4);
    let json = serde_json::to_string(&report).unwrap();
    let back: ShardsReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.runs[3].share_links, report.runs[3].share_links);
    let text = table(&report);
    assert_eq!(text.lines().filter(|l| l.trim_start().starts_with("5 ")).count(), 2, "{text}");
}

#[test]
fn refuses_other_algorithms_and_no_shares() {
    let churn = small(1, 1);
    assert!(run_shards(&churn, &[]).is_err());
    assert!(run_shards(&churn, &[2, 0]).unwrap_err().to_string().contains("at least 1"));
    let bfs = Scenario { scale: 4, ..Scenario::new("bfs-churn").unwrap() };
    assert!(run_shards(&bfs, &[2]).unwrap_err().to_string().contains("not a WCC scenario"));
}

/// Label changes that do not fit the labels held are errors; equal maps have no difference.
#[test]
fn labels_check_their_changes() {
    let mut a = Labels::default();
    a.absorb(&[((1, 1), 1), ((2, 1), 1)], "a").unwrap();
    assert!(a.absorb(&[((2, 2), -1)], "a").is_err(), "retracts a label 2 does not have");
    let mut b = Labels::default();
    b.absorb(&[((2, 1), 1), ((1, 1), 1)], "b").unwrap();
    assert!(b.absorb(&[((1, 3), 1)], "b").is_err(), "a second label");
    let mut c = Labels::default();
    c.absorb(&[((1, 1), 1), ((2, 1), 1)], "c").unwrap();
    assert_eq!(a.first_difference(&c), None);
    c.absorb(&[((2, 1), -1), ((2, 2), 1), ((3, 3), 1)], "c").unwrap();
    assert_eq!(a.first_difference(&c), Some((2, Some(1), Some(2))));
}
