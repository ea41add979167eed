//! The **dataflow** layer: algorithms as differential dataflows over the edge collection.
//!
//! Every algorithm implements [`Algorithm`]: given the graph's input collections at one worker
//! ([`GraphInput`]) it builds a differential dataflow whose output is a [`ResultCollection`], a
//! collection of `(key, value)` pairs (for vertex algorithms: `(vertex, value)`). The driver
//! (`crate::driver`) feeds the inputs epoch by epoch and the sinks (`crate::sinks`) turn the
//! output's changes into result files, change logs and statistics.
//!
//! Values are `u64`. Algorithms with floating-point results store the `f64`'s bit pattern, which
//! makes a retraction bit-exact, and say so through [`ValueFormat`].
//!
//! A user's own dataflow plugs in through [`custom`]: a closure from [`GraphInput`] to a
//! [`ResultCollection`] gets the same driver, flags, outputs and metrics as the built-in ones.

pub mod wcc;

use differential_dataflow::VecCollection;

use crate::types::{Diff, Edge, Node, Time};

/// The (only) timestamp type of every ripples dataflow: the epoch.
pub type Scope<'a> = timely::dataflow::Scope<'a, Time>;
/// The edge multiset: one `(src, dst, weight bits)` record per copy.
pub type EdgeCollection<'a> = VecCollection<'a, Time, Edge, Diff>;
/// A collection of vertex ids.
pub type NodeCollection<'a> = VecCollection<'a, Time, Node, Diff>;
/// An algorithm's output: `(key, value)` pairs; for vertex algorithms `(vertex, value)`.
pub type ResultCollection<'a> = VecCollection<'a, Time, (Node, u64), Diff>;

/// The input collections an algorithm is built from.
#[derive(Clone)]
pub struct GraphInput<'a> {
    /// The edge multiset (every copy of every edge, with its weight bits).
    pub edges: EdgeCollection<'a>,
    /// The vertices named by the vertex file, if one was given (empty otherwise). The vertex set
    /// of an epoch is these vertices together with the endpoints of the edges present.
    pub vertices: NodeCollection<'a>,
}

impl<'a> GraphInput<'a> {
    /// The vertex set: vertex-file vertices ∪ endpoints of present edges, each once.
    pub fn vertex_set(&self) -> NodeCollection<'a> {
        self.edges
            .clone()
            .flat_map(|(s, d, _)| [s, d])
            .concat(self.vertices.clone())
            .distinct()
    }
}

/// How the `u64` values of a result are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueFormat {
    /// An unsigned integer.
    Integer,
    /// The bit pattern of an `f64`, written in Rust's shortest round-trip form; infinity is written
    /// `infinity`.
    Float,
}

impl ValueFormat {
    /// Writes `value` in this format.
    pub fn write(&self, value: u64, out: &mut String) {
        use std::fmt::Write;
        match self {
            ValueFormat::Integer => {
                let _ = write!(out, "{}", value);
            }
            ValueFormat::Float => out.push_str(&format_f64(f64::from_bits(value))),
        }
    }
}

/// Rust's shortest representation that parses back to exactly the same `f64` (`{:e}` form, e.g.
/// `1.4776291666666667e-1`), `0` for zero, `infinity` for +∞, `-infinity` for −∞, `NaN` for NaN.
pub fn format_f64(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x == f64::INFINITY {
        "infinity".to_string()
    } else if x == f64::NEG_INFINITY {
        "-infinity".to_string()
    } else if x == 0.0 {
        "0".to_string()
    } else {
        format!("{:e}", x)
    }
}

/// An incremental computation over a graph stream.
pub trait Algorithm: Send + Sync + 'static {
    /// Short name (used in messages and file names).
    fn name(&self) -> String;
    /// Builds the dataflow at one worker.
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a>;
    /// How values are written.
    fn value_format(&self) -> ValueFormat {
        ValueFormat::Integer
    }
}

/// A user-defined algorithm: a name, a closure that builds the dataflow, and a value format.
pub struct Custom<F> {
    name: String,
    build: F,
    format: ValueFormat,
}

/// Wraps a closure as an [`Algorithm`], so that a user's own dataflow runs under the same driver,
/// flags, outputs and metrics as the built-in algorithms.
///
/// ```no_run
/// let degrees = ripples::dataflow::custom("out-degree", |input| {
///     input.edges.map(|(src, _dst, _w)| src).count().map(|(v, d)| (v, d as u64))
/// });
/// ```
pub fn custom<F>(name: &str, build: F) -> Custom<F>
where
    F: for<'a> Fn(GraphInput<'a>) -> ResultCollection<'a> + Send + Sync + 'static,
{
    Custom { name: name.to_string(), build, format: ValueFormat::Integer }
}

impl<F> Custom<F> {
    /// Sets how values are written (default: integers).
    pub fn with_format(mut self, format: ValueFormat) -> Self {
        self.format = format;
        self
    }
}

impl<F> Algorithm for Custom<F>
where
    F: for<'a> Fn(GraphInput<'a>) -> ResultCollection<'a> + Send + Sync + 'static,
{
    fn name(&self) -> String {
        self.name.clone()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        (self.build)(input)
    }
    fn value_format(&self) -> ValueFormat {
        self.format
    }
}

/// The names of the built-in algorithms `ripples run` accepts.
pub const ALGORITHMS: &[&str] = &["wcc"];

/// Parameters of the built-in algorithms, as given on the command line.
#[derive(Clone, Debug, Default)]
pub struct Params {
    pub source: Option<Node>,
    pub undirected: bool,
    pub iterations: Option<u32>,
    pub damping: Option<f64>,
}

/// Looks up a built-in algorithm by name.
pub fn by_name(name: &str, _params: &Params) -> anyhow::Result<Box<dyn Algorithm>> {
    match name {
        "wcc" => Ok(Box::new(wcc::Wcc)),
        other => anyhow::bail!(
            "unknown algorithm '{}' (known: {})",
            other,
            ALGORITHMS.join(", ")
        ),
    }
}

impl Algorithm for Box<dyn Algorithm> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        (**self).build(input)
    }
    fn value_format(&self) -> ValueFormat {
        (**self).value_format()
    }
}
