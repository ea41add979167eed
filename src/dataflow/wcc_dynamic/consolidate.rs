//! A time's edge copy changes, consolidated: canonical pairs (`a <= b`), sorted, the diffs of
//! each pair summed and zeros dropped, in place. An ordinary time (a few thousand records) is
//! sorted by packed `u64` keys with a radix sort and split into insertions and deletions in the
//! same pass; a large one (an initial graph) by a 128-bit key.

use crate::types::{Diff, Node};

/// Times with at least this many (consolidated) edge changes free their list while it is
/// applied, in steps of this many.
pub(super) const FREE_AS_APPLIED: usize = 1 << 16;

/// Puts edge copy changes `(a, b, diff)` in canonical form (`a <= b`), sorts them by pair, sums
/// the diffs of each pair and drops zeros, in place.
///
/// When the ids and the record indices fit in 64 bits together (an ordinary time, below
/// [`FREE_AS_APPLIED`] records, of a graph with ids below ~2^24), the sort is of plain `u64`
/// keys `a, b, index` ([`packed_keys`]; the index breaks ties, so the order is the same as
/// sorting the records by pair) and the records are then read in that order: about half the
/// time of sorting the 24-byte records by a 128-bit key.
pub(super) fn consolidate_edges(edges: &mut Vec<(Node, Node, Diff)>) {
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
pub(super) fn consolidate_split(
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
/// is the same as any sort's), else `sort_unstable`. The sort is most of an ordinary time's
/// consolidation.
pub(super) fn radix_sort(keys: &mut Vec<u64>, bits: u32) {
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
