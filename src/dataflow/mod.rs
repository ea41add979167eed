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
//! [`ResultCollection`] gets the same driver, flags, outputs and metrics as the built-in ones;
//! through [`typed`](mod@typed) its outputs may have any key and value types, several names,
//! and errors the driver reports.

pub mod arrivals;
pub mod bfs;
pub mod bipartite;
pub mod cdlp;
mod counts;
pub mod degree;
pub mod gather;
pub(crate) mod id_index;
pub mod kcore;
pub mod lcc;
pub mod matching;
pub mod pagerank;
pub mod pair_changes;
pub mod registry;
pub mod scc;
mod slab;
pub mod spanner;
pub mod sssp;
pub(crate) mod time_stash;
pub mod triangles;
pub mod typed;
pub mod union_find;
pub mod wcc;
pub mod wcc_dynamic;

pub use counts::AlgorithmCounts;

use crate::types::{Diff, Edge, Node, Time};
use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::trace::TraceReader;
use differential_dataflow::VecCollection;

/// The edge multiset: one `(src, dst, weight bits)` record per copy.
pub type EdgeCollection<'a> = VecCollection<'a, Time, Edge, Diff>;
/// A collection of vertex ids.
pub type NodeCollection<'a> = VecCollection<'a, Time, Node, Diff>;
/// A collection of `(src, dst)` pairs: the edge set without weights.
pub type PairCollection<'a> = VecCollection<'a, Time, (Node, Node), Diff>;
/// An algorithm's output: `(key, value)` pairs; for vertex algorithms `(vertex, value)`.
pub type ResultCollection<'a> = VecCollection<'a, Time, (Node, u64), Diff>;
/// Where an update stands in the stream's arrival order: `(epoch, worker, index)` — the epoch
/// it arrived in, the (global) index of the worker that fed it, and its index among that
/// worker's updates of the epoch. Every source hands each worker a contiguous slice of each
/// epoch, in worker order, so positions in lexicographic order are the stream's order: epoch
/// order, then file (or arrival) order within an epoch.
pub type Position = (Time, u64, u64);
/// Every edge copy the stream inserted, with its [`Position`] ([`GraphInput::arrivals`]).
pub type ArrivalCollection<'a> = VecCollection<'a, Time, (Position, Edge), Diff>;

/// The records of the run's record input, as their text ([`GraphInput::records`]).
pub type RecordCollection<'a> = VecCollection<'a, Time, String, Diff>;

/// Collections derived from the input that several algorithms of one run share (built on first
/// use; later users get the same arrangement).
#[derive(Default)]
struct SharedIndex<'a> {
    vertex_set: Option<NodeCollection<'a>>,
    edge_set: [Option<PairCollection<'a>>; 2],
    /// The well-known arrangements, by [`registry::Orientation::index`].
    arranged: [Option<wcc::ArrangedPairs<'a, Time>>; 3],
    /// Arrangements by name ([`GraphInput::register`], [`GraphInput::lookup`]).
    registry: registry::Registry,
}

/// The input collections an algorithm is built from.
///
/// The derived collections [`GraphInput::vertex_set`] and [`GraphInput::edge_set`] are built once
/// per dataflow and shared: when one run maintains several algorithms
/// (`ripples run wcc,bfs,pagerank`), they all read the same `distinct` arrangements.
#[derive(Clone)]
pub struct GraphInput<'a> {
    /// The edge multiset (every copy of every edge, with its weight bits).
    pub edges: EdgeCollection<'a>,
    /// The vertices named by the vertex file, if one was given (empty otherwise). The vertex set
    /// of an epoch is these vertices together with the endpoints of the edges present.
    pub vertices: NodeCollection<'a>,
    /// True when the driver knows that the stream never deletes an edge (every update file line
    /// is an insertion, or live input declared `--insert-only`); algorithms may then choose an
    /// insert-only fast path. A deletion reaching such a dataflow is a bug in the driver.
    pub insert_only: bool,
    /// `Some(span)` when the driver guarantees that every edge copy entering at time `t` is
    /// retracted at exactly `t + span` (and never otherwise): an event-time window without static
    /// edges. Algorithms may then use the expiry they know in advance (none of the built-in ones
    /// does: WCC's fully dynamic path is faster on windows than a forest that maximises expiry).
    pub edge_lifetime: Option<Time>,
    /// The inserted edge copies with their positions in the stream, for the algorithms whose
    /// result depends on arrival order ([`Algorithm::arrival_order`]); the driver feeds it only
    /// when one of them runs (`None` otherwise), always over insert-only unwindowed streams.
    pub arrivals: Option<ArrivalCollection<'a>>,
    /// The run's record input: the text of every record accepted from live input (`record +
    /// TEXT` lines, `Job::push_record`), each entering at its epoch and fed once (by the first
    /// worker of process 0); the driver feeds it only when an algorithm reads records
    /// ([`Algorithm::record_check`]), `None` otherwise.
    pub records: Option<RecordCollection<'a>>,
    /// In a cluster, the number of workers in each process (workers `0..w` are process 0's):
    /// an algorithm may then keep a stage that meets worker 0's output in process 0, so that
    /// no epoch waits for a network round trip. `None` in one process (or when unknown).
    pub process_workers: Option<usize>,
    counts: Option<AlgorithmCounts>,
    shared: std::rc::Rc<std::cell::RefCell<SharedIndex<'a>>>,
}

impl<'a> GraphInput<'a> {
    /// The input of a dataflow: the edge multiset, the vertex-file vertices, and whether the
    /// stream is known to be insert-only.
    pub fn new(edges: EdgeCollection<'a>, vertices: NodeCollection<'a>, insert_only: bool) -> Self {
        GraphInput {
            edges,
            vertices,
            insert_only,
            edge_lifetime: None,
            arrivals: None,
            records: None,
            process_workers: None,
            counts: None,
            shared: Default::default(),
        }
    }

    /// Attaches the edge copies in arrival order (see [`GraphInput::arrivals`]).
    pub fn with_arrivals(mut self, arrivals: Option<ArrivalCollection<'a>>) -> Self {
        self.arrivals = arrivals;
        self
    }

    /// Attaches the run's record input (see [`GraphInput::records`]).
    pub fn with_records(mut self, records: Option<RecordCollection<'a>>) -> Self {
        self.records = records;
        self
    }

    /// Attaches the counters in which algorithms report per-time counts to the driver (its
    /// `--stats`; see [`AlgorithmCounts`]).
    pub fn with_counts(mut self, counts: Option<AlgorithmCounts>) -> Self {
        self.counts = counts;
        self
    }

    /// The counters attached by [`GraphInput::with_counts`], if any.
    pub fn counts(&self) -> Option<&AlgorithmCounts> {
        self.counts.as_ref()
    }

    /// Declares that every edge copy entering at `t` is retracted at exactly `t + span` (see
    /// [`GraphInput::edge_lifetime`]).
    pub fn with_edge_lifetime(mut self, span: Option<Time>) -> Self {
        self.edge_lifetime = span;
        self
    }

    /// Declares the workers of each process of a cluster (see [`GraphInput::process_workers`]).
    pub fn with_process_workers(mut self, workers: Option<usize>) -> Self {
        self.process_workers = workers;
        self
    }

    /// The set of present edges as `(src, dst)` pairs, each once (multiplicities and weights
    /// dropped); with `undirected`, every edge in both directions. Self-loops are kept.
    pub fn edge_set(&self, undirected: bool) -> VecCollection<'a, Time, (Node, Node), Diff> {
        if let Some(c) = &self.shared.borrow().edge_set[undirected as usize] {
            return c.clone();
        }
        let edges = self.edges.clone().map(|(s, d, _)| (s, d));
        let edges = if undirected { edges.clone().concat(edges.map(|(s, d)| (d, s))) } else { edges };
        let set = edges.distinct();
        self.shared.borrow_mut().edge_set[undirected as usize] = Some(set.clone());
        set
    }

    /// Whether [`GraphInput::edge_set`] (with `undirected`) was built already (by an algorithm
    /// of this dataflow): using it then costs nothing more.
    pub fn has_edge_set(&self, undirected: bool) -> bool {
        self.shared.borrow().edge_set[undirected as usize].is_some()
    }

    /// Whether [`GraphInput::vertex_set`] was built already.
    pub fn has_vertex_set(&self) -> bool {
        self.shared.borrow().vertex_set.is_some()
    }

    /// The vertex set: vertex-file vertices ∪ endpoints of present edges, each once.
    pub fn vertex_set(&self) -> NodeCollection<'a> {
        if let Some(c) = &self.shared.borrow().vertex_set {
            return c.clone();
        }
        let set = self.edges.clone().flat_map(|(s, d, _)| [s, d]).concat(self.vertices.clone()).distinct();
        self.shared.borrow_mut().vertex_set = Some(set.clone());
        set
    }

    /// The present edge set without self-loops (each `(src, dst)` pair once), **arranged**: by
    /// source ([`Orientation::Out`](registry::Orientation::Out)), by destination (`In`, the pairs
    /// reversed), or in both directions (`Undirected`). Built on first use from
    /// [`GraphInput::edge_set`] and shared: every later caller, and every
    /// [`lookup`](GraphInput::lookup) of its name ([`registry::EDGES_OUT`], ...), reads the same
    /// trace. This is the index the `_arranged` rungs ([`pagerank::ranks_arranged`],
    /// [`cdlp::labels_arranged`], [`lcc::coefficients_arranged`],
    /// [`scc::strong_components_arranged`], [`wcc::components_arranged`]) take.
    pub fn arranged_edge_set(&self, orientation: registry::Orientation) -> wcc::ArrangedPairs<'a, Time> {
        if let Some(a) = &self.shared.borrow().arranged[orientation.index()] {
            return a.clone();
        }
        let set = self.edge_set(orientation == registry::Orientation::Undirected).filter(|(s, d)| s != d);
        let set = if orientation == registry::Orientation::In { set.map(|(s, d)| (d, s)) } else { set };
        let arranged = set.arrange_by_key_named(&format!("Arrange: {}", orientation.name()));
        let mut shared = self.shared.borrow_mut();
        shared.arranged[orientation.index()] = Some(arranged.clone());
        shared.registry.insert(orientation.name(), &arranged).expect("a well-known name is registered once");
        arranged
    }

    /// Shares `arranged` under `name` with every later [`lookup`](GraphInput::lookup) in this
    /// dataflow — a user's dataflow or a built-in one. Fails (and registers nothing) if the
    /// name is taken, including by a well-known name ([`registry::WELL_KNOWN`]).
    pub fn register<Tr>(
        &self,
        name: &str,
        arranged: &Arranged<'a, TraceAgent<Tr>>,
    ) -> Result<(), registry::RegistryError>
    where
        Tr: TraceReader + 'static,
    {
        if registry::Orientation::of_name(name).is_some() {
            return Err(registry::RegistryError::Taken(name.to_string()));
        }
        self.shared.borrow_mut().registry.insert(name, arranged)
    }

    /// The arrangement registered under `name`, as the arrangement type `A` (for the well-known
    /// names, [`wcc::ArrangedPairs`]`<Time>`): the same trace, imported into this dataflow's scope
    /// by one source operator (no copy, no second index). A well-known name not built yet is
    /// built now. Fails with [`RegistryError::Unknown`](registry::RegistryError::Unknown) for a
    /// name nobody registered and [`RegistryError::WrongType`](registry::RegistryError::WrongType)
    /// when the arrangement under it has another type.
    pub fn lookup<A>(&self, name: &str) -> Result<A, registry::RegistryError>
    where
        A: registry::SharedArrangement<'a>,
        A::Trace: TraceReader<Time = Time>,
    {
        if let Some(orientation) = registry::Orientation::of_name(name) {
            if !self.shared.borrow().registry.contains(name) {
                self.arranged_edge_set(orientation);
            }
        }
        let mut agent = self.shared.borrow().registry.agent::<A::Trace>(name)?;
        Ok(A::from_imported(agent.import_named(self.edges.scope(), &format!("Shared: {}", name))))
    }
}

pub use crate::types::format::{format_f64, ValueFormat};

/// An incremental computation over a graph stream.
pub trait Algorithm: Send + Sync + 'static {
    /// Short name (used in messages and file names).
    fn name(&self) -> String;
    /// Builds the dataflow at one worker.
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a>;
    /// Builds the dataflow's outputs at one worker; the driver calls this. The default is the
    /// single `(vertex, u64)` output of [`Algorithm::build`]; a [`typed::typed`] dataflow has named
    /// outputs of its own types and errors, and may fail to build (the message is reported as
    /// [`RunError::Build`](crate::driver::RunError::Build)).
    fn build_outputs<'a>(&self, input: GraphInput<'a>) -> Result<typed::Outputs<'a>, String> {
        Ok(typed::Outputs::of_vertex(self.build(input), self.value_format()))
    }
    /// How values are written.
    fn value_format(&self) -> ValueFormat {
        ValueFormat::Integer
    }
    /// True when the result depends on the order in which edges arrive (`spanner`, `matching`):
    /// the algorithm reads [`GraphInput::arrivals`], and the driver refuses, before anything
    /// runs, a stream that deletes edges or is windowed.
    fn arrival_order(&self) -> bool {
        false
    }
    /// The check each record of the run's record input must pass, when this algorithm reads
    /// records ([`GraphInput::records`]; typed dataflows: [`typed::Typed::with_records`]);
    /// `None` (the default): it reads none. The driver then feeds the record input and accepts
    /// `record + TEXT` lines on live input.
    fn record_check(&self) -> Option<crate::types::RecordCheck> {
        None
    }
    /// The parameters that shape this algorithm's dataflow, as text (empty: none). The
    /// processes of a cluster must build the same dataflow: before anything is loaded, every
    /// process compares its algorithms' names and parameters with process 0's and stops on a
    /// difference.
    fn parameters(&self) -> String {
        String::new()
    }
    /// True when an epoch's work crosses between the workers more than once on its way to the
    /// output (a round trip: e.g. per-worker forests whose changes meet at worker 0 once the
    /// frontier has reached every worker). In a cluster the driver then keeps a few epochs in
    /// flight at the writer, so that the round trips overlap the next epochs' work (more
    /// throughput, each epoch's latency then counting the epochs ahead of it). `insert_only`:
    /// the stream never deletes (see [`GraphInput::insert_only`]). Default: false.
    fn round_trips(&self, insert_only: bool) -> bool {
        let _ = insert_only;
        false
    }
    /// The worker to which this algorithm's dataflow sends each input edge `(s, d)` first, if it
    /// does so with every edge of a stream that is `insert_only` (see
    /// [`GraphInput::insert_only`]) or not (`None`, the default: it does not, or keeps edges
    /// where they are fed). In a cluster the driver then feeds each edge at a
    /// worker of the process of that worker (every process reads the whole edge file and keeps
    /// its own edges, and the same of every epoch's updates), so no input edge crosses the
    /// network, and neither the sending processes nor the receiving ones hold the edges in
    /// transit. Only a placement: what the workers feed together is the same, so the results
    /// are too.
    fn input_route(&self, insert_only: bool) -> Option<InputRoute> {
        let _ = insert_only;
        None
    }
}

/// How an algorithm routes its input edges to workers ([`Algorithm::input_route`]).
#[derive(Clone, Copy, Debug)]
pub enum InputRoute {
    /// Every edge to worker 0 (a single forest's): in a cluster, process 0 reads the whole
    /// edge file and feeds every update, and the other processes read and feed none.
    First,
    /// The edge `(s, d)` to the worker `route(s, d, peers)` of `peers`.
    By(fn(Node, Node, usize) -> usize),
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
pub const ALGORITHMS: &[&str] = &[
    "bfs",
    "bipartite",
    "cdlp",
    "degree",
    "degree-distribution",
    "kcore",
    "lcc",
    "matching",
    "pagerank",
    "scc",
    "spanner",
    "sssp",
    "triangles",
    "wcc",
];

/// Parameters of the built-in algorithms, as given on the command line.
#[derive(Clone, Debug, Default)]
pub struct Params {
    /// Source vertex (bfs, sssp); required by them.
    pub source: Option<Node>,
    /// Read every edge as an edge in both directions.
    pub undirected: bool,
    /// Iterations (pagerank, cdlp; default 10).
    pub iterations: Option<u32>,
    /// Damping factor (pagerank; default 0.85).
    pub damping: Option<f64>,
    /// Distance bound (spanner; required, at least 1).
    pub k: Option<u32>,
    /// The fully dynamic WCC path's parameters (wcc; see [`wcc_dynamic::ForestParams`]).
    pub forest: wcc_dynamic::ForestParams,
}

/// Looks up a built-in algorithm by name.
pub fn by_name(name: &str, params: &Params) -> Result<Box<dyn Algorithm>, AlgorithmError> {
    let source = || params.source.ok_or_else(|| AlgorithmError::NeedsSource(name.to_string()));
    let iterations = params.iterations.unwrap_or(10);
    match name {
        "wcc" => Ok(Box::new(wcc::Wcc { forest: params.forest })),
        "wcc-general" => Ok(Box::new(wcc::WccGeneral)),
        "bfs" => Ok(Box::new(bfs::Bfs { source: source()?, undirected: params.undirected })),
        "sssp" => Ok(Box::new(sssp::Sssp { source: source()?, undirected: params.undirected })),
        "scc" => Ok(Box::new(scc::Scc)),
        "pagerank" | "pr" => {
            let damping = params.damping.unwrap_or(0.85);
            if !(0.0..=1.0).contains(&damping) {
                return Err(AlgorithmError::Damping(damping));
            }
            Ok(Box::new(pagerank::PageRank { iterations, damping, undirected: params.undirected }))
        }
        "cdlp" => Ok(Box::new(cdlp::Cdlp { iterations, undirected: params.undirected })),
        "lcc" => Ok(Box::new(lcc::Lcc { undirected: params.undirected })),
        "degree" => Ok(Box::new(degree::Degree)),
        "degree-distribution" => Ok(Box::new(degree::DegreeDistribution)),
        "triangles" => Ok(Box::new(triangles::Triangles)),
        "kcore" => Ok(Box::new(kcore::KCore)),
        "kcore-iterate" => Ok(Box::new(kcore::KCoreIterate)),
        "bipartite" => Ok(Box::new(bipartite::Bipartite)),
        "bipartite-general" => Ok(Box::new(bipartite::BipartiteGeneral)),
        "spanner" => match params.k {
            Some(k) if k >= 1 => Ok(Box::new(spanner::Spanner { k })),
            k => Err(AlgorithmError::NeedsK(k)),
        },
        "matching" => Ok(Box::new(matching::Matching)),
        other => Err(AlgorithmError::Unknown(other.to_string())),
    }
}

/// Why [`by_name`] cannot build an algorithm.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AlgorithmError {
    /// No built-in algorithm has this name.
    #[error("unknown algorithm '{0}' (known: {known})", known = ALGORITHMS.join(", "))]
    Unknown(String),
    /// The named algorithm (bfs, sssp) needs `--source`.
    #[error("{0} needs a source vertex (--source S)")]
    NeedsSource(String),
    /// A damping factor outside `[0, 1]`.
    #[error("--damping must be in [0, 1], got {0}")]
    Damping(f64),
    /// `spanner` without `--k`, or with `--k 0`.
    #[error("spanner needs a distance bound --k K of at least 1{}", got(.0))]
    NeedsK(Option<u32>),
}

/// `", got K"` for a given `--k`.
fn got(k: &Option<u32>) -> String {
    k.map(|k| format!(", got {k}")).unwrap_or_default()
}

/// Boxed and shared algorithms are algorithms (a run takes `Box<dyn Algorithm>`; `--restart`
/// rebuilds a run from shared ones).
macro_rules! forward_algorithm {
    ($($pointer:ty),*) => {$(
        impl Algorithm for $pointer {
            fn name(&self) -> String {
                (**self).name()
            }
            fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
                (**self).build(input)
            }
            fn build_outputs<'a>(&self, input: GraphInput<'a>) -> Result<typed::Outputs<'a>, String> {
                (**self).build_outputs(input)
            }
            fn value_format(&self) -> ValueFormat {
                (**self).value_format()
            }
            fn arrival_order(&self) -> bool {
                (**self).arrival_order()
            }
            fn record_check(&self) -> Option<crate::types::RecordCheck> {
                (**self).record_check()
            }
            fn parameters(&self) -> String {
                (**self).parameters()
            }
            fn round_trips(&self, insert_only: bool) -> bool {
                (**self).round_trips(insert_only)
            }
            fn input_route(&self, insert_only: bool) -> Option<InputRoute> {
                (**self).input_route(insert_only)
            }
        }
    )*};
}

forward_algorithm!(Box<dyn Algorithm>, std::sync::Arc<dyn Algorithm>);
