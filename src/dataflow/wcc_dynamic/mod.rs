//! The **fully dynamic WCC path**: weakly connected components under arbitrary insertions and
//! deletions of edge copies, for totally ordered epochs, without recomputation.
//!
//! **Semantics:** exactly those of [`super::wcc`]: every vertex of the vertex set (vertex-file
//! vertices ∪ endpoints of present edges) is labelled with the smallest vertex id of its
//! component, direction ignored; an edge counts while its multiplicity is positive, parallel
//! copies and self-loops change nothing (a self-loop keeps its vertex in the vertex set). The
//! output is the same differential collection of `(vertex, label)` changes as the general path,
//! so the change logs are byte-identical; per time, only net changes are emitted (a vertex whose
//! label goes `a → b → a` within one time emits nothing).
//!
//! **How.** One worker (worker 0: every record is exchanged to it) keeps a spanning forest of the
//! present graph. Every undirected vertex pair with a positive count (all copies, both
//! directions, any weight) is one *link*, either a forest edge or a non-tree edge; each vertex
//! keeps both kinds in two adjacency lists (one block: forest edges from its front, non-tree
//! edges from its back), and each link knows its positions in its ends' lists, so that removing
//! a forest edge is O(1) (swap-remove). A non-tree edge that leaves its lists (its last copy goes,
//! or it becomes a forest edge) is not removed at all: its entries stay, *stale*, counted per
//! vertex; an entry is live only if its link is a present non-tree edge whose position at that
//! vertex is the entry's (so a freed and reused link id is never mistaken for the old one), the
//! searches skip stale entries, and a list whose block is full and at least a quarter stale is
//! compacted before it grows. Removing a non-tree edge, most deletions of a churning graph, then
//! reads the pair's slot, the link and the two vertex records, not also two adjacency entries,
//! the two last entries and the two links a swap-remove would move. Each vertex stores its
//! label, the smallest id of its tree, so "same component?" is a label comparison. A time is
//! processed once the input frontier has passed it, its records consolidated per vertex pair,
//! insertions first:
//!
//! * *insert a link:* different labels: it becomes a forest edge and the side with the larger
//!   label is relabelled (a walk over its tree: exactly the vertices whose label changes); same
//!   label: a non-tree edge.
//! * *delete a link:* a non-tree edge's entries go stale; a forest edge is cut and both sides are
//!   searched at once, one adjacency entry at a time each, for a non-tree edge between them.
//!   Each side has two cursors over the vertices it reached, taking turns: one walks their
//!   forest edges (it finds the side's vertices), one scans their non-tree edges (newest first:
//!   a newer replacement tends to stay longer, which matters when the oldest edges leave first,
//!   as in a sliding window given as explicit deletions). A non-tree edge to a vertex the other
//!   side reached is a replacement (it becomes a forest edge; no label changes); so is, once the
//!   forest-edge cursor is done (the side is *complete*: it reaches no more vertices), any
//!   non-tree edge of it to a vertex it did not reach. The small side of a cut is usually
//!   complete after a few forest edges, and most of its non-tree edges leave it; with a single
//!   cursor (each vertex's forest edges, then its non-tree edges, then the next vertex) a side
//!   containing a vertex of high degree would have to scan all of that vertex's non-tree edges
//!   before it could be complete. When one side is exhausted (it is the smaller one, measured in
//!   adjacency entries) and none of its non-tree edges leaves it, the component splits: the side
//!   without the old minimum is relabelled (if that is the larger side, a walk over it: again
//!   exactly the vertices whose label changes).
//! * A vertex enters the result when it gets its first link, self-loop or vertex-file entry, and
//!   leaves when the last goes.
//!
//! *Memory latency.* The forest is far larger than the caches and an update touches ~8–10
//! random cache lines (both vertex records, the pair's slot, the link, both adjacency lists, the
//! links a swap-remove moves), so the records go through a *prefetch pipeline*: while record
//! `k` is applied, record `k + 8` has the lines of its adjacency lists prefetched (and, half a
//! stage later, the links its swap-removes will move), record `k + 16` its vertex records and
//! the link its pair's slot names, and record `k + 24` its pair's slot (and id index slots);
//! each stage reads what the one before prefetched, so about 24 records' misses are in flight
//! at any time, with no pause between groups. The stages only compute addresses: applying a
//! record resolves it again, so the result is that of applying the records one at a time (same
//! vertex numbering, same output). A pair's slot is found from a hash of the two *ids*, not
//! of the vertex indices, so its prefetch does not wait for the index. A time's insertions and
//! its deletions go through the pipeline separately (the sorted records alternate between the
//! two). Times of a record or two each (an event-time window: an insertion and an expiry per
//! time) are too short for the pipeline, so when several times are complete at once the operator
//! prefetches across them: the pair slots of the time 8 times ahead and the vertex records and
//! links of the one 4 ahead, while a time is applied.
//!
//! *Vertex indices* are the ids themselves while the ids are dense (below twice the vertices
//! named so far, plus 4,096; the records of ids not named yet are absent vertices, 64 bytes
//! each): no index lookup, one cache miss less per id. A large time (an initial graph) is
//! checked as a whole first (a bitmap of its new ids). Once an id is too large, the records
//! keep their indices and an index maps ids to them, new vertices numbered in the order they
//! come: a dense table while ids are small (below 4 × vertices + 4,096), a hash map otherwise.
//! A vertex record is one aligned cache line.
//!
//! *Huge pages.* With 4 KiB pages nearly every such access also misses the TLB, and a page walk
//! (through two levels of page tables on a virtual machine) is what the prefetches then wait
//! for. The vertex table, the links, the pair table and the dense id index are advised for
//! transparent huge pages as they grow, and after a large time (an initial graph), whose
//! reallocations split the huge pages they moved, their used part is collapsed into huge pages
//! again (`MADV_COLLAPSE`; a copy, once, in that time). The adjacency lists are blocks of a slab
//! (`src/dataflow/slab.rs`) of 64 MiB chunks advised the same way (power-of-two blocks, free
//! lists per size).
//!
//! *Walks.* The walks are prefetched too. A relabelling walk over a tree needs no visited marks
//! (each vertex is entered through one forest edge and leaves through the others), so it
//! prefetches its queue ahead in stages: a record 16 entries ahead, its adjacency 8 ahead, its
//! forest edges' links 4 ahead; the passes over a known list of vertices (labelling, the time's
//! label changes) prefetch 16 records ahead; a replacement search prefetches the links 8 entries
//! ahead of its scan and the vertices across them 4 ahead. A relabelling that would walk more
//! than 1/16 of the vertex table passes over the whole table in order instead (a tree's vertices
//! are exactly the present ones with its label; on a split, minus the side the search
//! exhausted), which the hardware prefetches. The time's changes are handed out as they are
//! found ([`DynamicForest::apply_with`]; the dataflow gives them straight to its output) and the
//! list of vertices that may have changed is 4 bytes a vertex (the label before the time is in
//! the record). A merge's pass labels the vertices as it finds them (a split's needs the
//! smallest id of the rest first, so it lists them and labels them after).
//!
//! *Growth.* The vertex table's records are 64-byte aligned, so growing it is a copy of the whole
//! table, not a remapping; when it grows it reserves room up to the identity limit for the
//! vertices named so far (address space only until used), so that new ids just above an initial
//! graph's do not copy it again.
//!
//! **Across workers** ([`ForestLayout::Shares`], not the default): every worker keeps the forest
//! of its share of the vertex pairs (routed by a hash of the pair) with component tags instead
//! of smallest ids (a merge relabels the smaller tree, a split the exhausted side) and forwards,
//! per time, only the net change of its forest edges and of its vertices' presence (a vertex is
//! present in a share while the share has a link or self-loop at it); worker 0 keeps the forest
//! of the union of these forests, which has the components of the whole graph, counting each
//! share's presence as a self-loop, and emits the labels. With `--stats`, each share also sends
//! the change of its link count at each time it applies, so the union forest knows the graph's
//! census (its own present vertices, the shares' links summed) without a count per key. Its
//! input is at most `workers ×
//! (vertices − 1)` forest edges (per time: only the forest changes), but that graph is sparse,
//! so its replacement searches run longer than in the whole graph, and the layout adds a second
//! stage (one more progress round per epoch). Measured sequentially (`cost_breakdown` in
//! `tests/wcc_dynamic.rs`), the slower share plus the union forest costs about what the single
//! forest does, so on few cores it does not pay for its second stage: it is opt-in (for
//! [`Wcc`](struct@super::wcc::Wcc) too, through its [`ForestParams`]); by default every record
//! goes to worker 0.
//!
//! **Bounded work.** The replacement searches of one time may take at most `factor × (links +
//! vertices)` steps (`factor`: [`ForestParams::budget`], default [`DEFAULT_BUDGET`]). A search
//! that would exceed it stops; the rest of the time's deletions only update the link counts, and
//! the forest is then rebuilt from the present links with union-find, exactly (O(links +
//! vertices)); every vertex is compared with its label before the time, so the output is the
//! same. Rebuilds are counted ([`WccDynamic::fallbacks`] per dataflow; per epoch in `--stats`
//! through the driver's [`AlgorithmCounts`](super::AlgorithmCounts)). Budget 0 rebuilds at the
//! first forest-edge deletion of every time.
//!
//! **Renewal** (windows). When the input promises that every edge leaves in the order it came
//! ([`GraphInput::edge_lifetime`](super::GraphInput::edge_lifetime): an event-time window's
//! copies, each one span after its time), the forest is built afresh from the present links,
//! *newest first*, whenever as many links were created since it was last built as half the
//! present ones ([`DynamicForest::with_renewal`], at least [`RENEW_MIN`]). Built in arrival
//! order, a forest's edges are the oldest links, the first to leave, so nearly every expiry
//! was a cut and a replacement search; renewed, the forest edges are young and an old link
//! leaves as a non-tree edge. A renewal is the union-find rebuild (labels unchanged, nothing
//! emitted), O(links + vertices) in one time, about 90 ms at a million links on this machine.
//!
//! *State:* at worker 0, per link ~35–45 bytes (a 20-byte record, an 8-byte slot of the pair
//! table, at most 3/4 full, two 4-byte adjacency entries and their slack, stale entries
//! included), per vertex one 64-byte cache line (id, label, its label before the open time, its
//! adjacency block with the two lists' lengths, search marks, flags; vertex-file and self-loop
//! counts in a side map for the few vertices that have them) and one slab block for the
//! adjacency (a power of two of 4-byte entries, at least 4); with dense ids up to one
//! placeholder record per vertex (identity indexing), else up to 4 × 4 bytes of id index.
//! Vertices that left the result keep their (empty) record. The unit test `memory_shares`
//! (ignored by default) reports where a forest's bytes go on a sliding window.
//! The peak comes at an initial graph: the operator keeps a time's records until the time is
//! complete, 24 bytes each (`(a, b, diff)` with `a <= b`, consolidated in place whenever their
//! vector is full, so duplicate copies do not pile up), then sorts and consolidates them in place
//! and applies them; they are freed once the time is applied (the driver feeds a large initial
//! graph in chunks with worker steps between them, so the records do not wait in channels).
//! *Cost:* an insertion O(1) plus the relabelling of the side whose label changes (the output
//! itself); a non-tree deletion O(1); a forest-edge deletion at most twice the smaller side's
//! adjacency (often much less: the search stops at the first replacement), plus on a split the
//! relabelling of the side whose label changes. By default everything runs at one worker: more
//! workers only spread the input.
//!
//! In debug builds the forest is checked after every time: acyclic, every forest edge a present
//! link, forest size = vertices − components, every non-tree edge inside one tree, every label
//! the smallest id of its tree.
//!
//! **Files.** This module holds the public API ([`WccDynamic`], [`wcc_dynamic`],
//! [`DynamicForest`]) and a time's outline ([`DynamicForest::apply_with`]); the forest's parts
//! live with the code that uses them:
//!
//! * `params.rs`: [`ForestParams`], the budget and the layout;
//! * `records.rs`: the vertex and link records and their layout constants;
//! * `storage.rs`: the records, links and adjacency slab together, and the operations that keep
//!   them consistent (copy counts, list entries, stale entries, compaction);
//! * `pairs.rs`: the pair table (vertex pairs to link ids);
//! * `index.rs`: vertex ids to vertex indices (identity indexing, else an id index);
//! * `consolidate.rs`: a time's records consolidated per pair (and the radix sort);
//! * `pipeline.rs`: the prefetch pipeline and the insertions and deletions it applies;
//! * `search.rs`: the replacement search;
//! * `relabel.rs`: merges' and splits' relabelling (walks and passes over the table);
//! * `changes.rs`: the time's change list and summary mode's log;
//! * `rebuild.rs`: the search budget and the union-find rebuild;
//! * `check.rs`: the debug builds' invariant checks;
//! * `operator.rs`: the timely operators and their composition across workers.
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::wcc_dynamic::DynamicForest;
//! let mut forest = DynamicForest::default();
//! let mut out = Vec::new();
//! // Time 0: the path 1 - 2 - 3 and the edge 7 - 8 (vertex-file changes: none).
//! forest.apply(&[], &mut vec![(1, 2, 1), (2, 3, 1), (7, 8, 1)], &mut out);
//! out.sort();
//! assert_eq!(out, vec![((1, 1), 1), ((2, 1), 1), ((3, 1), 1), ((7, 7), 1), ((8, 7), 1)]);
//! // Time 1: 3 - 7 joins them and 1 - 2 goes: 2, 3, 7, 8 are one component labelled 2.
//! out.clear();
//! forest.apply(&[], &mut vec![(3, 7, 1), (1, 2, -1)], &mut out);
//! out.sort();
//! assert_eq!(
//!     out,
//!     vec![((1, 1), -1), ((2, 1), -1), ((2, 2), 1), ((3, 1), -1), ((3, 2), 1), ((7, 2), 1), ((7, 7), -1), ((8, 2), 1), ((8, 7), -1)]
//! );
//! assert_eq!(forest.links(), 3);
//! ```

mod changes;
#[cfg(debug_assertions)]
mod check;
mod consolidate;
mod index;
mod operator;
mod pairs;
mod params;
mod pipeline;
mod rebuild;
mod records;
mod relabel;
mod search;
mod storage;

pub use params::{ForestLayout, ForestParams, ForestParamsError, DEFAULT_BUDGET};

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::{Algorithm, GraphInput, ResultCollection};
use crate::types::{Diff, Node};
use changes::Changes;
use consolidate::{consolidate_edges, FREE_AS_APPLIED};
use index::Ids;
use pairs::PairTable;
use pipeline::Staging;
pub use rebuild::RENEW_MIN;
use rebuild::{Budget, Renewal};
use relabel::Walks;
use search::SearchState;
use storage::Storage;

/// Weakly connected components, always on the fully dynamic path (whatever the stream promises).
/// [`Wcc`](struct@super::wcc::Wcc) chooses it for streams that delete without a known-expiry
/// window.
///
/// ```
/// use ripples::dataflow::wcc_dynamic::{ForestLayout, WccDynamic};
/// // Per-worker forests, whose searches may take (links + vertices) / 2 steps a time before a
/// // rebuild.
/// let wcc = WccDynamic::default().with_layout(ForestLayout::Shares).with_budget(0.5);
/// assert!(wcc.params.validate().is_ok());
/// ```
#[derive(Clone, Debug, Default)]
pub struct WccDynamic {
    /// The forest's parameters: the fallback budget factor and the layout (see the module docs).
    pub params: ForestParams,
    /// Counts this dataflow's fallback rebuilds, if given.
    pub fallbacks: Option<Arc<AtomicU64>>,
}

impl WccDynamic {
    /// The fully dynamic path with the parameters `params`.
    pub fn new(params: ForestParams) -> Self {
        WccDynamic { params, fallbacks: None }
    }

    /// With the fallback budget factor `budget` (a number ≥ 0; see [`ForestParams::budget`]).
    pub fn with_budget(mut self, budget: f64) -> Self {
        self.params.budget = budget;
        self
    }

    /// With the forests kept as `layout` says (per-worker shares or a single forest).
    pub fn with_layout(mut self, layout: ForestLayout) -> Self {
        self.params.layout = layout;
        self
    }

    /// With this dataflow's fallback rebuilds (every forest's, at every worker) added to `counter`.
    pub fn with_fallback_counter(mut self, counter: Arc<AtomicU64>) -> Self {
        self.fallbacks = Some(counter);
        self
    }
}

impl Algorithm for WccDynamic {
    fn parameters(&self) -> String {
        format!("{:?}", self.params)
    }
    fn round_trips(&self, _insert_only: bool) -> bool {
        self.params.layout == ForestLayout::Shares
    }
    fn input_route(&self, _insert_only: bool) -> Option<crate::dataflow::InputRoute> {
        Some(self.params.layout.route())
    }
    fn name(&self) -> String {
        "wcc".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        wcc_dynamic(input, self.params, self.fallbacks.clone())
    }
}

/// The fully dynamic path as a dataflow. With [`ForestLayout::Single`] (or with one worker),
/// every record goes to worker 0, which keeps the forest and emits labels. With
/// [`ForestLayout::Shares`] and several workers, every worker keeps the forest of its share of
/// the vertex pairs (routed by a hash of the pair) in summary mode and forwards, per time, only
/// the net change of its forest edges and of its vertices' presence; worker 0 keeps the forest
/// of the union of these forests (it has the components of the whole graph), a worker's
/// presence counting as a self-loop, and emits the labels. Every forest applies a time once the
/// frontier has passed it. Its fallback rebuilds are added to `fallbacks`, if given, and
/// reported per time in the input's [`AlgorithmCounts`](super::AlgorithmCounts).
pub fn wcc_dynamic<'a>(
    input: GraphInput<'a>,
    params: ForestParams,
    fallbacks: Option<Arc<AtomicU64>>,
) -> ResultCollection<'a> {
    operator::dataflow(input, params, fallbacks)
}

/// The share that keeps the link of the vertex pair `{a, b}` (either way round) when the forests
/// are kept as [`ForestLayout::Shares`] over `shares` workers: a hash of the pair modulo
/// `shares`. The dataflow's exchange routes the pair's records by it, and `ripples bench
/// --shards` too. (Worker 0 also keeps the union's forest, yet an even split is the faster:
/// the shares' work is the critical path.)
///
/// ```
/// use ripples::dataflow::wcc_dynamic::pair_share;
/// assert_eq!(pair_share(3, 9, 7), pair_share(9, 3, 7));
/// assert!(pair_share(3, 9, 7) < 7);
/// assert_eq!(pair_share(3, 9, 1), 0);
/// ```
pub fn pair_share(a: Node, b: Node, shares: usize) -> usize {
    assert!(shares > 0, "pair_share: no shares");
    (operator::pair_worker(a, b) % shares as u64) as usize
}

/// The sequential core: a spanning forest of the present graph with component labels.
pub struct DynamicForest {
    /// The vertex records, links and adjacency lists.
    store: Storage,
    /// Vertex pairs (of vertex indices) to link ids.
    pairs: PairTable,
    /// Vertex ids to vertex indices.
    ids: Ids,
    /// The open time's change list (or summary mode's log).
    changes: Changes,
    /// The replacement search's state.
    search: SearchState,
    /// The relabelling walks' buffers.
    walk: Walks,
    /// The search budget and fallback accounting.
    budget: Budget,
    /// When to build the forest afresh, newest links first (windows).
    renewal: Renewal,
    /// The update pipeline's buffers.
    staging: Staging,
}

impl Default for DynamicForest {
    fn default() -> Self {
        Self::new(DEFAULT_BUDGET)
    }
}

impl DynamicForest {
    /// An empty forest whose times' searches may take `factor × (links + vertices)` steps.
    pub fn new(factor: f64) -> Self {
        Self::with_mode(factor, false)
    }

    /// A forest for one worker's share of a distributed run: its output per time is the net
    /// change of its forest edges `((a, b), ±1)` (`a < b`) and of its vertices' presence
    /// `((v, v), ±1)` (present: the share has a link or a self-loop at `v`), in place of labels.
    pub fn summary(factor: f64) -> Self {
        Self::with_mode(factor, true)
    }

    /// An empty forest, in summary mode if `summary`.
    fn with_mode(factor: f64, summary: bool) -> Self {
        DynamicForest {
            store: Storage::default(),
            pairs: PairTable::default(),
            ids: Ids::default(),
            changes: Changes::new(summary),
            search: SearchState::default(),
            walk: Walks::default(),
            budget: Budget::new(factor),
            renewal: Renewal::default(),
            staging: Staging::default(),
        }
    }

    /// Also counts fallbacks in `counter`.
    pub fn with_counter(mut self, counter: Option<Arc<AtomicU64>>) -> Self {
        self.budget.counter = counter;
        self
    }

    /// Renews the forest, built afresh with the newest links first, whenever as many links were
    /// created since it was last built as half the present ones, and at least `min` (`None`:
    /// never, the default). For an input whose edges leave in the order they came (an
    /// event-time window): the forest edges are then young links, and the old links leave as
    /// non-tree edges, without a replacement search (see `rebuild.rs`). Not in summary mode.
    pub fn with_renewal(mut self, min: Option<u64>) -> Self {
        self.renewal = Renewal::new(min.filter(|_| !self.changes.summary));
        self
    }

    /// Renewals so far ([`DynamicForest::with_renewal`]).
    pub fn renewals(&self) -> u64 {
        self.renewal.count
    }

    /// Fallback rebuilds so far.
    pub fn fallbacks(&self) -> u64 {
        self.budget.fallbacks
    }

    /// Present links (vertex pairs with a positive count, self-loops excluded).
    pub fn links(&self) -> usize {
        self.pairs.len()
    }

    /// The present graph, as the records that would build it, each with its multiplicity:
    /// every link once as `(a, b, 0)` with `a < b`, every self-loop as `(v, v, 0)`, every
    /// vertex-file vertex as `(v, v, 1)` (ids, not vertex indices; in no particular order).
    pub fn for_each_present(&self, record: &mut impl FnMut((Node, Node, u8), Diff)) {
        let id = |v: u32| self.store.vertices[v as usize].id;
        for l in 0..self.store.links.len() as u32 {
            let copies = self.store.copies(l);
            if copies > 0 {
                let [a, b] = self.store.links[l as usize].ends.map(id);
                record((a.min(b), a.max(b), 0), copies as Diff);
            }
        }
        for (&v, extra) in &self.store.extras {
            if extra.loops > 0 {
                record((id(v), id(v), 0), extra.loops as Diff);
            }
            if extra.fixed != 0 {
                record((id(v), id(v), 1), extra.fixed as Diff);
            }
        }
    }

    /// Applies one time's changes: vertex-file changes `(vertex, diff)` and edge copy changes
    /// `(src, dst, diff)` (any order, not necessarily consolidated), insertions before deletions;
    /// appends the time's net label changes `((vertex, label), ±1)` to `out`.
    pub fn apply(
        &mut self,
        fixed: &[(Node, Diff)],
        edges: &mut Vec<(Node, Node, Diff)>,
        out: &mut Vec<((Node, u64), Diff)>,
    ) {
        self.apply_with(fixed, edges, &mut |record, diff| out.push((record, diff)));
    }

    /// [`DynamicForest::apply`], handing each change to `emit` as it is found (a large time's
    /// changes, say a giant component's relabelling, are then never listed whole).
    pub fn apply_with(
        &mut self,
        fixed: &[(Node, Diff)],
        edges: &mut Vec<(Node, Node, Diff)>,
        emit: &mut impl FnMut((Node, u64), Diff),
    ) {
        self.budget.open(self.pairs.len() + self.store.present);
        if edges.len() >= FREE_AS_APPLIED {
            consolidate_edges(edges);
        }
        if edges.len() >= FREE_AS_APPLIED {
            self.prepare_large_time(edges);
        }
        self.add_fixed(fixed);
        // Insertions, then deletions, in record order, through the prefetch pipeline: while
        // one record is applied, the memory of the records after it is prefetched in stages,
        // so that their cache misses overlap (the forest is far larger than the caches).
        if edges.len() < FREE_AS_APPLIED {
            self.apply_ordinary_time(edges);
        } else {
            self.apply_large_time(edges);
        }
        self.remove_fixed(fixed);
        if self.budget.degraded {
            self.rebuild();
        } else if self.renewal.due(self.pairs.len()) {
            self.renew();
        }
        if self.changes.summary {
            self.drain_summary(emit);
        } else {
            self.drain_changes(emit);
        }
        #[cfg(debug_assertions)]
        self.check();
    }
}

#[cfg(test)]
mod tests;
