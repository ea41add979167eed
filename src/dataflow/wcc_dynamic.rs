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
//! keeps both kinds in two adjacency lists (one allocation: forest edges from its front, non-tree
//! edges from its back), and each link knows its positions in its ends' lists, so that removing
//! a forest edge is O(1) (swap-remove). A non-tree edge that leaves its lists (its last copy goes,
//! or it becomes a forest edge) is not removed at all: its entries stay, *stale*, counted per
//! vertex; an entry is live only if its link is a present non-tree edge whose position at that
//! vertex is the entry's (so a freed and reused link id is never mistaken for the old one), the
//! searches skip stale entries, and a list whose block is full and at least a quarter stale is
//! compacted before it grows. Removing a non-tree edge then reads the pair's slot, the link and
//! the two vertex records, not also two adjacency entries, the two last entries and the two
//! links a swap-remove moves: on `wcc-churn`, where 95% of the updates add or remove a pair,
//! the forest alone went from 4.10–4.14 M to 4.68–4.72 M updates/s over 500 epochs (three runs
//! each) and end to end with 2 workers from 3.48–3.50 M to 3.83–3.91 M (three alternating
//! pairs); `wcc-window`'s memory went from 110.7 to 115.2 bytes per live edge. Each vertex
//! stores its label, the smallest id of its tree, so "same component?" is a label comparison. A time is processed once the input
//! frontier has passed it, its records consolidated per vertex pair, insertions first:
//!
//! * *insert a link:* different labels: it becomes a forest edge and the side with the larger
//!   label is relabelled (a walk over its tree: exactly the vertices whose label changes); same
//!   label: a non-tree edge.
//! * *delete a link:* a non-tree edge's entries go stale; a forest edge is cut and both sides are
//!   searched at once, one adjacency entry at a time each, for a non-tree edge between them. Each side has
//!   two cursors over the vertices it reached, taking turns: one walks their forest edges (it
//!   finds the side's vertices), one scans their non-tree edges (newest first: a newer
//!   replacement tends to stay longer, which matters when the oldest edges leave first, as in a
//!   sliding window given as explicit deletions). A non-tree edge to a vertex the other side
//!   reached is a replacement (it becomes a forest edge; no label changes); so is, once the
//!   forest-edge cursor is done (the side is *complete*: it reaches no more vertices), any
//!   non-tree edge of it to a vertex it did not reach. The small side of a cut is usually
//!   complete after a few forest edges, and most of its non-tree edges leave it: with one cursor
//!   (each vertex's forest edges, then its non-tree edges, then the next vertex) a side
//!   containing a vertex of high degree had to scan all of that vertex's non-tree edges before
//!   it could be complete. The two cursors take 1.74 M search steps instead of 8.67 M over
//!   `wcc-churn`'s 132,858 searches of 3,000 epochs (24.7 M instead of 36.9 M on `wcc-window`'s
//!   stream given as explicit deletions), and the forest alone is 18–32% faster on `wcc-churn`
//!   (four alternating pairs) and 7–11% on `wcc-window` (three). When one side is exhausted (it
//!   is the smaller one, measured in adjacency entries) and none of its non-tree edges leaves
//!   it, the component splits: the side without the old minimum is relabelled (if that is the
//!   larger side, a walk over it: again exactly the vertices whose label changes).
//! * A vertex enters the result when it gets its first link, self-loop or vertex-file entry, and
//!   leaves when the last goes.
//!
//! *Memory latency.* The forest is far larger than the caches and an update touches ~8–10
//! random cache lines (both vertex records, the pair index, the link, both adjacency lists, the
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
//! two). This replaced groups of 32 resolved in passes (5–9% less forest time on `wcc-churn`,
//! the fastest and the median of six alternating pairs).
//! *Vertex indices* are the ids themselves while the ids are dense (below twice the vertices
//! named so far, plus 4,096; the records of ids not named yet are absent vertices, 64 bytes
//! each): no index lookup, one cache miss less per id. A large time (an initial graph) is
//! checked as a whole first (a bitmap of its new ids). Once an id is too large, the records
//! keep their indices and an index maps ids to them, new vertices numbered in the order they
//! come: a dense table while ids are small (below 4 × vertices + 4,096), a hash map otherwise.
//! A vertex record is one aligned cache line. Identity indexing was faster again in all four of
//! its alternating pairs on `wcc-churn`'s forest (the machine's speed varies by ±30% from run to
//! run); end to end, both changes together are within that noise (see the README: most of the
//! time is page walks, which neither removes).
//! *Huge pages.* With 4 KiB pages nearly every such access also misses the TLB, and a page walk
//! (through two levels of page tables on a virtual machine) is what the prefetches then wait
//! for. The vertex table, the links, the pair table and the dense id index are advised for
//! transparent huge pages as they grow, and after a large time (an initial graph), whose
//! reallocations split the huge pages they moved, their used part is collapsed into huge pages
//! again (`MADV_COLLAPSE`; a copy, once, in that time). On `wcc-churn`'s forest alone
//! (sequentially, 1,000 epochs, five alternating pairs) that took 1.10 s to 0.86 s on average
//! (every pair faster). The adjacency lists are blocks of a slab (`src/dataflow/slab.rs`) of 64 MiB
//! chunks advised the same way (power-of-two blocks, free lists per size; they were blocks of the
//! C allocator, on small pages): the forest alone 15–19% faster on `wcc-churn` (three
//! alternating pairs, 3,000 epochs: 3.47–3.89 M → 4.14–4.48 M updates/s), end to end (`-w 2`)
//! 8–9% (3.64/3.67 M → 3.97/3.96 M).
//! The walks are prefetched too. A relabelling walk over a tree needs no visited marks (each
//! vertex is entered through one forest edge and leaves through the others), so it prefetches
//! its queue ahead in stages: a record 16 entries ahead, its adjacency 8 ahead, its forest
//! edges' links 4 ahead; the passes over a known list of vertices (labelling, the time's label
//! changes) prefetch 16 records ahead; a replacement search prefetches the links 8 entries ahead
//! of its scan and the vertices across them 4 ahead. On `wcc-churn` (scale 20, the forest alone,
//! sequentially, a quiet machine) the epoch that relabels the giant component (its smallest id
//! left: 1.3 M label changes) went from 105–165 ms to 65–87 ms and the 500 epochs from 496–590 ms
//! to 387–438 ms.
//! A relabelling that would walk more than 1/16 of the vertex table passes over the whole table
//! in order instead (a tree's vertices are exactly the present ones with its label; on a split,
//! minus the side the search exhausted), which the hardware prefetches: `wcc-churn`'s epoch 12
//! (a new edge gives the 650,899 vertices of the giant component a smaller label) took 47–68 ms
//! to walk and ~4 ms to pass over (1 M records). The time's changes are handed out as they are
//! found ([`DynamicForest::apply_with`]; the dataflow gives them straight to its output) and the
//! list of vertices that may have changed is 4 bytes a vertex (the label before the time is in
//! the record): that epoch, 57–200 ms in the forest and 67–82 ms end to end, now takes 12–19 ms
//! in the forest and ~45 ms end to end, most of the rest being the 1.3 M output records' first
//! touch of fresh memory downstream. A merge's pass labels the vertices as it finds them (a
//! split's needs the smallest id of the rest first, so it lists them and labels them after).
//! *Growth.* The vertex table's records are 64-byte aligned, so growing it is a copy of the whole
//! table, not a remapping (64 MiB took 23 ms: one slow `wcc-churn` epoch, when an id just above
//! the initial graph's came). When it grows it reserves room up to the identity limit for the
//! vertices named so far (address space only until used). Together with the labelling pass,
//! the 500 epochs' two slowest (25 and 24 ms in the forest) became one of 21 ms.
//!
//! **Across workers** ([`ForestLayout::Shares`], not the default): every worker keeps the forest
//! of its share of the vertex pairs (routed by a hash of the pair) with component tags instead
//! of smallest ids (a merge relabels the smaller tree, a split the exhausted side) and forwards,
//! per time, only the net change of its forest edges and of its vertices' presence (a vertex is
//! present in a share while the share has a link or self-loop at it); worker 0 keeps the forest
//! of the union of these forests, which has the components of the whole graph, counting each
//! share's presence as a self-loop, and emits the labels. Its input is at most `workers ×
//! (vertices − 1)` forest edges (per time: only the forest changes, ~0.3–1.2 per update in the
//! runs below), but that graph is sparse, so its replacement searches run longer than in the whole
//! graph. Measured sequentially (`cost_breakdown` in `tests/wcc_dynamic.rs`, 2 shares, 1,000
//! deletions and 1,000 insertions per epoch), the slower share plus the union forest took 0.78×
//! the single forest's p50 on R-MAT churn (scale 18) and 1.08× on a sliding window (scale 20); on
//! the 2-core machine it adds a second stage (one more progress round per epoch) and end-to-end
//! runs with 2 workers were dominated by scheduling noise for both designs. So it is opt-in
//! (for [`Wcc`](struct@super::wcc::Wcc) too, through its [`ForestParams`]); by default every record goes to
//! worker 0.
//!
//! **Bounded work.** The replacement searches of one time may take at most `factor × (links +
//! vertices)` steps (`factor`: [`ForestParams::budget`], default
//! [`DEFAULT_BUDGET`]). A search that would exceed it stops; the rest of the
//! time's deletions only update the link counts, and the forest is then rebuilt from the
//! present links with union-find, exactly (O(links + vertices)); every vertex is compared with its
//! label before the time, so the output is the same. Rebuilds are counted ([`WccDynamic::fallbacks`]
//! per dataflow; per epoch in `--stats` through the driver's [`AlgorithmCounts`]). Budget 0
//! rebuilds at the first forest-edge deletion of every time.
//!
//! *State:* at worker 0, per link ~35–45 bytes (a 20-byte record, an 8-byte slot of the pair
//! table, at most 3/4 full, two 4-byte adjacency entries and their slack, stale entries
//! included), per vertex one 64-byte cache line (id, label, its label before the open time, its adjacency block with the two
//! lists' lengths, search marks, flags; vertex-file and self-loop counts in a side map for the
//! few vertices that have them) and one slab block for the adjacency (a power of two of 4-byte
//! entries, at least 4); with dense ids
//! up to one placeholder record per vertex (identity indexing), else up to 4 × 4 bytes of id
//! index. Vertices that left the result keep their (empty) record. On `wcc-window` (1 M live
//! edges, ~3.8 per vertex) that was ~75 B per live edge before stale entries (`memory_shares`
//! below: 74.5, of which the adjacency slab 13.6; the bench's bytes per edge went from 110.7 to
//! 115.2 with them).
//! The peak comes at an initial graph: the operator keeps a time's records until the time is
//! complete, 24 bytes each (`(a, b, diff)` with `a <= b`, consolidated in place whenever their
//! vector is full, so duplicate copies do not pile up), then sorts and consolidates them in place
//! and applies them; they are freed once the time is applied (the driver feeds a large initial
//! graph in chunks with worker steps between them, so the records do not wait in channels).
//! *Cost:* an insertion O(1) plus the relabelling of the side whose label changes (the output itself); a non-tree deletion O(1); a
//! forest-edge deletion at most twice the smaller side's adjacency (often much less: the search
//! stops at the first replacement), plus on a split the relabelling of the side whose label
//! changes. By default everything runs at one worker: more workers only spread the input.
//!
//! In debug builds the forest is checked after every time: acyclic, every forest edge a present
//! link, forest size = vertices − components, every non-tree edge inside one tree, every label
//! the smallest id of its tree.
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

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use differential_dataflow::AsCollection;
use rustc_hash::FxHashMap;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::vec::Map;
use timely::dataflow::operators::Concat;

use super::id_index::{advise_huge_pages, collapse_huge_pages, prefetch, prefetch_ptr, push_advised, IdIndex};
use super::slab::{Block, Slab};
use super::time_stash::TimeBatches;
use super::union_find::DenseUnionFind;
use super::{Algorithm, AlgorithmCounts, GraphInput, ResultCollection};
use crate::types::{Diff, Node, Time};

mod params;

pub use params::{ForestLayout, ForestParams, ForestParamsError, DEFAULT_BUDGET};

/// Weakly connected components, always on the fully dynamic path (whatever the stream promises).
/// [`Wcc`](struct@super::wcc::Wcc) chooses it for streams that delete without a known-expiry window.
///
/// ```
/// use ripples::dataflow::wcc_dynamic::{ForestLayout, WccDynamic};
/// // Per-worker forests, and a rebuild as soon as a time's searches take `links + vertices` / 2 steps.
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
    fn name(&self) -> String {
        "wcc".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        wcc_dynamic(input, self.params, self.fallbacks.clone())
    }
}

const NONE: u32 = u32::MAX;
/// A link's flag bit: it is a forest edge.
const TREE: u32 = 1 << 31;
/// A link's count when its copies are counted in `DynamicForest::big` (2^31 - 1 or more).
const BIG: u32 = TREE - 1;

/// Times with at least this many (consolidated) edge changes free their list while it is
/// applied, in steps of this many.
const FREE_AS_APPLIED: usize = 1 << 16;

/// Puts edge copy changes `(a, b, diff)` in canonical form (`a <= b`), sorts them by pair, sums
/// the diffs of each pair and drops zeros, in place.
///
/// When the ids and the record indices fit in 64 bits together (an ordinary time, below
/// [`FREE_AS_APPLIED`] records, of a graph with ids below ~2^24), the sort is of plain `u64`
/// keys `a, b, index` ([`packed_keys`]; the index breaks ties, so the order is the same as
/// sorting the records by pair) and the records are then read in that order: about half the
/// time of sorting the 24-byte records by a 128-bit key (2,000 records: ~18 µs against ~36).
fn consolidate_edges(edges: &mut Vec<(Node, Node, Diff)>) {
    let mut keys = Vec::new();
    if let Some(index_bits) = packed_keys(edges, &mut keys) {
        let mut out: Vec<(Node, Node, Diff)> = Vec::with_capacity(edges.len());
        sum_runs(edges, &keys, index_bits, |e| out.push(e));
        *edges = out;
        return;
    }
    // One 128-bit key: its comparison has no branch between the two ids.
    edges.sort_unstable_by_key(|e| ((e.0 as u128) << 64) | e.1 as u128);
    let mut w = 0;
    for r in 0..edges.len() {
        if w > 0 && (edges[w - 1].0, edges[w - 1].1) == (edges[r].0, edges[r].1) {
            edges[w - 1].2 += edges[r].2;
        } else {
            edges[w] = edges[r];
            w += 1;
        }
    }
    edges.truncate(w);
    edges.retain(|e| e.2 != 0);
}

/// [`consolidate_edges`] for an ordinary time, with the consolidated insertions appended to
/// `insertions` and the deletions to `deletions` (each in pair order) in the same pass, and
/// `keys` reused: no `retain` passes and no allocation per time. `edges` is left in canonical
/// form, in some order.
fn consolidate_split(
    edges: &mut Vec<(Node, Node, Diff)>,
    keys: &mut Vec<u64>,
    insertions: &mut Vec<(Node, Node, Diff)>,
    deletions: &mut Vec<(Node, Node, Diff)>,
) {
    let mut split = |e: (Node, Node, Diff)| {
        if e.2 > 0 {
            insertions.push(e)
        } else {
            deletions.push(e)
        }
    };
    match packed_keys(edges, keys) {
        Some(index_bits) => sum_runs(edges, keys, index_bits, split),
        None => {
            consolidate_edges(edges);
            edges.iter().for_each(|&e| split(e));
        }
    }
}

/// Puts `edges` in canonical form and, when their ids and indices fit in 64 bits together
/// (and there are between 2 and [`FREE_AS_APPLIED`] of them), fills `keys` with their sorted
/// packed keys `a, b, index` and returns the index's bit width.
fn packed_keys(edges: &mut [(Node, Node, Diff)], keys: &mut Vec<u64>) -> Option<u32> {
    let mut max = 0;
    for e in edges.iter_mut() {
        if e.0 > e.1 {
            *e = (e.1, e.0, e.2);
        }
        max = max.max(e.1);
    }
    let id_bits = u64::BITS - max.leading_zeros();
    let index_bits = usize::BITS - edges.len().leading_zeros();
    if 2 * id_bits + index_bits > u64::BITS || edges.len() <= 1 || edges.len() >= FREE_AS_APPLIED {
        return None;
    }
    keys.clear();
    keys.extend(edges.iter().enumerate().map(|(i, e)| (((e.0 << id_bits) | e.1) << index_bits) | i as u64));
    radix_sort(keys, 2 * id_bits + index_bits);
    Some(index_bits)
}

/// Sorts `keys`, all below `2^bits`: from 256 keys on, least significant byte first (a pass
/// per byte in which the keys differ; the keys of a time differ in their indices, so the order
/// is the same as any sort's), else `sort_unstable`. On `wcc-churn`'s 2,000-record times the
/// sort was about two thirds of the consolidation, itself ~7% of the forest's time.
fn radix_sort(keys: &mut Vec<u64>, bits: u32) {
    let n = keys.len();
    if n < 256 {
        keys.sort_unstable();
        return;
    }
    let passes = bits.div_ceil(8) as usize;
    let mut counts = [[0u32; 256]; 8];
    for &k in keys.iter() {
        for (d, c) in counts.iter_mut().enumerate().take(passes) {
            c[((k >> (8 * d)) & 0xFF) as usize] += 1;
        }
    }
    let mut from = std::mem::take(keys);
    let mut to = vec![0u64; n];
    for (d, c) in counts.iter_mut().enumerate().take(passes) {
        // All keys share this byte: the pass would not move them.
        if c.iter().any(|&x| x as usize == n) {
            continue;
        }
        let mut at = 0u32;
        for x in c.iter_mut() {
            (*x, at) = (at, at + *x);
        }
        for &k in &from {
            let b = ((k >> (8 * d)) & 0xFF) as usize;
            to[c[b] as usize] = k;
            c[b] += 1;
        }
        std::mem::swap(&mut from, &mut to);
    }
    *keys = from;
}

/// Hands out, in key order, each pair's summed record when the sum is not zero.
fn sum_runs(edges: &[(Node, Node, Diff)], keys: &[u64], index_bits: u32, mut out: impl FnMut((Node, Node, Diff))) {
    let index_mask = (1u64 << index_bits) - 1;
    let mut i = 0;
    while i < keys.len() {
        let pair = keys[i] >> index_bits;
        let mut e = edges[(keys[i] & index_mask) as usize];
        i += 1;
        while i < keys.len() && keys[i] >> index_bits == pair {
            e.2 += edges[(keys[i] & index_mask) as usize].2;
            i += 1;
        }
        if e.2 != 0 {
            out(e);
        }
    }
}

/// A vertex's bookkeeping: one 64-byte cache line (the rare counts live in
/// `DynamicForest::extras`; the adjacency is one block of `DynamicForest::slab`).
#[derive(Debug)]
#[repr(align(64))]
struct Vertex {
    id: Node,
    /// The smallest id of its tree (meaningful while present).
    label: Node,
    /// Its links (link ids), in one allocation: the forest edges from the front,
    /// `adj[..tree_len]`, and the non-tree edges from the back, the `k`-th oldest at
    /// `adj[adj.len() - 1 - k]`; a link's position in its list is its index there (`k`).
    adj: Block,
    tree_len: u32,
    /// Entries of the non-tree list, `stale` of them left behind by links that are gone or
    /// became forest edges (see [`DynamicForest::other_live`]).
    other_len: u32,
    stale: u32,
    /// Which side of the current search reached it (`side`), valid when `mark` is the search's
    /// stamp.
    mark: u32,
    side: u8,
    present: bool,
    /// Listed in `DynamicForest::dirty` in the open time when equal to `DynamicForest::time`
    /// (a stamp, not a flag: draining the list then only reads the records).
    listed: u32,
    /// Has an entry in `DynamicForest::extras`.
    extra: bool,
    /// While listed: whether it was present before the open time, and its label then.
    was_present: bool,
    before: Node,
}

const _: () = assert!(std::mem::size_of::<Vertex>() == 64);

/// A vertex's rare counts (a vertex with neither has no entry).
#[derive(Clone, Copy, Debug, Default)]
struct Extra {
    /// Vertex-file multiplicity.
    fixed: i64,
    /// Self-loop copies.
    loops: u64,
}

impl Vertex {
    fn new(id: Node) -> Self {
        Vertex {
            id,
            label: id,
            adj: Block::default(),
            tree_len: 0,
            other_len: 0,
            stale: 0,
            mark: 0,
            side: 0,
            present: false,
            listed: 0,
            extra: false,
            was_present: false,
            before: 0,
        }
    }

    /// Its non-tree list, newest first (stale entries included).
    #[cfg(debug_assertions)]
    fn others(&self) -> &[u32] {
        &self.adj[self.adj.len() - self.other_len as usize..]
    }

    /// The index in `adj` of position `p` of the forest-edge (`tree`) or non-tree list.
    #[inline]
    fn slot(&self, tree: bool, p: usize) -> usize {
        if tree {
            p
        } else {
            self.adj.len() - 1 - p
        }
    }

    /// The entry at position `p` of a list, if there is one.
    #[inline]
    fn entry(&self, tree: bool, p: usize) -> Option<&u32> {
        let len = if tree { self.tree_len } else { self.other_len } as usize;
        (p < len).then(|| &self.adj[self.slot(tree, p)])
    }

    /// The last entry of a list (the one a swap-remove moves), if any.
    #[inline]
    fn last(&self, tree: bool) -> Option<&u32> {
        let len = if tree { self.tree_len } else { self.other_len } as usize;
        len.checked_sub(1).and_then(|p| self.entry(tree, p))
    }

    fn has_links(&self) -> bool {
        self.tree_len != 0 || self.other_len != self.stale
    }

    /// Where the list's next push goes (for a prefetch; may be outside the slice).
    fn tail(&self, tree: bool) -> *const u32 {
        let at = if tree { self.tree_len as usize } else { self.adj.len().wrapping_sub(1 + self.other_len as usize) };
        self.adj.as_ptr().wrapping_add(at)
    }

    /// Appends link `l` to the forest-edge (`tree`) or non-tree list; returns its position.
    fn push(&mut self, slab: &mut Slab, tree: bool, l: u32) -> u32 {
        let (nt, no) = (self.tree_len as usize, self.other_len as usize);
        let cap = self.adj.len();
        if nt + no == cap {
            // Twice the room (4 entries at first).
            let old = std::mem::take(&mut self.adj);
            // SAFETY: `slab` is the forest's one slab (the only one `push` is called with),
            // which made every vertex's block.
            self.adj = unsafe { slab.regrow(old, (2 * cap).max(4), nt, no) };
        }
        let (len, p) = if tree { (&mut self.tree_len, nt) } else { (&mut self.other_len, no) };
        *len += 1;
        let at = self.slot(tree, p);
        self.adj[at] = l;
        p as u32
    }

    /// Removes the entry at position `p` of the forest-edge list; the last entry moves there:
    /// returns it, if it is another one.
    fn swap_remove_tree(&mut self, p: usize) -> Option<u32> {
        let last = self.tree_len as usize - 1;
        self.tree_len -= 1;
        self.adj[p] = self.adj[last];
        (p < last).then(|| self.adj[p])
    }
}

/// A present vertex pair: all its copies, either a forest edge or a non-tree edge.
#[derive(Clone, Copy, Debug)]
struct Link {
    ends: [u32; 2],
    /// Copies present in the low 31 bits (0: a free slot; [`BIG`]: more, counted in
    /// `DynamicForest::big`), [`TREE`]: a forest edge. A 20-byte record.
    bits: u32,
    /// Its positions in `ends[i]`'s forest-edge or non-tree list.
    pos: [u32; 2],
}

const _: () = assert!(std::mem::size_of::<Link>() == 20);

impl Link {
    /// Its copy count (see `bits`).
    #[inline]
    fn count(&self) -> u32 {
        self.bits & !TREE
    }

    /// Whether it is a forest edge.
    #[inline]
    fn tree(&self) -> bool {
        self.bits & TREE != 0
    }

    fn set_count(&mut self, n: u32) {
        self.bits = (self.bits & TREE) | n;
    }

    fn set_tree(&mut self, tree: bool) {
        self.bits = (self.bits & !TREE) | if tree { TREE } else { 0 };
    }
}

/// Slots ahead of a pair's first that [`PairTable::slot_ahead`] names (one cache line).
const PROBE_AHEAD: usize = 8;

/// Vertex pairs to link ids: open addressing with linear probing over a power-of-two table of
/// 8-byte slots `tag << 32 | link` (0: empty), where the tag is the top 32 bits of the pair's
/// hash (never 0). The slot a pair starts from is its tag's top bits, so the table grows and
/// removes (backward shift, no tombstones) without looking at the links; a lookup confirms a
/// tag match against the link's ends (the link the update touches anyway). Between 3/8 and 3/4
/// full: 11 to 21 bytes per link, where a hash map of `(u64, u32)` entries (17 bytes a bucket,
/// between 7/16 and 7/8 full) took 19 to 39.
#[derive(Default)]
struct PairTable {
    slots: Vec<u64>,
    len: usize,
}

impl PairTable {
    /// The tag of the vertex pair with ids `a`, `b` (either way round): the top 32 bits of a
    /// hash of the ids, never 0. Hashing the ids rather than the vertex indices lets a pair's
    /// slot be looked up before its vertices' indices are known.
    #[inline]
    fn tag(a: Node, b: Node) -> u32 {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        let h = lo.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ hi;
        let h = (h ^ (h >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let h = (h ^ (h >> 29)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((h >> 32) as u32).max(1)
    }

    /// The slot a tag starts from.
    #[inline]
    fn home(&self, tag: u32) -> usize {
        // The table has 2^k slots (k <= 32): the tag's top k bits.
        ((tag as u64 * self.slots.len() as u64) >> 32) as usize
    }

    fn len(&self) -> usize {
        self.len
    }

    /// The link of the pair of vertex indices `key` ([`DynamicForest::pair_key`]), whose tag is
    /// `tag`; `links` confirms it.
    #[inline]
    fn get(&self, tag: u32, key: u64, links: &[Link]) -> Option<u32> {
        self.probe(tag, |l| link_key(&links[l as usize]) == key)
    }

    /// The first link from `tag`'s home slot on whose tag is `tag` and that `confirm` accepts.
    #[inline]
    fn probe(&self, tag: u32, confirm: impl Fn(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(tag);
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if (s >> 32) as u32 == tag && confirm(s as u32) {
                return Some(s as u32);
            }
            i = (i + 1) & mask;
        }
    }

    /// The address of the slot `tag` starts from, for a prefetch.
    #[inline]
    fn slot(&self, tag: u32) -> Option<&u64> {
        self.slots.get(self.home(tag))
    }

    /// The address of the slot [`PROBE_AHEAD`] after the one `tag` starts from: a lookup, an
    /// insertion or a removal (whose backward shift reads the run to its end) often reaches the
    /// next cache line.
    #[inline]
    fn slot_ahead(&self, tag: u32) -> Option<&u64> {
        self.slots.get((self.home(tag) + PROBE_AHEAD) & self.slots.len().wrapping_sub(1))
    }

    /// The first link whose tag is `tag` (most likely its pair's link), unconfirmed: for a
    /// prefetch of that link before [`PairTable::get`] confirms it.
    #[inline]
    fn candidate(&self, tag: u32) -> Option<u32> {
        self.probe(tag, |_| true)
    }

    /// Records that the pair with tag `tag` (absent) has link `l`.
    fn insert(&mut self, tag: u32, l: u32) {
        self.reserve(1);
        self.len += 1;
        self.place(((tag as u64) << 32) | l as u64);
    }

    /// Puts an entry in the first free slot from its start.
    fn place(&mut self, entry: u64) {
        let mask = self.slots.len() - 1;
        let mut i = self.home((entry >> 32) as u32);
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = entry;
    }

    /// Room for `more` entries without growing.
    fn reserve(&mut self, more: usize) {
        let want = self.len + more;
        if want * 4 <= self.slots.len() * 3 {
            return;
        }
        let size = (want * 4).div_ceil(3).next_power_of_two().max(16);
        assert!(size <= 1 << 32, "dynamic WCC: too many links");
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        advise_huge_pages(&self.slots);
        for s in old {
            if s != 0 {
                self.place(s);
            }
        }
    }

    /// Removes the pair with tag `tag` (present, with link `l`).
    fn remove(&mut self, tag: u32, l: u32) {
        let mask = self.slots.len() - 1;
        let entry = ((tag as u64) << 32) | l as u64;
        let mut i = self.home(tag);
        while self.slots[i] != entry {
            debug_assert!(self.slots[i] != 0, "dynamic WCC: removal of an absent pair");
            i = (i + 1) & mask;
        }
        // Backward shift: later entries of the run move up where they may.
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s == 0 {
                break;
            }
            let home = self.home((s >> 32) as u32);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(i) & mask) {
                self.slots[i] = s;
                i = j;
            }
        }
        self.slots[i] = 0;
        self.len -= 1;
    }

    /// Heap bytes.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.slots.capacity() * 8
    }
}

/// The pair key of a link's ends.
#[inline]
fn link_key(link: &Link) -> u64 {
    DynamicForest::pair_key(link.ends[0], link.ends[1])
}

/// Identity indexing holds while every id is below this, for `named` vertices named so far:
/// at most about one placeholder record per vertex (64 bytes, against the 4 to 16 bytes of
/// the index it saves, and one cache miss less per id looked up).
fn identity_limit(named: usize) -> u64 {
    2 * named as u64 + 4096
}

/// Records between the stages of the prefetch pipeline (see the module docs).
const STAGE: usize = 8;

/// A large time's insertions are applied in chunks of this many (its list shrinks in between).
const LARGE_CHUNK: usize = 4096;

/// How far ahead a pass over a known list of vertices prefetches their records.
const AHEAD: usize = 16;

/// How far ahead a replacement search prefetches the links of the adjacency it scans.
const SCAN_AHEAD: usize = 8;

/// A relabelling walk that reaches more than `1 / SCAN_SHARE` of the vertex table stops, and one
/// pass over the whole table (in order: the hardware prefetches it) finds the rest of the tree
/// by its label instead (see [`DynamicForest::collect_tree`]).
const SCAN_SHARE: usize = 16;

/// What the prefetch pipeline's stages found for a record: its pair's tag, its vertex indices
/// and its candidate link ([`NONE`]: none seen). Hints only: applying the record resolves it
/// again.
#[derive(Clone, Copy)]
struct Hint {
    tag: u32,
    va: u32,
    vb: u32,
    link: u32,
}

impl Hint {
    const NONE: Hint = Hint { tag: 0, va: NONE, vb: NONE, link: NONE };
}

/// One side of a replacement search: two cursors over the vertices it reached, one walking their
/// forest edges (it finds the side's vertices), one their non-tree edges (it finds edges that
/// leave the side).
#[derive(Default)]
struct Side {
    /// Vertices reached, in order (the first is where it started).
    queue: Vec<u32>,
    /// The forest-edge cursor: the vertex being walked and the position in its forest edges.
    tree_at: usize,
    tree_pos: usize,
    /// The non-tree cursor: the vertex being scanned and the position in its non-tree edges.
    other_at: usize,
    other_pos: usize,
    /// The forest-edge cursor is done: the side has all its vertices.
    complete: bool,
    /// Which cursor moves next while both can.
    tree_turn: bool,
    /// Non-tree edges seen before the side was complete whose other end it had not reached:
    /// `(link, other end)`.
    open: Vec<(u32, u32)>,
}

enum Step {
    Continue,
    Exhausted,
    Found(u32),
}

enum Search {
    Replacement(u32),
    /// No replacement: side `0` or `1` was exhausted (its vertices are in `sides[i].queue`).
    Split(usize),
    /// The time's budget ran out.
    Aborted,
}

/// The sequential core: a spanning forest of the present graph with component labels.
pub struct DynamicForest {
    vertices: Vec<Vertex>,
    /// Identity indexing: a vertex's index is its id (while the ids are dense; see
    /// [`identity_limit`]); otherwise `index` maps ids to indices.
    identity: bool,
    /// Identity indexing: the ids named so far (the other records are placeholders).
    named: usize,
    index: IdIndex,
    /// Vertex-file multiplicities and self-loop counts of the vertices that have them.
    extras: FxHashMap<u32, Extra>,
    links: Vec<Link>,
    /// Copies of the links with `count == BIG`.
    big: FxHashMap<u32, u64>,
    free_links: Vec<u32>,
    /// `(lower vertex index, higher vertex index)` -> link id.
    pairs: PairTable,
    present: usize,
    /// Vertices whose label may have changed in the open time (their label before it is in
    /// their record).
    dirty: Vec<u32>,
    stamp: u32,
    /// The open time's stamp for [`Vertex::listed`].
    time: u32,
    sides: [Side; 2],
    scratch: Vec<u32>,
    /// [`DynamicForest::collect_tree`]'s queue: the forest edge each vertex was entered by.
    via: Vec<u32>,
    /// The budget factor, the open time's budget and the search steps taken in it.
    factor: f64,
    budget: u64,
    work: u64,
    /// The open time's budget ran out: deletions only update counts; rebuild at its end.
    degraded: bool,
    fallbacks: u64,
    shared_fallbacks: Option<Arc<AtomicU64>>,
    /// Summary mode (a worker's share of a distributed run): labels are component tags, not
    /// smallest ids, and the time's output is its forest-edge and presence changes.
    summary: bool,
    /// Summary mode: the next fresh tag, each tag's tree size, and the open time's changes.
    next_tag: Node,
    sizes: FxHashMap<Node, u32>,
    log: Vec<((Node, Node), Diff)>,
    /// The prefetch pipeline's hints for the records being applied.
    hints: Vec<Hint>,
    /// An ordinary time's consolidated insertions and deletions, and the sort keys that
    /// consolidated them (kept for the next time).
    insertions: Vec<(Node, Node, Diff)>,
    deletions: Vec<(Node, Node, Diff)>,
    keys: Vec<u64>,
    /// Relabellings that passed over the whole vertex table instead of walking a tree.
    scans: u64,
    /// Non-tree lists compacted ([`DynamicForest::compact`]), for tests.
    compactions: u64,
    /// The vertices' adjacency lists (on huge pages).
    slab: Slab,
}

impl Default for DynamicForest {
    fn default() -> Self {
        Self::new(DEFAULT_BUDGET)
    }
}

impl DynamicForest {
    /// An empty forest whose times' searches may take `factor × (links + vertices)` steps.
    pub fn new(factor: f64) -> Self {
        DynamicForest {
            vertices: Vec::new(),
            identity: true,
            named: 0,
            index: IdIndex::default(),
            extras: FxHashMap::default(),
            links: Vec::new(),
            big: FxHashMap::default(),
            free_links: Vec::new(),
            pairs: PairTable::default(),
            present: 0,
            dirty: Vec::new(),
            stamp: 0,
            time: 1,
            sides: [Side::default(), Side::default()],
            scratch: Vec::new(),
            via: Vec::new(),
            factor: factor.max(0.0),
            budget: 0,
            work: 0,
            degraded: false,
            fallbacks: 0,
            shared_fallbacks: None,
            summary: false,
            next_tag: 0,
            sizes: FxHashMap::default(),
            log: Vec::new(),
            hints: Vec::new(),
            insertions: Vec::new(),
            deletions: Vec::new(),
            keys: Vec::new(),
            scans: 0,
            compactions: 0,
            slab: Slab::default(),
        }
    }

    /// A forest for one worker's share of a distributed run: its output per time is the net
    /// change of its forest edges `((a, b), ±1)` (`a < b`) and of its vertices' presence
    /// `((v, v), ±1)` (present: the share has a link or a self-loop at `v`), in place of labels.
    pub fn summary(factor: f64) -> Self {
        DynamicForest { summary: true, ..Self::new(factor) }
    }

    fn fresh_tag(&mut self, size: u32) -> Node {
        let t = self.next_tag;
        self.next_tag += 1;
        self.sizes.insert(t, size);
        t
    }

    fn log_link(&mut self, l: u32, diff: Diff) {
        let [a, b] = self.links[l as usize].ends;
        let (a, b) = (self.vertices[a as usize].id, self.vertices[b as usize].id);
        self.log.push(((a.min(b), a.max(b)), diff));
    }

    /// Also counts fallbacks in `counter`.
    pub fn with_counter(mut self, counter: Option<Arc<AtomicU64>>) -> Self {
        self.shared_fallbacks = counter;
        self
    }

    /// Fallback rebuilds so far.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks
    }

    /// Present links (vertex pairs with a positive count, self-loops excluded).
    pub fn links(&self) -> usize {
        self.pairs.len()
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
        self.budget = (self.factor * (self.pairs.len() + self.present) as f64).min(u64::MAX as f64) as u64;
        self.work = 0;
        self.degraded = false;
        if edges.len() >= FREE_AS_APPLIED {
            consolidate_edges(edges);
        }
        // A large time (an initial graph): room for every new pair at once, so that the pair
        // map does not double (old and new table side by side) at the peak.
        if edges.len() >= FREE_AS_APPLIED {
            self.pairs.reserve(edges.iter().filter(|e| e.2 > 0).count());
            if self.identity {
                self.prepare_identity(edges);
            }
        }
        for &(v, d) in fixed {
            if d > 0 {
                let x = self.vertex(v);
                self.extra_mut(x).fixed += d as i64;
                self.tidy_extra(x);
                self.appear(x);
            }
        }
        // Insertions, then deletions, in record order, through the prefetch pipeline: while
        // one record is applied, the memory of the records after it is prefetched in stages,
        // so that their cache misses overlap (the forest is far larger than the caches).
        if edges.len() < FREE_AS_APPLIED {
            // Each kind on its own (the records alternate between the two).
            let (mut insertions, mut deletions) =
                (std::mem::take(&mut self.insertions), std::mem::take(&mut self.deletions));
            consolidate_split(edges, &mut self.keys, &mut insertions, &mut deletions);
            edges.clear();
            self.apply_insertions(&insertions);
            self.apply_deletions(&deletions);
            insertions.clear();
            deletions.clear();
            (self.insertions, self.deletions) = (insertions, deletions);
        } else {
            // A large time (an initial graph): the same order, but the list is consumed from
            // its end (reversed first) in chunks and shrinks as the forest grows; deletions
            // wait aside.
            edges.reverse();
            let mut deletions = Vec::new();
            let mut chunk = Vec::with_capacity(LARGE_CHUNK);
            let mut since_shrink = 0usize;
            while !edges.is_empty() {
                chunk.clear();
                for _ in 0..LARGE_CHUNK {
                    match edges.pop() {
                        Some(e) if e.2 > 0 => chunk.push(e),
                        Some(e) => deletions.push(e),
                        None => break,
                    }
                }
                self.apply_insertions(&chunk);
                since_shrink += LARGE_CHUNK;
                if since_shrink >= FREE_AS_APPLIED {
                    edges.shrink_to_fit();
                    since_shrink = 0;
                }
            }
            edges.shrink_to_fit();
            collapse_huge_pages(&self.vertices);
            collapse_huge_pages(&self.links);
            collapse_huge_pages(&self.pairs.slots);
            collapse_huge_pages(&self.index.dense);
            self.apply_deletions(&deletions);
        }
        for &(v, d) in fixed {
            if d < 0 {
                let x = self.vertex(v);
                self.extra_mut(x).fixed += d as i64;
                self.tidy_extra(x);
                if !self.degraded {
                    self.maybe_vanish(x);
                }
            }
        }
        if self.degraded {
            self.rebuild();
        }
        if self.summary {
            let mut log = std::mem::take(&mut self.log);
            differential_dataflow::consolidation::consolidate(&mut log);
            for (record, diff) in log.drain(..) {
                emit(record, diff);
            }
            self.log = log;
        } else {
            self.drain_changes(emit);
        }
        #[cfg(debug_assertions)]
        self.check();
    }

    /// The vertex index of `id`, if it has a record.
    #[inline]
    fn lookup(&self, id: Node) -> Option<u32> {
        if self.identity {
            (id < self.vertices.len() as u64).then_some(id as u32)
        } else {
            self.index.get(id)
        }
    }

    /// The vertex index of `id`, created (absent) if new.
    fn vertex(&mut self, id: Node) -> u32 {
        if let Some(v) = self.lookup(id) {
            return v;
        }
        if self.identity {
            if id < identity_limit(self.named + 1) {
                self.named += 1;
                self.extend_identity(id + 1);
                return id as u32;
            }
            self.leave_identity();
        }
        let v = self.vertices.len() as u32;
        assert!(v != NONE, "dynamic WCC: too many vertices");
        push_advised(&mut self.vertices, Vertex::new(id));
        self.index.insert(id, v, self.vertices.len());
        v
    }

    /// Identity indexing: records for every id below `len` (those not named yet are absent
    /// vertices, as a vertex that left the result is).
    fn extend_identity(&mut self, len: u64) {
        let len = usize::try_from(len).expect("dynamic WCC: ids beyond the address space");
        let have = self.vertices.len();
        if len > self.vertices.capacity() {
            // Room at once for the ids identity indexing may still take (up to its limit for the
            // vertices named so far), at least doubling: growing copies the whole table (its
            // 64-byte alignment rules out remapping in place: 64 MiB took 23 ms, one slow epoch
            // of `wcc-churn` when an id just above the initial graph's came), while room that
            // is never used is only address space.
            let room = (identity_limit(self.named) as usize).max(len).max(2 * have);
            self.vertices.reserve(room - have);
            advise_huge_pages(&self.vertices);
        }
        self.vertices.extend((have..len).map(|id| Vertex::new(id as Node)));
    }

    /// Ends identity indexing: the records so far keep their indices (the index maps each of
    /// their ids to itself) and new vertices are numbered in the order they come.
    fn leave_identity(&mut self) {
        self.identity = false;
        let n = self.vertices.len();
        self.index.dense.reserve_exact(n);
        advise_huge_pages(&self.index.dense);
        self.index.dense.extend(0..n as u32);
    }

    /// Before a large time (an initial graph) in identity indexing: its ids are dense enough
    /// (below twice the vertices named so far and by it, plus a slack) or sparse. Dense: the
    /// records for all of them are made at once (one by one, the sorted records' second ids
    /// would soon look sparse to [`DynamicForest::vertex`]); sparse: identity indexing ends.
    fn prepare_identity(&mut self, edges: &[(Node, Node, Diff)]) {
        let max = edges.iter().map(|e| e.0.max(e.1)).max().unwrap_or(0);
        let have = self.vertices.len() as u64;
        if max < have {
            return;
        }
        if max >= identity_limit(self.named + 2 * edges.len()) {
            self.leave_identity();
            return;
        }
        // The distinct new ids, in a bitmap over `have..=max`.
        let mut seen = vec![0u64; ((max + 1 - have) as usize).div_ceil(64)];
        for &(a, b, _) in edges {
            for id in [a, b] {
                if id >= have {
                    let i = (id - have) as usize;
                    seen[i / 64] |= 1 << (i % 64);
                }
            }
        }
        let fresh = seen.iter().map(|w| w.count_ones() as usize).sum::<usize>();
        if max < identity_limit(self.named + fresh) {
            self.named += fresh;
            self.extend_identity(max + 1);
        } else {
            self.leave_identity();
        }
    }

    /// `v`'s rare counts.
    fn extra(&self, v: u32) -> Extra {
        if self.vertices[v as usize].extra {
            self.extras[&v]
        } else {
            Extra::default()
        }
    }

    /// `v`'s rare counts, to change (then [`DynamicForest::tidy_extra`]).
    fn extra_mut(&mut self, v: u32) -> &mut Extra {
        self.vertices[v as usize].extra = true;
        self.extras.entry(v).or_default()
    }

    /// Drops `v`'s rare counts if they are both 0.
    fn tidy_extra(&mut self, v: u32) {
        if let Some(e) = self.extras.get(&v) {
            if e.fixed == 0 && e.loops == 0 {
                self.extras.remove(&v);
                self.vertices[v as usize].extra = false;
            }
        }
    }

    fn touch(&mut self, v: u32) {
        let x = &mut self.vertices[v as usize];
        if x.listed != self.time && !self.summary {
            x.listed = self.time;
            x.was_present = x.present;
            x.before = x.label;
            self.dirty.push(v);
        }
    }

    fn set_label(&mut self, v: u32, label: Node) {
        self.touch(v);
        self.vertices[v as usize].label = label;
    }

    /// Makes `v` present (a singleton tree) if it is not.
    fn appear(&mut self, v: u32) {
        if !self.vertices[v as usize].present {
            self.touch(v);
            let label = if self.summary { self.fresh_tag(1) } else { self.vertices[v as usize].id };
            let x = &mut self.vertices[v as usize];
            x.present = true;
            x.label = label;
            self.present += 1;
            if self.summary {
                self.log.push(((x.id, x.id), 1));
            }
        }
    }

    /// Removes `v` from the result if nothing keeps it there.
    fn maybe_vanish(&mut self, v: u32) {
        let x = &self.vertices[v as usize];
        if x.present && !x.has_links() && (!x.extra || (self.extra(v).fixed <= 0 && self.extra(v).loops == 0)) {
            self.touch(v);
            self.vertices[v as usize].present = false;
            self.present -= 1;
            if self.summary {
                let x = &self.vertices[v as usize];
                self.sizes.remove(&x.label);
                self.log.push(((x.id, x.id), -1));
            }
        }
    }

    fn pair_key(a: u32, b: u32) -> u64 {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        ((lo as u64) << 32) | hi as u64
    }

    /// Copies of link `l`.
    fn copies(&self, l: u32) -> u64 {
        match self.links[l as usize].count() {
            BIG => self.big[&l],
            n => n as u64,
        }
    }

    /// Sets the copies of link `l` (0 frees it).
    fn set_copies(&mut self, l: u32, n: u64) {
        let link = &mut self.links[l as usize];
        if link.count() == BIG {
            self.big.remove(&l);
        }
        if n >= BIG as u64 {
            link.set_count(BIG);
            self.big.insert(l, n);
        } else {
            link.set_count(n as u32);
        }
    }

    /// The other end of link `l` seen from `v`.
    fn across(&self, l: u32, v: u32) -> u32 {
        let ends = self.links[l as usize].ends;
        if ends[0] == v {
            ends[1]
        } else {
            ends[0]
        }
    }

    /// Puts link `l` in its ends' `tree` or `other` lists, as its `tree` flag says. A full
    /// block with many stale entries is compacted first ([`DynamicForest::compact`]).
    fn attach(&mut self, l: u32) {
        let Link { ends, .. } = self.links[l as usize];
        let tree = self.links[l as usize].tree();
        if tree && self.summary {
            self.log_link(l, 1);
        }
        for (i, &v) in ends.iter().enumerate() {
            let x = &self.vertices[v as usize];
            if (x.tree_len + x.other_len) as usize == x.adj.len() && x.stale > 0 && 4 * x.stale >= x.other_len {
                self.compact(v);
            }
            self.links[l as usize].pos[i] = self.vertices[v as usize].push(&mut self.slab, tree, l);
        }
    }

    /// Takes forest edge `l` out of its ends' forest-edge lists (O(1): swap-remove, fixing the
    /// moved link's position).
    fn detach(&mut self, l: u32) {
        let Link { ends, pos, .. } = self.links[l as usize];
        debug_assert!(self.links[l as usize].tree());
        if self.summary {
            self.log_link(l, -1);
        }
        for i in 0..2 {
            let v = ends[i];
            let x = &mut self.vertices[v as usize];
            let p = pos[i] as usize;
            debug_assert_eq!(x.entry(true, p), Some(&l));
            if let Some(moved) = x.swap_remove_tree(p) {
                let m = &mut self.links[moved as usize];
                let j = if m.ends[0] == v { 0 } else { 1 };
                m.pos[j] = p as u32;
            }
        }
    }

    /// Non-tree edge `l` is leaving its ends' non-tree lists (its last copy goes, or it becomes
    /// a forest edge): its entries stay where they are, stale, and are only counted. Nothing is
    /// read but the two vertex records: removing them at once (a swap-remove, which moves
    /// another entry and must fix that link's position) touched four more cache lines, and
    /// nearly every deletion of `wcc-churn` takes a non-tree edge's last copy.
    fn unlist_other(&mut self, l: u32) {
        debug_assert!(!self.links[l as usize].tree());
        for v in self.links[l as usize].ends {
            self.vertices[v as usize].stale += 1;
        }
    }

    /// Whether `l`, the entry at position `k` of `v`'s non-tree list, is live: `l` is a
    /// present non-tree edge at `v` whose position there is `k`. A stale entry fails this
    /// whatever became of its link id since (freed, reused for another pair, a forest edge):
    /// a reused id's live entry at `v` was pushed after the stale one, at a larger position.
    #[inline]
    fn other_live(&self, v: u32, k: usize, l: u32) -> bool {
        let link = &self.links[l as usize];
        let k = k as u32;
        link.count() > 0
            && !link.tree()
            && ((link.ends[0] == v && link.pos[0] == k) || (link.ends[1] == v && link.pos[1] == k))
    }

    /// Drops the stale entries of `v`'s non-tree list, keeping the live ones in order (their
    /// links learn their new positions). Run when a push finds the block full and at least a
    /// quarter of the list stale, so a compaction's reads (one link per entry) are at most four
    /// per entry it frees; otherwise the block grows and keeps them.
    fn compact(&mut self, v: u32) {
        let x = &self.vertices[v as usize];
        let (no, len) = (x.other_len as usize, x.adj.len());
        let mut kept = 0;
        for k in 0..no {
            let adj = &self.vertices[v as usize].adj;
            let l = adj[len - 1 - k];
            if k + SCAN_AHEAD < no {
                prefetch(&self.links[adj[len - 1 - k - SCAN_AHEAD] as usize]);
            }
            if self.other_live(v, k, l) {
                let link = &mut self.links[l as usize];
                let i = if link.ends[0] == v { 0 } else { 1 };
                link.pos[i] = kept as u32;
                self.vertices[v as usize].adj[len - 1 - kept] = l;
                kept += 1;
            }
        }
        let x = &mut self.vertices[v as usize];
        debug_assert_eq!(no - kept, x.stale as usize);
        x.other_len = kept as u32;
        x.stale = 0;
        self.compactions += 1;
    }

    /// Runs `records` through the prefetch pipeline (see the module docs): at each step, the
    /// pair slot (and id index slots) of record `j` is prefetched, record `j - STAGE`'s vertex
    /// records and candidate link ([`DynamicForest::hint`]), `third` prefetches for record
    /// `j - 2 × STAGE` and `fourth` for record `j - 5 × STAGE / 2` from their hints, and record
    /// `j - 3 × STAGE` is applied by `apply` (given its pair's tag), which resolves everything
    /// again (the stages' reads are hints for prefetches only): the result is that of applying
    /// the records one at a time.
    fn pipeline(
        &mut self,
        records: &[(Node, Node, Diff)],
        third: impl Fn(&Self, Hint),
        fourth: impl Fn(&Self, Hint),
        apply: impl Fn(&mut Self, (Node, Node, Diff), u32),
    ) {
        let n = records.len();
        let mut hints = std::mem::take(&mut self.hints);
        hints.clear();
        hints.resize(n, Hint::NONE);
        for j in 0..n + 3 * STAGE {
            if let Some(&(a, b, _)) = records.get(j) {
                hints[j].tag = self.prefetch_ids(a, b);
            }
            if let Some(k) = j.checked_sub(STAGE).filter(|&k| k < n) {
                let (a, b, _) = records[k];
                self.hint(a, b, &mut hints[k]);
            }
            if let Some(k) = j.checked_sub(2 * STAGE).filter(|&k| k < n) {
                third(self, hints[k]);
            }
            if let Some(k) = j.checked_sub(2 * STAGE + STAGE / 2).filter(|&k| k < n) {
                fourth(self, hints[k]);
            }
            if let Some(k) = j.checked_sub(3 * STAGE) {
                apply(self, records[k], hints[k].tag);
            }
        }
        self.hints = hints;
    }

    /// Applies consolidated insertions `(a, b, copies)` in order, through the prefetch
    /// pipeline; its third stage prefetches the ends of the adjacency lists a new link joins
    /// and the free link it may take.
    fn apply_insertions(&mut self, records: &[(Node, Node, Diff)]) {
        let third = |f: &Self, h: Hint| {
            if h.va != NONE && h.vb != NONE && h.va != h.vb && h.link == NONE {
                // A new link: the ends of the list it will join, and the free slot it may take
                // (as if every record before it took one).
                let (x, y) = (&f.vertices[h.va as usize], &f.vertices[h.vb as usize]);
                let tree = x.label != y.label;
                prefetch_ptr(x.tail(tree));
                prefetch_ptr(y.tail(tree));
                if let Some(&l) = f.free_links.len().checked_sub(1 + STAGE).and_then(|i| f.free_links.get(i)) {
                    prefetch(&f.links[l as usize]);
                }
            }
        };
        let apply = |f: &mut Self, (a, b, d): (Node, Node, Diff), tag: u32| {
            let va = f.vertex(a);
            let vb = if a == b { va } else { f.vertex(b) };
            let link = if va == vb { NONE } else { f.pairs.get(tag, Self::pair_key(va, vb), &f.links).unwrap_or(NONE) };
            f.insert_at(va, vb, link, d as u64, tag);
        };
        self.pipeline(records, third, |_, _| {}, apply);
    }

    /// Applies consolidated deletions `(a, b, -copies)` in order, through the prefetch
    /// pipeline; for a forest edge, its third stage prefetches the link's entries in its ends'
    /// lists and their last entries, the fourth the links a swap-remove will move there (a
    /// non-tree edge's entries are left stale: [`DynamicForest::unlist_other`]).
    fn apply_deletions(&mut self, records: &[(Node, Node, Diff)]) {
        let third = |f: &Self, h: Hint| {
            if let Some(link) = f.hinted_link(h).filter(Link::tree) {
                for (i, &v) in link.ends.iter().enumerate() {
                    let x = &f.vertices[v as usize];
                    if let Some(at) = x.entry(true, link.pos[i] as usize) {
                        prefetch(at);
                    }
                    if let Some(last) = x.last(true) {
                        prefetch(last);
                    }
                }
            }
        };
        let fourth = |f: &Self, h: Hint| {
            if let Some(link) = f.hinted_link(h).filter(Link::tree) {
                for &v in &link.ends {
                    if let Some(m) = f.vertices[v as usize].last(true).and_then(|&m| f.links.get(m as usize)) {
                        prefetch(m);
                    }
                }
            }
        };
        let apply = |f: &mut Self, (a, b, d): (Node, Node, Diff), tag: u32| {
            let copies = d.unsigned_abs() as u64;
            let va = f.lookup(a).unwrap_or(NONE);
            let vb = if a == b { va } else { f.lookup(b).unwrap_or(NONE) };
            debug_assert!(va != NONE && vb != NONE, "dynamic WCC: deletion of an absent edge {a} {b}");
            let mut link = NONE;
            if va != vb && va != NONE && vb != NONE {
                link = f.pairs.get(tag, Self::pair_key(va, vb), &f.links).unwrap_or(NONE);
                debug_assert!(link != NONE, "dynamic WCC: deletion of an absent edge");
                if link != NONE && f.copies(link) <= copies {
                    f.pairs.remove(tag, link);
                }
            }
            f.delete_at(va, vb, link, copies);
        };
        self.pipeline(records, third, fourth, apply);
    }

    /// The pipeline's first stage for the pair of ids `a`, `b`: prefetches their index slots
    /// and the pair's home slot; returns its tag.
    #[inline]
    fn prefetch_ids(&self, a: Node, b: Node) -> u32 {
        if !self.identity {
            for id in [a, b] {
                if let Some(slot) = self.index.slot(id) {
                    prefetch(slot);
                }
            }
        }
        let tag = PairTable::tag(a, b);
        if a != b {
            if let Some(slot) = self.pairs.slot(tag) {
                prefetch(slot);
            }
            if let Some(slot) = self.pairs.slot_ahead(tag) {
                prefetch(slot);
            }
        }
        tag
    }

    /// The pipeline's second stage: the pair's vertex indices (`NONE` if new) and candidate
    /// link into `hint`, prefetching the vertex records and that link.
    #[inline]
    fn hint(&self, a: Node, b: Node, hint: &mut Hint) {
        hint.va = self.lookup(a).unwrap_or(NONE);
        hint.vb = if a == b { hint.va } else { self.lookup(b).unwrap_or(NONE) };
        for v in [hint.va, hint.vb] {
            if v != NONE {
                prefetch(&self.vertices[v as usize]);
            }
        }
        if a != b {
            if let Some(l) = self.pairs.candidate(hint.tag) {
                prefetch(&self.links[l as usize]);
                hint.link = l;
            }
        }
    }

    /// The hinted link, if it is still a present link between the hinted vertices.
    #[inline]
    fn hinted_link(&self, h: Hint) -> Option<Link> {
        let link = *self.links.get(h.link as usize)?;
        let ends = link.ends;
        (link.count() > 0 && (ends == [h.va, h.vb] || ends == [h.vb, h.va])).then_some(link)
    }

    /// Inserts `copies` copies of the pair of vertex indices `va`, `vb` (equal: a self-loop),
    /// whose link is `link` (`NONE`: none yet).
    fn insert_at(&mut self, va: u32, vb: u32, link: u32, copies: u64, tag: u32) {
        self.appear(va);
        if va == vb {
            self.extra_mut(va).loops += copies;
            return;
        }
        self.appear(vb);
        if link != NONE {
            self.set_copies(link, self.copies(link) + copies);
            return;
        }
        let (la, lb) = (self.vertices[va as usize].label, self.vertices[vb as usize].label);
        let tree = la != lb;
        if tree && self.summary {
            // Relabel the smaller tree with the other's tag (before linking: its tree is exactly it).
            let (sa, sb) = (self.sizes[&la], self.sizes[&lb]);
            let (side, keep, gone) = if sa < sb { (va, lb, la) } else { (vb, la, lb) };
            self.relabel_tree(side, keep);
            self.sizes.remove(&gone);
            self.sizes.insert(keep, sa + sb);
        } else if tree {
            // Relabel the side with the larger label (before linking: its tree is exactly it).
            let (side, label) = if la < lb { (vb, la) } else { (va, lb) };
            self.relabel_tree(side, label);
        }
        let link = Link { ends: [va, vb], bits: if tree { TREE } else { 0 }, pos: [NONE; 2] };
        let l = match self.free_links.pop() {
            Some(l) => {
                self.links[l as usize] = link;
                l
            }
            None => {
                push_advised(&mut self.links, link);
                (self.links.len() - 1) as u32
            }
        };
        self.set_copies(l, copies);
        self.pairs.insert(tag, l);
        self.attach(l);
    }

    /// Deletes `copies` copies of the pair `va`, `vb` (equal: a self-loop), whose link is
    /// `link` (already out of the pair index if these are its last copies; `NONE`: absent).
    fn delete_at(&mut self, va: u32, vb: u32, l: u32, copies: u64) {
        if va == NONE || vb == NONE {
            return;
        }
        if va == vb {
            debug_assert!(self.extra(va).loops >= copies, "dynamic WCC: deletion of an absent self-loop");
            let x = self.extra_mut(va);
            x.loops = x.loops.saturating_sub(copies);
            self.tidy_extra(va);
            if !self.degraded {
                self.maybe_vanish(va);
            }
            return;
        }
        if l == NONE {
            return;
        }
        let present = self.copies(l);
        debug_assert!(present >= copies, "dynamic WCC: deletion of more copies than present");
        self.set_copies(l, present.saturating_sub(copies));
        if present > copies {
            return;
        }
        let tree = self.links[l as usize].tree();
        if tree {
            self.detach(l);
        } else {
            self.unlist_other(l);
        }
        self.free_links.push(l);
        if tree && !self.degraded {
            match self.search(va, vb) {
                Search::Replacement(r) => {
                    self.unlist_other(r);
                    self.links[r as usize].set_tree(true);
                    self.attach(r);
                }
                Search::Split(s) => self.split(s, [va, vb]),
                Search::Aborted => self.degraded = true,
            }
        }
        if !self.degraded {
            self.maybe_vanish(va);
            self.maybe_vanish(vb);
        }
    }

    fn next_stamp(&mut self) -> u32 {
        if self.stamp == u32::MAX - 1 {
            for x in &mut self.vertices {
                x.mark = 0;
            }
            self.stamp = 0;
        }
        self.stamp += 1;
        self.stamp
    }

    /// After the forest edge `u - v` was removed: searches both sides at once for a non-tree edge
    /// between them.
    fn search(&mut self, u: u32, v: u32) -> Search {
        let stamp = self.next_stamp();
        for (s, start) in [u, v].into_iter().enumerate() {
            let side = &mut self.sides[s];
            side.queue.clear();
            side.open.clear();
            side.queue.push(start);
            (side.tree_at, side.tree_pos, side.other_at, side.other_pos) = (0, 0, 0, 0);
            (side.complete, side.tree_turn) = (false, true);
            let x = &mut self.vertices[start as usize];
            x.mark = stamp;
            x.side = s as u8;
        }
        loop {
            for s in 0..2 {
                if self.work >= self.budget {
                    return Search::Aborted;
                }
                self.work += 1;
                match self.step(s, stamp) {
                    Step::Continue => {}
                    Step::Found(l) => return Search::Replacement(l),
                    // Its open edges were checked when it became complete: none leaves it.
                    Step::Exhausted => return Search::Split(s),
                }
            }
        }
    }

    /// One adjacency entry of side `s`: the forest-edge and non-tree cursors take turns (when the
    /// non-tree cursor has caught up with the vertices found so far, the forest-edge cursor
    /// moves instead). Once the forest-edge cursor is done, the side is complete: a non-tree edge
    /// of it to a vertex it did not reach leaves it, a replacement; when the non-tree cursor is
    /// done too, none does.
    fn step(&mut self, s: usize, stamp: u32) -> Step {
        let tree_first = !self.sides[s].complete && self.sides[s].tree_turn;
        self.sides[s].tree_turn = !tree_first;
        if tree_first {
            if let Some(step) = self.tree_step(s, stamp) {
                return step;
            }
        }
        if let Some(step) = self.other_step(s, stamp) {
            return step;
        }
        if !self.sides[s].complete {
            if let Some(step) = self.tree_step(s, stamp) {
                return step;
            }
        }
        // Complete, and the non-tree cursor has nothing left.
        Step::Exhausted
    }

    /// The forest-edge cursor of side `s` takes one entry: a vertex across it not reached yet
    /// joins the side. When it passes the last vertex, the side is complete, and a non-tree edge
    /// seen earlier to a vertex it did not reach is a replacement (`None`: there is none).
    fn tree_step(&mut self, s: usize, stamp: u32) -> Option<Step> {
        loop {
            let side = &self.sides[s];
            let Some(&x) = side.queue.get(side.tree_at) else {
                self.sides[s].complete = true;
                return self.sides[s].open.iter().find_map(|&(l, w)| {
                    let y = &self.vertices[w as usize];
                    (y.mark != stamp || y.side as usize != s).then_some(Step::Found(l))
                });
            };
            let pos = side.tree_pos;
            let vx = &self.vertices[x as usize];
            let nt = vx.tree_len as usize;
            if pos >= nt {
                let side = &mut self.sides[s];
                side.tree_at += 1;
                side.tree_pos = 0;
                if let Some(&next) = side.queue.get(side.tree_at) {
                    let vn = &self.vertices[next as usize];
                    for p in 0..(vn.tree_len as usize).min(SCAN_AHEAD) {
                        prefetch(&self.links[vn.adj[p] as usize]);
                    }
                }
                continue;
            }
            self.sides[s].tree_pos += 1;
            self.prefetch_scan(x, |p| vx.adj[p], pos, nt);
            let w = self.across(vx.adj[pos], x);
            let y = &mut self.vertices[w as usize];
            if y.mark != stamp {
                y.mark = stamp;
                y.side = s as u8;
                self.sides[s].queue.push(w);
                // Its adjacency, for both cursors.
                prefetch_ptr(y.adj.as_ptr());
            }
            return Some(Step::Continue);
        }
    }

    /// A search cursor at entry `pos` of `end` of vertex `x`'s list `at`: each entry costs two
    /// dependent misses (its link, then the vertex across it), so the link is prefetched
    /// [`SCAN_AHEAD`] entries ahead and the vertex across half as far.
    #[inline]
    fn prefetch_scan(&self, x: u32, at: impl Fn(usize) -> u32, pos: usize, end: usize) {
        if pos + SCAN_AHEAD < end {
            prefetch(&self.links[at(pos + SCAN_AHEAD) as usize]);
        }
        if pos + SCAN_AHEAD / 2 < end {
            prefetch(&self.vertices[self.across(at(pos + SCAN_AHEAD / 2), x) as usize]);
        }
    }

    /// The non-tree cursor of side `s` takes one entry (a vertex's non-tree edges newest first:
    /// a newer replacement tends to stay longer): an edge to a vertex the other side reached is a
    /// replacement, and so is, once the side is complete, one to a vertex it did not reach
    /// (`None`: it has caught up with the vertices found so far).
    fn other_step(&mut self, s: usize, stamp: u32) -> Option<Step> {
        loop {
            let side = &self.sides[s];
            let x = *side.queue.get(side.other_at)?;
            let pos = side.other_pos;
            let vx = &self.vertices[x as usize];
            let no = vx.other_len as usize;
            // Position `p` of the non-tree list, newest first.
            let at = |p: usize| vx.adj[vx.adj.len() - no + p];
            if pos >= no {
                let side = &mut self.sides[s];
                side.other_at += 1;
                side.other_pos = 0;
                continue;
            }
            self.sides[s].other_pos += 1;
            if pos == 0 {
                for p in 1..no.min(SCAN_AHEAD) {
                    prefetch(&self.links[at(p) as usize]);
                }
            }
            self.prefetch_scan(x, at, pos, no);
            let l = at(pos);
            if !self.other_live(x, no - 1 - pos, l) {
                // A stale entry (one step of the budget, like any entry read).
                return Some(Step::Continue);
            }
            let w = self.across(l, x);
            let y = &self.vertices[w as usize];
            if y.mark == stamp {
                if y.side as usize != s {
                    return Some(Step::Found(l));
                }
            } else if self.sides[s].complete {
                return Some(Step::Found(l));
            } else {
                self.sides[s].open.push((l, w));
            }
            return Some(Step::Continue);
        }
    }

    /// A split after a search exhausted side `s` (of the sides starting at `starts`): the side
    /// that does not hold the old smallest id takes its own.
    fn split(&mut self, s: usize, starts: [u32; 2]) {
        let old = self.vertices[starts[0] as usize].label;
        let members = std::mem::take(&mut self.sides[s].queue);
        if self.summary {
            // The exhausted side takes a fresh tag.
            let tag = self.fresh_tag(members.len() as u32);
            if let Some(size) = self.sizes.get_mut(&old) {
                *size -= members.len() as u32;
            }
            for &v in &members {
                self.vertices[v as usize].label = tag;
            }
            self.sides[s].queue = members;
            return;
        }
        let min = members.iter().map(|&v| self.vertices[v as usize].id).min().unwrap_or(old);
        if min != old {
            self.label_all(&members, min);
        } else {
            // The other (larger) side lost the minimum: all of it is relabelled.
            let (mut rest, mut min, complete) = self.collect_tree(starts[1 - s], None);
            if !complete {
                // A large tree: the two sides were one tree labelled `old`.
                rest.clear();
                min = None;
                self.pass_over_table(old, Some(s), |f, v| {
                    rest.push(v);
                    let id = f.vertices[v as usize].id;
                    min = Some(min.map_or(id, |m: Node| m.min(id)));
                });
            }
            self.label_all(&rest, min.unwrap_or(old));
            self.scratch = rest;
        }
        self.sides[s].queue = members;
    }

    /// Gives every vertex of `members` the label `label`, the records prefetched ahead (a
    /// large component's members are spread over the whole vertex table).
    fn label_all(&mut self, members: &[u32], label: Node) {
        for (i, &v) in members.iter().enumerate() {
            if let Some(&ahead) = members.get(i + AHEAD) {
                prefetch(&self.vertices[ahead as usize]);
            }
            self.set_label(v, label);
        }
    }

    /// The vertices of `start`'s tree, in breadth-first order, the smallest id among them and
    /// whether the walk completed; with `label`, each is given that label as it is reached.
    ///
    /// A walk that has reached more than `1 /` [`SCAN_SHARE`] of the vertex table stops (the
    /// third value is then `false`; the list and minimum are partial, and with `label` only the
    /// vertices before the last ones listed are labelled): the caller finds the rest of the tree
    /// by one pass over the table in order, which costs less per vertex than the walk's random
    /// records by about that factor (the giant component of `wcc-churn`, 650 k vertices of a 1 M
    /// table, took 47–68 ms to walk).
    ///
    /// A tree needs no visited marks: each vertex is entered through one forest edge (`via`)
    /// and continues through the others. That keeps the traversal from touching a vertex's
    /// record before its turn, so the queue ahead of it can be prefetched in stages: the record
    /// [`AHEAD`] entries ahead, its adjacency half as far ahead, the links of its forest edges a
    /// quarter as far (over a large component every one of them is a cache miss).
    fn collect_tree(&mut self, start: u32, label: Option<Node>) -> (Vec<u32>, Option<Node>, bool) {
        let cap = self.vertices.len() / SCAN_SHARE;
        let mut out = std::mem::take(&mut self.scratch);
        let mut via = std::mem::take(&mut self.via);
        out.clear();
        via.clear();
        out.push(start);
        via.push(NONE);
        let mut min: Option<Node> = None;
        let mut i = 0;
        let mut complete = true;
        while i < out.len() {
            if out.len() > cap {
                complete = false;
                break;
            }
            if let Some(&v) = out.get(i + AHEAD) {
                prefetch(&self.vertices[v as usize]);
            }
            if let Some(&v) = out.get(i + AHEAD / 2) {
                let x = &self.vertices[v as usize];
                if x.tree_len > 0 {
                    prefetch_ptr(x.adj.as_ptr());
                }
            }
            if let Some(&v) = out.get(i + AHEAD / 4) {
                let x = &self.vertices[v as usize];
                for &l in &x.adj[..x.tree_len as usize] {
                    prefetch(&self.links[l as usize]);
                }
            }
            let (x, from) = (out[i], via[i]);
            i += 1;
            let vx = &self.vertices[x as usize];
            min = Some(min.map_or(vx.id, |m| m.min(vx.id)));
            for &l in &vx.adj[..vx.tree_len as usize] {
                if l != from {
                    out.push(self.across(l, x));
                    via.push(l);
                }
            }
            if let Some(label) = label {
                self.set_label(x, label);
            }
        }
        self.via = via;
        (out, min, complete)
    }

    /// Gives every vertex of `start`'s tree the label `label`: a walk, or for a large tree a
    /// pass over the vertex table (see [`DynamicForest::collect_tree`]): its vertices are the
    /// present ones that still have its old label (labels name one tree each).
    fn relabel_tree(&mut self, start: u32, label: Node) {
        let old = self.vertices[start as usize].label;
        let (members, _, complete) = self.collect_tree(start, Some(label));
        if !complete {
            // The walk labelled part of the tree already; the pass labels the rest as it finds
            // them (in table order).
            self.pass_over_table(old, None, |f, v| f.set_label(v, label));
        }
        self.scratch = members;
    }

    /// One pass over the vertex table in order: hands `visit` the present vertices labelled
    /// `old`, except with `except` those the current search's side `except` reached. Labels name
    /// one tree each, so that is a tree (or the part of one beyond a side).
    fn pass_over_table(&mut self, old: Node, except: Option<usize>, mut visit: impl FnMut(&mut Self, u32)) {
        self.scans += 1;
        let stamp = self.stamp;
        for v in 0..self.vertices.len() {
            let x = &self.vertices[v];
            if x.present && x.label == old && !except.is_some_and(|s| x.mark == stamp && x.side as usize == s) {
                visit(self, v as u32);
            }
        }
    }

    /// Rebuilds the forest from the present links with union-find (the open time's budget ran
    /// out). Every vertex is compared with its label before the time.
    fn rebuild(&mut self) {
        for v in 0..self.vertices.len() as u32 {
            self.touch(v);
        }
        let was_present: Vec<bool> =
            if self.summary { self.vertices.iter().map(|x| x.present).collect() } else { Vec::new() };
        if self.summary {
            for l in 0..self.links.len() as u32 {
                let link = self.links[l as usize];
                if link.count() > 0 && link.tree() {
                    self.log_link(l, -1);
                }
            }
        }
        for x in &mut self.vertices {
            x.tree_len = 0;
            x.other_len = 0;
            x.stale = 0;
        }
        let mut uf = DenseUnionFind::with_len(self.vertices.len());
        for l in 0..self.links.len() as u32 {
            let link = self.links[l as usize];
            if link.count() == 0 {
                continue;
            }
            let tree = uf.union(link.ends[0], link.ends[1]);
            self.links[l as usize].set_tree(tree);
            self.attach(l);
        }
        let mut min = vec![Node::MAX; self.vertices.len()];
        self.present = 0;
        for v in 0..self.vertices.len() {
            let e = self.extra(v as u32);
            let x = &mut self.vertices[v];
            x.present = e.fixed > 0 || e.loops > 0 || x.has_links();
            if x.present {
                self.present += 1;
                let r = uf.find(v as u32) as usize;
                min[r] = min[r].min(x.id);
            }
        }
        if self.summary {
            // Tags: one per tree, numbered afresh.
            self.sizes.clear();
            let mut tag = vec![Node::MAX; self.vertices.len()];
            for (v, &was) in was_present.iter().enumerate() {
                let x = &self.vertices[v];
                if x.present != was {
                    self.log.push(((x.id, x.id), if x.present { 1 } else { -1 }));
                }
                if x.present {
                    let r = uf.find(v as u32) as usize;
                    if tag[r] == Node::MAX {
                        tag[r] = self.fresh_tag(0);
                    }
                    *self.sizes.entry(tag[r]).or_insert(0) += 1;
                    self.vertices[v].label = tag[r];
                }
            }
        } else {
            for v in 0..self.vertices.len() {
                if self.vertices[v].present {
                    let r = uf.find(v as u32) as usize;
                    self.vertices[v].label = min[r];
                }
            }
        }
        self.degraded = false;
        self.fallbacks += 1;
        if let Some(c) = &self.shared_fallbacks {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The label changes of the open time: `((vertex, label), ±1)`, net.
    fn drain_changes(&mut self, emit: &mut impl FnMut((Node, u64), Diff)) {
        let mut dirty = std::mem::take(&mut self.dirty);
        for (i, &v) in dirty.iter().enumerate() {
            if let Some(&ahead) = dirty.get(i + AHEAD) {
                prefetch(&self.vertices[ahead as usize]);
            }
            let x = &self.vertices[v as usize];
            let (old, new) = (x.was_present.then_some(x.before), x.present.then_some(x.label));
            if old != new {
                if let Some(l) = old {
                    emit((x.id, l), -1);
                }
                if let Some(l) = new {
                    emit((x.id, l), 1);
                }
            }
        }
        dirty.clear();
        // Keep the allocation unless one huge time (a rebuild) left it oversized.
        if dirty.capacity() <= 1 << 16 {
            self.dirty = dirty;
        }
        // No vertex is listed in the next time.
        if self.time == u32::MAX {
            for x in &mut self.vertices {
                x.listed = 0;
            }
            self.time = 0;
        }
        self.time += 1;
    }

    /// The forest's invariants (debug builds, after every time).
    #[cfg(debug_assertions)]
    fn check(&self) {
        let n = self.vertices.len();
        let mut uf = DenseUnionFind::with_len(n);
        let mut forest = 0usize;
        let mut live = 0usize;
        for (l, link) in self.links.iter().enumerate() {
            if link.count() == 0 {
                continue;
            }
            live += 1;
            let [a, b] = link.ends;
            assert_eq!(
                self.pairs.get(
                    PairTable::tag(self.vertices[a as usize].id, self.vertices[b as usize].id),
                    Self::pair_key(a, b),
                    &self.links
                ),
                Some(l as u32),
                "link {l} not in the pair index"
            );
            for i in 0..2 {
                let x = &self.vertices[link.ends[i] as usize];
                assert_eq!(
                    x.entry(link.tree(), link.pos[i] as usize),
                    Some(&(l as u32)),
                    "link {l} not at its position"
                );
            }
            if link.tree() {
                forest += 1;
                assert!(uf.union(a, b), "the forest has a cycle through link {l}");
            }
        }
        assert_eq!(live, self.pairs.len(), "free links in the pair index");
        let mut min = vec![Node::MAX; n];
        let mut present = 0usize;
        let mut components = 0usize;
        for (v, x) in self.vertices.iter().enumerate() {
            let list_links = x.tree_len as usize + x.other_len as usize - x.stale as usize;
            let live_others =
                (0..x.other_len as usize).filter(|&k| self.other_live(v as u32, k, x.adj[x.adj.len() - 1 - k])).count();
            assert_eq!(x.other_len as usize - live_others, x.stale as usize, "vertex {}: stale count", x.id);
            let e = self.extras.get(&(v as u32)).copied();
            assert_eq!(x.extra, e.is_some(), "vertex {}: extra flag", x.id);
            assert!(e.is_none_or(|e| e.fixed != 0 || e.loops != 0), "vertex {}: empty extra entry", x.id);
            let e = e.unwrap_or_default();
            assert!(x.listed != self.time, "vertex {} still listed", x.id);
            assert_eq!(
                x.present,
                e.fixed > 0 || e.loops > 0 || list_links > 0,
                "vertex {} present {} but fixed {} loops {} links {}",
                x.id,
                x.present,
                e.fixed,
                e.loops,
                list_links
            );
            if x.present {
                present += 1;
                let r = uf.find(v as u32) as usize;
                if r == v {
                    components += 1;
                }
                min[r] = min[r].min(x.id);
            }
        }
        assert_eq!(present, self.present, "present count");
        assert_eq!(forest, present - components, "forest size is not vertices - components");
        for (v, x) in self.vertices.iter().enumerate() {
            let no = x.other_len as usize;
            for (p, &l) in x.others().iter().enumerate() {
                if !self.other_live(v as u32, no - 1 - p, l) {
                    continue;
                }
                let [a, b] = self.links[l as usize].ends;
                assert_eq!(uf.find(a), uf.find(b), "non-tree edge {l} between two trees");
            }
        }
        if self.summary {
            // One tag per tree, distinct trees distinct tags, sizes right.
            let mut tag_of_root: BTreeMap<u32, Node> = BTreeMap::new();
            let mut sizes: BTreeMap<Node, u32> = BTreeMap::new();
            for (v, x) in self.vertices.iter().enumerate() {
                if x.present {
                    let r = uf.find(v as u32);
                    assert_eq!(*tag_of_root.entry(r).or_insert(x.label), x.label, "two tags in one tree");
                    *sizes.entry(x.label).or_insert(0) += 1;
                }
            }
            assert_eq!(sizes.len(), tag_of_root.len(), "one tag in two trees");
            let have: BTreeMap<Node, u32> = self.sizes.iter().map(|(&k, &v)| (k, v)).collect();
            assert_eq!(have, sizes, "tree sizes");
        } else {
            for (v, x) in self.vertices.iter().enumerate() {
                if x.present {
                    assert_eq!(x.label, min[uf.find(v as u32) as usize], "vertex {} has a wrong label", x.id);
                }
            }
        }
    }
}

/// An edge copy `(a, b, 0)` or a vertex-file vertex `(a, a, 1)`, with its time and diff.
type Event = ((Node, Node, u8), Time, Diff);
/// A forest's output: label changes (or, in summary mode, forest-edge and presence changes).
type Output = ((Node, u64), Time, Diff);

/// Which worker keeps a vertex pair's link: a hash of the pair, either way round.
fn pair_worker(a: Node, b: Node) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    (lo.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ hi.rotate_left(29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 17
}

/// The fully dynamic path as a dataflow. With [`ForestLayout::Single`] (or with one worker),
/// every record goes to worker 0, which keeps the forest and emits labels. With
/// [`ForestLayout::Shares`] and several workers, every worker keeps the forest of its share of the
/// vertex pairs (routed by a hash of the pair) in summary mode and forwards, per time, only the
/// net change of its forest edges and of its vertices' presence; worker 0 keeps the forest of the
/// union of these forests (it has the components of the whole graph), a worker's presence
/// counting as a self-loop, and emits the labels. Every forest applies a time once the frontier
/// has passed it. Its fallback rebuilds are added to `fallbacks`, if given, and reported per time
/// in the input's [`AlgorithmCounts`].
pub fn wcc_dynamic<'a>(
    input: GraphInput<'a>,
    params: ForestParams,
    fallbacks: Option<Arc<AtomicU64>>,
) -> ResultCollection<'a> {
    let factor = params.budget;
    let shares = params.layout == ForestLayout::Shares;
    let log = input.counts().cloned();
    if let Some(log) = &log {
        log.activate_fallbacks();
    }
    let peers = input.edges.scope().peers();
    let edges = input.edges.inner.map(|((s, d, _w), t, diff)| ((s, d, 0u8), t, diff));
    let vertices = input.vertices.inner.map(|(v, t, diff)| ((v, v, 1u8), t, diff));
    if let (Some(log), false) = (&log, shares && peers > 1) {
        log.activate_census();
    }
    let edges = if shares && peers > 1 {
        let share = DynamicForest::summary(factor).with_counter(fallbacks.clone());
        let pact = Exchange::new(|x: &Event| pair_worker(x.0 .0, x.0 .1));
        forest_operator(edges, pact, "WccDynamicShare", share, log.clone())
            .map(|((a, b), t, diff)| ((a, b, 0u8), t, diff))
    } else {
        edges
    };
    let forest = DynamicForest::new(factor).with_counter(fallbacks);
    // Whole containers to worker 0 (no per-record exchange).
    forest_operator(edges.concat(vertices), super::gather::to_first_worker(), "WccDynamicForest", forest, log)
        .as_collection()
}

/// Records of one time below this many are applied without consolidating them on arrival.
const SMALL: usize = 1 << 14;

/// One time's records at a forest operator: vertex-file changes, and edge copy changes as
/// `(a, b, diff)` with `a <= b` (24 bytes each), consolidated in place whenever the vector is
/// full, so that the copies of an initial graph do not pile up (duplicates and `+1 -1` pairs
/// cancel while they arrive). [`DynamicForest::apply`] consolidates once more, so the result
/// does not depend on when this happened.
#[derive(Default)]
struct TimeBatch {
    fixed: Vec<(Node, Diff)>,
    edges: Vec<(Node, Node, Diff)>,
}

impl TimeBatch {
    fn push_edge(&mut self, a: Node, b: Node, diff: Diff) {
        let edges = &mut self.edges;
        if edges.len() == edges.capacity() && edges.len() >= SMALL {
            consolidate_edges(edges);
            // At least as many pushes again before the next consolidation.
            if edges.len() * 2 > edges.capacity() {
                edges.reserve(edges.len());
            }
        }
        edges.push((a.min(b), a.max(b), diff));
    }
}

/// Returns the allocator's free pages to the system, before a large time (an initial graph) is
/// applied. The time's records reached this worker through the exchange in buffers that the
/// other workers allocated, so with glibc they were freed into those threads' arenas, where a
/// few live blocks among them keep their pages resident (~17 MB on `wcc-window` at 2 workers)
/// and this worker's forest, about to grow by the time, cannot reuse them. glibc's
/// `malloc_trim` releases the free pages of every arena (once per large time); elsewhere this
/// does nothing.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: `malloc_trim` takes no pointers; it only returns free pages of the C
        // allocator's heaps to the system (nothing live moves).
        unsafe {
            malloc_trim(0);
        }
    }
}

/// `forest` as an operator: records travel by `pact`, each time is applied once the frontier
/// has passed it, in time order, and its output emitted at that time; its fallback rebuilds are
/// recorded in `log` at that time.
fn forest_operator<'a>(
    events: timely::dataflow::StreamVec<'a, Time, Event>,
    pact: impl timely::dataflow::channels::pact::ParallelizationContract<Time, Vec<Event>>,
    name: &str,
    forest: DynamicForest,
    log: Option<AlgorithmCounts>,
) -> timely::dataflow::StreamVec<'a, Time, Output> {
    events.unary_frontier::<timely::container::CapacityContainerBuilder<Vec<Output>>, _, _, _>(
        pact,
        name,
        move |_capability, _info| {
            let mut forest = forest;
            let mut stash: TimeBatches<TimeBatch> = TimeBatches::new();
            move |(input, frontier), output| {
                input.for_each(|cap, data| {
                    for ((a, b, kind), t, diff) in data.drain(..) {
                        let batch = stash.batch(&cap, t);
                        if kind == 1 {
                            batch.fixed.push((a, diff));
                        } else {
                            batch.push_edge(a, b, diff);
                        }
                    }
                });
                // Times the frontier has passed are complete: apply them in order (the batch
                // is freed once applied).
                while let Some((t, cap, mut batch)) = stash.next_complete(frontier) {
                    let before = forest.fallbacks();
                    if batch.edges.len() >= FREE_AS_APPLIED {
                        // Before the forest grows by it: see `release_free_memory`.
                        release_free_memory();
                    }
                    // The changes go out as they are found (never listed whole).
                    let mut session = output.session(&cap);
                    forest.apply_with(&batch.fixed, &mut batch.edges, &mut |record, diff| {
                        session.give((record, t, diff))
                    });
                    drop(session);
                    drop(batch);
                    if let Some(log) = &log {
                        log.record_fallbacks(t, forest.fallbacks() - before);
                        if !forest.summary {
                            log.record_census(t, forest.present as u64, forest.links() as u64);
                        }
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::{BTreeMap, BTreeSet};

    /// Applies `changes` to `state`, checking that they are net and consistent.
    fn absorb(state: &mut BTreeMap<Node, u64>, changes: &[((Node, u64), Diff)], what: &str) {
        let mut seen = BTreeSet::new();
        for &((v, l), _) in changes.iter().filter(|c| c.1 < 0) {
            assert!(seen.insert((v, l)), "{what}: ({v}, {l}) retracted twice");
            assert_eq!(state.remove(&v), Some(l), "{what}: retraction of a label {v} does not have");
        }
        for &((v, l), d) in changes.iter().filter(|c| c.1 > 0) {
            assert_eq!(d, 1, "{what}");
            assert!(!seen.contains(&(v, l)), "{what}: net-zero pair ({v}, {l})");
            assert!(state.insert(v, l).is_none(), "{what}: {v} has two labels");
        }
    }

    /// Asserts that `state` holds the oracle's labels of the graph whose present pairs are the
    /// keys of `counts`.
    fn assert_oracle(state: &BTreeMap<Node, u64>, counts: &BTreeMap<(Node, Node), i64>, what: &str) {
        let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(a, b)| (a, b, 1.0)).collect();
        let vertices = crate::oracle::vertex_set(std::iter::empty(), &edges);
        assert_eq!(*state, crate::oracle::wcc(&vertices, &edges), "{what}");
    }

    /// Random streams aimed at forest edges, bridges and minima, with multi-edges, self-loops,
    /// re-insertions and vertex-file vertices: labels equal the oracle's after every time, for
    /// the default budget, budget 0 and a tiny budget, with small ids, huge ids and both.
    #[test]
    fn labels_match_the_oracle_after_every_time() {
        let mut zero_budget_fallbacks = 0;
        for seed in 0..40u64 {
            for factor in [DEFAULT_BUDGET, 0.0, 0.05] {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let n = rng.gen_range(2..30u64);
                // Ids: small (identity indexing throughout), all huge (the index from the
                // start), or half of them huge (identity indexing ends mid-stream).
                let id = |v: Node| match seed % 3 {
                    1 => v + (1 << 40),
                    2 if v >= n / 2 => v * 7 + (1 << 40),
                    _ => v,
                };
                let mut forest = DynamicForest::new(factor);
                let mut state: BTreeMap<Node, u64> = BTreeMap::new();
                let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
                let mut fixed: BTreeSet<Node> = BTreeSet::new();
                let mut out = Vec::new();
                for t in 0..80u64 {
                    let mut vfile = Vec::new();
                    if rng.gen_bool(0.1) {
                        let v = rng.gen_range(0..n);
                        if fixed.insert(v) {
                            vfile.push((v, 1));
                        }
                    }
                    let mut batch = Vec::new();
                    let mut after = counts.clone();
                    for _ in 0..rng.gen_range(0..8) {
                        let present: Vec<(Node, Node)> = after.keys().copied().collect();
                        let r: f64 = rng.gen();
                        if r < 0.4 && !present.is_empty() {
                            // Prefer edges at the smallest ids: forest edges and minima.
                            let i = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(0..present.len()) };
                            let (a, b) = present[i];
                            let c = after.get_mut(&(a, b)).expect("present");
                            *c -= 1;
                            if *c == 0 {
                                after.remove(&(a, b));
                            }
                            let (a, b) = if rng.gen_bool(0.5) { (a, b) } else { (b, a) };
                            batch.push((a, b, -1));
                        } else {
                            let a = rng.gen_range(0..n);
                            let b = if rng.gen_bool(0.1) { a } else { rng.gen_range(0..n) };
                            *after.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                            batch.push((a, b, 1));
                        }
                    }
                    counts = after;
                    out.clear();
                    let (mut vfile, mut batch) = (vfile, batch);
                    for v in &mut vfile {
                        v.0 = id(v.0);
                    }
                    for e in &mut batch {
                        (e.0, e.1) = (id(e.0), id(e.1));
                    }
                    forest.apply(&vfile, &mut batch, &mut out);
                    let what = format!("seed {seed} factor {factor} t {t}");
                    absorb(&mut state, &out, &what);
                    let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(a, b)| (id(a), id(b), 1.0)).collect();
                    let vertices = crate::oracle::vertex_set(fixed.iter().map(|&v| id(v)), &edges);
                    assert_eq!(state, crate::oracle::wcc(&vertices, &edges), "{what}");
                }
                if factor == 0.0 {
                    zero_budget_fallbacks += forest.fallbacks();
                }
            }
        }
        assert!(zero_budget_fallbacks > 100, "budget 0 fell back only {zero_budget_fallbacks} times");
    }

    /// A large time (an initial graph, applied in chunks) with dense ids (identity indexing,
    /// its records made at once), sparse ids (the index) and dense ids followed by sparse ones
    /// (identity indexing ends after the large time), then small times of churn: labels equal
    /// the oracle's after each time.
    #[test]
    fn large_times_with_dense_and_sparse_ids() {
        for (case, seed) in [(0, 7u64), (1, 8), (2, 9)] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = 30_000u64;
            let id = |v: Node, t: u64| match case {
                1 => v * 1_000_003 + (1 << 40),
                2 if t > 0 && v % 2 == 1 => v + (1 << 40),
                _ => v,
            };
            let mut forest = DynamicForest::default();
            let mut state: BTreeMap<Node, u64> = BTreeMap::new();
            let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
            let mut out = Vec::new();
            for t in 0..4u64 {
                let size = if t == 0 { FREE_AS_APPLIED + 5_000 } else { 2_000 };
                let mut batch = Vec::new();
                for _ in 0..size {
                    let present: Vec<(Node, Node)> =
                        if t > 0 && rng.gen_bool(0.5) { counts.keys().copied().take(64).collect() } else { Vec::new() };
                    if let Some(&(a, b)) = present.get(rng.gen_range(0..present.len().max(1))) {
                        let c = counts.get_mut(&(a, b)).expect("present");
                        *c -= 1;
                        if *c == 0 {
                            counts.remove(&(a, b));
                        }
                        batch.push((a, b, -1));
                    } else {
                        // Sparse enough that the graph has many components.
                        let (a, b) = (id(rng.gen_range(0..n), t), id(rng.gen_range(0..n), t));
                        *counts.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                        batch.push((b, a, 1));
                    }
                }
                out.clear();
                forest.apply(&[], &mut batch, &mut out);
                let what = format!("case {case} seed {seed} t {t}");
                absorb(&mut state, &out, &what);
                assert_oracle(&state, &counts, &what);
                assert_eq!(forest.identity, case == 0 || (case == 2 && t == 0), "{what}: identity indexing");
            }
        }
    }

    /// The distributed composition, sequentially: shares of the pairs in summary forests, their
    /// forest-edge and presence changes fed to one labelling forest, equal to the oracle after
    /// every time; summary outputs are net, forest edges canonical.
    #[test]
    fn summaries_of_shares_compose_to_the_labels() {
        for seed in 100..130u64 {
            for (shares, factor) in [(2usize, DEFAULT_BUDGET), (3, DEFAULT_BUDGET), (2, 0.0)] {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let n = rng.gen_range(2..25u64);
                let mut parts: Vec<DynamicForest> = (0..shares).map(|_| DynamicForest::summary(factor)).collect();
                let mut top = DynamicForest::new(factor);
                let mut state: BTreeMap<Node, u64> = BTreeMap::new();
                let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
                let fixed: Vec<Node> = (0..n).filter(|_| rng.gen_bool(0.1)).collect();
                let mut out = Vec::new();
                for t in 0..60u64 {
                    let mut batches: Vec<Vec<(Node, Node, Diff)>> = vec![Vec::new(); shares];
                    for _ in 0..rng.gen_range(0..8) {
                        let present: Vec<(Node, Node)> = counts.keys().copied().collect();
                        let (a, b, d) = if rng.gen_bool(0.45) && !present.is_empty() {
                            let (a, b) = present[rng.gen_range(0..present.len())];
                            (a, b, -1)
                        } else {
                            let a = rng.gen_range(0..n);
                            let b = if rng.gen_bool(0.1) { a } else { rng.gen_range(0..n) };
                            (a.min(b), a.max(b), 1)
                        };
                        let c = counts.entry((a, b)).or_insert(0);
                        *c += d as i64;
                        if *c == 0 {
                            counts.remove(&(a, b));
                        }
                        batches[(pair_worker(a, b) % shares as u64) as usize].push((b, a, d));
                    }
                    let mut forwarded = Vec::new();
                    for (part, batch) in parts.iter_mut().zip(batches.iter_mut()) {
                        let mut summary = Vec::new();
                        part.apply(&[], batch, &mut summary);
                        let keys: BTreeSet<(Node, Node)> = summary.iter().map(|c| c.0).collect();
                        assert_eq!(keys.len(), summary.len(), "seed {seed} t {t}: summary not net");
                        for &((a, b), d) in &summary {
                            assert!(a <= b && (d == 1 || d == -1), "seed {seed} t {t}: summary record");
                            forwarded.push((a, b, d));
                        }
                    }
                    let vfile: Vec<(Node, Diff)> =
                        if t == 0 { fixed.iter().map(|&v| (v, 1)).collect() } else { vec![] };
                    out.clear();
                    top.apply(&vfile, &mut forwarded, &mut out);
                    let what = format!("seed {seed} shares {shares} factor {factor} t {t}");
                    absorb(&mut state, &out, &what);
                    let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(a, b)| (a, b, 1.0)).collect();
                    let vertices = crate::oracle::vertex_set(fixed.iter().copied(), &edges);
                    assert_eq!(state, crate::oracle::wcc(&vertices, &edges), "{what}");
                }
            }
        }
    }

    /// The pair table against a plain map: random insertions and removals (long probe runs
    /// in small tables, growth, backward shifts), every pair looked up after every step.
    #[test]
    fn pair_table_equals_a_map() {
        for seed in 0..20u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.gen_range(2..40u32);
            let mut table = PairTable::default();
            let mut links: Vec<Link> = Vec::new();
            let mut want: BTreeMap<u64, u32> = BTreeMap::new();
            for step in 0..2_000 {
                let (a, b) = (rng.gen_range(0..n), rng.gen_range(0..n));
                if a == b {
                    continue;
                }
                let key = DynamicForest::pair_key(a, b);
                let tag = PairTable::tag(a as Node, b as Node);
                match want.get(&key) {
                    Some(&l) if rng.gen_bool(0.6) => {
                        table.remove(tag, l);
                        want.remove(&key);
                    }
                    Some(_) => {}
                    None => {
                        let l = links.len() as u32;
                        links.push(Link { ends: [b, a], bits: 0, pos: [0; 2] });
                        table.insert(tag, l);
                        want.insert(key, l);
                    }
                }
                assert_eq!(table.len(), want.len(), "seed {seed} step {step}");
                assert!(table.len() * 4 <= table.slots.len() * 3, "seed {seed} step {step}: over 3/4 full");
                for x in 0..n {
                    for y in x + 1..n {
                        let key = DynamicForest::pair_key(x, y);
                        let tag = PairTable::tag(x as Node, y as Node);
                        assert_eq!(table.get(tag, key, &links), want.get(&key).copied(), "seed {seed} step {step}");
                    }
                }
            }
        }
    }

    /// `consolidate_edges` and `consolidate_split` against a map, on both of their paths (packed
    /// `u64` keys for small ids, 128-bit keys for large ones): the same pairs, sums and order.
    #[test]
    fn consolidation_equals_a_map() {
        for seed in 0..50u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let large = seed % 2 == 1;
            let n = rng.gen_range(1..3_000usize);
            let id = |rng: &mut ChaCha8Rng| {
                let v = rng.gen_range(0..200u64);
                if large {
                    v << 40
                } else {
                    v
                }
            };
            let mut edges: Vec<(Node, Node, Diff)> =
                (0..n).map(|_| (id(&mut rng), id(&mut rng), rng.gen_range(-2..3 as Diff))).collect();
            let mut want: BTreeMap<(Node, Node), Diff> = BTreeMap::new();
            for &(a, b, d) in &edges {
                *want.entry((a.min(b), a.max(b))).or_insert(0) += d;
            }
            want.retain(|_, d| *d != 0);
            let (mut split, mut keys, mut insertions, mut deletions) = (edges.clone(), vec![7], vec![], vec![]);
            consolidate_edges(&mut edges);
            let want: Vec<(Node, Node, Diff)> = want.into_iter().map(|((a, b), d)| (a, b, d)).collect();
            assert_eq!(edges, want, "seed {seed}");
            // The split: the same records, insertions and deletions apart, each in pair order.
            consolidate_split(&mut split, &mut keys, &mut insertions, &mut deletions);
            let (want_in, want_out): (Vec<_>, Vec<_>) = want.iter().partition(|e| e.2 > 0);
            assert_eq!((insertions, deletions), (want_in, want_out), "seed {seed}: split");
        }
    }

    /// The radix sort equals `sort_unstable` on random keys of every width, duplicates and
    /// constant bytes included, below and above its size threshold.
    #[test]
    fn radix_sort_equals_a_sort() {
        for seed in 0..60u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let bits = rng.gen_range(1..=64u32);
            let n = rng.gen_range(0..5_000usize);
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            // Some runs keep a middle byte constant, some draw from few values (duplicates).
            let fixed = rng.gen_bool(0.3).then_some(!(0xFFu64 << 16));
            let few = rng.gen_bool(0.3);
            let mut keys: Vec<u64> = (0..n)
                .map(|_| {
                    let k = if few { rng.gen_range(0..20u64) } else { rng.gen::<u64>() };
                    fixed.map_or(k, |f| k & f) & mask
                })
                .collect();
            let mut want = keys.clone();
            want.sort_unstable();
            radix_sort(&mut keys, bits);
            assert_eq!(keys, want, "seed {seed}, {n} keys of {bits} bits");
        }
    }

    /// More than 2^32 copies of one pair: counted exactly beside the 32-bit count.
    #[test]
    fn huge_multiplicities_are_exact() {
        let mut forest = DynamicForest::new(DEFAULT_BUDGET);
        let mut out = Vec::new();
        let many: Diff = (1 << 33) + 3;
        forest.apply(&[], &mut vec![(1, 2, many), (2, 3, 1)], &mut out);
        assert_eq!(out.len(), 3);
        out.clear();
        forest.apply(&[], &mut vec![(2, 1, -(many - 1))], &mut out);
        assert!(out.is_empty(), "one copy of 1 - 2 is left");
        forest.apply(&[], &mut vec![(1, 2, (1 << 32) - 2)], &mut out);
        forest.apply(&[], &mut vec![(1, 2, -((1 << 32) - 2))], &mut out);
        assert!(out.is_empty());
        forest.apply(&[], &mut vec![(1, 2, -1)], &mut out);
        out.sort();
        assert_eq!(out, vec![((1, 1), -1), ((2, 1), -1), ((2, 2), 1), ((3, 1), -1), ((3, 2), 1)]);
        assert!(forest.big.is_empty());
    }

    /// A large time through the operator's batch (consolidated whenever its vector is full) and
    /// the freeing path of `apply` gives the same output as the plain list through the plain
    /// path, time after time, and labels equal to the oracle.
    #[test]
    fn large_batches_equal_plain_lists() {
        let seed = 7;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut batched, mut plain) = (DynamicForest::new(DEFAULT_BUDGET), DynamicForest::new(DEFAULT_BUDGET));
        let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
        let mut state = BTreeMap::new();
        for t in 0..4 {
            let mut records: Vec<(Node, Node, Diff)> = Vec::new();
            let present: Vec<(Node, Node)> = counts.keys().copied().collect();
            let size = if t == 2 { 1_000 } else { 150_000 };
            for _ in 0..size {
                if !present.is_empty() && rng.gen_bool(0.3) {
                    let (a, b) = present[rng.gen_range(0..present.len())];
                    let c = counts.get_mut(&(a, b)).expect("present");
                    if *c > 0 {
                        *c -= 1;
                        records.push(if rng.gen_bool(0.5) { (a, b, -1) } else { (b, a, -1) });
                    }
                } else {
                    let (a, b) = (rng.gen_range(0..60_000u64), rng.gen_range(0..60_000u64));
                    *counts.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                    records.push((a, b, 1));
                }
            }
            counts.retain(|_, c| *c > 0);
            let mut batch = TimeBatch::default();
            for &(a, b, d) in &records {
                batch.push_edge(a, b, d);
            }
            assert!(batch.edges.len() < records.len() || size < SMALL, "t {t}: never consolidated");
            let (mut got, mut want) = (Vec::new(), Vec::new());
            batched.apply(&[], &mut batch.edges, &mut got);
            plain.apply(&[], &mut records, &mut want);
            got.sort();
            want.sort();
            assert!(got == want, "seed {seed} t {t}: outputs differ");
            absorb(&mut state, &got, &format!("seed {seed} t {t}"));
            let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(a, b)| (a, b, 1.0)).collect();
            let vertices = crate::oracle::vertex_set(std::iter::empty(), &edges);
            assert!(state == crate::oracle::wcc(&vertices, &edges), "seed {seed} t {t}: labels differ from the oracle");
        }
    }

    /// Where a forest's bytes go on the `wcc-window` scenario: its window (the first 1 M edges
    /// of R-MAT scale 20) loaded, then after its 500 epochs (1,000 edges in, 1,000 out):
    /// `cargo test --lib memory_shares -- --ignored --nocapture`. Heap blocks are counted as
    /// glibc rounds them (16-byte steps, 32 bytes at least, 8 of header).
    #[test]
    #[ignore]
    fn memory_shares() {
        fn map<K, V>(m: &FxHashMap<K, V>) -> usize {
            let buckets = if m.capacity() == 0 { 0 } else { (m.capacity() * 8 / 7).next_power_of_two() };
            buckets * (std::mem::size_of::<(K, V)>() + 1)
        }
        fn report(forest: &DynamicForest, edges: usize) {
            let vertices = forest.vertices.len();
            let records = forest.vertices.capacity() * std::mem::size_of::<Vertex>();
            let lists = forest.slab.bytes();
            let index = map(&forest.index.sparse) + forest.index.dense.capacity() * 4;
            let links = forest.links.capacity() * std::mem::size_of::<Link>();
            let pairs = forest.pairs.bytes();
            let total = records + lists + index + links + pairs;
            let per = |b: usize| b as f64 / edges as f64;
            println!(
                "{edges} live edges, {vertices} vertex records, {} links: per live edge {:.1} B = vertex records \
                 {:.1} ({} B each) + adjacency lists {:.1} + vertex index {:.1} + links {:.1} + pair map {:.1}; \
                 per vertex {:.1} B (record, lists, index)",
                forest.links(),
                per(total),
                per(records),
                std::mem::size_of::<Vertex>(),
                per(lists),
                per(index),
                per(links),
                per(pairs),
                (records + lists + index) as f64 / vertices as f64,
            );
        }
        let edges = crate::sources::generate::rmat(20, 16, 1);
        let window = 1_000_000;
        let mut forest = DynamicForest::new(DEFAULT_BUDGET);
        let mut out = Vec::new();
        let mut batch: Vec<(Node, Node, Diff)> = edges[..window].iter().map(|&(a, b)| (a, b, 1)).collect();
        forest.apply(&[], &mut batch, &mut out);
        report(&forest, window);
        for e in 0..500 {
            let (lo, hi) = (e * 1_000, window + e * 1_000);
            let mut batch: Vec<(Node, Node, Diff)> = edges[hi..hi + 1_000].iter().map(|&(a, b)| (a, b, 1)).collect();
            batch.extend(edges[lo..lo + 1_000].iter().map(|&(a, b)| (a, b, -1)));
            out.clear();
            forest.apply(&[], &mut batch, &mut out);
        }
        report(&forest, window);
    }

    #[test]
    fn large_relabels_pass_over_the_table_and_small_ones_walk() {
        // A path 1 - 2 - ... - 2000 and a path 3001 - ... - 3010 (the table: 2010 vertices, so a
        // walk stops beyond 125).
        let mut edges: Vec<(Node, Node, Diff)> = (1..2000).map(|i| (i, i + 1, 1)).collect();
        edges.extend((3001..3010).map(|i| (i, i + 1, 1)));
        let mut forest = DynamicForest::new(DEFAULT_BUDGET);
        let mut state = BTreeMap::new();
        let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
        let mut step = |forest: &mut DynamicForest, mut batch: Vec<(Node, Node, Diff)>, what: &str| {
            for &(a, b, d) in &batch {
                *counts.entry((a.min(b), a.max(b))).or_insert(0) += d as i64;
            }
            counts.retain(|_, c| *c != 0);
            let mut out = Vec::new();
            forest.apply(&[], &mut batch, &mut out);
            absorb(&mut state, &out, what);
            assert_oracle(&state, &counts, what);
        };
        step(&mut forest, edges, "initial");
        let scans = forest.scans;
        // The small path joins vertex 500 (label 1): its 10 vertices are walked.
        step(&mut forest, vec![(3005, 500, 1)], "small merge");
        assert_eq!(forest.scans, scans, "a 10-vertex relabel walks");
        // Vertex 0 joins the middle of the large tree: all 2010 vertices take label 0 (a merge
        // that passes over the table).
        step(&mut forest, vec![(0, 1000, 1)], "large merge");
        assert_eq!(forest.scans, scans + 1, "a 2010-vertex merge passes over the table");
        // 0 leaves again: the other side (2010 vertices) loses the minimum (a split that passes
        // over the table, the side of 0 excluded).
        step(&mut forest, vec![(0, 1000, -1)], "large split");
        assert_eq!(forest.scans, scans + 2, "a 2010-vertex split passes over the table");
        // Within one time, 0 rejoins at 1 (a merge) and the path is cut at 1000 - 1001 (a split:
        // 1001 and up, with the small path, take 1001).
        step(&mut forest, vec![(0, 1, 1), (1000, 1001, -1)], "cut with the minimum on the small side");
        // And back: everything is labelled 0.
        step(&mut forest, vec![(1000, 1001, 1)], "rejoined");
    }

    #[test]
    fn a_path_split_in_the_middle_and_rejoined() {
        let mut forest = DynamicForest::new(DEFAULT_BUDGET);
        let mut out = Vec::new();
        let mut path: Vec<(Node, Node, Diff)> = (1..10).map(|i| (i, i + 1, 1)).collect();
        forest.apply(&[], &mut path, &mut out);
        assert_eq!(out.len(), 10);
        out.clear();
        // Cut 5 - 6 and reinsert it in one time: nothing changes.
        forest.apply(&[], &mut vec![(6, 5, -1), (5, 6, 1)], &mut out);
        assert!(out.is_empty());
        forest.apply(&[], &mut vec![(6, 5, -1)], &mut out);
        let mut want: Vec<((Node, u64), Diff)> = (6..=10).flat_map(|v| [((v, 1), -1), ((v, 6), 1)]).collect();
        out.sort();
        want.sort();
        assert_eq!(out, want);
        out.clear();
        // Removing vertex 1's only edge: 1 leaves, 2..5 are relabelled 2.
        forest.apply(&[], &mut vec![(1, 2, -1)], &mut out);
        out.sort();
        let mut want: Vec<((Node, u64), Diff)> = vec![((1, 1), -1)];
        want.extend((2..=5).flat_map(|v| [((v, 1), -1), ((v, 2), 1)]));
        want.sort();
        assert_eq!(out, want);
    }

    /// A side that is complete after two forest edges stops there, although its first vertex
    /// has 500 non-tree edges to the far end of the other side (a path, which reaches them only
    /// after ~500 vertices): the forest-edge cursor completes the side while the non-tree cursor
    /// has looked at one of them. (Scanning each vertex's forest edges and then all its non-tree
    /// edges before the next vertex took ~1,000 steps here.)
    #[test]
    fn a_complete_side_does_not_wait_for_a_vertexs_non_tree_edges() {
        let mut forest = DynamicForest::new(1.0);
        let mut out = Vec::new();
        let mut time = |forest: &mut DynamicForest, mut edges: Vec<(Node, Node, Diff)>| {
            out.clear();
            forest.apply(&[], &mut edges, &mut out);
            out.len()
        };
        // Forest edges 1-100, the path 100-101-...-1100, 1-2; non-tree edges 1-v for the path's
        // far half.
        time(&mut forest, vec![(1, 100, 1)]);
        time(&mut forest, (100..1100).map(|v| (v, v + 1, 1)).collect());
        time(&mut forest, vec![(1, 2, 1)]);
        time(&mut forest, (601..=1100).map(|v| (1, v, 1)).collect());
        assert_eq!(forest.links(), 1502);
        // Cutting 1-100 leaves {1, 2} on one side: a replacement, no label changes.
        assert_eq!(time(&mut forest, vec![(1, 100, -1)]), 0);
        assert!(forest.work <= 16, "the search took {} steps", forest.work);
        assert_eq!(forest.fallbacks(), 0);
    }

    /// A hub whose non-tree edges come and go (the same pairs again, so freed link ids are
    /// reused while their stale entries are still listed) and whose path's forest edges are cut
    /// (so searches scan its non-tree list past stale entries): labels equal the oracle's after
    /// every time (and the debug build checks the stale counts), and lists were compacted.
    #[test]
    fn stale_non_tree_entries_are_skipped_compacted_and_reused() {
        let mut compactions = 0;
        for seed in 0..20u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = 40u64;
            let mut forest = DynamicForest::new(DEFAULT_BUDGET);
            let mut state: BTreeMap<Node, u64> = BTreeMap::new();
            let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
            // A path 1 - 2 - ... - n, and the hub 0 linked to every vertex of it.
            let mut batch: Vec<(Node, Node, Diff)> = (1..n).map(|i| (i, i + 1, 1)).collect();
            batch.extend((1..=n).map(|i| (0, i, 1)));
            for t in 0..60 {
                for &(a, b, d) in &batch {
                    *counts.entry((a.min(b), a.max(b))).or_insert(0) += d as i64;
                }
                counts.retain(|_, c| *c != 0);
                let mut out = Vec::new();
                forest.apply(&[], &mut batch, &mut out);
                let what = format!("seed {seed}, time {t}");
                absorb(&mut state, &out, &what);
                assert_oracle(&state, &counts, &what);
                // Next: remove some hub edges and path edges, bring back some hub edges.
                batch = Vec::new();
                for &(a, b) in counts.keys() {
                    if rng.gen_bool(if a == 0 { 0.3 } else { 0.1 }) {
                        batch.push((a, b, -1));
                    }
                }
                for i in 1..=n {
                    if !counts.contains_key(&(0, i)) && rng.gen_bool(0.4) {
                        batch.push((i, 0, 1));
                    }
                    if i < n && !counts.contains_key(&(i, i + 1)) && rng.gen_bool(0.3) {
                        batch.push((i, i + 1, 1));
                    }
                }
            }
            compactions += forest.compactions;
        }
        assert!(compactions > 0, "no non-tree list was compacted");
    }

    /// Ids just above an initial graph's take records without moving the vertex table (growing
    /// copies all of it: one slow epoch on `wcc-churn`).
    #[test]
    fn new_ids_above_an_initial_graph_do_not_move_the_vertex_table() {
        let mut forest = DynamicForest::new(1.0);
        let mut out = Vec::new();
        let n = 2 * FREE_AS_APPLIED as Node;
        forest.apply(&[], &mut (0..n).map(|v| (v, v + 1, 1)).collect(), &mut out);
        assert!(forest.identity);
        let table = forest.vertices.as_ptr();
        forest.apply(&[], &mut vec![(n + 1, n + 10, 1), (0, n + 20, 1)], &mut out);
        assert!(forest.identity);
        assert_eq!(forest.vertices.len() as Node, n + 21);
        assert_eq!(forest.vertices.as_ptr(), table, "the vertex table moved");
    }
}
