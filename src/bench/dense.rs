//! Dense ids for the sequential baselines: [`remap`] numbers the vertices of a stream `0..n` in
//! order of first appearance (initial graph, then updates; not timed), and [`labels`] turns a
//! union-find over dense ids back into WCC labels (smallest original id per component).
//!
//! ```
//! use ripples::bench::dense::{labels, remap};
//! use ripples::dataflow::union_find::DenseUnionFind;
//! use ripples::types::Update;
//! let dense = remap(&[(100, 7)], &[Update::insert(7, 42), Update::delete(100, 7)]);
//! assert_eq!(dense.ids, vec![100, 7, 42]);
//! assert_eq!(dense.initial, vec![(0, 1)]);
//! assert_eq!(dense.updates, vec![((1, 2), 1), ((0, 1), -1)]);
//! // Join 7 and 42 over dense ids; labels come back in original ids.
//! let mut uf = DenseUnionFind::with_len(dense.ids.len());
//! uf.union(1, 2);
//! assert_eq!(labels(&mut uf, &dense.ids, |_| true), vec![(100, 100), (7, 7), (42, 7)]);
//! ```

use std::collections::HashMap;

use crate::dataflow::union_find::DenseUnionFind;
use crate::types::{Node, Update};

/// A stream over dense ids.
pub struct Dense {
    /// `ids[i]` is the original id of dense vertex `i`.
    pub ids: Vec<Node>,
    /// The initial graph's edges, in dense ids.
    pub initial: Vec<(u32, u32)>,
    /// Each update's edge and its diff (+1 / -1).
    pub updates: Vec<((u32, u32), i8)>,
}

/// Numbers the vertices of `initial` and `updates` densely, in order of first appearance.
pub fn remap(initial: &[(Node, Node)], updates: &[Update]) -> Dense {
    let mut index: HashMap<Node, u32> = HashMap::new();
    let mut ids: Vec<Node> = Vec::new();
    let mut dense = |v: Node| {
        *index.entry(v).or_insert_with(|| {
            ids.push(v);
            ids.len() as u32 - 1
        })
    };
    let initial = initial.iter().map(|&(s, d)| (dense(s), dense(d))).collect();
    let updates = updates.iter().map(|u| ((dense(u.src), dense(u.dst)), u.diff)).collect();
    Dense { ids, initial, updates }
}

/// `(original id, label)` of every dense vertex `i` with `present(i)`, in dense order: the label
/// is the smallest original id among the present vertices of its component.
pub fn labels(uf: &mut DenseUnionFind, ids: &[Node], present: impl Fn(u32) -> bool) -> Vec<(Node, Node)> {
    let n = ids.len() as u32;
    let mut min = vec![Node::MAX; ids.len()];
    for i in (0..n).filter(|&i| present(i)) {
        let r = uf.find(i) as usize;
        min[r] = min[r].min(ids[i as usize]);
    }
    (0..n).filter(|&i| present(i)).map(|i| (ids[i as usize], min[uf.find(i) as usize])).collect()
}
