//! The forest's invariants, checked after every time in debug builds: every present link is in
//! the pair table and at its recorded positions in its ends' lists, the forest edges are acyclic
//! and number vertices − components, the stale counts and presence flags are right, every
//! non-tree edge lies inside one tree, and every label is the smallest id of its tree (in
//! summary mode: one tag per tree, with the right sizes).

use std::collections::BTreeMap;

use super::pairs::{pair_key, PairTable};
use super::DynamicForest;
use crate::dataflow::union_find::DenseUnionFind;
use crate::types::Node;

impl DynamicForest {
    /// The forest's invariants (debug builds, after every time).
    pub(super) fn check(&self) {
        let (mut uf, forest) = self.check_links();
        let min = self.check_vertices(&mut uf, forest);
        self.check_non_tree(&mut uf);
        self.check_labels(&mut uf, &min);
    }

    /// Every present link is in the pair table and at its positions; the forest edges are
    /// acyclic. Returns their union-find and their number.
    fn check_links(&self) -> (DenseUnionFind, usize) {
        let mut uf = DenseUnionFind::with_len(self.store.vertices.len());
        let mut forest = 0usize;
        let mut live = 0usize;
        for (l, link) in self.store.links.iter().enumerate() {
            if link.count() == 0 {
                continue;
            }
            live += 1;
            let [a, b] = link.ends;
            assert_eq!(
                self.pairs.get(
                    PairTable::tag(self.store.vertices[a as usize].id, self.store.vertices[b as usize].id),
                    pair_key(a, b),
                    &self.store.links
                ),
                Some(l as u32),
                "link {l} not in the pair index"
            );
            for i in 0..2 {
                let x = &self.store.vertices[link.ends[i] as usize];
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
        (uf, forest)
    }

    /// Every vertex's stale count, rare counts, listing and presence are right, and the `forest`
    /// forest edges number vertices − components. Returns the smallest id of each tree, by root.
    fn check_vertices(&self, uf: &mut DenseUnionFind, forest: usize) -> Vec<Node> {
        let mut min = vec![Node::MAX; self.store.vertices.len()];
        let mut present = 0usize;
        let mut components = 0usize;
        for (v, x) in self.store.vertices.iter().enumerate() {
            let list_links = x.tree_len as usize + x.other_len as usize - x.stale as usize;
            let live_others = (0..x.other_len as usize)
                .filter(|&k| self.store.other_live(v as u32, k, x.adj[x.adj.len() - 1 - k]))
                .count();
            assert_eq!(x.other_len as usize - live_others, x.stale as usize, "vertex {}: stale count", x.id);
            let e = self.store.extras.get(&(v as u32)).copied();
            assert_eq!(x.extra, e.is_some(), "vertex {}: extra flag", x.id);
            assert!(e.is_none_or(|e| e.fixed != 0 || e.loops != 0), "vertex {}: empty extra entry", x.id);
            let e = e.unwrap_or_default();
            assert!(x.listed != self.changes.time, "vertex {} still listed", x.id);
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
        assert_eq!(present, self.store.present, "present count");
        assert_eq!(forest, present - components, "forest size is not vertices - components");
        min
    }

    /// Every live non-tree edge lies inside one tree.
    fn check_non_tree(&self, uf: &mut DenseUnionFind) {
        for (v, x) in self.store.vertices.iter().enumerate() {
            let no = x.other_len as usize;
            for (p, &l) in x.others().iter().enumerate() {
                if !self.store.other_live(v as u32, no - 1 - p, l) {
                    continue;
                }
                let [a, b] = self.store.links[l as usize].ends;
                assert_eq!(uf.find(a), uf.find(b), "non-tree edge {l} between two trees");
            }
        }
    }

    /// Every label is the smallest id of its tree (`min`, by root); in summary mode, one tag
    /// per tree, distinct trees distinct tags, and the tags' sizes right.
    fn check_labels(&self, uf: &mut DenseUnionFind, min: &[Node]) {
        if self.changes.summary {
            let mut tag_of_root: BTreeMap<u32, Node> = BTreeMap::new();
            let mut sizes: BTreeMap<Node, u32> = BTreeMap::new();
            for (v, x) in self.store.vertices.iter().enumerate() {
                if x.present {
                    let r = uf.find(v as u32);
                    assert_eq!(*tag_of_root.entry(r).or_insert(x.label), x.label, "two tags in one tree");
                    *sizes.entry(x.label).or_insert(0) += 1;
                }
            }
            assert_eq!(sizes.len(), tag_of_root.len(), "one tag in two trees");
            let have: BTreeMap<Node, u32> = self.changes.sizes.iter().map(|(&k, &v)| (k, v)).collect();
            assert_eq!(have, sizes, "tree sizes");
        } else {
            for (v, x) in self.store.vertices.iter().enumerate() {
                if x.present {
                    assert_eq!(x.label, min[uf.find(v as u32) as usize], "vertex {} has a wrong label", x.id);
                }
            }
        }
    }
}
