//! Shared arrangements by name: one index, read by the built-in algorithms and by your own
//! dataflows alike.
//!
//! An *arrangement* is differential's indexed, shared form of a collection: built once, by one
//! `arrange` operator, maintained once per update, and read by every `join` or `reduce` handed
//! it. Within one dataflow, [`GraphInput`](super::GraphInput) keeps a registry of arrangements by
//! name:
//!
//! * [`GraphInput::register`](super::GraphInput::register) puts an arrangement under a name;
//! * [`GraphInput::lookup`](super::GraphInput::lookup) returns it (the same trace, read through a
//!   cheap import operator), or a [`RegistryError`] if the name is unknown or the arrangement
//!   has another type;
//! * the well-known names [`EDGES_OUT`], [`EDGES_IN`] and [`EDGES_UNDIRECTED`] are built on first
//!   use ([`GraphInput::arranged_edge_set`](super::GraphInput::arranged_edge_set)) — by a
//!   built-in algorithm or by a lookup, whichever comes first — and then shared: PageRank, CDLP,
//!   LCC and SCC read them, and so can your dataflow, in the same run.
//!
//! Arrangements carry the lifetime of their dataflow scope, so the registry keeps the
//! arrangement's `'static` [`TraceAgent`] and *imports* it into the scope on lookup. The registry
//! lives as long as the `GraphInput` (the driver drops it when the dataflow is built), so it never
//! holds back the trace's compaction while the dataflow runs.
//!
//! # Example
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use differential_dataflow::input::Input;
//! use ripples::dataflow::registry::{RegistryError, EDGES_UNDIRECTED};
//! use ripples::dataflow::wcc::ArrangedPairs;
//! use ripples::dataflow::{GraphInput, lcc};
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = seen.clone();
//! timely::execute_directly(move |worker| {
//!     worker.dataflow::<u64, _, _>(|scope| {
//!         let (_, edges) = scope.new_collection_from(vec![(1u64, 2u64, 0u64), (2, 3, 0), (3, 1, 0), (3, 4, 0)]);
//!         let (_, vertices) = scope.new_collection_from(Vec::<u64>::new());
//!         let input = GraphInput::new(edges, vertices, false);
//!         // A built-in user of the undirected edge set: local clustering coefficients.
//!         let _lcc = lcc::lcc(input.clone(), true);
//!         // Your dataflow reads the same index: the neighbour count of every vertex.
//!         let shared = input.lookup::<ArrangedPairs<u64>>(EDGES_UNDIRECTED).unwrap();
//!         shared.as_collection(|s, _d| *s).count().inspect(move |((v, n), _, _)| sink.lock().unwrap().push((*v, *n)));
//!         // A name nobody registered is an error, not a panic.
//!         let missing = input.lookup::<ArrangedPairs<u64>>("edges.typo").err().unwrap();
//!         assert!(matches!(missing, RegistryError::Unknown { .. }));
//!     });
//! });
//! let mut seen = seen.lock().unwrap().clone();
//! seen.sort();
//! assert_eq!(seen, vec![(1, 2), (2, 2), (3, 3), (4, 1)]);
//! ```

use std::any::Any;
use std::collections::BTreeMap;

use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::trace::TraceReader;

/// The present edge set without self-loops, arranged by source: `src → dst`, each pair once.
/// Type: [`ArrangedPairs`](super::wcc::ArrangedPairs)`<Time>`.
pub const EDGES_OUT: &str = "edges.out";
/// The present edge set without self-loops, arranged by destination: `dst → src`, each pair once.
/// Type: [`ArrangedPairs`](super::wcc::ArrangedPairs)`<Time>`.
pub const EDGES_IN: &str = "edges.in";
/// The present edge set without self-loops in both directions, arranged by source: `u → v` for
/// every neighbour `v` of `u`, each pair once. Type: [`ArrangedPairs`](super::wcc::ArrangedPairs)`<Time>`.
pub const EDGES_UNDIRECTED: &str = "edges.undirected";

/// The names built on first use, as [`Orientation`]s.
pub const WELL_KNOWN: &[(&str, Orientation)] =
    &[(EDGES_OUT, Orientation::Out), (EDGES_IN, Orientation::In), (EDGES_UNDIRECTED, Orientation::Undirected)];

/// Which way the shared edge set is arranged ([`GraphInput::arranged_edge_set`](super::GraphInput::arranged_edge_set)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orientation {
    /// By source: `src → dst` ([`EDGES_OUT`]).
    Out,
    /// By destination: `dst → src` ([`EDGES_IN`]).
    In,
    /// Both directions, by either endpoint ([`EDGES_UNDIRECTED`]).
    Undirected,
}

impl Orientation {
    /// The registry name of this arrangement.
    pub fn name(self) -> &'static str {
        match self {
            Orientation::Out => EDGES_OUT,
            Orientation::In => EDGES_IN,
            Orientation::Undirected => EDGES_UNDIRECTED,
        }
    }

    /// The orientation a well-known name stands for.
    pub fn of_name(name: &str) -> Option<Orientation> {
        WELL_KNOWN.iter().find(|(n, _)| *n == name).map(|&(_, o)| o)
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Why [`GraphInput::register`](super::GraphInput::register) or
/// [`GraphInput::lookup`](super::GraphInput::lookup) failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// No arrangement has this name.
    #[error("no shared arrangement named '{name}' (registered: {known})", known = list(.known))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names registered or built on demand.
        known: Vec<String>,
    },
    /// The arrangement under this name has another type than the one asked for.
    #[error("the shared arrangement '{name}' is a {registered}, not a {requested}")]
    WrongType {
        /// The name asked for.
        name: String,
        /// The type registered under it.
        registered: String,
        /// The type asked for.
        requested: String,
    },
    /// An arrangement is already registered under this name.
    #[error("a shared arrangement named '{0}' is already registered")]
    Taken(String),
}

/// A trace type's name without module paths: `Spine<Rc<OrdValBatch<Vector<((u64, u64), u64, isize)>>>>`.
fn type_name<Tr>() -> String {
    let full = std::any::type_name::<Tr>();
    let mut short = String::with_capacity(full.len());
    let mut path = String::new();
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            path.push(c);
        } else {
            short.push_str(path.rsplit("::").next().unwrap_or_default());
            path.clear();
            short.push(c);
        }
    }
    short.push_str(path.rsplit("::").next().unwrap_or_default());
    short
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// One registered arrangement: its trace agent, type-erased, and the arrangement's type name.
struct Entry {
    agent: Box<dyn Any>,
    type_name: String,
}

/// The registry of one dataflow: trace agents by name.
#[derive(Default)]
pub(crate) struct Registry {
    entries: BTreeMap<String, Entry>,
}

impl Registry {
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    pub(crate) fn insert<Tr>(
        &mut self,
        name: &str,
        arranged: &Arranged<'_, TraceAgent<Tr>>,
    ) -> Result<(), RegistryError>
    where
        Tr: TraceReader + 'static,
    {
        if self.entries.contains_key(name) {
            return Err(RegistryError::Taken(name.to_string()));
        }
        let entry = Entry { agent: Box::new(arranged.trace.clone()), type_name: type_name::<Tr>() };
        self.entries.insert(name.to_string(), entry);
        Ok(())
    }

    /// The agent under `name`, if it has type `TraceAgent<Tr>`.
    pub(crate) fn agent<Tr>(&self, name: &str) -> Result<TraceAgent<Tr>, RegistryError>
    where
        Tr: TraceReader + 'static,
    {
        let entry = self.entries.get(name).ok_or_else(|| {
            let mut known: Vec<String> = self.entries.keys().cloned().collect();
            for (n, _) in WELL_KNOWN {
                if !self.entries.contains_key(*n) {
                    known.push(n.to_string());
                }
            }
            known.sort();
            RegistryError::Unknown { name: name.to_string(), known }
        })?;
        entry.agent.downcast_ref::<TraceAgent<Tr>>().cloned().ok_or_else(|| RegistryError::WrongType {
            name: name.to_string(),
            registered: entry.type_name.clone(),
            requested: type_name::<Tr>(),
        })
    }
}

/// The trace type behind an arrangement type, so that lookups can name the arrangement type
/// they want (`input.lookup::<ArrangedPairs<Time>>(name)`) rather than its trace.
pub trait SharedArrangement<'a> {
    /// The trace the arrangement reads (a `'static` spine type).
    type Trace: TraceReader + 'static;
    /// The arrangement from an imported trace.
    fn from_imported(arranged: Arranged<'a, TraceAgent<Self::Trace>>) -> Self;
}

impl<'a, Tr: TraceReader + 'static> SharedArrangement<'a> for Arranged<'a, TraceAgent<Tr>> {
    type Trace = Tr;
    fn from_imported(arranged: Arranged<'a, TraceAgent<Tr>>) -> Self {
        arranged
    }
}

/// The keys of an arranged relation, each once (a `reduce` of the arrangement itself: no copy of
/// the relation, one output record per key).
pub fn keys<'a, T>(
    arranged: super::wcc::ArrangedPairs<'a, T>,
    name: &str,
) -> differential_dataflow::VecCollection<'a, T, crate::types::Node, crate::types::Diff>
where
    T: timely::progress::Timestamp + differential_dataflow::lattice::Lattice,
{
    use differential_dataflow::trace::implementations::{ValBuilder, ValSpine};
    arranged
        .reduce_abelian::<_, ValBuilder<_, _, _, _>, ValSpine<crate::types::Node, (), T, crate::types::Diff>, _, _>(
            name,
            |_key, _input, output| output.push(((), 1)),
            |vec, key, updates| {
                vec.clear();
                vec.extend(updates.drain(..).map(|(v, t, r)| ((*key, v), t, r)));
            },
        )
        .as_collection(|k, ()| *k)
}
