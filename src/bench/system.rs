//! The [`System`] trait and the registry: every system `ripples bench` can measure, in one list
//! ([`all`]), looked up by name in one place ([`by_name`]).
//!
//! # Example
//!
//! ```
//! use ripples::bench::{system, Scenario};
//! assert!(system::names().contains(&"uf-hash"));
//! let uf = system::by_name("uf-hash").unwrap();
//! // Union-find handles insertions only; the defaults of a churn scenario leave it out.
//! assert!(uf.applies_to(&Scenario::new("wcc-insert").unwrap()));
//! assert!(!uf.applies_to(&Scenario::new("wcc-churn").unwrap()));
//! assert!(!system::defaults(&Scenario::new("wcc-churn").unwrap()).contains(&"uf-hash"));
//! assert!(system::by_name("spark").is_err());
//! ```

use std::time::Duration;

use super::scenario::{Scenario, Stream};
use super::systems;
use super::{BenchError, Measured};
use crate::dataflow::ValueFormat;
use crate::types::Node;

/// What a system's run leaves: its figures and its final result.
pub struct Outcome {
    /// The figures the system measured on its own run.
    pub measured: Measured,
    /// `(vertex, value)` per vertex, values as the dataflows emit them.
    pub state: Vec<(Node, u64)>,
    /// How the values are written to the result file the parent compares.
    pub format: ValueFormat,
}

/// How the table compares a system with `ripples` (the lines under the rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// Not compared.
    None,
    /// The system the others are compared with.
    Reference,
    /// `ripples / NAME: R x updates/s`; `line` orders these lines.
    Throughput {
        /// Position of this system's line among the throughput lines (smaller first).
        line: u8,
    },
    /// `NAME p50 / ripples p50: R x`.
    Latency,
}

/// One system: a way of maintaining the scenario's result over its stream.
pub trait System {
    /// The name on the command line (`--systems`), in the table and in the JSON.
    fn name(&self) -> &'static str;
    /// Whether the system handles this scenario.
    fn applies_to(&self, scenario: &Scenario) -> bool;
    /// Whether `ripples bench` measures it when `--systems` is not given.
    fn by_default(&self, scenario: &Scenario) -> bool {
        self.applies_to(scenario)
    }
    /// How the table compares it with `ripples`.
    fn comparison(&self) -> Comparison {
        Comparison::None
    }
    /// Runs the stream in this process, spending at most about `limit` on the updates.
    fn run(&self, scenario: &Scenario, stream: Stream, limit: Duration) -> Result<Outcome, BenchError>;
}

/// Every system, in the order of the default lists and of `unknown system` messages.
pub fn all() -> Vec<Box<dyn System>> {
    vec![
        Box::new(systems::dataflow::Ripples),
        Box::new(systems::window::RipplesWindow),
        Box::new(systems::dataflow::RipplesGeneral),
        Box::new(systems::dataflow::DdPropagate),
        Box::new(systems::union_find::UfHash),
        Box::new(systems::union_find::UfDense),
        Box::new(systems::recompute::Recompute),
    ]
}

/// The names of [`all`].
pub fn names() -> Vec<&'static str> {
    all().iter().map(|s| s.name()).collect()
}

/// The system called `name`.
pub fn by_name(name: &str) -> Result<Box<dyn System>, BenchError> {
    all().into_iter().find(|s| s.name() == name).ok_or_else(|| BenchError::UnknownSystem(name.to_string()))
}

/// The systems measured on `scenario` by default.
pub fn defaults(scenario: &Scenario) -> Vec<&'static str> {
    all().iter().filter(|s| s.by_default(scenario)).map(|s| s.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_and_default_lists() {
        assert_eq!(
            names(),
            ["ripples", "ripples-window", "ripples-general", "dd-propagate", "uf-hash", "uf-dense", "recompute"]
        );
        let defaults_of = |name: &str| defaults(&Scenario::new(name).unwrap());
        assert_eq!(defaults_of("wcc-insert"), ["ripples", "ripples-general", "dd-propagate", "uf-hash", "uf-dense"]);
        assert_eq!(
            defaults_of("wcc-window"),
            ["ripples", "ripples-window", "ripples-general", "dd-propagate", "recompute"]
        );
        assert_eq!(defaults_of("wcc-churn"), ["ripples", "ripples-general", "dd-propagate", "recompute"]);
        for churn in super::super::SCENARIOS.iter().filter(|s| s.ends_with("-churn") && **s != "wcc-churn") {
            assert_eq!(defaults_of(churn), ["ripples", "recompute"], "{}", churn);
        }
        assert_eq!(
            by_name("nope").err().unwrap().to_string(),
            "unknown system 'nope' (known: ripples, ripples-window, ripples-general, dd-propagate, uf-hash, uf-dense, recompute)"
        );
    }
}
