//! The [`System`] trait: a way of maintaining a scenario's result over its stream, what a run of
//! one leaves ([`Outcome`]) and how the table compares it ([`Comparison`]). The systems and their
//! registry are in [`systems`](super::systems).

use std::time::Duration;

use super::scenario::{Scenario, Stream};
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
