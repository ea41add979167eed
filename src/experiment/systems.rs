//! The systems an experiment runs its cells on ([`System`]): `ripples` (and `ripples-shares`,
//! WCC with its per-worker forests), the systems of
//! `ripples bench` as `bench:NAME` (`bench:uf-dense`, `bench:recompute`, `bench:dd-propagate`,
//! `bench:ripples-general`, ...) and the user's `[commands.NAME]` tables.
//!
//! A name is read once, from the experiment file ([`System::parse`]) or a record
//! ([`System::named`]); the rest of the experiment matches on the variant. A `bench:` system
//! applies to a cell as it applies to the bench scenario of the same algorithm and stream shape
//! (`wcc-insert` for insert-only streams of WCC, `ALGORITHM-churn` otherwise, [`scenario`]);
//! event-time streams and `ripples-window` (a bench scenario of its own) are not offered.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::bench::{self, Scenario};

/// The prefix of a bench system's name in an experiment file.
pub const PREFIX: &str = "bench:";

/// The name of the built-in system: `ripples run` in a child process.
pub const RIPPLES: &str = "ripples";

/// The built-in system with WCC's fully dynamic path spread over the workers: `ripples run
/// --wcc-layout shares` (for WCC only).
pub const RIPPLES_SHARES: &str = "ripples-shares";

/// The bench systems that run on one thread whatever `-w` says: the sequential baselines of a
/// COST figure.
pub const SEQUENTIAL: &[&str] = &["uf-hash", "uf-dense", "recompute"];

/// A system of an experiment. Written (in the experiment file, records, CSV files and the
/// report) as its name: `ripples`, `bench:NAME` or the command's name; ordered by that name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum System {
    /// `ripples`: `ripples run` in a child process.
    Ripples,
    /// `ripples-shares`: `ripples run wcc --wcc-layout shares` in a child process.
    RipplesShares,
    /// `bench:NAME`: the system NAME of `ripples bench` (the name without [`PREFIX`]), run by
    /// `ripples experiment system` in the cell's child process.
    Bench(String),
    /// A `[commands.NAME]` table's name: the user's command line.
    Command(String),
}

impl System {
    /// The system a name written by this module stands for, unchecked: `ripples`, `bench:NAME`,
    /// any other name a command's.
    pub fn named(name: &str) -> System {
        if name == RIPPLES {
            System::Ripples
        } else if name == RIPPLES_SHARES {
            System::RipplesShares
        } else if let Some(bench) = name.strip_prefix(PREFIX) {
            System::Bench(bench.to_string())
        } else {
            System::Command(name.to_string())
        }
    }

    /// The system `name` names in an experiment file with these `[commands.NAME]` tables, if it
    /// is one of [`System::known`].
    pub fn parse(name: &str, commands: &BTreeMap<String, Vec<String>>) -> Option<System> {
        System::known(commands).iter().any(|k| k == name).then(|| System::named(name))
    }

    /// The names an experiment file may give: `ripples`, the bench systems ([`bench_names`]) with
    /// their prefix, the commands' names.
    pub fn known(commands: &BTreeMap<String, Vec<String>>) -> Vec<String> {
        let mut known = vec![RIPPLES.to_string(), RIPPLES_SHARES.to_string()];
        known.extend(bench_names().into_iter().map(|n| format!("{PREFIX}{n}")));
        known.extend(commands.keys().cloned());
        known
    }

    /// Whether this is a sequential bench system ([`SEQUENTIAL`]).
    pub fn sequential(&self) -> bool {
        matches!(self, System::Bench(name) if SEQUENTIAL.contains(&name.as_str()))
    }

    /// Whether this is `ripples run` (either layout): the systems that sweep `processes`.
    pub fn is_ripples(&self) -> bool {
        matches!(self, System::Ripples | System::RipplesShares)
    }

    /// Whether the system runs `algorithm` over `stream` (every system but a bench system does;
    /// `ripples-shares` runs WCC only).
    pub fn applies(&self, algorithm: &str, stream: &str) -> bool {
        if *self == System::RipplesShares {
            return algorithm == "wcc";
        }
        let System::Bench(name) = self else { return true };
        if stream.starts_with("event-") || algorithm == "bfs" || algorithm == "sssp" {
            // No event times in a bench stream; bench picks its own BFS/SSSP source.
            return false;
        }
        bench::systems::by_name(name).is_ok_and(|s| s.applies_to(&scenario(algorithm, stream, 1, 1, 1.0)))
    }
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            System::Ripples => f.write_str(RIPPLES),
            System::RipplesShares => f.write_str(RIPPLES_SHARES),
            System::Bench(name) => write!(f, "{PREFIX}{name}"),
            System::Command(name) => f.write_str(name),
        }
    }
}

impl From<System> for String {
    fn from(system: System) -> String {
        system.to_string()
    }
}

impl From<String> for System {
    fn from(name: String) -> System {
        System::named(&name)
    }
}

impl PartialOrd for System {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for System {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

/// The bench systems an experiment may name (without [`PREFIX`]).
pub fn bench_names() -> Vec<&'static str> {
    bench::systems::names().into_iter().filter(|n| *n != "ripples-window").collect()
}

/// Stream kinds whose updates only insert.
fn insert_only(stream: &str) -> bool {
    matches!(stream, "insert" | "insert-random" | "timestamp" | "bulk")
}

/// The bench scenario a cell of `algorithm` over `stream` corresponds to.
pub fn scenario(algorithm: &str, stream: &str, workers: usize, batch: usize, time_limit_secs: f64) -> Scenario {
    let name =
        if algorithm == "wcc" && insert_only(stream) { "wcc-insert".into() } else { format!("{algorithm}-churn") };
    Scenario {
        name,
        scale: 0,
        edge_factor: 0,
        batch,
        window: 0,
        epochs: 0,
        seed: 0,
        workers,
        time_limit_secs,
        profile: None,
    }
}

#[cfg(test)]
mod tests {
    use super::System;

    #[test]
    fn sequential_systems_exist() {
        let none = Default::default();
        for s in super::SEQUENTIAL {
            assert!(System::known(&none).contains(&format!("bench:{s}")), "{s}");
            assert!(System::named(&format!("bench:{s}")).sequential());
        }
        assert!(
            !System::named("ripples").sequential()
                && !System::named("bench:ripples").sequential()
                && !System::named("uf-hash").sequential()
        );
    }

    #[test]
    fn names_round_trip() {
        for name in ["ripples", "bench:uf-dense", "mine"] {
            let system = System::named(name);
            assert_eq!(system.to_string(), name);
            assert_eq!(serde_json::to_string(&system).unwrap(), format!("{name:?}"));
            assert_eq!(serde_json::from_str::<System>(&format!("{name:?}")).unwrap(), system);
        }
        assert_eq!(System::named("bench:uf-dense"), System::Bench("uf-dense".into()));
        let commands = [("mine".to_string(), vec!["true".to_string()])].into();
        assert_eq!(System::parse("mine", &commands), Some(System::Command("mine".into())));
        assert_eq!(System::parse("bench:ripples-window", &commands), None);
        assert_eq!(System::parse("theirs", &commands), None);
    }
}
